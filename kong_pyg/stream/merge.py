r"""Merging the states of consecutive time shards of a stream, in any pass (:func:`merge_streams`).

**Pass 1.** Each shard is read by a fresh stream. Per node, the string over
A followed by B is the concatenation of the two strings; its k-grams are
A's, B's and those that cross the seam, which lie in A's suffix codes and
B's prefix codes. So the merged state sums the sketches (node or graph
rows), hashes in the seam k-grams, and joins the codes
(:func:`~kong_pyg.kgrams.concat_pieces`); graphs and nodes first seen in B
are appended in B's order, as in one run over A then B.

**Pass** :math:`i \geq 2`. Each shard is read by a copy of the *base*: the
merged state after pass :math:`i - 1`, closed by :meth:`KongStream.end_pass
<kong_pyg.KongStream.end_pass>` (so every node and the previous strings and
sketches are known to all shards). What a shard adds is its nodes' strings
of pass :math:`i` so far (codes), the sketches of their grams (``Y``, or the
graph rows of the last pass of the linear map) and, for that last pass, how
often each node was a neighbor (``nbr_w``): the strings join as in pass 1,
the rest adds up, the base is kept once. Where the linear map's pass 2
replays pass 1 (:math:`h = 2`, see :mod:`kong_pyg.stream`), pass 1 counts
``nbr_w`` (it adds up there and belongs to the base in pass 2) and the
replayed strings join too, their seam grams counted :math:`w_u` times.

Either way the replay checksums combine (:func:`~kong_pyg.stream.replay.combine`):
the merged pass has the count and checksum of the whole, and the end of
the pass checks it against pass 1 as in one process. For consecutive time
shards the result equals the state of one process reading the whole pass,
so an :math:`h`-pass stream can be read by many workers pass by pass (see
:mod:`kong_pyg.stream.distributed`); the operation is associative.
"""
from typing import Any, Callable, Optional, Tuple

import torch
from torch import Tensor

from ..devices import cpu_by_default
from ..kgrams import StringState, concat_pieces, flat_nonzero
from .checkpoint import options_diff
from .core import KongStream
from .passes import Sink
from .replay import combine
from .state import add_rows


def _joined_strings(out: KongStream, b: KongStream, ids: Tensor, smap: Tensor, name: str,
                    sink: Optional[Sink]) -> None:
    """Join every node's string codes :obj:`name` (A's, then B's); seam grams go to :obj:`sink`."""

    def remap(t: Tensor) -> Tensor:  # B's symbol ids -> out's (BREAK stays)
        return torch.where(t >= 0, smap[t.clamp(min=0)], t)

    k, n = out.k, b.num_nodes
    bseg = b._nodes.strings(name)
    bseg = StringState(bseg.length, remap(bseg.prefix), remap(bseg.suffix))
    aseg = out._nodes.strings(name, ids)
    pieces = StringState(
        torch.stack([aseg.length, bseg.length], 1).view(-1),
        torch.stack([aseg.prefix, bseg.prefix], 1).view(-1, k - 1),
        torch.stack([aseg.suffix, bseg.suffix], 1).view(-1, k - 1),
    )
    crossing, state = concat_pieces(torch.arange(n).repeat_interleave(2), pieces, n, k, out.lengths)
    if sink is not None:
        for length in sorted(crossing):
            sink.emit(ids[crossing[length].node], crossing[length].grams)
    out._nodes.set_strings(name, ids, state)


def _check_same_base(a: KongStream, b: KongStream) -> None:
    """Shards of a pass >= 2 must start from the same base (the merged previous passes)."""
    i = a.pass_index
    same = (a.num_edges == b.num_edges and a._first == b._first and a.num_nodes == b.num_nodes
            and a.num_graphs == b.num_graphs
            and bool((a._ids.nodes.keys == b._ids.nodes.keys).all())
            and torch.equal(a._nodes["prev_len"][: a.num_nodes], b._nodes["prev_len"][: b.num_nodes])
            and torch.equal(a._rows[: a.num_graphs], b._rows[: b.num_graphs]))
    if not same:
        raise ValueError(f"the two pass-{i} states did not start from the same state after pass {i - 1}: "
                         f"shards of pass {i} must each read their part into a copy of the merged, closed "
                         f"state of pass {i - 1}")


