r"""Step 3, sketched: Count-Sketches of the node counts, propagated by sum aggregation.

:math:`Y^{(i)} = A Y^{(i-1)} + X^i` on Count-Sketches (they are linear):
every distinct gram of a call is hashed once (:func:`gram_hashes`), each
step's occurrences are scattered into node sketches
(:func:`step_injection`), and an :data:`Aggregate` sums the neighbors'
sketches (:func:`sparse_aggregator` by default; :class:`~kong_pyg.KongSketch`
passes its own :meth:`~torch_geometric.nn.conv.MessagePassing.propagate`).
Step 3 (sketched) of the pipeline in :mod:`kong_pyg.engine`.
"""
from typing import Callable, NamedTuple, Optional, Sequence, Tuple

import torch
from torch import Tensor

from .config import KongConfig
from .exact import LocalGrams, Rows, ignore_sparse_notices
from .hashing import bucket_of
from .inputs import PreparedGraph
from .sketch import SketchHashes, place, shift_level
from .traversals import traversal_rule

#: :obj:`aggregate(y, inject)` returns :math:`A y + inject`, where
#: :math:`(A y)_v = \sum_{u \in N_v} y_u` (:obj:`inject` may be :obj:`None`).
Aggregate = Callable[[Tensor, Optional[Tensor]], Tensor]


class GramHashes(NamedTuple):
    """Buckets :obj:`[G, p]` (long) and signs :obj:`[G, p]` (float64) of a call's grams."""

    bucket: Tensor
    sign: Tensor


def gram_hashes(hashes: SketchHashes, grams: LocalGrams) -> GramHashes:
    """Hash every distinct gram of the call once."""
    dev = hashes.coef.device
    if not grams.tables:
        z = torch.zeros(0, hashes.degree, dtype=torch.long, device=dev)
        return GramHashes(z, z.to(torch.float64))
    parts = [hashes.hash(rows) for _, _, rows in grams.tables]
    return GramHashes(torch.cat([b for b, _ in parts]), torch.cat([s for _, s in parts]))


def block_hashes(cfg: KongConfig, hashes: SketchHashes, bucket: Tensor, sign: Tensor,
                 level: Tensor) -> Tuple[Tensor, Tensor]:
    """Buckets and signs :obj:`[M, p]` of grams placed in their level's block."""
    if not traversal_rule(cfg).shifted():
        return bucket, sign
    shift, flip = hashes.shift.t()[level], hashes.flip.t()[level].to(sign.dtype)
    return bucket_of(bucket + shift, hashes.dim), sign * flip


def scatter_sketch(out: Tensor, node: Tensor, bucket: Tensor, sign: Tensor, val: Tensor) -> None:
    """Add :obj:`val * sign[:, f]` into sketch :math:`f` of :obj:`node`.

    :obj:`out` is :obj:`[N, p * b]`, sketch :math:`f` its columns
    :obj:`f * b .. (f + 1) * b - 1`; :obj:`bucket` and :obj:`sign` are
    :obj:`[M, p]`.
    """
    p = bucket.size(1)
    b = out.size(1) // max(p, 1)
    offset = torch.arange(p, device=out.device) * b
    value = (sign * val.unsqueeze(1)).view(-1).to(out.dtype)
    place(out, node.repeat_interleave(p), (bucket + offset).view(-1), value)


def step_injection(grams: LocalGrams, gh: GramHashes, step: int, num_nodes: int, width: int,
                   device: torch.device) -> Optional[Tensor]:
    """The Count-Sketches :obj:`[N, p * b]` of the occurrences of :obj:`step` (None: none)."""
    entry = grams.steps[step]
    if entry is None:
        return None
    node, gid = entry
    out = torch.zeros(num_nodes, width, dtype=torch.float64, device=device)
    ones = torch.ones(node.numel(), dtype=torch.float64, device=device)
    scatter_sketch(out, node, gh.bucket[gid], gh.sign[gid], ones)
    return out


def sparse_aggregator(prep: PreparedGraph) -> Aggregate:
    r"""The default :data:`Aggregate`: a sparse adjacency product.

    Sum aggregation is order-free, so a sorted sparse matrix is fine here;
    the neighbor order lives in the occurrences, never in this.
    """
    n, hood = prep.num_nodes, prep.hood
    ignore_sparse_notices()  # (before the tensor is made: PyTorch 2.11 gives its notice there)
    adj = torch.sparse_coo_tensor(
        torch.stack([hood.center, hood.nbr]),
        torch.ones(hood.nbr.numel(), dtype=torch.float64, device=hood.nbr.device),
        (n, n), check_invariants=False,
    )
    csr = adj.coalesce().to_sparse_csr()  # sums multi-edges (order-free)

    def aggregate(y: Tensor, inject: Optional[Tensor]) -> Tensor:
        out = csr @ y
        return out if inject is None else out + inject

    return aggregate


