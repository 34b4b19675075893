r"""Exact (unsketched) KONG feature maps with sparse tensor ops.

Inside one call, every distinct n-gram gets a dense *local* id; count
vectors are sparse rows :math:`(row, col, val)` in ``float64`` (exact for
counts below :math:`2^{53}`, never wrapping for larger ones). The
step recursion :math:`Y^{(i)} = A Y^{(i-1)} + X^i` of
:func:`kong_pyg.kgrams.occurrences` gives node count vectors; for the linear
(:math:`p = 1`) polynomial map the sum over nodes commutes with it,

.. math::
    \sum_{v \in G} Y^{(\ell)}_v = \sum_{j \le \ell} \omega_{\ell - j}^\top X^j,
    \qquad \omega_0 = \mathbf{1},\ \omega_d = A^\top \omega_{d-1},

so graph rows need only node weights, never node count vectors.
The global columns of :class:`~kong_pyg.KongVectorizer` live in
:mod:`kong_pyg.vocab`; the full pipeline in :mod:`kong_pyg.engine`.
"""
import math
import re
import warnings
from contextlib import contextmanager
from typing import Dict, Generator, Iterator, List, NamedTuple, Optional, Tuple

import torch
from torch import Tensor
from torch_geometric.utils import scatter

from .kgrams import Occurrences, exclusive_cumsum, flat_nonzero
from .ordering import Neighborhoods
from .traversals import Traversal

#: Exact maps refuse to hold more than this many bytes of sparse entries at once
#: (:class:`ExactMapTooLarge`); front-ends then split their batch of graphs.
EXACT_MAP_BYTES = 2 << 30
#: Bytes per sparse entry (row, column, value) with the working copies of a step.
ENTRY_BYTES = 64


class ExactMapTooLarge(ValueError):
    """An exact map would not fit in :data:`EXACT_MAP_BYTES`.

    Attributes:
        entries (float): The estimated number of sparse entries.
        what (str): Which part of the map.
        advice (str): What to change.
        entry_bytes (int): Bytes per entry in the estimate.
    """

    def __init__(self, entries: float, what: str, advice: str, entry_bytes: int = ENTRY_BYTES,
                 available: Optional[int] = None):
        self.entries, self.what, self.advice, self.entry_bytes = entries, what, advice, entry_bytes
        #: The bytes the machine could give, where that (not the budget) was the limit.
        self.available = available
        gib = entries * entry_bytes / 2**30
        size = f"{gib:,.1f}" if gib < 1e6 else f"{gib:.3g}"
        if available is None:
            text = (f"the exact {what} would hold about {entries:.3g} sparse entries (~{size} GiB, over the "
                    f"{EXACT_MAP_BYTES / 2**30:.0f} GiB budget of kong_pyg.exact.EXACT_MAP_BYTES)")
        else:
            from .memory import gib as in_units

            left = "more than any machine has" if available < 0 else \
                f"more than the {in_units(available)} available"
            need = in_units(int(entries * entry_bytes)) if gib < 1e6 else f"{size} GiB"
            text = f"the {what} would take about {need} ({entries:.3g} values of {entry_bytes} bytes), {left}"
        super().__init__(f"{text}; {advice}")

    def replaced(self, what: Optional[str] = None, advice: Optional[str] = None) -> "ExactMapTooLarge":
        """The same refusal with another :obj:`what` (e.g. naming the graph) or :obj:`advice`."""
        return ExactMapTooLarge(self.entries, self.what if what is None else what,
                                self.advice if advice is None else advice, self.entry_bytes, self.available)


def check_entries(entries: float, what: str, advice: str, entry_bytes: int = ENTRY_BYTES) -> None:
    """Raise :class:`ExactMapTooLarge` if :obj:`entries` would not fit the budget."""
    if entries * entry_bytes > EXACT_MAP_BYTES:
        raise ExactMapTooLarge(entries, what, advice, entry_bytes)


