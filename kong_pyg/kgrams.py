r"""k-grams of KONG strings without building the strings (the paper's Lemmas 1 and 2).

The string of node :math:`v` at step :math:`i` is a concatenation of
*pieces*: for WL its own label :math:`l(v)`, then for each neighbor
:math:`u` in neighbor order an optional edge symbol and the neighbor's
previous string :math:`s_u^{i-1}`; for BFS the same without :math:`l(v)`.
Its n-gram counts are the sum of the pieces' counts plus the n-grams that
*cross* a piece boundary, so per node we keep only

* the length :math:`L` of :math:`s_v^i`, saturated at :math:`k`,
* its first and last :math:`\min(L, k-1)` symbols (prefix and suffix codes).

The crossing n-grams of a node are read off a *compressed* string: each
piece of length :math:`\le k-1` is copied whole, a longer piece becomes
``prefix BREAK suffix``, and a ``BREAK`` closes every node. Every window of
length :math:`n` that holds no ``BREAK`` and starts and ends in different
pieces is exactly one crossing n-gram (a crossing n-gram can only hold whole
pieces that are shorter than :math:`k-1`). The compressed string has at most
:math:`2k - 1` symbols per piece: :math:`O(mk)` work per step, whatever the
real strings' lengths (which grow like degree to the power :math:`h`).

Occurrences of step :math:`i` are the n-grams a node's step-:math:`i` string
adds on top of its neighbors' step-:math:`(i-1)` strings: crossing n-grams,
and for :math:`n = 1` the node's own label (WL; BFS at step 0) and the edge
symbols.
"""
from typing import Iterator, List, NamedTuple, Optional, Union

import numpy as np
import torch
from torch import Tensor

from .hashing import BREAK
from .ordering import Neighborhoods
from .traversals import Traversal, get_traversal


class Occurrences(NamedTuple):
    """n-grams added at one step.

    Attributes:
        node (torch.Tensor): :obj:`[M]` the node whose string holds each one.
        grams (torch.Tensor): :obj:`[M, n]` their symbol codes.
    """

    node: Tensor
    grams: Tensor


class StringState(NamedTuple):
    r"""What is kept of every node's string between steps.

    Attributes:
        length (torch.Tensor): :obj:`[N]` the length, saturated at :math:`k`.
        prefix (torch.Tensor): :obj:`[N, k-1]` the first :math:`\\min(L, k-1)`
            symbols, padded with ``BREAK``.
        suffix (torch.Tensor): :obj:`[N, k-1]` the last :math:`\\min(L, k-1)`
            symbols, left-aligned, padded with ``BREAK``.
    """

    length: Tensor
    prefix: Tensor
    suffix: Tensor


def initial_state(node_sym: Tensor, k: int) -> StringState:
    """The state of the one-symbol strings :math:`s_v^0 = l(v)`."""
    n = node_sym.numel()
    pre = torch.full((n, max(k - 1, 0)), BREAK, dtype=torch.long, device=node_sym.device)
    if k > 1:
        pre[:, 0] = node_sym
    length = torch.full((n,), min(1, k), dtype=torch.long, device=node_sym.device)
    return StringState(length, pre, pre.clone())


def gram_lengths(k: int, blended: bool) -> List[int]:
    """The n-gram lengths counted: :math:`k`, or :math:`1..k` if blended."""
    return list(range(1, k + 1)) if blended else [k]


#: Dtypes whose non-zero entries NumPy finds (:func:`flat_nonzero`).
_NUMPY_DTYPES = {torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float32,
                 torch.float64}


def flat_nonzero(t: Tensor) -> Tensor:
    """The indices of the non-zero entries of a 1-D tensor, ascending (:obj:`t.nonzero().view(-1)`).

    On the CPU through NumPy, whose :func:`numpy.flatnonzero` of a bool
    array is 4-7x faster than :func:`torch.nonzero` from about 10,000
    entries on (the same indices, ``int64``).
    """
    if (t.device.type != "cpu" or t.dtype not in _NUMPY_DTYPES or t.dim() != 1 or t.requires_grad
            or t.is_neg()):  # (torch's path: other devices and dtypes, autograd, a negative-bit view)
        return t.nonzero().view(-1)
    a = t.numpy()
    return torch.from_numpy(np.flatnonzero(a if a.dtype == np.bool_ else a != 0).astype(np.int64, copy=False))


