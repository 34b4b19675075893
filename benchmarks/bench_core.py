"""Feature time of KONG vs PyG's WLConv histograms and GraKeL's WL kernel.

Every method runs on the same graphs in the same process, in turn, several
times; the table reports medians and the ratio to GraKeL's Weisfeiler-Lehman
kernel (h = 2, VertexHistogram base, the usual C-accelerated WL tool).
Loading the data and converting it to each tool's own input format is not
timed: each tool starts from its native input (a PyG dataset for KONG and
WLConv, GraKeL graph objects for GraKeL).

    python benchmarks/bench_core.py --data-root ../shared/data/tu --out docs/results/bench_core.md

Data sets in PyG's TU raw layout (DIR/NAME/raw/...) are copied into a
temporary folder before PyG processes them; missing data sets are skipped.
"""
import argparse
import gc
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kong_pyg import KongVectorizer  # noqa: E402

DEFAULT_ROOT = Path(__file__).resolve().parents[2] / "shared" / "data" / "tu"
DATASETS = ["MUTAG", "PTC_MR", "ENZYMES", "PROTEINS", "NCI1"]


def load(root: Path, name: str, tmp: str):
    from torch_geometric.datasets import TUDataset

    src = root / name / "raw"
    if not src.is_dir():
        return None
    shutil.copytree(src, Path(tmp) / name / "raw")
    return TUDataset(tmp, name)


def wlconv_features(dataset, hops: int = 2):
    """WL colour histograms with PyG's WLConv (its documented kernel recipe)."""
    from torch_geometric.loader import DataLoader
    from torch_geometric.nn import WLConv

    batch = next(iter(DataLoader(dataset, batch_size=len(dataset))))
    x = batch.x.argmax(dim=1) if batch.x.dim() > 1 else batch.x
    feats = []
    for _ in range(hops):
        conv = WLConv()
        x = conv(x, batch.edge_index)
        feats.append(conv.histogram(x, batch.batch))
    return torch.cat(feats, dim=1)


def grakel_input(dataset):
    from grakel import Graph

    graphs = []
    for d in dataset:
        labels = (d.x.argmax(dim=1) if d.x.dim() > 1 else d.x).tolist()
        edges = [tuple(e) for e in d.edge_index.t().tolist()]
        graphs.append(Graph(edges, node_labels=dict(enumerate(labels))))
    return graphs


def grakel_wl(graphs, hops: int = 2):
    from grakel.kernels import VertexHistogram, WeisfeilerLehman

    return WeisfeilerLehman(n_iter=hops, base_graph_kernel=VertexHistogram, normalize=False).fit_transform(
        graphs
    )


def timed(fn, repeats: int, collect: bool = True) -> float:
    fn()  # warm-up
    out = []
    for _ in range(repeats):
        if collect:
            gc.collect()
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-root", type=Path, default=DEFAULT_ROOT)
    parser.add_argument("--datasets", nargs="+", default=DATASETS)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--hops", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None, help="write the Markdown table here")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (default: torch's choice)")
    parser.add_argument("--edge-labels", action="store_true", help="give KONG the edge labels too")
    parser.add_argument("--no-gc", action="store_true",
                        help="no gc.collect() before every timed run (warm caches: back-to-back calls)")
    args = parser.parse_args(argv)
    if not args.data_root.is_dir():
        print(f"no data at {args.data_root}: nothing to benchmark (pass --data-root)")
        return 0
    try:
        import grakel  # noqa: F401

        have_grakel = True
    except ImportError:
        have_grakel = False
        print("grakel is not installed (pip install -e '.[bench]'): GraKeL column skipped")
    h = args.hops
    if args.threads:
        torch.set_num_threads(args.threads)
    # node labels only, like the WL tools (edge labels: pass --edge-labels)
    common = dict(hops=h, edge_labels=args.edge_labels)
    methods = {
        "KONG exact k=1": dict(k=1),
        "KONG exact k=2": dict(k=2),
        "KONG b=1024 k=1": dict(k=1, dim=1024),
        "KONG b=1024 k=2": dict(k=2, dim=1024),
        "KONG exact k=1 cosine p=2 rlb": dict(k=1, kernel="cosine", degree=2, relabel=True),
    }
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.datasets:
            ds = load(args.data_root, name, tmp)
            if ds is None:
                print(f"{name}: no raw files under {args.data_root / name}, skipped")
                continue
            m = int(ds._data.edge_index.size(1))
            times = {}
            collect = not args.no_gc
            for label, cfg in methods.items():
                vec = KongVectorizer(**common, **cfg)
                times[label] = timed(lambda: vec.fit_transform(ds), args.repeats, collect)
            times["PyG WLConv histograms"] = timed(lambda: wlconv_features(ds, h), args.repeats, collect)
            if have_grakel:
                gk = grakel_input(ds)
                times["GraKeL WL"] = timed(lambda: grakel_wl(gk, h), args.repeats, collect)
            rows.append((name, len(ds), m, times))
            base = times.get("GraKeL WL")
            print(f"\n{name}: {len(ds)} graphs, {m} directed edges (median of {args.repeats} runs)")
            for label, t in times.items():
                ratio = f"  GraKeL/this = {base / t:6.1f}x" if base else ""
                print(f"  {label:32s} {t * 1000:9.1f} ms{ratio}")
    if args.out and rows:
        write_markdown(args.out, rows, args, h)
    return 0


def write_markdown(path: Path, rows, args, h: int) -> None:
    labels = list(rows[0][3])
    lines = [
        "# Feature time: KONG vs WL tools",
        "",
        f"Median of {args.repeats} runs after one warm-up"
        + (" (back to back: no gc.collect() between runs, warm caches)" if args.no_gc
           else " (gc.collect() before every run: closer to one cold call)")
        + f", h = {h}, on {platform.processor() or 'CPU'} "
        f"({os.cpu_count()} cores), torch {torch.__version__}. Produced by",
        "`python benchmarks/bench_core.py --threads 1 --repeats 15"
        + (" --no-gc" if args.no_gc else "") + f" --out {args.out}`"
        + (" (with `--edge-labels`)." if args.edge_labels else "; KONG reads node labels only, as WL does."),
        "GraKeL's WL returns the n x n kernel matrix (its public output); KONG and WLConv return",
        "explicit features. Ratio = GraKeL WL time / method time (higher is faster).",
        "",
        "| data set | graphs | edges | " + " | ".join(labels) + " |",
        "|---|---|---|" + "---|" * len(labels),
    ]
    for name, n, m, times in rows:
        base = times.get("GraKeL WL")
        cells = []
        for label in labels:
            t = times[label]
            ratio = f" ({base / t:.1f}x)" if base and label != "GraKeL WL" else ""
            cells.append(f"{t * 1000:.1f} ms{ratio}")
        lines.append(f"| {name} | {n} | {m} | " + " | ".join(cells) + " |")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    print(f"\nwrote {path}")


if __name__ == "__main__":
    sys.exit(main())
