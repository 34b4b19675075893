r"""The node-pair products of :func:`~kong_pyg.gram.gram_matrix` for :math:`p \geq 2`, block by block.

:math:`K = M \, (U U^\top)^{\circ p} M^\top` over the distinct node rows :math:`U` (see
:mod:`kong_pyg.gram`): blocks of rows within a budget of entries, each block's products over the
columns its rows use only.
"""
import math
from typing import TYPE_CHECKING, Dict, NamedTuple

import torch
from torch import Tensor

from .exact import ignore_sparse_notices
from .kgrams import exclusive_cumsum, flat_nonzero

if TYPE_CHECKING:
    from .gram import NodeMaps

#: Entries of one dense block (and of one pooled strip) of :func:`gram_matrix`.
BLOCK_ENTRIES = 1 << 24

#: Distinct rows are multiplied as dense blocks below this many columns.
DENSE_COLUMNS = 64


def _pool(maps: "NodeMaps", lo: int, hi: int) -> Tensor:
    """:obj:`[num_graphs, hi - lo]` CSR of the counts of rows :obj:`lo .. hi - 1` per graph."""
    bounds = torch.tensor([lo, hi], device=maps.unique.device)
    a, z = (int(v) for v in torch.searchsorted(maps.unique, bounds))
    graph, col, val = maps.graph[a:z], maps.unique[a:z] - lo, maps.mult[a:z]
    order = torch.argsort(graph * (hi - lo) + col)
    graph, col, val = graph[order], col[order], val[order]
    crow = exclusive_cumsum(torch.bincount(graph, minlength=maps.num_graphs))
    ignore_sparse_notices()
    return torch.sparse_csr_tensor(crow, col, val, (maps.num_graphs, hi - lo), check_invariants=False,
                                   device=val.device)  # (not the default device's)


class _Work:
    """Buffers that every block of one :func:`pair_kernel` call reuses, by name.

    Its blocks are up to :obj:`block_entries` entries (128 MiB by default): allocated afresh, each came
    from the system and faulted its pages in again, half of the time of PROTEINS' p = 4 after WL
    relabelling (16 s alone in a process, 9 s after other work had left memory behind).
    """

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.buffers: Dict[str, Tensor] = {}

    def empty(self, name: str, rows: int, cols: int) -> Tensor:
        """A contiguous :obj:`[rows, cols]` float64 view of buffer :obj:`name` (grown as needed)."""
        buf = self.buffers.get(name)
        if buf is None or buf.numel() < rows * cols:
            self.buffers[name] = buf = torch.empty(rows * cols, dtype=torch.float64, device=self.device)
        return buf[:rows * cols].view(rows, cols)

    def zeros(self, name: str, rows: int, cols: int) -> Tensor:
        return self.empty(name, rows, cols).zero_()


class _Right(NamedTuple):
    """The entries of one block of right-side rows, by column.

    :obj:`cols` (sorted): the columns they use; :obj:`ptr`: each one's offsets; :obj:`row` (local)
    and :obj:`val`: the entries; :obj:`rows`: the number of rows.
    """

    cols: Tensor
    ptr: Tensor
    row: Tensor
    val: Tensor
    rows: int


def _right_block(b: "NodeMaps", b_lo: int, b_hi: int, rowptr_b: Tensor) -> _Right:
    """:class:`_Right` of rows :obj:`b_lo .. b_hi - 1` of :obj:`b` (memory: their entries)."""
    b0, b1 = int(rowptr_b[b_lo]), int(rowptr_b[b_hi])
    cols, col = torch.unique(b.rows.col[b0:b1], return_inverse=True)
    order = torch.argsort(col, stable=True)  # (by column, rows in order within one)
    ptr = exclusive_cumsum(torch.bincount(col, minlength=cols.numel()))
    return _Right(cols, ptr, (b.rows.row[b0:b1] - b_lo)[order], b.rows.val[b0:b1][order], b_hi - b_lo)


