r"""Ordered ego graphs from an interaction log (users, items, timestamps).

An interaction log is a list of events :math:`(u, i, t)` ("user :math:`u`
rated, bought or clicked item :math:`i` at time :math:`t`"), with one label
per user and per item. It defines a bipartite user-item graph whose edges
carry time, and so **ordered neighborhoods**: a user's items in the order the
user met them, an item's users in the order they came.

**The ego graph of user** :math:`u` (its 2-hop neighborhood, as in the KONG
paper's MovieLens experiment) holds

* node :math:`0`: the user :math:`u` (the *ego*);
* nodes :math:`1, \ldots, n_I`: the distinct items :math:`u` interacted with,
  numbered in the order :math:`u` first met them;
* nodes :math:`n_I + 1, \ldots`: every *other* user who interacted with one of
  those items, numbered in order of first appearance (items in ego order,
  each item's users in time order). Each user is one node, however many of
  the ego's items it shares.

and the edges, stored as :obj:`neighbor -> center` so that with PyG's default
:obj:`flow="source_to_target"` node :math:`i`'s neighbors are the sources of
its incoming edges **in** :obj:`edge_index` **order** (the rule of
:mod:`kong_pyg.ordering`):

1. :obj:`item -> ego`, one per interaction of :math:`u`, in time order: the
   ego's neighbor sequence is its item history (a repeated interaction is a
   repeated neighbor);
2. :obj:`user -> item` for every interaction with an ego item, in time order,
   the ego included: each item's neighbor sequence is its whole audience
   history, with the ego at its place in it;
3. only with :obj:`symmetric=True`: :obj:`item -> user` for every edge of
   (2) whose user is not the ego, each 2-hop user's segment in that user's
   time order. The 2-hop users then see the ego's items they share (never
   their other items: those are 3 hops away). Without it, 2-hop users are
   leaves (no neighbors), which is the paper's "user -> items -> users"
   neighborhood.

Edges are emitted graph by graph in this block order; nothing ever sorts or
coalesces them by node id. **Ties in time** are broken by an optional
per-interaction :obj:`tie_key` (for instance the KONG authors' rule, see
:class:`~kong_pyg.datasets.MovieLensOrdered`), then by the row order of the
log (stable sorts), everywhere.

**The event key** :obj:`edge_order`. Every edge stems from one interaction
(an event) of the log, and every graph stores :obj:`edge_order`, the rank of
that event in the global time order (ties as above): the same event gets the
same key in every graph it appears in, and sorting each neighborhood by the
key gives back the edge order. So :obj:`order="edge"` is unchanged,
:obj:`order="reverse"` is time reversal, and :obj:`order="consistent"` gives
every event one seeded random position, the same in every graph ("random
timestamps"): the honest shuffled control. :obj:`order="random"` shuffles
each graph's neighborhoods independently, so the same user or item gets a
different order in every ego graph it appears in; its features then carry
per-graph noise that the true order does not have, which biases a
"true vs shuffled" comparison in favour of the true order.

**Layouts.** :obj:`layout="ego"` is the graph described above (the default).
:obj:`layout="authors"` is the graph of the KONG authors' public experiment
code (``movielens_to_graph.create_graphs``, read back undirected by
``read_my_format``): for every ego item :math:`v` (in time order) it lists
the edge :math:`u - v`, then :math:`v - w` for every user :math:`w` of
:math:`v` (time order, the ego included), and reads each line as an
undirected edge. So

1. the ego sees every item **twice**, adjacent (:math:`v_1 v_1 v_2 v_2 \ldots`);
2. every item sees the ego **first**, then its users in time order (the ego
   again at its place);
3. every 2-hop user sees the ego items it shares **in the ego's order**.

Its :obj:`edge_order` keeps the rule "sorting by it gives the edge order":
the ego's copies carry their event's rank, an item's leading ego copy
:math:`-1 - \mathrm{rank}` of the ego's event (it sorts first), and a 2-hop
user's edge from item :math:`v` the rank of the *ego's* event on
:math:`v` (the authors order it by the ego's time). So
:obj:`order="consistent"` is the authors' construction with random
timestamps, except that an item's leading ego copy is shuffled like an event
(theirs stays first), and :obj:`order="reverse"` puts it last. Their code
assumes one interaction per (user, item) pair (MovieLens has no repeats);
with repeats this layout lists a user once per interaction (an item's
neighbors and a 2-hop user's items alike), as the ego layout does.

**Labels.** :obj:`x` holds one integer per node from two disjoint ranges:
users keep their label :math:`l_U \in [0, L_U)`, items get
:math:`L_U + l_I` (:math:`L_U` = :obj:`num_user_labels`), so a user label
never equals an item label. With :obj:`edge_labels=True`, edge
:math:`(s \to d)` gets :obj:`edge_attr` :math:`= x_s \cdot L + x_d`,
:math:`L = L_U + L_I`: one symbol per ordered pair of endpoint labels.
Labels stay below :data:`~kong_pyg.hashing.MAX_LABEL` (:math:`2^{58}`), so
:math:`L \leq 2^{58}` (:math:`L \leq 2^{29}` with edge labels), else a :class:`ValueError`.
The graph label :obj:`y` is the ego's entry of :obj:`y`.

Every graph also stores :obj:`n_id` (the original user or item id of each
node), :obj:`node_type` (0 user, 1 item), :obj:`edge_time` (the timestamp of
each edge), :obj:`edge_rating` (when the log has ratings) and :obj:`user_id`
(the ego's id).

The construction is vectorized: a handful of stable sorts, ranges and
first-appearance numberings over all graphs at once, no Python loop over
users, items or edges.
"""
import numbers
from typing import Callable, Dict, NamedTuple, Optional, Tuple

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Data, InMemoryDataset

