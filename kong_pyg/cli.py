"""The ``kong-pyg`` command line.

Every subcommand lives with the code it runs: a module adds its parser in a
``register_cli(subparsers)`` function that sets ``func`` (called with the
parsed arguments, returning an exit status). This file only lists them.
"""
import argparse
import sys
from typing import List, Optional

from . import __version__

#: Modules that add a subcommand.
COMMAND_MODULES: List[str] = [
    "kong_pyg.evaluate",
    "kong_pyg.ordered",
    "kong_pyg.stream",
]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    import importlib

    parser = argparse.ArgumentParser(
        prog="kong-pyg",
        description="KONG graph kernels (Kernels for Ordered-Neighborhood Graphs) for PyG.",
    )
    parser.add_argument("--version", action="version", version=f"kong-pyg {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register_cli(sub)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return 2
    return int(args.func(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
