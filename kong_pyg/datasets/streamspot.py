r"""Typed edge streams in the StreamSpot format.

One edge per line, tab-separated, in arrival order::

    source-id  source-type  dest-id  dest-type  edge-type  graph-id

Ids are arbitrary tokens (integers or strings); types are tokens too
(StreamSpot uses single letters). Edges of many graphs may interleave in any
way; the arrival order is the neighbor order.

This module reads and writes such streams, turns them into one ordered PyG
graph per graph id, and generates synthetic streams whose classes differ
*only in the order of events* (a process that reads a file before opening a
socket versus one that does it the other way round), the clearest case where
k = 2 sees what k = 1 cannot.
"""
import hashlib
import io
import os
import random
from typing import Dict, Iterable, List, NamedTuple, TextIO, Tuple, Union

import torch
from torch import Tensor
from torch_geometric.data import Data, InMemoryDataset


class EdgeStream(NamedTuple):
    """A typed edge stream, all tensors :obj:`[E]` in arrival order.

    Attributes:
        src (torch.Tensor): Source node, a dense index over (graph, node id).
        src_type (torch.Tensor): Source node type code.
        dst (torch.Tensor): Destination node, dense like :obj:`src`.
        dst_type (torch.Tensor): Destination node type code.
        edge_type (torch.Tensor): Edge type code.
        graph (torch.Tensor): Dense graph index.
        graph_ids (list): The original id of every dense graph index.
    """

    src: Tensor
    src_type: Tensor
    dst: Tensor
    dst_type: Tensor
    edge_type: Tensor
    graph: Tensor
    graph_ids: list

    @property
    def num_edges(self) -> int:
        """The number of edges."""
        return self.src.numel()


class MalformedLine(NamedTuple):
    """A line that could not be read: its 1-based number, text and why."""

    line_no: int
    text: str
    reason: str


def type_code(token: str) -> int:
    """A stable integer code of a type token.

    Non-negative integers stand for themselves; any other token maps to a
    56-bit BLAKE2 digest, the same in every file and every run.
    """
    if token.isdigit():
        value = int(token)
        if value < 2**56:
            return value
    return int.from_bytes(hashlib.blake2b(token.encode(), digest_size=7).digest(), "little") | (1 << 56)


def _lines(source) -> Iterable[str]:
    if isinstance(source, (str, os.PathLike)):
        with open(source, "r", encoding="utf-8", errors="replace") as f:
            yield from f
    else:
        yield from source


def read_streamspot(
    source: Union[str, os.PathLike, TextIO, Iterable[str]],
    strict: bool = False,
    keep: int = 10,
) -> Tuple[EdgeStream, List[MalformedLine], int]:
    r"""Read a StreamSpot edge stream.

    Blank lines are skipped. A line without exactly six tab-separated,
    non-empty fields is malformed: it is counted and skipped (its number,
    text and reason kept for the first :obj:`keep` of them), or with
    :obj:`strict` a :class:`ValueError` names it.

    Args:
        source (str or file): A path, an open text file or lines.
        strict (bool, optional): Fail on the first malformed line.
            (default: :obj:`False`)
        keep (int, optional): How many malformed lines to return.
            (default: :obj:`10`)

    Returns:
        (EdgeStream, list, int): The edges, the first malformed lines and
        the number of malformed lines.
    """
    nodes: Dict[Tuple[str, str], int] = {}
    graphs: Dict[str, int] = {}
    types: Dict[str, int] = {}
    cols: List[List[int]] = [[], [], [], [], [], []]
    bad: List[MalformedLine] = []
    n_bad = 0
    for line_no, line in enumerate(_lines(source), start=1):
        text = line.rstrip("\r\n")
        if not text.strip():
            continue
        fields = text.split("\t")
        reason = None
        if len(fields) != 6:
            reason = f"expected 6 tab-separated fields, got {len(fields)}"
        elif any(not f.strip() for f in fields):
            reason = "empty field"
        if reason is not None:
            if strict:
                raise ValueError(f"line {line_no}: {reason}: {text[:200]!r}")
            n_bad += 1
            if len(bad) < keep:
                bad.append(MalformedLine(line_no, text[:200], reason))
            continue
        s, st, d, dt, et, g = (f.strip() for f in fields)
        gi = graphs.setdefault(g, len(graphs))
        for col, value in ((0, (g, s)), (2, (g, d))):
            cols[col].append(nodes.setdefault(value, len(nodes)))
        for col, token in ((1, st), (3, dt), (4, et)):
            code = types.get(token)
            if code is None:
                code = types[token] = type_code(token)
            cols[col].append(code)
        cols[5].append(gi)
    t = [torch.tensor(c, dtype=torch.long) for c in cols]
    return EdgeStream(*t, graph_ids=list(graphs)), bad, n_bad