from ..config import MAX_SEED, check_bool, check_choice, check_int
from ..devices import cpu_by_default
from ..hashing import MAX_LABEL
from ..idmap import first_appearance as dense_first_appearance
from ..inputs import native_order
from ..kgrams import exclusive_cumsum
from .interaction_log import (
    InteractionLog,
    check_log,
    long_vector,
    tie_share,
    time_order,
    warn_if_log_column,
)

#: The graph layouts (see the module documentation).
LAYOUTS = ("ego", "authors")


def ranges(starts: Tensor, sizes: Tensor) -> Tensor:
    """Concatenated :obj:`arange(start, start + size)` for every pair."""
    total = int(sizes.sum()) if sizes.numel() else 0
    owner = torch.repeat_interleave(torch.arange(sizes.numel()), sizes, output_size=total)
    return starts[owner] + torch.arange(total) - exclusive_cumsum(sizes)[owner]


def first_appearance(group: Tensor, key: Tensor, num_groups: int) -> Tuple[Tensor, Tensor, Tensor]:
    r"""Number the distinct keys of each group in order of first appearance.

    :obj:`group` must be non-decreasing (entries listed group by group).
    The (group, key) pairs are numbered by
    :func:`kong_pyg.idmap.first_appearance`, which lists them group by group.

    Returns:
        (torch.Tensor, torch.Tensor, torch.Tensor): For every entry its local
        number within its group; the distinct :obj:`(group, key)` pairs as
        two tensors in (group, first appearance) order. The local number of
        distinct pair :math:`j` is its rank within its group.
    """
    if key.numel() == 0:
        empty = torch.zeros(0, dtype=torch.long)
        return empty, empty, empty
    span = int(key.max()) + 1
    pairs, number = dense_first_appearance(group * span + key)
    d_group, d_key = pairs // span, pairs % span
    count = torch.bincount(d_group, minlength=num_groups)
    local = torch.arange(pairs.numel()) - exclusive_cumsum(count)[d_group]
    return local[number], d_group, d_key


