r"""Per-node arrays of a stream, and row additions.

A stream keeps, per node, a few named arrays (:class:`NodeState`): its graph
index (``node_graph``), its label symbol (``node_sym``), the string codes of
the current pass (``seg_len``, ``seg_pre``, ``seg_suf``; see
:class:`~kong_pyg.kgrams.StringState`) and, where the kernel needs them,
sketches (``Y``; ``Yprev``, ``prev_*``, ``acc``, ``nbr_w`` after pass 1;
the linear map at :math:`h = 2` keeps ``nbr_w`` from pass 1 on and the
replayed strings ``rep_*`` of pass 1 in pass 2 instead of sketches).
Their names are those of a stream's :meth:`~kong_pyg.KongStream.state_dict`.
The integer arrays are :data:`INDEX_DTYPE` in memory (half the bytes that
every edge's gathers and additions move, which bound a pass on the CPU) and
``int64`` in a :meth:`~kong_pyg.KongStream.state_dict`.
"""
import math
from typing import Dict, Optional, Tuple, Union

import torch
from torch import Tensor

from ..hashing import BREAK
from ..kgrams import StringState
from ..memory import gib, mapped_zeros, shortfall, what_is_left

Index = Union[Tensor, slice, Tuple[Tensor, int]]

#: The dtype of the per-node integer arrays (graph indices, symbol ids, string codes and lengths).
INDEX_DTYPE = torch.int32
#: The dtype of the neighbor counts ``nbr_w`` (exact to :math:`2^{53}`, whatever the sketches' dtype).
COUNT_DTYPE = torch.float64


def add_rows(buf: Tensor, rows: Tensor, src: Tensor) -> None:
    """:obj:`buf[rows[i]] += src[i]` for 2-D tensors (repeated rows add up).

    PyTorch's 2-D :meth:`index_add_` when :obj:`buf` is not much larger than
    :obj:`src` (summing many rows into few: graph rows); otherwise a flat
    1-D one, as the 2-D one's cost on CPU follows the size of :obj:`buf`.
    """
    if rows.numel() == 0:
        return
    if buf.numel() <= 4 * src.numel():
        buf.index_add_(0, rows, src.to(buf.dtype))
        return
    d = buf.size(1)
    idx = (rows.long() * d).unsqueeze(1) + torch.arange(d, device=rows.device)
    buf.view(-1).index_add_(0, idx.view(-1), src.reshape(-1).to(buf.dtype))


def _gather_rows(t: Tensor, index: Tensor) -> Tensor:
    """:obj:`t[index]` for a 1-D :obj:`index` (rows of one entry gathered as a 1-D array)."""
    if t.dim() == 2 and t.size(1) == 1:
        return t.view(-1).index_select(0, index).view(-1, 1)
    return t.index_select(0, index)


