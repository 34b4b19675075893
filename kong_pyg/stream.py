r"""KONG sketches of graph streams in bounded memory (SPEC section 6).

Labeled edges of many graphs arrive in one stream, interleaved in any way;
the arrival order is the neighbor order. :class:`KongStream` keeps per node
only what the strings need (the saturated length and the first and last
:math:`k - 1` symbols of the node's string, see :mod:`kong_pyg.kgrams`) and,
where the kernel needs them, the node's Count-Sketches: never the edges. It
produces the same graph features as :meth:`KongSketch.readout
<kong_pyg.nn.KongSketch.readout>` on the graphs that
:func:`~kong_pyg.datasets.streamspot.stream_to_graphs` builds from the same
stream (same seed, same hashes), in :math:`\max(h, 1)` passes over the
stream; with :math:`h = 1` in a single pass, the current sketches available
at any moment.

**Which neighborhood an edge extends.** An arrival (source :math:`s`,
destination :math:`d`, edge type :math:`e`, graph :math:`g`) appends
:math:`e\, s_d^{i-1}` to :math:`s`'s string and (with :obj:`undirected`, the
default) :math:`e\, s_s^{i-1}` to :math:`d`'s string, in that order: a process
sees the objects it acted on in time order, an object the processes that
touched it. This is :func:`stream_to_graphs`'s graph (edges :math:`d \to s`
then :math:`s \to d`, PyG's default flow). With :obj:`undirected=False` only
:math:`s` sees :math:`d`. A node's label is its type on its first edge.

**Passes.** Pass :math:`i` builds :math:`s_v^i` from the neighbors'
:math:`s_u^{i-1}`, whose state (sketch, length, prefix, suffix) is fixed
after pass :math:`i - 1`: pass :math:`i` adds, per arrival, the neighbor's
sketch and the hashed k-grams that cross into the new piece. So
:math:`h \geq 2` re-reads the stream :math:`h` times (:meth:`KongStream.fit`
takes a re-iterable source: an :class:`~kong_pyg.datasets.EdgeStream`, a
list of chunks, or a callable returning a fresh iterator).

**Memory.** Per node: a graph index, a label and :math:`O(k)` string codes.
The linear map (:obj:`kernel="poly"`, :obj:`degree=1`) with :math:`h = 1`
needs nothing more (each k-gram goes straight into its graph's row,
:math:`O(b)` per graph); otherwise nodes also hold :math:`p` Count-Sketches
of size :math:`b` (in :obj:`dtype`), up to three sets of them for
:math:`h \geq 2` (previous pass, current pass, BFS levels so far):
:math:`O(N p b)`, never :math:`O(|E|)`.

**Ids.** Node and graph ids are any 64-bit integers or strings (a decimal
string is the integer it spells); node ids are per graph. They are mapped to
dense indices by a vectorized hash table (:class:`~kong_pyg.idmap.IdMap`),
in order of first appearance; graphs are numbered likewise, which is the row
order of :meth:`KongStream.sketches` (:attr:`KongStream.graph_ids`).

**Cosine** normalizes each node by the norm *estimated from its sketches*
(:obj:`norm="sketch"` of :class:`~kong_pyg.nn.KongSketch`): exact norms need
exact k-gram counts, which a stream does not keep.

**Merging.** A node's string over stream A followed by stream B is its
string over A concatenated with its string over B, and sketches are linear:
:func:`merge_streams` joins the states of two consecutive time shards (sums
the sketches, hashes in the k-grams that cross the seam from A's suffix codes
to B's prefix codes, joins the codes) into the state of the whole stream.
"""
import math
import os
import sys
import tempfile
from typing import Callable, Dict, Iterable, List, Optional, Tuple, Union

import numpy as np
import torch
from torch import Tensor

from .hashing import BREAK, MAX_LABEL, P, split30
from .idmap import IdMap
from .inputs import KERNELS, TRAVERSALS, check_choice, check_float, check_int
from .kernels import inverse_or_zero
from .kgrams import StringState, concat_pieces, gram_lengths, initial_state
from .sketch import SketchHashes, tensor_sketch

#: At most this many graphs per stream (graph index bits of a node key).
MAX_GRAPHS = 1 << 22
_PLAIN = 1 << 40  # integer ids in [0, 2^40) are their own key
_RID_BITS = 41
_POS_BITS = 22
_MAX_SUB = 1 << 18  # edges per internal sub-chunk
_STATE_VERSION = 1
_MAX_TABLE = 1 << 16  # hash every n-gram code once when there are at most this many
_MAX_AGG = 1 << 22  # count (graph, gram) pairs of a chunk before hashing, up to this many
_DIRECT = 1 << 16  # symbol codes below this are looked up in a direct array
_PIPELINE = False  # look up the ids of the next sub-chunk in a second thread (see docs/results/stream.md)


# ---------------------------------------------------------------------------
# ids and labels
# ---------------------------------------------------------------------------


def _canonical_int(s: str) -> Optional[int]:
    """The integer a decimal token stands for (:obj:`"12"`, not :obj:`"012"`)."""
    if s.isascii() and s.isdigit() and (s == "0" or s[0] != "0") and len(s) < 19:
        return int(s)
    return None


def _as_numpy(values, name: str) -> Optional[np.ndarray]:
    """An ``int64`` array if :obj:`values` is an integer array, else None."""
    if isinstance(values, Tensor):
        if values.is_floating_point() or values.is_complex() or values.dtype == torch.bool:
            raise TypeError(f"'{name}' must hold integer ids or strings (got {values.dtype})")
        return values.detach().reshape(-1).cpu().to(torch.long).numpy()
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        if values.dtype == np.uint64 and values.size and int(values.max()) >= 2**63:
            raise ValueError(f"'{name}' holds ids >= 2^63")
        return values.reshape(-1).astype(np.int64, copy=False)
    if isinstance(values, np.ndarray) and values.dtype.kind not in "OUS":
        raise TypeError(f"'{name}' must hold integer ids or strings (got {values.dtype})")
    return None


