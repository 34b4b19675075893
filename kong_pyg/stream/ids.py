r"""Ids of a stream: node, graph and type tokens to dense indices.

Node and graph ids are any 64-bit integers or strings (a canonical decimal
string of at most 18 digits, such as ``"12"``, is the integer it spells;
``"012"``, ``"+1"``, ``"-5"`` and longer digit strings stay strings, other ids
than the integers); node ids are per graph. :class:`IdEncoder` turns them
into ``int64`` keys below :math:`2^{41}`, and :class:`StreamIds` numbers
graphs and (graph, node) pairs ``0, 1, ...`` in order of first appearance
with vectorized hash tables (:class:`~kong_pyg.idmap.IdMap`).
"""
import hashlib
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

import numpy as np
import torch
from torch import Tensor

from ..hashing import MAX_LABEL, type_code
from ..idmap import IdMap, canonical_int
from ..inputs import on_meta, top_beyond_int64
from .replay import chunk_checksum

#: At most this many graphs per stream (graph index bits of a node key).
MAX_GRAPHS = 1 << 22
#: At most this many nodes per stream (node indices are ``int32`` in the node state).
MAX_NODES = 2**31 - 1
_PLAIN = 1 << 40  # integer ids in [0, 2^40) are their own key
_RID_BITS = 41  # a node key is (graph index << 41) | encoded node id
_RID_MASK = (1 << _RID_BITS) - 1
_ODD = np.uint64(0x9E3779B97F4A7C15)
#: Unsigned torch dtypes whose values may not fit int64.
_UNSIGNED_WIDE = tuple(getattr(torch, n) for n in ("uint64",) if hasattr(torch, n))


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def as_int64(values: Any, name: str, what: str = "ids") -> Optional[np.ndarray]:
    """An ``int64`` array if :obj:`values` is an integer tensor or array, else None."""
    if isinstance(values, (Tensor, np.ndarray)) and values.ndim != 1:
        raise ValueError(f"'{name}' must be one-dimensional (got shape {tuple(values.shape)})")
    if isinstance(values, Tensor):
        if values.is_meta:
            raise on_meta(f"'{name}'")
        if values.is_floating_point() or values.is_complex() or values.dtype == torch.bool:
            raise TypeError(f"'{name}' must hold integer ids or strings (got {values.dtype})")
        if values.dtype in _UNSIGNED_WIDE:  # the NumPy check below (values >= 2^63)
            return as_int64(values.detach().reshape(-1).cpu().numpy(), name, what)
        return values.detach().reshape(-1).cpu().to(torch.long).resolve_neg().numpy()
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        if top_beyond_int64(values) is not None:
            raise ValueError(f"'{name}' holds {what} >= 2^63")
        return values.reshape(-1).astype(np.int64, copy=False)
    if isinstance(values, np.ndarray) and values.dtype.kind not in "OUS":
        raise TypeError(f"'{name}' must hold integer ids or strings (got {values.dtype})")
    return None


def as_list(values: Any, name: str, what: str) -> List[Any]:
    """The items of a sequence column (a clear error for a single value or a non-sequence)."""
    if isinstance(values, (str, bytes)):
        raise TypeError(f"'{name}' must be a sequence of {what}, not a single string")
    if isinstance(values, (set, frozenset, dict)):  # (no order to pair with the other columns)
        raise TypeError(f"'{name}' must be a sequence of {what} in edge order (got a "
                        f"{type(values).__name__})")
    try:
        return list(values)
    except TypeError:
        raise TypeError(f"'{name}' must be a sequence of {what} (got {type(values).__name__})") from None


def string_content(text: str) -> int:
    """A 64-bit value of a string id's text (:meth:`IdEncoder.content`)."""
    raw = text.encode("utf-8", errors="surrogatepass")
    return int.from_bytes(hashlib.blake2b(raw, digest_size=8).digest(), "little", signed=True)


