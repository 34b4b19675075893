r"""Counting grams per graph before hashing them into graph rows (the linear map's fast path).

When the grams of a pass go straight into graph rows (the linear map,
:meth:`KongStream._sink <kong_pyg.KongStream>`), and the n-gram codes are
tabulated (:meth:`SymbolHashTable.tabulated
<kong_pyg.sketch.SymbolHashTable.tabulated>`), each chunk only counts its
(graph, gram code) pairs into a table :math:`[G, V^n + 1]` that lives across
chunks: one index addition per gram. :meth:`GramCounts.flush` hashes the
counts into the rows (a dense column addition: every code's bucket gets
sign times count) when the rows are read, when the vocabulary grows (codes
are numbered by it) or the tables would get too large. The rows are sums
of integer counts, so the result is exactly that of adding every gram as it
comes (in ``float64``; in ``float32`` while counts stay below :math:`2^{24}`).
"""
from typing import Dict, Optional, Tuple

import torch
from torch import Tensor

from ..sketch import SymbolHashTable


class GramCounts:
    """Per-graph counts of n-gram codes, hashed into graph rows on :meth:`flush`.

    The owner flushes before the rows are read or reallocated and before
    the vocabulary grows (:attr:`SymbolHashTable.on_grow
    <kong_pyg.sketch.SymbolHashTable.on_grow>`).

    Args:
        table (SymbolHashTable): The hashes.
        budget (int, optional): The most count entries held (beyond, grams
            go straight to the rows). (default: :obj:`2**22`)
    """

    def __init__(self, table: SymbolHashTable, budget: int = 1 << 22) -> None:
        self.table = table
        self.budget = budget
        self.counts: Dict[Tuple[int, Optional[int]], Tensor] = {}
        self.target: Optional[Tensor] = None

    def _counts(self, buf: Tensor, n: int, level: Optional[int]) -> Optional[Tensor]:
        """The count table of (n, level) for the rows :obj:`buf` (None: scatter instead)."""
        if self.table.degree != 1 or not self.table.tabulated(n):
            return None
        if self.target is not None and buf is not self.target:
            self.flush()
        c = len(self.table) ** n + 1
        key = (n, level)
        counts = self.counts.get(key)
        if counts is None or counts.size(0) < buf.size(0):
            others = sum(t.numel() for k, t in self.counts.items() if k != key)
            if others + buf.size(0) * c > self.budget:
                return None
            grown = torch.zeros(buf.size(0), c, dtype=torch.long)
            if counts is not None:
                grown[: counts.size(0)] = counts
            counts = self.counts[key] = grown
        self.target = buf
        return counts

    def add(self, buf: Tensor, rows: Tensor, code: Tensor, n: int, level: Optional[int],
            weight: Optional[Tensor] = None) -> None:
        """Add n-grams given by code (the no-gram code :math:`V^n` included) into graph rows :obj:`rows`.

        :obj:`weight` (integers :obj:`[M]`) counts each gram that many times (None: once).
        """
        if code.numel() == 0:
            return
        counts = self._counts(buf, n, level)
        if counts is None:
            self.table.scatter_codes(buf, rows, code, n, level, weight)
            return
        idx = torch.add(code, rows, alpha=counts.size(1))
        ones = torch.ones(1, dtype=torch.long).expand(idx.numel())
        counts.view(-1).index_add_(0, idx, ones if weight is None else weight.long())

    def flush(self) -> None:
        r"""Hash every count into its rows (:math:`rows[g, bucket(c)] \mathrel{+}= sign(c)\, count[g, c]`)."""
        if self.target is not None:
            buf = self.target
            for (n, level), counts in self.counts.items():
                bucket, sign = self.table.code_table(n, level)
                weighted = counts.to(buf.dtype) * sign[:, 0].to(buf.dtype)
                buf[: counts.size(0)].index_add_(1, bucket[:, 0], weighted)
        self.counts = {}
        self.target = None


__all__ = ["GramCounts"]