def check_memory_entries(entries: float, what: str, advice: str, entry_bytes: int,
                         device: Optional[torch.device] = None) -> None:
    """Raise :class:`ExactMapTooLarge` if :obj:`entries` would take more memory than :obj:`device` has free.

    (Not the budget of :func:`check_entries`: for work whose size the memory, not a policy, bounds.
    :obj:`device` is where the work runs: a GPU's memory, not the host's; default the CPU.)
    """
    from .memory import shortfall

    free = shortfall(int(entries * entry_bytes), device)
    if free is not None:
        raise ExactMapTooLarge(entries, what, advice, entry_bytes, free)


class Rows(NamedTuple):
    """Sparse rows, sorted by :obj:`(row, col)`, no duplicates."""

    row: Tensor
    col: Tensor
    val: Tensor


def dense_rank(values: Tensor, bounds: Optional[Tuple[int, int]] = None) -> tuple:
    """:obj:`torch.unique(values, return_inverse=True)` for 1-D ``int64``.

    Non-negative values of a small range are ranked with
    :func:`torch.bincount` (no sort); others fall back to
    :func:`torch.unique`. :obj:`bounds`, if known, are a :obj:`(low, high)`
    with every value in :obj:`[low, high]` (saves a pass).
    """
    if values.numel():
        low, high = bounds if bounds is not None else (int(v) for v in torch.aminmax(values))
        if low >= 0 and high < 4 * values.numel() + 65536:
            present = torch.bincount(values, minlength=high + 1) > 0
            rank = torch.cumsum(present, 0) - 1
            return flat_nonzero(present), rank.index_select(0, values)
    return torch.unique(values, return_inverse=True)


def sum_duplicates(
    row: Tensor, col: Tensor, val: Tensor, num_cols: int, num_rows: Optional[int] = None
) -> Rows:
    """Sort entries by :obj:`(row, col)`, add up duplicates, drop zero sums.

    Small key spaces are summed densely (:func:`torch.bincount`, no sort).
    :obj:`num_rows` (a bound on :obj:`row`) saves a pass when known.
    """
    if num_rows is None:
        num_rows = int(row.max()) + 1 if row.numel() else 0
    return sum_duplicate_keys(torch.add(col, row, alpha=num_cols), val, num_cols, num_rows)


