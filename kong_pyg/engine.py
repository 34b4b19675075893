r"""The KONG pipeline, written once.

Every front-end (:class:`~kong_pyg.KongSketch`, :class:`~kong_pyg.KongVectorizer`,
:class:`~kong_pyg.KongFeatures`) runs the same steps, configured by a
:class:`~kong_pyg.KongConfig`:

1. :func:`prepare`: check the input, turn labels into symbols and group the
   edges into ordered neighborhoods (:mod:`kong_pyg.inputs`,
   :mod:`kong_pyg.ordering`);
2. :func:`kgram_steps`: the n-grams each step :math:`i = 0..h` adds
   (:mod:`kong_pyg.kgrams`; the traversal decides the string rule);
3. node count vectors :math:`c_v`: exact sparse rows
   (:func:`kong_pyg.exact.node_count_rows`) or Count-Sketches propagated by
   sum aggregation (:func:`propagate_sketches`, :mod:`kong_pyg.propagation`);
4. node maps :math:`\phi(c_v)` (the base kernel, :mod:`kong_pyg.kernels`);
5. the graph readout :math:`\Phi(G) = \sum_{v \in G} \phi(c_v)`:
   :func:`exact_graph_map` (sparse rows) or :func:`graph_sketch` (dense).

Where the map is linear in :math:`c_v` (:meth:`BaseKernel.is_linear
<kong_pyg.kernels.BaseKernel.is_linear>`), step 3 and 4 are skipped: the sum
over nodes commutes with the propagation, so every k-gram goes straight into
its graph's row with a walk-count weight (:func:`linear_graph_sketch`).

Sum aggregation is pluggable (:data:`~kong_pyg.propagation.Aggregate`): the default multiplies by
a sparse adjacency matrix; :class:`~kong_pyg.KongSketch` passes its own
:meth:`~torch_geometric.nn.conv.MessagePassing.propagate`.
"""
from typing import List, NamedTuple, Optional, Tuple

import torch
from torch import Tensor
from torch_geometric.nn import global_add_pool
from torch_geometric.utils import scatter

from .config import KongConfig
from .exact import (
    ExactMapTooLarge,
    LocalGrams,
    Rows,
    check_entries,
    check_memory_entries,
    dense_row_ids,
    graph_linear_rows,
    index_grams,
    node_count_rows,
    node_count_steps,
    power_size,
    row_norms,
    sum_duplicates,
    symmetric_power,
    tag_blocks,
    walk_weights,
)
from .hashing import bucket_of
from .inputs import PreparedGraph, edge_index_from_sparse, is_sparse_adjacency, prepare_graph
from .kernels import get_kernel
from .kgrams import Occurrences, exclusive_cumsum, occurrences
from .outputs import all_finite, cast_checked, check_finite, normalize_rows
from .propagation import (
    EXACT_STEP_BYTES,
    Aggregate,
    GramHashes,
    block_hashes,
    dense_step_bytes,
    gram_hashes,
    propagate_sketches,
    propagation_copies,
    scatter_sketch,
    sparse_aggregator,
)
from .sketch import SketchHashes
from .traversals import traversal_rule

#: Exact node rows give way to dense sketches once they hold more than this
#: fraction of the :obj:`N * p * b` sketch entries.
SWITCH_RATIO = 0.25
#: Node maps are formed in chunks of at most this many sketch entries.
CHUNK_ENTRIES = 1 << 22

Steps = List[List[Occurrences]]


# -- 1, 2: input and k-grams ---------------------------------------------------


