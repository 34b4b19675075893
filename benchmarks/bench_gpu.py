"""KONG feature time on the CPU and on CUDA, for a TU data set (NCI1 by default).

Times KongVectorizer.fit_transform on the whole data set (host -> device
transfers of each batch and the copy of the result back included), exact and
sketched (dim 1024), for k = 1 and k = 2, on each device; checks that CUDA
gives the CPU's numbers (exact: bit for bit; sketched: max |difference|), and
writes a Markdown table. Offline: reads PyG's raw TU files from --data-root
(copied into a temporary folder first; the source may be read-only).

    python benchmarks/bench_gpu.py --data-root DIR --out gpu.md

DIR holds NCI1/raw/NCI1_A.txt etc. (by default ../shared/data/tu beside the
repository). Without CUDA only the CPU rows are timed. The table is rewritten
after every measurement, so an interrupted run still leaves its rows.
"""
import datetime
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
from bench_paths import TU_ROOT as DEFAULT_DATA  # noqa: E402

sys.path.insert(0, str(ROOT))

from bench_cli import DataError, folder, int_at_least, kong, kong_list, make_parser, out_file, run  # noqa: E402

from kong_pyg import KongVectorizer  # noqa: E402


def find_raw(root: Path, name: str) -> Path:
    for cand in (root / name / "raw", root / "raw", root):
        if (cand / f"{name}_A.txt").is_file():
            return cand
    raise DataError(f"no {name}_A.txt under {root} (looked in {root / name / 'raw'}, "
                    f"{root / 'raw'}, {root}); pass --data-root DIR with DIR/{name}/raw/{name}_A.txt")


def load(root: Path, name: str, max_graphs=None):
    from torch_geometric.datasets import TUDataset

    raw = find_raw(root, name)
    work = tempfile.mkdtemp(prefix="kong_bench_")
    try:
        shutil.copytree(raw, os.path.join(work, name, "raw"))
        ds = TUDataset(work, name)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if max_graphs is not None:
        ds = ds[:max_graphs]
    return ds


def sync(device: str):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def timed(fn, device: str, repeats: int):
    fn()  # warm-up (CUDA context, kernels, allocator)
    sync(device)
    times, out = [], None
    for _ in range(repeats):
        sync(device)
        t = time.perf_counter()
        out = fn()
        sync(device)
        times.append(time.perf_counter() - t)
    return statistics.median(times), times, out


def compare(ref, got):
    """'bitwise equal', or the largest difference."""
    if hasattr(ref, "tocsr"):
        if ref.shape != got.shape or not (np.array_equal(ref.indptr, got.indptr)
                                          and np.array_equal(ref.indices, got.indices)):
            return "DIFFERENT sparsity pattern"
        a, b = ref.data, got.data
    else:
        a, b = np.asarray(ref), np.asarray(got)
        if a.shape != b.shape:
            return f"DIFFERENT shapes {a.shape} vs {b.shape}"
    if np.array_equal(a, b):
        return "bitwise equal"
    diff = float(np.abs(a - b).max()) if a.size else 0.0
    scale = float(np.abs(a).max()) if a.size else 0.0
    return f"max abs diff {diff:.2e} (max value {scale:.2e})"


def header(args, ds, devices):
    lines = [
        f"# KONG feature time: CPU vs GPU ({args.dataset})",
        "",
        f"Produced by `python benchmarks/bench_gpu.py {' '.join(sys.argv[1:])}` on "
        f"{datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}.",
        "",
        f"- data: {args.dataset}, {len(ds)} graphs, {sum(g.num_nodes for g in ds)} nodes, "
        f"{sum(g.num_edges for g in ds)} directed edges"
        + (f" (first {args.max_graphs} graphs only)" if args.max_graphs else " (whole data set)"),
        f"- work: `KongVectorizer(k, hops={args.hops}, dim, kernel={args.kernel!r}, degree={args.degree}, "
        f"batch_size={args.batch_size}, device).fit_transform(dataset)`; times include host-device transfers",
        f"- timing: {args.repeats} timed runs after one warm-up, median (min-max) in seconds; "
        "CUDA synchronized before and after each run",
        f"- CPU: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"torch threads {torch.get_num_threads()}",
        f"- torch {torch.__version__}, torch_geometric {__import__('torch_geometric').__version__}, "
        f"python {platform.python_version()}",
    ]
    if any(d.startswith("cuda") for d in devices):
        lines.append(f"- GPU: {torch.cuda.get_device_name(0)}, CUDA {torch.version.cuda}")
    return lines


