"""What the examples share (imported by them, not run): data and one command-line style.

Data:

* ``--data-root DIR --dataset NAME``: a TU data set in PyG's raw layout
  (``DIR/NAME/raw/NAME_A.txt`` and friends, as downloaded by PyG's
  ``TUDataset``; ``DIR/raw`` or ``DIR`` itself also work). ``DIR`` is only
  read (it may be read-only) and nothing is downloaded.
* No ``--data-root``: MUTAG, which ships with the package (offline), or
  with ``--dataset synthetic`` the package's synthetic ordered-event data
  set (two classes that differ only in the order of events; see
  ``kong_pyg.datasets.synthetic_event_stream``). Neither needs files.

Graphs come back with ``x`` as one-hot float rows (a GNN's input; KONG reads
the same rows as labels), integer or one-hot ``edge_attr`` and ``y``.

Command line: the style of ``kong-pyg`` (``kong_pyg.cli.common``): ``--help``
shows every default and runs nothing, a bad value or path is one line
``NAME.py: error: ...`` with exit status 2, and PyTorch uses ``--threads``
threads (default 1: on a small or busy machine more threads make these small
models many times slower, not faster). ``--quick`` (and ``--full``) only
change defaults: options given on the command line win (:func:`parse_args`).
"""
import argparse
import math
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Callable, Dict, Mapping, Optional

import torch
import torch.nn.functional as F

from kong_pyg.cli.common import (
    PROCESSES_PER_CPU,
    HelpFormatter,
    Parser,
    int_at_least,
    number_in,
    one_line,
    stdout_closed,
)


class DataError(Exception):
    """The data named on the command line cannot be read (reported in one line)."""


def make_parser(doc: str) -> Parser:
    """An argument parser in the ``kong-pyg`` style, described by the example's docstring."""
    parser = Parser(description=doc, formatter_class=HelpFormatter)
    parser.add_argument("--threads", type=int_at_least(1), default=1, metavar="N", help="PyTorch threads")
    return parser


def usable_device(text: str) -> str:
    """An argparse type: a device this PyTorch can compute on (a one-line error otherwise)."""
    from kong_pyg.config import check_usable_device

    try:
        check_usable_device("--device", text)
    except (TypeError, ValueError) as err:
        raise argparse.ArgumentTypeError(one_line(str(err))) from None
    return text


def process_count(minimum: int = 1) -> Callable[[str], int]:
    """An argparse type: a number of processes, :obj:`minimum` to :data:`PROCESSES_PER_CPU` x the CPUs here.

    (The benchmarks use it too, for their worker and load processes.)
    """
    def parse(text: str) -> int:
        value = int_at_least(minimum)(text)
        cpus = os.cpu_count() or 1
        most = PROCESSES_PER_CPU * cpus
        if value > most:
            raise argparse.ArgumentTypeError(f"must be at most {most} ({PROCESSES_PER_CPU} x the {cpus} CPUs "
                                             f"here) (got {value})")
        return value

    return parse


def warn_processes(flag: str, value: int) -> None:
    """One line on stderr when :obj:`value` processes are more than this machine's CPUs."""
    cpus = os.cpu_count() or 1
    if value > cpus:
        print(f"{Path(sys.argv[0]).name}: warning: {flag} {value} is more than the {cpus} CPUs here: the "
              "processes share them (slower, the same result)", file=sys.stderr)


def parse_args(parser, argv=None, presets: Optional[Mapping[str, Dict[str, object]]] = None):
    """Parse :obj:`argv`; a preset flag (``--quick``, ``--full``) given changes defaults only.

    :obj:`presets` maps the ``dest`` of a flag to the defaults it sets, applied
    in order (a later flag's win); options given on the command line keep their values.
    """
    args = parser.parse_args(argv)
    defaults: Dict[str, object] = {}
    for flag, values in (presets or {}).items():
        if getattr(args, flag):
            defaults.update(values)
    if defaults:
        parser.set_defaults(**defaults)
        args = parser.parse_args(argv)
    return args


def preset_help(text: str, values: Dict[str, object]) -> str:
    """The help of a preset flag: what it does and the defaults it sets (explicit options win)."""
    shown = ", ".join(f"--{k.replace('_', '-')} {v}" for k, v in values.items())
    return f"{text}: sets the defaults {shown}; options given explicitly win (default: off)"


