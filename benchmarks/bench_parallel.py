"""Pickling, process parallelism, threads under load and peak memory of KONG feature maps.

* pickled size of a data set's graphs (views into its storage) and of
  ``kong_pyg.compact_graphs`` of them;
* ``GridSearchCV(n_jobs=1)`` vs ``n_jobs=2`` over a ``KongVectorizer`` +
  ``SVC`` pipeline on MUTAG, with both (wall time: workers are processes);
* ``KongVectorizer`` with 1 and 2 PyTorch threads, alone and next to a
  competing CPU-bound process (wall time, median of interleaved runs);
* peak memory of a sketched map against its output size (Linux: the peak
  RSS ``VmHWM`` of a fresh process, reset after the warm-up).

    python benchmarks/bench_parallel.py --data-root ../shared/data/tu \\
        --out docs/results/bench_parallel.md --json docs/results/bench_parallel.json
"""
import json
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
from bench_cli import check_folder, folder, int_at_least, make_parser, out_file, present, produced_by, run  # noqa: E402
from bench_paths import TU_ROOT as DEFAULT_ROOT  # noqa: E402

sys.path.insert(0, str(ROOT))

from kong_pyg import KongVectorizer, compact_graphs  # noqa: E402

PEAK = """
import sys, torch
sys.path.insert(0, {root!r})
torch.set_num_threads(1)
from torch_geometric.datasets import TUDataset
from kong_pyg import KongVectorizer

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024

ds = TUDataset({folder!r}, {name!r})
KongVectorizer(k=2, dim={dim}).fit_transform(ds[:20])  # imports and warm-up
with open("/proc/self/clear_refs", "w") as f:  # reset the peak (VmHWM) to the current RSS
    f.write("5")
base = status("VmRSS")
out = KongVectorizer(k=2, dim={dim}).fit_transform(ds)
print(base, status("VmHWM"), out.nbytes)
"""


def load(root: Path, name: str, tmp: str):
    from torch_geometric.datasets import TUDataset

    if not (Path(tmp) / name / "raw").is_dir():
        shutil.copytree(root / name / "raw", Path(tmp) / name / "raw")
    return TUDataset(tmp, name)