def _dense_columns(right: _Right, c0: int, c1: int, work: _Work) -> Tensor:
    """Columns :obj:`c0 .. c1 - 1` of a :class:`_Right` as a dense :obj:`[c1 - c0, rows]`."""
    e0, e1 = int(right.ptr[c0]), int(right.ptr[c1])
    counts = right.ptr[c0 + 1:c1 + 1] - right.ptr[c0:c1]
    col = torch.repeat_interleave(torch.arange(c1 - c0, device=right.val.device), counts, output_size=e1 - e0)
    out = work.zeros("columns", c1 - c0, right.rows)
    out[col, right.row[e0:e1]] = right.val[e0:e1]
    return out


def _block_products(a: "NodeMaps", lo: int, hi: int, rowptr_a: Tensor, right: _Right, entries: int,
                    work: _Work) -> Tensor:
    r""":math:`U_b[b_lo:b_hi] \, U_a[lo:hi]^\top`, dense (:obj:`right`: the :class:`_Right` of the b rows).

    Over the columns the :obj:`b` rows use only, so a block never costs its rows times the width of
    the maps (tens of thousands of columns after WL relabelling, nearly all zero in a block): dense
    for a few columns, sparse times sparse where the products are under an eighth of the block's
    entries (their work, and temporaries of several arrays of that length), else sparse times dense
    columns, :obj:`entries` at a time. The result (:obj:`[r_b, r_a]`) and the dense temporaries are
    buffers of :obj:`work`, reused by the next block.
    """
    a0, a1 = int(rowptr_a[lo]), int(rowptr_a[hi])
    cols, a_col, dev = right.cols, a.rows.col[a0:a1], right.val.device
    n, r_a, r_b = cols.numel(), hi - lo, right.rows
    if n == 0:
        return work.zeros("block", r_b, r_a)
    at = torch.searchsorted(cols, a_col).clamp_(max=n - 1)
    hit = flat_nonzero(cols[at] == a_col)
    row, col, val = a.rows.row[a0:a1][hit] - lo, at[hit], a.rows.val[a0:a1][hit]
    if n <= DENSE_COLUMNS and n * max(r_a, r_b) <= entries:
        left = torch.zeros(n, r_a, dtype=torch.float64, device=dev)
        left[col, row] = val
        return torch.mm(_dense_columns(right, 0, n, work).t(), left, out=work.empty("block", r_b, r_a))
    ignore_sparse_notices()  # (rows sorted, columns within one too: CSR as they are)
    if 8 * int((torch.bincount(col, minlength=n) * right.ptr.diff()).sum()) <= r_a * r_b:  # (temporaries)
        crow = exclusive_cumsum(torch.bincount(row, minlength=r_a))
        left = torch.sparse_csr_tensor(crow, col, val, (r_a, n), check_invariants=False, device=dev)
        rt = torch.sparse_csr_tensor(right.ptr, right.row, right.val, (n, r_b), check_invariants=False,
                                     device=dev)
        prod = torch.sparse.mm(left, rt)
        rows = torch.repeat_interleave(torch.arange(r_a, device=dev), prod.crow_indices().diff().long(),
                                       output_size=prod.values().numel())  # (int64: cuSPARSE may give int32)
        block = work.zeros("block", r_b, r_a)
        return block.index_put_((prod.col_indices().long(), rows), prod.values(), accumulate=True)
    acc = work.zeros("products", r_a, r_b)
    step = max(1, entries // max(r_b, 1))
    for c0 in range(0, n, step):
        c1 = min(n, c0 + step)
        sel = flat_nonzero((col >= c0) & (col < c1)) if (c0, c1) != (0, n) else None
        r, c, v = (row, col, val) if sel is None else (row[sel], col[sel] - c0, val[sel])
        crow = exclusive_cumsum(torch.bincount(r, minlength=r_a))
        left = torch.sparse_csr_tensor(crow, c, v, (r_a, c1 - c0), check_invariants=False, device=dev)
        acc.addmm_(left, _dense_columns(right, c0, c1, work))
    return work.empty("block", r_b, r_a).copy_(acc.t())


def block_rows(num_graphs: int, block_entries: int = BLOCK_ENTRIES) -> int:
    """Distinct node maps per block of :func:`pair_kernel`: each block adds one pass over the output.

    Strips :obj:`[graphs, rows]` and blocks :obj:`[rows, rows]` stay within :obj:`block_entries` (one big
    graph made a :obj:`[U, U]` block), and no dense :obj:`[width, rows]` operand is made (its zeros cost
    more than the products after WL relabelling, tens of thousands of columns).
    """
    return max(1, min(math.isqrt(block_entries), block_entries // max(num_graphs, 1)))


def pair_kernel(a: "NodeMaps", b: "NodeMaps", degree: int, block_entries: int = BLOCK_ENTRIES) -> Tensor:
    r""":math:`M_a (U_a U_b^\top)^{\circ p} M_b^\top`, block by block (``float64``).

    When :obj:`a` is :obj:`b` only the blocks on and above the diagonal are
    formed (the matrix is symmetric).

    Args:
        a (NodeMaps): The row side.
        b (NodeMaps): The column side (the same column space as :obj:`a`).
        degree (int): :math:`p`.
        block_entries (int, optional): Entries of one dense block.
            (default: :data:`BLOCK_ENTRIES`)

    Returns:
        torch.Tensor: :obj:`[a.num_graphs, b.num_graphs]`.
    """
    dev = a.rows.val.device
    same = a is b
    out = torch.zeros(a.num_graphs, b.num_graphs, dtype=torch.float64, device=dev)
    rowptr_a = exclusive_cumsum(torch.bincount(a.rows.row, minlength=a.num_unique))
    rowptr_b = rowptr_a if same else exclusive_cumsum(torch.bincount(b.rows.row, minlength=b.num_unique))
    cap = block_rows(max(a.num_graphs, b.num_graphs), block_entries)
    blocks_a = [(lo, min(lo + cap, a.num_unique)) for lo in range(0, a.num_unique, cap)]
    blocks_b = blocks_a if same else [(lo, min(lo + cap, b.num_unique)) for lo in range(0, b.num_unique, cap)]
    pooled_b = [_pool(b, lo, hi) for lo, hi in blocks_b]
    rights = [_right_block(b, lo, hi, rowptr_b) for lo, hi in blocks_b]  # (their entries: the input's)
    work = _Work(dev)
    for k, (lo, hi) in enumerate(blocks_a):
        strip = work.zeros("strip", b.num_graphs, hi - lo)
        upper = work.zeros("upper", b.num_graphs, hi - lo) if same else strip
        for j, (pool, right) in enumerate(zip(pooled_b, rights)):
            if same and j < k:
                continue
            block_t = _block_products(a, lo, hi, rowptr_a, right, block_entries, work)
            if degree > 1:
                block_t.pow_(degree)
            (strip if same and j == k else upper).addmm_(pool, block_t)
        pool_a = pooled_b[k] if same else _pool(a, lo, hi)  # (the same blocks: pooled already)
        if same:  # (half the diagonal blocks and the blocks right of them; the other half is out's transpose)
            strip.mul_(0.5).add_(upper)
        out.addmm_(pool_a, strip.t())  # (into out: no [graphs, graphs] temporary per block)
    return _add_transpose_(out, block_entries) if same else out


def _add_transpose_(A: Tensor, block_entries: int) -> Tensor:
    """:obj:`A + A^T` into the square :obj:`A` (exactly symmetric), a strip of rows at a time."""
    n = A.shape[0]
    step = max(1, block_entries // max(n, 1))
    for i in range(0, n, step):  # (strip i reads and writes rows and columns >= i only: each pair once)
        j = min(i + step, n)
        s = A[i:j, i:] + A[i:, i:j].t()
        A[i:j, i:] = s
        A[i:, i:j] = s.t()
    return A


__all__ = ["BLOCK_ENTRIES", "DENSE_COLUMNS", "block_rows", "pair_kernel"]
