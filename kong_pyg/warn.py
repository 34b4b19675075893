"""Warnings that point at the code that called into :mod:`kong_pyg`."""
import os
import sys
import warnings
from types import FrameType
from typing import Optional, Type

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn(message: str, category: Type[Warning] = UserWarning) -> None:
    """:func:`warnings.warn`, attributed to the first caller outside this package.

    A fixed ``stacklevel`` is right for one call path only (the same check
    reached from :func:`~kong_pyg.evaluation.cross_validate` or directly);
    this one names the user's line on every path.
    """
    frame: Optional[FrameType] = sys._getframe(0)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level if frame is not None else 2)