def wall(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def grid_search(X, y, n_jobs: int) -> float:
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import SVC

    pipe = make_pipeline(KongVectorizer(k=2, hops=2), SVC(kernel="linear"))
    gs = GridSearchCV(pipe, {"svc__C": [0.01, 0.1, 1, 10]}, cv=5, n_jobs=n_jobs)
    return wall(lambda: gs.fit(X, y))


def threads_under_load(ds, repeats: int):
    out = {}
    for load_on in (False, True):
        hog = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if load_on else None
        try:
            for cfg in (dict(k=2), dict(k=2, dim=1024)):
                vecs = {t: KongVectorizer(hops=2, threads=t, **cfg) for t in (1, 2)}
                for v in vecs.values():
                    v.fit_transform(ds)
                times = {t: [] for t in vecs}
                for _ in range(repeats):
                    for t, v in vecs.items():
                        times[t].append(wall(lambda v=v: v.fit_transform(ds)))
                what = "exact" if "dim" not in cfg else "b=1024"
                key = f"{what} k=2, {'with' if load_on else 'no'} competing process"
                out[key] = {f"{t} thread(s)": statistics.median(ts) for t, ts in times.items()}
        finally:
            if hog is not None:
                hog.kill()
    return out


def main(argv=None) -> int:
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--data-root", type=folder, default=DEFAULT_ROOT, metavar="DIR",
                        help="holds MUTAG/raw (and NCI1/raw for the thread and memory parts)")
    parser.add_argument("--repeats", type=int_at_least(1), default=5, metavar="N", help="timed rounds")
    parser.add_argument("--out", type=out_file, default=None, metavar="FILE.md", help="write the report here")
    parser.add_argument("--json", type=out_file, default=None, metavar="FILE.json",
                        help="write the raw numbers here")
    args = parser.parse_args(argv)
    check_folder(parser, "--data-root", args.data_root)
    present(args.data_root, ["MUTAG"], flag="the data set")  # before any work
    torch.set_num_threads(1)
    res = {"load_average_start": os.getloadavg()}
    with tempfile.TemporaryDirectory() as tmp:
        mutag = load(args.data_root, "MUTAG", tmp)
        views = [mutag[i] for i in range(len(mutag))]
        small = compact_graphs(mutag)
        y = mutag._data.y.numpy()
        res["pickle_bytes"] = {"list of dataset[i] (views)": len(pickle.dumps(views)),
                               "compact_graphs(dataset)": len(pickle.dumps(small)),
                               "the dataset after iterating it": len(pickle.dumps(mutag))}
        print(res["pickle_bytes"])
        res["grid_search_seconds"] = {f"{what}, n_jobs={nj}": grid_search(X, y, nj)
                                      for what, X in (("views", views), ("compact", small)) for nj in (1, 2)}
        print(res["grid_search_seconds"])
        nci1 = load(args.data_root, "NCI1", tmp) if (args.data_root / "NCI1").is_dir() else mutag
        if nci1 is mutag:
            print(f"NCI1 is not under {args.data_root}: threads and memory run on MUTAG", flush=True)
        res["threads_dataset"] = nci1.name
        res["threads_seconds"] = threads_under_load(nci1, args.repeats)
        print(res["threads_seconds"])
        code = PEAK.format(root=str(ROOT), folder=tmp, name=nci1.name, dim=4096)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        base, peak, size = map(int, done.stdout.split())
        res["peak_memory"] = {"output_bytes": size, "peak_above_start_bytes": peak - base,
                              "dataset": nci1.name, "dim": 4096}
        print(res["peak_memory"])
    res["load_average_end"] = os.getloadavg()
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(res, indent=1) + "\n")
    if args.out:
        write_markdown(args.out, res)
    return 0


def write_markdown(path: Path, res) -> None:
    mb = 2**20
    lines = ["# Pickling, parallelism, threads and memory", "",
             f"Produced by `{produced_by()}`; load average "
             + ", ".join(f"{v:.2f}" for v in res["load_average_start"]) + " at the start, "
             + ", ".join(f"{v:.2f}" for v in res["load_average_end"]) + " at the end. Wall times.", "",
             "## Pickled size of MUTAG's 188 graphs", "", "| what | pickled |", "|---|---|"]
    lines += [f"| {k} | {v / mb:.2f} MiB |" for k, v in res["pickle_bytes"].items()]
    lines += ["", "## GridSearchCV over KongVectorizer(k=2) + SVC, 4 C values x 5 folds, MUTAG", "",
              "| input, n_jobs | seconds |", "|---|---|"]
    lines += [f"| {k} | {v:.2f} |" for k, v in res["grid_search_seconds"].items()]
    on = res.get("threads_dataset", "NCI1")  # (MUTAG where NCI1 is absent)
    lines += ["", f"## KongVectorizer on {on} with 1 and 2 PyTorch threads", "",
              "| map | 1 thread | 2 threads |", "|---|---|---|"]
    lines += [f"| {k} | {v['1 thread(s)'] * 1000:.0f} ms | {v['2 thread(s)'] * 1000:.0f} ms |"
              for k, v in res["threads_seconds"].items()]
    pm = res["peak_memory"]
    lines += ["", f"## Peak memory of a sketched map ({pm['dataset']}, b = {pm['dim']}, k = 2)", "",
              f"Output {pm['output_bytes'] / mb:.0f} MiB; peak RSS above the warmed-up process "
              f"{pm['peak_above_start_bytes'] / mb:.0f} MiB.", ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))
    print(f"wrote {path}")


if __name__ == "__main__":
    sys.exit(run(main))
