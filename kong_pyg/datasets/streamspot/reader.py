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
from typing import Dict, Iterable, Iterator, List, NamedTuple, Optional, TextIO, Tuple, Union

import numpy as np
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
    if token.isascii() and token.isdigit():
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
# ---------------------------------------------------------------------------
# Chunked reading for streams
# ---------------------------------------------------------------------------

_MAX_DIGITS = 18  # canonical integer ids up to 18 digits stay integers (< 2^60)


class EdgeChunk(NamedTuple):
    """One chunk of a StreamSpot stream, columns as ``int64`` NumPy arrays.

    Node and graph ids are the integers their tokens spell (canonical decimal
    tokens of at most 18 digits) or, for any other token, :math:`-(1 + j)`
    with :math:`j` the token's index in :attr:`StreamSpotReader.tokens`.
    Types are :func:`type_code` values.
    """

    src: np.ndarray
    src_type: np.ndarray
    dst: np.ndarray
    dst_type: np.ndarray
    edge_type: np.ndarray
    graph: np.ndarray


def _binary_blocks(source, block_size: int) -> Iterator[bytes]:
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as f:
            yield from _binary_blocks(f, block_size)
        return
    if hasattr(source, "read"):
        while True:
            data = source.read(block_size)
            if not data:
                return
            yield data.encode("utf-8") if isinstance(data, str) else data
        return
    for line in source:  # an iterable of lines
        yield line.encode("utf-8") if isinstance(line, str) else line


