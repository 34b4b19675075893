"""What the benchmark scripts share on the command line: one-line errors and checked values.

Every benchmark parses its arguments with :func:`make_parser` (``kong_pyg.cli.common.Parser``,
as ``kong-pyg`` does): a bad value is one line ``SCRIPT.py: error: argument --flag: ...`` with
exit status 2, never a traceback, and every numeric option has a checked type (these, and
``int_at_least``, ``number_in`` and ``list_of`` of ``kong_pyg.cli.common``). :func:`run` turns a
:class:`DataError` or a library's ``ValueError`` that still escapes into the same one line.
``run``, ``DataError`` and ``process_count`` (worker and load processes, at most 4 x the CPUs)
are the examples' (``examples/example_data.py``): one place for each.
"""
import argparse
import shlex
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, NoReturn, Optional, Sequence, Union

from kong_pyg.cli.common import (
    CommandError,
    HelpFormatter,
    Parser,
    check_output_dir,
    check_output_file,
    input_dir,
    int_at_least,
    kong_value,
    kong_values,
    list_of,
    no_repeats,
    number_in,
    split_list,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from example_data import DataError, process_count, run, warn_processes  # noqa: E402


class _OutFile(type(Path())):  # type: ignore[misc]
    """A checked output file (:func:`out_file`): its folder is made once the whole command line parsed."""


class _OutDir(type(Path())):  # type: ignore[misc]
    """A checked output folder (:func:`out_dir`): made once the whole command line parsed."""


class _Parser(Parser):
    def parse_args(self, args: Any = None, namespace: Any = None) -> argparse.Namespace:  # type: ignore[override]
        parsed = super().parse_args(args, namespace)
        for value in vars(parsed).values():  # (not while parsing: a later bad argument made them anyway)
            if isinstance(value, _OutFile):
                value.parent.mkdir(parents=True, exist_ok=True)
            elif isinstance(value, _OutDir):
                value.mkdir(parents=True, exist_ok=True)
        return parsed


def make_parser(doc: str) -> Parser:
    """An argument parser whose errors are one line (``SCRIPT.py: error: ...``, exit 2)."""
    return _Parser(description=doc, formatter_class=HelpFormatter)


def fail(message: str) -> NoReturn:
    raise argparse.ArgumentTypeError(message)


def kong(name: str) -> Callable[[str], Any]:
    """An argparse type: one value of the KONG option :obj:`name` (``k``, ``hops``, ``dim``, ...)."""
    return lambda text: kong_value(name, text)


def kong_list(name: str) -> Callable[[str], List[Any]]:
    """An argparse type: a comma list (integer ranges ``1-4`` too) of the KONG option :obj:`name`."""
    return lambda text: kong_values(name, text)


def folder(text: str) -> Path:
    """An argparse type: an existing folder, as a :class:`~pathlib.Path`."""
    return Path(input_dir(text))


def out_file(text: str) -> Path:
    """An argparse type: a file to write, checked before any work (not after it); :func:`make_parser`'s
    parser makes its folder once every argument parsed."""
    _writable(check_output_file, text)
    return _OutFile(text)


def out_dir(text: str) -> Path:
    """An argparse type: a folder to write in, checked before any work; made once every argument parsed."""
    _writable(check_output_dir, text)
    return _OutDir(text)


def _writable(check: Callable[[str, str], None], text: str) -> None:
    try:
        check(text, "")
    except CommandError as err:  # (argparse names the flag: drop the empty one)
        fail(str(err).removeprefix(": "))


#: Options whose values are local paths: a report shows them as placeholders.
_PATH_OPTIONS = {"--ml-dir": "PATH/ml-100k", "--data-root": "DIR", "--root": "ROOT"}


def produced_by(argv: Optional[Sequence[str]] = None) -> str:
    """The command that made a report: this script and its arguments as given (local data paths as
    placeholders), quoted for a shell."""
    argv = list(sys.argv if argv is None else argv)
    script, args, out = Path(argv[0]).name, argv[1:], []
    skip = False
    for i, a in enumerate(args):
        if skip:
            skip = False
            continue
        flag, eq, _ = a.partition("=")
        if flag in _PATH_OPTIONS:
            out.append(f"{flag}={_PATH_OPTIONS[flag]}" if eq else flag)
            if not eq:
                out.append(_PATH_OPTIONS[flag])
                skip = i + 1 < len(args)
            continue
        out.append(a)
    return shlex.join(["python", f"benchmarks/{script}", *out])


def check_folder(parser: argparse.ArgumentParser, flag: str, path: Union[str, Path]) -> None:
    """A one-line error unless :obj:`path` is a folder (for defaults: argparse checks only given values)."""
    if not Path(path).is_dir():
        parser.error(f"{flag}: no such folder: '{path}' (the default; pass {flag} DIR)")


def items(convert: Callable[[str], Any] = str, choices: Optional[Sequence[Any]] = None) -> type:
    """An argparse action for ``nargs="+"``: values given with commas, spaces or both (``1,2 4``), each
    converted by :obj:`convert`, among :obj:`choices` when given, none twice."""
    class Items(argparse.Action):
        def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                     option_string: Optional[str] = None) -> None:
            try:
                out, shown = [], []
                for text in values:
                    for token in split_list(text):
                        value = convert(token)
                        if choices is not None and value not in choices:
                            fail(f"invalid choice: {token!r} (choose from {', '.join(map(str, choices))})")
                        out.append(value)
                        shown.append(token)
                setattr(namespace, self.dest, no_repeats(out, " ".join(values), shown))
            except argparse.ArgumentTypeError as err:
                parser.error(f"argument {option_string}: {err}")

    return Items


def names(choices: Sequence[str]) -> Callable[[str], List[str]]:
    """An argparse type: a comma list of names among :obj:`choices`."""
    def parse(text: str) -> List[str]:
        items = split_list(text)
        unknown = [t for t in items if t not in choices]
        if unknown:
            fail(f"unknown {', '.join(map(repr, unknown))}; expected some of: {', '.join(choices)}")
        if not items:
            fail(f"expects a comma-separated list (got {text!r})")
        return no_repeats(items, text)

    return parse


def overrides(minimum: int) -> Callable[[str], Dict[str, int]]:
    """An argparse type: per data set integers ``NAME=N,...`` (every N at least :obj:`minimum`)."""
    def parse(text: str) -> Dict[str, int]:
        out = {}
        for item in split_list(text):
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                fail(f"expects NAME=N items, e.g. NCI1=2 (got {item!r})")
            out[key.strip()] = int_at_least(minimum)(value.strip())
        return out

    return parse


def present(root: Path, datasets: Sequence[str], flag: str = "--datasets") -> List[str]:
    """The data sets of :obj:`datasets` whose ``root/NAME/raw`` exists; a :class:`DataError` if none."""
    found = [d for d in datasets if (Path(root) / d / "raw").is_dir()]
    if not found:
        raise DataError(f"--data-root '{root}' holds none of {flag} {','.join(datasets)} (looked for "
                        f"{Path(root) / 'NAME' / 'raw'})")
    return found


__all__ = ["DataError", "make_parser", "run", "fail", "kong", "kong_list", "folder", "check_folder", "names",
           "overrides", "present", "process_count", "warn_processes", "int_at_least", "number_in", "list_of"]
