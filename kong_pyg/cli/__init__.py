"""The ``kong-pyg`` command line (also ``python -m kong_pyg``).

One module per subcommand (:mod:`~kong_pyg.cli.classify`,
:mod:`~kong_pyg.cli.table2`, :mod:`~kong_pyg.cli.stream`,
:mod:`~kong_pyg.cli.order_test`), each with a
``register(subparsers)`` that adds its parser and sets ``func`` (called with
the parsed arguments, returning an exit status), all in the one style of
:mod:`~kong_pyg.cli.common`: comma lists, defaults in the help, progress bars
on unless ``--quiet``, and one-line errors with exit status 2.
"""
import importlib
import sys
from typing import List, Optional

from .. import __version__
from .common import CommandError, HelpFormatter, Parser, one_line

#: Modules that add a subcommand.
COMMAND_MODULES: List[str] = [
    "kong_pyg.cli.classify",
    "kong_pyg.cli.table2",
    "kong_pyg.cli.stream",
    "kong_pyg.cli.order_test",
]

#: Errors that are the user's (bad values, paths, missing extras): one line, exit 2.
USER_ERRORS = (CommandError, ValueError, TypeError, OSError, ImportError)


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


def main(argv: Optional[List[str]] = None) -> int:
    """Run the command line.

    Args:
        argv (list, optional): The arguments (default: :obj:`sys.argv[1:]`).

    Returns:
        The exit status: 0, 2 for a usage error (one line on stderr), or
        what the subcommand returned.
    """
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
    try:
        return int(args.func(args) or 0)
    except USER_ERRORS as err:
        print(f"kong-pyg {args.command}: error: {one_line(str(err)) or type(err).__name__}", file=sys.stderr)
        return 2


__all__ = ["main", "build_parser", "COMMAND_MODULES"]

