"""The evaluation runs' progress bar: :class:`kong_pyg.progress.Progress` (one bar for every long run)."""
from ..progress import Progress

__all__ = ["Progress"]