def exclusive_cumsum(t: Tensor) -> Tensor:
    """:obj:`[0, t_0, t_0 + t_1, ...]`, one longer than :obj:`t`."""
    out = torch.zeros(t.numel() + 1, dtype=t.dtype, device=t.device)
    torch.cumsum(t, 0, out=out[1:])
    return out


def _new_length(state: StringState, hood: Neighborhoods, n: int, lab: int, esy: int, k: int) -> Tensor:
    """Saturated lengths of the concatenations (label, edge symbols, neighbors)."""
    length = torch.full((n,), lab, dtype=torch.long, device=hood.center.device)
    length.index_add_(0, hood.center, state.length.index_select(0, hood.nbr) + esy)
    return length.clamp(max=k)


class EdgeRuns(NamedTuple):
    """What :func:`_bigram_step_simple` reads of the neighborhoods: the same at every step.

    Attributes:
        pair_node (torch.Tensor): :obj:`[P]` the node of every two consecutive
            edges :obj:`e, e + 1` of one neighborhood.
        pair_tail (torch.Tensor): :obj:`[P]` the neighbor of edge :obj:`e`
            (its string's last symbol starts the pair's crossing).
        pair_lead (torch.Tensor): :obj:`[P]` the neighbor of edge
            :obj:`e + 1` (its string's first symbol ends the crossing), or,
            with edge symbols, the edge symbol of :obj:`e + 1` itself.
        first (torch.Tensor): :obj:`[N]` the same for every node's first
            edge (:obj:`[0]` without edges).
        last (torch.Tensor): :obj:`[N]` the neighbor of every node's last
            edge (:obj:`[0]` without edges).
        degree (torch.Tensor): :obj:`[N]` neighborhood sizes.
        has (torch.Tensor): :obj:`[N]` whether the node has neighbors.
        label_node (torch.Tensor, optional): WL: the nodes with neighbors.
        label_sym (torch.Tensor, optional): WL: their symbols.
        label_first (torch.Tensor, optional): WL: :obj:`first` of those nodes.
    """

    pair_node: Tensor
    pair_tail: Tensor
    pair_lead: Tensor
    first: Tensor
    last: Tensor
    degree: Tensor
    has: Tensor
    label_node: Optional[Tensor]
    label_sym: Optional[Tensor]
    label_first: Optional[Tensor]


def edge_runs(hood: Neighborhoods, node_sym: Tensor, edge_sym: Optional[Tensor],
              with_label: bool) -> EdgeRuns:
    """The :class:`EdgeRuns` of grouped neighborhoods (once per call, not per step)."""
    center, nbr, ptr = hood.center, hood.nbr, hood.segments
    m = nbr.numel()
    lead = nbr if edge_sym is None else edge_sym
    pair = flat_nonzero(center[1:] == center[:-1])  # consecutive edges of one node
    degree = ptr.diff()
    has = degree > 0
    first, last = nbr, nbr  # (no edges: empty)
    if m:
        first = lead.index_select(0, ptr[:-1].clamp(max=m - 1))
        last = nbr.index_select(0, (ptr[1:] - 1).clamp(min=0))
    label_node = label_sym = label_first = None
    if with_label:
        label_node = flat_nonzero(has)
        label_sym = node_sym.index_select(0, label_node)
        label_first = first.index_select(0, label_node)
    return EdgeRuns(center.index_select(0, pair), nbr.index_select(0, pair), lead.index_select(0, pair + 1),
                    first, last, degree, has, label_node, label_sym, label_first)


