"""The ``kong-pyg`` command line (also ``python -m kong_pyg``).

One module per subcommand (:mod:`~kong_pyg.cli.classify`,
:mod:`~kong_pyg.cli.table2`, :mod:`~kong_pyg.cli.stream`,
:mod:`~kong_pyg.cli.order_test`), each with a
``register(subparsers)`` that adds its parser and sets ``func`` (called with
the parsed arguments, returning an exit status), all in the one style of
:mod:`~kong_pyg.cli.common`: comma lists, defaults in the help, progress bars
on unless ``--quiet``, and one-line errors with exit status 2.
"""
import argparse
import contextlib
import functools
import importlib
import importlib.util
import os
import re
import signal
import sys
import threading
import types
import warnings
from typing import Any, Dict, List, Optional, Set

from .. import __version__
from ..memory import MALLOC_SETTINGS, tune_allocator
from .common import CommandError, HelpFormatter, Parser, one_line, stdout_closed

#: Modules that add a subcommand.
COMMAND_MODULES: List[str] = [
    "kong_pyg.cli.classify",
    "kong_pyg.cli.table2",
    "kong_pyg.cli.stream",
    "kong_pyg.cli.order_test",
]

#: Errors that are the user's (bad values, paths, missing extras): one line, exit 2.
USER_ERRORS = (CommandError, ValueError, TypeError, OSError, ImportError)


#: Modules that PyG imports at start-up but the command line never uses: ``torch._dynamo`` (about
#: 2 s, the largest part of PyG's import), only to recognise compiled modules; no subcommand
#: compiles. :func:`import_pyg` imports PyG with them deferred (:func:`defer_import`).
DEFERRED_IMPORTS: List[str] = ["torch._dynamo"]


_DEFER_LOCK = threading.Lock()


class _Deferred(types.ModuleType):
    """Stands in :obj:`sys.modules` for a module until one of its attributes is read or set.

    Then the module is imported for real and the access is forwarded to it. It is meant to live
    only while one import runs (:func:`import_pyg` removes it): importing a submodule through it
    would run that submodule twice.
    """

    def _load(self) -> types.ModuleType:
        name = self.__name__
        with _DEFER_LOCK:
            if sys.modules.get(name) is self:
                sys.modules.pop(name, None)
        return importlib.import_module(name)  # sets the parent package's attribute to the module

    def __getattr__(self, attr: str) -> Any:  # only attributes the stand-in does not have
        return getattr(self._load(), attr)

    def __setattr__(self, attr: str, value: Any) -> None:
        setattr(self._load(), attr, value)


def defer_import(name: str) -> bool:
    """Put a stand-in for the package :obj:`name` (``parent.child``) in :obj:`sys.modules`.

    See :class:`_Deferred`. Nothing is imported (the parent package need not be). Returns whether
    the stand-in was put there: not when the module is already imported, when it is not a
    subpackage of a top-level package, or when it cannot be found.
    """
    if name in sys.modules:
        return False
    parent, _, child = name.rpartition(".")
    spec = importlib.util.find_spec(parent) if parent and "." not in parent else None
    if spec is None or not spec.submodule_search_locations:
        return False
    path = os.path.join(list(spec.submodule_search_locations)[0], child, "__init__.py")
    if not os.path.isfile(path):
        return False
    stub = _Deferred(name)
    # set without __setattr__: what the import system and inspect read from every module
    vars(stub).update(__spec__=None, __file__=path, __loader__=None)
    sys.modules[name] = stub
    return True


def import_pyg() -> None:
    """Import PyG with :data:`DEFERRED_IMPORTS` deferred, then remove the stand-ins that are left.

    Afterwards nothing refers to a stand-in (PyG binds only ``torch``), so a later
    ``torch._dynamo`` is PyTorch's own lazy import: the module loads as usual where it is used.
    """
    deferred = [name for name in DEFERRED_IMPORTS if defer_import(name)]
    try:
        import torch_geometric  # noqa: F401
    finally:
        with _DEFER_LOCK:
            for name in deferred:
                if isinstance(sys.modules.get(name), _Deferred):
                    del sys.modules[name]


