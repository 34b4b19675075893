r"""Provenance-like event streams whose classes differ only in the order of events.

A benchmark for "does order matter?" with a known answer. Each graph is a
small system run in the style of StreamSpot provenance graphs: typed nodes
(processes, files, sockets) and typed edges (system calls) arriving in time
order. Every run draws, from one class-free distribution,

* a process tree (each process after the first is forked by an earlier one,
  then execs its own binary file);
* a **session** for every process: a multiset of events (an action on an
  object of the run: :obj:`read`, :obj:`write`, :obj:`mmap` a file;
  :obj:`connect`, :obj:`send`, :obj:`recv` on a socket);
* time slots: the instants at which each process acts (processes
  interleave).

The class enters only through **which event fills which slot** of a
session. Every event gets the sort key

.. math::
    s \cdot r_c(a) + (1 - s) \cdot A \cdot u, \qquad u \sim U(0, 1),

where :math:`a` is its action, :math:`r_c(a) \in \{0, \ldots, A-1\}` the
action's rank in the **script** of class :math:`c`, :math:`A` the number of
actions and :math:`s \in [0, 1]` the **strength**; the session's events take
its slots in key order. So

* the multiset of (source, edge type, destination) of a graph, and with it
  every order-free statistic (label counts, degrees, WL colors, KONG with
  :math:`k = 1`), has the same distribution in both classes at every
  strength: only KONG with :math:`k \geq 2` can see the class;
* :math:`s = 0`: both classes draw every order uniformly at random from the
  same process: no feature of any kind separates them (the stream does not
  even depend on the scripts);
* :math:`s = 1`: each session follows its class's script (the default
  scripts: class 0 reads and maps files, writes, then connects, sends and
  receives, like a build job that uploads its results; class 1 connects and
  receives, writes and maps the payload, reads, then sends, like a dropper);
* in between, the script shows through noise of growing weight.

With :obj:`paired=True`, graphs :math:`2j` (class 0) and :math:`2j + 1`
(class 1) replay the *same* run (same processes, objects, session
multisets and slots) and differ only in the slot assignment: isomorphic as
unordered multigraphs, identical to every order-free statistic. That makes
"k = 1 cannot see the class" exact, but a classifier trained on one graph of
a pair and tested on the other is pushed *below* chance by order-free
features, so the default draws an independent run for every graph.

Node types: 0 process, 1 file, 2 socket (:obj:`NODE_TYPES`); edge types
:obj:`EDGE_TYPES` (0 fork, 1 exec, 2 read, 3 write, 4 mmap, 5 connect,
6 send, 7 recv). Graphs of the stream interleave in time (each run starts at
a random time); the timestamp of an event is its position in the whole
stream, unique, so it is a valid key for :obj:`order="consistent"` (no event
is shared between graphs, so here the consistent and the per-graph shuffle
are the same control).

The generation is vectorized over all events (no Python loop over events or
graphs); :class:`ProvenanceGraphs` then splits the stream into graphs with
:func:`~kong_pyg.datasets.stream_to_graphs` (one loop step per graph).
"""
import numbers
from typing import Callable, NamedTuple, Optional, Sequence, Tuple

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import InMemoryDataset

from ..config import check_bool, check_int
from ..devices import cpu_by_default
from ..memory import check_allocation
from .streamspot import EdgeStream, stream_to_graphs

#: Node type codes.
NODE_TYPES: Tuple[str, ...] = ("process", "file", "socket")
#: Edge type codes (0 and 1 are structural; 2.. are the session actions).
EDGE_TYPES: Tuple[str, ...] = ("fork", "exec", "read", "write", "mmap", "connect", "send", "recv")
#: The session actions, their object types and their class-free frequencies.
ACTIONS: Tuple[str, ...] = EDGE_TYPES[2:]
ACTION_OBJECT: Tuple[int, ...] = (1, 1, 1, 2, 2, 2)
ACTION_WEIGHTS: Tuple[float, ...] = (0.3, 0.15, 0.1, 0.1, 0.2, 0.15)
#: The default scripts: the order of actions of class 0 and of class 1 at strength 1.
SCRIPTS: Tuple[Tuple[str, ...], Tuple[str, ...]] = (
    ("read", "mmap", "write", "connect", "send", "recv"),
    ("connect", "recv", "write", "mmap", "read", "send"),
)


