"""What every ``kong-pyg`` subcommand shares: one argument style.

* Lists are comma-separated (``--C 0.1,1,10``; integers also ranges like
  ``1-4``).
* Every option's help states its default (:class:`HelpFormatter` adds it
  when the text does not).
* Progress bars are on; ``--quiet`` (``-q``) silences them.
* ``--jobs N`` is always processes and ``--threads N`` always threads of
  one process (``kong-pyg stream --workers N``: processes that each read a
  time shard).
* Errors are one line, ``kong-pyg CMD: error: ...``, exit status 2, no
  traceback (:class:`Parser`, :class:`CommandError` and
  :func:`kong_pyg.cli.main`); paths are checked while parsing, outputs
  before any computing.
* The KONG options (``--k``, ``--hops``, ..., ``--edge-labels``) are made by
  :func:`add_kong_options` from :class:`~kong_pyg.KongConfig`'s fields:
  their help is :func:`~kong_pyg.config.option_docs`, their values are
  checked by :class:`~kong_pyg.KongConfig`.
"""
import argparse
import math
import os
import shlex
import sys
import tempfile
from typing import Any, Callable, Dict, Iterable, List, Mapping, NoReturn, Optional, Sequence, Tuple

from ..config import (  # noqa: F401  (MAX_SEED: the commands' --seed takes the options' range)
    FLOWS,
    KERNELS,
    MAX_SEED,
    NORMS,
    ORDERS,
    TRAVERSALS,
    KongConfig,
    option_defaults,
    option_docs,
)
from ..evaluation.stats import plain_json  # noqa: F401  (the CLI's name for it)


class CommandError(Exception):
    """A user error: :func:`kong_pyg.cli.main` prints it as one line and exits with 2."""


def plural(count: int, noun: str) -> str:
    """``1 graph``, ``2 graphs``, ``1,000 edges``: a count with its noun."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def one_line(text: str) -> str:
    """:obj:`text` with its lines joined (error messages are one line)."""
    return "; ".join(part.strip() for part in str(text).splitlines() if part.strip())


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Help that shows every option's default (unless the text already does)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if (not action.option_strings or "(default" in text or action.default is argparse.SUPPRESS
                or text is argparse.SUPPRESS):
            return text
        return f"{text} (default: {show_default(action.default, action)})".strip()


def show_default(value: Any, action: Optional[argparse.Action] = None) -> str:
    """A default as the command line spells it (``%`` escaped for argparse)."""
    if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
        text = "on" if value else "off"
    elif value is None:
        text = "none"
    elif isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, (list, tuple)):
        text = ",".join(show_default(v) for v in value)
    elif isinstance(value, float):
        text = f"{value:g}"
    else:
        text = str(value)
    return text.replace("%", "%%")


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line: ``PROG: error: MESSAGE`` (exit 2)."""

    def error(self, message: str) -> NoReturn:
        """Print one line and exit with status 2."""
        self.exit(2, f"{self.prog}: error: {one_line(message)}\n")


def add_command(subparsers: Any, name: str, help: str, description: str) -> Parser:
    """A subcommand's parser, in the common style."""
    parser: Parser = subparsers.add_parser(name, help=help, description=description,
                                           formatter_class=HelpFormatter)
    return parser