def build_parser() -> Parser:
    """The argument parser with every subcommand."""
    parser = Parser(
        prog="kong-pyg",
        description="KONG graph kernels (Kernels for Ordered-Neighborhood Graphs) for PyG.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"kong-pyg {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def _warning_line(prog: str) -> Any:
    """A :func:`warnings.showwarning` writing one line to stderr: ``PROG: warning: message (Category)``.

    A line is not written again (Python's once-per-place rule forgets what it showed whenever a warnings
    filter changes, which the libraries below do). Lines that differ in their numbers are all written:
    "4000 of the 4096 columns" must not hide behind "1 of the 48".
    """
    shown: Set[str] = set()

    def show(message: Any, category: Any, filename: str, lineno: int, file: Any = None,
             line: Any = None) -> None:
        out = sys.stderr if file is None else file
        text = f"{prog}: warning: {one_line(str(message))} ({category.__name__})"
        if text in shown:
            return
        shown.add(text)
        try:
            print(text, file=out)
        except OSError:  # (as warnings does: a closed or invalid stderr loses the warning)
            pass

    return show


def _flags(parser: argparse.ArgumentParser, command: str) -> Dict[str, str]:
    """The subcommand's options whose flag spells their destination (``--nested-repeats``)."""
    flags: Dict[str, str] = {}
    for group in parser._actions:
        if isinstance(group, argparse._SubParsersAction) and command in group.choices:
            for action in group.choices[command]._actions:
                flag = "--" + action.dest.replace("_", "-")
                if flag in action.option_strings:
                    flags[action.dest] = flag
    return flags


def with_flags(message: str, flags: Dict[str, str]) -> str:
    """:obj:`message` with the library's quoted argument names (``'inner_folds'``) as the command's flags.

    The library names its arguments in its errors; where a subcommand passes an option on under
    the same name, its user reads the flag they typed. Only names in an argument's place are
    rewritten: the message's subject (``'folds' ...`` at its start), a name with its value
    (``at most 'repeats' (2)``, ``'dim' = 4,096``), advice (``a smaller 'dim' or 'degree'``), and a
    name already followed by its flag (``'cache_dir' (--cache-dir)``, once). Quoted values from the
    data (``got 'labels'``, ``graph id 'out'``), keyword values and dictionary keys are left as they
    are; messages quote data values before a parenthesis nowhere.
    """
    for dest, flag in flags.items():
        message = message.replace(f"'{dest}' ({flag})", flag)
        name = re.escape(dest)
        message = re.sub(rf"^'{name}'(?=[ :,.;])", flag, message)
        message = re.sub(rf"(?<![=\w])'{name}'(?= \(| = )", flag, message)
        message = re.sub(rf"\b(smaller|larger|fewer|lower|higher) '{name}'", rf"\1 {flag}", message)
    for dest, flag in flags.items():  # (the second of two names in advice: "a smaller --dim or 'degree'")
        message = re.sub(rf"(--[\w-]+ or )'{re.escape(dest)}'", rf"\g<1>{flag}", message)
    return message


class Terminated(BaseException):
    """SIGTERM, raised in the program's main thread so that its clean-ups run (temporary files)."""


def _on_sigterm(pid: int, signum: int, frame: Any) -> None:
    if os.getpid() != pid:  # (a forked worker inherits the handler: it ends as SIGTERM ends a process)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        return
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # (a second one would cut the clean-ups short)
    raise Terminated()


def _out_of_memory(err: BaseException) -> Optional[str]:
    """PyTorch's out-of-memory error (a :class:`RuntimeError`) as one line, or ``None`` for another error."""
    torch = sys.modules.get("torch")
    text = one_line(str(err))
    if torch is not None and isinstance(err, getattr(torch, "OutOfMemoryError", ())):
        return text.split(". Of the allocated")[0]  # (CUDA's: without its allocator statistics)
    found = re.search(r"can't allocate memory: you tried to allocate (\d+) bytes", text)
    if found is None:
        return None
    size = int(found.group(1))
    return f"could not allocate {size / 2 ** 30:,.1f} GiB" if size >= 2 ** 30 else \
        f"could not allocate {size / 2 ** 20:,.1f} MiB"


def _escape_unencodable(stream: Any) -> Optional[str]:
    """Write characters the stream's encoding lacks as escapes (as stderr does) instead of failing.

    A table with "±" or a file name with "ä" on a Latin-1 or ASCII stdout (``PYTHONIOENCODING``, a C
    locale without UTF-8 mode, a Windows code page for a redirected file) failed at the very end of a
    run, its results computed. An error handler the user chose (``PYTHONIOENCODING=enc:handler``) is
    kept. Returns the handler to put back afterwards (None: nothing changed).
    """
    reconfigure = getattr(stream, "reconfigure", None)
    if ":" in os.environ.get("PYTHONIOENCODING", ""):  # (the user chose the error handler: theirs)
        return None
    before = getattr(stream, "errors", None)
    if callable(reconfigure) and before in ("strict", "surrogateescape"):  # (both fail on what is missing)
        try:
            reconfigure(errors="backslashreplace")
            return before
        except (ValueError, OSError):  # (a closed or detached stream: nothing to write there anyway)
            pass
    return None


def main(argv: Optional[List[str]] = None) -> int:
    """Run the command line.

    Args:
        argv (list, optional): The arguments (default: :obj:`sys.argv[1:]`;
            then, as the program, it imports PyG through :func:`import_pyg`
            before running the subcommand).

    Returns:
        The exit status: 0, 2 for a usage error or for running out of
        memory (one line on stderr), 130 when the program is interrupted
        (Ctrl-C), 143 when it is terminated (SIGTERM: its clean-ups run),
        141 without a word when the reader of its output has gone (``| head``),
        or what the subcommand returned.
    """
    try:
        _stand_in_for_closed()  # (inside: what it set up before failing, if it fails, is given back)
        return _main(argv)
    finally:
        _give_back_closed()


#: What stands in for closed descriptors 0-2 and streams while any main() call runs (threads share
#: them: the first call in sets them up, the last one out gives them back).
_CLOSED_LOCK = threading.Lock()
_STAND_INS: Dict[str, Any] = {"calls": 0, "fds": [], "streams": []}


def _stand_in_for_closed() -> None:
    """Point closed descriptors 0-2 and a closed stdout or stderr at the null device while commands run.

    (``<&- >&-``; a closed stream is None in Python.) Left free, the next file a run opens would take a
    closed descriptor: with stdin and stdout closed, an output file became descriptor 1, where anything
    writing to stdout below Python wrote into it. A closed stream made every write fail (an
    AttributeError at the end of a finished run, exit 1; progress bars stopped the run at once), and
    Python's ``print(file=sys.stderr)`` wrote to stdout instead.
    """
    with _CLOSED_LOCK:
        _STAND_INS["calls"] += 1
        if _STAND_INS["calls"] > 1:
            return
        for fd in (0, 1, 2):  # (in order: the lowest free descriptor is the one being filled)
            try:
                os.fstat(fd)
            except OSError:
                null = os.open(os.devnull, os.O_RDWR)
                if null == fd:
                    _STAND_INS["fds"].append(fd)
                else:  # (another thread took it meanwhile: theirs, left alone)
                    os.close(null)
        for name in ("stdout", "stderr"):
            if getattr(sys, name) is None:
                setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))
                _STAND_INS["streams"].append(name)


