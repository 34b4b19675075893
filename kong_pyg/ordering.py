r"""The neighbor-order rule, stated and implemented once.

With :obj:`flow="source_to_target"` (PyG's default), node
:math:`i = \mathrm{edge\_index}[1, e]` collects from
:math:`j = \mathrm{edge\_index}[0, e]`; with :obj:`"target_to_source"` the
roles swap. **The neighbor order** :math:`\tau_i` **of node** :math:`i`
**is the order in which its incoming edges appear in** :obj:`edge_index`.
A per-edge key (a timestamp, say) re-sorts each neighborhood by that key,
ties kept in :obj:`edge_index` order. Derived orders for experiments sort by
the neighbor's label or degree (ties by what no node numbering changes:
:func:`colour_ranks`), or shuffle each neighborhood with a seed.

Every sort here is a stable sort, so nothing but the chosen key moves an
edge. PyG's :func:`~torch_geometric.utils.coalesce`,
:func:`~torch_geometric.utils.to_undirected`,
:func:`~torch_geometric.utils.sort_edge_index` and sparse adjacency formats
sort neighbors by id and so destroy :math:`\tau`; :mod:`kong_pyg` never calls
them on the user's edges.
"""
from typing import Any, NamedTuple, Optional, Tuple

import numpy as np
import torch
from torch import Tensor

from .hashing import (
    P,
    keyed_hash,
    linear_hash_rows,
    random_coefficients,
    row_fingerprint,
    sequence_fingerprint,
    sequence_powers,
)


class Neighborhoods(NamedTuple):
    """Ordered neighborhoods in CSR form.

    Attributes:
        center (torch.Tensor): :obj:`[m]` the node whose neighborhood holds
            each edge, non-decreasing.
        nbr (torch.Tensor): :obj:`[m]` the neighbor, in neighbor order within
            each center's segment.
        perm (torch.Tensor): :obj:`[m]` the original edge ids in this order.
        ptr (torch.Tensor, optional): :obj:`[n + 1]` segment boundaries;
            :obj:`None` when the edges were left in edge order (see
            :obj:`grouped` of :func:`ordered_neighborhoods`).
    """

    center: Tensor
    nbr: Tensor
    perm: Tensor
    ptr: Optional[Tensor]

    @property
    def segments(self) -> Tensor:
        """The segment boundaries :obj:`ptr` (an error if the edges are not grouped)."""
        if self.ptr is None:
            raise ValueError("these neighborhoods are not grouped by center")
        return self.ptr

    @property
    def degree(self) -> Tensor:
        """Neighborhood sizes :obj:`[n]`."""
        ptr = self.segments
        return ptr[1:] - ptr[:-1]


#: The orders that read a per-edge key (:obj:`edge_order`).
ORDERS_WITH_KEY = ("edge", "reverse", "consistent")

#: The orders whose ties :func:`~kong_pyg.inputs.prepare_graph` breaks by what the node numbering cannot
#: change (edge labels, then WL colours: :func:`colour_ranks`).
TIED = ("label", "degree")


#: The version of :func:`random_key` (2: per graph, from its places and content; 1: one permutation of
#: a call's edges). Results that stored shuffled scores (``table2 --resume``) record it.
RANDOM_ORDER_VERSION = 2


def key_attribute(order: str, attr: Optional[str]) -> Optional[str]:
    """The graphs' per-edge key attribute to read for :obj:`order` (None where the order reads none).

    Data sets with event keys (ego graphs, provenance graphs) store one whatever order is asked;
    an order that reads no key must not be handed one (it would refuse it).
    """
    return attr if order in ORDERS_WITH_KEY else None


def stable_sort_ids(ids: Tensor, num_nodes: int = 2**31 - 1) -> Tuple[Tensor, Tensor]:
    """:obj:`torch.sort(ids, stable=True)` of node ids in :obj:`[0, num_nodes)` (values: dtype of :obj:`ids`).

    The permutation keeps arrival order within each id. On the CPU with at
    most :math:`2^{16}` nodes through NumPy's stable sort of 16-bit keys (a
    radix sort: 1.9x faster on ENZYMES' 74,564 edges, 3x on MUTAG's 7,442);
    else torch's stable sort of 32-bit keys where the ids fit (a radix sort
    on the CPU, several times faster than a comparison sort of 64-bit keys).
    A stable sort's order is unique: the same result.
    """
    if ids.device.type == "cpu" and num_nodes <= 2**16:
        order = torch.from_numpy(np.argsort(ids.resolve_neg().numpy().astype(np.uint16), kind="stable"))
        return ids.index_select(0, order), order
    if num_nodes >= 2**31:
        return torch.sort(ids, stable=True)
    values, perm = torch.sort(ids.to(torch.int32), stable=True)
    return values.to(ids.dtype), perm


