r"""A stream's graph features, from its state after the last pass.

What the passes did not add is added here: the label 1-grams of level 0
(when level 0 is a block) and, when the label heads every string (WL), the
grams that cross from the label into the last string; then the last level's
sketches are placed in their block. The linear map (:meth:`BaseKernel.is_linear
<kong_pyg.kernels.BaseKernel.is_linear>`) sums them per graph; any other base
kernel forms each node's map from its Count-Sketches
(:meth:`BaseKernel.sketch_node_maps <kong_pyg.kernels.BaseKernel.sketch_node_maps>`)
and sums those.
"""
from typing import TYPE_CHECKING, Iterator, Optional, Tuple

import torch
from torch import Tensor

from ..kernels import get_kernel
from ..outputs import cast_checked, check_finite
from ..warn import warn
from .passes import label_head
from .state import add_rows, row_blocks

if TYPE_CHECKING:  # pragma: no cover
    from .core import KongStream


def final_sketches(ks: "KongStream", in_place: bool = False) -> Tensor:
    """The graph features in the stream's dtype, or a clear error where they overflow it (inf or NaN).

    :obj:`in_place`: the linear map's features are formed in the memory of the graph rows (which
    then no longer hold the stream's state; see :meth:`KongStream.sketches`).
    """
    if not ks.linear:  # (the node sketches: the levels summed, and the last one's)
        warn_if_inexact(ks, *(ks._nodes[name][: ks._nodes.n] for name in ("acc", "Y") if name in ks._nodes))
        out = node_map_sketches(ks)
        check_finite(out, ks.cfg, "sketch", ks.dtype, cosine=False)  # (node sketches overflowed ks.dtype)
        return cast_checked(out, ks.dtype, ks.cfg)
    out = linear_sketches(ks, in_place)  # (it warns where its float32 sums reached 2^24)
    check_finite(out, ks.cfg, "stream's sketches", ks.dtype, cosine=False)
    return out


#: Counts up to this are exact in ``float32``; from it on an added 1 can be lost (2^24 + 1 rounds down).
FLOAT32_EXACT = 2**24


def warn_if_inexact(ks: "KongStream", *counts: Tensor) -> None:
    """Warn (once) where a ``float32`` stream's sketch entries :obj:`counts` reached :data:`FLOAT32_EXACT`."""
    if ks.dtype != torch.float32:
        return
    for part in counts:
        if not part.numel():
            continue
        low, high = torch.aminmax(part)  # (no |counts| copy of the rows)
        if max(-float(low), float(high)) < FLOAT32_EXACT:
            continue
        warn(f"KongStream(dtype=torch.float32): a sketch entry reached 2^24 = {FLOAT32_EXACT:,}, where "
             "float32 stops counting every edge (adding 1 can leave it unchanged, so later edges may go "
             "uncounted); use dtype=torch.float64 for streams this large")
        return


def final_grams(ks: "KongStream", nodes: Tensor) -> Iterator[Tuple[Tensor, Tensor, Optional[int]]]:
    """(owner = position in :obj:`nodes`, grams, level block) of the grams added at output."""
    trav, hops = ks.traversal_rule, ks.hops
    if 0 in trav.blocks(hops) and 1 in ks.lengths:  # s^0 = l(v) is a block
        label = ks._nodes["node_sym"][nodes]
        yield torch.arange(nodes.numel()), label.view(-1, 1), ks._block(0)
    if hops >= 1 and trav.label_in_string:  # l(v) heads the last string
        grams, _ = label_head(ks._nodes, ks.lengths, nodes)
        for owner, g in grams.values():
            yield owner, g, ks._block(hops)


def linear_sketches(ks: "KongStream", in_place: bool = False) -> Tensor:
    r"""Graph features of the linear map: graph rows plus the output-time grams and levels.

    After the last pass of :math:`h \geq 2` the rows hold every level but the
    last; the last level is the grams that pass added (into rows of their
    own) plus :math:`\sum_v w_v Y^{(h-1)}_v` (:math:`w_v`: how often
    :math:`v` was a neighbor in the last pass), a sum the last pass added
    itself where it replayed pass 1 (:math:`h = 2`).
    """
    table, state = ks._table, ks._nodes
    n, b = state.n, ks.dim
    out = ks._rows[: ks.num_graphs] if in_place else ks._rows[: ks.num_graphs].clone()
    if ks.pass_index > 1:
        out += ks._pass_rows[: ks.num_graphs]
    graph = state["node_graph"][:n]
    for lo, hi in row_blocks(n, 1, 1 << 20):
        nodes = torch.arange(lo, hi)
        for owner, grams, level in final_grams(ks, nodes):
            table.scatter(out, graph[nodes][owner], grams, level)
    if ks.hops >= 2 and not ks._replay:  # per graph, then placed (a signed permutation of columns)
        if "Yprev" not in state:
            raise ValueError("this state has no sketches of the previous pass (a shard's state of the last "
                             "pass, see kong_pyg.stream.distributed): merge it into the full state first")
        w, prev = state["nbr_w"], state["Yprev"]
        last = torch.zeros_like(out)
        for lo, hi in row_blocks(n, b):
            add_rows(last, graph[lo:hi], prev[lo:hi] * w[lo:hi].view(-1, 1))
        out += table.place_rows(last, ks._block(ks.hops))
    # what accumulated in the stream's dtype: the rows, and with h >= 3 the last level summed here; not
    # the constant below, added once (one rounding)
    warn_if_inexact(ks, out)
    const = get_kernel(ks.kernel).const_value(ks.cfg)
    if const:
        bucket, sign = ks.hashes.const_token()
        sizes = torch.bincount(graph, minlength=ks.num_graphs).to(out.dtype)
        out[:, int(bucket[0])] += float(sign[0]) * const * sizes
    return out


def node_map_sketches(ks: "KongStream") -> Tensor:
    """Graph features of a non-linear map: the sum of each graph's node maps (in ``float64``)."""
    table, state = ks._table, ks._nodes
    p, b = ks.degree, ks.dim
    kernel = get_kernel(ks.kernel)
    out = torch.zeros(ks.num_graphs, b, dtype=torch.float64)
    graph = state["node_graph"]
    for lo, hi in row_blocks(state.n, p * b):
        nodes = torch.arange(lo, hi)
        c = torch.zeros(hi - lo, p * b, dtype=torch.float64)
        for owner, grams, level in final_grams(ks, nodes):
            table.scatter(c, owner, grams, level)
        if ks.hops >= 1:
            c += table.place_rows(state["Y"][lo:hi].to(torch.float64), ks._block(ks.hops))
        if "acc" in state:
            c += state["acc"][lo:hi]
        check_finite(c, ks.cfg, "sketch", ks.dtype, cosine=False)  # (node sketches that overflowed ks.dtype)
        cs = c.view(hi - lo, p, b).permute(1, 0, 2)
        add_rows(out, graph[lo:hi], kernel.sketch_node_maps(ks.cfg, ks.hashes, cs))
    return out