def prepare(
    cfg: KongConfig,
    x: Tensor,
    edge_index: Tensor,
    edge_attr: Optional[Tensor] = None,
    edge_order: Optional[Tensor] = None,
    edges_checked: bool = False,
    batch: Optional[Tensor] = None,
    first_graph: int = 0,
) -> PreparedGraph:
    """Check a graph (or a batch) and turn it into symbols and ordered neighborhoods.

    Edge labels are used when :obj:`edge_attr` is given and
    :obj:`cfg.edge_labels` is set; :math:`k = 1` needs no neighbor order,
    so its edges are not sorted. :obj:`edges_checked`, :obj:`batch` (the
    graph of each node of a batch) and :obj:`first_graph`: see
    :func:`~kong_pyg.inputs.prepare_graph`.
    """
    if is_sparse_adjacency(edge_index):
        if cfg.k > 1:
            raise TypeError(
                "a sparse adjacency ('adj_t': a SparseTensor or sparse torch tensor) stores neighbors sorted "
                "by id and so has no "
                f"neighbor order, which k={cfg.k} reads; pass 'edge_index' [2, num_edges] in neighbor "
                "order (sparse input is accepted with k=1, where the order cannot matter)"
            )
        n = x.size(0) if isinstance(x, Tensor) and x.dim() > 0 else 0
        edge_index = edge_index_from_sparse(edge_index, n, cfg.flow, edge_attr if cfg.edge_labels else None,
                                            edge_order)
    return prepare_graph(
        x, edge_index, edge_attr if cfg.edge_labels else None, edge_order,
        flow=cfg.flow, order=cfg.order, relabel=cfg.relabel, seed=cfg.seed, grouped=cfg.k > 1,
        edges_checked=edges_checked, batch=batch, first_graph=first_graph, depth=cfg.hops,
    )


def edges_of(cfg: KongConfig, prep: PreparedGraph) -> Tensor:
    """The prepared edges as an :obj:`edge_index` for :obj:`cfg.flow` (in neighborhood order)."""
    hood = prep.hood
    if cfg.flow == "source_to_target":
        return torch.stack([hood.nbr, hood.center])
    return torch.stack([hood.center, hood.nbr])


def kgram_steps(cfg: KongConfig, prep: PreparedGraph) -> Steps:
    """The n-grams that steps :math:`0..h` add (see :func:`kong_pyg.kgrams.occurrences`)."""
    return list(occurrences(prep.node_sym, prep.hood, prep.edge_sym, cfg.k, cfg.hops,
                            traversal_rule(cfg), cfg.blended))


# -- 3: exact node counts --------------------------------------------------------


def exact_counts(cfg: KongConfig, prep: PreparedGraph, grams: LocalGrams) -> Rows:
    """Exact node count vectors :math:`c_v` (columns :obj:`block * G + gram`)."""
    return node_count_rows(grams, prep.hood, prep.num_nodes, traversal_rule(cfg))


def count_norms(cfg: KongConfig, counts: Rows, num_rows: int) -> Tensor:
    r"""Norms :math:`\|c_v\|` of count rows (``float64``), counts that overflowed named first (hops, fix).

    A norm of finite counts can still overflow; :func:`~kong_pyg.kernels.inverse_or_zero` refuses it.
    """
    check_finite(counts.val, cfg, "node counts")
    return row_norms(counts, num_rows)


def exact_norms(cfg: KongConfig, prep: PreparedGraph, grams: LocalGrams) -> Tensor:
    r"""Exact norms :math:`\|c_v\|` of every node (``float64``; overflowed counts are an error)."""
    norms = row_norms(exact_counts(cfg, prep, grams), prep.num_nodes)
    check_finite(norms, cfg, "node counts")  # (a NaN norm would give the node weight 0 silently)
    return norms


# -- 5 (exact): the explicit graph map ---------------------------------------


class ExactRows(NamedTuple):
    """Graph rows of one call, in local columns.

    Attributes:
        rows (Rows): Graph rows. With :math:`p = 1` a column is
            :obj:`block * G + gram` or :obj:`const_col`; with :math:`p > 1` it
            indexes :obj:`multisets`.
        grams (LocalGrams): The call's grams.
        const_col (int): The local column of the polynomial constant.
        multisets (torch.Tensor, optional): :obj:`[U, p]` local columns of
            each multiset column (:math:`p > 1`).
    """

    rows: Rows
    grams: LocalGrams
    const_col: int
    multisets: Optional[Tensor]


