"""Feature time of KONG vs GraKeL's Weisfeiler-Lehman *feature extraction*, and a compiled floor.

Features against features: GraKeL's ``WeisfeilerLehman(n_iter=h,
base_graph_kernel=VertexHistogram).fit(graphs)`` builds the WL feature
matrices of levels 0..h and stops there (no n x n kernel matrix), and KONG's
``KongVectorizer(...).fit_transform(graphs)`` builds its feature matrix.
Every method runs on the same graphs in the same process, round-robin
(interleaved) in every repeat, each timed call right after an untimed one of
the same method (warm caches for every method), timed in CPU time
(``time.process_time``) with one PyTorch thread; the tables give medians and ratios. KONG reads node
labels only, as WL does, from a PyG dataset and from a list of ``Data``
(``[dataset[i] for i in ...]``, the graphs a user holds). Loading and
converting the data to each tool's input is not timed.

The floor is a plain C loop (``benchmarks/kong_floor.c``) that builds the
exact k = 2, h = 2 BFS map from integer labels and edge arrays, compiled with
``gcc -O2`` into a temporary folder when gcc is available (no binary is
kept). Its input (integer labels instead of one-hot rows, edges as arrays)
is prepared before timing, and its output is unsorted COO: it is the cost of
the counting alone.

The process runs with :func:`kong_pyg.tune_allocator`'s malloc settings, as
the ``kong-pyg`` command line does (``--allocator default``: glibc's
defaults, under which the larger sets' times vary from process to process).

    python benchmarks/bench_core.py --data-root ../shared/data/tu \\
        --out docs/results/bench_core.md --json docs/results/bench_core.json

Data sets in PyG's TU raw layout (DIR/NAME/raw/...) are copied into a
temporary folder before PyG processes them; missing data sets are skipped.
"""
import ctypes
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
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

from kong_pyg import KongVectorizer, tune_allocator  # noqa: E402

DATASETS = ["MUTAG", "PTC_MR", "ENZYMES", "PROTEINS", "NCI1"]
GRAKEL = "GraKeL WL features"
FLOOR = "C floor (exact k=2 bfs)"


def load(root: Path, name: str, tmp: str):
    from torch_geometric.datasets import TUDataset

    src = root / name / "raw"
    if not src.is_dir():
        return None
    shutil.copytree(src, Path(tmp) / name / "raw")
    return TUDataset(tmp, name)


def int_labels(ds) -> torch.Tensor:
    x = ds._data.x
    return x.argmax(dim=1) if x.dim() > 1 else x.view(-1)


def grakel_input(ds):
    from grakel import Graph

    labels = int_labels(ds).tolist()
    xs, es = ds.slices["x"].tolist(), ds.slices["edge_index"].tolist()
    ei = ds._data.edge_index.t().tolist()
    graphs = []
    for g in range(len(ds)):
        lo = xs[g]
        edges = [tuple(e) for e in ei[es[g]:es[g + 1]]]
        graphs.append(Graph(edges, node_labels={i: labels[lo + i] for i in range(xs[g + 1] - lo)}))
    return graphs


def grakel_features(graphs, hops: int):
    from grakel.kernels import VertexHistogram, WeisfeilerLehman

    # fit() parses the input and builds every level's feature matrix; no kernel matrix
    return WeisfeilerLehman(n_iter=hops, base_graph_kernel=VertexHistogram, normalize=False).fit(graphs)