def _stable_argsort(key: Tensor) -> Tensor:
    return torch.sort(key, stable=True).indices


def consistent_key(edge_order: Tensor, seed: int) -> Tensor:
    r"""A seeded random sort key that depends only on each edge's key value.

    Edges with the same :obj:`edge_order` value (the same event seen from
    several graphs) get the same random key in every graph, batch and call,
    so a node's neighbors are shuffled the same way wherever it appears
    ("random timestamps"); equal values stay tied (edge order). Equal values
    get the same key in any dtype (a timestamp stored as ``5`` or ``5.0``).

    The key must look random *in order*, not only in value: sorting by an
    affine hash of the key (:func:`~kong_pyg.hashing.keyed_hash` alone)
    would reorder consecutive keys :math:`x, x + 1, \ldots` by
    :math:`c x \bmod P`, a fixed stride (at most three distinct gaps between
    neighbors in the result), which keeps much of the time order. So the
    high half of :func:`~kong_pyg.hashing.keyed_hash` goes through
    :func:`_mix`, a seeded permutation of :math:`[0, P)` with a fifth power
    in the middle; then every relative order of a few consecutive keys is
    equally likely.
    """
    if edge_order.is_floating_point():  # whole numbers as the integers they equal (5.0 and 5: one key),
        x = edge_order.double()  # other values by their bits (exact: equal values, equal bits)
        whole = (x == torch.round(x)) & (x.abs() < 2.0**63)
        bits = torch.where(whole, torch.where(whole, x, 0.0).long(), x.view(torch.long))
    else:
        bits = edge_order.long()
    h = keyed_hash(bits, seed)
    return (_mix(h >> 31, seed) << 31) | (h & P)


def _mix(a: Tensor, seed: int) -> Tensor:
    r"""A seeded nonlinear permutation of :math:`[0, P)`: affine, :math:`x^5`, affine (all mod :math:`P`).

    :math:`x \mapsto x^5` permutes :math:`\mathbb{Z}_P` because 5 does not
    divide :math:`P - 1`; every product stays below :math:`2^{62}`.
    """
    gen = torch.Generator().manual_seed(int(seed) ^ 0x0DE5)
    c = random_coefficients((4,), gen).to(a.device)
    a = (c[0] * a + c[1]) % P
    a2 = a * a % P
    a = a2 * a2 % P * a % P
    return (c[2] * a + c[3]) % P


def _ranks(group: Tensor) -> Tensor:
    """Each element's position among the elements of its group, in index order."""
    n = group.numel()
    by_group = torch.sort(group, stable=True).indices
    sizes = torch.bincount(group)
    starts = torch.cumsum(sizes, 0) - sizes
    ranks = torch.empty(n, dtype=torch.long, device=group.device)
    first = starts.index_select(0, group.index_select(0, by_group))
    ranks[by_group] = torch.arange(n, device=group.device) - first
    return ranks


def random_key(center: Tensor, nbr: Tensor, num_nodes: int, node_label: Optional[Tensor],
               batch: Optional[Tensor], seed: int) -> Tensor:
    """The sort key of :obj:`order="random"`: a seeded hash of each edge's graph and place in it.

    A graph's "content" is a hash summed over its edges of (place, the two ends' positions among
    the graph's nodes, their labels), so it does not depend on the other graphs of a batch or on
    the batch size; the key hashes (place, content) and goes through :func:`consistent_key`. Two
    graphs whose edges sit at the same places (ego graphs, whose ego's edges come first) so get
    different shuffles unless they are the same graph (edge labels do not enter the content, nor
    do isolated nodes after a graph's last node with edges: graphs that differ only there share a
    shuffle; an isolated node before others moves their positions, and so the shuffle).
    """
    device = center.device
    owner = torch.zeros(num_nodes, dtype=torch.long, device=device) if batch is None else batch.long()
    graph = owner.index_select(0, center)
    place, local = _ranks(graph), _ranks(owner)
    label = torch.zeros(num_nodes, dtype=torch.long, device=device) if node_label is None else node_label
    ends = torch.stack([place, local.index_select(0, center), local.index_select(0, nbr),
                        label.index_select(0, center), label.index_select(0, nbr)], 1)
    coef = random_coefficients((2, 12), torch.Generator().manual_seed(int(seed) ^ 0x4A5D)).to(device)
    # each edge's term through _mix, a nonlinear permutation: a sum of linear hashes would depend on the
    # sum of the labels only; terms below P < 2^31, so the sums stay far below 2^63
    content = torch.zeros(int(graph.max()) + 1 if graph.numel() else 0, dtype=torch.long, device=device)
    content.index_add_(0, graph, _mix(linear_hash_rows(ends, coef[:1])[0], seed))
    both = torch.stack([place, content.index_select(0, graph) % P], 1)
    return consistent_key(linear_hash_rows(both, coef[1:])[0], seed)


