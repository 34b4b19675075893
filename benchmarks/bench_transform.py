"""KongFeatures graph by graph, as a pre_transform, and transform_dataset, against KongVectorizer.

Issue 13 asks for a per-graph cost small enough that ``KongFeatures`` as a
transform takes at most 2x ``KongVectorizer``'s time on the same graphs.
This measures, in CPU time with one PyTorch thread (medians of interleaved
repeats):

* ``per graph``: ``KongFeatures(...)(data)`` on every graph of the data set
  (what ``transform=`` does on access, and ``pre_transform=`` once);
* ``pre_transform``: processing the raw files with ``pre_transform=`` minus
  processing them without (one run each: it writes a processed folder);
* ``transform_dataset``: ``KongFeatures(...).transform_dataset(...)``, the
  documented fast path: on the PyG dataset (graph features, or node and graph
  features, into its collated storage), and on a list of its graphs (shallow
  copies with the new attributes);
* ``KongVectorizer``: ``KongVectorizer(dim=1024).fit_transform(dataset)``.

    python benchmarks/bench_transform.py --data-root ../shared/data/tu \\
        --out docs/results/bench_transform.md --json docs/results/bench_transform.json
"""
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_cli import (  # noqa: E402
    check_folder,
    folder,
    int_at_least,
    items,
    kong,
    make_parser,
    out_file,
    present,
    produced_by,
    run,
)
from bench_paths import TU_ROOT as DEFAULT_ROOT  # noqa: E402

from kong_pyg import KongFeatures, KongVectorizer  # noqa: E402


def load(root: Path, name: str, tmp: str, sub: str, pre=None):
    from torch_geometric.datasets import TUDataset

    folder = Path(tmp) / sub
    if not (folder / name / "raw").is_dir():
        shutil.copytree(root / name / "raw", folder / name / "raw")
    return TUDataset(str(folder), name, pre_transform=pre)


def cpu(fn) -> float:
    t = time.process_time()
    fn()
    return time.process_time() - t


def main(argv=None) -> int:
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--data-root", type=folder, default=DEFAULT_ROOT, metavar="DIR",
                        help="TU data sets in PyG's raw layout (DIR/NAME/raw)")
    parser.add_argument("--datasets", nargs="+", action=items(),
                        default=["MUTAG", "PROTEINS", "NCI1"], metavar="NAME",
                        help="data sets under --data-root (missing ones are skipped)")
    parser.add_argument("--repeats", type=int_at_least(1), default=3, metavar="N", help="timed rounds")
    parser.add_argument("--k", type=kong("k"), default=2, metavar="N", help="k-gram length")
    parser.add_argument("--out", type=out_file, default=None, metavar="FILE.md", help="write the report here")
    parser.add_argument("--json", type=out_file, default=None, metavar="FILE.json",
                        help="write the raw numbers here")
    args = parser.parse_args(argv)
    check_folder(parser, "--data-root", args.data_root)
    present(args.data_root, args.datasets)  # at least one, before any work
    torch.set_num_threads(1)
    opts = dict(k=args.k, hops=2, dim=1024)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.datasets:
            if not (args.data_root / name / "raw").is_dir():
                print(f"{name}: no raw files, skipped")
                continue
            ds = load(args.data_root, name, tmp, "plain")
            graphs = [ds[i] for i in range(len(ds))]
            per_graph_g = KongFeatures(level="graph", **opts)
            per_graph_n = KongFeatures(level="node", **opts)
            vec = KongVectorizer(threads=1, **opts)
            fns = {
                "KongVectorizer": lambda: vec.fit_transform(ds),
                "per graph (graph level)": lambda: [per_graph_g(d) for d in graphs],
                "per graph (node level)": lambda: [per_graph_n(d) for d in graphs],
                "transform_dataset (graph level, from a list)": lambda: per_graph_g.transform_dataset(graphs),
                "transform_dataset (graph level, into the storage)":
                    lambda: KongFeatures(level="graph", **opts).transform_dataset(ds),
                "transform_dataset (node level, from a list)": lambda: per_graph_n.transform_dataset(graphs),
                "transform_dataset (both, into the storage)":
                    lambda: KongFeatures(level="both", **opts).transform_dataset(ds),
            }
            for fn in fns.values():
                fn()
            times = {n: [] for n in fns}
            for _ in range(args.repeats):
                for n, fn in fns.items():
                    times[n].append(cpu(fn))
            med = {n: statistics.median(ts) for n, ts in times.items()}
            # pre_transform: raw processing with it minus without (fresh folders)
            plain = cpu(lambda: load(args.data_root, name, tmp, "p0"))
            pre = cpu(lambda: load(args.data_root, name, tmp, "p1", KongFeatures(level="graph", **opts)))
            med["pre_transform (graph level, processing minus plain)"] = max(pre - plain, 0.0)
            results.append({"dataset": name, "graphs": len(ds), "seconds": med})
            base = med["KongVectorizer"]
            print(f"\n{name}: {len(ds)} graphs (CPU s, median of {args.repeats}; ratio to KongVectorizer)")
            for n, t in med.items():
                print(f"  {n:52s} {t:8.3f} s  {t / base:6.1f}x  ({t / len(ds) * 1e6:.0f} us/graph)")
    load_avg = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    if args.json and results:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {"load_average": load_avg, "k": args.k, "results": results}
        args.json.write_text(json.dumps(payload, indent=1) + "\n")
    if args.out and results:
        names = list(results[0]["seconds"])
        lines = ["# KongFeatures: per graph, pre_transform and transform_dataset vs KongVectorizer", "",
                 f"CPU seconds, one PyTorch thread, k = {args.k}, h = 2, b = 1024, median of {args.repeats}",
                 f"interleaved runs (pre_transform: one run); load average at the end {load_avg}.",
                 f"Produced by `{produced_by()}`. Cells: seconds",
                 "(ratio to KongVectorizer on the same graphs).", "",
                 "| data set | graphs | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
        for r in results:
            s = r["seconds"]
            cells = [f"{s[n]:.3f} ({s[n] / s['KongVectorizer']:.1f}x)" for n in names]
            lines.append(f"| {r['dataset']} | {r['graphs']} | " + " | ".join(cells) + " |")
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines) + "\n")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