def exact_graph_map(
    cfg: KongConfig,
    prep: PreparedGraph,
    steps: Steps,
    batch: Tensor,
    num_graphs: Optional[int] = None,
) -> ExactRows:
    r"""The exact explicit map :math:`\Phi(G) = \sum_v \phi_\kappa(c_v)` as sparse rows.

    :math:`\phi_\kappa(c)` is the symmetric :math:`p`-th power of the base
    kernel's :math:`g(c)` (:mod:`kong_pyg.kernels`), so that
    :math:`\langle \Phi(G), \Phi(H) \rangle = K(G, H)` exactly.
    """
    grams = index_grams(steps)
    g = max(grams.num_grams, 1)
    const_col = (cfg.hops + 1) * g
    dev = batch.device
    n = prep.num_nodes
    if num_graphs is None:
        num_graphs = int(batch.max()) + 1
    rule, kernel = traversal_rule(cfg), get_kernel(cfg.kernel)
    one = torch.ones(n, dtype=torch.float64, device=dev)
    const = kernel.const_value(cfg)
    if cfg.degree == 1 and not kernel.needs_norms(cfg):
        # walks as long as the terms read (steps without occurrences, such as step 0 for k >= 2, read none)
        depth = max((level - j for j, level, _ in rule.linear_terms(len(grams.steps), cfg.hops)
                     if grams.steps[j] is not None), default=0)
        omega = walk_weights(prep.hood, one, depth, unit=True)
        rows = graph_linear_rows(grams, omega, batch, cfg.hops, rule, num_graphs)
        if const:
            sizes = scatter(one * const, batch, 0, num_graphs, "sum")
            graphs = torch.arange(sizes.numel(), device=dev)
            rows = sum_duplicates(
                torch.cat([rows.row, graphs]), torch.cat([rows.col, torch.full_like(graphs, const_col)]),
                torch.cat([rows.val, sizes]), const_col + 1,
            )
        check_finite(rows.val, cfg, "exact map")
        return ExactRows(rows, grams, const_col, None)
    node = node_count_rows(grams, prep.hood, n, rule)
    if node.row.numel() == 0 and not const:
        empty = Rows(batch.new_zeros(0), batch.new_zeros(0), one.new_zeros(0))
        return ExactRows(empty, grams, const_col, batch.new_zeros(0, cfg.degree) if cfg.degree > 1 else None)
    norms = count_norms(cfg, node, n) if kernel.needs_norms(cfg) else None
    node = kernel.exact_node_rows(cfg, node, norms, n, const_col)
    if cfg.degree == 1:
        rows = sum_duplicates(batch.index_select(0, node.row), node.col, node.val, const_col + 1, num_graphs)
        check_finite(rows.val, cfg, "exact map")
        return ExactRows(rows, grams, const_col, None)
    entries = power_size(node, n, cfg.degree)
    advice = "use a sketch (dim=4096 or so), a lower degree or fewer hops"
    check_entries(entries, f"degree-{cfg.degree} map", advice, 64 + 8 * cfg.degree)
    # (and the memory its peak takes, measured at about 8 (20 + 6 p) bytes an entry: the p columns of each
    # multiset, their copy in the last extension and in dense_row_ids' folding, a dozen per-entry arrays)
    check_memory_entries(entries, f"degree-{cfg.degree} map", advice, 8 * (20 + 6 * cfg.degree),
                         node.val.device)
    row, cols, val = symmetric_power(node, cfg.degree)
    uid, multisets = dense_row_ids(cols)
    rows = sum_duplicates(batch.index_select(0, row), uid, val, max(multisets.size(0), 1), num_graphs)
    check_finite(rows.val, cfg, "exact map")
    return ExactRows(rows, grams, const_col, multisets)


class NodeCounts(NamedTuple):
    """Node count vectors, exact or sketched.

    Either exact sparse :obj:`rows` (columns :obj:`block * G + gram`) or
    :obj:`dense` Count-Sketches :obj:`[N, p, b]`.
    """

    grams: LocalGrams
    rows: Optional[Rows]
    dense: Optional[Tensor]


