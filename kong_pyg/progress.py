"""One progress bar for every long run: evaluation fits, feature batches, stream passes.

:class:`Progress` counts units of work (SVM fits: one per training set,
:math:`C` and class; graphs; edges), shows what is being done, and
estimates the time left from the average rate since the start (tqdm's
:obj:`smoothing=0`), which includes the feature time between fits, so the
estimate does not jump when a slow setting comes. Disabled, it does
nothing and imports nothing.
"""
import sys
from typing import Any, Optional

from .config import check_bool


class Progress:
    """A tqdm bar on stderr, or nothing.

    Args:
        total (int, optional): Units of work in all (:obj:`None`: unknown,
            no estimate).
        desc (str): The label.
        unit (str, optional): The unit's name. (default: :obj:`"fit"`)
        enabled (bool, optional): Show the bar. (default: :obj:`True`)
        unit_scale (bool, optional): Counts with SI prefixes (:obj:`1.2M`).
            (default: :obj:`False`)
    """

    def __init__(self, total: Optional[int], desc: str, unit: str = "fit", enabled: bool = True,
                 unit_scale: bool = False):
        self.bar: Any = None
        self.total = None if total is None else int(total)
        self.done = 0
        if check_bool("progress", enabled) and sys.stderr is not None:  # (closed: no bar, as tqdm fails)
            from tqdm.auto import tqdm

            self.bar = tqdm(total=self.total, desc=desc, unit=unit, unit_scale=unit_scale, file=sys.stderr,
                            dynamic_ncols=True, smoothing=0.0, mininterval=0.5)

    def restart(self, desc: str) -> None:
        """Count again from zero under a new label (the next pass over the same work)."""
        self.done = 0
        if self.bar is not None:
            self.bar.reset(total=self.total)
            self.bar.set_description(desc)

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