def _bigram_step_simple(
    state: StringState,
    hood: Neighborhoods,
    node_sym: Tensor,
    edge_sym: Optional[Tensor],
    with_label: bool,
    nbr_len: Optional[Tensor],
    runs: EdgeRuns,
    need_state: bool = True,
) -> tuple:
    """:func:`_bigram_step` when no neighbor string is empty (:obj:`nbr_len` None: all of length 1).

    Then the pieces of a node are [label] (edge symbol, neighbor)* with no
    gaps, so the crossings come straight from consecutive edges: (edge
    symbol, neighbor's first symbol), (neighbor's last symbol, next edge
    symbol or next neighbor's first symbol), and for WL (label, first piece).
    Without :obj:`need_state` the new state (and :obj:`nbr_len`) is not
    computed: :obj:`None` is returned in its place.
    """
    n = node_sym.numel()
    head = state.prefix[:, 0]  # first symbol of every node's string
    # one-symbol strings (the first step) have the same first and last symbol
    tail = head if state.suffix is state.prefix else state.suffix[:, 0]

    def first_of(nodes_or_syms: Tensor) -> Tensor:  # first symbols of the runs' pieces
        return nodes_or_syms if edge_sym is not None else head.index_select(0, nodes_or_syms)

    node = [runs.pair_node]
    grams = [torch.stack([tail.index_select(0, runs.pair_tail), first_of(runs.pair_lead)], dim=1)]
    if edge_sym is not None:
        node.append(hood.center)
        grams.append(torch.stack([edge_sym, head.index_select(0, hood.nbr)], dim=1))
    if with_label:
        assert runs.label_node is not None and runs.label_sym is not None and runs.label_first is not None
        node.append(runs.label_node)
        grams.append(torch.stack([runs.label_sym, first_of(runs.label_first)], 1))
    cat_node = node[0] if len(node) == 1 else torch.cat(node)
    cat_grams = grams[0] if len(grams) == 1 else torch.cat(grams)
    out = {2: Occurrences(cat_node, cat_grams)}
    if not need_state:
        return out, None
    if hood.nbr.numel():
        first_sym, last_sym = first_of(runs.first), tail.index_select(0, runs.last)
    else:
        first_sym = last_sym = torch.full((n,), BREAK, dtype=torch.long, device=node_sym.device)
    if with_label:
        prefix = node_sym
        suffix = torch.where(runs.has, last_sym, node_sym)
    else:
        prefix = torch.where(runs.has, first_sym, BREAK)
        suffix = torch.where(runs.has, last_sym, BREAK)
    if nbr_len is None:  # one-symbol neighbor strings: the length is a function of the degree
        per_edge, lab = 1 + int(edge_sym is not None), int(with_label)
        length = runs.degree.clamp(max=2) if (per_edge, lab) == (1, 0) else \
            (runs.degree * per_edge + lab).clamp_(max=2)
    else:
        length = torch.full((n,), int(with_label), dtype=torch.long, device=node_sym.device)
        length.index_add_(0, hood.center, nbr_len if edge_sym is None else nbr_len + 1)
        length.clamp_(max=2)
    return out, StringState(length, prefix.view(n, 1), suffix.view(n, 1))