def node_counts(
    cfg: KongConfig,
    hashes: SketchHashes,
    prep: PreparedGraph,
    grams: LocalGrams,
    gh: GramHashes,
    aggregate: Optional[Aggregate] = None,
    switch_ratio: Optional[float] = None,
) -> NodeCounts:
    r"""The node count vectors :math:`c_v`, exact or already sketched.

    Exact sparse rows are propagated while they hold fewer entries than
    :obj:`switch_ratio` (default :data:`SWITCH_RATIO`) of the dense
    :obj:`[N, p, b]` sketches would; past
    that (deep :obj:`hops` on dense graphs) the Count-Sketches themselves are
    propagated (:func:`propagate_sketches`); so they are too where a step's
    rows, before duplicates merge, would take more memory than a dense step
    (:func:`~kong_pyg.propagation.dense_step_bytes`). Exact cosine
    norms need the exact rows, so they never switch. The dense sketches are
    checked against the memory of the device (:class:`ExactMapTooLarge`: a
    batch of graphs is split on it).
    """
    n = prep.num_nodes
    kernel = get_kernel(cfg.kernel)
    may_switch = not (kernel.needs_norms(cfg) and cfg.norm == "exact")
    ratio = SWITCH_RATIO if switch_ratio is None else switch_ratio
    budget = int(n * hashes.degree * hashes.dim * ratio)
    levels: List[Rows] = []
    width = hashes.degree * hashes.dim
    messages = 0 if aggregate is None else prep.hood.nbr.numel()  # (the default product passes none)
    dense_bytes = dense_step_bytes(cfg, n, messages, width)
    gen = node_count_steps(grams, prep.hood, n, dense_bytes // EXACT_STEP_BYTES if may_switch else None)
    switched = False
    while True:
        try:
            y = next(gen)
        except StopIteration:
            break
        except ExactMapTooLarge as err:  # (the next step's exact rows would not fit: its sketches do)
            if not levels:
                raise
            if not may_switch:
                raise err.replaced(advice="fewer hops or fewer graphs per call (exact cosine norms read the "
                                          "exact count rows; norm='sketch' does not)") from None
            switched = True
            break
        levels.append(y)
        if may_switch and len(levels) <= cfg.hops and y.row.numel() > budget:
            gen.close()
            switched = True
            break
    if switched:  # (the later steps propagate the sketches)
        also = ", and messages" if messages else ""
        check_memory_entries(n * width, f"propagation of the node sketches ([{n:,}, {hashes.degree} x "
                             f"{hashes.dim:,}] float64, {propagation_copies(cfg)} at once{also})",
                             "a smaller 'dim', or fewer nodes per call", -(-dense_bytes // max(n * width, 1)),
                             prep.node_sym.device)
        agg = aggregate if aggregate is not None else sparse_aggregator(prep)
        return NodeCounts(grams, None, propagate_sketches(cfg, hashes, grams, gh, n, agg, levels))
    return NodeCounts(grams, tag_blocks(levels, grams.num_grams, traversal_rule(cfg)), None)


def _chunk_sketches(cfg: KongConfig, hashes: SketchHashes, counts: NodeCounts, gh: GramHashes,
                    lo: int, hi: int, rowptr: Optional[Tensor]) -> Tensor:
    """Count-Sketches :obj:`[p, hi - lo, b]` of nodes :obj:`lo .. hi - 1`."""
    if counts.dense is not None:
        return counts.dense[lo:hi].permute(1, 0, 2).clone()
    assert counts.rows is not None and rowptr is not None
    rows = counts.rows
    a, z = int(rowptr[lo]), int(rowptr[hi])
    col, val = rows.col[a:z], rows.val[a:z]
    g = max(counts.grams.num_grams, 1)
    bucket, sign = block_hashes(cfg, hashes, gh.bucket[col % g], gh.sign[col % g], col // g)
    out = torch.zeros(hi - lo, hashes.degree * hashes.dim, dtype=torch.float64, device=val.device)
    scatter_sketch(out, rows.row[a:z] - lo, bucket, sign, val)
    return out.view(hi - lo, hashes.degree, hashes.dim).permute(1, 0, 2)


def node_maps(
    cfg: KongConfig,
    hashes: SketchHashes,
    prep: PreparedGraph,
    steps: Steps,
    batch: Optional[Tensor] = None,
    num_graphs: Optional[int] = None,
    aggregate: Optional[Aggregate] = None,
    switch_ratio: Optional[float] = None,
    out: Optional[Tensor] = None,
) -> Tensor:
    r"""Sketched node maps :obj:`[N, b]` (``float64``); with :obj:`batch` their sums per graph.

    Works through the nodes in chunks, so with :obj:`batch` the memory beyond
    the count vectors is one chunk of :obj:`[p, chunk, b]`. :obj:`out`, if
    given, receives the result (``float64``, the right shape).
    """
    n, p, b = prep.num_nodes, hashes.degree, hashes.dim
    dev = prep.node_sym.device
    kernel = get_kernel(cfg.kernel)
    grams = index_grams(steps)
    gh = gram_hashes(hashes, grams)
    counts = node_counts(cfg, hashes, prep, grams, gh, aggregate, switch_ratio)
    rowptr, norms = None, None
    if counts.rows is not None:
        rowptr = exclusive_cumsum(torch.bincount(counts.rows.row, minlength=n))
        if kernel.needs_norms(cfg) and cfg.norm == "exact":
            norms = count_norms(cfg, counts.rows, n)
    rows_out = n if batch is None else num_graphs
    assert rows_out is not None
    out = torch.zeros(rows_out, b, dtype=torch.float64, device=dev) if out is None else out.zero_()
    chunk = max(1, CHUNK_ENTRIES // (p * b))
    for lo in range(0, n, chunk):
        hi = min(lo + chunk, n)
        cs = _chunk_sketches(cfg, hashes, counts, gh, lo, hi, rowptr)
        ts = kernel.sketch_node_maps(cfg, hashes, cs, None if norms is None else norms[lo:hi])
        if batch is None:
            out[lo:hi] = ts
        else:  # (into out row by row: no [num_graphs, b] temporary per chunk, and each graph's sum is
            # added up in node order whatever the chunks, so its row does not depend on the batch)
            out.index_add_(0, batch[lo:hi], ts.to(out.dtype))
    return out


# -- 5 (sketched): graph readout ------------------------------------------------------


def _hash_steps(hashes: SketchHashes, steps: Steps) -> List[List[Tuple[Tensor, Tensor]]]:
    """Bucket and sign :obj:`[M]` of every occurrence of every step (first sketch), one hash per length."""
    by_len: dict = {}
    for occ in steps:
        for o in occ:
            by_len.setdefault(o.grams.size(1), []).append(o.grams)
    parts: dict = {}
    for n, grams in by_len.items():
        bucket, sign = hashes.hash(grams[0] if len(grams) == 1 else torch.cat(grams))
        sizes = [g.size(0) for g in grams]
        parts[n] = list(zip(bucket[:, 0].split(sizes), sign[:, 0].split(sizes)))
    return [[parts[o.grams.size(1)].pop(0) for o in occ] for occ in steps]


#: Entries the linear graph sketch gathers before adding them in (its terms grow like hops^2 / 2).
LINEAR_FLUSH_ENTRIES = 1 << 22


def linear_graph_sketch(
    cfg: KongConfig,
    hashes: SketchHashes,
    prep: PreparedGraph,
    steps: Steps,
    weight: Tensor,
    batch: Tensor,
    num_graphs: int,
    out: Optional[Tensor] = None,
) -> Tensor:
    r""":math:`\sum_v w_v\, CS(c_v)` per graph, for a linear map (:math:`p = 1`).

    The sum over nodes commutes with the propagation (walk weights
    :math:`\omega`, :func:`~kong_pyg.exact.walk_weights`), so no node
    sketch is ever built. :obj:`out`, if given, receives the result.
    """
    b = hashes.dim
    rule = traversal_rule(cfg)
    if out is None:
        out = torch.zeros(num_graphs, b, dtype=torch.float64, device=weight.device)
    else:
        out.zero_()
    omega = walk_weights(prep.hood, weight, cfg.hops)
    hashed = _hash_steps(hashes, steps)
    shifted = rule.shifted()
    shift = hashes.shift[0].tolist() if shifted else None
    flip = hashes.flip[0].tolist() if shifted else None
    index: List[Tensor] = []
    value: List[Tensor] = []
    held = 0

    def flush() -> None:  # one scatter, in the order of the terms (the same sums as one scatter per term)
        out.view(-1).scatter_add_(0, index[0] if len(index) == 1 else torch.cat(index),
                                  value[0] if len(value) == 1 else torch.cat(value))
        index.clear()
        value.clear()

    for j, level, _ in rule.linear_terms(len(steps), cfg.hops):
        for o, (bucket, sign) in zip(steps[j], hashed[j]):
            col = bucket if shift is None else bucket_of(bucket + shift[level], b)
            val = sign if flip is None else sign * flip[level]
            # one graph (a transform's call): every row is 0
            index.append(col if num_graphs == 1 else batch.index_select(0, o.node) * b + col)
            value.append(val * omega[level - j].index_select(0, o.node))
            held += index[-1].numel()
            if held >= LINEAR_FLUSH_ENTRIES:  # (about hops^2 / 2 terms: bounded memory at any depth)
                flush()
                held = 0
    if index:
        flush()
    const = get_kernel(cfg.kernel).const_value(cfg)
    if const:
        bucket, sign = hashes.const_token()
        sizes = global_add_pool(weight.unsqueeze(1), batch, size=num_graphs).squeeze(1)
        out[:, int(bucket[0])] += sign[0].to(out.dtype) * const * sizes
    return out


def graph_sketch(
    cfg: KongConfig,
    hashes: SketchHashes,
    prep: PreparedGraph,
    steps: Steps,
    batch: Tensor,
    num_graphs: int,
    aggregate: Optional[Aggregate] = None,
    switch_ratio: Optional[float] = None,
    check: bool = True,
    out: Optional[Tensor] = None,
) -> Tensor:
    r"""Sketched graph maps :obj:`[num_graphs, b]` (``float64``): :math:`\sum_{v \in G} \phi(c_v)`.

    Linear maps go through :func:`linear_graph_sketch`, the others through
    :func:`node_maps`; with :obj:`cfg.normalize` every row is L2-normalized.
    With :obj:`check`, an overflow is an error here (callers that cast the
    result with :func:`cast_checked` may leave it to that). :obj:`out`, if
    given (``float64`` :obj:`[num_graphs, b]`), receives the result, so that
    a caller can write batch after batch into one output array.
    """
    kernel = get_kernel(cfg.kernel)
    if kernel.is_linear(cfg):
        norms = None
        if kernel.needs_norms(cfg):
            norms = exact_norms(cfg, prep, index_grams(steps))
        weight = kernel.node_weight(cfg, norms, torch.ones(prep.num_nodes, dtype=torch.float64,
                                                            device=prep.node_sym.device))
        out = linear_graph_sketch(cfg, hashes, prep, steps, weight, batch, num_graphs, out)
    else:
        out = node_maps(cfg, hashes, prep, steps, batch, num_graphs, aggregate, switch_ratio, out)
    if check or cfg.normalize:  # (normalized: an overflow named before the norms of its rows)
        check_finite(out, cfg, "sketch")
    return normalize_rows(out, in_place=True) if cfg.normalize else out


__all__ = [
    "ExactRows",
    "NodeCounts",
    "prepare",
    "kgram_steps",
    "edges_of",
    "exact_counts",
    "count_norms",
    "exact_norms",
    "exact_graph_map",
    "node_counts",
    "node_maps",
    "linear_graph_sketch",
    "graph_sketch",
    "normalize_rows",
    "check_finite",
    "all_finite",
    "cast_checked",
    "SWITCH_RATIO",
    "CHUNK_ENTRIES",
]
