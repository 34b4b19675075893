r"""The k-gram work of one chunk of a stream, per pass.

**Pass 1**: every piece of a node's string is one symbol (the edge symbol
and the neighbor's label), so a node's string is a plain symbol sequence and
the new n-grams of a chunk are the windows ending at its new symbols
(:func:`first_pass_chunk`). **Pass** :math:`i \geq 2`: the pieces are the
neighbors' strings :math:`s_u^{i-1}`, whose codes were fixed by the previous
pass; the crossing n-grams come from
:func:`~kong_pyg.kgrams.concat_pieces` (:func:`later_pass_chunk`).

Grams go to a :class:`Sink`: the node sketches of the pass (level-free) or,
for the linear map, straight into the graph rows (in the pass's level
block), or nowhere (None: a pass whose level is no block, replayed later).
Where the linear map's last pass replays pass 1 (:math:`h = 2`, see
:mod:`kong_pyg.stream`), :func:`first_pass_chunk` runs again on the replayed
strings with a weighted sink (each node's grams :math:`w_u` times).
:func:`close_pass` fixes a pass's strings (and sketches) for the next.
"""
from typing import TYPE_CHECKING, Dict, List, NamedTuple, Optional, Tuple

import numpy as np
import torch
from torch import Tensor

from ..hashing import BREAK
from ..kgrams import StringState, check_string_memory, concat_pieces, flat_nonzero, initial_state
from ..ordering import stable_sort_ids
from ..sketch import SymbolHashTable
from .counts import GramCounts
from .state import COUNT_DTYPE, NodeState, add_rows, filled, row_blocks