class StreamSpotReader:
    r"""Read a StreamSpot edge stream in chunks, fast, in bounded memory.

    Same rules as :func:`read_streamspot` (blank lines skipped; a line
    without exactly six tab-separated non-empty fields is malformed: counted,
    skipped, the first :obj:`keep` kept with their line numbers, or with
    :obj:`strict` a :class:`ValueError` naming the line; fields are stripped),
    but the file is read in blocks and the lines made only of printable ASCII
    and tabs (all of a normal file) are split and converted with vectorized
    NumPy code; any other line goes through the line-by-line rules.

    Iterating yields :class:`EdgeChunk` objects of at most :obj:`chunk_size`
    edges; every iteration reads the source from its start again (when it is
    a path), numbering string tokens the same way each time. Lines end at
    ``\n`` (a ``\r`` before it is dropped); unlike a file opened in text
    mode, a lone ``\r`` does not end a line.

    Args:
        source (str or file): A path, a binary or text file object, or an
            iterable of lines.
        chunk_size (int, optional): Edges per chunk. (default: :obj:`2**20`)
        strict (bool, optional): Fail on the first malformed line.
        keep (int, optional): How many malformed lines to keep.
    """

    def __init__(self, source, chunk_size: int = 1 << 20, strict: bool = False, keep: int = 10):
        self.source = source
        self.chunk_size = int(chunk_size)
        self.strict = bool(strict)
        self.keep = int(keep)
        self._reset()

    def _reset(self):
        from ..idmap import IdMap

        self.malformed: List[MalformedLine] = []
        self.num_malformed = 0
        self.num_lines = 0
        self.num_edges = 0
        #: String tokens of ids that are not canonical integers, by index.
        self.tokens: List[str] = []
        self._long_tokens: Dict[str, int] = {}
        self._short = IdMap()  # packed short token -> index in _short_code / _short_tok
        self._short_tok = np.zeros(0, dtype=np.int64)  # token index (ids) per packed key
        self._short_type = np.zeros(0, dtype=np.int64)  # type code per packed key
        self._type_cache: Dict[str, int] = {}

    def decode(self, key: int) -> Union[int, str]:
        """The id a key of an :class:`EdgeChunk` stands for."""
        return key if key >= 0 else self.tokens[-key - 1]

    def __iter__(self) -> Iterator[EdgeChunk]:
        self._reset()
        parts, size = [], 0
        for cols in self._blocks():
            parts.append(cols)
            size += cols[0].size
            while size >= self.chunk_size:
                cat = [np.concatenate(c) for c in zip(*parts)]
                yield EdgeChunk(*(c[: self.chunk_size] for c in cat))
                parts = [tuple(c[self.chunk_size :] for c in cat)]
                size -= self.chunk_size
        if size:
            yield EdgeChunk(*(np.concatenate(c) for c in zip(*parts)))

    def _blocks(self) -> Iterator[tuple]:
        carry = b""
        block = max(1 << 16, min(1 << 22, 64 * self.chunk_size))
        for data in _binary_blocks(self.source, block):
            data = carry + data
            cut = data.rfind(b"\n") + 1
            carry = data[cut:]
            if cut:
                yield self._parse(data[:cut])
        if carry:
            yield self._parse(carry + b"\n")

    # -- one block of whole lines --------------------------------------------

    def _bad(self, line_no: int, text: str, reason: str):
        if self.strict:
            raise ValueError(f"line {line_no}: {reason}: {text[:200]!r}")
        self.num_malformed += 1
        if len(self.malformed) < self.keep:
            self.malformed.append(MalformedLine(line_no, text[:200], reason))

    def _parse(self, buf: bytes) -> tuple:
        a = np.frombuffer(buf, dtype=np.uint8)
        # one pass finds every byte outside printable ASCII: tabs, newlines, others
        special = np.flatnonzero((a - np.uint8(0x21)) > np.uint8(0x5D))
        kind = a[special]
        nl = special[kind == 10]
        n_lines = nl.size
        line0 = self.num_lines
        self.num_lines += n_lines
        starts = np.empty(n_lines, dtype=np.int64)
        starts[:1] = 0
        starts[1:] = nl[:-1] + 1
        ends = nl.astype(np.int64)
        cr = (ends > starts) & (a[np.maximum(ends - 1, 0)] == 13)
        ends = ends - cr
        odd = special[(kind != 9) & (kind != 10)]
        if cr.any():
            odd = np.setdiff1d(odd, ends[cr], assume_unique=True)
        n_odd = np.bincount(np.searchsorted(nl, odd), minlength=n_lines)
        tabs = special[kind == 9]
        n_tab = np.bincount(np.searchsorted(nl, tabs), minlength=n_lines)
        fast = (n_tab == 5) & (n_odd == 0)
        tab_ptr = np.cumsum(n_tab) - n_tab
        fl = np.flatnonzero(fast)
        t = tabs[tab_ptr[fl, None] + np.arange(5)]
        f_start = np.concatenate([starts[fl, None], t + 1], axis=1)
        f_end = np.concatenate([t, ends[fl, None]], axis=1)
        empty = (f_end == f_start).any(axis=1)
        fast[fl[empty]] = False
        fl, f_start, f_end = fl[~empty], f_start[~empty], f_end[~empty]
        blank = ends == starts
        slow = np.flatnonzero(~fast & ~blank)
        good = np.zeros(n_lines, dtype=bool)
        good[fl] = True
        out = np.zeros((n_lines, 6), dtype=np.int64)
        if fl.size:
            out[fl] = self._convert(a, f_start, f_end)
        for i in slow.tolist():  # lines with other bytes, wrong field counts, empty fields
            text = buf[starts[i] : nl[i]].decode("utf-8", errors="replace").rstrip("\r\n")
            if not text.strip():
                continue
            fields = text.split("\t")
            if len(fields) != 6:
                self._bad(line0 + i + 1, text, f"expected 6 tab-separated fields, got {len(fields)}")
                continue
            if any(not f.strip() for f in fields):
                self._bad(line0 + i + 1, text, "empty field")
                continue
            good[i] = True
            out[i] = self._convert_tokens([f.strip() for f in fields])
        rows = out[good] if slow.size or fl.size != n_lines else out
        self.num_edges += rows.shape[0]
        return tuple(rows[:, c].copy() for c in range(6))

    def _id_token(self, tok: str) -> int:
        if tok.isascii() and tok.isdigit() and (tok == "0" or tok[0] != "0") and len(tok) <= _MAX_DIGITS:
            return int(tok)
        j = self._long_tokens.get(tok)
        if j is None:
            packed = _pack(tok)
            if packed is not None:  # keep one numbering with the vectorized path
                return -1 - int(self._short_tokens(np.array([packed], dtype=np.int64))[0])
            j = self._long_tokens[tok] = len(self.tokens)
            self.tokens.append(tok)
        return -1 - j

    def _type_token(self, tok: str) -> int:
        code = self._type_cache.get(tok)
        if code is None:
            code = self._type_cache[tok] = type_code(tok)
        return code

    def _convert_tokens(self, fields: List[str]) -> List[int]:
        s, st, d, dt, et, g = fields
        return [self._id_token(s), self._type_token(st), self._id_token(d), self._type_token(dt),
                self._type_token(et), self._id_token(g)]

    def _short_lookup(self, packed: np.ndarray) -> np.ndarray:
        """Index of each packed short token in the short-token tables (grown)."""
        ids, first = self._short.lookup(packed)
        if first.size:
            toks = [_unpack(int(k)) for k in packed[first].tolist()]
            tok_ids, types = [], []
            for tok in toks:
                j = self._long_tokens.get(tok)
                if j is None:
                    j = self._long_tokens[tok] = len(self.tokens)
                    self.tokens.append(tok)
                tok_ids.append(j)
                types.append(self._type_token(tok))
            self._short_tok = np.concatenate([self._short_tok, np.asarray(tok_ids, dtype=np.int64)])
            self._short_type = np.concatenate([self._short_type, np.asarray(types, dtype=np.int64)])
        return ids

    def _short_tokens(self, packed: np.ndarray) -> np.ndarray:
        idx = self._short_lookup(packed)  # grows the table: index it afterwards
        return self._short_tok[idx]

    def _convert(self, a: np.ndarray, f_start: np.ndarray, f_end: np.ndarray) -> np.ndarray:
        """Fields of clean lines (printable ASCII, six non-empty fields) to codes."""
        n = f_start.shape[0]
        start, end = f_start.ravel(), f_end.ravel()
        length = end - start
        is_type = np.zeros((n, 6), dtype=bool)
        is_type[:, [1, 3, 4]] = True
        is_type = is_type.ravel()
        out = np.zeros(n * 6, dtype=np.int64)
        # digit-only fields (a non-digit byte count of zero)
        nondigit = np.zeros(a.size + 1, dtype=np.int32)
        np.cumsum((a - np.uint8(48)) > np.uint8(9), out=nondigit[1:])
        num = ((nondigit[end] - nondigit[start]) == 0) & (length <= _MAX_DIGITS)
        ids_ok = ~is_type & ((length == 1) | (a[start] != 48))  # canonical ids: no leading zero
        cand = np.flatnonzero(num & (is_type | ids_ok))
        if cand.size:
            s, ln = start[cand], length[cand]
            value = np.zeros(cand.size, dtype=np.int64)
            for j in range(int(ln.max())):
                act = j < ln
                digit = a[np.where(act, s + j, 0)].astype(np.int64) - 48
                value = np.where(act, value * 10 + digit, value)
            keep = ~is_type[cand] | (value < 2**56)  # type_code: digits below 2^56 stand for themselves
            out[cand[keep]] = value[keep]
            done = np.zeros(n * 6, dtype=bool)
            done[cand[keep]] = True
            rest = np.flatnonzero(~done)
        else:
            rest = np.arange(n * 6)
        # other tokens: those of at most 8 bytes packed into an exact int64 key
        short = rest[length[rest] <= 8]
        if short.size:
            s, ln = start[short], length[short]
            packed = np.zeros(short.size, dtype=np.uint64)
            for j in range(int(ln.max())):
                act = j < ln
                byte = a[np.where(act, s + j, 0)].astype(np.uint64) << np.uint64(8 * j)
                packed |= np.where(act, byte, np.uint64(0))
            idx = self._short_lookup(packed.view(np.int64))
            typ = is_type[short]
            out[short] = np.where(typ, self._short_type[idx], -1 - self._short_tok[idx])
        for i in rest[length[rest] > 8].tolist():
            tok = a[start[i] : end[i]].tobytes().decode("ascii")
            out[i] = self._type_token(tok) if is_type[i] else self._id_token(tok)
        return out.reshape(n, 6)


def _pack(tok: str) -> Optional[int]:
    """The ``int64`` key of a printable-ASCII token of at most 8 bytes."""
    raw = tok.encode("utf-8")
    if len(raw) > 8 or not all(0x21 <= ch <= 0x7E for ch in raw):
        return None
    return int(np.frombuffer(raw.ljust(8, b"\0"), dtype=np.int64)[0])


def _unpack(key: int) -> str:
    return np.array([key], dtype=np.int64).tobytes().rstrip(b"\0").decode("ascii")