def start(args) -> None:
    """Apply the common options (threads) once the arguments are parsed."""
    torch.set_num_threads(args.threads)


def run(main: Callable, argv=None):
    """Run :obj:`main`; a :class:`DataError` (or a library's :obj:`ValueError`) is one line, exit status 2;
    Ctrl-C one line, exit status 130; a reader of the output that has gone (``| head``) exit status 141
    without a word (as ``kong-pyg``)."""
    try:
        result = main(argv)
        sys.stdout.flush()  # (a reader that has gone is found here, not in the flush at exit)
        return result
    except BrokenPipeError:
        if not stdout_closed():
            raise
        raise SystemExit(141) from None
    except (DataError, ValueError) as err:
        print(f"{Path(sys.argv[0]).name}: error: {one_line(str(err))}", file=sys.stderr)
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        print(f"\n{Path(sys.argv[0]).name}: interrupted", file=sys.stderr)
        raise SystemExit(130) from None


def add_data_args(parser, num_graphs: int = 200, dataset: str = "MUTAG"):
    """``--data-root``, ``--dataset`` and ``--num-graphs``."""
    parser.add_argument("--data-root", default=None, metavar="DIR",
                        help="folder holding NAME/raw/NAME_*.txt (PyG TUDataset raw layout), only read "
                             "(default: none: a data set that needs no files, see --dataset)")
    parser.add_argument("--dataset", default=dataset, metavar="NAME",
                        help="TU data set name under --data-root; without it MUTAG (bundled with the "
                             "package) or 'synthetic' (ordered events)")
    parser.add_argument("--num-graphs", type=int_at_least(2), default=num_graphs, metavar="N",
                        help="graphs used without --data-root (MUTAG: a seeded random subset, at most 188)")


def find_raw(root, name: str) -> Path:
    """The folder holding ``NAME_A.txt``: ROOT/NAME/raw, ROOT/raw or ROOT."""
    root = Path(root)
    if not root.is_dir():
        raise DataError(f"--data-root {str(root)!r} is not a folder")
    for cand in (root / name / "raw", root / "raw", root):
        if (cand / f"{name}_A.txt").is_file():
            return cand
    raise DataError(
        f"no {name}_A.txt under {root} (looked in {root / name / 'raw'}, {root / 'raw'} and {root}); "
        "--data-root must hold a TU data set in PyG's raw layout"
    )


def load_tu(root, name: str):
    """A TU data set read from its raw files (never downloads; the folder is only read).

    ``ROOT/NAME/raw`` is read in place; ``ROOT/raw`` or ``ROOT`` through a
    temporary copy in that layout. Errors name the user's files, not the copy's.
    """
    from kong_pyg.datasets import load_tu as load

    raw = find_raw(root, name)
    work = tempfile.mkdtemp(prefix="kong_tu_")
    copy = Path(work, name, "raw")
    try:
        if raw == Path(root) / name / "raw":
            return load(name, root, cache=Path(work, "cache"))  # in memory once loaded
        shutil.copytree(raw, copy)
        return load(name, work, cache=Path(work, "cache"))
    except (OSError, ValueError) as err:
        raise DataError(str(err).replace(str(copy), str(raw))) from err
    finally:
        shutil.rmtree(work, ignore_errors=True)


def synthetic_graphs(num_graphs: int = 200, seed: int = 0):
    """The package's ordered-event graphs (integer node and edge types)."""
    from kong_pyg.datasets import stream_to_graphs, synthetic_event_stream

    stream, y = synthetic_event_stream(num_graphs, seed=seed)
    graphs = stream_to_graphs(stream, y)
    for d in graphs:
        del d.graph_id
    return graphs


def one_hot_x(graphs):
    """Copies of the graphs whose integer node labels became one-hot float rows."""
    graphs = [d.clone() for d in graphs]
    if graphs and not graphs[0].x.is_floating_point():
        width = int(max(int(d.x.max()) for d in graphs)) + 1
        for d in graphs:
            d.x = F.one_hot(d.x.view(-1), width).float()
    return graphs