def _shift_into(out: Tensor, y: Tensor, hashes: SketchHashes, level: int) -> None:
    """:obj:`out += ` the level-free :obj:`y` :obj:`[N, p * b]` moved into its level's block."""
    b = hashes.dim
    for f in range(hashes.degree):
        shift, flip = hashes.level(f, level)
        out[:, f * b : (f + 1) * b] += shift_level(y[:, f * b : (f + 1) * b], shift, flip.to(y.dtype))


#: Messages of one :meth:`~torch_geometric.nn.conv.MessagePassing.propagate` call hold at most this many
#: entries (wider sketches are propagated in column blocks: :meth:`KongSketch.aggregator
#: <kong_pyg.KongSketch.aggregator>`).
MESSAGE_ENTRIES = 1 << 24
#: Bytes a propagated exact count entry takes at a step's peak (its row, column and value, the edge and
#: offset of its copy, the merge of duplicates), measured at about 40.
EXACT_STEP_BYTES = 40


def propagation_copies(cfg: KongConfig) -> int:
    """Float64 :obj:`[N, p * b]` arrays alive at once in :func:`propagate_sketches`.

    The sketches :math:`Y^{(i-1)}`, the step's injection, the new :math:`A Y + X`, and where levels go
    into blocks of their own (BFS) the output they are added into.
    """
    return 4 if traversal_rule(cfg).shifted() else 3


def dense_step_bytes(cfg: KongConfig, num_nodes: int, num_edges: int, width: int) -> int:
    """Bytes a step of :func:`propagate_sketches` holds at once.

    Its float64 copies of the :obj:`[N, width]` sketches, and a block of messages and their sum where
    the aggregation passes messages over :obj:`num_edges` edges (0: none, as a sparse product): a block
    holds at most :data:`MESSAGE_ENTRIES` entries, or one column's.
    """
    block = max(num_edges, min(num_edges * width, MESSAGE_ENTRIES))
    return propagation_copies(cfg) * num_nodes * width * 8 + 16 * block


def propagate_sketches(
    cfg: KongConfig,
    hashes: SketchHashes,
    grams: LocalGrams,
    gh: GramHashes,
    num_nodes: int,
    aggregate: Aggregate,
    levels: Sequence[Rows] = (),
) -> Tensor:
    r"""Count-Sketches :obj:`[N, p, b]` of the node counts, propagated densely.

    :math:`Y^{(i)} = A Y^{(i-1)} + X^i` on Count-Sketches (they are linear):
    :obj:`aggregate` sums the neighbors' sketches and adds the sketch of the
    step's new k-grams. With :obj:`levels`, the exact count rows of the first
    steps, the propagation continues from them. BFS places every level in
    its own (shifted) block. Costs :math:`O(m p b)` per step, whatever the
    strings' lengths.
    """
    p, b = hashes.degree, hashes.dim
    dev = hashes.coef.device
    width = p * b
    rule = traversal_rule(cfg)
    y = torch.zeros(num_nodes, width, dtype=torch.float64, device=dev)
    out = torch.zeros_like(y) if rule.shifted() else None
    blocks = set(rule.blocks(cfg.hops))
    if levels:
        last = levels[-1]
        scatter_sketch(y, last.row, gh.bucket[last.col], gh.sign[last.col], last.val)
        if out is not None:
            for level, lv in enumerate(levels):
                if level not in blocks:
                    continue
                bucket, sign = block_hashes(cfg, hashes, gh.bucket[lv.col], gh.sign[lv.col],
                                            torch.full_like(lv.col, level))
                scatter_sketch(out, lv.row, bucket, sign, lv.val)
    for step in range(len(levels), cfg.hops + 1):
        inject = step_injection(grams, gh, step, num_nodes, width, dev)
        if step == 0:
            y = y if inject is None else inject
        else:
            y = aggregate(y, inject)
        if out is not None and step in blocks:
            _shift_into(out, y, hashes, step)
    return (y if out is None else out).view(num_nodes, p, b)


__all__ = [
    "Aggregate",
    "GramHashes",
    "gram_hashes",
    "block_hashes",
    "scatter_sketch",
    "step_injection",
    "sparse_aggregator",
    "propagate_sketches",
    "propagation_copies",
    "dense_step_bytes",
    "MESSAGE_ENTRIES",
    "EXACT_STEP_BYTES",
]