def _give_back_closed() -> None:
    """Close what :func:`_stand_in_for_closed` opened, when the last running command ends."""
    with _CLOSED_LOCK:
        _STAND_INS["calls"] -= 1
        if _STAND_INS["calls"]:
            return
        for name in _STAND_INS["streams"]:  # (None again, and the descriptors closed: as the caller had them)
            getattr(sys, name).close()
            setattr(sys, name, None)
        for fd in _STAND_INS["fds"]:
            os.close(fd)
        _STAND_INS["streams"], _STAND_INS["fds"] = [], []


def _main(argv: Optional[List[str]]) -> int:
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)
    except SystemExit as done:  # --help, --version, or a usage error already printed
        return done.code if isinstance(done.code, int) else (0 if done.code is None else 2)
    if extra:  # reported by the subcommand, like its other errors
        prog = f"kong-pyg {args.command}" if getattr(args, "command", None) else "kong-pyg"
        print(f"{prog}: error: unrecognized arguments: {' '.join(extra)}", file=sys.stderr)
        return 2
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return 2
    previous = errors = None
    # (the program's showwarning is restored afterwards; a caller's main(argv) changes no filter, and
    # saving and restoring them here would race with other threads' blocks)
    with warnings.catch_warnings() if argv is None else contextlib.nullcontext():
        try:
            if argv is None:  # the program itself: one line per warning (a caller of main keeps its own
                # handling); every subcommand imports PyG, without what it never uses
                warnings.showwarning = _warning_line(f"kong-pyg {args.command}")
                errors = _escape_unencodable(sys.stdout)
                if threading.current_thread() is threading.main_thread():
                    previous = signal.signal(signal.SIGTERM, functools.partial(_on_sigterm, os.getpid()))
                tune_allocator()
                import_pyg()
            code = int(args.func(args) or 0)
            if argv is None:  # (written here, not at exit: a reader that has gone is found below)
                sys.stdout.flush()
            return code
        except USER_ERRORS as err:
            if isinstance(err, BrokenPipeError) and argv is None and stdout_closed():
                return 128 + getattr(signal, "SIGPIPE", 13)  # (| head: the reader has what it wanted)
            message = with_flags(one_line(str(err)), _flags(parser, args.command)) or type(err).__name__
            print(f"kong-pyg {args.command}: error: {message}", file=sys.stderr)
            return 2
        except MemoryError as err:  # (NumPy's says how much it asked for)
            print(f"kong-pyg {args.command}: error: out of memory: {one_line(str(err)) or 'MemoryError'}",
                  file=sys.stderr)
            return 2
        except RuntimeError as err:
            line = _out_of_memory(err)
            if line is None:
                raise
            print(f"kong-pyg {args.command}: error: out of memory: {line}", file=sys.stderr)
            return 2
        except Terminated:  # (a stream's temporary copy of stdin is removed; outputs are atomic)
            print(f"\nkong-pyg {args.command}: terminated", file=sys.stderr)
            return 128 + signal.SIGTERM
        except KeyboardInterrupt:  # (Ctrl-C: one line, the shell's status for SIGINT; files are atomic)
            if argv is not None:
                raise
            print(f"\nkong-pyg {args.command}: interrupted", file=sys.stderr)
            return 130
        finally:
            if previous is not None:  # (a caller of main, or what follows it, gets its own handler back)
                signal.signal(signal.SIGTERM, previous)
            if errors is not None:  # (and stdout its own error handler)
                try:
                    sys.stdout.reconfigure(errors=errors)  # type: ignore[union-attr]
                except (AttributeError, ValueError, OSError):
                    pass


__all__ = ["main", "build_parser", "defer_import", "import_pyg", "tune_allocator", "MALLOC_SETTINGS",
           "COMMAND_MODULES", "DEFERRED_IMPORTS"]

