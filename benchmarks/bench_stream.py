"""Throughput and memory of KongStream on a synthetic typed edge stream.

Generates (as tensors, chunk by chunk, never the whole stream in memory) a
stream of ``--edges`` edges over ``--graphs`` graphs whose node degrees follow
a power law, with typed nodes and edges, and feeds it to ``KongStream`` in
chunks. Every configuration runs in its own process, so its peak resident
memory (``ru_maxrss``) is its own. Reports edges/s (median of ``--repeats``
runs), peak memory, and the memory of the stream state itself.

With ``--compare-edges N`` it also times the non-streaming route on the
first N edges: ``stream_to_graphs`` + ``KongSketch.readout`` (one batch),
against ``KongStream`` on the same N edges, and checks they agree.

``--allocator default tuned`` runs every configuration in a process with
glibc's malloc defaults and in one with ``kong_pyg.tune_allocator``'s
settings (as the ``kong-pyg`` command line runs), interleaved (default:
tuned only).

``--hops 1 2`` times every pass (h >= 2 re-reads the stream; the per-pass
rate is edges / seconds of that pass). ``--roots A B`` times the kong_pyg of
other checkouts too, runs interleaved (A, B, A, B, ...), for A/B comparisons
on a busy machine; compare the CPU time per edge (``edges per CPU-second``),
which moves far less with the load than the wall time. ``--load N`` runs N
competing busy processes meanwhile (to see what threads do under load).

Run: python benchmarks/bench_stream.py --edges 10000000 --dims 256 1024 --json out.json --md out.md
"""
import inspect
import json
import os
import resource
import statistics
import subprocess
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def make_stream(num_edges, num_graphs, nodes_per_graph, chunk, seed=0, alpha=1.1,
                node_types=8, edge_types=24, wide_ids=False):
    """Yield chunks (src, src_type, dst, dst_type, edge_type, graph) as int64 tensors.

    Node i of a graph is drawn with probability proportional to (i + 1)^-alpha
    (power-law degrees); its type is a fixed function of (graph, i).
    """
    rank = np.arange(1, nodes_per_graph + 1, dtype=np.float64)
    cdf = np.cumsum(rank ** -alpha)
    cdf /= cdf[-1]
    for c, lo in enumerate(range(0, num_edges, chunk)):
        n = min(chunk, num_edges - lo)
        rng = np.random.default_rng([seed, c])
        g = rng.integers(0, num_graphs, n)
        s = np.searchsorted(cdf, rng.random(n))
        d = np.searchsorted(cdf, rng.random(n))
        st = (s * 7 + g) % node_types
        dt = (d * 7 + g) % node_types
        et = rng.integers(0, edge_types, n)
        if wide_ids:  # arbitrary 64-bit ids
            mult = np.uint64(0x9E3779B97F4A7C15)  # (wraps mod 2^64, as NumPy's unsigned integers do)
            s = ((s.astype(np.uint64) * mult + g.astype(np.uint64)) >> np.uint64(1)).astype(np.int64)
            d = ((d.astype(np.uint64) * mult + g.astype(np.uint64)) >> np.uint64(1)).astype(np.int64)
        gid = g * 1000003 + 17  # graph ids are not 0..G-1
        cols = (s, st, d, dt, et, gid)
        yield tuple(torch.from_numpy(np.ascontiguousarray(x, dtype=np.int64)) for x in cols)


def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _state_mb(ks):
    state = ks.state_dict()
    return (sum(v.numel() * v.element_size() for v in state["arrays"].values())
            + sum(state[k].numel() * 8 for k in ("graphs", "nodes", "symbols"))
            + state["rows"].numel() * state["rows"].element_size()) / 2**20


