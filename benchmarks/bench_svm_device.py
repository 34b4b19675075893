"""The evaluation's SVM fits on the CPU and on CUDA: same problems, time per setting, same accuracies.

For each data set and paper-grid setting the features are computed once (on
the CPU), then every LinearSVC problem of a CV plan (R repeats of 10-fold CV,
nested with I inner folds, C in {0.1, 1, 10}) is solved by
``kong_pyg.evaluation.cv.score_jobs``: on the CPU with one thread (as each
``classify --jobs`` process does) and with ``device="cuda"``. Reports the fit
seconds of each (CUDA synchronized), their ratio, Newton steps, and whether the
test accuracies of every (job, C) are the same. Data sets with more graphs than
``--cpu-max-graphs`` are fit on the GPU only (on the CPU their wide designs go
to LIBLINEAR, a different solver). Writes a Markdown table (rewritten after
every row, so an interrupted run keeps its rows) and a JSON list.

    python benchmarks/bench_svm_device.py --data-root DIR --out svm_gpu.md --json svm_gpu.json
    python benchmarks/bench_svm_device.py --datasets MUTAG --devices cpu    # a dry run without a GPU
"""
import datetime
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
from bench_paths import TU_ROOT as DEFAULT_DATA  # noqa: E402

sys.path.insert(0, str(ROOT))

from bench_cli import folder, int_at_least, make_parser, names, out_file, run  # noqa: E402

from kong_pyg.evaluation.classify import graph_targets  # noqa: E402
from kong_pyg.evaluation.cv import score_jobs  # noqa: E402
from kong_pyg.evaluation.features import setting_features  # noqa: E402
from kong_pyg.evaluation.grid import expand_grid, paper_grid  # noqa: E402
from kong_pyg.evaluation.splits import make_splits, plan_jobs  # noqa: E402

C_GRID = [0.1, 1.0, 10.0]



def _work(info: dict) -> float:
    """Newton steps per fit (the exact solver), or LIBLINEAR's iterations on its route."""
    return info.get("liblinear_iterations_mean", info.get("steps_mean", float("nan")))