class ProvenanceStream(NamedTuple):
    """A generated stream.

    Attributes:
        stream (EdgeStream): The events in arrival order (StreamSpot columns).
        y (torch.Tensor): :obj:`[num_graphs]` class of every graph (graph
            :math:`2j` is class 0, :math:`2j + 1` class 1).
        time (torch.Tensor): :obj:`[E]` timestamp of every event (its
            arrival position, :obj:`0..E-1`).
    """

    stream: EdgeStream
    y: Tensor
    time: Tensor


def _check_range(name: str, value: Sequence[int], minimum: int) -> Tuple[int, int]:
    if (not isinstance(value, (tuple, list)) or len(value) != 2
            or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value)):
        raise TypeError(f"'{name}' must be a pair of integers (low, high) (got {value!r})")
    lo, hi = int(value[0]), int(value[1])
    if lo < minimum or hi < lo:
        raise ValueError(f"'{name}' must satisfy {minimum} <= low <= high (got {value!r})")
    return lo, hi


def _script_ranks(scripts) -> np.ndarray:
    ranks = np.empty((2, len(ACTIONS)), dtype=np.float64)
    if len(scripts) != 2:
        raise ValueError(f"'scripts' must hold two orders of the actions {list(ACTIONS)}")
    for c, script in enumerate(scripts):
        if sorted(script) != sorted(ACTIONS):
            raise ValueError(f"'scripts'[{c}] must be an order of the actions {list(ACTIONS)} "
                             f"(got {script!r})")
        ranks[c] = [list(script).index(a) for a in ACTIONS]
    return ranks


def _within(group: np.ndarray) -> np.ndarray:
    """The position of every entry within its run of equal (non-decreasing) :obj:`group` values."""
    starts = np.r_[0, np.flatnonzero(np.diff(group)) + 1]
    sizes = np.diff(np.r_[starts, group.size])
    return np.arange(group.size) - np.repeat(starts, sizes)