def run_one(cfg):
    """One configuration, in this process; returns a dict of measurements."""
    import kong_pyg
    import kong_pyg.stream.core
    from kong_pyg import KongStream

    torch.set_num_threads(cfg["threads"])
    kong_pyg.stream.passes._PIPELINE = cfg.get("pipeline", False)
    gen = dict(num_edges=cfg["edges"], num_graphs=cfg["graphs"], nodes_per_graph=cfg["nodes"],
               chunk=cfg["chunk"], wide_ids=cfg["wide_ids"])
    base = rss_mb()
    times, cpus, passes = [], [], []
    for rep in range(cfg["repeats"]):
        own = {"threads": cfg["threads"]} if "threads" in inspect.signature(KongStream).parameters else {}
        ks = KongStream(k=cfg["k"], hops=cfg["hops"], dim=cfg["dim"], **own)
        busy = cpu = 0.0
        per_pass = []
        for p in range(ks.num_passes):
            t, c = time.perf_counter(), time.process_time()
            if p:
                ks.end_pass()
            pass_cpu = time.process_time() - c
            busy += time.perf_counter() - t
            for chunk in make_stream(**gen):  # generation is not timed
                t, c = time.perf_counter(), time.process_time()
                ks.update(*chunk)
                busy += time.perf_counter() - t
                pass_cpu += time.process_time() - c
            per_pass.append(pass_cpu)
            cpu += pass_cpu
        t, c = time.perf_counter(), time.process_time()
        x = ks.sketches()
        busy += time.perf_counter() - t
        cpu += time.process_time() - c
        times.append(busy)
        cpus.append(cpu)
        passes.append(per_pass)
        state_mb = _state_mb(ks)
        if rep + 1 < cfg["repeats"]:
            del ks, x
    med = statistics.median(times)
    best = min(range(len(cpus)), key=cpus.__getitem__)
    e = cfg["edges"]
    return dict(cfg, kong_pyg=os.path.dirname(kong_pyg.__file__), seconds=times, cpu_seconds=cpus,
                median_s=med, edges_per_s=e * ks.num_passes / med,
                edges_per_cpu_s=e * ks.num_passes / statistics.median(cpus),
                pass_edges_per_cpu_s=[e / t for t in passes[best]], load=os.getloadavg()[0],
                nodes_seen=ks.num_nodes, graphs_seen=ks.num_graphs, rss_after_import_mb=base,
                peak_rss_mb=rss_mb(), state_mb=state_mb, out_norm=float(x.norm()))


def compare(cfg):
    """KongSketch.readout on stream_to_graphs output vs KongStream, same edges."""
    from torch_geometric.data import Batch

    from kong_pyg import KongSketch, KongStream
    from kong_pyg.datasets.streamspot import EdgeStream, stream_to_graphs

    torch.set_num_threads(cfg["threads"])
    cols = [torch.cat(c) for c in zip(*make_stream(cfg["edges"], cfg["graphs"], cfg["nodes"], cfg["chunk"]))]
    s, st, d, dt, et, g = cols
    t = time.perf_counter()
    ks = KongStream(k=cfg["k"], hops=1, dim=cfg["dim"])
    for lo in range(0, s.numel(), cfg["chunk"]):
        ks.update(*(c[lo : lo + cfg["chunk"]] for c in cols))
    xs = ks.sketches()
    t_stream = time.perf_counter() - t
    # EdgeStream needs dense node and graph indices: number (graph, node) pairs
    t = time.perf_counter()
    _, dense = torch.unique(torch.stack([torch.cat([g, g]), torch.cat([s, d])]), dim=1, return_inverse=True)
    gids, gdense = torch.unique(g, return_inverse=True)
    es = EdgeStream(dense[: s.numel()], st, dense[s.numel():], dt, et, gdense, gids.tolist())
    graphs = stream_to_graphs(es)
    batch = Batch.from_data_list(graphs)
    t_build = time.perf_counter() - t
    layer = KongSketch(k=cfg["k"], hops=1, dim=cfg["dim"], dtype=torch.float64)
    t = time.perf_counter()
    xr = layer.readout(batch.x, batch.edge_index, batch.batch, batch.edge_attr)
    t_readout = time.perf_counter() - t
    # stream_to_graphs lists graphs in order of their first edge: KongStream's row order
    return dict(cfg, stream_s=t_stream, build_graphs_s=t_build, readout_s=t_readout,
                equal=bool(torch.equal(xs, xr)), peak_rss_mb=rss_mb())


