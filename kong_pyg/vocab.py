r"""Global columns of exact KONG features: vocabularies that stay fixed across calls.

Inside one call every distinct n-gram has a dense *local* id
(:func:`kong_pyg.exact.index_grams`); :class:`~kong_pyg.KongVectorizer` maps
local ids to *global* columns learned in :meth:`fit`, as scikit-learn's
``DictVectorizer`` does, with a :class:`KeyVocab` for symbol codes and
:class:`TupleVocab` for tuples (n-grams as symbol ids, (block, n-gram) pairs,
multisets of columns).
"""
from typing import List, Tuple

import torch
from torch import Tensor

from .kgrams import flat_nonzero

#: The keys of an empty vocabulary (shared: a vocabulary replaces its tensors, never writes into them).
_NO_KEYS = torch.zeros(0, dtype=torch.long)


class KeyVocab:
    """Dense ids for ``int64`` keys, in order of first appearance.

    Lookups are vectorized (:func:`torch.searchsorted`); keys first seen in
    one call get consecutive ids in sorted key order.
    """

    def __init__(self):
        self.keys = _NO_KEYS  # by id
        self._sorted = _NO_KEYS
        self._ids = _NO_KEYS

    def __len__(self) -> int:
        return self.keys.numel()

    def lookup(self, keys: Tensor, grow: bool, distinct: bool = False) -> Tensor:
        """Ids of :obj:`keys`; unseen keys get new ids or :obj:`-1`.

        :obj:`distinct` promises that :obj:`keys` has no repeats.
        """
        dev = keys.device
        if distinct:
            uniq, inv = keys, None
        else:
            uniq, inv = torch.unique(keys, return_inverse=True)
        if not self.keys.numel():  # empty: nothing to search
            if not grow:
                ids = torch.full_like(uniq, -1)
            else:
                ids = torch.arange(uniq.numel(), device=dev)
                fresh = uniq.cpu()
                self.keys = fresh.clone() if inv is None else fresh
                if inv is None:  # in the caller's order
                    order = torch.argsort(fresh)
                    self._sorted, self._ids = fresh.index_select(0, order), order
                else:  # torch.unique's sorted order
                    self._sorted, self._ids = self.keys, ids.cpu()
            return ids if inv is None else ids.index_select(0, inv)
        sorted_keys, sorted_ids = self._sorted.to(dev), self._ids.to(dev)
        pos = torch.searchsorted(sorted_keys, uniq).clamp_(max=sorted_keys.numel() - 1)
        found = sorted_keys.index_select(0, pos) == uniq
        ids = torch.where(found, sorted_ids.index_select(0, pos), -1)
        if grow:
            new = flat_nonzero(~found)
            if new.numel():
                fresh = uniq.index_select(0, new)
                fresh_ids = len(self) + torch.arange(new.numel(), device=dev)
                ids.index_copy_(0, new, fresh_ids)
                self.keys = torch.cat([self.keys, fresh.cpu()])
                merged = torch.cat([self._sorted, fresh.cpu()])
                merged_ids = torch.cat([self._ids, fresh_ids.cpu()])
                order = torch.argsort(merged)
                self._sorted, self._ids = merged[order], merged_ids[order]
        return ids if inv is None else ids.index_select(0, inv)

    def state(self) -> Tensor:
        """The keys by id (enough to rebuild the vocabulary)."""
        return self.keys.clone()

    @classmethod
    def from_keys(cls, keys: Tensor) -> "KeyVocab":
        """Rebuild from :meth:`state`."""
        if torch.unique(keys).numel() != keys.numel():
            raise ValueError("a vocabulary's keys must be distinct (as state() gives them)")
        v = cls()
        v.lookup(keys, grow=True, distinct=True)  # (ids in the order given: the ids they had)
        return v


_SHIFT = 31
_PAIR = -(1 << 62) - 1  # pair keys: _PAIR - (a << 31 | b), below every single-value key


