r"""The k-gram work of one chunk of a stream, per pass.

**Pass 1**: every piece of a node's string is one symbol (the edge symbol
and the neighbor's label), so a node's string is a plain symbol sequence and
the new n-grams of a chunk are the windows ending at its new symbols
(:func:`first_pass_chunk`). **Pass** :math:`i \geq 2`: the pieces are the
neighbors' strings :math:`s_u^{i-1}`, whose codes were fixed by the previous
pass; the crossing n-grams come from
:func:`~kong_pyg.kgrams.concat_pieces` (:func:`later_pass_chunk`).

Grams go to a :class:`Sink`: the node sketches of the pass (level-free) or,
for the linear map's last pass, straight into the graph rows (in the pass's
level block).
"""
from typing import Dict, List, NamedTuple, Optional, Tuple

import torch
from torch import Tensor

from ..hashing import BREAK
from ..kgrams import StringState, concat_pieces, flat_nonzero, initial_state
from ..ordering import stable_sort_ids
from ..sketch import SymbolHashTable
from .counts import GramCounts
from .state import NodeState, add_rows, row_blocks


class Sink(NamedTuple):
    """Where the grams of a pass go.

    Attributes:
        table (SymbolHashTable): The hashes.
        buf (torch.Tensor): Node sketches :obj:`[N, p b]` or graph rows :obj:`[G, b]`.
        graph (torch.Tensor, optional): The graph of every node when
            :obj:`buf` holds graph rows; None when it holds node sketches.
        level (int, optional): The level block grams are placed in (None:
            level-free).
        counts (GramCounts, optional): Where grams for graph rows are
            counted first (see :mod:`~kong_pyg.stream.counts`).
    """

    table: SymbolHashTable
    buf: Tensor
    graph: Optional[Tensor]
    level: Optional[int]
    counts: Optional[GramCounts] = None

    def rows(self, nodes: Tensor) -> Tensor:
        """The rows of :obj:`buf` that grams owned by :obj:`nodes` go to."""
        return nodes if self.graph is None else self.graph.index_select(0, nodes)

    def add(self, rows: Tensor, grams: Tensor) -> None:
        """Add grams (symbol ids :obj:`[M, n]`) into rows :obj:`rows`."""
        n = grams.size(1)
        if self.counts is None or not self.table.tabulated(n):
            self.table.scatter(self.buf, rows, grams, self.level)
            return
        code, v = grams[:, 0], len(self.table)
        for t in range(1, n):
            code = torch.add(grams[:, t], code, alpha=v)
        self.add_codes(rows, code, n)

    def add_codes(self, rows: Tensor, code: Tensor, n: int) -> None:
        """Add n-grams given by code (:meth:`SymbolHashTable.code_table`) into rows :obj:`rows`."""
        if self.counts is not None:
            self.counts.add(self.buf, rows, code, n, self.level)
        else:
            self.table.scatter_codes(self.buf, rows, code, n, self.level)

    def emit(self, nodes: Tensor, grams: Tensor) -> None:
        """Add grams owned by :obj:`nodes`."""
        self.add(self.rows(nodes), grams)