def describe(r):
    if r["mode"] == "stream":
        mode = f"threads={r['threads']}" + (" +pipeline" if r.get("pipeline") else "")
        mode += f" load+{r['extra_load']}" if r.get("extra_load") else ""
        mode += f" malloc={r.get('allocator', 'default')}"
        per_pass = ", ".join(f"{v / 1e6:.2f}" for v in r["pass_edges_per_cpu_s"])
        return (f"stream  b={r['dim']:5d} k={r['k']} h={r['hops']} {mode} [{r['kong_pyg']}]: "
                f"{r['edges']:,} edges x {len(r['pass_edges_per_cpu_s'])} passes in "
                f"{r['median_s']:.2f} s (median of {len(r['seconds'])}: "
                f"{', '.join(f'{s:.2f}' for s in r['seconds'])}) = {r['edges_per_s'] / 1e6:.2f} M edges/s "
                f"[CPU time: {r['edges_per_cpu_s'] / 1e6:.2f} M edges per CPU-second, per pass {per_pass}; "
                f"load {r['load']:.1f}]; "
                f"{r['nodes_seen']:,} nodes, {r['graphs_seen']} graphs; peak RSS {r['peak_rss_mb']:.0f} MiB "
                f"(after import {r['rss_after_import_mb']:.0f} MiB), state {r['state_mb']:.1f} MiB")
    both = (r["readout_s"] + r["build_graphs_s"]) / r["stream_s"]
    return (f"compare b={r['dim']:5d} on {r['edges']:,} edges, threads={r['threads']}: KongStream "
            f"{r['stream_s']:.2f} s; stream_to_graphs + Batch {r['build_graphs_s']:.2f} s, "
            f"KongSketch.readout {r['readout_s']:.2f} s (readout / stream = "
            f"{r['readout_s'] / r['stream_s']:.2f}x, with the graph building {both:.2f}x); "
            f"equal: {r['equal']}; peak RSS {r['peak_rss_mb']:.0f} MiB")


def markdown(results):
    """The stream runs as a markdown table."""
    lines = ["| kong_pyg | malloc | edges | b | h | threads | extra load | wall edges/s | edges per CPU-s "
             "| per pass (CPU) | nodes | peak RSS | load |", "|---" * 13 + "|"]
    for r in results:
        if r["mode"] != "stream":
            continue
        per_pass = ", ".join(f"{v / 1e6:.2f} M" for v in r["pass_edges_per_cpu_s"])
        lines.append(f"| {r['kong_pyg']} | {r.get('allocator', 'default')} | {r['edges']:,} | {r['dim']} "
                     f"| {r['hops']} | {r['threads']}{' +pipeline' if r.get('pipeline') else ''} "
                     f"| {r['extra_load']} "
                     f"| {r['edges_per_s'] / 1e6:.2f} M | {r['edges_per_cpu_s'] / 1e6:.2f} M | {per_pass} "
                     f"| {r['nodes_seen']:,} | {r['peak_rss_mb']:.0f} MiB | {r['load']:.1f} |")
    return "\n".join(lines) + "\n"


def child_env(allocator):
    """The environment of a timed process: glibc's malloc defaults, or tune_allocator's settings.

    The settings go in as glibc's own ``MALLOC_*_`` variables (the same values as
    :func:`kong_pyg.tune_allocator`), so checkouts older than that function are timed alike.
    """
    from kong_pyg.memory import MALLOC_SETTINGS

    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    if allocator == "tuned":
        names = {-3: "MALLOC_MMAP_THRESHOLD_", -1: "MALLOC_TRIM_THRESHOLD_"}
        env.update({names[param]: str(value) for param, value in MALLOC_SETTINGS.items()})
    return env


def busy_loop():  # a competing process
    while True:
        pass


def child(cfg):
    """A timed process: the kong_pyg of cfg["root"] only (first on PYTHONPATH; nothing else imported it)."""
    import kong_pyg

    here = os.path.realpath(os.path.dirname(kong_pyg.__file__))
    if os.path.dirname(here) != os.path.realpath(cfg["root"]):
        raise SystemExit(f"bench_stream.py: error: the timed process imported {here}, not the kong_pyg "
                         f"of --roots {cfg['root']}")
    out = compare(cfg) if cfg["mode"] == "compare" else run_one(cfg)
    print("RESULT " + json.dumps(out))