def _bigram_step(
    state: StringState,
    hood: Neighborhoods,
    node_sym: Tensor,
    edge_sym: Optional[Tensor],
    with_label: bool,
    runs: Optional[EdgeRuns] = None,
    need_state: bool = True,
) -> tuple:
    """:func:`concat_step` for :math:`k = 2`.

    A crossing 2-gram is the last symbol of a non-empty piece followed by the
    first symbol of the next non-empty piece of the same node, so pieces
    reduce to (first symbol, last symbol, length) and no compressed string is
    needed. :obj:`runs` (:func:`edge_runs`, computed here if not given) is
    shared by the steps of one call.
    """
    device = node_sym.device
    n = node_sym.numel()
    center, nbr, ptr = hood.center, hood.nbr, hood.segments
    lab, esy = int(with_label), int(edge_sym is not None)
    if runs is None:
        runs = edge_runs(hood, node_sym, edge_sym, with_label)
    if state.suffix is state.prefix:  # the first step's one-symbol strings (see occurrences)
        return _bigram_step_simple(state, hood, node_sym, edge_sym, with_label, None, runs, need_state)
    if not need_state and bool((state.length > 0).all()):  # no empty string: no lengths needed either
        return _bigram_step_simple(state, hood, node_sym, edge_sym, with_label, None, runs, False)
    nbr_len = state.length.index_select(0, nbr)
    if bool((nbr_len > 0).all()):
        return _bigram_step_simple(state, hood, node_sym, edge_sym, with_label, nbr_len, runs)
    per_edge = 1 + esy
    deg = ptr[1:] - ptr[:-1]
    n_items = lab + deg * per_edge  # [label] (edge-symbol, neighbor)*
    item_start = exclusive_cumsum(n_items)
    total = int(item_start[-1])
    head = torch.empty(total, dtype=torch.long, device=device)
    size = torch.ones_like(head)
    base = item_start.index_select(0, center) + lab
    base += (torch.arange(nbr.numel(), device=device) - ptr.index_select(0, center)) * per_edge
    if lab:  # WL: every node has its label item, even without neighbors
        head.index_copy_(0, item_start[:-1], node_sym)
    if edge_sym is not None:
        head.index_copy_(0, base, edge_sym)
    tail = head.clone()
    pos = base + esy
    head.index_copy_(0, pos, state.prefix[:, 0].index_select(0, nbr))
    tail.index_copy_(0, pos, state.suffix[:, 0].index_select(0, nbr))
    size.index_copy_(0, pos, state.length.index_select(0, nbr))
    owner = torch.repeat_interleave(n_items, output_size=total)
    keep = flat_nonzero(size > 0)
    owner = owner.index_select(0, keep)
    head = head.index_select(0, keep)
    tail = tail.index_select(0, keep)
    pair = flat_nonzero(owner[:-1] == owner[1:])
    grams = torch.stack([tail.index_select(0, pair), head.index_select(0, pair + 1)], dim=1)
    out = {2: Occurrences(owner.index_select(0, pair), grams)}
    length = _new_length(state, hood, n, lab, esy, 2)
    prefix = torch.full((n,), BREAK, dtype=torch.long, device=device)
    suffix = prefix.clone()
    if keep.numel():
        change = torch.ones(owner.numel() + 1, dtype=torch.bool, device=device)
        change[1:-1] = owner[1:] != owner[:-1]
        first = flat_nonzero(change[:-1])
        last = flat_nonzero(change[1:])
        prefix.index_copy_(0, owner.index_select(0, first), head.index_select(0, first))
        suffix.index_copy_(0, owner.index_select(0, last), tail.index_select(0, last))
    return out, StringState(length, prefix.view(n, 1), suffix.view(n, 1))


def check_string_memory(values: int, k: int, device: Optional[torch.device] = None) -> None:
    """Refuse (:class:`~kong_pyg.exact.ExactMapTooLarge`) k-gram work of more int64s than memory holds.

    The strings' pieces carry :math:`k - 1` prefix and suffix codes each and every n-gram window
    :math:`n` symbols: a large :obj:`k` on a big neighborhood multiplies the edges by :math:`k` or more.
    Batches of graphs split on the refusal (a smaller batch may fit); the limit is the memory the
    machine could give now, not the exact maps' budget (this work is the same for sketches).
    """
    from .exact import check_memory_entries  # (exact imports this module)

    check_memory_entries(values, f"k-gram work of one step ({k}-symbol grams)", "a smaller k, or fewer edges "
                         "at once (fewer graphs per batch, or a stream's smaller chunks)", 8, device)