def wl_relabel(label: Tensor, hood: Neighborhoods, edge_sym: Optional[Tensor] = None,
               layout: Optional[Tuple[Tensor, Tensor, Any]] = None) -> Tensor:
    r"""One round of WL relabelling.

    The new label is a 58-bit fingerprint of
    :math:`(l(v), \{\!\{ l(u) : u \in N_v \}\!\})`, or with :obj:`edge_sym` (edge symbols in
    :obj:`hood` order) of :math:`(l(v), \{\!\{ (e(v, u), l(u)) : u \in N_v \}\!\})`.

    Content-addressed (no table), so every graph, batch and device agrees. :obj:`layout`:
    :func:`_multiset_layout` of :obj:`hood`, where several rounds share it.
    """
    nb = label[hood.nbr]
    if edge_sym is not None:
        nb = row_fingerprint(torch.stack([edge_sym, nb], 1))
    perm = torch.sort(nb, stable=True).indices
    perm = perm[torch.sort(hood.center[perm], stable=True).indices]
    owner, position, powers = layout if layout is not None else _multiset_layout(hood)
    return sequence_fingerprint(label, nb[perm], owner, position, hood.degree, powers)


def _multiset_layout(hood: Neighborhoods) -> Tuple[Tensor, Tensor, Any]:
    """Where :func:`wl_relabel` puts each sorted neighbor label: its node, place and fingerprint powers.

    The same in every round over :obj:`hood`, whose centers are grouped.
    """
    owner = hood.center  # (grouped: non-decreasing, so sorting by center leaves it as it is)
    position = torch.arange(owner.numel(), device=owner.device) - hood.segments[owner] + 1
    return owner, position, sequence_powers(position, hood.degree)


def tie_rounds(order: str, depth: int) -> int:
    """The WL rounds that break ties of :obj:`order` ("label" or "degree") for strings of depth :obj:`depth`.

    :math:`h - 1` for labels, :math:`h` for degrees (see :func:`colour_ranks`).
    """
    return max(depth - 1 + (order == "degree"), 0)


def colour_ranks(node_sym: Tensor, hood: Neighborhoods, edge_sym: Optional[Tensor], rounds: int) -> Tensor:
    r"""Each node's rank in the order of its WL colours :math:`(c^1(v), \ldots, c^R(v))`.

    The colours are compared first to last (equal colours: equal ranks), :math:`R` = :obj:`rounds`
    (at least 1).

    :math:`c^0` is :obj:`node_sym` and :math:`c^t` is :func:`wl_relabel` of :math:`c^{t - 1}` with the
    edge symbols :obj:`edge_sym` (in :obj:`hood` order; :obj:`None` without edge labels). The
    colours are content-addressed, so the order of two nodes is the same in any graph numbering,
    batch and device (only the rank values depend on the other nodes).

    **Why** (:obj:`order="label"` / :obj:`"degree"` ties). Neighbors sorted by (key, edge symbol,
    these colours) and only then by edge position get strings that do not depend on how the nodes
    are numbered: by induction over the depth :math:`j`, a node's level-:math:`j` string is a
    function of :math:`c^{j + \delta}` (:math:`\delta` = 0 for labels, 1 for degrees, which
    :math:`c^1` holds), because the classes of equal (edge symbol, colour) come out contiguous
    and their pieces are equal; two neighbors still tied have equal :math:`c^R` and so equal
    strings up to depth :math:`h - 1` when :math:`R \geq h - 1 + \delta`
    (:func:`tie_rounds`): which of them comes first changes no string.
    """
    colours, c = [], node_sym
    layout = _multiset_layout(hood)
    for _ in range(rounds):
        c = wl_relabel(c, hood, edge_sym, layout)
        colours.append(c)
    order = torch.sort(colours[-1], stable=True).indices
    for c in reversed(colours[:-1]):  # (stable sorts by c^R, ..., c^1: lexicographic, c^1 first)
        order = order.index_select(0, torch.sort(c.index_select(0, order), stable=True).indices)
    last = colours[-1].index_select(0, order)  # (c^R holds every c^t: equal c^R, equal colours)
    new = torch.ones_like(last, dtype=torch.bool)
    new[1:] = last[1:] != last[:-1]
    ranks = torch.empty_like(last)
    ranks[order] = torch.cumsum(new, 0)
    return ranks


