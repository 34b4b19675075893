r"""Synthetic event streams whose classes differ only in the order of events."""
import random
from typing import Tuple

import torch
from torch import Tensor

from ...config import check_float, check_int
from ...devices import cpu_by_default
from ...hashing import MAX_LABEL
from ...memory import check_allocation
from .records import EdgeStream


def _range(name: str, value: Tuple[int, int]) -> Tuple[int, int]:
    """A range ``(low, high)`` of integers with ``1 <= low <= high`` (every graph gets an edge)."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise TypeError(f"'{name}' must be a range (low, high) of two integers (got {value!r})")
    low, high = check_int(f"{name}[0]", value[0], 1), check_int(f"{name}[1]", value[1], 1)
    if low > high:
        raise ValueError(f"'{name}' must be a range (low, high) with low <= high (got {value!r})")
    return low, high


@cpu_by_default
def synthetic_event_stream(
    num_graphs: int = 100,
    processes: Tuple[int, int] = (2, 4),
    events: Tuple[int, int] = (6, 12),
    num_edge_types: int = 4,
    num_object_types: int = 2,
    noise: float = 0.0,
    seed: int = 0,
) -> Tuple[EdgeStream, Tensor]:
    r"""A synthetic stream of two classes that differ only in event order.

    Every graph has a few process nodes (type 0). Each process performs a
    session of events drawn from the same distribution in both classes: an
    edge type :math:`e` on a fresh object whose type is
    :math:`1 + (e \bmod T_o)` (a "read" acts on a file, a "connect" on a
    socket). Class 0 performs its session in ascending edge-type order,
    class 1 in descending order; with :obj:`noise`, one pass from the first
    event to the last swaps each adjacent pair with that probability (an
    event swapped forward can be swapped again, so the order fades most near
    :obj:`noise = 0.5`; at 1 every session is rotated by one, its order kept:
    use :obj:`noise` in :math:`[0, 0.5]` to weaken the signal). Sessions of
    one graph, and graphs, interleave at random in the stream. So every k = 1 statistic has
    the same distribution in both classes, while k = 2 sees the order.

    Args:
        num_graphs (int, optional): Graphs (half of each class).
        processes (tuple, optional): Range of processes per graph (at least 1).
        events (tuple, optional): Range of events per process (at least 1).
        num_edge_types (int, optional): Edge types.
        num_object_types (int, optional): Object node types.
        noise (float, optional): Swap probability of adjacent events, in one
            pass (see above: :math:`[0, 0.5]` weakens the order's signal).
        seed (int, optional): The seed (:math:`\geq 0`).

    Returns:
        (EdgeStream, torch.Tensor): The stream and the graph labels. Graphs
        are numbered ``0, 1, ...`` in order of their first edge (as
        :func:`read_streamspot` numbers them), so the labels, the graphs of
        :func:`stream_to_graphs` and the rows of
        :class:`~kong_pyg.KongStream` are all in that order.
    """
    num_graphs = check_int("num_graphs", num_graphs, 0)
    processes, events = _range("processes", processes), _range("events", events)
    # (types are labels: KONG reads types below MAX_LABEL)
    num_edge_types = check_int("num_edge_types", num_edge_types, 1, MAX_LABEL)
    num_object_types = check_int("num_object_types", num_object_types, 1, MAX_LABEL)
    if check_float("noise", noise, 0.0) > 1:
        raise ValueError(f"'noise' is a probability: at most 1 (got {noise})")
    # (at most this many events, kept as Python objects of about 512 bytes each while the stream is built)
    most = num_graphs * processes[1] * events[1]
    check_allocation(most * 512, f"the stream's events (at most {most:,}: 'num_graphs' {num_graphs:,} x "
                     f"'processes' up to {processes[1]:,} x 'events' up to {events[1]:,})",
                     advice="fewer graphs, processes or events")
    # (non-negative: Python's random.Random(-s) is random.Random(s), so -7 repeated 7's stream)
    rng = random.Random(check_int("seed", seed, 0))
    labels = [g % 2 for g in range(num_graphs)]
    rng.shuffle(labels)
    sessions = []  # per graph, per process: list of (process id, edge type, object id)
    next_node = 0
    for g in range(num_graphs):
        for _ in range(rng.randint(*processes)):
            proc = next_node
            next_node += 1
            kinds = sorted(rng.randrange(num_edge_types) for _ in range(rng.randint(*events)))
            if labels[g] == 1:
                kinds.reverse()
            for i in range(len(kinds) - 1):
                if rng.random() < noise:
                    kinds[i], kinds[i + 1] = kinds[i + 1], kinds[i]
            session = []
            for e in kinds:
                session.append((g, proc, e, next_node))
                next_node += 1
            sessions.append(session)
    # interleave all sessions at random, each keeping its own order
    cursor = [0] * len(sessions)
    pending = [i for i, s in enumerate(sessions) for _ in s]
    rng.shuffle(pending)
    rows = []
    for i in pending:
        g, proc, e, obj = sessions[i][cursor[i]]
        cursor[i] += 1
        rows.append((proc, 0, obj, 1 + e % num_object_types, e, g))
    t = torch.tensor(rows, dtype=torch.long).view(-1, 6)
    # graphs numbered in order of their first edge (the order of stream_to_graphs and KongStream rows)
    rank = torch.full((num_graphs,), -1, dtype=torch.long)
    first = torch.unique_consecutive(t[:, 5])
    seen = list(dict.fromkeys(first.tolist()))
    rank[torch.tensor(seen, dtype=torch.long)] = torch.arange(len(seen))
    y = torch.empty(num_graphs, dtype=torch.long)
    y[rank] = torch.tensor(labels, dtype=torch.long)
    stream = EdgeStream(t[:, 0], t[:, 1], t[:, 2], t[:, 3], t[:, 4], rank[t[:, 5]], list(range(num_graphs)))
    return stream, y


__all__ = ["synthetic_event_stream"]