def main(argv=None):
    from bench_cli import folder, int_at_least, items, kong, make_parser, out_file, process_count

    ap = make_parser(__doc__)
    ap.add_argument("--edges", type=int_at_least(1), default=10_000_000, metavar="N",
                    help="edges in the stream")
    ap.add_argument("--graphs", type=int_at_least(1), default=300, metavar="N", help="graphs in the stream")
    ap.add_argument("--nodes", type=int_at_least(1), default=5000, metavar="N",
                    help="nodes per graph (power-law degrees)")
    ap.add_argument("--chunk", type=int_at_least(1), default=1 << 20, metavar="N", help="edges per update")
    ap.add_argument("--k", type=kong("k"), default=2, metavar="N", help="k-gram length")
    ap.add_argument("--hops", nargs="+", action=items(kong("hops")),
                    default=[1], metavar="N", help="one run each")
    ap.add_argument("--dims", nargs="+", action=items(int_at_least(1)), default=[256, 1024], metavar="B",
                    help="sketch sizes (a stream always sketches), one run each")
    ap.add_argument("--repeats", type=int_at_least(1), default=3, metavar="N", help="runs per configuration")
    ap.add_argument("--threads", nargs="+", action=items(int_at_least(1)), default=[1], metavar="N",
                    help="torch threads (one run each)")
    ap.add_argument("--roots", nargs="+", action=items(folder),
                    default=[os.path.dirname(HERE)], metavar="DIR",
                    help="kong_pyg checkouts to time, interleaved (default: this one)")
    ap.add_argument("--interleave", type=int_at_least(1), default=1, metavar="N",
                    help="rounds over --roots (A B A B ...)")
    ap.add_argument("--load", type=process_count(0), default=0, metavar="N",
                    help="competing busy processes during the stream runs (at most 4 x the CPUs)")
    ap.add_argument("--wide-ids", action="store_true", help="random 64-bit node ids")
    ap.add_argument("--pipeline", action="store_true",
                    help="also run with the id lookups of the next sub-chunk in a second thread")
    ap.add_argument("--memory-sweep", action="store_true",
                    help="also run 1/4 and 1/2 of the edges (the last b of --dims): memory follows nodes, "
                         "not edges")
    ap.add_argument("--compare-edges", type=int_at_least(0), default=0, metavar="N",
                    help="also time stream_to_graphs + KongSketch.readout on this many edges")
    ap.add_argument("--json", type=out_file, default=None, help="write the results here")
    ap.add_argument("--md", type=out_file, default=None, help="write a markdown table here")
    ap.add_argument("--allocator", nargs="+", action=items(choices=["default", "tuned"]), default=["tuned"],
                    help="glibc malloc settings of the timed processes (tuned: kong_pyg.tune_allocator's)")
    args = ap.parse_args(argv)
    base = dict(graphs=args.graphs, nodes=args.nodes, chunk=args.chunk, k=args.k, wide_ids=args.wide_ids,
                extra_load=args.load)
    jobs = []
    for _ in range(args.interleave):
        for hops in args.hops:
            for threads in args.threads:
                for dim in args.dims:
                    for root in args.roots:
                        for alloc in args.allocator:
                            jobs.append(dict(base, mode="stream", edges=args.edges, dim=dim,
                                             repeats=args.repeats, threads=threads, hops=hops,
                                             root=os.path.abspath(root), allocator=alloc))
    root = os.path.abspath(args.roots[0])
    if args.pipeline:
        for dim in args.dims:
            jobs.append(dict(base, mode="stream", edges=args.edges, dim=dim, repeats=args.repeats,
                             threads=1, pipeline=True, hops=1, root=root, allocator=args.allocator[0]))
    if args.memory_sweep:
        for frac in (4, 2):
            jobs.append(dict(base, mode="stream", edges=args.edges // frac, dim=args.dims[-1], repeats=1,
                             threads=args.threads[0], hops=1, root=root, allocator=args.allocator[0]))
    if args.compare_edges:
        for dim in args.dims:
            jobs.append(dict(base, mode="compare", edges=args.compare_edges, dim=dim,
                             threads=args.threads[0], root=root))
    competitors = [subprocess.Popen([sys.executable, "-c", f"import sys; sys.path.insert(0, {HERE!r}); "
                                     "import bench_stream; bench_stream.busy_loop()"])
                   for _ in range(args.load)]
    results = []
    try:
        for job in jobs:
            env = child_env(job.get("allocator", "tuned"))
            # the root's kong_pyg ahead of any other (an editable install, this script's own imports)
            env["PYTHONPATH"] = os.pathsep.join([job["root"]] + [p for p in [env.get("PYTHONPATH")] if p])
            proc = subprocess.run([sys.executable, __file__, "--child", json.dumps(job)], capture_output=True,
                                  text=True, env=env)
            line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
            if proc.returncode or not line:
                print(proc.stdout, proc.stderr, file=sys.stderr)
                last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
                raise SystemExit(f"{os.path.basename(__file__)}: error: a timed run failed (exit "
                                 f"{proc.returncode}): {last}; its configuration: {json.dumps(job)}")
            results.append(json.loads(line[0][7:]))
            print(describe(results[-1]), flush=True)
    finally:
        for p in competitors:
            p.kill()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if args.md:
        with open(args.md, "w") as f:
            f.write(markdown(results))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":  # (before bench_cli imports any kong_pyg)
        child(json.loads(sys.argv[2]))
    else:
        from bench_cli import run

        run(main)
