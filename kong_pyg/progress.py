"""One progress bar for every evaluation run (``classify``, ``table2``, the benchmarks).

:class:`Progress` counts units of work whose total is known before the run
starts (SVM fits: one per training set, :math:`C` and class), shows what is
being done, and estimates the time left from the average rate since the
start (tqdm's :obj:`smoothing=0`), which includes the feature time between
fits, so the estimate does not jump when a slow setting comes. Disabled, it
does nothing and imports nothing.
"""
import sys
from typing import Any, Optional

from ..config import check_bool


class Progress:
    """A tqdm bar on stderr, or nothing.

    Args:
        total (int): Units of work in all.
        desc (str): The label.
        unit (str, optional): The unit's name. (default: :obj:`"fit"`)
        enabled (bool, optional): Show the bar. (default: :obj:`True`)
    """

    def __init__(self, total: int, desc: str, unit: str = "fit", enabled: bool = True):
        self.bar: Any = None
        self.total = int(total)
        self.done = 0
        if check_bool("progress", enabled):
            from tqdm.auto import tqdm

            self.bar = tqdm(total=self.total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True,
                            smoothing=0.0, mininterval=0.5)

    def status(self, text: str) -> None:
        """Show what is being done (after the counts)."""
        if self.bar is not None:
            self.bar.set_postfix_str(text, refresh=False)

    def update(self, n: int = 1) -> None:
        """Count :obj:`n` units as done."""
        self.done += int(n)
        if self.bar is not None:
            self.bar.update(int(n))

    def close(self) -> None:
        """Close the bar."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: Optional[Any]) -> None:
        self.close()


__all__ = ["Progress"]