class TupleVocab:
    r"""Dense column ids for rows of small non-negative integers.

    Rows of one or two values (below :math:`2^{31}`) are packed into one
    negative ``int64`` key. A longer row is a path in a trie whose nodes are
    :class:`KeyVocab` ids of :math:`(parent \cdot 2^{31} + value)`, keyed by
    its final (positive) trie node. A second vocabulary maps keys to columns,
    so rows of any length map exactly, and prefixes are not columns.
    """

    def __init__(self):
        self.trie = KeyVocab()
        self.columns = KeyVocab()

    def __len__(self) -> int:
        return len(self.columns)

    def lookup(self, rows: Tensor, grow: bool, distinct: bool = False) -> Tensor:
        """Columns of :obj:`rows [M, w]`; unseen rows get new ids or -1.

        :obj:`distinct` promises that no row repeats.
        """
        if rows.size(1) == 1:
            return self.columns.lookup(torch.rsub(rows[:, 0], -1), grow, distinct)  # -1 - value
        if rows.size(1) == 2:
            return self.lookup_pairs(rows[:, 0], rows[:, 1], grow, distinct)
        node = torch.zeros(rows.size(0), dtype=torch.long, device=rows.device)
        ok = torch.ones(rows.size(0), dtype=torch.bool, device=rows.device)
        for j in range(rows.size(1)):
            nxt = self.trie.lookup((node << _SHIFT) | rows[:, j], grow)
            ok &= nxt >= 0
            node = torch.where(ok, nxt + 1, torch.zeros_like(nxt))
        col = self.columns.lookup(node, grow, distinct)
        return torch.where(ok, col, torch.full_like(col, -1))

    def lookup_pairs(self, first: Tensor, second: Tensor, grow: bool, distinct: bool = False) -> Tensor:
        """:meth:`lookup` of the rows :obj:`[first, second]`, given as two columns."""
        # _PAIR - (first << 31 | second), in two operations (second < 2^31)
        key = torch.sub(torch.rsub(second, _PAIR), first, alpha=1 << _SHIFT)
        return self.columns.lookup(key, grow, distinct)

    def row(self, col: int) -> List[int]:
        """The row of column :obj:`col` (for feature names)."""
        node = int(self.columns.keys[col])
        if node < 0:
            if node >= -(1 << _SHIFT):
                return [-1 - node]
            pair = _PAIR - node
            return [pair >> _SHIFT, pair & ((1 << _SHIFT) - 1)]
        out = []
        while node > 0:
            key = int(self.trie.keys[node - 1])
            out.append(key & ((1 << _SHIFT) - 1))
            node = key >> _SHIFT
        return out[::-1]

    def rows(self) -> Tuple[Tensor, Tensor]:
        """Every column's row at once: :obj:`[len(self), w]` values padded with :obj:`-1`, and lengths."""
        keys = self.columns.keys
        mask = (1 << _SHIFT) - 1
        single = (keys < 0) & (keys >= -(1 << _SHIFT))
        pair = keys < -(1 << _SHIFT)
        packed = _PAIR - keys
        # every row's values from its last to its first
        back = [torch.where(single, -1 - keys, torch.where(pair, packed & mask, -1)),
                torch.where(pair, packed >> _SHIFT, -1)]
        node = keys.clamp(min=0)  # longer rows: trie paths, walked up from their last node
        depth = 0
        while bool((node > 0).any()):
            key = self.trie.keys.index_select(0, (node - 1).clamp(min=0))
            value = torch.where(node > 0, key & mask, -1)
            if depth < len(back):
                back[depth] = torch.where(keys > 0, value, back[depth])
            else:
                back.append(value)
            node = torch.where(node > 0, key >> _SHIFT, 0)
            depth += 1
        values = torch.stack(back, dim=1)
        length = (values >= 0).sum(1)
        j = torch.arange(values.size(1)).unsqueeze(0)  # position j holds value length - 1 - j
        forward = values.gather(1, (length.unsqueeze(1) - 1 - j).clamp(min=0))
        return torch.where(j < length.unsqueeze(1), forward, -1), length

    def state(self) -> dict:
        """The vocabulary's tensors."""
        return {"trie": self.trie.state(), "columns": self.columns.state()}

    @classmethod
    def from_state(cls, state: dict) -> "TupleVocab":
        """Rebuild from :meth:`state`."""
        v = cls()
        v.trie = KeyVocab.from_keys(state["trie"])
        v.columns = KeyVocab.from_keys(state["columns"])
        return v


__all__ = ["KeyVocab", "TupleVocab"]