def bundled_graphs(name: str, num_graphs: int, seed: int = 0):
    """A data set bundled with the package, a seeded random subset of at most ``num_graphs``."""
    from kong_pyg.datasets import load_tu as load_bundled

    with tempfile.TemporaryDirectory(prefix="kong_tu_") as cache:
        dataset = load_bundled(name, cache=cache)  # in memory once loaded
    keep = torch.randperm(len(dataset), generator=torch.Generator().manual_seed(seed))[:num_graphs]
    return [dataset[int(i)] for i in keep.sort().values]


def default_graphs(args):
    """The data used without ``--data-root``: (graphs, description). Needs no files."""
    from kong_pyg.datasets import bundled_names

    if args.dataset.lower() == "synthetic":
        return synthetic_graphs(args.num_graphs, args.seed), "synthetic ordered events (built in)"
    if args.dataset not in bundled_names():
        known = ", ".join(bundled_names() + ["synthetic"])
        raise DataError(f"--dataset {args.dataset!r} needs --data-root DIR (DIR/{args.dataset}/raw); "
                        f"without it: {known}")
    return bundled_graphs(args.dataset, args.num_graphs, args.seed), f"{args.dataset} (bundled)"


def load_graphs(args, pre_transform: Optional[Callable] = None):
    """``(graphs, description)``, a list of ``Data``; ``pre_transform`` is applied to every graph once."""
    if args.data_root is not None:
        if args.dataset.lower() == "synthetic":
            raise DataError("--data-root needs --dataset NAME (the TU data set under it; 'synthetic' is "
                            "built in and reads no files)")
        graphs = list(load_tu(args.data_root, args.dataset))
        name = f"{args.dataset} (from {args.data_root})"
    else:
        graphs, name = default_graphs(args)
    graphs = one_hot_x(graphs)  # degree labels (TU sets without node labels) and integer types too
    if pre_transform is not None:
        graphs = [pre_transform(d) for d in graphs]
    return graphs, name


def class_counts(y: torch.Tensor) -> torch.Tensor:
    """The number of graphs of each class present; a :class:`DataError` unless 2 or more classes are."""
    counts = torch.bincount(y)
    counts = counts[counts > 0]
    if counts.numel() < 2:
        raise DataError(f"the {int(y.numel())} graphs are all of one class (class {int(y[0])}); "
                        "classification needs 2 or more classes (a larger --num-graphs, or another data set)")
    return counts


def check_folds(y: torch.Tensor, folds: int) -> None:
    """A :class:`DataError` naming ``--folds`` where stratified k-fold CV cannot be made."""
    counts = class_counts(y)
    smallest = int(counts.min())
    if folds > smallest:
        raise DataError(f"--folds {folds}: the smallest of the {int(counts.numel())} classes holds "
                        f"{smallest} of the {int(y.numel())} graphs; stratified {folds}-fold CV needs at "
                        f"least {folds} graphs of every class (a smaller --folds, or a larger --num-graphs)")


def check_split(y: torch.Tensor, test_size: float) -> None:
    """A :class:`DataError` naming the option where a stratified train/test split cannot be made."""
    counts = class_counts(y)
    n, classes = int(y.numel()), int(counts.numel())
    if int(counts.min()) < 2:
        raise DataError(f"{n} graphs hold only {int(counts.min())} graph of a class; a stratified train/test "
                        "split needs 2 or more of every class (a larger --num-graphs, or another data set)")
    n_test = math.ceil(test_size * n)
    if min(n_test, n - n_test) < classes:
        raise DataError(f"--test-size {test_size:g}: {n_test} test and {n - n_test} training graphs of "
                        f"{n}; a stratified split needs at least one of each of the {classes} classes on "
                        "each side")


def labels_of(graphs) -> torch.Tensor:
    """The graph labels as one tensor."""
    return torch.cat([d.y.view(-1) for d in graphs])


__all__ = ["DataError", "make_parser", "parse_args", "preset_help", "start", "run", "add_data_args",
           "load_graphs", "labels_of", "check_split", "check_folds", "process_count", "warn_processes",
           "int_at_least", "number_in"]


if __name__ == "__main__":  # (a helper, not an example: --help says what it is; anything else is an error)
    if sys.argv[1:] in (["--help"], ["-h"]):
        print(__doc__)
        sys.exit(0)
    print(f"{Path(sys.argv[0]).name}: error: this is the examples' shared helper, imported by them, not run "
          "(--help says what it holds)", file=sys.stderr)
    sys.exit(2)
