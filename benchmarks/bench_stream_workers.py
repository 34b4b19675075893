"""Edges/s of ``kong-pyg stream --workers N`` against the number of worker processes.

Writes a StreamSpot file (the power-law stream of bench_stream.py: ``--edges``
edges over ``--graphs`` graphs), then runs ``python -m kong_pyg stream FILE
--workers N`` for every N of ``--workers`` (N = 1: one process, no
torch.distributed), ``--repeats`` times each, interleaved. Reports the
command's own timing (reading, all passes, merges; not the import of
PyTorch), edges/s (edges x passes / seconds), the MiB sent between the
processes, and checks that every run wrote the same features.

Run: python benchmarks/bench_stream_workers.py --edges 2000000 --workers 1 2 4 --hops 1 2
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from bench_cli import (  # noqa: E402
    DataError,
    int_at_least,
    items,
    kong,
    make_parser,
    out_file,
    process_count,
    warn_processes,
)
from bench_cli import run as run_script  # noqa: E402


def write_file(path, edges, graphs, nodes):
    from bench_stream import make_stream

    with open(path, "w") as f:
        for s, st, d, dt, et, g in make_stream(edges, graphs, nodes, 1 << 20):
            cols = [c.numpy() for c in (s, st, d, dt, et, g)]
            f.write("".join(f"{a}\t{b}\t{c}\t{x}\t{y}\t{z}\n" for a, b, c, x, y, z in zip(*cols)))


def run(path, workers, hops, dim, out):
    cmd = [sys.executable, "-m", "kong_pyg", "stream", path, "--workers", str(workers), "--hops", str(hops),
           "--dim", str(dim), "--out", out, "-q"]
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    if done.returncode:  # the command's own message (its arguments were checked here first)
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise DataError(f"{' '.join(cmd[1:4])} --workers {workers} failed (exit {done.returncode}): {last}")
    seconds = float(re.search(r"in ([0-9.]+) s \(", done.stderr).group(1))
    if seconds < 0.05:  # (printed to 0.01 s: no rate to speak of)
        raise DataError(f"--workers {workers} read the stream in {seconds:.2f} s, too short to time: give "
                        "more --edges")
    sent = re.search(r"([0-9.]+) MiB sent", done.stderr)
    cpu = re.search(r"reading ([0-9.]+) .*merging ([0-9.]+)", done.stderr)
    return dict(workers=workers, hops=hops, dim=dim, seconds=seconds, wall_with_import=wall,
                mib_sent=float(sent.group(1)) if sent else 0.0, load=os.getloadavg()[0],
                cpu_read_slowest=float(cpu.group(1)) if cpu else None,
                cpu_merge=float(cpu.group(2)) if cpu else None)


def main(argv=None):
    ap = make_parser(__doc__)
    ap.add_argument("--edges", type=int_at_least(1), default=2_000_000, metavar="N",
                    help="edges in the stream")
    ap.add_argument("--graphs", type=int_at_least(1), default=300, metavar="N", help="graphs in the stream")
    ap.add_argument("--nodes", type=int_at_least(1), default=5000, metavar="N", help="nodes per graph")
    ap.add_argument("--workers", nargs="+", action=items(process_count()), default=[1, 2, 4], metavar="N",
                    help="worker processes, one run each (at most 4 x the CPUs)")
    ap.add_argument("--hops", nargs="+", action=items(kong("hops")),
                    default=[1, 2], metavar="N", help="one run each")
    ap.add_argument("--dim", type=int_at_least(1), default=256, metavar="B", help="sketch size")
    ap.add_argument("--repeats", type=int_at_least(1), default=2, metavar="N", help="runs of each setting")
    ap.add_argument("--json", type=out_file, default=None, metavar="FILE.json",
                    help="write the raw numbers here")
    ap.add_argument("--md", type=out_file, default=None, metavar="FILE.md", help="write the report here")
    args = ap.parse_args(argv)
    warn_processes("--workers", max(args.workers))
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "stream.tsv")
        write_file(path, args.edges, args.graphs, args.nodes)
        for hops in args.hops:
            ref = None
            for rep in range(args.repeats):
                for w in args.workers:
                    out = os.path.join(tmp, f"f{w}")
                    r = run(path, w, hops, args.dim, out)
                    x = np.load(out + ".npy")
                    ref = x if ref is None else ref
                    r.update(edges=args.edges, edges_per_s=args.edges * max(hops, 1) / r["seconds"],
                             same_output=bool(np.array_equal(x, ref)), repeat=rep)
                    results.append(r)
                    rate = r["edges_per_s"] / 1e6
                    cpu = (f"CPU s: reading {r['cpu_read_slowest']:.2f} (slowest process), merging "
                           f"{r['cpu_merge']:.2f}; " if r["cpu_merge"] is not None else "")
                    print(f"h={hops} workers={w}: {r['seconds']:.2f} s ({rate:.2f} M edges/s), "
                          f"{r['mib_sent']:.1f} MiB sent, {cpu}same output: {r['same_output']}, "
                          f"load {r['load']:.1f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if args.md:
        lines = ["| h | workers | seconds (runs) | edges/s (best) | MiB sent | CPU s reading (slowest) "
                 "| CPU s merging | same output |", "|---|---|---|---|---|---|---|---|"]
        for hops in args.hops:
            for w in args.workers:
                rs = [r for r in results if r["hops"] == hops and r["workers"] == w]
                runs = ", ".join(f"{r['seconds']:.2f}" for r in rs)
                reads = ", ".join("-" if r["cpu_merge"] is None else f"{r['cpu_read_slowest']:.2f}"
                                  for r in rs)
                merges = ", ".join("-" if r["cpu_merge"] is None else f"{r['cpu_merge']:.2f}" for r in rs)
                lines.append(f"| {hops} | {w} | {runs} "
                             f"| {max(r['edges_per_s'] for r in rs) / 1e6:.2f} M | {rs[0]['mib_sent']:.1f} "
                             f"| {reads} | {merges} | {all(r['same_output'] for r in rs)} |")
        with open(args.md, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    run_script(main)