@cpu_by_default
def merge_streams(a: KongStream, b: KongStream) -> KongStream:
    r"""The state of stream A followed by stream B, from their states alone, in any pass.

    See :mod:`~kong_pyg.stream.merge`: in pass 1 the two are the states of
    consecutive time shards read by fresh streams; in pass
    :math:`i \geq 2`, of consecutive shards of the stream read by copies of
    the same state (the merged state of the passes before, after
    :meth:`~kong_pyg.KongStream.end_pass`). The result equals the state of
    one stream reading A then B; the merge is associative, so shards can be
    read in parallel (even on other machines) and merged in time order.

    Both states must be in the same pass with the same options. A stream
    labels a node by the type of its first edge, so in pass 1 a node that
    both shards saw must have the same first type in both: where B first saw
    it with another type, B has used that one, and the merge raises a
    :class:`ValueError` naming the node (:class:`NodeTypeConflict`).

    Args:
        a (KongStream): The earlier shard.
        b (KongStream): The later shard.

    Returns:
        KongStream: A new stream (the inputs are left unchanged).
    """
    if not isinstance(a, KongStream) or not isinstance(b, KongStream):
        bad = b if isinstance(a, KongStream) else a
        raise TypeError(f"merge_streams() and KongStream.merge() take KongStream objects (got "
                        f"{type(bad).__name__})")
    _check_mergeable(a, b)
    return _merge(a.copy(), b)  # (the copy passes the checks a passed)


def _check_mergeable(a: KongStream, b: KongStream) -> None:
    if a.config() != b.config():
        diff = options_diff(a.config(), b.config())
        raise ValueError(f"cannot merge streams with different options (first, second): {diff}")
    if a.pass_index != b.pass_index:
        raise ValueError(f"cannot merge a state in pass {a.pass_index} with one in pass {b.pass_index}")
    a._usable()
    b._usable()
    if a._replay != b._replay:
        raise ValueError("cannot merge a state that replays pass 1 in its last pass with one that keeps node "
                         "sketches (written by an earlier version): finish the run of the earlier state on "
                         "its own, or read that shard again with a new stream")
    if a.hashes.version != b.hashes.version:
        raise ValueError(f"cannot merge a state of hash scheme {a.hashes.version} with one of scheme "
                         f"{b.hashes.version} (scheme 1: begun by kong_pyg before scrambled hashes): their "
                         "sketches use other buckets; finish the earlier run on its own, or read that shard "
                         "again with a new stream")
    if a.pass_index > 1:
        _check_same_base(a, b)
        if a.position + b.position > a.num_edges:
            raise ValueError(f"the two pass-{a.pass_index} states read {a.position + b.position} edges, "
                             f"more than pass 1 ({a.num_edges}): they are not consecutive shards of the "
                             "stream")


def _type_name(code: int) -> str:
    """A type label for messages: an integer type as itself, a string type by its code (a digest)."""
    return str(code) if code < 1 << 56 else f"<string, code {code:#x}>"


class NodeTypeConflict(ValueError):
    """A node whose first type differs between two pass-1 shards (:func:`merge_streams` cannot merge them).

    Attributes:
        graph, node: The node's graph id and node id (as the stream was given them).
        types (tuple): Its type in the earlier and in the later shard.
        count (int): How many nodes differ so.
    """

    def __init__(self, graph: Any, node: Any, types: Tuple[int, int], count: int):
        self.graph, self.node, self.types, self.count = graph, node, types, count
        super().__init__(self.message())

    def message(self, name: Callable[[Any], Any] = lambda v: v) -> str:
        """The message, with ids shown as :obj:`name` gives them (a reader's tokens, say)."""
        first, second = (_type_name(t) for t in self.types)
        return (f"node {name(self.node)!r} of graph {name(self.graph)!r} has type {first} in the "
                f"earlier shard and {second} in the later one ({self.count:,} such "
                f"node{'' if self.count == 1 else 's'}): a stream "
                "labels a node by the type of its first edge, and the later shard has already used its other "
                "type, so the merge cannot equal one stream reading both. Give every node one type, or read "
                "the stream in one process")


