r"""Dense ids for arbitrary ``int64`` keys, with vectorized lookups.

A stream names its nodes and graphs by whatever ids its source uses (64-bit
integers, strings). :class:`IdMap` numbers distinct keys ``0, 1, 2, ...`` in
order of first appearance with an open-addressing hash table (linear
probing, load at most 1/2) held in NumPy arrays: a lookup of :math:`n` keys is
a few vectorized probe rounds, expected :math:`O(n)` work whatever the number
of keys stored, where a sorted table would cost :math:`O(n \log N)` with
cache misses on every step.

:func:`first_appearance` gives the same numbering to one tensor known in full
(a sort, which is faster when nothing is stored yet).
"""
from typing import Optional, Tuple, Union

import numpy as np
import torch
from torch import Tensor

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
#: Decimal id tokens of at most this many digits (so below 2^60) are integers.
MAX_ID_DIGITS = 18


def canonical_int(token: Union[str, bytes]) -> Optional[int]:
    """The integer a canonical decimal id token spells (:obj:`"12"`; not :obj:`"012"`, :obj:`"+1"`), or None.

    Tokens of more than :data:`MAX_ID_DIGITS` digits are not integers either:
    they stay tokens. A :obj:`bytes` token follows the same rule (ASCII
    digits only).
    """
    zero = "0" if isinstance(token, str) else b"0"
    canonical = token == zero or token[:1] != zero
    if token.isascii() and token.isdigit() and canonical and len(token) <= MAX_ID_DIGITS:
        return int(token)
    return None


def _mix(keys: np.ndarray) -> np.ndarray:
    """A scramble of ``int64`` keys whose high bits depend on every key bit.

    Fold the high half onto the low half, then multiply by an odd constant
    (Fibonacci hashing): the table index is the product's top bits.
    """
    z = keys.view(np.uint64)
    return (z ^ (z >> np.uint64(32))) * _GOLDEN