def _runs(so: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    """Runs of equal owners in sorted :obj:`so`: run of every entry, run starts, run lengths."""
    m = so.numel()
    change = torch.ones(m, dtype=torch.bool)
    change[1:] = so[1:] != so[:-1]
    run_id = torch.cumsum(change.long(), 0) - 1
    starts = flat_nonzero(change)
    count = torch.diff(starts, append=torch.tensor([m]))
    return run_id, starts, count


# -- pass 1: the pieces are single symbols ---------------------------------------


class _Layout(NamedTuple):
    r"""An owner-sorted chunk in one symbol array :obj:`seq`.

    Per run (owner): its stored suffix, right-aligned in :math:`k - 1`
    slots (``BREAK`` where the string is shorter), then its incidences' new
    symbols (:math:`w` each).
    """

    node: Tensor  # [u] the owner of each run
    sizes: Tensor  # [u] incidences per run
    old_len: Tensor  # [u] saturated string length before the chunk
    head: Tensor  # [u] where each run's stored suffix starts in seq
    base: Tensor  # [m] where each incidence's first new symbol is in seq
    seq: Tensor


def _lay_out(state: NodeState, so: Tensor, syms: List[Tensor]) -> _Layout:
    h, w, m = state.k - 1, len(syms), so.numel()
    run_id, starts, count = _runs(so)
    u = starts.numel()
    node = so.index_select(0, starts)
    old_len = state["seg_len"].index_select(0, node).long()
    kept = old_len.clamp(max=h)
    head = torch.add(torch.arange(u) * h, starts, alpha=w)
    seq = torch.empty(u * h + m * w, dtype=torch.long)
    base = torch.add(torch.arange(m) * w, run_id, alpha=h) + h  # incidence j's first symbol
    for t, sym in enumerate(syms):
        seq.index_copy_(0, base + t if t else base, sym)
    suffix = state["seg_suf"].index_select(0, node).long()
    for q in range(h):  # the stored suffix, right-aligned before the new symbols
        src = q - h + kept
        prev = suffix.gather(1, src.clamp(min=0).view(-1, 1)).view(-1)
        seq.index_copy_(0, head + q, prev.masked_fill_(src < 0, BREAK))
    return _Layout(node, count, old_len, head, base, seq)


def _add_windows(sink: Sink, rows: Tensor, lay: _Layout, syms: List[Tensor], n: int,
                 codes: bool) -> None:
    r"""Add the n-grams (:math:`n \geq 2`) ending at each new symbol."""
    w, v = len(syms), len(sink.table)
    for t_end in range(w):  # windows ending at symbol t_end of each incidence
        before = n - 1 - t_end  # symbols of the window before this incidence
        parts = [lay.seq.index_select(0, lay.base - j) for j in range(before, 0, -1)]
        parts += syms[max(0, -before) : t_end + 1]
        bad: Optional[Tensor] = None
        for part in parts[:before]:  # BREAK: the owner's string is too short
            bad = part < 0 if bad is None else bad | (part < 0)
        if codes:
            code = parts[0]
            for part in parts[1:]:
                code = torch.add(part, code, alpha=v)
            if bad is not None:
                code = code.masked_fill_(bad, v**n)
            sink.add_codes(rows, code, n)
        else:
            grams, r = torch.stack(parts, dim=1), rows
            if bad is not None:
                grams, r = grams[~bad], rows[~bad]
            sink.add(r, grams)


def _store_strings(state: NodeState, lay: _Layout, w: int) -> None:
    """The owners' string codes after the chunk."""
    k, h = state.k, state.k - 1
    seq, last = lay.seq, lay.seq.numel() - 1
    new_len = (lay.old_len + w * lay.sizes).clamp(max=k)
    keep = new_len.clamp(max=h)
    end = lay.head + h + w * lay.sizes  # one past the run's last symbol

    def window(first: Tensor, size: Tensor) -> Tensor:
        none = torch.full_like(size, BREAK)
        cols = [torch.where(size > q, seq[(first + q).clamp(max=last)], none) for q in range(h)]
        return torch.stack(cols, dim=1)

    suf = window(end - keep, keep)
    short = flat_nonzero(lay.old_len < h)  # prefixes change only while short
    if short.numel():
        begin = lay.head[short] + h - lay.old_len[short].clamp(max=h)
        state.set("seg_pre", lay.node[short], window(begin, keep[short]))
    state.set("seg_len", lay.node, new_len)
    state.set("seg_suf", lay.node, suf)


def first_pass_chunk(state: NodeState, sink: Sink, lengths: List[int], ends: Tensor,
                     esym: Optional[Tensor], undirected: bool) -> None:
    r"""Append each incidence's symbols (edge symbol, neighbor label) to its owner, pass 1.

    The new n-grams are the windows ending at a new symbol of
    :obj:`suffix(s_v) + new symbols` (1-grams: the new symbols, i.e. the edge
    symbols and the neighbors' :math:`Y^{(0)}`).

    Args:
        state (NodeState): The nodes (``node_sym`` and the ``seg`` strings).
        sink (Sink): Where the grams go.
        lengths (list): The gram lengths counted.
        ends (torch.Tensor): :obj:`[2E]` node ids, source and destination
            of each edge in turn.
        esym (torch.Tensor, optional): :obj:`[E]` edge symbol ids.
        undirected (bool): Each edge extends both endpoints (source first);
            otherwise only the source.
    """
    if undirected:  # incidence 2e: source sees destination; 2e + 1: the reverse
        so, perm = stable_sort_ids(ends)
        nb, edge = ends.index_select(0, perm ^ 1), perm >> 1
    else:
        so, perm = stable_sort_ids(ends[0::2])
        nb, edge = ends.index_select(0, 2 * perm + 1), perm
    lab = state["node_sym"].index_select(0, nb)
    syms = [lab] if esym is None else [esym.index_select(0, edge), lab]
    rows = sink.rows(so)
    if 1 in lengths:
        for sym in syms:
            sink.add(rows, sym.view(-1, 1))
    if state.k == 1:
        return
    codes = all(sink.table.tabulated(n) for n in lengths)
    if state.k == 2 and codes:
        _pairs(state, sink, rows, so, syms)
        return
    syms = [sym.long() for sym in syms]  # (the general path computes in int64)
    lay = _lay_out(state, so.long(), syms)
    for n in lengths:
        if n >= 2:
            _add_windows(sink, rows, lay, syms, n, codes)
    _store_strings(state, lay, len(syms))


def _pairs(state: NodeState, sink: Sink, rows: Tensor, so: Tensor, syms: List[Tensor]) -> None:
    """:func:`first_pass_chunk`'s windows and string codes for :math:`k = 2` (tabulated codes).

    The same grams and codes as :func:`_lay_out`, :func:`_add_windows` and
    :func:`_store_strings`, with fewer passes: the symbol before an
    incidence's first one is the previous incidence's last symbol within a
    run of one owner, and the stored suffix (one symbol) at a run's start.
    """
    m, w, v = so.numel(), len(syms), len(sink.table)
    start = torch.ones(m, dtype=torch.bool)
    torch.ne(so[1:], so[:-1], out=start[1:])
    starts = flat_nonzero(start)
    node = so.index_select(0, starts)
    old_len = state["seg_len"].index_select(0, node)
    stored = state["seg_suf"].view(-1).index_select(0, node)  # BREAK for an empty string
    prev = torch.empty(m, dtype=syms[-1].dtype)
    prev[1:] = syms[-1][:-1]
    prev.index_copy_(0, starts, stored.to(prev.dtype))
    code = torch.add(syms[0], prev, alpha=v).masked_fill_(prev < 0, v * v)  # v^2: no gram
    sink.add_codes(rows, code, 2)
    for t in range(1, w):
        sink.add_codes(rows, torch.add(syms[t], syms[t - 1], alpha=v), 2)
    count = torch.diff(starts, append=torch.tensor([m]))
    state.set("seg_len", node, (old_len + w * count).clamp_(max=2))
    state.set("seg_suf", (node, 0), syms[-1].index_select(0, starts + count - 1))
    empty = flat_nonzero(old_len == 0)
    if empty.numel():
        state.set("seg_pre", (node[empty], 0), syms[0].index_select(0, starts[empty]))


# -- pass i >= 2: the pieces are the neighbors' previous strings ------------------


def _pieces(state: NodeState, so: Tensor, nb: Tensor,
            esym: Optional[Tensor]) -> Tuple[Tensor, Tensor, StringState]:
    """Per run its string so far, then per incidence [edge symbol] the neighbor's previous string.

    Returns:
        (torch.Tensor, torch.Tensor, StringState): The owner of each run,
        the run of each piece and the pieces' string codes.
    """
    k, m = state.k, so.numel()
    run_id, starts, _ = _runs(so)
    u = starts.numel()
    node = so[starts]
    w = 1 + int(esym is not None)
    n_items = u + m * w
    owner = torch.empty(n_items, dtype=torch.long)
    length = torch.empty(n_items, dtype=torch.long)
    pre = torch.empty(n_items, k - 1, dtype=torch.long)
    suf = torch.empty(n_items, k - 1, dtype=torch.long)
    at = starts * w + torch.arange(u)
    seg = state.strings("seg", node)
    owner[at], length[at], pre[at], suf[at] = torch.arange(u), seg.length, seg.prefix, seg.suffix
    base = torch.arange(m) * w + run_id + 1
    if esym is not None:
        one = initial_state(esym, k)
        owner[base], length[base], pre[base], suf[base] = run_id, one.length, one.prefix, one.suffix
    at = base + w - 1
    prev = state.strings("prev", nb)
    owner[at], length[at], pre[at], suf[at] = run_id, prev.length, prev.prefix, prev.suffix
    return node, owner, StringState(length, pre, suf)


def later_pass_chunk(state: NodeState, sink: Sink, lengths: List[int], owner: Tensor, nbr: Tensor,
                     esym: Optional[Tensor], propagate: bool) -> None:
    r"""Append each incidence's pieces (edge symbol, :math:`s_u^{i-1}`) to its owner, pass :math:`i \geq 2`.

    Args:
        state (NodeState): The nodes (``seg`` and ``prev`` strings, sketches).
        sink (Sink): Where the grams go.
        lengths (list): The gram lengths counted.
        owner (torch.Tensor): :obj:`[M]` the node each incidence extends.
        nbr (torch.Tensor): :obj:`[M]` its neighbor.
        esym (torch.Tensor, optional): :obj:`[M]` edge symbol ids.
        propagate (bool): Add the neighbors' previous sketches into the
            owners' (``Y += Yprev[nbr]``); otherwise count each node's
            appearances as a neighbor (``nbr_w``, the linear map's last pass).
    """
    if esym is not None and 1 in lengths:
        sink.emit(owner, esym.view(-1, 1))
    if propagate:
        y, prev = state["Y"], state["Yprev"]
        for lo, hi in row_blocks(owner.numel(), y.size(1)):
            add_rows(y, owner[lo:hi], prev[nbr[lo:hi]])
    else:
        w = state["nbr_w"]
        w.index_add_(0, nbr, torch.ones(nbr.numel(), dtype=w.dtype))
    if state.k == 1:
        return
    so, perm = stable_sort_ids(owner)
    nb, es = nbr.index_select(0, perm), None if esym is None else esym.index_select(0, perm)
    if state.k == 2 and sink.table.tabulated(2) and _later_pairs(state, sink, so, nb, es):
        return
    node, item_owner, pieces = _pieces(state, so, nb, es)
    crossing, new = concat_pieces(item_owner, pieces, node.numel(), state.k, lengths)
    for n in sorted(crossing):
        sink.emit(node[crossing[n].node], crossing[n].grams)
    state.set_strings("seg", node, new)


def _later_pairs(state: NodeState, sink: Sink, so: Tensor, nb: Tensor, es: Optional[Tensor]) -> bool:
    r""":func:`later_pass_chunk`'s crossing 2-grams and string codes for :math:`k = 2` (tabulated codes).

    The pieces of incidence :math:`j` are its edge symbol :math:`e_j` (if
    any) and :math:`s_{u_j}^{i-1}` (saturated length :math:`L_j`, first and
    last symbols :math:`P_j, S_j`); the grams that cross a piece boundary
    are (last symbol so far, :math:`e_j`) and (:math:`e_j, P_j`) when
    :math:`L_j > 0`, or (last symbol so far, :math:`P_j`) without edge
    symbols. The same grams and codes as :func:`~kong_pyg.kgrams.concat_pieces`,
    with fewer passes. Returns False (nothing done) when a piece could be
    empty with no edge symbol to carry the last symbol (then use the general
    path).
    """
    prev = state.strings("prev", nb)
    length, first, last = prev.length, prev.prefix.view(-1), prev.suffix.view(-1)
    if es is None and bool((length == 0).any()):
        return False
    m, v = so.numel(), len(sink.table)
    rows = sink.rows(so)
    start = torch.ones(m, dtype=torch.bool)
    torch.ne(so[1:], so[:-1], out=start[1:])
    starts = flat_nonzero(start)
    node = so.index_select(0, starts)
    old_len = state["seg_len"].index_select(0, node)
    end_sym = last if es is None else torch.where(length > 0, last, es)  # the last symbol after j
    before = torch.empty(m, dtype=torch.long)  # the last symbol before j (BREAK: none)
    before[1:] = end_sym[:-1]
    before.index_copy_(0, starts, state["seg_suf"].view(-1).index_select(0, node).long())
    head = first if es is None else es  # the first symbol of j's pieces
    sink.add_codes(rows, torch.add(head, before, alpha=v).masked_fill_(before < 0, v * v), 2)
    if es is not None:
        sink.add_codes(rows, torch.add(first, es, alpha=v).masked_fill_(length == 0, v * v), 2)
    count = torch.diff(starts, append=torch.tensor([m]))
    added = torch.zeros(node.numel(), dtype=torch.long).index_add_(
        0, torch.repeat_interleave(torch.arange(node.numel()), count, output_size=m),
        length + int(es is not None))
    state.set("seg_len", node, (old_len + added).clamp_(max=2))
    state.set("seg_suf", (node, 0), end_sym.index_select(0, starts + count - 1))
    empty = flat_nonzero(old_len == 0)
    if empty.numel():
        state.set("seg_pre", (node[empty], 0), head.index_select(0, starts[empty]))
    return True


# -- strings with the label in front ------------------------------------------------


def label_head(state: NodeState, lengths: List[int],
               nodes: Tensor) -> Tuple[Dict[int, Tuple[Tensor, Tensor]], Optional[StringState]]:
    """:math:`l(v)` followed by the segment string, for :obj:`nodes` (WL's strings).

    Returns:
        (dict, StringState): Per gram length, the n-grams that cross from the
        label into the segment (and the label's 1-gram) as (owner = position
        in :obj:`nodes`, grams); and the joined string codes (None for
        :math:`k = 1`).
    """
    k, n = state.k, nodes.numel()
    label = state["node_sym"][nodes]
    local = torch.arange(n)
    out = {1: (local, label.view(-1, 1))} if 1 in lengths else {}
    if k == 1:
        return out, None
    one = initial_state(label, k)
    seg = state.strings("seg", nodes)
    pieces = StringState(
        torch.stack([one.length, seg.length], 1).view(-1),
        torch.stack([one.prefix, seg.prefix], 1).view(-1, k - 1),
        torch.stack([one.suffix, seg.suffix], 1).view(-1, k - 1),
    )
    crossing, joined = concat_pieces(local.repeat_interleave(2), pieces, n, k, lengths)
    for ln, occ in crossing.items():
        out[ln] = (occ.node, occ.grams)
    return out, joined