def concat_step(
    state: StringState,
    hood: Neighborhoods,
    node_sym: Tensor,
    edge_sym: Optional[Tensor],
    k: int,
    with_label: bool,
    lengths: List[int],
    runs: Optional[EdgeRuns] = None,
    need_state: bool = True,
) -> tuple:
    r"""One step: concatenate pieces, return crossing n-grams and new state.

    Args:
        state (StringState): The previous strings' state (:math:`k \geq 2`).
        hood (Neighborhoods): Ordered neighborhoods.
        node_sym (torch.Tensor): :obj:`[N]` node symbol codes.
        edge_sym (torch.Tensor, optional): :obj:`[m]` edge symbol codes in
            :obj:`hood` order.
        k (int): The k-gram length.
        with_label (bool): Whether the string starts with :math:`l(v)` (WL).
        lengths (List[int]): The n-gram lengths to return (those :math:`\geq 2`).
        runs (EdgeRuns, optional): :math:`k = 2`: :func:`edge_runs` of these
            arguments, shared by the steps of a call (computed if not given).
        need_state (bool, optional): :math:`k = 2`: whether the new state
            is needed (not after the last step: the state may then be
            :obj:`None`).

    Returns:
        (dict, StringState): Crossing occurrences per length, new state.
    """
    if k == 2:
        return _bigram_step(state, hood, node_sym, edge_sym, with_label, runs, need_state)
    device = node_sym.device
    n = node_sym.numel()
    center, nbr, ptr = hood.center, hood.nbr, hood.segments
    lab, esy = int(with_label), int(edge_sym is not None)
    per_edge = 1 + esy
    # each node's pieces: [label] (edge symbol, neighbor's string)*
    n_items = lab + (ptr[1:] - ptr[:-1]) * per_edge
    item_start = exclusive_cumsum(n_items)
    total = int(item_start[-1])
    check_string_memory(total * (k - 1) * 4, k, device)  # (prefix and suffix codes of each piece, read)
    owner = torch.repeat_interleave(n_items, output_size=total)
    length = torch.ones(total, dtype=torch.long, device=device)
    prefix = torch.full((total, k - 1), BREAK, dtype=torch.long, device=device)
    base = item_start.index_select(0, center) + lab
    base += (torch.arange(nbr.numel(), device=device) - ptr.index_select(0, center)) * per_edge
    if lab:
        prefix[item_start[:-1], 0] = node_sym
    if edge_sym is not None:
        prefix[base, 0] = edge_sym
    suffix = prefix.clone()  # one-symbol pieces: prefix = suffix
    pos = base + esy
    length[pos] = state.length.index_select(0, nbr)
    prefix[pos] = state.prefix.index_select(0, nbr)
    suffix[pos] = state.suffix.index_select(0, nbr)
    return concat_pieces(owner, StringState(length, prefix, suffix), n, k, lengths)


def occurrences(
    node_sym: Tensor,
    hood: Neighborhoods,
    edge_sym: Optional[Tensor],
    k: int,
    hops: int,
    traversal: Union[str, Traversal],
    blended: bool = False,
) -> Iterator[List[Occurrences]]:
    r"""Yield, for steps :math:`i = 0..h`, the n-grams step :math:`i` adds.

    With :math:`X^i` the occurrences of step :math:`i` and
    :math:`(AY)_v = \sum_{u \in N_v} Y_u`, the n-gram count vectors of the
    step-:math:`i` strings are :math:`Y^{(i)} = A Y^{(i-1)} + X^i`,
    :math:`Y^{(0)} = X^0`.

    Args:
        node_sym (torch.Tensor): :obj:`[N]` node symbol codes.
        hood (Neighborhoods): Ordered neighborhoods.
        edge_sym (torch.Tensor, optional): :obj:`[m]` edge symbol codes in
            :obj:`hood` order.
        k (int): The k-gram length.
        hops (int): The number of steps :math:`h`.
        traversal (str or Traversal): The string rule (see
            :mod:`kong_pyg.traversals`).
        blended (bool, optional): Count all lengths :math:`1..k`.

    Yields:
        List[Occurrences]: One entry per n-gram length with occurrences.
    """
    rule = get_traversal(traversal) if isinstance(traversal, str) else traversal
    lengths = gram_lengths(k, blended)
    n = node_sym.numel()
    labels = None
    if 1 in lengths:
        labels = Occurrences(torch.arange(n, device=node_sym.device), node_sym.view(-1, 1))
    runs = None
    if k == 2:  # one-symbol strings of length 1: the suffix is the prefix (read-only here)
        sym = node_sym.view(-1, 1)
        state = StringState(torch.ones_like(node_sym), sym, sym)
        if hops > 0:
            runs = edge_runs(hood, node_sym, edge_sym, rule.label_in_string)
    elif k > 2:
        state = initial_state(node_sym, k)
    for step in range(hops + 1):
        found = []
        if labels is not None and rule.label_step(step):
            found.append(labels)
        if step > 0:
            if 1 in lengths and edge_sym is not None:
                found.append(Occurrences(hood.center, edge_sym.view(-1, 1)))
            if k > 1:
                crossing, state = concat_step(
                    state, hood, node_sym, edge_sym, k, rule.label_in_string, lengths, runs, step < hops
                )
                found.extend(crossing[ln] for ln in sorted(crossing))
        yield found