def build_floor(tmp: str):
    """The C floor as a ctypes function, or None (no gcc, or it failed)."""
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        return None
    lib = Path(tmp) / "kong_floor.so"
    src = Path(__file__).with_name("kong_floor.c")
    try:
        subprocess.run([gcc, "-O2", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True,
                       capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    fn = ctypes.CDLL(str(lib)).kong_floor
    fn.restype = ctypes.c_int64
    return fn


def floor_runner(fn, ds):
    """A no-argument callable running the C floor on the whole data set, and a check of its output."""
    label = int_labels(ds).numpy().astype(np.int64)
    ei = ds._data.edge_index.numpy()
    xs = ds.slices["x"].numpy().astype(np.int64)
    es = ds.slices["edge_index"].numpy()
    g_of_edge = np.repeat(np.arange(len(ds)), np.diff(es))
    src = np.ascontiguousarray(ei[0] + xs[g_of_edge], dtype=np.int64)  # global node ids
    dst = np.ascontiguousarray(ei[1] + xs[g_of_edge], dtype=np.int64)
    n, m, L, G = label.size, src.size, int(label.max()) + 1, len(ds)
    cap = 4 * m + 16
    row, col, val = np.empty(cap, np.int64), np.empty(cap, np.int32), np.empty(cap, np.float64)

    def ptr(a):
        return a.ctypes.data_as(ctypes.c_void_p)

    args = (ctypes.c_int64(n), ctypes.c_int64(m), ptr(src), ptr(dst), ptr(label), ctypes.c_int64(L),
            ctypes.c_int64(G), ptr(xs), ptr(row), ptr(col), ptr(val), ctypes.c_int64(cap))

    def run():
        nnz = fn(*args)
        if nnz < 0:
            raise RuntimeError("the C floor ran out of output space")
        return nnz

    nnz = run()
    return run, (nnz, float(val[:nnz].sum()))


def methods_for(ds, views, hops: int):
    out = {}
    for trav in ("bfs", "wl"):
        for k in (1, 2):
            for dim in (None, 1024):
                vec = KongVectorizer(k=k, hops=hops, traversal=trav, dim=dim, edge_labels=False, threads=1)
                name = f"{'exact' if dim is None else 'b=1024'} k={k} {trav}"
                out[f"{name} | dataset"] = (lambda v=vec: v.fit_transform(ds))
                out[f"{name} | list"] = (lambda v=vec: v.fit_transform(views))
    return out


def interleaved(fns, repeats: int):
    """CPU seconds of every function, round-robin, after one warm-up round: median per name.

    Every timed call follows an untimed call of the same function, GraKeL's
    included, so each runs with its own data in the caches: the call right
    after GraKeL's (9 ms of Python objects on MUTAG; the C floor runs in
    between) took 1.1-1.3 ms where
    the same call again took 0.7-0.8 ms, which charged one column for the
    order of the round.
    """
    for fn in fns.values():
        fn()
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            fn()
            t = time.process_time()
            fn()
            times[name].append(time.process_time() - t)
    return {name: statistics.median(ts) for name, ts in times.items()}


def load_average() -> str:
    try:
        return "load average " + ", ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "load average unknown"


def main(argv=None) -> int:
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--data-root", type=folder, default=DEFAULT_ROOT, metavar="DIR",
                        help="TU data sets in PyG's raw layout (DIR/NAME/raw)")
    parser.add_argument("--datasets", nargs="+", action=items(), default=DATASETS, metavar="NAME",
                        help="data sets under --data-root (missing ones are skipped)")
    parser.add_argument("--repeats", type=int_at_least(1), default=7, metavar="N", help="timed rounds")
    parser.add_argument("--hops", type=kong("hops"), default=2, metavar="N",
                        help="KONG depth h (WL's n_iter)")
    parser.add_argument("--out", type=out_file, default=None, help="write the Markdown table here")
    parser.add_argument("--json", type=out_file, default=None, help="write the raw medians here")
    parser.add_argument("--allocator", choices=["tuned", "default"], default="tuned",
                        help="glibc malloc settings: kong_pyg.tune_allocator's, or glibc's defaults")
    args = parser.parse_args(argv)
    check_folder(parser, "--data-root", args.data_root)
    present(args.data_root, args.datasets)  # at least one, before any work
    torch.set_num_threads(1)
    tuned = args.allocator == "tuned" and tune_allocator()
    try:
        import grakel  # noqa: F401

        have_grakel = True
    except ImportError:
        have_grakel = False
        print("grakel is not installed (pip install -e '.[bench]'): GraKeL column skipped")
    results = []
    load_before = load_average()
    with tempfile.TemporaryDirectory() as tmp:
        floor_fn = build_floor(tmp) if args.hops == 2 else None
        if floor_fn is None:
            print("no C compiler (or hops != 2): the compiled floor is skipped")
        for name in args.datasets:
            ds = load(args.data_root, name, tmp)
            if ds is None:
                print(f"{name}: no raw files under {args.data_root / name}, skipped")
                continue
            views = [ds[i] for i in range(len(ds))]
            fns = methods_for(ds, views, args.hops)
            check = None
            if have_grakel:
                gk = grakel_input(ds)
                fns[GRAKEL] = lambda g=gk: grakel_features(g, args.hops)
            if floor_fn is not None:
                fns[FLOOR], (nnz, total) = floor_runner(floor_fn, ds)
                ref = KongVectorizer(k=2, hops=2, edge_labels=False).fit_transform(ds)
                check = nnz == ref.nnz and total == float(ref.sum())
            times = interleaved(fns, args.repeats)
            m = int(ds._data.edge_index.size(1))
            results.append({"dataset": name, "graphs": len(ds), "edges": m, "seconds": times,
                            "floor_matches_kong": check})
            print(f"\n{name}: {len(ds)} graphs, {m} directed edges, CPU ms (median of {args.repeats}, "
                  "interleaved)")
            base, floor = times.get(GRAKEL), times.get(FLOOR)
            for label, t in times.items():
                extra = f"  GraKeL/this {base / t:6.1f}x" if base else ""
                extra += f"  this/floor {t / floor:6.1f}x" if floor and label != FLOOR else ""
                print(f"  {label:34s} {t * 1000:9.2f}{extra}")
    meta = {"load_before": load_before, "load_after": load_average(), "cpu": platform.processor() or "CPU",
            "cores": os.cpu_count(), "torch": torch.__version__, "repeats": args.repeats, "hops": args.hops,
            "threads": 1, "allocator": "tune_allocator" if tuned else (
                "glibc defaults" if args.allocator == "default" else "tune_allocator not applied (its docs)")}
    if args.json and results:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
    if args.out and results:
        write_markdown(args.out, results, meta, args)
    return 0


def write_markdown(path: Path, results, meta, args) -> None:
    lines = [
        "# Feature time: KONG vs GraKeL's WL feature extraction",
        "",
        f"CPU time (`time.process_time`), median of {meta['repeats']} interleaved runs after one warm-up "
        + "round,",
        "each timed call right after an untimed call of the same method (every method, GraKeL too, with",
        "its own data in the caches),",
        f"h = {meta['hops']}, one PyTorch thread, {meta['cpu']} ({meta['cores']} cores), "
        f"torch {meta['torch']}, malloc settings: {meta.get('allocator', 'glibc defaults')};",
        f"{meta['load_before']} before, {meta['load_after']} after. Produced by",
        f"`{produced_by()}`.",
        "GraKeL: `WeisfeilerLehman(n_iter=h, base_graph_kernel=VertexHistogram).fit(graphs)` (the WL",
        "features of levels 0..h, no kernel matrix). KONG: `KongVectorizer(...).fit_transform` with node",
        "labels only, from the PyG dataset (`dataset`) and from a list of its graphs (`list`).",
        "Cells: milliseconds (GraKeL time / KONG time).",
        "",
    ]
    names = sorted({k.split(" | ")[0] for r in results for k in r["seconds"] if " | " in k},
                   key=lambda s: (s.split()[0] != "exact", s.split()[-1], s))
    for source in ("dataset", "list"):
        lines += [f"## From a {'PyG dataset' if source == 'dataset' else 'list of Data'}", "",
                  "| data set | graphs | edges | GraKeL WL | " + " | ".join(names) + " |",
                  "|---|---|---|---|" + "---|" * len(names)]
        for r in results:
            s = r["seconds"]
            base = s.get(GRAKEL)
            cells = []
            for n in names:
                t = s[f"{n} | {source}"]
                cells.append(f"{t * 1000:.1f}" + (f" ({base / t:.1f}x)" if base else ""))
            lines.append(f"| {r['dataset']} | {r['graphs']} | {r['edges']} | "
                         + (f"{base * 1000:.1f}" if base else "-") + " | " + " | ".join(cells) + " |")
        lines.append("")
    floors = [r for r in results if FLOOR in r["seconds"]]
    if floors:
        lines += ["## Against a compiled loop (exact k = 2, h = 2, BFS)", "",
                  "| data set | C floor | KONG dataset | KONG list | ratio dataset | ratio list "
                  "| same counts |",
                  "|---|---|---|---|---|---|---|"]
        for r in floors:
            s = r["seconds"]
            f, d, li = s[FLOOR], s["exact k=2 bfs | dataset"], s["exact k=2 bfs | list"]
            lines.append(f"| {r['dataset']} | {f * 1000:.2f} ms | {d * 1000:.1f} ms | {li * 1000:.1f} ms | "
                         f"{d / f:.1f}x | {li / f:.1f}x | {r['floor_matches_kong']} |")
        lines.append("")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))
    print(f"\nwrote {path}")


if __name__ == "__main__":
    sys.exit(run(main))