class IdEncoder:
    """Integer or string ids to ``int64`` keys below :math:`2^{41}`, injectively.

    Integers in :math:`[0, 2^{40})` are their own key; other integers and
    strings get table entries. A canonical decimal string of at most 18
    digits such as :obj:`"12"` is the integer 12 (so a text file and a tensor
    of the same ids agree); others (:obj:`"012"`, :obj:`"-5"`, 19 digits or
    more) are strings (:func:`~kong_pyg.idmap.canonical_int`).
    """

    def __init__(self) -> None:
        self.wide = IdMap()
        self.strings: List[str] = []
        self._index: Dict[str, int] = {}
        self._content = np.zeros(16, dtype=np.int64)  # string_content of every string, by index

    def _ints(self, arr: np.ndarray) -> np.ndarray:
        if arr.size == 0 or (int(arr.min()) >= 0 and int(arr.max()) < _PLAIN):
            return arr
        out = arr.copy()
        wide = (arr < 0) | (arr >= _PLAIN)
        ids, _ = self.wide.lookup(arr[wide])
        out[wide] = _PLAIN + 2 * ids
        return out

    def _string(self, v: str) -> int:
        j = self._index.get(v)
        if j is None:
            j = self._index[v] = len(self.strings)
            self.strings.append(v)
            if j >= self._content.size:
                self._content = np.concatenate([self._content, np.zeros_like(self._content)])
            self._content[j] = string_content(v)
        return _PLAIN + 2 * j + 1

    def encode(self, values: Any, name: str) -> np.ndarray:
        """Keys :obj:`[n]` of ids (an integer tensor or array, or a sequence of integers and strings)."""
        arr = as_int64(values, name)
        if arr is not None:
            return self._ints(arr)
        values = as_list(values, name, "ids")
        out = np.empty(len(values), dtype=np.int64)
        is_int = np.zeros(len(values), dtype=bool)
        for i, v in enumerate(values):
            if not _is_int(v) and not isinstance(v, str):
                raise TypeError(f"'{name}' must hold integers or strings (got {type(v).__name__})")
            iv = int(v) if _is_int(v) else canonical_int(v)
            if iv is not None:
                if not -(2**63) <= iv < 2**63:
                    raise ValueError(f"'{name}' holds id {iv}, outside the 64-bit integers")
                out[i], is_int[i] = iv, True
            else:
                out[i] = self._string(v)
        if is_int.any():
            out[is_int] = self._ints(out[is_int])
        return out

    def content(self, keys: np.ndarray) -> np.ndarray:
        """What keys stand for, as ``int64``: an integer id itself, a string id a hash of its text.

        Unlike the keys (table entries are numbered in order of first
        appearance), the same in every process: what checksums are made of.
        """
        table = np.flatnonzero(keys >= _PLAIN)
        if table.size == 0:
            return keys
        off = keys[table] - _PLAIN
        idx, string = off >> 1, (off & 1) == 1
        values = np.empty(table.size, dtype=np.int64)
        values[string] = self._content[idx[string]]
        values[~string] = self.wide.keys[idx[~string]]
        out = keys.copy()
        out[table] = values
        return out

    def decode(self, keys: np.ndarray) -> List[Any]:
        """The ids (integers or strings) of keys."""
        out: List[Any] = []
        wide = self.wide.keys
        for key in keys.tolist():
            if key < _PLAIN:
                out.append(key)
            elif (key - _PLAIN) % 2 == 0:
                out.append(int(wide[(key - _PLAIN) // 2]))
            else:
                out.append(self.strings[(key - _PLAIN) // 2])
        return out

    def state(self) -> Dict[str, Any]:
        """The tables, as tensors and lists."""
        return {"wide": torch.from_numpy(self.wide.keys.copy()), "strings": list(self.strings)}

    @classmethod
    def from_state(cls, state: Dict[str, Any]) -> "IdEncoder":
        """Rebuild from :meth:`state`."""
        enc = cls()
        enc.wide = IdMap.from_keys(state["wide"].numpy())
        enc.strings = list(state["strings"])
        enc._index = {s: i for i, s in enumerate(enc.strings)}
        enc._content = np.array([string_content(s) for s in enc.strings] + [0], dtype=np.int64)
        return enc


def type_labels(values: Any, name: str) -> np.ndarray:
    """Node or edge type labels as non-negative ``int64`` (strings: :func:`~kong_pyg.hashing.type_code`)."""
    arr = as_int64(values, name, "types")
    if arr is None:
        out = []
        for v in as_list(values, name, "types"):
            if isinstance(v, str):
                out.append(type_code(v))
            elif _is_int(v):
                if not 0 <= int(v) < MAX_LABEL:
                    raise ValueError(f"'{name}' must hold types in [0, 2^58) (got {int(v)})")
                out.append(int(v))
            else:
                raise TypeError(f"'{name}' must hold integer types or strings (got {type(v).__name__})")
        arr = np.asarray(out, dtype=np.int64).reshape(-1)
    if arr.size and (int(arr.min()) < 0 or int(arr.max()) >= MAX_LABEL):
        raise ValueError(f"'{name}' must hold types in [0, 2^58) (got {int(arr.min())}..{int(arr.max())})")
    return arr


class Columns(NamedTuple):
    """A checked chunk: encoded ids and type labels, ``int64`` arrays :obj:`[E]`."""

    src: np.ndarray
    dst: np.ndarray
    graph: np.ndarray
    src_type: np.ndarray
    dst_type: np.ndarray
    edge_type: Optional[np.ndarray]

    def part(self, lo: int, hi: int) -> "Columns":
        """Edges :obj:`lo` to :obj:`hi`."""
        et = None if self.edge_type is None else self.edge_type[lo:hi]
        return Columns(self.src[lo:hi], self.dst[lo:hi], self.graph[lo:hi], self.src_type[lo:hi],
                       self.dst_type[lo:hi], et)


class Found(NamedTuple):
    """The dense ids of a sub-chunk's edges (see :meth:`StreamIds.lookup`)."""

    graph: np.ndarray  # [E] graph indices
    ends: np.ndarray  # [2E] node indices, source and destination of each edge in turn (int32 or int64)
    first: np.ndarray  # positions in ends of the nodes new in this sub-chunk, in id order
    num_graphs: int
    num_nodes: int


class GraphCache:
    """A direct-mapped cache (one way, keys verified) of graph ids in front of the graph :class:`IdMap`.

    A slot holds one (key, id) pair, the slot of a key being a multiplicative
    hash of it; a lookup is two gathers and a compare, and only keys not in
    their slot go to the map (which numbers new graphs), after which they
    take the slot. Never a wrong id: the key is compared.
    """

    def __init__(self) -> None:
        self.bits = 0
        self.keys = np.zeros(0, dtype=np.int64)
        self.ids = np.zeros(0, dtype=np.int64)

    def lookup(self, graphs: IdMap, keys: np.ndarray, insert: bool) -> np.ndarray:
        """Ids of :obj:`keys` (as :meth:`IdMap.lookup`; -1 for unknown keys when not :obj:`insert`)."""
        want = max(10, min(20, (16 * max(len(graphs), 1) - 1).bit_length()))
        if want > self.bits:
            self.bits = want
            self.keys = np.full(1 << want, -1, dtype=np.int64)
            self.ids = np.full(1 << want, -1, dtype=np.int64)
        slot = ((keys.view(np.uint64) * _ODD) >> np.uint64(64 - self.bits)).astype(np.int64)
        ids = np.where(np.take(self.keys, slot) == keys, np.take(self.ids, slot), -1)  # (take: 2x [ ])
        miss = np.flatnonzero(ids < 0)
        if miss.size:
            found, _ = graphs.lookup(keys[miss], insert=insert)
            ids[miss] = found
            ok = miss[found >= 0]
            self.keys[slot[ok]] = keys[ok]
            self.ids[slot[ok]] = ids[ok]
        return ids


class DirectNodes:
    """A direct-address cache of node ids for small integer ids: ``table[graph * width + id]``.

    In front of the node :class:`~kong_pyg.idmap.IdMap` (which keeps every
    node): an entry is a node's dense id or -1 (unknown here: ask the map),
    never a wrong id, so the cache changes no result. It covers graph
    indices below :attr:`rows` and encoded ids below :attr:`width` (powers of
    two), grown while the table stays within :attr:`budget` entries (or 8
    per node): streams whose node ids are small integers (most) skip the
    hash table's random probes.
    """

    budget = 1 << 23

    def __init__(self) -> None:
        self.rows = 0
        self.width = 0
        self.table = np.zeros(0, dtype=np.int32)

    def fit(self, num_graphs: int, max_id: int, nodes: IdMap) -> None:
        """Grow to cover :obj:`num_graphs` graphs and ids up to :obj:`max_id`, if within the budget."""
        rows = max(self.rows, -(-max(num_graphs, 1) * 5 // 4 // 64) * 64)  # room for a quarter more
        width = max(self.width, 1 << max(4, int(max_id).bit_length()))
        if (rows <= self.rows and width <= self.width) or rows * width > max(self.budget, 8 * len(nodes)):
            return
        self.rows, self.width = rows, width
        self.table = np.full(rows * width, -1, dtype=np.int32)
        keys = nodes.keys
        g, r = keys >> _RID_BITS, keys & _RID_MASK
        ok = np.flatnonzero((r < width) & (g < rows))
        self.table[g[ok] * width + r[ok]] = ok

    def claim(self, slots: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """The first of the :obj:`positions` (ascending) of every distinct one of :obj:`slots` (free ones).

        Marks the slots (call :meth:`slots` writes afterwards): a stable
        minimum scatter, no sort.
        """
        table = torch.from_numpy(self.table)
        mark = torch.from_numpy(positions).to(torch.int32) - (1 << 30)  # below -1: the first position wins
        table.scatter_reduce_(0, torch.from_numpy(slots), mark, reduce="amin")
        return positions[self.table[slots] == mark.numpy()]

    def slots(self, gid: np.ndarray, rid: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """The table slot of every (graph, id) pair, and which pairs have one."""
        inside = (rid < self.width) & (gid < self.rows)
        return np.where(inside, gid * self.width + rid, 0), inside


class StreamIds:
    """The id tables of a stream: the encoder, the graphs and the (graph, node) pairs."""

    def __init__(self) -> None:
        self.enc = IdEncoder()
        self.graphs = IdMap()
        self.nodes = IdMap()
        self.direct = DirectNodes()
        self.graph_cache = GraphCache()

    def graph_ids(self) -> List[Any]:
        """The graph ids, by graph index."""
        return self.enc.decode(self.graphs.keys)

    def columns(self, src: Any, src_type: Any, dst: Any, dst_type: Any, edge_type: Any, graph: Any,
                edge_labels: bool) -> Columns:
        """Check and encode one chunk's columns (nothing is numbered yet but string ids)."""
        s = self.enc.encode(src, "src")
        d = self.enc.encode(dst, "dst")
        e = s.size
        if d.size != e:
            raise ValueError(f"'dst' has {d.size} entries but 'src' has {e}")
        if graph is None:
            g = np.zeros(e, dtype=np.int64)
        else:
            g = self.enc.encode(graph, "graph")
            if g.size != e:
                raise ValueError(f"'graph' has {g.size} entries but 'src' has {e}")
        st = type_labels(src_type, "src_type")
        dt = type_labels(dst_type, "dst_type")
        if st.size != e or dt.size != e:
            raise ValueError(f"'src_type' and 'dst_type' must have {e} entries")
        et = None
        if edge_labels:
            if edge_type is None:
                raise ValueError("'edge_type' is needed when edge_labels=True")
            et = type_labels(edge_type, "edge_type")
            if et.size != e:
                raise ValueError(f"'edge_type' has {et.size} entries but 'src' has {e}")
        return Columns(s, d, g, st, dt, et)

    def checksum(self, cols: Columns, offset: int) -> int:
        """The replay checksum term of a chunk starting at position :obj:`offset` (see :mod:`.replay`)."""
        enc = self.enc
        return chunk_checksum([enc.content(cols.src), enc.content(cols.dst), enc.content(cols.graph),
                               cols.src_type, cols.dst_type, cols.edge_type], offset)

    def lookup(self, cols: Columns, insert: bool, pass_index: int) -> Found:
        """Dense graph and node ids of a sub-chunk (touches only the id tables).

        Args:
            cols (Columns): The sub-chunk.
            insert (bool): Number unseen graphs and nodes (pass 1); otherwise
                they are an error (a later pass must replay pass 1's stream).
            pass_index (int): The pass, for error messages.
        """
        gid = self.graph_cache.lookup(self.graphs, cols.graph, insert)
        if not insert and (gid < 0).any():
            raise ValueError(f"pass {pass_index} met a graph not seen in pass 1: every pass "
                             "must read the same stream")
        self._check_graphs()
        ids, first = self._nodes(gid, cols, insert)
        self._check_nodes()
        if not insert and (ids < 0).any():
            raise ValueError(f"pass {pass_index} met a node not seen in pass 1: every pass "
                             "must read the same stream")
        return Found(gid, ids, first, len(self.graphs), len(self.nodes))

    def _nodes(self, gid: np.ndarray, cols: Columns, insert: bool) -> Tuple[np.ndarray, np.ndarray]:
        """Node ids of the chunk's ends (:attr:`Found.ends`), positions of new ones (:attr:`Found.first`)."""
        src, dst, e = cols.src, cols.dst, cols.src.size
        if e == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        top = max(int(src.max()), int(dst.max()))
        direct = self.direct
        direct.fit(len(self.graphs), top, self.nodes)

        def keys(at: np.ndarray) -> np.ndarray:  # the node keys of end positions
            edge = at >> 1
            return (gid[edge] << _RID_BITS) | np.where(at & 1, dst[edge], src[edge])

        if direct.table.size and top < direct.width and len(self.graphs) <= direct.rows:  # all covered
            pairs = np.empty((e, 2), dtype=np.int64)
            base = gid * direct.width
            np.add(base, src, out=pairs[:, 0])
            np.add(base, dst, out=pairs[:, 1])
            slot = pairs.reshape(-1)
            inside = np.ones(2 * e, dtype=bool)
            ids = np.take(direct.table, slot)  # int32, as the node state keeps them; take: 2x faster than [ ]
        else:
            slot, inside = direct.slots(np.repeat(gid, 2), np.stack([src, dst], axis=1).reshape(-1))
            cached = np.take(direct.table, slot) if direct.table.size else -1
            ids = np.where(inside, cached, -1).astype(np.int64)
        miss = np.flatnonzero(ids < 0)
        if miss.size == 0:
            return ids, np.zeros(0, dtype=np.int64)
        if insert and inside[miss].all():  # all new (the cache knows every node in its range)
            new = direct.claim(slot[miss], miss)
            ids[new] = self.nodes.extend(keys(new))
            direct.table[slot[new]] = ids[new]
            ids[miss] = direct.table[slot[miss]]
            return ids, new
        found, first = self.nodes.lookup(keys(miss), insert=insert)
        ids[miss] = found
        put = inside[miss] & (found >= 0)
        direct.table[slot[miss[put]]] = found[put]
        return ids, miss[first]

    def _check_graphs(self) -> None:
        if len(self.graphs) > MAX_GRAPHS:
            raise ValueError(f"a stream holds at most {MAX_GRAPHS} graphs")

    def _check_nodes(self) -> None:
        if len(self.nodes) > MAX_NODES:
            raise ValueError(f"a stream holds at most {MAX_NODES:,} nodes")

    def absorb(self, other: "StreamIds") -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Number :obj:`other`'s graphs and nodes here (new ones after ours, in its order).

        Returns:
            (numpy.ndarray, numpy.ndarray, numpy.ndarray): Our index of each of
            :obj:`other`'s graphs and nodes, and the positions (in
            :obj:`other`'s node order) of the nodes new here, in id order.
        """

        def rekey(keys: np.ndarray) -> np.ndarray:  # other's encoded ids -> ours
            keys = keys.copy()
            rid = keys & _RID_MASK
            table = rid >= _PLAIN
            if table.any():
                rid[table] = self.enc.encode(other.enc.decode(rid[table]), "ids")
            return (keys >> _RID_BITS << _RID_BITS) | rid

        gmap, _ = self.graphs.lookup(rekey(other.graphs.keys))
        self._check_graphs()
        keys = rekey(other.nodes.keys)
        keys = (gmap[keys >> _RID_BITS] << _RID_BITS) | (keys & _RID_MASK)
        ids, first = self.nodes.lookup(keys)
        self._check_nodes()
        self.direct = DirectNodes()  # rebuilt from the node map at the next lookup
        return gmap, ids, first

    def node_name(self, index: int) -> Tuple[Any, Any]:
        """The (graph id, node id) of node :obj:`index`, for messages."""
        key = int(self.nodes.keys[index])
        graph = int(self.graphs.keys[key >> _RID_BITS])
        return self.enc.decode(np.array([graph]))[0], self.enc.decode(np.array([key & _RID_MASK]))[0]

    def state(self) -> Dict[str, Any]:
        """The tables (the ``encoder``, ``graphs`` and ``nodes`` entries of a stream's state)."""
        return {"encoder": self.enc.state(), "graphs": torch.from_numpy(self.graphs.keys.copy()),
                "nodes": torch.from_numpy(self.nodes.keys.copy())}

    @classmethod
    def from_state(cls, state: Dict[str, Any]) -> "StreamIds":
        """Rebuild from :meth:`state` (or a whole stream state holding those entries)."""
        out = cls()
        out.enc = IdEncoder.from_state(state["encoder"])
        out.graphs = IdMap.from_keys(state["graphs"].numpy())
        out.nodes = IdMap.from_keys(state["nodes"].numpy())
        return out