def concat_pieces(
    owner: Tensor,
    pieces: StringState,
    num_owners: int,
    k: int,
    lengths: List[int],
) -> tuple:
    r"""Concatenate strings known only by their states, owner by owner.

    The general form of :func:`concat_step`: piece :math:`j` is any string,
    given by its :class:`StringState` row (saturated length, prefix and
    suffix codes), and belongs to :obj:`owner[j]`; each owner's string is the
    concatenation of its pieces in the order given. Used for streams, where a
    node's string grows chunk by chunk (its string so far is the first piece)
    and two shards' strings are joined at a seam.

    Args:
        owner (torch.Tensor): :obj:`[M]` owner of each piece, in
            :obj:`0 .. num_owners - 1`, non-decreasing.
        pieces (StringState): :obj:`[M]` the pieces' states.
        num_owners (int): The number of owners (an owner without pieces gets
            the empty string).
        k (int): The k-gram length (:math:`k \geq 2`).
        lengths (List[int]): The n-gram lengths to return (those
            :math:`\geq 2`).

    Returns:
        (dict, StringState): The n-grams that cross a piece boundary, per
        length (:class:`Occurrences` with :obj:`node` the owner), and the
        owners' new states :obj:`[num_owners]`.
    """
    device = owner.device
    m = owner.numel()
    count = torch.bincount(owner, minlength=num_owners)
    ptr = exclusive_cumsum(count)
    # items: the owner's pieces, then END
    item_start = exclusive_cumsum(count + 1)
    total_items = int(item_start[-1])
    piece_pos = item_start[owner] + torch.arange(m, device=device) - ptr[owner]
    ln = pieces.length
    size = torch.ones(total_items, dtype=torch.long, device=device)
    size[piece_pos] = torch.where(ln <= k - 1, ln, torch.full_like(ln, 2 * k - 1))
    which = torch.full((total_items,), -1, dtype=torch.long, device=device)
    which[piece_pos] = torch.arange(m, device=device)
    offset = exclusive_cumsum(size)
    total = int(offset[-1])
    check_string_memory(total * (sum(lengths) + 8), k, device)  # (the symbols, and an n-gram window at each)
    item = torch.repeat_interleave(size, output_size=total)
    intra = torch.arange(total, device=device) - offset[item]
    j = which[item]
    is_end = j < 0
    jj = j.clamp(min=0)
    if m:
        is_long = ln[jj] >= k
        head = pieces.prefix[jj, intra.clamp(max=k - 2)]
        tail = pieces.suffix[jj, (intra - k).clamp(min=0, max=k - 2)]
        sym = torch.where(
            ~is_long | (intra < k - 1),
            head,
            torch.where(intra == k - 1, torch.full_like(head, BREAK), tail),
        )
        sym = torch.where(is_end, torch.full_like(sym, BREAK), sym)
    else:
        sym = torch.full((total,), BREAK, dtype=torch.long, device=device)

    node_of_item = torch.repeat_interleave(count + 1, output_size=total_items)
    breaks = exclusive_cumsum((sym == BREAK).long())
    out = {}
    for n in lengths:
        if n < 2 or total < n:
            continue
        start = torch.arange(total - n + 1, device=device)
        ok = (breaks[start + n] == breaks[start]) & (item[start] != item[start + n - 1])
        start = start[ok]
        grams = torch.stack([sym[start + t] for t in range(n)], dim=1)
        out[n] = Occurrences(node_of_item[item[start]], grams)

    length = torch.zeros(num_owners, dtype=torch.long, device=device)
    length.index_add_(0, owner, ln)
    length = length.clamp(max=k)
    keep = length.clamp(max=k - 1)
    begin = offset[item_start[:-1]]
    end = offset[item_start[1:] - 1]  # position of the END item
    t = torch.arange(k - 1, device=device)
    valid = t.unsqueeze(0) < keep.unsqueeze(1)
    last = max(total - 1, 0)
    pre = sym[(begin.unsqueeze(1) + t).clamp(max=last)]
    suf = sym[((end - keep).unsqueeze(1) + t).clamp(min=0, max=last)]
    fill = torch.full_like(pre, BREAK)
    return out, StringState(length, torch.where(valid, pre, fill), torch.where(valid, suf, fill))