@cpu_by_default
def provenance_stream(
    num_graphs: int = 200,
    strength: float = 1.0,
    processes: Tuple[int, int] = (2, 5),
    events: Tuple[int, int] = (4, 12),
    files: Tuple[int, int] = (2, 6),
    sockets: Tuple[int, int] = (1, 3),
    scripts: Sequence[Sequence[str]] = SCRIPTS,
    paired: bool = False,
    seed: Optional[int] = 0,
) -> ProvenanceStream:
    r"""Generate a provenance-like stream of :obj:`num_graphs` runs (see the module).

    Args:
        num_graphs (int, optional): The number of graphs (runs); graph
            :math:`g` is of class :math:`g \bmod 2`. (default: :obj:`200`)
        strength (float, optional): :math:`s \in [0, 1]`, how strongly the
            order of events follows the class's script. (default: :obj:`1.0`)
        processes (tuple, optional): Range (inclusive) of processes per run.
        events (tuple, optional): Range of session events per process.
        files (tuple, optional): Range of files per run (shared by its
            processes).
        sockets (tuple, optional): Range of sockets per run.
        scripts (sequence, optional): The action order of class 0 and of
            class 1 (each a permutation of :obj:`ACTIONS`).
        paired (bool, optional): Graphs :math:`2j` and :math:`2j + 1` share
            their run and differ only in the order of events (needs an even
            :obj:`num_graphs`). Otherwise every graph is its own run.
            (default: :obj:`False`)
        seed (int, optional): The seed (:obj:`None`: fresh randomness). (default: :obj:`0`)

    Returns:
        ProvenanceStream: the stream, the graph classes and the timestamps.
    """
    if isinstance(num_graphs, bool) or not isinstance(num_graphs, (int, np.integer)) or num_graphs < 2:
        raise ValueError(f"'num_graphs' must be an integer >= 2 (got {num_graphs!r})")
    paired = check_bool("paired", paired)
    if paired and num_graphs % 2:
        raise ValueError(f"'num_graphs' must be even with paired=True (got {num_graphs})")
    real = isinstance(strength, numbers.Real) and not isinstance(strength, (bool, np.bool_))  # (NumPy's too)
    if not real or not 0 <= strength <= 1:
        raise ValueError(f"'strength' must be a number in [0, 1] (got {strength!r})")
    ranges = [_check_range(n, v, 1) for n, v in
              (("processes", processes), ("events", events), ("files", files), ("sockets", sockets))]
    ranks = _script_ranks(scripts)
    rng = np.random.default_rng(None if seed is None else check_int("seed", seed, 0))
    num_graphs = int(num_graphs)
    runs = num_graphs // 2 if paired else num_graphs
    # (at most this many rows: a session's events plus a fork and an exec per process, in some twenty
    # int64 and float64 arrays while the stream is built)
    most = runs * ranges[0][1] * (ranges[1][1] + 2)
    check_allocation(most * 256, f"the stream's events (at most {most:,}: {runs:,} runs x 'processes' up to "
                     f"{ranges[0][1]:,} x ('events' up to {ranges[1][1]:,} + 2))",
                     advice="fewer graphs, processes or events")
    rows, n_nodes = _runs(rng, runs, ranges, ranks, float(strength))

    # every graph replays its run with its class's slot assignment
    graph_run = np.arange(num_graphs) // 2 if paired else np.arange(num_graphs)
    graph_class = np.arange(num_graphs) % 2
    per_run = np.bincount(rows["run"], minlength=runs)
    run_start = np.r_[0, np.cumsum(per_run)[:-1]]
    size = per_run[graph_run]
    graph = np.repeat(np.arange(num_graphs), size)
    row = np.repeat(run_start[graph_run], size) + _within(graph)
    node_offset = np.r_[0, np.cumsum(n_nodes[graph_run])[:-1]][graph]
    src, dst = rows["src"][row] + node_offset, rows["dst"][row] + node_offset
    t_local = np.where(graph_class[graph] == 0, rows["t0"][row], rows["t1"][row])
    _, dense = np.unique(np.concatenate([src, dst]), return_inverse=True)  # ids of used nodes only
    src, dst = dense[: src.size], dense[src.size:]

    # the runs interleave in one stream: run g starts at a random time, sorted so that graphs are
    # numbered in order of their first event (stream_to_graphs' and KongStream's row order)
    begin = np.sort(rng.uniform(0, num_graphs / 4, num_graphs))
    arrival = np.argsort(begin[graph] + t_local, kind="stable")
    cols = (src, rows["src_type"][row], dst, rows["dst_type"][row], rows["edge_type"][row], graph)
    s_, st, d_, dt, et, gr = (torch.from_numpy(c[arrival].astype(np.int64)) for c in cols)
    stream = EdgeStream(s_, st, d_, dt, et, gr, list(range(num_graphs)))
    return ProvenanceStream(stream, torch.from_numpy(graph_class), torch.arange(arrival.size))


def _runs(rng, runs: int, ranges, ranks: np.ndarray, strength: float):
    """The events of :obj:`runs` runs, with the slot times of class 0 and of class 1.

    Returns a dict of row arrays (run, src, dst local node ids, types, and
    the times :obj:`t0`, :obj:`t1`), grouped by run, and the number of node
    ids of every run.
    """
    (p_lo, p_hi), (e_lo, e_hi), (f_lo, f_hi), (s_lo, s_hi) = ranges
    n_proc = rng.integers(p_lo, p_hi + 1, runs)
    n_file = rng.integers(f_lo, f_hi + 1, runs)
    n_sock = rng.integers(s_lo, s_hi + 1, runs)
    # processes: start times (sorted within the run, the first at 0), parents (earlier ones)
    proc_run = np.repeat(np.arange(runs), n_proc)
    local = _within(proc_run)
    start = rng.uniform(0, 0.5, proc_run.size)
    start = start[np.lexsort((start, proc_run))]
    start[local == 0] = 0.0
    parent = np.floor(rng.uniform(size=proc_run.size) * local).astype(np.int64)  # a local id < own

    # sessions: actions, objects (node ids: processes, files, sockets, binaries) and time slots
    ev_proc = np.repeat(np.arange(proc_run.size), rng.integers(e_lo, e_hi + 1, proc_run.size))
    ev_run = proc_run[ev_proc]
    action = rng.choice(len(ACTIONS), size=ev_proc.size, p=np.asarray(ACTION_WEIGHTS))
    obj_type = np.asarray(ACTION_OBJECT)[action]
    pool = np.where(obj_type == 1, n_file[ev_run], n_sock[ev_run])
    obj = np.floor(rng.uniform(size=ev_proc.size) * pool).astype(np.int64)
    obj = n_proc[ev_run] + np.where(obj_type == 1, 0, n_file[ev_run]) + obj
    slot = start[ev_proc] + 2e-9 + rng.uniform(size=ev_proc.size) * (1 - start[ev_proc] - 2e-9)
    slot_sorted = slot[np.lexsort((slot, ev_proc))]  # each session's slots, ascending
    times = []
    for c in (0, 1):  # per class: which event fills which slot
        key = strength * ranks[c][action] + (1 - strength) * rng.uniform(size=ev_proc.size) * len(ACTIONS)
        t = np.empty_like(slot)
        t[np.lexsort((key, ev_proc))] = slot_sorted
        times.append(t)

    child = local > 0
    binary = n_proc[proc_run] + n_file[proc_run] + n_sock[proc_run] + local
    parts = [  # (run, src, src type, dst, dst type, edge type, time of class 0, of class 1)
        (proc_run[child], parent[child], 0, local[child], 0, 0, start[child], start[child]),  # fork
        (proc_run, local, 0, binary, 1, 1, start + 1e-9, start + 1e-9),  # exec its binary
        (ev_run, local[ev_proc], 0, obj, obj_type, 2 + action, times[0], times[1]),  # the session
    ]
    names = ("run", "src", "src_type", "dst", "dst_type", "edge_type", "t0", "t1")
    cols = {n: np.concatenate([np.broadcast_to(np.asarray(p[i]), p[0].shape) for p in parts])
            for i, n in enumerate(names)}
    by_run = np.argsort(cols["run"], kind="stable")
    return {n: c[by_run] for n, c in cols.items()}, 2 * n_proc + n_file + n_sock


