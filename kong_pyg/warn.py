"""Warnings that point at the code that called into :mod:`kong_pyg`."""
import os
import sys
import warnings
from types import FrameType
from typing import Optional, Type

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
#: Frames of code that only passes calls on (module hooks, pools of threads and processes): skipped too.
_PASS_THROUGH = ("/torch/nn/modules/module.py", "/concurrent/futures/", "/threading.py", "/multiprocessing/")


def _ours(filename: str) -> bool:
    """Whether a frame of :obj:`filename` is this package's or passes calls on."""
    return filename.startswith(_PACKAGE) or any(p in filename.replace(os.sep, "/") for p in _PASS_THROUGH)


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
    while frame is not None and _ours(frame.f_code.co_filename):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level if frame is not None else 2)