def _check_node_types(out: KongStream, b: KongStream, ids: Tensor, smap: Tensor, n0: int) -> None:
    """A node both pass-1 shards saw must have the same label (its type on its first edge) in both.

    One stream labels a node by its first edge's type; a later shard that first saw the node with
    another type has used that one in its strings and sketches, which a merge cannot undo.
    """
    both = flat_nonzero(ids < n0)
    if not both.numel():
        return
    mine = out._nodes["node_sym"].index_select(0, ids.index_select(0, both))
    theirs = smap.index_select(0, b._nodes["node_sym"][: b.num_nodes].index_select(0, both))
    clash = flat_nonzero(mine != theirs)
    if clash.numel():
        graph, node = out._ids.node_name(int(ids[int(both[clash[0]])]))
        first, second = (int(out._table.keys[int(t[clash[0]])]) // 2 for t in (mine, theirs))
        raise NodeTypeConflict(graph, node, (first, second), int(clash.numel()))


def merge_into(out: KongStream, b: KongStream) -> KongStream:
    """:func:`merge_streams` into :obj:`out` itself (no copy of it; :obj:`b` is left unchanged).

    A merge that fails (:class:`NodeTypeConflict`) leaves :obj:`out` half-merged: drop it (as the
    sharded reading does, ending the run), or use :func:`merge_streams`, which merges into a copy.
    """
    _check_mergeable(out, b)
    return _merge(out, b)


def _merge(out: KongStream, b: KongStream) -> KongStream:
    """:func:`merge_into` of streams :func:`_check_mergeable` has passed."""
    later = out.pass_index > 1
    out._settle()
    b._settle()  # (its counted grams into its rows: the same state, another form)
    a_current, a_position = out._current, out.position
    with torch.no_grad():
        gmap_np, ids_np, first_np = out._ids.absorb(b._ids)
        out._rows_for(out.num_graphs)
        smap = out._table.ids(b._table.keys)
        nodes, bnodes = out._nodes, b._nodes
        n0, n1 = nodes.n, len(out._ids.nodes)
        if not later:
            _check_node_types(out, b, torch.from_numpy(ids_np), smap, n0)
        nodes.grow(n1)
        ids, new, gmap = (torch.from_numpy(x) for x in (ids_np, first_np, gmap_np))
        nodes["node_graph"][n0:n1] = gmap[bnodes["node_graph"][: b.num_nodes]][new]
        nodes["node_sym"][n0:n1] = smap[bnodes["node_sym"][: b.num_nodes][new]]
        if out.k > 1 and b.num_nodes:
            _joined_strings(out, b, ids, smap, "seg", out._sink())
            if later and out._replay:  # the replay of pass 1's strings (weighted grams at the seam)
                _joined_strings(out, b, ids, smap, "rep", out._replay_sink())
        # what the shards added: node sketches, neighbor counts (the base's where pass 1 counted them)
        for name in ("Y",) if later and out._replay else ("Y", "nbr_w"):
            if name in bnodes and b.num_nodes:
                mine, theirs = nodes[name].view(nodes.cap, -1), bnodes[name][: b.num_nodes]
                add_rows(mine, ids, theirs.view(b.num_nodes, -1))
        if out.linear and b.num_graphs:
            if later:  # the rows of earlier levels are the base's, once; the pass's own rows add up
                add_rows(out._pass_rows, gmap, b._pass_rows[: b.num_graphs])
            else:
                add_rows(out._rows, gmap, b._rows[: b.num_graphs])
        if a_current is None or b._current is None:
            out._current = None
        else:
            out._current = combine(a_current, a_position, b._current)
        out.position = a_position + b.position
        if not later:
            out.num_edges += b.num_edges
    return out
