"""Warnings that point at the code that called into :mod:`kong_pyg`."""
import os
import sys
import warnings
from types import FrameType
from typing import Optional, Type

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
#: Modules that only pass calls on (module hooks, pools of threads and processes): their frames are skipped
#: too.
_PASS_THROUGH = ("torch.nn.modules.module", "threading", "concurrent.futures", "multiprocessing")


def _pass_through_files() -> tuple:
    """The files (or, for packages, folders) of :data:`_PASS_THROUGH` that are loaded."""
    out = []
    for name in _PASS_THROUGH:
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if path:
            out.append(os.path.dirname(path) + os.sep if path.endswith("__init__.py") else path)
    return tuple(out)


def is_ours(filename: str, passing: tuple = ()) -> bool:
    """Whether a frame of :obj:`filename` is this package's (or of the files :obj:`passing`)."""
    return filename.startswith((_PACKAGE, *passing))


def warn(message: str, category: Type[Warning] = UserWarning) -> None:
    """:func:`warnings.warn`, attributed to the first caller outside this package.

    A fixed ``stacklevel`` is right for one call path only (the same check
    reached from :func:`~kong_pyg.evaluation.cross_validate` or directly);
    this one names the user's line, past the frames that only pass calls on
    (:meth:`torch.nn.Module.load_state_dict`'s hooks, thread and process
    pools). Where the whole stack is such code (a pool's thread running a
    function of this package), the warning names this package's line.
    """
    frame: Optional[FrameType] = sys._getframe(0)
    level = 1
    passing = _pass_through_files()
    while frame is not None and is_ours(frame.f_code.co_filename, passing):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level if frame is not None else 2)