def row_blocks(n: int, width: int, budget: int = 1 << 22) -> Tuple[Tuple[int, int], ...]:
    """Ranges :obj:`(lo, hi)` of :obj:`n` rows of :obj:`width` entries, about :obj:`budget` entries each."""
    step = max(1, budget // max(width, 1))
    return tuple((lo, min(lo + step, n)) for lo in range(0, n, step))


def check_memory(nbytes: int, what: str) -> None:
    """Refuse (:class:`MemoryError`) an allocation larger than the memory available.

    Checked only for allocations of 256 MiB or more: a clear error instead
    of the out-of-memory killer.
    """
    free = shortfall(nbytes)
    if free is None:
        return
    raise MemoryError(f"KongStream: {what} needs {gib(nbytes)} but {what_is_left(free)} (a smaller 'dim' or "
                      "'degree', fewer nodes and graphs, or KongStream(dtype=torch.float32) in Python, exact "
                      "while entries stay below 2^24; node sketches take p * b numbers per node, see "
                      "kong_pyg.stream)")


#: Graph rows beyond those in use are reserved up to this many bytes (then up to twice the rows in use).
RESERVE_BYTES = 1 << 30


def grow_rows(rows: Tensor, g: int) -> Tensor:
    """:obj:`rows` :obj:`[G, b]` with at least :obj:`g` rows (zeros appended, capacity doubled).

    Rows not yet written take no memory (:func:`~kong_pyg.memory.mapped_zeros`): the doubled
    capacity costs the rows in use, not twice them (and while the old rows are copied, twice,
    not three times).
    """
    if g <= rows.size(0):
        return rows
    row_bytes = max(rows.size(1) * rows.element_size(), 1)
    cap = max(g, 2 * rows.size(0), 64)
    # (rows of hundreds of MiB, a huge dim: room for 2 g at most, not 64 rows: the mapping reserves address
    # space, and the check below counts what it reserves)
    cap = max(g, min(cap, max(2 * g, RESERVE_BYTES // row_bytes)))
    room = f" (room for {cap:,})" if cap > g else ""
    check_memory(cap * row_bytes, f"graph rows for {g:,} graphs{room}")
    new = mapped_zeros(cap, rows.size(1), rows.dtype)
    new[: rows.size(0)] = rows
    return new


def filled(rows: int, shape: Tuple[int, ...], dtype: torch.dtype, fill: float) -> Tensor:
    """:obj:`[rows, *shape]` holding :obj:`fill`; zeros as pages mapped on first write.

    A node array's capacity beyond its nodes in use, and a new pass's node
    sketches before the pass reaches a node, so take memory only as they are
    written (:func:`~kong_pyg.memory.mapped_zeros`), like the graph rows.
    """
    if fill == 0:
        return mapped_zeros(rows, math.prod(shape), dtype).view(rows, *shape)
    return torch.full((rows, *shape), fill, dtype=dtype)


class NodeState:
    """Named per-node arrays, rows :obj:`0..n-1` in use, capacity grown geometrically.

    Args:
        k (int): The k-gram length (string codes hold :math:`k - 1` symbols).
    """

    def __init__(self, k: int):
        self.k = k
        #: The number of nodes.
        self.n = 0
        self.cap = 0
        self.arrays: Dict[str, Tensor] = {}
        self.fill: Dict[str, float] = {}

    def __getitem__(self, name: str) -> Tensor:
        return self.arrays[name]

    def __contains__(self, name: str) -> bool:
        return name in self.arrays

    def add(self, name: str, shape: Tuple[int, ...], dtype: torch.dtype, fill: float) -> None:
        """A new array :obj:`[cap, *shape]` filled with :obj:`fill` (the fill of rows added later)."""
        self.arrays[name] = filled(self.cap, shape, dtype, fill)
        self.fill[name] = fill

    def put(self, name: str, value: Tensor, fill: float = 0) -> None:
        """Store :obj:`value` (all :obj:`cap` rows) as array :obj:`name`."""
        self.arrays[name] = value
        self.fill[name] = fill

    def drop(self, name: str) -> None:
        """Forget array :obj:`name`."""
        del self.arrays[name], self.fill[name]

    def add_strings(self, prefix: str) -> None:
        """The three arrays of a :class:`~kong_pyg.kgrams.StringState` (empty strings)."""
        self.add(prefix + "_len", (), INDEX_DTYPE, 0)
        self.add(prefix + "_pre", (self.k - 1,), INDEX_DTYPE, BREAK)
        self.add(prefix + "_suf", (self.k - 1,), INDEX_DTYPE, BREAK)

    def strings(self, prefix: str, index: Optional[Index] = None) -> StringState:
        """The string codes of nodes :obj:`index` (default: all), as ``int64``."""
        if index is None:
            index = slice(0, self.n)
        a = self.arrays
        names = (prefix + "_len", prefix + "_pre", prefix + "_suf")
        if isinstance(index, Tensor) and index.dim() == 1 and index.dtype != torch.bool:
            # (a 1-D gather: indexing a 2-D array by rows is several times slower, even [N, 1])
            length, pre, suf = (_gather_rows(a[name], index).long() for name in names)
        else:
            length, pre, suf = (a[name][index].long() for name in names)
        return StringState(length, pre, suf)

    def set(self, name: str, index: Index, value: Tensor) -> None:
        """:obj:`array[index] = value`, in the array's dtype (node indices: one copy per row)."""
        t = self.arrays[name]
        if isinstance(index, tuple):  # (nodes, column)
            t = t.select(1, index[1])
            index = index[0]
        if isinstance(index, Tensor) and (index.dtype == torch.bool or index.is_floating_point()):
            raise TypeError(f"node indices must be integers (got {index.dtype})")
        if isinstance(index, Tensor) and index.dim() == 1 and value.dim() == t.dim():
            t.index_copy_(0, index.long(), value.to(t.dtype))
        else:
            t[index] = value.to(t.dtype)

    def set_strings(self, prefix: str, index: Index, state: StringState) -> None:
        """Store the string codes of nodes :obj:`index`."""
        self.set(prefix + "_len", index, state.length)
        self.set(prefix + "_pre", index, state.prefix)
        self.set(prefix + "_suf", index, state.suffix)

    def clear_strings(self, prefix: str) -> None:
        """Every node's string empty again."""
        for name in (prefix + "_len", prefix + "_pre", prefix + "_suf"):  # (rows past n hold the fill)
            self.arrays[name][: self.n].fill_(self.fill[name])

    def grow(self, n: int) -> None:
        """Room for :obj:`n` nodes, and :obj:`n` nodes in use (new rows hold the fills)."""
        if n > self.cap:
            cap = max(n, 2 * self.cap, 1024)
            # (a row's size from the shape: t[:1] of an array without rows is empty, and counted 0)
            per_node = sum(math.prod(t.shape[1:]) * t.element_size() for t in self.arrays.values())
            check_memory(cap * per_node, f"the state of {n:,} nodes")
            for name, t in self.arrays.items():
                if self.fill[name] == 0:  # (the new rows' pages are mapped as they are written)
                    new = filled(cap, tuple(t.shape[1:]), t.dtype, 0)
                else:
                    new = torch.empty((cap, *t.shape[1:]), dtype=t.dtype)
                    new[self.cap :].fill_(self.fill[name])
                new[: self.cap] = t[: self.cap]
                self.arrays[name] = new
            self.cap = cap
        self.n = max(self.n, n)

    def state(self) -> Dict[str, Tensor]:
        """Copies of the rows in use of every array (the integer ones as ``int64``)."""
        return {name: t[: self.n].clone() if t.is_floating_point() else t[: self.n].to(torch.long, copy=True)
                for name, t in self.arrays.items()}

    @classmethod
    def from_state(cls, k: int, arrays: Dict[str, Tensor], n: int, assign: bool = False) -> "NodeState":
        """Rebuild :obj:`n` nodes from :meth:`state` (string codes fill with ``BREAK``, the rest with 0).

        With :obj:`assign`, the floating-point arrays are :obj:`arrays`' own
        tensors (no copy), as in :meth:`torch.nn.Module.load_state_dict`, but for
        arrays that are not contiguous or share memory with another (copied: the
        stream writes into its arrays).

        Raises:
            ValueError: An integer array holds values that do not fit :data:`INDEX_DTYPE`.
        """
        out = cls(k)
        info = torch.iinfo(INDEX_DTYPE)
        for name, t in arrays.items():
            if not t.is_floating_point() and t.numel():
                low, high = (int(v) for v in torch.aminmax(t))
                if low < info.min or high > info.max:
                    raise ValueError(f"array {name!r} holds values outside [{info.min}, {info.max}]")
        held: set = set()  # (storages kept: arrays that share one, or repeat entries, are copied)

        def own(t: Tensor) -> bool:
            ptr = t.untyped_storage().data_ptr()
            if not assign or not t.is_contiguous() or (ptr in held and t.numel()):
                return False
            held.add(ptr)
            return True

        out.arrays = {name: (t if own(t) else t.clone(memory_format=torch.contiguous_format))
                      if t.is_floating_point() else t.to(INDEX_DTYPE, copy=True)
                      for name, t in arrays.items()}
        out.fill = {name: BREAK if name.endswith(("_pre", "_suf")) else 0 for name in out.arrays}
        out.n = out.cap = n
        return out
