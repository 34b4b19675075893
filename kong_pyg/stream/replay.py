r"""Checking that every pass reads the same stream: an edge count and a running checksum.

A pass :math:`i \geq 2` must replay the stream of pass 1, edge for edge: a
shorter, longer or different second pass would give wrong sketches without
any error (the nodes it meets are known, the arithmetic goes through). So a
stream keeps, per pass, the number of edges read and a checksum

.. math::
    H = \sum_{e} x_e\, R^{\,\mathrm{pos}(e)} \bmod 2^{64},
    \qquad x_e = \sum_c K_c\, v_c(e) \bmod 2^{64},

over the edges' contents :math:`v_c(e)` (source, destination and graph ids,
the three types; ids by content: an integer is itself, a string a hash of
its text, so every process and every run agrees), with odd constants
:math:`R, K_c`. :math:`H` does not depend on how the stream is cut into
chunks, changes when any value changes (every coefficient is odd, hence
invertible modulo :math:`2^{64}`) and, almost surely, when edges are
reordered; and two consecutive shards combine as
:math:`H_{AB} = H_A + R^{|A|} H_B` (:func:`combine`), so merged time shards
have the checksum of the whole. It guards against accidents (another file,
a truncated pass), not against an adversary.
"""
from typing import Optional, Sequence

import numpy as np

_MASK = (1 << 64) - 1
#: The position base (odd) and the column weights (odd).
R = 0x9E3779B97F4A7C15
K = (0xBF58476D1CE4E5B9, 0x94D049BB133111EB, 0xD6E8FEB86659FD93, 0xCA5A826395121157, 0xA0761D6478BD642F,
     0xE7037ED1A0B428DB)
_POW = np.ones(1, dtype=np.uint64)  # R^j for j < _POW.size, grown on demand


def _powers(m: int) -> np.ndarray:
    global _POW
    if _POW.size < m:
        size = max(m, 2 * _POW.size)
        pw = np.full(size, R, dtype=np.uint64)
        pw[0] = 1
        _POW = np.multiply.accumulate(pw)  # wraps modulo 2^64
    return _POW[:m]


def to_signed(h: int) -> int:
    """A checksum in :math:`[0, 2^{64})` as a signed 64-bit integer (how states store it)."""
    return h - (1 << 64) if h >= 1 << 63 else h


def to_unsigned(h: int) -> int:
    """The inverse of :func:`to_signed`."""
    return h & _MASK


def chunk_checksum(columns: Sequence[Optional[np.ndarray]], offset: int) -> int:
    r"""The checksum term of :math:`m` consecutive edges starting at position :obj:`offset`.

    Args:
        columns (sequence): Up to six ``int64`` arrays :obj:`[m]` of edge
            contents (None: a column of zeros).
        offset (int): The position of the first edge in its pass.

    Returns:
        int: :math:`\sum_j x_j R^{offset + j} \bmod 2^{64}`, in :math:`[0, 2^{64})`.
    """
    total, m = 0, None
    for weight, col in zip(K, columns):
        if col is None:
            continue
        m = col.size
        total += weight * int((col.view(np.uint64) * _powers(m)).sum(dtype=np.uint64))
    if m is None:
        return 0
    return (total % (1 << 64)) * pow(R, offset, 1 << 64) & _MASK


def combine(first: int, first_edges: int, second: int) -> int:
    """The checksum of edges :obj:`first` followed by :obj:`second` (each computed from position 0)."""
    return (first + pow(R, first_edges, 1 << 64) * second) & _MASK


__all__ = ["chunk_checksum", "combine", "to_signed", "to_unsigned"]