def write(path, lines, rows, notes):
    table = ["| k | features | device | median s | min-max s | vs CPU | same numbers as CPU |",
             "|---|---|---|---|---|---|---|"]
    table += rows
    text = "\n".join(lines + ["", *table, "", *notes]) + "\n"
    if path is not None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text)
    return text


def main(argv=None):
    parser = make_parser(__doc__.splitlines()[0])
    parser.add_argument("--data-root", type=folder, default=DEFAULT_DATA, metavar="DIR",
                        help="holds NAME/raw/NAME_A.txt, ...")
    parser.add_argument("--dataset", default="NCI1", metavar="NAME", help="the TU data set")
    parser.add_argument("--out", type=out_file, default=None,
                        help="Markdown file to write (default: print only)")
    parser.add_argument("--ks", type=kong_list("k"), default=[1, 2], metavar="N[,...]", help="k values")
    parser.add_argument("--dims", type=kong_list("dim"), default=[None, 1024], metavar="exact|B[,...]",
                        help="'exact' and/or sketch sizes (default: exact,1024)")
    parser.add_argument("--hops", type=kong("hops"), default=2, metavar="N", help="KONG hops")
    parser.add_argument("--kernel", default="poly", choices=["poly", "cosine"], help="KONG base kernel")
    parser.add_argument("--degree", type=kong("degree"), default=1, metavar="P",
                        help="kernel degree p (Tensor-Sketch when > 1)")
    parser.add_argument("--devices", default="cpu,cuda", metavar="DEV[,...]",
                        help="devices to time, comma-separated (CUDA, where absent, is skipped with a note)")
    parser.add_argument("--repeats", type=int_at_least(1), default=5, metavar="N", help="timed runs")
    parser.add_argument("--batch-size", type=int_at_least(1), default=1024, metavar="N",
                        help="graphs per batch")
    parser.add_argument("--max-graphs", type=int_at_least(1), default=None, metavar="N",
                        help="first N graphs only (quick runs) (default: all)")
    args = parser.parse_args(argv)

    devices = [d.strip() for d in args.devices.split(",") if d.strip()]
    notes = []
    if any(d.startswith("cuda") for d in devices) and not torch.cuda.is_available():
        notes.append("CUDA was requested but is not available here: CPU rows only.")
        devices = [d for d in devices if not d.startswith("cuda")]
    if not devices:
        parser.error(f"--devices: none of {args.devices!r} is available here")
    ks, dims = args.ks, args.dims
    ds = load(args.data_root, args.dataset, args.max_graphs)
    lines = header(args, ds, devices)
    rows = []
    print("\n".join(lines), flush=True)
    for k in ks:
        for dim in dims:
            ref, cpu_time = None, None
            for device in devices:
                what = "exact (CSR)" if dim is None else f"sketch b={dim}"
                vec = KongVectorizer(k=k, hops=args.hops, dim=dim, kernel=args.kernel, degree=args.degree,
                                     batch_size=args.batch_size, device=device)
                try:
                    med, times, out = timed(lambda: vec.fit_transform(ds), device, args.repeats)
                except Exception as err:  # report and go on: one failure must not lose the other rows
                    traceback.print_exc()
                    rows.append(f"| {k} | {what} | {device} | failed: {type(err).__name__}: "
                                f"{str(err).splitlines()[0][:80]} | | | |")
                    write(args.out, lines, rows, notes)
                    continue
                if device == "cpu":
                    ref, cpu_time = out, med
                    same, ratio = "(reference)", "1.00x"
                else:
                    same = compare(ref, out) if ref is not None else "no CPU reference"
                    ratio = f"{cpu_time / med:.2f}x faster" if cpu_time else ""
                rows.append(f"| {k} | {what} | {device} | {med:.3f} | {min(times):.3f}-{max(times):.3f} "
                            f"| {ratio} | {same} |")
                print(rows[-1], flush=True)
                write(args.out, lines, rows, notes)
    text = write(args.out, lines, rows, notes)
    if args.out is None:
        print(text)
    return rows


if __name__ == "__main__":
    run(main)