class _Encoder:
    """Integer or string ids to ``int64`` keys below :math:`2^{41}`, injectively.

    Integers in :math:`[0, 2^{40})` are their own key; other integers and
    strings get table entries. A decimal string such as :obj:`"12"` is the
    integer 12 (so a text file and a tensor of the same ids agree).
    """

    def __init__(self):
        self.wide = IdMap()
        self.strings: List[str] = []
        self._index: Dict[str, int] = {}

    def _ints(self, arr: np.ndarray) -> np.ndarray:
        if arr.size == 0 or (int(arr.min()) >= 0 and int(arr.max()) < _PLAIN):
            return arr
        out = arr.copy()
        wide = (arr < 0) | (arr >= _PLAIN)
        ids, _ = self.wide.lookup(arr[wide])
        out[wide] = _PLAIN + 2 * ids
        return out

    def encode(self, values, name: str) -> np.ndarray:
        arr = _as_numpy(values, name)
        if arr is not None:
            return self._ints(arr)
        if isinstance(values, (str, bytes)):
            raise TypeError(f"'{name}' must be a sequence of ids, not a single string")
        values = list(values)
        out = np.empty(len(values), dtype=np.int64)
        is_int = np.zeros(len(values), dtype=bool)
        for i, v in enumerate(values):
            if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
                out[i], is_int[i] = int(v), True
                continue
            if not isinstance(v, str):
                raise TypeError(f"'{name}' must hold integers or strings (got {type(v).__name__})")
            iv = _canonical_int(v)
            if iv is not None:
                out[i], is_int[i] = iv, True
                continue
            j = self._index.get(v)
            if j is None:
                j = self._index[v] = len(self.strings)
                self.strings.append(v)
            out[i] = _PLAIN + 2 * j + 1
        if is_int.any():
            out[is_int] = self._ints(out[is_int])
        return out

    def decode(self, keys: np.ndarray) -> list:
        out = []
        wide = self.wide.keys
        for key in keys.tolist():
            if key < _PLAIN:
                out.append(key)
            elif (key - _PLAIN) % 2 == 0:
                out.append(int(wide[(key - _PLAIN) // 2]))
            else:
                out.append(self.strings[(key - _PLAIN) // 2])
        return out

    def state(self) -> dict:
        return {"wide": torch.from_numpy(self.wide.keys.copy()), "strings": list(self.strings)}

    @classmethod
    def from_state(cls, state: dict) -> "_Encoder":
        enc = cls()
        enc.wide = IdMap.from_keys(state["wide"].numpy())
        enc.strings = list(state["strings"])
        enc._index = {s: i for i, s in enumerate(enc.strings)}
        return enc


def _type_labels(values, name: str) -> np.ndarray:
    """Node or edge type labels as non-negative ``int64`` (strings hashed)."""
    arr = _as_numpy(values, name)
    if arr is None:
        if isinstance(values, (str, bytes)):
            raise TypeError(f"'{name}' must be a sequence of types, not a single string")
        from .datasets.streamspot import type_code

        out = []
        for v in values:
            if isinstance(v, str):
                out.append(type_code(v))
            elif isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
                out.append(int(v))
            else:
                raise TypeError(f"'{name}' must hold integer types or strings (got {type(v).__name__})")
        arr = np.asarray(out, dtype=np.int64).reshape(-1)
    if arr.size and (int(arr.min()) < 0 or int(arr.max()) >= MAX_LABEL):
        raise ValueError(f"'{name}' must hold types in [0, 2^58) (got {int(arr.min())}..{int(arr.max())})")
    return arr


def _add_rows(buf: Tensor, rows: Tensor, src: Tensor) -> None:
    """:obj:`buf[rows[i]] += src[i]` for 2-D tensors (repeated rows add up).

    A flat 1-D :meth:`index_add_`: PyTorch's 2-D one goes through a
    ``scatter_add_`` whose cost on CPU follows the size of :obj:`buf`.
    """
    if rows.numel() == 0:
        return
    d = buf.size(1)
    idx = (rows * d).unsqueeze(1) + torch.arange(d, device=rows.device)
    buf.view(-1).index_add_(0, idx.view(-1), src.reshape(-1).to(buf.dtype))


def _sort_by_owner(owner: Tensor) -> Tuple[Tensor, Tensor]:
    """Stable sort of :obj:`owner` (non-negative, fewer than 2^22 entries).

    Sorts the unique keys :obj:`owner * 2^22 + position` by value (NumPy's
    vectorized sort is far faster than an argsort), which keeps arrival order
    within each owner.

    Returns:
        (torch.Tensor, torch.Tensor): The sorted owners and the permutation.
    """
    m = owner.numel()
    key = (owner << _POS_BITS) | torch.arange(m)
    if key.device.type == "cpu":
        key = torch.from_numpy(np.sort(key.numpy()))
    else:  # pragma: no cover - accelerators sort fast
        key = torch.sort(key).values
    return key >> _POS_BITS, key & ((1 << _POS_BITS) - 1)


# ---------------------------------------------------------------------------
# the stream
# ---------------------------------------------------------------------------


class KongStream:
    r"""KONG graph sketches of an edge stream, in bounded memory.

    From the `"KONG: Kernels for ordered-neighborhood graphs"
    <https://arxiv.org/abs/1805.10014>`_ paper (NeurIPS 2018), Theorem 2.

    Consumes labeled edges of many graphs, interleaved in any way, in chunks
    (:meth:`update`, or :meth:`fit` over a whole source); the arrival order is
    the neighbor order. :meth:`sketches` returns :obj:`[num_graphs, dim]`
    graph features equal (up to float rounding; exactly, for the linear map
    in ``float64``) to

    .. code-block:: python

        graphs = stream_to_graphs(stream, undirected=undirected)
        KongSketch(k, hops, traversal, dim, kernel, degree, const, seed,
                   blended=blended, norm="sketch").readout(...)

    on those graphs (with :obj:`edge_attr` the edge types when
    :obj:`edge_labels`), rows in order of each graph's first edge. See the
    module documentation for which neighborhood an edge extends, the passes,
    memory, cosine norms and merging.

    .. warning::
        Like :class:`~kong_pyg.nn.KongSketch`, the sketches depend on the
        order of the edges when :obj:`k >= 2`: that is the point.

    Args:
        k (int, optional): The k-gram length. (default: :obj:`1`)
        hops (int, optional): The depth :math:`h`; the stream is read
            :math:`\max(h, 1)` times. (default: :obj:`1`)
        traversal (str, optional): :obj:`"bfs"` or :obj:`"wl"`.
            (default: :obj:`"bfs"`)
        dim (int, optional): The sketch size :math:`b`. (default: :obj:`1024`)
        kernel (str, optional): :obj:`"poly"` or :obj:`"cosine"` (norms
            estimated from the sketches). (default: :obj:`"poly"`)
        degree (int, optional): The kernel degree :math:`p`. (default: :obj:`1`)
        const (float, optional): The polynomial constant. (default: :obj:`0.0`)
        seed (int, optional): The seed of the hash tables (the same tables as
            :class:`~kong_pyg.nn.KongSketch` with this seed). (default: :obj:`0`)
        blended (bool, optional): Count all n-grams :math:`n = 1..k`.
            (default: :obj:`False`)
        undirected (bool, optional): Each edge extends both endpoints'
            neighborhoods (source first), else only the source's.
            (default: :obj:`True`)
        edge_labels (bool, optional): Put the edge type before each
            neighbor's piece. (default: :obj:`True`)
        dtype (torch.dtype, optional): The dtype sketches are kept and
            returned in; ``float64`` keeps integer counts exact.
            (default: :obj:`torch.float64`)

    Shapes:
        - **input** (:meth:`update`): :obj:`src`, :obj:`src_type`,
          :obj:`dst`, :obj:`dst_type`, :obj:`edge_type`, :obj:`graph`, each
          :math:`(|\mathcal{E}_{chunk}|)`: integer tensors or arrays, or
          sequences of integers or strings.
        - **output** (:meth:`sketches`): :math:`(|\mathcal{G}|, b)`.
    """

    def __init__(
        self,
        k: int = 1,
        hops: int = 1,
        traversal: str = "bfs",
        dim: int = 1024,
        kernel: str = "poly",
        degree: int = 1,
        const: float = 0.0,
        seed: int = 0,
        blended: bool = False,
        undirected: bool = True,
        edge_labels: bool = True,
        dtype: torch.dtype = torch.float64,
    ):
        self.k = check_int("k", k, 1)
        self.hops = check_int("hops", hops, 0)
        self.traversal = check_choice("traversal", traversal, TRAVERSALS)
        self.dim = check_int("dim", dim, 1)
        self.kernel = check_choice("kernel", kernel, KERNELS)
        self.degree = check_int("degree", degree, 1)
        self.const = check_float("const", const, 0.0)
        self.seed = check_int("seed", seed, 0)
        self.blended = bool(blended)
        self.undirected = bool(undirected)
        self.edge_labels = bool(edge_labels)
        if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
            raise TypeError(f"'dtype' must be a floating-point torch.dtype (got {dtype})")
        self.dtype = dtype
        self.hashes = SketchHashes(self.dim, self.degree, self.k, self.hops + 1, self.seed)
        self.lengths = gram_lengths(self.k, self.blended)
        self.num_passes = max(self.hops, 1)
        self.linear = self.degree == 1 and self.kernel == "poly"
        self.reset()

    # -- configuration and state ----------------------------------------------

    def config(self) -> dict:
        """The constructor arguments."""
        return dict(
            k=self.k, hops=self.hops, traversal=self.traversal, dim=self.dim, kernel=self.kernel,
            degree=self.degree, const=self.const, seed=self.seed, blended=self.blended,
            undirected=self.undirected, edge_labels=self.edge_labels, dtype=self.dtype,
        )

    def __repr__(self) -> str:
        cfg = self.config()
        cfg["dtype"] = str(self.dtype).replace("torch.", "")
        args = ", ".join(f"{k}={v!r}" for k, v in cfg.items())
        return f"{self.__class__.__name__}({args})"

    def reset(self) -> "KongStream":
        """Forget everything seen (keeps the configuration)."""
        self._enc = _Encoder()
        self._graphs = IdMap()
        self._nodes = IdMap()
        self._symbols = IdMap()
        self._terms_for = -1
        self._tables_v = -1
        self._direct = np.zeros(0, dtype=np.int64)
        self._code_tables: Dict[tuple, Tuple[Tensor, Tensor]] = {}
        self._n = 0
        self._cap = 0
        self._arrays: Dict[str, Tensor] = {}
        self._fill: Dict[str, float] = {}
        self._rows = torch.zeros(0, self.dim, dtype=self.dtype)
        #: The pass being read (1-based).
        self.pass_index = 1
        #: Edges consumed in the current pass.
        self.position = 0
        #: Edges of the stream (counted in pass 1).
        self.num_edges = 0
        self._add_array("node_graph", (), torch.long, 0)
        self._add_array("node_sym", (), torch.long, 0)
        self._add_string_arrays("seg")
        if self._needs_node_sketch(1):
            self._add_array("Y", (self.degree * self.dim,), self.dtype, 0)
        return self

    @property
    def num_graphs(self) -> int:
        """The number of graphs seen."""
        return len(self._graphs)

    @property
    def num_nodes(self) -> int:
        """The number of nodes seen."""
        return self._n

    @property
    def graph_ids(self) -> list:
        """The graph ids (integers or strings), in row order of :meth:`sketches`."""
        return self._enc.decode(self._graphs.keys)

    def _needs_node_sketch(self, i: int) -> bool:
        return self.hops >= 1 and (not self.linear or i < self.hops)

    def _add_array(self, name: str, shape: tuple, dtype: torch.dtype, fill):
        self._arrays[name] = torch.full((self._cap, *shape), fill, dtype=dtype)
        self._fill[name] = fill

    def _add_string_arrays(self, prefix: str):
        self._add_array(prefix + "_len", (), torch.long, 0)
        self._add_array(prefix + "_pre", (self.k - 1,), torch.long, BREAK)
        self._add_array(prefix + "_suf", (self.k - 1,), torch.long, BREAK)

    def _strings(self, prefix: str, index=None) -> StringState:
        a = self._arrays
        if index is None:
            index = slice(0, self._n)
        return StringState(a[prefix + "_len"][index], a[prefix + "_pre"][index], a[prefix + "_suf"][index])

    def _set_strings(self, prefix: str, index, state: StringState):
        a = self._arrays
        a[prefix + "_len"][index] = state.length
        a[prefix + "_pre"][index] = state.prefix
        a[prefix + "_suf"][index] = state.suffix

    def _grow_nodes(self, n: int):
        if n <= self._cap:
            return
        cap = max(n, self._cap + self._cap // 2, 1024)
        for name, t in self._arrays.items():
            new = torch.full((cap, *t.shape[1:]), self._fill[name], dtype=t.dtype)
            new[: self._cap] = t
            self._arrays[name] = new
        self._cap = cap

    def _grow_graphs(self, g: int):
        if g > self._rows.size(0) and self.linear:
            new = torch.zeros(max(g, 2 * self._rows.size(0), 64), self.dim, dtype=self.dtype)
            new[: self._rows.size(0)] = self._rows
            self._rows = new

    # -- hashing ------------------------------------------------------------

    def _symbol_ids(self, codes: np.ndarray) -> Tensor:
        """Dense symbol ids of symbol codes (a direct array for small codes)."""
        if codes.size == 0 or int(codes.max()) >= _DIRECT:
            return torch.from_numpy(self._symbols.lookup(codes)[0])
        top = int(codes.max()) + 1
        if self._direct.size < top:
            grown = np.full(max(top, 2 * self._direct.size, 64), -1, dtype=np.int64)
            grown[: self._direct.size] = self._direct
            self._direct = grown
        ids = self._direct[codes]
        miss = ids < 0
        if miss.any():
            ids[miss] = self._symbols.lookup(codes[miss])[0]
            self._direct[codes[miss]] = ids[miss]
        return torch.from_numpy(ids)

    def _tables(self):
        """Per-position hash terms of every symbol (rebuilt when symbols are added)."""
        v = len(self._symbols)
        if self._terms_for != v:
            codes = torch.from_numpy(self._symbols.keys.copy())
            coef = self.hashes.coef.cpu()
            hi, lo = split30(codes.view(-1, 1))
            terms = [(hi * coef[:, 2 + 2 * t] + lo * coef[:, 3 + 2 * t]) % P for t in range(self.k)]
            self._terms = torch.stack(terms) if v else torch.zeros(self.k, 0, coef.size(0), dtype=torch.long)
            self._const = {n: (coef[:, 0] + n * coef[:, 1]) % P for n in self.lengths}
            self._terms_for = v
        return self._terms, self._const

    def _hash(self, grams: Tensor) -> Tuple[Tensor, Tensor]:
        """Buckets and signs :obj:`[M, p]` of grams of symbol ids :obj:`[M, n]`.

        The same numbers as :meth:`SketchHashes.hash
        <kong_pyg.sketch.SketchHashes.hash>` on the symbols' codes: that hash
        is an affine function of the symbols' digits modulo :math:`P`, so it
        is a sum of per-(position, symbol) terms, tabulated once.
        """
        terms, const = self._tables()
        n = grams.size(1)
        h = const[n].unsqueeze(0)
        for t in range(n):
            h = h + terms[t].index_select(0, grams[:, t])
        h = (h & P) + (h >> 31)  # h < 2^34, so this and one subtraction reduce mod P
        h = torch.where(h >= P, h - P, h)
        p, b = self.degree, self.dim
        bucket = h[:, :p] & (b - 1) if b & (b - 1) == 0 else h[:, :p] % b
        sign = 1 - 2 * (h[:, p:] & 1)
        return bucket, sign

    def _table(self, n: int, level: Optional[int]) -> Optional[Tuple[Tensor, Tensor]]:
        r"""Buckets and signs :obj:`[V^n + 1, p]` of every n-gram code, or None if too many.

        The code of gram :math:`(s_1, \ldots, s_n)` of symbol ids is
        :math:`\sum_t s_t V^{n - t}`; code :math:`V^n` is no gram (sign 0).
        :obj:`level` places the grams in that BFS level's block.
        """
        v = len(self._symbols)
        if v**n > _MAX_TABLE:
            return None
        if self._tables_v != v:
            self._code_tables, self._tables_v = {}, v
        key = (n, level)
        if key not in self._code_tables:
            code = torch.arange(v**n)
            digits = torch.stack([(code // v ** (n - 1 - t)) % v for t in range(n)], dim=1)
            bucket, sign = self._hash(digits)
            sign = sign.to(self.dtype)
            if level is not None:
                bucket = (bucket + self.hashes.shift[:, level].cpu()) % self.dim
                sign = sign * self.hashes.flip[:, level].cpu().to(self.dtype)
            # one more code, v^n, for "no gram here": sign 0
            bucket = torch.cat([bucket, torch.zeros_like(bucket[:1])])
            sign = torch.cat([sign, torch.zeros_like(sign[:1])])
            self._code_tables[key] = (bucket, sign)
        return self._code_tables[key]

    def _scatter(self, buf: Tensor, row: Tensor, grams: Tensor, level: Optional[int]):
        """Add the grams' (symbol ids :obj:`[M, n]`) sketches into :obj:`buf [R, p * b]`.

        :obj:`level` places them in that BFS level's block (None: level-free).
        """
        if grams.size(0) == 0:
            return
        n, v = grams.size(1), len(self._symbols)
        if v**n <= _MAX_TABLE:
            code = grams[:, 0]
            for t in range(1, n):
                code = code * v + grams[:, t]
            self._scatter_codes(buf, row, code, n, level)
            return
        bucket, sign = self._hash(grams)
        p, b = self.degree, self.dim
        sign = sign.to(buf.dtype)
        if level is not None:
            bucket = (bucket + self.hashes.shift[:, level].cpu()) % b
            sign = sign * self.hashes.flip[:, level].cpu().to(buf.dtype)
        idx = row.unsqueeze(1) * (p * b) + torch.arange(p) * b + bucket
        buf.view(-1).index_add_(0, idx.view(-1), sign.view(-1))

    def _scatter_codes(self, buf: Tensor, row: Tensor, code: Tensor, n: int, level: Optional[int]):
        """Add n-grams given by code into rows :obj:`row` of :obj:`buf [R, p * b]`.

        Few rows (graphs) are aggregated first: one count per (row, gram).
        """
        if code.numel() == 0:
            return
        bucket, sign = self._table(n, level)
        p, b = self.degree, self.dim
        c = bucket.size(0)
        rows = buf.size(0)
        if rows * c <= _MAX_AGG and code.numel() * p > rows * c // 4:
            count = torch.bincount(torch.add(code, row, alpha=c), minlength=rows * c)
            nz = torch.nonzero(count).view(-1)
            row, code = nz // c, nz % c
            val = sign.index_select(0, code) * count.index_select(0, nz).to(buf.dtype).unsqueeze(1)
        else:
            val = sign.index_select(0, code)
        idx = torch.add(bucket.index_select(0, code), row.unsqueeze(1), alpha=p * b)
        if p > 1:
            idx += torch.arange(p) * b
        buf.view(-1).index_add_(0, idx.view(-1), val.view(-1).to(buf.dtype))

    def _targets(self, node: Tensor) -> Tuple[Tensor, Tensor]:
        """Where grams owned by :obj:`node` go in this pass: (buffer, rows)."""
        if self._needs_node_sketch(self.pass_index):
            return self._arrays["Y"], node
        return self._rows, self._arrays["node_graph"].index_select(0, node)

    def _level(self, level: int) -> Optional[int]:
        """The block grams of pass :obj:`level` go to in this pass's buffer."""
        if self._needs_node_sketch(self.pass_index) or self.traversal == "wl":
            return None  # node sketches are level-free; WL has one block
        return level

    def _emit(self, node: Tensor, grams: Tensor, level: int):
        """Grams of pass :obj:`level` owned by :obj:`node`: into node or graph sketches."""
        buf, rows = self._targets(node)
        self._scatter(buf, rows, grams, self._level(level))

    def _shifted(self, y: Tensor, level: Optional[int]) -> Tensor:
        """Level-free sketches :obj:`[n, p * b]` moved into a BFS level block."""
        if level is None or self.traversal == "wl":
            return y
        p, b = self.degree, self.dim
        parts = y.view(-1, p, b)
        out = torch.empty_like(parts)
        for f in range(p):
            out[:, f] = torch.roll(parts[:, f], int(self.hashes.shift[f, level]), dims=1)
            out[:, f] *= self.hashes.flip[f, level].to(y.dtype)
        return out.view(y.shape)

    # -- input --------------------------------------------------------------

    def update(
        self,
        src,
        src_type,
        dst,
        dst_type,
        edge_type=None,
        graph=None,
    ) -> "KongStream":
        r"""Consume one chunk of edges, in arrival order.

        Args:
            src: Source node ids :obj:`[E]` (integers or strings; node ids are
                per graph: the same id in two graphs is two nodes).
            src_type: Source node types :obj:`[E]` (integers in
                :math:`[0, 2^{58})` or strings).
            dst: Destination node ids :obj:`[E]`.
            dst_type: Destination node types :obj:`[E]`.
            edge_type: Edge types :obj:`[E]` (needed when :obj:`edge_labels`).
            graph: Graph ids :obj:`[E]` (default: all edges in one graph).

        In pass 1 a node's label is its type on its first edge (later types
        of the same node are ignored). In a later pass (after
        :meth:`end_pass`) the chunks must replay the stream of pass 1.
        Bad columns (lengths, dtypes, types) are rejected before any edge is
        consumed; should an update fail midway nonetheless (a later pass
        meeting an unknown node, too many graphs), reload the last checkpoint.
        """
        with torch.no_grad():
            s = self._enc.encode(src, "src")
            d = self._enc.encode(dst, "dst")
            e = s.size
            if d.size != e:
                raise ValueError(f"'dst' has {d.size} entries but 'src' has {e}")
            if graph is None:
                g = np.zeros(e, dtype=np.int64)
            else:
                g = self._enc.encode(graph, "graph")
                if g.size != e:
                    raise ValueError(f"'graph' has {g.size} entries but 'src' has {e}")
            st = _type_labels(src_type, "src_type")
            dt = _type_labels(dst_type, "dst_type")
            if st.size != e or dt.size != e:
                raise ValueError(f"'src_type' and 'dst_type' must have {e} entries")
            et = None
            if self.edge_labels:
                if edge_type is None:
                    raise ValueError("'edge_type' is needed when edge_labels=True")
                et = _type_labels(edge_type, "edge_type")
                if et.size != e:
                    raise ValueError(f"'edge_type' has {et.size} entries but 'src' has {e}")
            parts = [(lo, min(lo + _MAX_SUB, e)) for lo in range(0, e, _MAX_SUB)]
            first_pass = self.pass_index == 1

            def lookup(j):
                lo, hi = parts[j]
                return self._lookup(s[lo:hi], d[lo:hi], g[lo:hi], first_pass)

            # ids of sub-chunk j + 1 are looked up (NumPy, GIL released) while
            # sub-chunk j is processed (PyTorch): two cores busy, one thread each
            pool = self._pool() if len(parts) > 1 and _PIPELINE else None
            ahead = pool.submit(lookup, 0) if pool else None
            for j, (lo, hi) in enumerate(parts):
                if pool:
                    found = ahead.result()
                    if j + 1 < len(parts):
                        ahead = pool.submit(lookup, j + 1)
                else:
                    found = lookup(j)
                self._consume(found, st[lo:hi], dt[lo:hi], None if et is None else et[lo:hi])
                self.position += hi - lo
                if first_pass:
                    self.num_edges += hi - lo
        return self

    def _pool(self):
        if getattr(self, "_executor", None) is None:
            from concurrent.futures import ThreadPoolExecutor

            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kong-stream-ids")
        return self._executor

    def _lookup(self, s: np.ndarray, d: np.ndarray, g: np.ndarray, first_pass: bool) -> tuple:
        """Dense graph and node ids of a sub-chunk (touches only the id tables)."""
        gid, _ = self._graphs.lookup(g, insert=first_pass)
        if not first_pass and (gid < 0).any():
            raise ValueError(f"pass {self.pass_index} met a graph not seen in pass 1: every pass "
                             "must read the same stream")
        if len(self._graphs) > MAX_GRAPHS:
            raise ValueError(f"a stream holds at most {MAX_GRAPHS} graphs")
        key = np.stack([(gid << _RID_BITS) | s, (gid << _RID_BITS) | d], axis=1).reshape(-1)
        ids, first = self._nodes.lookup(key, insert=first_pass)
        if not first_pass and (ids < 0).any():
            raise ValueError(f"pass {self.pass_index} met a node not seen in pass 1: every pass "
                             "must read the same stream")
        return gid, ids, first, len(self._graphs), len(self._nodes)

    def _consume(self, found: tuple, st, dt, et):
        gid, ids, first, n_graphs, n_nodes = found
        first_pass = self.pass_index == 1
        self._grow_graphs(n_graphs)
        if first.size:
            n0 = self._n
            self._grow_nodes(n_nodes)
            self._n = n_nodes
            types = np.stack([st, dt], axis=1).reshape(-1)[first]
            self._arrays["node_graph"][n0:n_nodes] = torch.from_numpy(gid[first // 2])
            self._arrays["node_sym"][n0:n_nodes] = self._symbol_ids(2 * types)
        esym = None if et is None else self._symbol_ids(2 * et + 1)
        if self.hops == 0 or ids.size == 0:
            return
        ends = torch.from_numpy(ids)
        if first_pass:
            self._first_pass_chunk(ends, esym)
            return
        if self.undirected:
            owner = ends
            nbr = ends.view(-1, 2).flip(1).reshape(-1)
            esym = None if esym is None else esym.repeat_interleave(2)
        else:
            owner, nbr = ends[0::2].clone(), ends[1::2].clone()
        self._later_pass_chunk(owner, nbr, esym)

    # -- pass 1: the pieces are single symbols --------------------------------

    def _first_pass_chunk(self, ends: Tensor, esym: Optional[Tensor]):
        r"""Append each incidence's symbols (edge type, neighbor label) to its owner.

        In pass 1 every piece is one symbol, so an owner's string is a plain
        symbol sequence: the new n-grams are the windows ending at a new
        symbol of :obj:`suffix(s_v) + new symbols` (1-grams: the new symbols,
        i.e. the edge symbols and the neighbors' :math:`Y^{(0)}`). Windows
        are read off one array holding, per owner, its stored suffix
        (right-aligned in :math:`k - 1` slots, ``BREAK`` where the string is
        shorter) followed by its new symbols.

        Args:
            ends (torch.Tensor): :obj:`[2E]` node ids, source and destination
                of each edge in turn.
            esym (torch.Tensor, optional): :obj:`[E]` edge symbol ids.
        """
        k, h = self.k, self.k - 1
        take = torch.index_select
        if self.undirected:  # incidence 2e: source sees destination; 2e + 1: the reverse
            so, perm = _sort_by_owner(ends)
            nb, edge = take(ends, 0, perm ^ 1), perm >> 1
        else:
            so, perm = _sort_by_owner(ends[0::2])
            nb, edge = take(ends, 0, 2 * perm + 1), perm
        m = so.numel()
        lab = take(self._arrays["node_sym"], 0, nb)
        syms = [lab] if esym is None else [take(esym, 0, edge), lab]
        w = len(syms)
        buf, rows = self._targets(so)
        level = self._level(1)
        v = len(self._symbols)
        if 1 in self.lengths:
            for sym in syms:
                self._scatter(buf, rows, sym.view(-1, 1), level)
        if k == 1:
            return
        change = torch.ones(m, dtype=torch.bool)
        change[1:] = so[1:] != so[:-1]
        run_id = torch.cumsum(change, 0) - 1
        starts = torch.nonzero(change).view(-1)
        u = starts.numel()
        run_node = take(so, 0, starts)
        count = torch.diff(starts, append=torch.tensor([m]))
        old_len = take(self._arrays["seg_len"], 0, run_node)
        kept = old_len.clamp(max=h)
        head_start = torch.add(torch.arange(u) * h, starts, alpha=w)
        total = u * h + m * w
        seq = torch.empty(total, dtype=torch.long)
        base = torch.add(torch.arange(m) * w, run_id, alpha=h) + h  # incidence j's first symbol
        for t, sym in enumerate(syms):
            seq.index_copy_(0, base + t if t else base, sym)
        suffix = take(self._arrays["seg_suf"], 0, run_node)
        for q in range(h):  # the stored suffix, right-aligned before the new symbols
            src = q - h + kept
            head = suffix.gather(1, src.clamp(min=0).view(-1, 1)).view(-1)
            seq.index_copy_(0, head_start + q, head.masked_fill_(src < 0, BREAK))
        table_ok = all(v**n <= _MAX_TABLE for n in self.lengths)
        for n in self.lengths:
            if n < 2:
                continue
            for t_end in range(w):  # windows ending at symbol t_end of each incidence
                before = n - 1 - t_end  # symbols of the window before this incidence
                parts = [take(seq, 0, base - j) for j in range(before, 0, -1)]
                parts += syms[max(0, -before) : t_end + 1]
                bad = None
                for part in parts[:before]:  # BREAK: the owner's string is too short
                    bad = part < 0 if bad is None else bad | (part < 0)
                if table_ok:
                    code = parts[0]
                    for part in parts[1:]:
                        code = torch.add(part, code, alpha=v)
                    if bad is not None:
                        code = code.masked_fill_(bad, v**n)
                    self._scatter_codes(buf, rows, code, n, level)
                else:
                    grams, r = torch.stack(parts, dim=1), rows
                    if bad is not None:
                        grams, r = grams[~bad], rows[~bad]
                    self._scatter(buf, r, grams, level)
        # the owners' new string states
        new_len = (old_len + w * count).clamp(max=k)
        keep = new_len.clamp(max=h)
        end = head_start + h + w * count  # one past the run's last symbol
        last = total - 1
        suf = torch.stack([torch.where(keep > q, seq[(end - keep + q).clamp(max=last)],
                                       torch.full_like(keep, BREAK)) for q in range(h)], dim=1)
        short = torch.nonzero(old_len < h).view(-1)  # prefixes change only while short
        if short.numel():
            begin = head_start[short] + h - kept[short]
            ks = keep[short]
            pre = torch.stack([torch.where(ks > q, seq[(begin + q).clamp(max=last)],
                                           torch.full_like(ks, BREAK)) for q in range(h)], dim=1)
            self._arrays["seg_pre"][run_node[short]] = pre
        self._arrays["seg_len"][run_node] = new_len
        self._arrays["seg_suf"][run_node] = suf

    # -- pass i >= 2: the pieces are the neighbors' previous strings ----------

    def _later_pass_chunk(self, owner: Tensor, nbr: Tensor, esym: Optional[Tensor]):
        k = self.k
        level = self.pass_index
        if esym is not None and 1 in self.lengths:
            self._emit(owner, esym.view(-1, 1), level)
        if self._needs_node_sketch(level):
            y, prev = self._arrays["Y"], self._arrays["Yprev"]
            step = max(1, (1 << 22) // (self.degree * self.dim))
            for lo in range(0, owner.numel(), step):
                _add_rows(y, owner[lo : lo + step], prev[nbr[lo : lo + step]])
        else:
            w = self._arrays["nbr_w"]
            w.index_add_(0, nbr, torch.ones(nbr.numel(), dtype=w.dtype))
        if k == 1:
            return
        so, perm = _sort_by_owner(owner)
        m = so.numel()
        nb = nbr[perm]
        change = torch.ones(m, dtype=torch.bool)
        change[1:] = so[1:] != so[:-1]
        starts = torch.nonzero(change).view(-1)
        u = starts.numel()
        run_id = torch.cumsum(change.long(), 0) - 1
        run_node = so[starts]
        w = 1 + int(esym is not None)
        # items: per run its string so far, then per incidence [edge symbol] neighbor string
        n_items = u + m * w
        item_owner = torch.empty(n_items, dtype=torch.long)
        length = torch.empty(n_items, dtype=torch.long)
        pre = torch.empty(n_items, k - 1, dtype=torch.long)
        suf = torch.empty(n_items, k - 1, dtype=torch.long)
        head = starts * w + torch.arange(u)
        seg = self._strings("seg", run_node)
        item_owner[head], length[head] = torch.arange(u), seg.length
        pre[head], suf[head] = seg.prefix, seg.suffix
        base = torch.arange(m) * w + run_id + 1
        if esym is not None:
            one = initial_state(esym[perm], k)
            item_owner[base], length[base], pre[base], suf[base] = run_id, one.length, one.prefix, one.suffix
        at = base + w - 1
        prev = self._strings("prev", nb)
        item_owner[at], length[at], pre[at], suf[at] = run_id, prev.length, prev.prefix, prev.suffix
        crossing, state = concat_pieces(item_owner, StringState(length, pre, suf), u, k, self.lengths)
        for n in sorted(crossing):
            self._emit(run_node[crossing[n].node], crossing[n].grams, level)
        self._set_strings("seg", run_node, state)

    # -- strings with the WL label in front -----------------------------------

    def _label_head(self, nodes: Tensor) -> Tuple[dict, StringState]:
        """WL: :math:`l(v)` followed by the segment string, for :obj:`nodes`.

        Returns the n-grams that cross from the label into the segment (and
        the label's 1-gram), owner = position in :obj:`nodes`, and the states.
        """
        k, n = self.k, nodes.numel()
        label = self._arrays["node_sym"][nodes]
        local = torch.arange(n)
        out = {1: (local, label.view(-1, 1))} if 1 in self.lengths else {}
        if k == 1:
            return out, None
        one = initial_state(label, k)
        seg = self._strings("seg", nodes)
        pieces = StringState(
            torch.stack([one.length, seg.length], 1).view(-1),
            torch.stack([one.prefix, seg.prefix], 1).view(-1, k - 1),
            torch.stack([one.suffix, seg.suffix], 1).view(-1, k - 1),
        )
        crossing, state = concat_pieces(local.repeat_interleave(2), pieces, n, k, self.lengths)
        for ln, occ in crossing.items():
            out[ln] = (occ.node, occ.grams)
        return out, state

    # -- passes -------------------------------------------------------------

    def end_pass(self) -> "KongStream":
        r"""Close pass :math:`i < h`: fix :math:`s^i` and start pass :math:`i + 1`.

        Call it after the whole stream was read in pass :math:`i` (:meth:`fit`
        does); the next :meth:`update` calls must replay the same stream.
        """
        if self.pass_index >= self.num_passes:
            raise ValueError(f"pass {self.pass_index} is the last of {self.num_passes} "
                             f"(hops={self.hops}); there is no next pass")
        with torch.no_grad():
            i, n = self.pass_index, self._n
            y = self._arrays["Y"]
            nodes = torch.arange(n)
            if self.traversal == "wl":
                grams, full = self._label_head(nodes)
                for occ_node, g in grams.values():
                    self._scatter(y, occ_node, g, None)
            else:
                full = self._strings("seg") if self.k > 1 else None
            if self.traversal == "bfs":
                step = max(1, (1 << 22) // (self.degree * self.dim))
                if "acc" not in self._arrays and not self.linear:
                    self._add_array("acc", (self.degree * self.dim,), self.dtype, 0)
                for lo in range(0, n, step):
                    hi = min(lo + step, n)
                    part = self._shifted(y[lo:hi], i)
                    if self.linear:
                        _add_rows(self._rows, self._arrays["node_graph"][lo:hi], part)
                    else:
                        self._arrays["acc"][lo:hi] += part
            if "prev_len" not in self._arrays:
                self._add_string_arrays("prev")
            if full is not None:
                self._set_strings("prev", slice(0, n), full)
            self._arrays["Yprev"] = y
            self._fill["Yprev"] = 0
            self.pass_index = i + 1
            if self._needs_node_sketch(i + 1):
                self._arrays["Y"] = torch.zeros_like(y)
            else:
                del self._arrays["Y"]
                self._add_array("nbr_w", (), self.dtype, 0)
            for name in ("seg_len", "seg_pre", "seg_suf"):
                self._arrays[name].fill_(self._fill[name])
            self.position = 0
        return self

    # -- output -------------------------------------------------------------

    def sketches(self) -> Tensor:
        r"""The graph features :obj:`[num_graphs, dim]` of what was read.

        With :math:`h \leq 1` at any moment (the stream so far); with
        :math:`h \geq 2` once the last pass has read the whole stream.
        """
        if self.pass_index != self.num_passes:
            raise ValueError(
                f"the sketches need {self.num_passes} passes (hops={self.hops}) but the stream "
                f"is in pass {self.pass_index}; read it again after end_pass(), or use fit()"
            )
        with torch.no_grad():
            if self.linear:
                return self._linear_sketches()
            return self._node_map_sketches()

    def _final_grams(self, nodes: Tensor):
        """(owner, grams, level) added at output: labels and WL label crossings."""
        if self.traversal == "bfs" or self.hops == 0:
            if 1 in self.lengths:
                yield torch.arange(nodes.numel()), self._arrays["node_sym"][nodes].view(-1, 1), 0
            return
        grams, _ = self._label_head(nodes)
        for owner, g in grams.values():
            yield owner, g, self.hops

    def _linear_sketches(self) -> Tensor:
        g, n, b = self.num_graphs, self._n, self.dim
        out = self._rows[:g].clone()
        graph = self._arrays["node_graph"][:n]
        step = 1 << 20
        for lo in range(0, n, step):
            nodes = torch.arange(lo, min(lo + step, n))
            for owner, grams, level in self._final_grams(nodes):
                lv = level if self.traversal == "bfs" else None
                self._scatter(out, graph[nodes][owner], grams, lv)
        if self.hops >= 2:
            w, prev = self._arrays["nbr_w"], self._arrays["Yprev"]
            step = max(1, (1 << 22) // b)
            for lo in range(0, n, step):
                hi = min(lo + step, n)
                part = self._shifted(prev[lo:hi] * w[lo:hi].view(-1, 1), self.hops)
                _add_rows(out, graph[lo:hi], part)
        if self.const > 0:
            bucket, sign = self.hashes.const_token()
            sizes = torch.bincount(graph, minlength=g).to(out.dtype)
            out[:, int(bucket[0])] += float(sign[0]) * math.sqrt(self.const) * sizes
        return out

    def _node_map_sketches(self) -> Tensor:
        g, n, p, b = self.num_graphs, self._n, self.degree, self.dim
        out = torch.zeros(g, b, dtype=torch.float64)
        graph = self._arrays["node_graph"]
        step = max(1, (1 << 22) // (p * b))
        for lo in range(0, n, step):
            hi = min(lo + step, n)
            nodes = torch.arange(lo, hi)
            c = torch.zeros(hi - lo, p * b, dtype=torch.float64)
            for owner, grams, level in self._final_grams(nodes):
                self._scatter(c, owner, grams, level if self.traversal == "bfs" else None)
            if self.hops >= 1:
                c += self._shifted(self._arrays["Y"][lo:hi].to(torch.float64), self.hops)
            if "acc" in self._arrays:
                c += self._arrays["acc"][lo:hi]
            cs = c.view(hi - lo, p, b).permute(1, 0, 2)
            scale = None
            if self.kernel == "cosine":
                scale = inverse_or_zero(cs.pow(2).sum(-1).mean(0).sqrt()).pow(p).unsqueeze(1)
            elif self.const > 0:
                bucket, sign = self.hashes.const_token()
                cs[torch.arange(p), :, bucket] += sign.view(-1, 1) * math.sqrt(self.const)
            ts = tensor_sketch(cs)
            if scale is not None:
                ts = ts * scale
            _add_rows(out, graph[lo:hi], ts)
        return out.to(self.dtype)

    # -- state --------------------------------------------------------------

    def state_dict(self) -> dict:
        """Everything needed to resume: configuration, id tables, node states.

        Holds only tensors, numbers, strings, lists and dicts (loads with
        :obj:`torch.load(..., weights_only=True)`); its size grows with the
        number of nodes and graphs, never with the number of edges.
        """
        cfg = self.config()
        cfg["dtype"] = str(self.dtype).replace("torch.", "")
        n, g = self._n, self.num_graphs
        return {
            "version": _STATE_VERSION,
            "config": cfg,
            "pass_index": self.pass_index,
            "position": self.position,
            "num_edges": self.num_edges,
            "encoder": self._enc.state(),
            "graphs": torch.from_numpy(self._graphs.keys.copy()),
            "nodes": torch.from_numpy(self._nodes.keys.copy()),
            "symbols": torch.from_numpy(self._symbols.keys.copy()),
            "arrays": {name: t[:n].clone() for name, t in self._arrays.items()},
            "rows": self._rows[:g].clone(),
        }

    def load_state_dict(self, state: dict) -> "KongStream":
        """Restore :meth:`state_dict` (the configuration must be the same)."""
        if state.get("version") != _STATE_VERSION:
            raise ValueError(f"unsupported KongStream state version {state.get('version')!r}")
        mine = self.config()
        mine["dtype"] = str(self.dtype).replace("torch.", "")
        if state["config"] != mine:
            diff = {k: (v, mine.get(k)) for k, v in state["config"].items() if mine.get(k) != v}
            raise ValueError(f"the state was made with other options (saved, current): {diff}")
        self.reset()
        self.pass_index = int(state["pass_index"])
        self.position = int(state["position"])
        self.num_edges = int(state["num_edges"])
        self._enc = _Encoder.from_state(state["encoder"])
        self._graphs = IdMap.from_keys(state["graphs"].numpy())
        self._nodes = IdMap.from_keys(state["nodes"].numpy())
        self._symbols = IdMap.from_keys(state["symbols"].numpy())
        n = len(self._nodes)
        self._n = self._cap = n
        fills = {"seg_pre": BREAK, "seg_suf": BREAK, "prev_pre": BREAK, "prev_suf": BREAK}
        self._arrays = {name: t.clone() for name, t in state["arrays"].items()}
        self._fill = {name: fills.get(name, 0) for name in self._arrays}
        self._rows = state["rows"].clone()
        return self

    @classmethod
    def from_state_dict(cls, state: dict) -> "KongStream":
        """A stream rebuilt from :meth:`state_dict`."""
        cfg = dict(state["config"])
        cfg["dtype"] = getattr(torch, cfg["dtype"])
        return cls(**cfg).load_state_dict(state)

    def copy(self) -> "KongStream":
        """An independent copy."""
        return self.from_state_dict(self.state_dict())

    def save(self, path: Union[str, os.PathLike]) -> None:
        """Write :meth:`state_dict` to :obj:`path` atomically.

        The state goes to a temporary file in the same folder, flushed to
        disk, then renamed over :obj:`path`: a run killed at any moment
        leaves the previous checkpoint or the new one, never a torn file.
        """
        path = os.fspath(path)
        folder = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".kong-stream-", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "wb") as f:
                torch.save(self.state_dict(), f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    @classmethod
    def load(cls, path: Union[str, os.PathLike]) -> "KongStream":
        """A stream restored from a file written by :meth:`save`."""
        return cls.from_state_dict(torch.load(path, weights_only=True))

    # -- whole sources --------------------------------------------------------

    def fit(
        self,
        source,
        chunk_size: int = 1 << 20,
        checkpoint: Optional[Union[str, os.PathLike]] = None,
        checkpoint_every: int = 1,
        progress: bool = False,
    ) -> "KongStream":
        r"""Read a whole source, all passes, optionally with checkpoints.

        Args:
            source: The stream: an object with :obj:`src`, :obj:`src_type`,
                :obj:`dst`, :obj:`dst_type`, :obj:`edge_type` and :obj:`graph`
                columns (an :class:`~kong_pyg.datasets.EdgeStream`; read in
                slices of :obj:`chunk_size`), a list of chunks, or a callable
                returning a fresh iterable of chunks; a one-shot iterator only
                when one pass suffices (:obj:`hops <= 1`). A chunk is such an
                object, a dict with those keys, or a tuple
                :obj:`(src, src_type, dst, dst_type, edge_type[, graph])`.
            chunk_size (int, optional): Edges per slice of a column source.
            checkpoint (str, optional): A file: if it exists, the stream
                resumes from it (skipping the edges its pass already read);
                the state is saved there every :obj:`checkpoint_every` chunks,
                at every pass end and at the end.
            checkpoint_every (int, optional): Chunks between checkpoints.
            progress (bool, optional): A progress bar (edges/s) on stderr.
        """
        check_int("chunk_size", chunk_size, 1)
        check_int("checkpoint_every", checkpoint_every, 1)
        fresh = _chunk_source(source, chunk_size, self.num_passes)
        if checkpoint is not None and os.path.exists(checkpoint):
            self.load_state_dict(torch.load(checkpoint, weights_only=True))
        bar = None
        if progress:
            from tqdm.auto import tqdm

            total = getattr(source, "num_edges", None)
            bar = tqdm(total=total, unit="edge", unit_scale=True, file=sys.stderr, dynamic_ncols=True)
        try:
            while True:
                if bar is not None:
                    bar.reset(total=bar.total)
                    bar.set_description(f"pass {self.pass_index}/{self.num_passes}")
                skip, chunks = self.position, 0
                for chunk in fresh():
                    cols = _chunk_columns(chunk)
                    e = len(cols[0])
                    if skip >= e:
                        skip -= e
                        if bar is not None:
                            bar.update(e)
                        continue
                    if skip:
                        cols = tuple(None if c is None else c[skip:] for c in cols)
                        if bar is not None:
                            bar.update(skip)
                        e -= skip
                        skip = 0
                    self.update(*cols)
                    if bar is not None:
                        bar.update(e)
                    chunks += 1
                    if checkpoint is not None and chunks % checkpoint_every == 0:
                        self.save(checkpoint)
                if skip:
                    raise ValueError(f"the source has fewer edges than the checkpoint's position "
                                     f"({self.position}) in pass {self.pass_index}")
                if self.pass_index == self.num_passes:
                    break
                self.end_pass()
                if checkpoint is not None:
                    self.save(checkpoint)
            if checkpoint is not None:
                self.save(checkpoint)
        finally:
            if bar is not None:
                bar.close()
        return self

    # -- merging ------------------------------------------------------------

    def merge(self, other: "KongStream") -> "KongStream":
        """The state of this stream followed by :obj:`other` (see :func:`merge_streams`)."""
        return merge_streams(self, other)


_COLUMNS = ("src", "src_type", "dst", "dst_type", "edge_type", "graph")


def _chunk_columns(chunk) -> tuple:
    """The six columns of a chunk (tuple, dict or object with attributes)."""
    if isinstance(chunk, dict):
        return tuple(chunk.get(c) for c in _COLUMNS)
    if all(hasattr(chunk, c) for c in _COLUMNS[:4]):  # EdgeStream, EdgeChunk, ...
        return tuple(getattr(chunk, c, None) for c in _COLUMNS)
    if isinstance(chunk, (tuple, list)):
        if len(chunk) not in (5, 6):
            raise ValueError("a chunk tuple must be (src, src_type, dst, dst_type, edge_type[, graph])")
        return tuple(chunk) + (None,) * (6 - len(chunk))
    raise TypeError(f"cannot read a chunk of edges from {type(chunk).__name__}")


def _chunk_source(source, chunk_size: int, passes: int) -> Callable[[], Iterable]:
    """A function returning a fresh iterable of chunks of :obj:`source`."""
    if all(hasattr(source, c) for c in _COLUMNS[:4]):
        cols = _chunk_columns(source)
        total = len(cols[0])

        def slices():
            for lo in range(0, total, chunk_size):
                yield tuple(None if c is None else c[lo : lo + chunk_size] for c in cols)

        return slices
    if callable(source):
        return source
    if isinstance(source, (list, tuple)):
        return lambda: source
    if isinstance(source, Iterable):
        if passes > 1:
            raise ValueError(f"hops={passes} reads the stream {passes} times: pass a re-iterable "
                             "source (a list of chunks, an EdgeStream or a callable returning a fresh "
                             "iterator), not a one-shot iterator")
        used = []

        def once():
            if used:
                raise ValueError("a one-shot iterator cannot be read again")
            used.append(True)
            return source

        return once
    raise TypeError(f"cannot read edges from {type(source).__name__}")


def merge_streams(a: KongStream, b: KongStream) -> KongStream:
    r"""The state of stream A followed by stream B, from their states alone.

    Per node, the string over A followed by B is the concatenation of the two
    strings; its k-grams are A's, B's and those that cross the seam, which lie
    in A's suffix codes and B's prefix codes. So the merged state sums the
    sketches (node or graph rows), hashes in the seam k-grams, and joins the
    codes (:func:`~kong_pyg.kgrams.concat_pieces`); graphs and nodes first
    seen in B are appended in B's order, as in one run over A then B. For
    consecutive time shards the result equals the state of the whole stream,
    so shards can be read in parallel (even on other machines) and merged in
    time order (the operation is associative).

    Both states must be in pass 1 (:obj:`hops <= 1`, or the first pass of a
    deeper stream) with the same options. A node's label is its type in A
    when A saw it.

    Args:
        a (KongStream): The earlier shard.
        b (KongStream): The later shard.

    Returns:
        KongStream: A new stream (the inputs are left unchanged).
    """
    if not isinstance(a, KongStream) or not isinstance(b, KongStream):
        raise TypeError("merge_streams() takes two KongStream objects")
    if a.config() != b.config():
        raise ValueError(f"cannot merge streams with different options: {a!r} and {b!r}")
    if a.pass_index != 1 or b.pass_index != 1:
        raise ValueError("only pass-1 states merge (hops <= 1, or the first pass of a deeper stream)")
    out = a.copy()
    with torch.no_grad():
        enc = out._enc
        # B's encoded ids -> out's encoded ids
        def rekey(keys: np.ndarray) -> np.ndarray:
            keys = keys.copy()
            rid = keys & ((1 << _RID_BITS) - 1)
            other = rid >= _PLAIN
            if other.any():
                rid[other] = enc.encode(b._enc.decode(rid[other]), "ids")
            return (keys >> _RID_BITS << _RID_BITS) | rid

        gmap, _ = out._graphs.lookup(rekey(b._graphs.keys))
        if len(out._graphs) > MAX_GRAPHS:
            raise ValueError(f"a stream holds at most {MAX_GRAPHS} graphs")
        out._grow_graphs(len(out._graphs))
        bkeys = rekey(b._nodes.keys)
        bkeys = (gmap[bkeys >> _RID_BITS] << _RID_BITS) | (bkeys & ((1 << _RID_BITS) - 1))
        ids, first = out._nodes.lookup(bkeys)
        smap = torch.from_numpy(out._symbols.lookup(b._symbols.keys)[0])
        n0, n1 = out._n, len(out._nodes)
        out._grow_nodes(n1)
        out._n = n1
        ids_t = torch.from_numpy(ids)
        new = torch.from_numpy(first)
        bnode_graph = torch.from_numpy(gmap)[b._arrays["node_graph"][: b._n]]
        out._arrays["node_graph"][n0:n1] = bnode_graph[new]
        out._arrays["node_sym"][n0:n1] = smap[b._arrays["node_sym"][: b._n][new]]

        def remap(t: Tensor) -> Tensor:
            return torch.where(t >= 0, smap[t.clamp(min=0)], t)

        if out.k > 1 and b._n:
            bseg = b._strings("seg")
            bseg = StringState(bseg.length, remap(bseg.prefix), remap(bseg.suffix))
            aseg = out._strings("seg", ids_t)
            owner = torch.arange(b._n).repeat_interleave(2)
            pieces = StringState(
                torch.stack([aseg.length, bseg.length], 1).view(-1),
                torch.stack([aseg.prefix, bseg.prefix], 1).view(-1, out.k - 1),
                torch.stack([aseg.suffix, bseg.suffix], 1).view(-1, out.k - 1),
            )
            crossing, state = concat_pieces(owner, pieces, b._n, out.k, out.lengths)
            for n in sorted(crossing):
                out._emit(ids_t[crossing[n].node], crossing[n].grams, 1)
            out._set_strings("seg", ids_t, state)
        if "Y" in b._arrays:
            _add_rows(out._arrays["Y"], ids_t, b._arrays["Y"][: b._n])
        if out.linear and b.num_graphs:
            _add_rows(out._rows, torch.from_numpy(gmap), b._rows[: b.num_graphs])
        out.position = a.position + b.position
        out.num_edges = a.num_edges + b.num_edges
    return out


__all__ = ["KongStream", "merge_streams", "MAX_GRAPHS"]