def load(root: Path, name: str):
    from kong_pyg.datasets import load_tu

    if name == "MUTAG" and not (root / name / "raw").is_dir():
        return load_tu("MUTAG")  # the bundled copy
    work = tempfile.mkdtemp(prefix="kong_bench_")  # PyG writes processed/ beside raw/
    try:
        shutil.copytree(root / name / "raw", os.path.join(work, name, "raw"))
        return load_tu(name, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def fit(X, y, jobs, device):
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    t0, c0 = time.perf_counter(), time.process_time()
    res = score_jobs(X, y, jobs, C_GRID, device=None if device == "cpu" else device)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return res, time.perf_counter() - t0, time.process_time() - c0


def main(argv=None):
    ap = make_parser(__doc__.splitlines()[0])
    ap.add_argument("--data-root", type=folder, default=DEFAULT_DATA, metavar="DIR",
                    help="TU data sets in PyG's raw layout (DIR/NAME/raw); MUTAG is bundled")
    ap.add_argument("--datasets", default="MUTAG,ENZYMES,PROTEINS", metavar="NAME[,...]",
                    help="TU data sets, comma-separated")
    settings = [s.name for s in expand_grid("kong", paper_grid("kong"))]
    ap.add_argument("--settings", type=names(settings),
                    default="poly-1,cosine-rlb-1,poly-2,cosine-2,poly-rlb-2,poly-4", metavar="NAME[,...]",
                    help="paper-grid setting names")
    ap.add_argument("--devices", default="cpu,cuda", metavar="DEV[,...]",
                    help="devices to time, comma-separated (CUDA, where absent, is skipped with a note)")
    ap.add_argument("--repeats", type=int_at_least(1), default=1, metavar="N", help="CV repeats R")
    ap.add_argument("--inner-folds", type=int_at_least(2), default=5, metavar="N", help="inner CV folds")
    ap.add_argument("--cpu-max-graphs", type=int_at_least(0), default=2000, metavar="N",
                    help="larger data sets are fit on the GPU only")
    ap.add_argument("--out", type=out_file, default=None, metavar="FILE.md", help="write the report here")
    ap.add_argument("--json", type=out_file, default=None, metavar="FILE.json",
                    help="write the raw numbers here")
    args = ap.parse_args(argv)
    datasets = [d for d in args.datasets.split(",") if d]
    for name in datasets:  # every data set there, before any work
        if name != "MUTAG" and not (args.data_root / name / "raw").is_dir():
            ap.error(f"--datasets {name}: no {args.data_root / name / 'raw'} (--data-root holds NAME/raw; "
                     "MUTAG is bundled)")
    torch.set_num_threads(1)
    devices = [d for d in args.devices.split(",") if d]
    if any(d.startswith("cuda") for d in devices) and not torch.cuda.is_available():
        devices = [d for d in devices if not d.startswith("cuda")]
        if devices:  # (else the error below, alone)
            print("CUDA is not available here: CPU only", flush=True)
    if not devices:
        ap.error(f"--devices: none of {args.devices!r} is available here")
    head = [
        "# SVM fits of the evaluation: CPU vs CUDA",
        "",
        f"Produced by `python benchmarks/bench_svm_device.py {' '.join(sys.argv[1:])}` on "
        f"{datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}: torch {torch.__version__}, "
        f"{platform.processor() or platform.machine()} with {os.cpu_count()} cores (one torch thread)"
        + (f", {torch.cuda.get_device_name(0)}" if any(d.startswith("cuda") for d in devices) else "") + ".",
        f"Plan: R = {args.repeats} x 10-fold CV, nested with {args.inner_folds} inner folds, "
        f"C in {C_GRID}; every problem solved exactly (batched Newton). Seconds: wall, fits only.",
        "",
        "| data set | graphs | setting | design | CPU fit s | GPU fit s | CPU / GPU | steps (CPU, GPU) "
        "| problems | accuracies equal |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    rows, records = [], []

    def write():
        text = "\n".join(head + rows) + "\n"
        if args.out:
            Path(args.out).write_text(text)
        if args.json:
            Path(args.json).write_text(json.dumps(records, indent=1))

    wanted = args.settings
    grid = {s.name: s for s in expand_grid("kong", paper_grid("kong"))}
    for name in datasets:
        graphs = load(args.data_root, name)
        y = graph_targets(graphs)
        jobs = plan_jobs(make_splits(y, args.repeats, 10, args.inner_folds, 0), y.size)
        for setting in wanted:
            t0 = time.perf_counter()
            X = setting_features(grid[setting], graphs)
            feat = time.perf_counter() - t0
            out = {}
            for dev in devices:
                if dev == "cpu" and y.size > args.cpu_max_graphs:
                    continue
                out[dev] = fit(X, y, jobs, dev)
            cpu, gpu = out.get("cpu"), next((v for k, v in out.items() if k != "cpu"), None)
            ref = cpu or gpu
            equal = "" if cpu is None or gpu is None else (
                "yes" if np.array_equal(cpu[0].acc, gpu[0].acc) else
                f"no: {int((cpu[0].acc != gpu[0].acc).sum())} of {cpu[0].acc.size} differ, "
                f"max {np.abs(cpu[0].acc - gpu[0].acc).max():.4f}")
            rec = dict(dataset=name, graphs=int(y.size), setting=setting, feature_s=feat,
                       design=f"{ref[0].info['features']} -> {ref[0].info.get('basis_columns', '?')}",
                       problems=int(ref[0].acc.size * len(np.unique(y)) if len(np.unique(y)) > 2
                                    else ref[0].acc.size),
                       **{f"{d}_fit_s": v[1] for d, v in out.items()},
                       **{f"{d}_cpu_s": v[2] for d, v in out.items()},
                       **{f"{d}_steps_mean": _work(v[0].info) for d, v in out.items()},
                       **{f"{d}_acc_mean": float(v[0].acc.mean()) for d, v in out.items()},
                       **{f"{d}_not_converged": v[0].stuck for d, v in out.items()},
                       accuracies_equal=equal)
            records.append(rec)
            steps = ", ".join(f"{_work(v[0].info):.1f}" for v in out.values())
            cells = [name, str(y.size), setting, rec["design"], f"{cpu[1]:.2f}" if cpu else "-",
                     f"{gpu[1]:.2f}" if gpu else "-", f"{cpu[1] / gpu[1]:.1f}x" if cpu and gpu else "",
                     steps, str(rec["problems"]), equal]
            rows.append("| " + " | ".join(cells) + " |")
            print(rows[-1], flush=True)
            write()
    write()


if __name__ == "__main__":
    run(main)
