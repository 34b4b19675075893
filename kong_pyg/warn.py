"""Warnings that point at the code that called into :mod:`kong_pyg`."""
import os
import sys
import warnings
from contextlib import contextmanager
from types import FrameType
from typing import Any, Iterator, List, Optional, Tuple, Type

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


def _is_ours(filename: str, passing: tuple = ()) -> bool:
    """Whether a frame of :obj:`filename` is this package's (or of the files :obj:`passing`)."""
    return filename.startswith((_PACKAGE, *passing))


def warn(message: str, category: Type[Warning] = UserWarning) -> None:
    """:func:`warnings.warn`, attributed to the first caller outside this package.

    A fixed ``stacklevel`` is right for one call path only (the same check
    reached from :func:`~kong_pyg.evaluation.cv.cross_validate` or directly);
    this one names the user's line, past the frames that only pass calls on
    (:meth:`torch.nn.Module.load_state_dict`'s hooks, thread and process
    pools). Where the whole stack is such code (a pool's thread running a
    function of this package), the warning names this package's line.
    """
    frame: Optional[FrameType] = sys._getframe(0)
    level = 1
    passing = _pass_through_files()
    while frame is not None and _is_ours(frame.f_code.co_filename, passing):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level if frame is not None else 2)


@contextmanager
def ignoring(category: Type[Warning], message: str = "") -> Iterator[None]:
    """Ignore warnings of :obj:`category` whose text starts with :obj:`message` (a regex) inside the block.

    Before Python 3.14 :class:`warnings.catch_warnings` saves the process-wide filter list on entry
    and puts that copy back on exit, so two threads' blocks that overlap and end out of order leave
    one block's filter in place for good, and the other block's warnings show while it runs. So
    each block of this package ignores one kind of warning, never all of them (what may outlive it
    is that narrow filter). No lock orders the blocks: it would not order other code's blocks, and
    it would hold other threads (and forked workers) behind a block's work.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=message, category=category)
        yield


def sendable(w: warnings.WarningMessage) -> Tuple[Any, ...]:
    """A recorded warning as (message, category, file, line, module name) that pickles to the parent.

    A category that does not pickle (a class made in a function) or takes other arguments than a
    message is sent as its nearest built-in base, its name in the message.
    """
    import pickle

    category, message = w.category, str(w.message)
    try:
        pickle.dumps(category)
        category(message)
    except Exception:  # (any failure of someone else's class: fall back, never lose the warning)
        base = next(c for c in category.__mro__ if c.__module__ == "builtins" and issubclass(c, Warning))
        category, message = base, f"{category.__qualname__}: {message}"
    module = next((name for name, m in list(sys.modules.items())
                   if getattr(m, "__file__", None) == w.filename), None)
    return message, category, w.filename, w.lineno, module


def replay(caught: List[Tuple[Any, ...]]) -> None:
    """Raise warnings another process recorded (:func:`sendable`) here, as if they had been raised here."""
    for message, category, filename, lineno, module in caught:
        if _is_ours(filename):  # (the worker's stack has no user's line: this process's has)
            warn(message, category)
        else:  # (at its own line, with its module: filters by module, and their once-per-line registry)
            owner = sys.modules.get(module) if module else None
            registry = None if owner is None else vars(owner).setdefault("__warningregistry__", {})
            warnings.warn_explicit(message, category, filename, lineno, module, registry)