def write_streamspot(stream: EdgeStream, target: Union[str, os.PathLike, TextIO]) -> None:
    """Write :obj:`stream` in the StreamSpot format (node ids as integers)."""
    rows = torch.stack(
        [stream.src, stream.src_type, stream.dst, stream.dst_type, stream.edge_type, stream.graph], dim=1
    ).tolist()
    ids = stream.graph_ids
    text = "".join(f"{s}\t{st}\t{d}\t{dt}\t{et}\t{ids[g]}\n" for s, st, d, dt, et, g in rows)
    if isinstance(target, (str, os.PathLike)):
        with open(target, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        target.write(text)


def first_types(stream: EdgeStream) -> Tensor:
    """The type of every node at its first appearance in the stream."""
    e = stream.num_edges
    num_nodes = int(torch.maximum(stream.src.max(), stream.dst.max())) + 1 if e else 0
    arrival = torch.arange(e)
    # position 2e for the source of edge e, 2e + 1 for its destination
    first = torch.full((num_nodes,), 2 * e, dtype=torch.long)
    first.scatter_reduce_(0, torch.cat([stream.src, stream.dst]),
                          torch.cat([2 * arrival, 2 * arrival + 1]), reduce="amin")
    edge = first // 2
    return torch.where(first % 2 == 0, stream.src_type[edge], stream.dst_type[edge])


def _first_appearance_ids(ids: Tensor) -> Tuple[Tensor, Tensor]:
    """Number distinct :obj:`ids` 0, 1, ... in order of first appearance.

    Returns the distinct ids in that order and the new number of each entry.
    """
    uniq, inv = torch.unique(ids, return_inverse=True)
    first = torch.full((uniq.numel(),), ids.numel(), dtype=torch.long)
    first.scatter_reduce_(0, inv, torch.arange(ids.numel()), reduce="amin")
    order = torch.argsort(first)
    rank = torch.empty_like(order)
    rank[order] = torch.arange(order.numel())
    return uniq[order], rank[inv]


def stream_to_graphs(
    stream: EdgeStream, labels: Union[Tensor, Dict, None] = None, undirected: bool = True
) -> List[Data]:
    r"""One ordered PyG graph per graph id, edges in arrival order.

    Nodes are numbered in order of first appearance within their graph.
    Node :math:`v`'s label is its type (from its first edge); every edge
    carries its type as :obj:`edge_attr`. With :obj:`undirected`, each
    arrival :math:`(s, d)` becomes the two edges :math:`d \to s` and
    :math:`s \to d` next to each other, so with PyG's default flow both
    endpoints see the other in arrival order: a process sees the objects it
    acted on, an object the processes that touched it.

    Args:
        stream (EdgeStream): The edges.
        labels (torch.Tensor or dict, optional): Graph labels, stored as
            :obj:`y`: a tensor indexed like :obj:`stream.graph_ids`, or a dict
            from graph id to label.
        undirected (bool, optional): Add both directions. Otherwise only
            :math:`d \to s`, so that (default flow) a source sees its
            destinations in order. (default: :obj:`True`)
    """
    num_graphs = len(stream.graph_ids)
    order = torch.sort(stream.graph, stable=True).indices  # arrival order kept per graph
    per_graph = torch.bincount(stream.graph, minlength=num_graphs).tolist()
    node_type = first_types(stream)
    out = []
    for g, idx in enumerate(torch.split(order, per_graph)):
        src, dst = stream.src[idx], stream.dst[idx]
        glob, local = _first_appearance_ids(torch.stack([src, dst], dim=1).view(-1))
        local = local.view(-1, 2)
        if undirected:
            ei = torch.stack([torch.stack([local[:, 1], local[:, 0]], 1),
                              torch.stack([local[:, 0], local[:, 1]], 1)], dim=1).view(-1, 2).t()
            attr = stream.edge_type[idx].repeat_interleave(2)
        else:
            ei = torch.stack([local[:, 1], local[:, 0]])
            attr = stream.edge_type[idx]
        d = Data(x=node_type[glob], edge_index=ei.contiguous(), edge_attr=attr,
                 graph_id=stream.graph_ids[g])
        if isinstance(labels, dict):
            d.y = torch.tensor([labels[stream.graph_ids[g]]])
        elif labels is not None:
            d.y = labels[g].view(1)
        out.append(d)
    return out


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
    class 1 in descending order; with :obj:`noise`, each adjacent pair of a
    session is swapped with that probability. Sessions of one graph, and
    graphs, interleave at random in the stream. So every k = 1 statistic has
    the same distribution in both classes, while k = 2 sees the order.

    Args:
        num_graphs (int, optional): Graphs (half of each class).
        processes (tuple, optional): Range of processes per graph.
        events (tuple, optional): Range of events per process.
        num_edge_types (int, optional): Edge types.
        num_object_types (int, optional): Object node types.
        noise (float, optional): Swap probability of adjacent events.
        seed (int, optional): The seed.

    Returns:
        (EdgeStream, torch.Tensor): The stream and the graph labels.
    """
    rng = random.Random(seed)
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
    stream = EdgeStream(t[:, 0], t[:, 1], t[:, 2], t[:, 3], t[:, 4], t[:, 5], list(range(num_graphs)))
    return stream, torch.tensor(labels, dtype=torch.long)


def format_malformed(bad: List[MalformedLine], total: int) -> str:
    """A short human-readable report of malformed lines."""
    if total == 0:
        return "no malformed lines"
    out = io.StringIO()
    out.write(f"{total} malformed line{'s' if total != 1 else ''} skipped")
    for b in bad:
        out.write(f"\n  line {b.line_no}: {b.reason}: {b.text!r}")
    if total > len(bad):
        out.write(f"\n  ... and {total - len(bad)} more")
    return out.getvalue()


def read_graph_labels(source: Union[str, os.PathLike, TextIO, Iterable[str]]) -> Dict[str, int]:
    """Read a labels file: one ``graph-id label`` pair per line (whitespace-separated).

    Blank lines and lines starting with ``#`` are skipped; labels are integers.
    """
    out: Dict[str, int] = {}
    for line_no, line in enumerate(_lines(source), start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        fields = text.split()
        if len(fields) != 2 or not fields[1].lstrip("-").isdigit():
            raise ValueError(f"labels line {line_no}: expected 'graph-id label' (integer label), "
                             f"got {text!r}")
        out[fields[0]] = int(fields[1])
    return out


class StreamSpotGraphs(InMemoryDataset):
    r"""The ordered graphs of a StreamSpot edge stream, as a PyG dataset.

    Reads the stream with :func:`read_streamspot` and builds one graph per
    graph id with :func:`stream_to_graphs` (arrival order = neighbor order,
    node label = node type, :obj:`edge_attr` = edge type, :obj:`graph_id`
    kept). Graphs are in order of first appearance of their id.

    .. warning::
        The neighbor order is the order of :obj:`edge_index`; never
        :obj:`coalesce`, sort or :obj:`ToUndirected` these graphs.

    Args:
        source (str, file, lines or EdgeStream): A StreamSpot file (path,
            open text file or lines) or an already read :class:`EdgeStream`.
        labels (dict, str or torch.Tensor, optional): Graph labels stored as
            :obj:`y`: a dict from graph id to integer label (keys compared as
            strings), a path to a labels file (see :func:`read_graph_labels`),
            or a tensor indexed like the graphs. Every graph needs a label.
            (default: :obj:`None`)
        undirected (bool, optional): As in :func:`stream_to_graphs`.
            (default: :obj:`True`)
        strict (bool, optional): Fail on the first malformed line (otherwise
            malformed lines are skipped and counted in :obj:`num_malformed`,
            the first ones kept in :obj:`malformed`). (default: :obj:`False`)
        transform (callable, optional): A transform applied on access.
    """

    def __init__(self, source, labels=None, undirected: bool = True, strict: bool = False, transform=None):
        super().__init__(None, transform)
        if isinstance(source, EdgeStream):
            stream, self.malformed, self.num_malformed = source, [], 0
        else:
            stream, self.malformed, self.num_malformed = read_streamspot(source, strict=strict)
        if stream.num_edges == 0:
            raise ValueError("the stream has no edges")
        if isinstance(labels, (str, os.PathLike)):
            labels = read_graph_labels(labels)
        if isinstance(labels, dict):
            labels = {str(k): int(v) for k, v in labels.items()}
            missing = [g for g in stream.graph_ids if str(g) not in labels]
            if missing:
                raise ValueError(f"'labels' has no label for graph id(s) {missing[:10]}")
            labels = {g: labels[str(g)] for g in stream.graph_ids}
        elif labels is not None:
            labels = torch.as_tensor(labels).long().view(-1)
            if labels.numel() != len(stream.graph_ids):
                raise ValueError(f"'labels' has {labels.numel()} entries for {len(stream.graph_ids)} graphs")
        self.graph_ids = list(stream.graph_ids)
        self._data, self.slices = self.collate(stream_to_graphs(stream, labels, undirected))
