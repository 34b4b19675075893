r"""Merging the states of consecutive time shards of a stream (:func:`merge_streams`)."""
import torch
from torch import Tensor

from ..kgrams import StringState, concat_pieces
from .core import KongStream
from .passes import Sink
from .state import add_rows


def _joined_strings(out: KongStream, b: KongStream, ids: Tensor, smap: Tensor) -> None:
    """Join every node's string codes (A's, then B's) and add the grams that cross the seam."""

    def remap(t: Tensor) -> Tensor:  # B's symbol ids -> out's (BREAK stays)
        return torch.where(t >= 0, smap[t.clamp(min=0)], t)

    k, n = out.k, b.num_nodes
    bseg = b._nodes.strings("seg")
    bseg = StringState(bseg.length, remap(bseg.prefix), remap(bseg.suffix))
    aseg = out._nodes.strings("seg", ids)
    pieces = StringState(
        torch.stack([aseg.length, bseg.length], 1).view(-1),
        torch.stack([aseg.prefix, bseg.prefix], 1).view(-1, k - 1),
        torch.stack([aseg.suffix, bseg.suffix], 1).view(-1, k - 1),
    )
    crossing, state = concat_pieces(torch.arange(n).repeat_interleave(2), pieces, n, k, out.lengths)
    sink: Sink = out._sink()
    for length in sorted(crossing):
        sink.emit(ids[crossing[length].node], crossing[length].grams)
    out._nodes.set_strings("seg", ids, state)


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
        gmap_np, ids_np, first_np = out._ids.absorb(b._ids)
        out._rows_for(out.num_graphs)
        smap = out._table.ids(b._table.keys)
        nodes, bnodes = out._nodes, b._nodes
        n0, n1 = nodes.n, len(out._ids.nodes)
        nodes.grow(n1)
        ids, new, gmap = (torch.from_numpy(x) for x in (ids_np, first_np, gmap_np))
        nodes["node_graph"][n0:n1] = gmap[bnodes["node_graph"][: b.num_nodes]][new]
        nodes["node_sym"][n0:n1] = smap[bnodes["node_sym"][: b.num_nodes][new]]
        if out.k > 1 and b.num_nodes:
            _joined_strings(out, b, ids, smap)
        if "Y" in bnodes:
            add_rows(nodes["Y"], ids, bnodes["Y"][: b.num_nodes])
        if out.linear and b.num_graphs:
            add_rows(out._rows, gmap, b._rows[: b.num_graphs])
        out.position = a.position + b.position
        out.num_edges = a.num_edges + b.num_edges
    return out
