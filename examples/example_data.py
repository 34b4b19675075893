"""Graph classification data for the examples (imported by them, not run).

* ``--data-root DIR --dataset NAME``: a TU data set in PyG's raw layout
  (``DIR/NAME/raw/NAME_A.txt`` and friends, as downloaded by PyG's
  ``TUDataset``). The raw files are copied into a fresh temporary folder, so
  ``DIR`` may be read-only and nothing is downloaded.
* No ``--data-root``: MUTAG, which ships with the package (offline), or
  with ``--dataset synthetic`` the package's synthetic ordered-event data
  set (two classes that differ only in the order of events; see
  ``kong_pyg.datasets.synthetic_event_stream``). Neither needs files.

Graphs come back with ``x`` as one-hot float rows (a GNN's input; KONG reads
the same rows as labels), integer or one-hot ``edge_attr`` and ``y``.
"""
import os
import shutil
import tempfile
from pathlib import Path

import torch
import torch.nn.functional as F


def add_data_args(parser, num_graphs: int = 200, dataset: str = "MUTAG"):
    parser.add_argument("--data-root", default=None,
                        help="folder holding NAME/raw/NAME_*.txt (PyG TUDataset raw layout); "
                             "default: a data set that needs no files (--dataset)")
    parser.add_argument("--dataset", default=dataset,
                        help="TU data set name under --data-root; without it MUTAG (bundled with the "
                             "package) or 'synthetic' (ordered events)")
    parser.add_argument("--num-graphs", type=int, default=num_graphs,
                        help="graphs used without --data-root (MUTAG: a seeded random subset, at most 188)")


def find_raw(root, name: str) -> Path:
    """The folder holding ``NAME_A.txt``: ROOT/NAME/raw, ROOT/raw or ROOT."""
    root = Path(root)
    for cand in (root / name / "raw", root / "raw", root):
        if (cand / f"{name}_A.txt").is_file():
            return cand
    raise FileNotFoundError(
        f"no {name}_A.txt under {root} (looked in {root / name / 'raw'}, {root / 'raw'} and {root}); "
        "--data-root must hold a TU data set in PyG's raw layout"
    )


def load_tu(root, name: str, pre_transform=None):
    """A ``TUDataset`` read from a copy of its raw files (never downloads)."""
    from torch_geometric.datasets import TUDataset

    raw = find_raw(root, name)
    work = tempfile.mkdtemp(prefix="kong_tu_")
    try:
        shutil.copytree(raw, os.path.join(work, name, "raw"))
        dataset = TUDataset(work, name, pre_transform=pre_transform)  # loads into memory
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return dataset


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
        dataset = load_bundled(name, cache=cache)  # in memory once processed
    keep = torch.randperm(len(dataset), generator=torch.Generator().manual_seed(seed))[:num_graphs]
    return [dataset[int(i)] for i in keep.sort().values]


def default_graphs(args):
    """The data used without ``--data-root``: (graphs, description). Needs no files."""
    if args.dataset.lower() == "synthetic":
        return synthetic_graphs(args.num_graphs, args.seed), "synthetic ordered events (built in)"
    return bundled_graphs(args.dataset, args.num_graphs, args.seed), f"{args.dataset} (bundled)"


def load_graphs(args, pre_transform=None):
    """``(graphs, description)``; ``pre_transform`` is applied to every graph once.

    A TU data set comes back as PyG's ``TUDataset`` (``pre_transform`` runs while
    PyG processes it); the default data as a list of ``Data``.
    """
    if args.data_root is not None:
        dataset = load_tu(args.data_root, args.dataset, pre_transform)
        return dataset, f"{args.dataset} (from {args.data_root})"
    graphs, name = default_graphs(args)
    graphs = one_hot_x(graphs)
    if pre_transform is not None:
        graphs = [pre_transform(d) for d in graphs]
    return graphs, name


def labels_of(graphs) -> torch.Tensor:
    """The graph labels as one tensor."""
    from torch_geometric.data import InMemoryDataset

    if isinstance(graphs, InMemoryDataset):
        return graphs.y.view(-1)
    return torch.cat([d.y.view(-1) for d in graphs])