@cpu_by_default
def select_users(
    y: Optional[Tensor],
    candidates: Tensor,
    max_graphs: Optional[int] = None,
    balance: bool = False,
    seed: int = 0,
) -> Tensor:
    r"""Choose the egos: all :obj:`candidates`, or a seeded subset.

    With :obj:`balance`, every class keeps as many users as the smallest
    class has (a seeded random subset of the others). With
    :obj:`max_graphs`, at most that many users remain: a seeded random
    subset, split evenly over the classes when :obj:`balance` is set.
    The result is sorted by user id.

    Args:
        y (torch.Tensor or None): The class of every user, or :obj:`None`
            (needed for :obj:`balance`; passed either way, as the first argument).
        candidates (torch.Tensor): User ids that may become egos.
        max_graphs (int, optional): The cap. (default: :obj:`None`)
        balance (bool, optional): Equal class sizes. (default: :obj:`False`)
        seed (int, optional): The seed of both subsets. (default: :obj:`0`)
    """
    if isinstance(max_graphs, np.integer):
        max_graphs = int(max_graphs)
    if max_graphs is not None and (not isinstance(max_graphs, int) or isinstance(max_graphs, bool)
                                   or max_graphs < 1):
        raise ValueError(f"'max_graphs' must be a positive integer or None (got {max_graphs!r})")
    balance = check_bool("balance", balance)
    gen = torch.Generator().manual_seed(check_int("seed", seed, 0, MAX_SEED))  # (32 bits: config.MAX_SEED)
    chosen = candidates
    if balance:
        if y is None:
            raise ValueError("'balance=True' needs class labels 'y'")
        cls = y[candidates]
        classes = torch.unique(cls)
        size = min(int((cls == c).sum()) for c in classes) if classes.numel() else 0
        if max_graphs is not None and classes.numel():
            if max_graphs < classes.numel():
                raise ValueError(f"'max_graphs' ({max_graphs}) is below the number of classes among the "
                                 f"users ({classes.numel()}): balance=True takes as many users of each")
            size = min(size, max_graphs // classes.numel())
        parts = []
        for c in classes.tolist():  # a loop over classes, not over users
            members = candidates[cls == c]
            parts.append(members[torch.randperm(members.numel(), generator=gen)[:size]])
        chosen = torch.cat(parts) if parts else candidates[:0]
    elif max_graphs is not None and candidates.numel() > max_graphs:
        chosen = candidates[torch.randperm(candidates.numel(), generator=gen)[:max_graphs]]
    return torch.sort(chosen).values


def ego_graph_storage(
    log: InteractionLog,
    user_label: Tensor,
    item_label: Tensor,
    egos: Tensor,
    y: Optional[Tensor] = None,
    symmetric: bool = False,
    edge_labels: bool = False,
    num_user_labels: Optional[int] = None,
    num_item_labels: Optional[int] = None,
    layout: str = "ego",
) -> Tuple[Data, Dict[str, Tensor]]:
    r"""The ego graphs of :obj:`egos`, collated.

    The result is the storage of an
    :class:`~torch_geometric.data.InMemoryDataset`. See the module
    documentation for the graph, its order, its event key and its labels.

    Args:
        log (InteractionLog): The checked interactions.
        user_label (torch.Tensor): :obj:`[num_users]` label of every user.
        item_label (torch.Tensor): :obj:`[num_items]` label of every item.
        egos (torch.Tensor): :obj:`[G]` the user of every graph.
        y (torch.Tensor, optional): :obj:`[num_users]` class of every user.
        symmetric (bool, optional): Add :obj:`item -> user` edges for the
            2-hop users (:obj:`layout="ego"` only). (default: :obj:`False`)
        edge_labels (bool, optional): Set :obj:`edge_attr` from both
            endpoint labels. (default: :obj:`False`)
        num_user_labels (int, optional): :math:`L_U`, the item-label offset.
            (default: :obj:`user_label.max() + 1`)
        num_item_labels (int, optional): :math:`L_I`.
            (default: :obj:`item_label.max() + 1`)
        layout (str, optional): :obj:`"ego"` or :obj:`"authors"`.
            (default: :obj:`"ego"`)

    Returns:
        (Data, dict): The concatenated graphs (edge indices local to each
        graph) and their slices.
    """
    symmetric = check_bool("symmetric", symmetric)
    edge_labels = check_bool("edge_labels", edge_labels)
    user, item, time, rating, tie_key = log
    num_users, num_items = user_label.numel(), item_label.numel()
    e = user.numel()
    g_count = egos.numel()
    num_user_labels = _label_count("num_user_labels", "user", user_label, num_user_labels)
    num_item_labels = _label_count("num_item_labels", "item", item_label, num_item_labels)
    _check_label_space(num_user_labels + num_item_labels, edge_labels)

    # the log in time order (ties: tie key, then row order), then grouped by user and by item
    by_time = time_order(time, tie_key)
    rank = torch.empty(e, dtype=torch.long)
    rank[by_time] = torch.arange(e)
    by_user = by_time[torch.sort(user[by_time], stable=True).indices]
    by_item = by_time[torch.sort(item[by_time], stable=True).indices]
    user_deg = torch.bincount(user, minlength=num_users)
    item_deg = torch.bincount(item, minlength=num_items)

    # level 1: the ego's interactions, in time order -> item nodes
    e1 = by_user[ranges(exclusive_cumsum(user_deg)[egos], user_deg[egos])]
    g1 = torch.repeat_interleave(torch.arange(g_count), user_deg[egos])
    item_local, d_graph, d_item = first_appearance(g1, item[e1], g_count)
    n_items = torch.bincount(d_graph, minlength=g_count)
    d_node = 1 + torch.arange(d_item.numel()) - exclusive_cumsum(n_items)[d_graph]
    first = torch.full((d_item.numel(),), e1.numel(), dtype=torch.long)
    first.scatter_reduce_(0, exclusive_cumsum(n_items)[g1] + item_local, torch.arange(e1.numel()),
                          reduce="amin")
    d_event = e1[first]  # the ego's first interaction with each of its items

    # level 2: every interaction with an ego item, in time order -> user nodes
    e2 = by_item[ranges(exclusive_cumsum(item_deg)[d_item], item_deg[d_item])]
    src_d = torch.repeat_interleave(torch.arange(d_item.numel()), item_deg[d_item])
    g2 = d_graph[src_d]
    w = user[e2]
    other = w != egos[g2]
    w_local, u_graph, u_user = first_appearance(g2[other], w[other], g_count)
    n_others = torch.bincount(u_graph, minlength=g_count)
    w_node = torch.zeros_like(w)
    w_node[other] = 1 + n_items[g2[other]] + w_local

    # nodes, graph by graph: ego, items, other users
    n_nodes = 1 + n_items + n_others
    node_graph = torch.cat([torch.arange(g_count), d_graph, u_graph])
    node_kind = torch.cat([torch.zeros(g_count, dtype=torch.long),
                           torch.ones(d_item.numel(), dtype=torch.long),
                           torch.zeros(u_user.numel(), dtype=torch.long)])
    node_id = torch.cat([egos, d_item, u_user])
    x = torch.cat([user_label[egos], num_user_labels + item_label[d_item], user_label[u_user]])
    node_perm = torch.sort(node_graph, stable=True).indices
    node_kind, node_id, x = node_kind[node_perm], node_id[node_perm], x[node_perm]

    # edges, graph by graph in block order (see the module documentation)
    level1 = _Block(1 + item_local, torch.zeros_like(item_local), g1, e1, rank[e1])
    level2 = _Block(w_node, d_node[src_d], g2, e2, rank[e2])
    o = other.nonzero().view(-1)
    if layout == "authors":
        lead = _Block(torch.zeros_like(d_node), d_node, d_graph, d_event, -1 - rank[d_event])
        back = _Block(d_node[src_d[o]], w_node[o], g2[o], e2[o], rank[d_event[src_d[o]]])
        blocks = [level1.repeat(2), lead, level2, back]
    else:
        blocks = [level1, level2]
        if symmetric:  # each 2-hop user's edges in its own time order
            o = o[torch.sort(rank[e2[o]], stable=True).indices]
            o = o[torch.sort(w_node[o], stable=True).indices]
            o = o[torch.sort(g2[o], stable=True).indices]
            blocks.append(_Block(d_node[src_d[o]], w_node[o], g2[o], e2[o], rank[e2[o]]))
    edge_graph = torch.cat([b.graph for b in blocks])
    edge_perm = torch.sort(edge_graph, stable=True).indices
    src, dst, event, key = (torch.cat([getattr(b, f) for b in blocks])[edge_perm]
                            for f in ("src", "dst", "event", "key"))
    n_edges = torch.bincount(edge_graph, minlength=g_count)
    data = Data(x=x, edge_index=torch.stack([src, dst]), n_id=node_id, node_type=node_kind,
                edge_time=time[event], edge_order=key, user_id=egos.clone())
    if rating is not None:
        data.edge_rating = rating[event]
    if edge_labels:
        data.edge_attr = _edge_labels(x, src, dst, n_nodes, n_edges, num_user_labels + num_item_labels)
    if y is not None:
        data.y = y[egos]
    return data, _slices(data, n_nodes, n_edges)


def _label_count(name: str, what: str, label: Tensor, count: Optional[int]) -> int:
    """The number of labels :obj:`count` (default: the largest label + 1), checked against the labels."""
    top = int(label.max()) if label.numel() else -1
    if count is None:
        return top + 1
    count = check_int(name, count, 0)
    if top >= count:
        article = "an" if what[0] in "aeiou" else "a"
        raise ValueError(f"'{name}' is {count} but {article} {what} label is {top}")
    return count


def _check_label_space(num_labels: int, edge_labels: bool) -> None:
    """Check that node labels (below :obj:`num_labels` = L) and edge labels (below L * L) are < MAX_LABEL."""
    if num_labels > MAX_LABEL:
        raise ValueError(f"'num_user_labels' + 'num_item_labels' is {num_labels}, but node labels must stay "
                         f"below 2^58 (kong_pyg.hashing.MAX_LABEL)")
    if edge_labels and num_labels * num_labels > MAX_LABEL:
        raise ValueError(f"edge_labels=True labels edge (s -> d) x_s * L + x_d with L = 'num_user_labels' + "
                         f"'num_item_labels' = {num_labels}, which needs L * L <= 2^58 "
                         f"(kong_pyg.hashing.MAX_LABEL; L <= 2^29): use fewer labels or edge_labels=False")


def _edge_labels(x: Tensor, src: Tensor, dst: Tensor, n_nodes: Tensor, n_edges: Tensor,
                 num_labels: int) -> Tensor:
    """Edge labels from both endpoint labels (edge indices local to each graph)."""
    node_ptr = exclusive_cumsum(n_nodes)
    offset = node_ptr[torch.repeat_interleave(torch.arange(n_nodes.numel()), n_edges)]
    return x[src + offset] * num_labels + x[dst + offset]


def _slices(data: Data, n_nodes: Tensor, n_edges: Tensor) -> Dict[str, Tensor]:
    """The slices of the collated ego graphs: per node, per edge or per graph, by attribute."""
    zero = torch.zeros(1, dtype=torch.long)
    node_ptr = torch.cat([zero, torch.cumsum(n_nodes, 0)])
    edge_ptr = torch.cat([zero, torch.cumsum(n_edges, 0)])
    graph_ptr = torch.arange(n_nodes.numel() + 1)
    per = {"x": node_ptr, "n_id": node_ptr, "node_type": node_ptr, "edge_index": edge_ptr,
           "edge_time": edge_ptr, "edge_order": edge_ptr, "edge_rating": edge_ptr, "edge_attr": edge_ptr,
           "user_id": graph_ptr, "y": graph_ptr}
    return {key: per[key] for key in data.keys()}


class _Block(NamedTuple):
    """One block of edges: endpoints, graph, source event and order key of each."""

    src: Tensor
    dst: Tensor
    graph: Tensor
    event: Tensor
    key: Tensor

    def repeat(self, times: int) -> "_Block":
        return _Block(*(t.repeat_interleave(times) for t in self))


class InteractionGraphs(InMemoryDataset):
    r"""One ordered ego graph per user of an interaction log.

    The graphs of the KONG paper's Table 2: user :math:`u`'s 2-hop
    neighborhood in the user-item graph, with the user's items in time
    order and each item's users in time order (see
    :mod:`kong_pyg.datasets.interactions` for the exact layout, tie rule and
    label encoding). The order lives in :obj:`edge_index` itself, so
    :class:`~kong_pyg.KongVectorizer` and :class:`~kong_pyg.KongSketch` see
    it with their default :obj:`order="edge"`. Every edge also carries
    :obj:`edge_order`, the global time rank of its interaction (the same in
    every graph), which the front-ends read as the order key: so
    :obj:`order="consistent"` (one random position per interaction, the same
    in every graph) and :obj:`order="reverse"` (time reversal) work on these
    graphs.

    .. warning::
        The neighbor order is the order of :obj:`edge_index`. Transforms that
        sort or coalesce edges (:class:`~torch_geometric.transforms.ToUndirected`,
        :func:`~torch_geometric.utils.coalesce`, ...) destroy it.

    Args:
        user (torch.Tensor): :obj:`[E]` user id of every interaction, in
            :obj:`[0, num_users)`.
        item (torch.Tensor): :obj:`[E]` item id, in :obj:`[0, num_items)`.
        time (torch.Tensor): :obj:`[E]` timestamp (any real numbers; ties
            by :obj:`tie_key`, then row order).
        user_label (torch.Tensor): :obj:`[num_users]` non-negative integer
            label of every user (for instance a bucketed age).
        item_label (torch.Tensor): :obj:`[num_items]` non-negative integer
            label of every item (for instance a genre). Both label tables
            are indexed by id (entry :obj:`i` belongs to id :obj:`i`), not
            by interaction: from columns of a table of interactions, make
            the ids 0-based codes and take one value per id (a table as
            long as the log, beyond its ids, is warned about).
        y (torch.Tensor, optional): :obj:`[num_users]` class of every user,
            stored as the graph label. (default: :obj:`None`)
        rating (torch.Tensor, optional): :obj:`[E]` stored as
            :obj:`edge_rating`. (default: :obj:`None`)
        symmetric (bool, optional): Also let 2-hop users see the ego's items
            they share (:obj:`item -> user` edges, each user's in its own time
            order; :obj:`layout="ego"` only). Flags must be :obj:`bool`
            (NumPy's too), else a :class:`TypeError`. (default: :obj:`False`)
        edge_labels (bool, optional): :obj:`edge_attr` from both endpoint
            labels (:math:`x_s \cdot L + x_d`; needs :math:`L^2 \leq 2^{58}`,
            see :mod:`kong_pyg.datasets.interactions`). (default: :obj:`False`)
        tie_key (torch.Tensor, optional): :obj:`[E]` a secondary sort key
            for interactions with the same :obj:`time` (remaining ties keep
            row order; real numbers, no NaN). (default: :obj:`None`: row order)
        layout (str, optional): :obj:`"ego"` (the graph above) or
            :obj:`"authors"` (the KONG authors' experiment code: undirected,
            the ego sees each item twice, each item sees the ego first, 2-hop
            users see the shared items in the ego's order; see
            :mod:`kong_pyg.datasets.interactions`). (default: :obj:`"ego"`)
        max_graphs (int, optional): Keep at most this many graphs (a seeded
            subset). (default: :obj:`None`)
        balance (bool, optional): Equal class sizes (a seeded subset).
            (default: :obj:`False`)
        min_interactions (int, optional): Users with fewer interactions get
            no graph. (default: :obj:`1`)
        seed (int, optional): The seed of the subsets. (default: :obj:`0`)
        num_user_labels (int, optional): :math:`L_U`, the offset of item
            labels: an integer above every user label.
            (default: :obj:`user_label.max() + 1`)
        num_item_labels (int, optional): :math:`L_I`, an integer above every
            item label. :math:`L_U + L_I` is at most :math:`2^{58}`
            (:math:`2^{29}` with :obj:`edge_labels`).
            (default: :obj:`item_label.max() + 1`)
        transform (callable, optional): A transform applied on access.
            (default: :obj:`None`)

    Example::

        >>> log = dict(user=[0, 1, 0], item=[0, 0, 1], time=[5, 3, 9])
        >>> ds = InteractionGraphs(**log, user_label=torch.tensor([0, 1]),
        ...                        item_label=torch.tensor([0, 1]), y=torch.tensor([0, 1]))
        >>> ds[0].edge_index.tolist()   # items -> ego, then users -> items
        [[1, 2, 3, 0, 0], [0, 0, 1, 1, 2]]
    """

    @cpu_by_default
    def __init__(
        self,
        user,
        item,
        time,
        user_label,
        item_label,
        y=None,
        rating=None,
        *,
        symmetric: bool = False,
        edge_labels: bool = False,
        tie_key=None,
        layout: str = "ego",
        max_graphs: Optional[int] = None,
        balance: bool = False,
        min_interactions: int = 1,
        seed: int = 0,
        num_user_labels: Optional[int] = None,
        num_item_labels: Optional[int] = None,
        transform: Optional[Callable] = None,
    ):
        if transform is not None and not callable(transform):  # (PyG would fail at the first item)
            raise TypeError(f"'transform' must be callable or None (got {type(transform).__name__})")
        super().__init__(None, transform)
        data, slices = build_ego_graphs(
            user, item, time, user_label, item_label, y, rating, symmetric=symmetric,
            edge_labels=edge_labels, tie_key=tie_key, layout=layout, max_graphs=max_graphs, balance=balance,
            min_interactions=min_interactions, seed=seed, num_user_labels=num_user_labels,
            num_item_labels=num_item_labels,
        )
        self._data, self.slices = data, slices


@cpu_by_default
def build_ego_graphs(
    user,
    item,
    time,
    user_label,
    item_label,
    y=None,
    rating=None,
    *,
    symmetric: bool = False,
    edge_labels: bool = False,
    tie_key=None,
    layout: str = "ego",
    max_graphs: Optional[int] = None,
    balance: bool = False,
    min_interactions: int = 1,
    seed: int = 0,
    num_user_labels: Optional[int] = None,
    num_item_labels: Optional[int] = None,
) -> Tuple[Data, Dict[str, Tensor]]:
    """Check the inputs, choose the egos and build their graphs.

    The arguments are those of :class:`InteractionGraphs`; returns the
    collated storage (see :func:`ego_graph_storage`).
    """
    check_choice("layout", layout, LAYOUTS)
    symmetric = check_bool("symmetric", symmetric)
    edge_labels = check_bool("edge_labels", edge_labels)
    balance = check_bool("balance", balance)
    if layout == "authors" and symmetric:
        raise ValueError("layout='authors' fixes the 2-hop users' edges (the ego's order); "
                         "leave 'symmetric' False")
    user_label = long_vector(user_label, "user_label")
    item_label = long_vector(item_label, "item_label")
    log = check_log(user, item, time, rating, user_label.numel(), item_label.numel(), tie_key)
    warn_if_log_column("user", log.user, user_label)
    warn_if_log_column("item", log.item, item_label)
    if y is not None:
        try:
            y = y if isinstance(y, torch.Tensor) else torch.as_tensor(native_order(np.asarray(y)))
        except (TypeError, ValueError, RuntimeError) as err:  # (strings: "too many dimensions 'str'")
            raise TypeError(f"'y' must hold one numeric class per user, e.g. integers ({err})") from None
        if y.dim() != 1 or y.numel() != user_label.numel():
            raise ValueError(f"'y' must have shape [{user_label.numel()}] (one class per user), "
                             f"got {list(y.shape)}")
        if y.is_floating_point() and not bool((y == y.round()).all()):  # (NaN too)
            raise ValueError("'y' must hold classes, integers (integral floats such as 1.0 are taken; got "
                             f"{y[y != y.round()][:3].tolist()})")
    if not isinstance(min_interactions, numbers.Integral) or isinstance(min_interactions, (bool, np.bool_)) \
            or min_interactions < 0:
        raise ValueError(f"'min_interactions' must be a non-negative integer (got {min_interactions!r})")
    deg = torch.bincount(log.user, minlength=user_label.numel())
    candidates = (deg >= min(int(min_interactions), 2**62)).nonzero().view(-1)  # (no log has 2^62 rows)
    egos = select_users(y, candidates, max_graphs, balance, seed)
    if egos.numel() == 0:
        raise ValueError("no user qualifies for a graph (check 'min_interactions' and the log)")
    return ego_graph_storage(log, user_label, item_label, egos, y, symmetric, edge_labels,
                             num_user_labels, num_item_labels, layout)


__all__ = ["InteractionGraphs", "InteractionLog", "build_ego_graphs", "ego_graph_storage",
           "select_users", "first_appearance", "time_order", "tie_share", "LAYOUTS"]