if TYPE_CHECKING:  # pragma: no cover
    from .core import KongStream
    from .ids import Columns, Found


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
        weight (torch.Tensor, optional): Per node, how many times the grams
            it owns count (integer values; None: once).
    """

    table: SymbolHashTable
    buf: Tensor
    graph: Optional[Tensor]
    level: Optional[int]
    counts: Optional[GramCounts] = None
    weight: Optional[Tensor] = None

    def rows(self, nodes: Tensor) -> Tensor:
        """The rows of :obj:`buf` that grams owned by :obj:`nodes` go to."""
        return nodes if self.graph is None else self.graph.index_select(0, nodes)

    def weights(self, nodes: Tensor) -> Optional[Tensor]:
        """The weights of grams owned by :obj:`nodes` (None: one each)."""
        return None if self.weight is None else self.weight.index_select(0, nodes)

    def add(self, rows: Tensor, grams: Tensor, weight: Optional[Tensor] = None) -> None:
        """Add grams (symbol ids :obj:`[M, n]`) into rows :obj:`rows`, :obj:`weight` :obj:`[M]` times each."""
        n = grams.size(1)
        if self.counts is None or not self.table.tabulated(n):
            self.table.scatter(self.buf, rows, grams, self.level, weight)
            return
        code, v = grams[:, 0], len(self.table)
        for t in range(1, n):
            code = torch.add(grams[:, t], code, alpha=v)
        self.add_codes(rows, code, n, weight)

    def add_codes(self, rows: Tensor, code: Tensor, n: int, weight: Optional[Tensor] = None) -> None:
        """Add n-grams given by code (:meth:`SymbolHashTable.code_table`) into rows :obj:`rows`."""
        if self.counts is not None:
            self.counts.add(self.buf, rows, code, n, self.level, weight)
        else:
            self.table.scatter_codes(self.buf, rows, code, n, self.level, weight)

    def emit(self, nodes: Tensor, grams: Tensor) -> None:
        """Add grams owned by :obj:`nodes`."""
        self.add(self.rows(nodes), grams, self.weights(nodes))


def _run_starts(so: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    """Runs of equal owners in sorted :obj:`so`: their starts (a mask and the indices) and lengths."""
    m = so.numel()
    change = torch.ones(m, dtype=torch.bool)
    torch.ne(so[1:], so[:-1], out=change[1:])
    starts = flat_nonzero(change)
    return change, starts, torch.diff(starts, append=torch.tensor([m]))


def _runs(so: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    """Runs of equal owners in sorted :obj:`so`: run of every entry, run starts, run lengths."""
    change, starts, count = _run_starts(so)
    return torch.cumsum(change.long(), 0) - 1, starts, count


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


def _lay_out(state: NodeState, so: Tensor, syms: List[Tensor], name: str) -> _Layout:
    h, w, m = state.k - 1, len(syms), so.numel()
    run_id, starts, count = _runs(so)
    u = starts.numel()
    node = so.index_select(0, starts)
    old_len = state[name + "_len"].index_select(0, node).long()
    kept = old_len.clamp(max=h)
    head = torch.add(torch.arange(u) * h, starts, alpha=w)
    seq = torch.empty(u * h + m * w, dtype=torch.long)
    base = torch.add(torch.arange(m) * w, run_id, alpha=h) + h  # incidence j's first symbol
    for t, sym in enumerate(syms):
        seq.index_copy_(0, base + t if t else base, sym)
    suffix = state[name + "_suf"].index_select(0, node).long()
    for q in range(h):  # the stored suffix, right-aligned before the new symbols
        src = q - h + kept
        prev = suffix.gather(1, src.clamp(min=0).view(-1, 1)).view(-1)
        seq.index_copy_(0, head + q, prev.masked_fill_(src < 0, BREAK))
    return _Layout(node, count, old_len, head, base, seq)


def _add_windows(sink: Sink, rows: Tensor, weight: Optional[Tensor], lay: _Layout, syms: List[Tensor],
                 n: int, codes: bool) -> None:
    r"""Add the n-grams (:math:`n \geq 2`) ending at each new symbol."""
    w, v = len(syms), len(sink.table)
    check_string_memory(lay.base.numel() * (3 * n + 4), n)  # (an n-gram window at every incidence: its
    # n parts, their stack and the masks)
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
            sink.add_codes(rows, code, n, weight)
        else:
            grams, r, wt = torch.stack(parts, dim=1), rows, weight
            if bad is not None:
                grams, r = grams[~bad], rows[~bad]
                wt = None if wt is None else wt[~bad]
            sink.add(r, grams, wt)


def _store_strings(state: NodeState, lay: _Layout, w: int, name: str) -> None:
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
        state.set(name + "_pre", lay.node[short], window(begin, keep[short]))
    state.set(name + "_len", lay.node, new_len)
    state.set(name + "_suf", lay.node, suf)


class Incidences(NamedTuple):
    """A chunk's incidences (owner, neighbor, edge symbol), grouped by owner, arrival order within each.

    With :obj:`undirected` every edge :math:`(s, d)` is two incidences (:math:`s`
    sees :math:`d`, then :math:`d` sees :math:`s`); otherwise one (:math:`s` sees :math:`d`).
    """

    owner: Tensor
    nbr: Tensor
    esym: Optional[Tensor]


def incidences(ends: Tensor, esym: Optional[Tensor], undirected: bool, grouped: bool = True) -> Incidences:
    """:class:`Incidences` of :obj:`ends` :obj:`[2E]` (each edge's source, destination) and :obj:`esym`.

    Without :obj:`grouped` they stay in arrival order (:math:`k = 1` reads no
    order: its grams are single symbols, and it keeps no strings).
    """
    if not grouped:
        if undirected:
            nbr = ends.view(-1, 2).flip(1).reshape(-1)
            return Incidences(ends, nbr, None if esym is None else esym.repeat_interleave(2))
        return Incidences(ends[0::2], ends[1::2], esym)
    if undirected:  # incidence 2e: source sees destination; 2e + 1: the reverse
        so, perm = stable_sort_ids(ends)
        nb, edge = ends.index_select(0, perm ^ 1), perm >> 1
    else:
        so, perm = stable_sort_ids(ends[0::2])
        nb, edge = ends.index_select(0, 2 * perm + 1), perm
    return Incidences(so, nb, None if esym is None else esym.index_select(0, edge))


def count_neighbors(state: NodeState, nbr: Tensor) -> None:
    """Add one to ``nbr_w`` (how often each node is a neighbor) for every entry of :obj:`nbr`."""
    w = state["nbr_w"]
    w.index_add_(0, nbr, torch.ones(1, dtype=w.dtype).expand(nbr.numel()))


def first_pass_chunk(state: NodeState, sink: Optional[Sink], lengths: List[int], inc: Incidences,
                     name: str = "seg") -> None:
    r"""Append each incidence's symbols (edge symbol, neighbor label) to its owner, pass 1.

    The new n-grams are the windows ending at a new symbol of
    :obj:`suffix(s_v) + new symbols` (1-grams: the new symbols, i.e. the edge
    symbols and the neighbors' :math:`Y^{(0)}`).

    Args:
        state (NodeState): The nodes (``node_sym`` and the strings :obj:`name`).
        sink (Sink, optional): Where the grams go (None: nowhere, only the
            strings are kept).
        lengths (list): The gram lengths counted.
        inc (Incidences): The chunk's incidences.
        name (str, optional): The strings built: ``"seg"`` in pass 1,
            ``"rep"`` when the last pass of the linear map replays pass 1
            (see :mod:`kong_pyg.stream`). (default: :obj:`"seg"`)
    """
    so = inc.owner
    lab = state["node_sym"].index_select(0, inc.nbr)
    syms = [lab] if inc.esym is None else [inc.esym, lab]
    rows = None if sink is None else sink.rows(so)
    weight = None if sink is None else sink.weights(so)
    if 1 in lengths and sink is not None and rows is not None:
        for sym in syms:
            sink.add(rows, sym.view(-1, 1), weight)
    if state.k == 1:
        return
    codes = sink is None or all(sink.table.tabulated(n) for n in lengths)
    if state.k == 2 and codes:
        _pairs(state, sink, rows, weight, so, syms, name)
        return
    syms = [sym.long() for sym in syms]  # (the general path computes in int64)
    lay = _lay_out(state, so.long(), syms, name)
    if sink is not None and rows is not None:
        for n in lengths:
            if n >= 2:
                _add_windows(sink, rows, weight, lay, syms, n, codes)
    _store_strings(state, lay, len(syms), name)


def _pairs(state: NodeState, sink: Optional[Sink], rows: Optional[Tensor], weight: Optional[Tensor],
           so: Tensor, syms: List[Tensor], name: str) -> None:
    """:func:`first_pass_chunk`'s windows and string codes for :math:`k = 2` (tabulated codes).

    The same grams and codes as :func:`_lay_out`, :func:`_add_windows` and
    :func:`_store_strings`, with fewer passes: the symbol before an
    incidence's first one is the previous incidence's last symbol within a
    run of one owner, and the stored suffix (one symbol) at a run's start.
    """
    m, w = so.numel(), len(syms)
    _, starts, count = _run_starts(so)
    node = so.index_select(0, starts)
    old_len = state[name + "_len"].index_select(0, node)
    if sink is not None and rows is not None:
        v = len(sink.table)
        stored = state[name + "_suf"].view(-1).index_select(0, node)  # BREAK for an empty string
        prev = torch.empty(m, dtype=syms[-1].dtype)
        prev[1:] = syms[-1][:-1]
        prev.index_copy_(0, starts, stored.to(prev.dtype))
        code = torch.add(syms[0], prev, alpha=v).masked_fill_(prev < 0, v * v)  # v^2: no gram
        sink.add_codes(rows, code, 2, weight)
        for t in range(1, w):
            sink.add_codes(rows, torch.add(syms[t], syms[t - 1], alpha=v), 2, weight)
    state.set(name + "_len", node, (old_len + w * count).clamp_(max=2))
    state.set(name + "_suf", (node, 0), syms[-1].index_select(0, starts + count - 1))
    empty = flat_nonzero(old_len == 0)
    if empty.numel():
        state.set(name + "_pre", (node[empty], 0), syms[0].index_select(0, starts[empty]))


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


def later_pass_chunk(state: NodeState, sink: Sink, lengths: List[int], inc: Incidences, propagate: bool,
                     count: bool = True) -> None:
    r"""Append each incidence's pieces (edge symbol, :math:`s_u^{i-1}`) to its owner, pass :math:`i \geq 2`.

    Args:
        state (NodeState): The nodes (``seg`` and ``prev`` strings, sketches).
        sink (Sink): Where the grams go.
        lengths (list): The gram lengths counted.
        inc (Incidences): The chunk's incidences.
        propagate (bool): Add the neighbors' previous sketches into the
            owners' (``Y += Yprev[nbr]``); otherwise (the linear map's last
            pass) count each node's appearances as a neighbor (``nbr_w``)
            if :obj:`count`.
        count (bool, optional): See :obj:`propagate` (False: pass 1
            counted them). (default: :obj:`True`)
    """
    so, nb, es = inc
    if es is not None and 1 in lengths:
        sink.emit(so, es.view(-1, 1))
    if propagate:  # (integer counts: the order of the additions does not change the sums)
        y, prev = state["Y"], state["Yprev"]
        for lo, hi in row_blocks(so.numel(), y.size(1)):
            add_rows(y, so[lo:hi], prev[nb[lo:hi]])
    elif count:
        count_neighbors(state, nb)
    if state.k == 1:
        return
    es = None if es is None else es.long()
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
    _, starts, count = _run_starts(so)
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


# -- the end of a pass ---------------------------------------------------------------


def close_pass(ks: "KongStream") -> None:
    r"""Fix every node's :math:`s^i` (codes, and sketches where kept) and start pass :math:`i + 1`.

    The work of :meth:`KongStream.end_pass <kong_pyg.KongStream.end_pass>`.
    """
    i, state = ks.pass_index, ks._nodes
    if ks._replay:  # the grams of l(u) heading s_u^1 (WL): w_u times in the last level, once in this one
        sinks: List[Sink] = []
        if ks.traversal_rule.label_in_string:
            sinks.append(ks._replay_sink(counts=False))
            here = ks._sink()  # (None: level 1 is no block)
            if here is not None:
                sinks.append(here)
        full = _close_strings(ks, *sinks)
    else:
        y = state["Y"]
        full = _close_strings(ks, Sink(ks._table, y, None, None))
        if i in ks.traversal_rule.blocks(ks.hops):  # s^i is a block: place its sketches
            _add_level(ks, y, i)
    if "prev_len" not in state:
        state.add_strings("prev")
    if full is not None:
        state.set_strings("prev", slice(0, state.n), full)
    ks.pass_index = i + 1
    ks._later_rows()
    if ks._replay:
        state.add_strings("rep")
    else:
        state.put("Yprev", y)
        if ks._needs_node_sketch(i + 1):
            state.put("Y", filled(y.size(0), tuple(y.shape[1:]), y.dtype, 0))
        else:
            state.drop("Y")
            state.add("nbr_w", (), COUNT_DTYPE, 0)
    state.clear_strings("seg")
    ks.position = 0


def _close_strings(ks: "KongStream", *sinks: Sink) -> Optional[StringState]:
    """Every node's full string :math:`s^i` (with the label in front, its grams into :obj:`sinks`, for WL)."""
    state = ks._nodes
    if not ks.traversal_rule.label_in_string:
        return state.strings("seg") if ks.k > 1 else None
    grams, full = label_head(state, ks.lengths, torch.arange(state.n))
    for owner, g in grams.values():
        for sink in sinks:
            sink.emit(owner, g)
    return full


def _add_level(ks: "KongStream", y: Tensor, level: int) -> None:
    """Add the level-free node sketches :obj:`y` into level :obj:`level`'s block."""
    state = ks._nodes
    if ks.linear:  # sum per graph, then place (a signed permutation of columns: the same numbers)
        rows = torch.zeros(ks.num_graphs, ks.dim, dtype=ks.dtype)
        for lo, hi in row_blocks(state.n, ks.dim):
            add_rows(rows, state["node_graph"][lo:hi], y[lo:hi])
        ks._rows[: ks.num_graphs] += ks._table.place_rows(rows, ks._block(level))
        return
    if "acc" not in state:
        state.add("acc", (ks.degree * ks.dim,), ks.dtype, 0)
    for lo, hi in row_blocks(state.n, ks.degree * ks.dim):
        state["acc"][lo:hi] += ks._table.place_rows(y[lo:hi], ks._block(level))


#: Edges per internal sub-chunk of :func:`read_chunk`.
_MAX_SUB = 1 << 18
#: Look up the ids of the next sub-chunk in a second thread (off: see docs/results/stream.md).
_PIPELINE = False
_MASK = (1 << 64) - 1


def new_nodes(state: NodeState, table: SymbolHashTable, found: "Found", cols: "Columns") -> None:
    """Graph and label of the nodes first seen in a sub-chunk (their type on that edge)."""
    n0, n1 = state.n, found.num_nodes
    state.grow(n1)
    types = np.stack([cols.src_type, cols.dst_type], axis=1).reshape(-1)[found.first]
    state["node_graph"][n0:n1] = torch.from_numpy(found.graph[found.first // 2])
    state["node_sym"][n0:n1] = table.ids(2 * types)  # node codes


def read_chunk(ks: "KongStream", cols: "Columns") -> None:
    """Read checked columns into :obj:`ks` in sub-chunks (the work of ``KongStream.update``).

    A stop midway (an error, or Ctrl-C) once anything changed (pass 1's id
    lookup numbers new ids) leaves ids numbered and edges read: the stream is
    then marked broken and refuses every use until it is reset or loaded, so
    that no retry reads a chunk twice. (A later pass refusing the first
    sub-chunk's ids, "not seen in pass 1", has changed nothing.)
    """
    e = cols.src.size
    parts = [cols.part(lo, min(lo + _MAX_SUB, e)) for lo in range(0, e, _MAX_SUB)]
    first_pass = ks.pass_index == 1

    def lookup(j: int) -> "Found":
        return ks._ids.lookup(parts[j], first_pass, ks.pass_index)

    # ids of sub-chunk j + 1 are looked up (NumPy, GIL released) while
    # sub-chunk j is processed (PyTorch): two cores busy, one thread each
    pool = ks._pool() if len(parts) > 1 and _PIPELINE else None
    ahead = pool.submit(lookup, 0) if pool is not None else None
    touched = first_pass
    try:
        for j, part in enumerate(parts):
            if pool is not None and ahead is not None:
                found = ahead.result()
                if j + 1 < len(parts):
                    ahead = pool.submit(lookup, j + 1)
            else:
                found = lookup(j)
            touched = True
            if ks._current is not None:
                ks._current = (ks._current + ks._ids.checksum(part, ks.position)) & _MASK
            ks._consume(found, part)
            ks.position += part.src.size
            if first_pass:
                ks.num_edges += part.src.size
    except BaseException as err:
        if touched:
            ks._broken = f"{type(err).__name__} after {ks.position:,} edges of pass {ks.pass_index}"
        raise