class _Renamed(argparse.Action):
    """A hidden old spelling of an option: it sets the new one's value and says so on stderr."""

    def __init__(self, option_strings: Sequence[str], dest: str, new: str = "", **kwargs: Any) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.new = new

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: Optional[str] = None) -> None:
        print(f"{parser.prog}: warning: {option_string} is now {self.new} (the old name still works)",
              file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_renamed(parser: Any, old: str, new: str, dest: str, type: Callable[[str], Any]) -> None:
    """Accept ``old``, a former name of option ``new`` (same ``dest``, ``type``), hidden from ``--help``."""
    parser.add_argument(old, dest=dest, type=type, metavar="N", action=_Renamed, new=new,
                        default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def add_quiet(parser: Any) -> None:
    """``--quiet``/``-q`` (progress bars are on by default) and a hidden no-op ``--progress``."""
    parser.add_argument("--quiet", "-q", action="store_true",
                        help="no progress bars on stderr (default: off: progress bars are shown)")
    parser.add_argument("--progress", action="store_true", help=argparse.SUPPRESS)


# ---------------------------------------------------------------------------
# values: single and comma-separated
# ---------------------------------------------------------------------------


def split_list(text: str) -> List[str]:
    """The comma-separated items of :obj:`text`, stripped (an empty item is an error: a typo, not nothing)."""
    items = [t.strip() for t in str(text).split(",")]
    if len(items) > 1 and not all(items):
        _fail(f"an empty item in the comma-separated list {text!r}")
    return [t for t in items if t]


def _fail(message: str) -> NoReturn:
    raise argparse.ArgumentTypeError(message)


def no_plot(err: ImportError) -> None:
    """Say, as a warning line, that the figure was left out (matplotlib is missing: :obj:`err` says so)."""
    import warnings

    warnings.warn(f"{err}; no plot", stacklevel=2)


def drop_stale(path: str) -> None:
    """Remove an earlier run's figure that this run does not draw (its report would sit beside it)."""
    if os.path.isfile(path):
        os.remove(path)


def no_repeats(values: List[Any], text: str, shown: Optional[List[str]] = None) -> List[Any]:
    """:obj:`values` if none repeats (a repeated grid value runs the same work twice, or is cut silently).

    :obj:`shown` names each value as the user wrote it (a token that gave one value), else as
    :func:`show_default` shows it: ``exact,none`` lists one value twice, under two names.
    """
    shown = shown if shown is not None and len(shown) == len(values) else [show_default(v) for v in values]
    seen: List[Any] = []
    for i, v in enumerate(values):
        j = next((j for j, w in enumerate(seen) if v == w and type(v) is type(w)), None)
        if j is not None:
            what = (f"{shown[i]} twice" if shown[i] == shown[j]
                    else f"one value twice, as {shown[j]} and {shown[i]}")
            _fail(f"lists {what} (in {text!r}); give each value once")
        seen.append(v)
    return values


#: The most --splits (each split holds its masks and fits for every setting: memory grows with it).
MAX_SPLITS = 10**4
#: The most threads, processes or workers an option may ask for.
MAX_THREADS = 1024


def int_at_least(minimum: int, maximum: Optional[int] = None) -> Callable[[str], int]:
    """An argparse type: an integer at least :obj:`minimum` (and at most :obj:`maximum`, if given)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            _fail(f"expects an integer (got {text!r})")
        if value < minimum:
            _fail(f"must be >= {minimum} (got {value})")
        if maximum is not None and value > maximum:
            _fail(f"must be <= {maximum:,} (got {value:,})")
        return value

    return parse


def number_in(low: float, high: float = float("inf"), closed: bool = False) -> Callable[[str], float]:
    """An argparse type: a number in :math:`(low, high)` (:math:`[low, high]` when :obj:`closed`)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            _fail(f"expects a number (got {text!r})")
        inside = low <= value <= high if closed else low < value < high
        if not inside or value != value:
            if high == float("inf"):
                finite = "" if math.isfinite(value) else " and finite"  # (inf, 1e400, nan)
                _fail(f"must be {'>=' if closed else '>'} {low:g}{finite} (got {text})")
            bounds = f"[{low:g}, {high:g}]" if closed else f"({low:g}, {high:g})"
            _fail(f"must be in {bounds} (got {text})")
        return value

    return parse


#: The most values one range ``LO-HI`` of a list may hold.
MAX_RANGE = 1000


def int_range(token: str) -> range:
    """The integers of a range ``LO-HI`` (both included; at most :data:`MAX_RANGE` of them)."""
    lo, hi = token.split("-", 1)
    try:
        span = range(int(lo), int(hi) + 1)
    except ValueError:
        _fail(f"expects integers or ranges like 1-4 (got {token!r})")
    if not span:
        _fail(f"the range {token!r} is empty (write LO-HI with LO <= HI)")
    if len(span) > MAX_RANGE:
        _fail(f"the range {token!r} holds {len(span):,} values (at most {MAX_RANGE:,})")
    return span


def _name_new_values(shown: List[str], values: List[Any], token: str) -> None:
    """Name for :func:`no_repeats` the values :obj:`token` added: the token for one value, else each shown."""
    new = values[len(shown):]
    shown.extend([token] if len(new) == 1 else map(show_default, new))


def list_of(item: Callable[[str], Any], ranges: bool = False) -> Callable[[str], List[Any]]:
    """An argparse type: a comma-separated list of :obj:`item` values.

    With :obj:`ranges`, an integer item may also be a range ``LO-HI``.
    """
    def parse(text: str) -> List[Any]:
        out: List[Any] = []
        shown: List[str] = []
        for token in split_list(text):
            if ranges and "-" in token[1:]:
                out.extend(item(str(v)) for v in int_range(token))
            else:
                out.append(item(token))
            _name_new_values(shown, out, token)
        if not out:
            _fail(f"expects a comma-separated list (got {text!r})")
        return no_repeats(out, text, shown)

    return parse


def one_of(choices: Sequence[str]) -> Callable[[str], str]:
    """An argparse type: one of :obj:`choices` (names may hold spaces)."""
    def parse(text: str) -> str:
        if text not in choices:
            _fail(f"unknown value {text!r}; expected one of: {', '.join(choices)}")
        return text

    return parse


# ---------------------------------------------------------------------------
# the KONG options, from KongConfig's fields
# ---------------------------------------------------------------------------

#: Options whose values are a fixed set of names.
CHOICES: Dict[str, Sequence[str]] = {"traversal": TRAVERSALS, "kernel": KERNELS, "order": ORDERS,
                                     "norm": NORMS, "flow": FLOWS}
#: Integer options that also take yes (1) and no (0).
YES_NO_INTS = ("relabel",)
_WORDS = {"yes": True, "true": True, "on": True, "no": False, "false": False, "off": False}


def yes_no(text: str) -> bool:
    """An argparse type: yes or no (true/false, on/off), as every yes/no option takes them."""
    low = text.strip().lower()
    if low not in _WORDS:
        _fail(f"expects yes or no (got {text!r})")
    return _WORDS[low]


def _kind(name: str) -> str:
    default = option_defaults()[name]
    if name == "dim":
        return "dim"
    if isinstance(default, bool):
        return "bool"
    if isinstance(default, int):
        return "int"
    if isinstance(default, float):
        return "float"
    return "str"


def _raw_value(name: str, token: str) -> Any:
    kind, low = _kind(name), token.strip().lower()
    if kind == "bool":
        return yes_no(token)
    if name in YES_NO_INTS and low in _WORDS:
        return int(_WORDS[low])
    if kind == "dim" and low in ("exact", "none"):
        return None
    try:
        if kind in ("int", "dim"):
            return int(token)
        if kind == "float":
            return float(token)
    except ValueError:
        if kind == "dim":
            _fail(f"expects 'exact' or sketch sizes (got {token!r})")
        if name in YES_NO_INTS:
            _fail(f"expects yes, no, both or a number of rounds (got {token!r})")
        _fail(f"expects {'an integer' if kind == 'int' else 'a number'} (got {token!r})")
    return token


def kong_value(name: str, token: str) -> Any:
    """One value of the KONG option :obj:`name`, checked by :class:`~kong_pyg.KongConfig`."""
    value = _raw_value(name, token)
    try:
        KongConfig(**{name: value})
    except (TypeError, ValueError) as err:
        _fail(str(err))
    return value


def kong_values(name: str, text: str) -> List[Any]:
    """The values of a comma list for the KONG option :obj:`name` (``both`` = no and yes)."""
    out: List[Any] = []
    shown: List[str] = []
    for token in split_list(text):
        if token.lower() == "both" and (_kind(name) == "bool" or name in YES_NO_INTS):
            out.extend([False, True] if _kind(name) == "bool" else [0, 1])
        elif _kind(name) == "int" and "-" in token[1:]:
            out.extend(kong_value(name, str(v)) for v in int_range(token))
        else:
            out.append(kong_value(name, token))
        _name_new_values(shown, out, token)
    if not out:
        _fail(f"is empty (got {text!r})")
    return no_repeats(out, text, shown)


def show_kong(name: str, value: Any) -> str:
    """A KONG option's value as the command line spells it."""
    if isinstance(value, (list, tuple)):
        return ",".join(show_kong(name, v) for v in value)
    if name == "dim" and value is None:
        return "exact"
    return show_default(value)


def _metavar(name: str, grid: bool) -> str:
    kind = _kind(name)
    if name in CHOICES:
        one = "|".join(CHOICES[name])
    elif kind == "bool":
        one = "yes|no" + ("|both" if grid else "")
    elif name in YES_NO_INTS:
        one = "N|yes|no" + ("|both" if grid else "")
    elif kind == "dim":
        one = "exact|B"
    else:
        one = "N" if kind == "int" else "X"
    return f"{one}[,...]" if grid else one


def add_kong_options(
    group: Any,
    names: Iterable[str],
    *,
    grid: bool,
    defaults: Mapping[str, Any],
    default_text: Optional[Mapping[str, str]] = None,
    suffix: Optional[Mapping[str, str]] = None,
    replace: Optional[Mapping[str, Tuple[str, str]]] = None,
) -> None:
    """Add a flag per KONG option, made from :class:`~kong_pyg.KongConfig`'s fields.

    Args:
        group: The parser or argument group.
        names (iterable): The options (:func:`~kong_pyg.config.option_names`).
        grid (bool): Comma lists (a grid; ``both`` for yes/no options;
            integer ranges like ``1-4``) stored as lists, or one value each.
        defaults (dict): The value of each option when its flag is absent.
        default_text (dict, optional): The help's default, where not
            :obj:`defaults`' value.
        suffix (dict, optional): Text added to an option's help.
        replace (dict, optional): An option's :obj:`(metavar, help)` where the command takes fewer
            values than :class:`~kong_pyg.KongConfig` (the stream's :obj:`dim`: no exact map).
    """
    docs = option_docs()
    for name in names:
        shown = (default_text or {}).get(name) or show_kong(name, defaults[name])
        extra = (suffix or {}).get(name, "")
        metavar, doc = (replace or {}).get(name, (_metavar(name, grid), docs[name]))
        help_text = f"{doc}{extra} (default: {shown})".replace("%", "%%")
        flag = "--" + name.replace("_", "-")
        if grid:
            group.add_argument(flag, dest=name, default=defaults[name], metavar=metavar,
                               type=lambda text, n=name: kong_values(n, text), help=help_text)
        else:
            bare = {"nargs": "?", "const": True} if _kind(name) == "bool" else {}
            group.add_argument(flag, dest=name, default=defaults[name], metavar=metavar,
                               type=lambda text, n=name: kong_value(n, text), help=help_text, **bare)


# ---------------------------------------------------------------------------
# paths
# ---------------------------------------------------------------------------


def input_file(allow_stdin: bool = False) -> Callable[[str], str]:
    """An argparse type: an existing file (or ``-`` for stdin)."""
    def parse(text: str) -> str:
        if allow_stdin and text == "-":
            return text
        if os.path.isdir(text):
            _fail(f"{text!r} is a folder, not a file")
        if not os.path.isfile(text):
            if os.path.exists(text):  # a device, FIFO or socket: not a file that can be read twice
                _fail(f"{text!r} is not a regular file (a device, pipe or socket); "
                      + ("pass - to read standard input" if allow_stdin else "give a file"))
            _fail(f"no such file: {text!r}")
        return text

    return parse


def input_dir(text: str) -> str:
    """An argparse type: an existing folder."""
    if not os.path.exists(text):
        _fail(f"no such folder: {text!r}")
    if not os.path.isdir(text):
        _fail(f"{text!r} is a file, not a folder")
    return text


def not_a_file(text: str) -> str:
    """An argparse type: a folder that exists or can be made (not a file)."""
    if os.path.exists(text) and not os.path.isdir(text):
        _fail(f"{text!r} is a file, not a folder")
    return text


#: The most processes a command or example starts per CPU of the machine (``--workers`` and the like).
PROCESSES_PER_CPU = 4


def add_cache_dir(group: Any) -> None:
    """The ``--cache-dir`` option of the commands that read TU data sets (one definition)."""
    group.add_argument("--cache-dir", default=None, metavar="DIR", type=not_a_file,
                       help="where processed data sets go (default: $KONG_PYG_CACHE, else "
                            "$XDG_CACHE_HOME/kong_pyg, else ~/.cache/kong_pyg)")


def shown_path(path: str) -> str:
    """:obj:`path` as a recorded command line shows it, shell-quoted.

    Relative where it lies below the current folder, else absolute (above it, or on another drive,
    where no relative path exists); quoted for this system's shell (cmd.exe's rules on Windows).
    """
    full = os.path.abspath(path)
    try:
        rel = os.path.relpath(full)
    except ValueError:  # (Windows: another drive)
        rel = full
    shown = full if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel
    if os.name == "nt":
        import subprocess

        return subprocess.list2cmdline([shown])
    return shlex.quote(shown)


def _nearest_folder(path: str) -> str:
    """The nearest existing ancestor of :obj:`path` (:obj:`path` itself if it exists)."""
    current = os.path.abspath(path)
    while not os.path.exists(current):
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return current


def _probe(folder: str, flag: str) -> None:
    """Raise :class:`CommandError` unless a file can be created in :obj:`folder`."""
    if not os.path.isdir(folder):
        raise CommandError(f"{flag}: cannot create a folder under {folder!r}: it is a file")
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as err:
        raise CommandError(f"{flag}: cannot write in {folder!r}: {err.strerror or err}") from None


def check_output_file(path: str, flag: str) -> None:
    """Check, before any work, that :obj:`path` can be written (its folder is made if needed).

    Raises:
        CommandError: :obj:`path` is empty or a folder (or ends in a path
            separator), or its folder cannot be made or written to.
    """
    if not path:
        raise CommandError(f"{flag}: the file name is empty")
    if path.endswith((os.sep, "/")) or os.path.isdir(path):
        raise CommandError(f"{flag}: {path!r} is a folder, not a file")
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise CommandError(f"{flag}: {path!r} is not writable")
    _probe(_nearest_folder(os.path.dirname(os.path.abspath(path))), flag)


def _same_file(a: str, b: str) -> bool:
    """Whether two paths name one file (the same resolved path, or one file by two names)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # (either one does not exist yet: different names are different files)
        return False


def check_distinct_files(files: Sequence[Tuple[str, str]]) -> None:
    """Refuse, before any work, two of :obj:`files` (``(flag, path)`` pairs) that are one file.

    (One written over another, or over the input, loses it: a checkpoint named as the output
    was written over by the features, and the next run found no checkpoint there.)

    Raises:
        CommandError: Two of them name one file.
    """
    for i, (flag_a, a) in enumerate(files):
        for flag_b, b in files[i + 1:]:
            if _same_file(a, b):
                raise CommandError(f"{flag_a} {a!r} and {flag_b} {b!r} are one file: give them different "
                                   "names")
            settled = os.path.exists(a) and os.path.exists(b)  # (both exist: _same_file has decided)
            if not settled and os.path.realpath(a).casefold() == os.path.realpath(b).casefold():
                raise CommandError(f"{flag_a} {a!r} and {flag_b} {b!r} differ only in letter case: one file "
                                   "on a case-insensitive disk (as macOS and Windows use): give them names "
                                   "that differ otherwise")


def check_figure_file(path: str, flag: str) -> None:
    """Check, before any work, that a figure can be written to :obj:`path`.

    matplotlib must be installed, the file writable (:func:`check_output_file`), and its
    suffix a format matplotlib writes.

    Raises:
        CommandError: One of these does not hold.
    """
    from ..evaluation.plots import pyplot

    try:
        pyplot()
    except ImportError as err:
        raise CommandError(f"{flag}: {err}") from None
    from matplotlib.backend_bases import FigureCanvasBase

    check_output_file(path, flag)
    suffix = os.path.splitext(path)[1].lower().lstrip(".")
    formats = FigureCanvasBase.get_supported_filetypes()
    if not suffix:  # (matplotlib would write PATH.png: another file than the one named)
        raise CommandError(f"{flag}: {path!r} has no suffix; name the image with its format, such as "
                           f"{path.rstrip('.')}.png")
    if suffix not in formats:
        raise CommandError(f"{flag}: unknown image format {suffix!r}; use one of "
                           f"{', '.join(sorted(formats))}")


def check_output_dir(path: str, flag: str) -> None:
    """Check, before any work, that files can be written in the folder :obj:`path` (made if needed).

    Raises:
        CommandError: :obj:`path` is a file, or it cannot be made or written to.
    """
    if os.path.exists(path) and not os.path.isdir(path):
        raise CommandError(f"{flag}: {path!r} is a file, not a folder")
    _probe(_nearest_folder(path), flag)


def stdout_closed() -> bool:
    """Whether stdout's reader has gone (``| head``); if so, stdout is pointed at the null device.

    (A pipe without a reader reports an error when polled; then the interpreter's last flush at
    exit cannot fail again with a second message.)
    """
    import select

    try:
        fd = sys.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        closed = any(event & select.POLLERR for _, event in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # (no stdout, or not a file)
        return False
    if closed:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)
    return closed


__all__ = [
    "CommandError", "stdout_closed", "no_plot", "plural", "Parser", "HelpFormatter", "add_command",
    "add_quiet", "add_kong_options", "kong_value", "kong_values", "show_kong", "show_default",
    "split_list", "no_repeats", "drop_stale", "list_of", "int_at_least", "number_in", "one_of",
    "input_file", "input_dir", "not_a_file", "add_cache_dir", "PROCESSES_PER_CPU", "check_output_file",
    "check_figure_file", "check_output_dir", "one_line", "yes_no", "check_distinct_files", "MAX_SPLITS",
]