def ordered_neighborhoods(
    edge_index: Tensor,
    num_nodes: int,
    flow: str = "source_to_target",
    order: str = "edge",
    edge_order: Optional[Tensor] = None,
    node_label: Optional[Tensor] = None,
    seed: int = 0,
    grouped: bool = True,
    batch: Optional[Tensor] = None,
    ties: Optional[Tensor] = None,
    edge_ties: Optional[Tensor] = None,
) -> Neighborhoods:
    r"""Group edges by center node, each group in neighbor order.

    Args:
        edge_index (torch.Tensor): Edge indices :obj:`[2, m]`.
        num_nodes (int): The number of nodes.
        flow (str, optional): :obj:`"source_to_target"` or
            :obj:`"target_to_source"`. (default: :obj:`"source_to_target"`)
        order (str, optional): :obj:`"edge"` (edge order, or
            :obj:`edge_order` when given), :obj:`"reverse"` (that order
            backwards: time reversal), :obj:`"consistent"` (a seeded shuffle
            by :obj:`edge_order` values, the same wherever an edge key
            appears), :obj:`"label"` (by neighbor label), :obj:`"degree"` (by
            the neighbor's own neighborhood size, ascending: its in-degree
            for :obj:`"source_to_target"`) or :obj:`"random"` (a seeded shuffle of each
            neighborhood by :func:`random_key`: a graph gets the same
            shuffle in any batch or call, other graphs other shuffles). Ties
            keep edge order (reversed with :obj:`"reverse"`; :obj:`"label"` and
            :obj:`"degree"` first compare :obj:`edge_ties` and :obj:`ties`).
            (default: :obj:`"edge"`)
        edge_order (torch.Tensor, optional): A per-edge sort key :obj:`[m]`.
        node_label (torch.Tensor, optional): Symbol codes :obj:`[n]`, needed
            for :obj:`order="label"` (and read by :obj:`order="random"`).
        seed (int, optional): The seed of :obj:`order="random"`.
        grouped (bool, optional): Group the edges by center. Without it the
            edges stay in edge order and :obj:`ptr` is :obj:`None`: enough for
            order-free uses (sum aggregation, :math:`k = 1`), and no sort.
            (default: :obj:`True`)
        batch (torch.Tensor, optional): :obj:`[num_nodes]` graph of each node
            when the input joins several graphs (read by :obj:`order="random"`
            only; :obj:`None`: one graph).
        ties (torch.Tensor, optional): :obj:`[num_nodes]` for :obj:`order="label"` and
            :obj:`"degree"`: neighbors of equal key are sorted by their edge's
            :obj:`edge_ties` value (per edge, in edge order), then by their
            :obj:`ties` value, and only then keep edge order
            (:func:`~kong_pyg.inputs.prepare_graph` gives WL colour ranks).
        edge_ties (torch.Tensor, optional): :obj:`[m]` the edges' labels, for :obj:`ties`.
    """
    if flow == "source_to_target":
        nbr, center = edge_index[0], edge_index[1]
    else:
        center, nbr = edge_index[0], edge_index[1]
    m = center.numel()
    device = edge_index.device
    if not grouped:
        return Neighborhoods(center, nbr, torch.arange(m, device=device), None)
    reverse = order == "reverse"
    if order in ("edge", "reverse"):
        key = edge_order
    elif order == "consistent":
        if edge_order is None:
            raise ValueError(
                "order='consistent' shuffles by a per-edge key that is the same in every graph "
                "(a timestamp or a global edge id): pass 'edge_order'"
            )
        key = consistent_key(edge_order, seed)
    elif order == "label":
        if node_label is None:
            raise ValueError("order='label' needs the node labels")
        key = node_label[nbr]
    elif order == "degree":
        deg = torch.zeros(num_nodes, dtype=torch.long, device=device)
        deg.index_add_(0, center, torch.ones_like(center))
        key = deg[nbr]
    else:  # random: a seeded key of each edge's graph and place in it (the same on any device, in any batch)
        key = random_key(center, nbr, num_nodes, node_label, batch, seed)
    by_center = center
    perm: Optional[Tensor] = None
    if key is not None and order in TIED:  # (lexicographic: the last key sorted is the first compared)
        for tie in (None if ties is None else ties.index_select(0, nbr), edge_ties, key):
            if tie is not None:
                perm = _stable_argsort(tie) if perm is None else perm.index_select(
                    0, _stable_argsort(tie.index_select(0, perm)))
    elif key is not None:
        perm = _stable_argsort(key)
    if reverse:  # the whole order backwards, ties included
        perm = torch.arange(m - 1, -1, -1, device=device) if perm is None else perm.flip(0)
    if perm is not None:
        by_center = center.index_select(0, perm)
    sorted_center, grouping = stable_sort_ids(by_center, num_nodes)
    final = grouping if perm is None else perm.index_select(0, grouping)
    ptr = torch.zeros(num_nodes + 1, dtype=torch.long, device=device)
    torch.cumsum(torch.bincount(center, minlength=num_nodes), 0, out=ptr[1:])
    return Neighborhoods(sorted_center.long(), nbr.index_select(0, final), final, ptr)