def sum_duplicate_keys(key: Tensor, val: Tensor, num_cols: int, num_rows: Optional[int] = None) -> Rows:
    """:func:`sum_duplicates` of the entries :obj:`key = row * num_cols + col` (:obj:`col < num_cols`)."""
    if num_rows is None:
        num_rows = int(key.max()) // num_cols + 1 if key.numel() else 0
    space = num_rows * num_cols
    if space <= 4 * key.numel() + 65536:
        if key.is_cuda:  # (CUDA's weighted bincount is refused under torch.use_deterministic_algorithms;
            # index_add_ has a deterministic kernel; on the CPU both add in input order, bincount faster)
            dense = torch.zeros(space, dtype=val.dtype, device=key.device).index_add_(0, key, val)
        else:
            dense = torch.bincount(key, weights=val, minlength=space)
            if dense.dtype != val.dtype:  # (empty input: int64)
                dense = dense.to(val.dtype)
        uniq = flat_nonzero(dense)
        row = torch.div(uniq, num_cols, rounding_mode="floor")
        return Rows(row, uniq % num_cols, dense.index_select(0, uniq))
    uniq, inv = dense_rank(key)
    out = Rows(uniq // num_cols, uniq % num_cols, scatter(val, inv, 0, uniq.numel(), "sum"))
    keep = out.val != 0
    return out if bool(keep.all()) else Rows(out.row[keep], out.col[keep], out.val[keep])


def propagate_rows(y: Rows, hood: Neighborhoods, num_nodes: int, limit: Optional[int] = None) -> Rows:
    r"""Entries of :math:`A Y`: each center gets its neighbors' rows.

    More than :obj:`limit` entries (before duplicates are merged) raise :class:`ExactMapTooLarge`.
    """
    count = torch.bincount(y.row, minlength=num_nodes)
    rowptr = exclusive_cumsum(count)
    per_edge = count.index_select(0, hood.nbr)
    total = int(per_edge.sum())
    if limit is not None and total > limit:
        raise ExactMapTooLarge(total, "node count vectors", f"more than the {limit:,} entries allowed here")
    check_entries(total, "node count vectors",
                  "use a sketch (dim=...), fewer hops, or smaller batches of graphs")
    edge = torch.repeat_interleave(per_edge, output_size=total)  # (edge e per_edge[e] times)
    within = torch.arange(total, device=y.row.device) - exclusive_cumsum(per_edge)[edge]
    src = rowptr.index_select(0, hood.nbr.index_select(0, edge)) + within
    return Rows(hood.center.index_select(0, edge), y.col.index_select(0, src), y.val.index_select(0, src))


def dense_row_ids(rows: Tensor) -> tuple:
    """Dense ids of the distinct rows of an integer matrix :obj:`[M, n]`.

    Like :obj:`torch.unique(rows, dim=0, return_inverse=True)` but with 1-D
    sorts only (much faster): small non-negative values are folded into one
    ``int64`` key as they are; others get dense ids first, then columns are
    folded, compacted again whenever the next fold could overflow.

    Returns:
        (torch.Tensor, torch.Tensor): :obj:`ids [M]` and one representative
        row per id, :obj:`[U, n]`.
    """
    m, n = rows.shape
    if m == 0 or n == 0:
        return rows.new_zeros(m), rows[:1] if m else rows.new_zeros(0, n)
    low, high = (int(v) for v in torch.aminmax(rows))
    base = high + 1
    if n > 1 and low >= 0 and base**n <= 4 * m + 65536 and rows.dtype == torch.long:
        # a small key space: the values themselves fold into a key in the same (lexicographic) order
        key = rows[:, 0]
        for j in range(1, n):
            key = torch.add(rows[:, j], key, alpha=base)
        uniq, ids = dense_rank(key, (0, base**n - 1))
        digits = []
        for _ in range(n - 1):  # the rows back from their keys (the same rows as their first occurrence)
            digits.append(uniq % base)
            uniq = uniq.div(base, rounding_mode="floor")
        digits.append(uniq)
        return ids, torch.stack(digits[::-1], dim=1)
    uniq, sym = dense_rank(rows.reshape(-1), (low, high))
    sym = sym.view(m, n)
    if n == 1:
        return sym.view(-1), uniq.view(-1, 1)
    base = uniq.numel()
    key, size = sym[:, 0], base
    for j in range(1, n):
        if size * base >= 2**62:
            _, key = dense_rank(key)
            size = int(key.max()) + 1
        key = key * base + sym[:, j]
        size *= base
    _, ids = dense_rank(key)
    first = torch.full((int(ids.max()) + 1,), m, dtype=torch.long, device=rows.device)
    first.scatter_reduce_(0, ids, torch.arange(m, device=rows.device), reduce="amin")
    return ids, rows.index_select(0, first)


class LocalGrams(NamedTuple):
    """The occurrences of one call with dense local gram ids.

    Attributes:
        steps (list): Per step :math:`i`, :obj:`(node, gram_id)` tensors.
        tables (list): Per n-gram length :obj:`(n, first_id, rows)`, rows
            :obj:`[count, n]` the symbol codes of ids
            :obj:`first_id .. first_id + count - 1`.
        num_grams (int): The number of distinct grams.
    """

    steps: List[Optional[Tuple[Tensor, Tensor]]]
    tables: List[Tuple[int, int, Tensor]]
    num_grams: int


def index_grams(steps: List[List[Occurrences]]) -> LocalGrams:
    """Give every distinct gram of the call a dense id."""
    by_len: Dict[int, List[Tensor]] = {}
    for occ in steps:
        for o in occ:
            by_len.setdefault(o.grams.size(1), []).append(o.grams)
    tables: List[Tuple[int, int, Tensor]] = []
    ids: Dict[int, List[Tensor]] = {}
    base = 0
    for n in sorted(by_len):
        parts = by_len[n]
        inv, rows = dense_row_ids(parts[0] if len(parts) == 1 else torch.cat(parts))
        tables.append((n, base, rows))
        ids[n] = list((inv + base if base else inv).split([g.size(0) for g in parts]))
        base += rows.size(0)
    out: List[Optional[Tuple[Tensor, Tensor]]] = []
    for occ in steps:
        node = [o.node for o in occ]
        gid = [ids[o.grams.size(1)].pop(0) for o in occ]
        if len(node) == 1:
            out.append((node[0], gid[0]))
        elif node:
            out.append((torch.cat(node), torch.cat(gid)))
        else:
            out.append(None)
    return LocalGrams(out, tables, base)


def cat_rows(parts: List[Rows]) -> Rows:
    """The entries of several :class:`Rows` together (not summed)."""
    return Rows(torch.cat([p.row for p in parts]), torch.cat([p.col for p in parts]),
                torch.cat([p.val for p in parts]))


def node_count_steps(
    grams: LocalGrams, hood: Neighborhoods, num_nodes: int, limit: Optional[int] = None
) -> Generator[Rows, None, None]:
    r"""Yield the exact count rows :math:`Y^{(i)}` (columns: gram ids).

    :obj:`limit`: see :func:`propagate_rows` (the first step is never refused by it).
    """
    g = max(grams.num_grams, 1)
    dev = hood.center.device
    y: Optional[Rows] = None
    for entry in grams.steps:
        parts = [] if y is None else [propagate_rows(y, hood, num_nodes, limit)]
        if entry is not None:
            node, gid = entry
            parts.append(Rows(node, gid, torch.ones(node.numel(), dtype=torch.float64, device=dev)))
        if not parts:
            parts.append(empty_rows(dev))
        cat = cat_rows(parts)
        y = sum_duplicates(cat.row, cat.col, cat.val, g)
        yield y


def empty_rows(device: torch.device) -> Rows:
    """Rows with no entries."""
    z = torch.zeros(0, dtype=torch.long, device=device)
    return Rows(z, z, torch.zeros(0, dtype=torch.float64, device=device))


def tag_blocks(levels: List[Rows], num_grams: int, traversal: Traversal) -> Rows:
    r"""Node count vectors :math:`c_v` from the steps' rows.

    With :attr:`~kong_pyg.traversals.Traversal.all_levels` (BFS) the levels
    become blocks (column :obj:`level * G + gram`); otherwise (WL) the last
    step stands alone in block 0.
    """
    if not traversal.all_levels:
        return levels[-1]
    g = max(num_grams, 1)
    kept = [(level, y) for level, y in enumerate(levels) if level >= traversal.first_level]
    parts = [Rows(y.row, y.col + level * g, y.val) for level, y in kept]
    cat = cat_rows(parts or [empty_rows(levels[0].row.device)])
    return sum_duplicates(cat.row, cat.col, cat.val, len(levels) * g)


def node_count_rows(
    grams: LocalGrams, hood: Neighborhoods, num_nodes: int, traversal: Traversal
) -> Rows:
    r"""Exact node count vectors, columns :obj:`block * G + gram` (see :func:`tag_blocks`)."""
    levels = list(node_count_steps(grams, hood, num_nodes))
    return tag_blocks(levels, grams.num_grams, traversal)


def row_norms(rows: Rows, num_rows: int) -> Tensor:
    """Euclidean norm of every row (``float64``), scaled so that squares never overflow."""
    val = rows.val.double()
    big = scatter(val.abs(), rows.row, 0, num_rows, "max")
    scale = torch.where(big > 0, big, torch.ones_like(big))
    unit = val / scale.index_select(0, rows.row)
    return scatter(unit * unit, rows.row, 0, num_rows, "sum").sqrt() * scale


def walk_weights(hood: Neighborhoods, weight: Tensor, hops: int, unit: bool = False) -> List[Tensor]:
    r""":math:`\omega_0 = weight`, :math:`\omega_d = A^\top \omega_{d-1}`.

    :obj:`unit` promises that :obj:`weight` is all ones: then
    :math:`\omega_1` is a count of edges per neighbor (the same numbers).
    """
    out = [weight]
    if unit and hops:
        out.append(torch.bincount(hood.nbr, minlength=weight.numel()).to(weight.dtype))
    for _ in range(len(out) - 1, hops):  # (index_add_ sums in edge order, as a scatter does)
        out.append(torch.zeros_like(weight).index_add_(0, hood.nbr, out[-1].index_select(0, hood.center)))
    return out


#: Entries the linear graph map gathers before summing duplicates (its terms grow like hops^2 / 2).
LINEAR_REDUCE_ENTRIES = 1 << 22


def graph_linear_rows(
    grams: LocalGrams,
    omega: List[Tensor],
    batch: Tensor,
    hops: int,
    traversal: Traversal,
    num_graphs: Optional[int] = None,
) -> Rows:
    r"""Graph rows of :math:`\sum_v \omega_0(v) c_v` without node rows.

    :obj:`omega` are the walk weights of :func:`walk_weights` (at least
    as many as the terms read); see
    :meth:`~kong_pyg.traversals.Traversal.linear_terms`.
    """
    g = max(grams.num_grams, 1)
    terms = list(traversal.linear_terms(len(grams.steps), hops))
    num_cols = (max((block for _, _, block in terms), default=0) + 1) * g
    keys, vals = [], []
    step_key: Dict[int, Tensor] = {}
    held, limit = 0, LINEAR_REDUCE_ENTRIES
    for j, level, block in terms:
        entry = grams.steps[j]
        if entry is None:
            continue
        node, gid = entry
        if j not in step_key:  # (graph, gram) of the step's occurrences, once for all its blocks
            step_key[j] = torch.add(gid, batch.index_select(0, node), alpha=num_cols)
        keys.append(step_key[j] + block * g if block else step_key[j])
        vals.append(omega[level - j].index_select(0, node))
        held += node.numel()
        if held >= limit:  # (about hops^2 / 2 terms: summed as they come, so memory stays
            # that of the distinct (graph, column) entries, the output's, at any depth)
            part = sum_duplicate_keys(torch.cat(keys), torch.cat(vals), num_cols, num_graphs)
            keys, vals = [torch.add(part.col, part.row, alpha=num_cols)], [part.val]
            held = part.val.numel()
            limit = max(LINEAR_REDUCE_ENTRIES, 2 * held)  # (a large output is not summed again each term)
    if not keys:
        keys, vals = [batch.new_zeros(0)], [omega[0].new_zeros(0)]
    # (grams whose strings no walk reaches sum to zero and are dropped)
    # (columns span the blocks used: one block for WL, a third of BFS's key space)
    return sum_duplicate_keys(keys[0] if len(keys) == 1 else torch.cat(keys),
                              vals[0] if len(vals) == 1 else torch.cat(vals), num_cols, num_graphs)


def power_size(rows: Rows, num_rows: int, degree: int, weight: Optional[Tensor] = None) -> float:
    r"""The number of entries :func:`symmetric_power` would make: :math:`\sum_v \binom{n_v + p - 1}{p}`.

    :obj:`weight` (:obj:`[num_rows]`, optional) counts each row that many times (a distinct row for
    every node that has it).
    """
    nnz = torch.bincount(rows.row, minlength=num_rows).double()
    size = torch.ones_like(nnz)
    for j in range(degree):
        size = size * (nnz + j) / (j + 1)
    return float(size.sum() if weight is None else (size * weight).sum())


#: The largest degree of :func:`symmetric_power` (170! is the largest factorial below 2^1024).
MAX_EXACT_DEGREE = 170


def symmetric_power(rows: Rows, degree: int) -> tuple:
    r"""Explicit symmetric tensor power of sparse rows.

    For row :math:`c`, the entry of multiset :math:`M = \{t_1 \le \ldots
    \le t_p\}` is :math:`\sqrt{p! / \prod_t m_t!}\, \prod_j c_{t_j}` with
    :math:`m_t` the multiplicities, so that
    :math:`\langle \phi(c), \phi(c') \rangle = \langle c, c' \rangle^p`.

    Returns:
        (torch.Tensor, torch.Tensor, torch.Tensor): :obj:`row [Q]`,
        :obj:`cols [Q, p]` (non-decreasing) and :obj:`val [Q]`.
    """
    if degree > MAX_EXACT_DEGREE:
        raise ValueError(f"the exact map supports degree <= {MAX_EXACT_DEGREE} (p! overflows float64 "
                         f"beyond); got degree={degree}: use a sketch (dim=...), or gram_matrix(...) for the "
                         "exact kernel matrix (no explicit map)")
    dev = rows.row.device
    nnz = rows.row.numel()
    count = torch.bincount(rows.row, minlength=int(rows.row.max()) + 1 if nnz else 0)
    row_end = exclusive_cumsum(count)[1:]
    last = torch.arange(nnz, device=dev)
    cols = rows.col.view(-1, 1)
    val = rows.val.clone()
    run = torch.ones(nnz, dtype=torch.long, device=dev)
    denom = torch.ones(nnz, dtype=torch.float64, device=dev)
    for _ in range(1, degree):
        ext = row_end[rows.row[last]] - last
        total = int(ext.sum())
        parent = torch.repeat_interleave(ext, output_size=total)
        nxt = last[parent] + torch.arange(total, device=dev) - exclusive_cumsum(ext)[parent]
        same = nxt == last[parent]
        run = torch.where(same, run[parent] + 1, torch.ones_like(nxt))
        denom = denom[parent] * run.to(torch.float64)
        val = val[parent] * rows.val[nxt]
        cols = torch.cat([cols[parent], rows.col[nxt].view(-1, 1)], dim=1)
        last = nxt
    weight = torch.sqrt(float(math.factorial(degree)) / denom)  # (p! > 2^63 from p = 21: a float, not int64)
    return rows.row[last], cols, val * weight


#: PyTorch's notices about its own sparse tensors, which the library's sparse operations trigger
#: (CSR support "in beta"; invariant checks "implicitly disabled", seen from PyTorch 2.11 on CUDA).
#: They are ignored in the whole process (matched ignoring case), as PyG ignores its own beta notice:
#: a filter set and restored around each use would run in the layer's forward from any thread, and
#: :class:`warnings.catch_warnings` is not safe beside other threads before Python 3.14.
SPARSE_NOTICES = (r"(?s).*(sparse CSR tensor support is in beta"
                  r"|sparse invariant checks are implicitly disabled)")
_SPARSE_FILTER = ("ignore", re.compile(SPARSE_NOTICES, re.IGNORECASE), Warning, None, 0)


def ignore_sparse_notices() -> None:
    """Ignore :data:`SPARSE_NOTICES` from now on (called before each sparse operation, in a few microseconds).

    The filter is added again where it is gone: a caller's :class:`warnings.catch_warnings` block
    that was open when it was added (at this module's import, say) took it away on exit.
    """
    if _SPARSE_FILTER not in warnings.filters:
        warnings.filterwarnings("ignore", message=SPARSE_NOTICES)


@contextmanager
def quiet_sparse() -> Iterator[None]:
    """:func:`ignore_sparse_notices`, then the block (kept for callers; nothing is restored after it)."""
    ignore_sparse_notices()
    yield


ignore_sparse_notices()


__all__ = [
    "SPARSE_NOTICES",
    "ignore_sparse_notices",
    "quiet_sparse",
    "Rows",
    "dense_rank",
    "sum_duplicates",
    "sum_duplicate_keys",
    "propagate_rows",
    "dense_row_ids",
    "LocalGrams",
    "index_grams",
    "node_count_steps",
    "empty_rows",
    "tag_blocks",
    "node_count_rows",
    "row_norms",
    "walk_weights",
    "graph_linear_rows",
    "symmetric_power",
    "power_size",
    "ExactMapTooLarge",
    "check_entries",
    "EXACT_MAP_BYTES",
]
