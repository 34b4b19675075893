"""KONG sketches of one stream read in time shards by several processes.

Each process reads one consecutive time shard of the edge stream into its own
``KongStream`` (h = 1), with ``torch.distributed`` (gloo backend, processes on
this machine; the same code runs across machines with another init method).
Rank 0 gathers the shard states and merges them in time order with
``merge_streams`` (sketches add up, the k-grams that cross each seam are hashed
in from the suffix and prefix codes); the merge is associative, so a tree of
merges is used. It then checks the result against one process reading the
whole stream.

Run (about 15 s with 2 processes, most of it starting them): python examples/stream_distributed.py
More shards: python examples/stream_distributed.py --world-size 4
"""
import socket
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from example_data import int_at_least, make_parser  # noqa: E402

from kong_pyg import KongStream, merge_streams  # noqa: E402
from kong_pyg.datasets import synthetic_event_stream  # noqa: E402


def columns(stream, lo, hi):
    return tuple(c[lo:hi] for c in (stream.src, stream.src_type, stream.dst, stream.dst_type,
                                    stream.edge_type, stream.graph))


def tree_merge(states):
    """Merge shard states in time order, pairwise: ((s0 s1) (s2 s3)) ..."""
    while len(states) > 1:
        pairs = [merge_streams(a, b) for a, b in zip(states[0::2], states[1::2])]
        states = pairs + ([states[-1]] if len(states) % 2 else [])
    return states[0]


def worker(rank, world, port, args):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    torch.set_num_threads(args.threads)
    # every process rebuilds the same synthetic stream here; in practice each reads its own shard file
    stream, _ = synthetic_event_stream(args.graphs, seed=args.seed)
    bounds = [stream.num_edges * r // world for r in range(world + 1)]
    t = time.perf_counter()
    ks = KongStream(k=args.k, hops=1, dim=args.dim).update(*columns(stream, bounds[rank], bounds[rank + 1]))
    states = [None] * world if rank == 0 else None
    dist.gather_object(ks.state_dict(), states, dst=0)
    if rank == 0:
        merged = tree_merge([KongStream.from_state_dict(s) for s in states])
        seconds = time.perf_counter() - t
        single = KongStream(k=args.k, hops=1, dim=args.dim).update(*columns(stream, 0, stream.num_edges))
        same = merged.graph_ids == single.graph_ids and torch.equal(merged.sketches(), single.sketches())
        print(f"{world} shards of {stream.num_edges} edges ({merged.num_graphs} graphs, {merged.num_nodes} "
              f"nodes) read and merged in {seconds:.2f} s")
        print(f"merged == single process: {same}")
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv=None):
    ap = make_parser(__doc__)
    ap.add_argument("--world-size", type=int_at_least(1), default=2, metavar="N", help="processes (shards)")
    ap.add_argument("--graphs", type=int_at_least(1), default=200, metavar="N", help="graphs in the stream")
    ap.add_argument("--k", type=int_at_least(1), default=2, metavar="N", help="k-gram length")
    ap.add_argument("--dim", type=int_at_least(1), default=256, metavar="B", help="sketch size")
    ap.add_argument("--seed", type=int_at_least(0), default=0, metavar="N", help="seed of the stream")
    args = ap.parse_args(argv)
    mp.spawn(worker, args=(args.world_size, free_port(), args), nprocs=args.world_size, join=True)


if __name__ == "__main__":
    main()