class IdMap:
    """Dense ids ``0, 1, ...`` for ``int64`` keys, in order of first appearance.

    Args:
        capacity (int, optional): Initial number of slots (rounded up to a
            power of two; the table doubles when half full).
    """

    def __init__(self, capacity: int = 1024) -> None:
        self._count = 0
        self._hashed = 0  # keys 0.._hashed - 1 are in the hash table (see extend)
        self._by_id = np.zeros(16, dtype=np.int64)
        self._alloc(max(16, int(capacity)))

    def _alloc(self, capacity: int) -> None:
        bits = max(4, int(capacity - 1).bit_length())
        self._bits = bits
        self._mask = (1 << bits) - 1
        # one row per slot, (key, id), id -1 when free: one cache line a probe
        self._table = np.full((1 << bits, 2), -1, dtype=np.int64)

    def __len__(self) -> int:
        return self._count

    @property
    def keys(self) -> np.ndarray:
        """The keys, indexed by id (a view; do not modify)."""
        return self._by_id[: self._count]

    def _home(self, keys: np.ndarray) -> np.ndarray:
        return (_mix(keys) >> np.uint64(64 - self._bits)).astype(np.int64)

    def _find(self, keys: np.ndarray) -> np.ndarray:
        """Ids of :obj:`keys`, :obj:`-1` for keys not stored."""
        slot = self._home(keys)
        row = np.take(self._table, slot, axis=0)  # one gather of (key, id) pairs
        val = row[:, 1]
        hit = row[:, 0] == keys
        ids = np.where(hit, val, -1)
        todo = np.flatnonzero(~hit & (val >= 0))  # a collision: probe on
        slot = slot[todo]
        while todo.size:
            slot = (slot + 1) & self._mask
            row = np.take(self._table, slot, axis=0)
            val = row[:, 1]
            hit = row[:, 0] == keys[todo]
            ids[todo[hit]] = val[hit]
            more = ~hit & (val >= 0)
            todo, slot = todo[more], slot[more]
        return ids

    def _insert(self, keys: np.ndarray, ids: np.ndarray) -> None:
        """Store distinct new :obj:`keys` with distinct :obj:`ids`."""
        slot = self._home(keys)
        while slot.size:
            free = self._table[slot, 1] < 0
            cand = np.flatnonzero(free)
            # every candidate writes its id into its free slot; one per slot wins
            self._table[slot[cand], 1] = ids[cand]
            win = cand[self._table[slot[cand], 1] == ids[cand]]
            self._table[slot[win], 0] = keys[win]
            lose = np.ones(slot.size, dtype=bool)
            lose[win] = False
            keys, ids, slot = keys[lose], ids[lose], (slot[lose] + 1) & self._mask

    def _reserve_ids(self, count: int) -> None:
        if count > self._by_id.size:
            grown = np.zeros(max(count, 2 * self._by_id.size), dtype=np.int64)
            grown[: self._count] = self._by_id[: self._count]
            self._by_id = grown

    def _reserve(self, count: int) -> None:
        """Room for :obj:`count` keys, all of them hashed (the pending ones of :meth:`extend` too)."""
        self._reserve_ids(count)
        if 2 * count > self._table.shape[0]:
            self._alloc(max(4 * count, 2 * self._table.shape[0]))
            self._hashed = 0
        if self._hashed < self._count:
            self._insert(self._by_id[self._hashed : self._count], np.arange(self._hashed, self._count))
        self._hashed = self._count

    def lookup(self, keys: np.ndarray, insert: bool = True) -> Tuple[np.ndarray, np.ndarray]:
        """Ids of :obj:`keys`; new keys get the next ids (or :obj:`-1`).

        Args:
            keys (numpy.ndarray): ``int64`` keys :obj:`[n]`.
            insert (bool, optional): Give unseen keys new ids, numbered in
                order of first appearance in :obj:`keys`. (default: :obj:`True`)

        Returns:
            (numpy.ndarray, numpy.ndarray): The ids :obj:`[n]`, and for each
            new id (in id order) the position of its first appearance in
            :obj:`keys`.
        """
        keys = np.ascontiguousarray(keys, dtype=np.int64)
        if self._hashed < self._count:
            self._reserve(self._count)
        ids = self._find(keys)
        miss = np.flatnonzero(ids < 0)
        if not insert or miss.size == 0:
            return ids, np.zeros(0, dtype=np.int64)
        mk = keys[miss]
        order = np.argsort(mk)
        sk = mk[order]
        start = np.flatnonzero(np.concatenate(([True], sk[1:] != sk[:-1])))
        run = np.cumsum(np.concatenate(([False], sk[1:] != sk[:-1])))
        first = np.minimum.reduceat(order, start)  # first appearance within the misses
        rank = np.empty(start.size, dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(start.size)
        new_ids = self._count + rank
        self._reserve(self._count + start.size)
        self._insert(sk[start], new_ids)
        self._by_id[new_ids] = sk[start]
        self._count += start.size
        self._hashed = self._count
        ids[miss[order]] = new_ids[run]
        return ids, miss[np.sort(first)]

    def extend(self, keys: np.ndarray) -> np.ndarray:
        """Number new keys (distinct and not stored: the caller knows) in their order; returns their ids.

        They are hashed lazily, at the next :meth:`lookup` (a caller with its
        own index of the keys, such as a direct-address cache, may never need
        the hash table).
        """
        keys = np.ascontiguousarray(keys, dtype=np.int64)
        ids = np.arange(self._count, self._count + keys.size, dtype=np.int64)
        self._reserve_ids(self._count + keys.size)
        self._by_id[ids] = keys
        self._count += keys.size
        return ids

    @classmethod
    def from_keys(cls, keys: np.ndarray) -> "IdMap":
        """Rebuild from :attr:`keys` (distinct keys in id order)."""
        keys = np.ascontiguousarray(keys, dtype=np.int64)
        m = cls(capacity=4 * max(keys.size, 4))
        m._reserve(keys.size)
        m._insert(keys, np.arange(keys.size))
        m._by_id[: keys.size] = keys
        m._count = m._hashed = keys.size
        return m


def first_appearance(keys: Tensor) -> Tuple[Tensor, Tensor]:
    """Number the distinct entries of :obj:`keys` ``0, 1, ...`` in order of first appearance.

    The one-shot form of :class:`IdMap` (the same numbering, for one tensor
    known in full): a sort (:func:`torch.unique`), on the device of
    :obj:`keys`, which beats the hash table when nothing is stored yet.

    Args:
        keys (torch.Tensor): Integer keys :obj:`[n]`.

    Returns:
        (torch.Tensor, torch.Tensor): The distinct keys in order of first
        appearance, and the number of every entry.
    """
    uniq, inv = torch.unique(keys, return_inverse=True)
    first = torch.full((uniq.numel(),), keys.numel(), dtype=torch.long, device=keys.device)
    first.scatter_reduce_(0, inv, torch.arange(keys.numel(), device=keys.device), reduce="amin")
    order = torch.argsort(first)
    rank = torch.empty_like(order)
    rank[order] = torch.arange(order.numel(), device=keys.device)
    return uniq[order], rank[inv]


__all__ = ["IdMap", "first_appearance", "canonical_int", "MAX_ID_DIGITS"]