class ProvenanceGraphs(InMemoryDataset):
    r"""Ordered provenance graphs of :func:`provenance_stream`, as a PyG dataset.

    One graph per run (:func:`~kong_pyg.datasets.stream_to_graphs`: node
    label :obj:`x` = node type, :obj:`edge_attr` = edge type, edges in
    arrival order, each event in both directions when :obj:`undirected`),
    with :obj:`y` and :obj:`edge_order`, the event's timestamp (unique in
    the whole stream).

    .. warning::
        The neighbor order is the order of :obj:`edge_index`; never
        :obj:`coalesce`, sort or :obj:`ToUndirected` these graphs.

    Args:
        num_graphs, strength, processes, events, files, sockets, scripts,
            paired, seed: As in :func:`provenance_stream`.
        undirected (bool, optional): Both directions of every event (a
            process sees its objects, an object its processes).
            (default: :obj:`True`)
        transform (callable, optional): A transform applied on access.

    Attributes:
        stream (EdgeStream): The generated stream of *all* the graphs (a
            subset view, a shuffle or a :meth:`copy` keeps the whole stream:
            select its edges by :obj:`stream.graph` and the graphs'
            :obj:`graph_id`).

    Example::

        >>> ds = ProvenanceGraphs(200, strength=0.5, seed=1)
        >>> ds[0]
        Data(x=[...], edge_index=[2, ...], edge_attr=[...], graph_id=[1], y=[1], edge_order=[...])
    """

    @cpu_by_default
    def __init__(
        self,
        num_graphs: int = 200,
        strength: float = 1.0,
        processes: Tuple[int, int] = (2, 5),
        events: Tuple[int, int] = (4, 12),
        files: Tuple[int, int] = (2, 6),
        sockets: Tuple[int, int] = (1, 3),
        scripts: Sequence[Sequence[str]] = SCRIPTS,
        paired: bool = False,
        seed: Optional[int] = 0,
        undirected: bool = True,
        transform: Optional[Callable] = None,
    ):
        super().__init__(None, transform)
        gen = provenance_stream(num_graphs, strength, processes, events, files, sockets, scripts, paired,
                                seed)
        self.stream = gen.stream
        graphs = stream_to_graphs(gen.stream, gen.y, undirected=undirected)
        data, slices = self.collate(graphs)
        by_graph = torch.sort(gen.stream.graph, stable=True).indices  # the graphs' edges, in order
        data.edge_order = gen.time[by_graph].repeat_interleave(2 if undirected else 1)
        slices["edge_order"] = slices["edge_index"]
        self._data, self.slices = data, slices


__all__ = ["ProvenanceGraphs", "ProvenanceStream", "provenance_stream", "NODE_TYPES", "EDGE_TYPES",
           "ACTIONS", "SCRIPTS"]
