"""KONG sketches of one stream read by several processes, pass by pass (torch.distributed, gloo).

Writes a synthetic StreamSpot file, then N processes on this machine each read
one time shard of it (a byte range: ``StreamSpotReader(byte_range=...)``) with
``kong_pyg.stream.distributed.read_shards``: every pass is read in shards, the
shard states are merged in time order by a tree of messages, and for h >= 2
the merged state of a pass (the base of the next) is broadcast. Process 0
checks the result against one process reading the whole file: they are equal.

The same from the command line: ``kong-pyg stream FILE --workers N``; on
several machines: ``torchrun --nnodes M --nproc-per-node N ... -m kong_pyg
stream FILE --distributed`` (see docs/results/stream.md).

Run (about 4 s with 2 processes, most of it starting them): python examples/stream_distributed.py
More shards: python examples/stream_distributed.py --world-size 4 --hops 2
"""
import os
import socket
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from example_data import int_at_least, make_parser, process_count, run, warn_processes  # noqa: E402

from kong_pyg import KongStream  # noqa: E402
from kong_pyg.datasets import StreamSpotReader, synthetic_event_stream, write_streamspot  # noqa: E402
from kong_pyg.stream.distributed import read_shards  # noqa: E402


def options(args):
    return dict(k=args.k, hops=args.hops, dim=args.dim)


def worker(rank, world, port, path, args):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    try:
        t = time.perf_counter()
        merged, stats = read_shards(KongStream(**options(args)), path)
        seconds = time.perf_counter() - t
        if rank == 0:
            single = KongStream(**options(args)).fit(lambda: StreamSpotReader(path))
            same = merged.graph_ids == single.graph_ids and torch.equal(merged.sketches(), single.sketches())
            sent = (sum(stats["bytes_sent"]) + sum(stats["bytes_broadcast"])) / 2**20
            print(f"{world} processes read {stats['num_edges']:,} edges in {merged.num_passes} pass(es), "
                  f"{merged.num_graphs} graphs, {merged.num_nodes:,} nodes, in {seconds:.2f} s; "
                  f"{sent:.1f} MiB between processes")
            print(f"merged == single process: {same}")
    finally:
        dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv=None):
    ap = make_parser(__doc__)
    ap.add_argument("--world-size", type=process_count(), default=2, metavar="N",
                    help="processes (shards): at most 4 x this machine's CPUs; more than its CPUs is slower")
    ap.add_argument("--graphs", type=int_at_least(1), default=200, metavar="N", help="graphs in the stream")
    ap.add_argument("--k", type=int_at_least(1), default=2, metavar="N", help="k-gram length")
    ap.add_argument("--hops", type=int_at_least(1), default=2, metavar="N", help="hops (passes)")
    ap.add_argument("--dim", type=int_at_least(1), default=256, metavar="B", help="sketch size")
    ap.add_argument("--seed", type=int_at_least(0), default=0, metavar="N", help="seed of the stream")
    args = ap.parse_args(argv)
    KongStream(**options(args))  # (a bad value is one line here; in the workers it was two tracebacks)
    warn_processes("--world-size", args.world_size)
    torch.set_num_threads(args.threads)
    stream, _ = synthetic_event_stream(args.graphs, seed=args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "stream.tsv")
        write_streamspot(stream, path)
        method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"  # fork: no second import
        mp.start_processes(worker, args=(args.world_size, free_port(), path, args), nprocs=args.world_size,
                           join=True, start_method=method)


if __name__ == "__main__":
    run(main)
