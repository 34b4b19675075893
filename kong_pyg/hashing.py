r"""Device-independent integer hashing.

Everything here is plain ``int64`` arithmetic modulo the Mersenne prime
:math:`P = 2^{31} - 1`, with every product below :math:`2^{62}` and every sum
below :math:`2^{63}` (:func:`linear_hash_rows` adds two products before it
reduces: at most :math:`2^{63} - 2^{33}`), so the same inputs give
bit-identical outputs on any device and no operation relies on integer
overflow.

Symbols are non-negative ``int64`` *codes* below :math:`2^{60}`: node labels
are ``2 * label``, edge labels ``2 * label + 1`` (so a node and an edge label
never share a code), and :data:`BREAK` (``-1``) marks a cut in a compressed
string (see :mod:`kong_pyg.kgrams`).
"""
import hashlib
from typing import Optional, Tuple

import torch
from torch import Tensor

#: The Mersenne prime :math:`2^{31} - 1` all hashes reduce modulo.
P = 2**31 - 1
#: Exclusive upper bound on a label value (so that codes stay below 2^60).
MAX_LABEL = 2**58
#: Marks a cut in a compressed string; never a symbol.
BREAK = -1
_MASK30 = (1 << 30) - 1
_MASK27 = (1 << 27) - 1


def node_code(label: Tensor) -> Tensor:
    """The symbol code of node labels."""
    return label * 2


def edge_code(label: Tensor) -> Tensor:
    """The symbol code of edge labels."""
    return label * 2 + 1


#: Decimal type tokens below this stand for themselves (:func:`type_code`): every integer type (they are
#: below :data:`MAX_LABEL`), so an integer type written out in decimal reads back as itself, and the digests.
TYPE_LITERALS = MAX_LABEL


def type_code(token: str) -> int:
    """A stable integer code of a type token (a label below :data:`MAX_LABEL`).

    Non-negative integers below :data:`TYPE_LITERALS` (:math:`2^{58}`) written
    canonically (no leading zero: :obj:`"5"`, not :obj:`"05"`) stand for
    themselves; any other token maps to a 56-bit BLAKE2 digest with bit 56 set,
    the same in every file, run and process (so different tokens get different
    codes, up to collisions of the 56-bit digests). A digest is below
    :math:`2^{57}`, so a code written out in decimal reads back as itself (a
    file written from codes gives the same features).
    """
    if token.isascii() and token.isdigit() and (len(token) == 1 or token[0] != "0"):
        value = int(token)
        if value < TYPE_LITERALS:
            return value
    try:  # a file's undecodable bytes come back as surrogate escapes: the same bytes, the same code
        raw = token.encode("utf-8", errors="surrogateescape")
    except UnicodeEncodeError:  # other lone surrogates: a code too, not an error
        raw = token.encode("utf-8", errors="surrogatepass")
    return int.from_bytes(hashlib.blake2b(raw, digest_size=7).digest(), "little") | (1 << 56)


def split30(codes: Tensor) -> tuple:
    """Split codes below :math:`2^{60}` into two 30-bit halves."""
    return codes >> 30, codes & _MASK30


def random_coefficients(shape, generator: torch.Generator) -> Tensor:
    """Uniform coefficients in :math:`[1, P)` drawn on the CPU."""
    return torch.randint(1, P, shape, generator=generator, dtype=torch.long, device="cpu")


def hash_offset(coef: Tensor, n: int) -> Tensor:
    r"""The constant part :math:`(c_{f,0} + n\, c_{f,1}) \bmod P` of the hashes of length-:obj:`n` tuples.

    Args:
        coef (torch.Tensor): Coefficients of shape :obj:`[F, 2 + 2 n_max]`.
        n (int): The tuple length.

    Returns:
        torch.Tensor: :obj:`[F]` values in :math:`[0, P)`.
    """
    return (coef[:, 0] + n * coef[:, 1]) % P


def hash_terms(codes: Tensor, coef: Tensor, position: int) -> Tensor:
    r"""Hash terms :math:`(a_{f,j} \mathrm{hi}(t) + b_{f,j} \mathrm{lo}(t)) \bmod P` of symbols at a position.

    :func:`linear_hash` is :func:`hash_offset` plus one such term per
    position, modulo :math:`P`; tabulating the terms of every symbol once
    (:class:`~kong_pyg.sketch.SymbolHashTable`) gives the same hashes.

    Args:
        codes (torch.Tensor): Symbol codes :obj:`[M]` below :math:`2^{60}`.
        coef (torch.Tensor): Coefficients of shape :obj:`[F, 2 + 2 n_max]`.
        position (int): The 0-based position :math:`j - 1` of the symbols in
            their tuples.

    Returns:
        torch.Tensor: :obj:`[M, F]` values in :math:`[0, P)`.
    """
    return (_raw_term_rows(codes, coef, position) % P).t()


def _raw_term_rows(codes: Tensor, coef: Tensor, position: int) -> Tensor:
    """:func:`hash_terms` before the reduction, as :obj:`[F, M]`: at most :math:`2 (2^{30} - 1)(P - 1)`."""
    hi, lo = split30(codes.reshape(1, -1))
    return coef[:, 2 + 2 * position].unsqueeze(1) * hi + coef[:, 3 + 2 * position].unsqueeze(1) * lo


def bucket_of(h: Tensor, b: int) -> Tensor:
    """:obj:`h % b` of non-negative :obj:`h`; a mask where :obj:`b` is a power of two (no division)."""
    return h & (b - 1) if b & (b - 1) == 0 else h % b


_MASK31 = (1 << 31) - 1
#: The odd multipliers of :func:`scramble` (below 2^31, so products stay below 2^62)
_SCRAMBLE = (0x7FEB352D, 0x046CA68B)


def scramble(h: Tensor) -> Tensor:
    r"""A fixed bijection of :math:`[0, 2^{31})` that spreads every bit over the low ones.

    Sketch buckets and signs are the low bits of :func:`linear_hash` values, and
    for one draw of coefficients those are far from random: tuples that differ by
    :math:`\delta` in one symbol differ by :math:`a \delta \bmod P` in their
    hashes, so where :math:`a` has :math:`z` trailing zero bits (one draw in
    :math:`2^z`) small labels share buckets modulo :math:`2^{z+1}` (codes are
    even), and where :math:`a \delta < P` their sign bits agree. Scrambling the
    hash first (xor-shift-multiply rounds, each a bijection) leaves its
    distribution uniform and pairwise independent over the draws, and breaks the
    per-draw arithmetic structure. Plain ``int64`` arithmetic (products below
    :math:`2^{62}`): the same bits on every device.
    """
    h = h ^ (h >> 16)  # (a new tensor: the rest works in place)
    h.mul_(_SCRAMBLE[0]).bitwise_and_(_MASK31)
    h.bitwise_xor_(h >> 15)
    h.mul_(_SCRAMBLE[1]).bitwise_and_(_MASK31)
    return h.bitwise_xor_(h >> 16)


def linear_hash(grams: Tensor, coef: Tensor) -> Tensor:
    r"""Pairwise-independent hashes of symbol tuples of one length.

    For tuple :math:`t = (t_1, \ldots, t_n)` and hash function :math:`f`,

    .. math::
        H_f(t) = \Big(c_{f,0} + n\, c_{f,1} + \sum_{j=1}^{n}
        a_{f,j}\, \mathrm{hi}(t_j) + b_{f,j}\, \mathrm{lo}(t_j)\Big) \bmod P,

    a random affine function of the tuple's 30-bit digits, hence uniform and
    pairwise independent over distinct tuples (of any lengths up to the
    number of coefficient pairs). It is :func:`hash_offset` plus
    :func:`hash_terms` of every position.

    Args:
        grams (torch.Tensor): Codes of shape :obj:`[M, n]`, :math:`n \geq 0`.
        coef (torch.Tensor): Coefficients of shape :obj:`[F, 2 + 2 n_max]`.

    Returns:
        torch.Tensor: Hashes in :math:`[0, P)` of shape :obj:`[M, F]`.
    """
    return linear_hash_rows(grams, coef).t().contiguous()


def linear_hash_rows(grams: Tensor, coef: Tensor) -> Tensor:
    """:func:`linear_hash` as :obj:`[F, M]`, one row per hash function.

    Computed in this layout: a product broadcast over :obj:`[M, 1] x [F]`
    with :math:`F` of 2 took about twice as long as over :obj:`[F, 1] x [M]`.
    For :math:`n = 0` the result is an expanded (stride-0) view: do not write
    into it.
    """
    n, m = grams.size(1), grams.size(0)
    if 2 + 2 * n > coef.size(1):
        raise ValueError(f"tuples of length {n} exceed the hash family")
    acc = hash_offset(coef, n).unsqueeze(1)
    for j in range(n):
        acc = acc + _raw_term_rows(grams[:, j], coef, j)
        if j % 2 or j == n - 1:
            # one reduction per two positions: two raw terms (each below 2^62 - 2^33 + 8) and acc < P
            # stay below 2^63
            acc = acc % P
    return acc.expand(-1, m) if n == 0 else acc


def mod_pow(base: Tensor, exp: Tensor) -> Tensor:
    r"""Elementwise :math:`base^{exp} \bmod P` by binary exponentiation."""
    result = torch.ones_like(exp)
    base = base % P
    exp = exp.clone()
    while bool((exp > 0).any()):
        odd = (exp & 1).bool()
        result = torch.where(odd, result * base % P, result)
        base = base * base % P
        exp = exp >> 1
    return result


# Fixed (seed-independent) constants: relabelling and multi-column labels are
# content-addressed, so every call, batch, seed and device agrees on them.
_FIXED = random_coefficients((2, 3), torch.Generator().manual_seed(0x4B4F4E47))


def _reduce(codes: Tensor, row: int) -> Tensor:
    """Map codes below 2^60 into [1, P) (one of two fixed reductions)."""
    c = _FIXED[row].to(codes.device)
    hi, lo = split30(codes)
    return (hi * c[0] % P + lo * c[1] % P) % (P - 1) + 1


def sequence_powers(position: Tensor, length: Tensor) -> Tuple[Tuple[Tensor, Tensor], ...]:
    r""":math:`z^{position}` and :math:`z^{length + 1}` modulo :math:`P`, for both fingerprint hashes.

    The powers :func:`sequence_fingerprint` uses. They depend on the sequences' layout only:
    several fingerprints of one layout (WL rounds over one set of neighborhoods) compute them once.
    """
    out = []
    for r in range(2):
        z = _FIXED[r, 2].to(position.device)
        out.append((mod_pow(z.expand_as(position), position), mod_pow(z.expand_as(length), length + 1)))
    return tuple(out)


def sequence_fingerprint(
    head: Tensor,
    items: Tensor,
    owner: Tensor,
    position: Tensor,
    length: Tensor,
    powers: Optional[Tuple[Tuple[Tensor, Tensor], ...]] = None,
) -> Tensor:
    r"""58-bit fingerprints of the sequences :math:`(head_v, items...)`.

    Sequence :math:`v` is :math:`head_v` followed by the entries of
    :obj:`items` whose :obj:`owner` is :math:`v`, entry placed at
    :obj:`position` (:math:`1 \ldots length_v`). Each of two fixed
    polynomial hashes :math:`\sum_j r(s_j) z^j \bmod P` has collision
    probability at most :math:`(length + 1) / P` for two different
    sequences; the fingerprint keeps 31 + 27 bits of the pair.
    :obj:`powers`: :func:`sequence_powers` of :obj:`position` and
    :obj:`length`, where the caller has them.

    Returns:
        torch.Tensor: Fingerprints in :math:`[0, 2^{58})`, one per head.
    """
    if powers is None:
        powers = sequence_powers(position, length)
    parts = []
    for r in range(2):
        at, last = powers[r]
        term = _reduce(items, r) * at % P
        acc = torch.zeros_like(head).index_add_(0, owner, term) % P
        acc = (acc + _reduce(head, r)) % P
        # the length enters as the leading coefficient of z^(length + 1):
        acc = (acc + last) % P
        parts.append(acc)
    return (parts[0] << 27) | (parts[1] & _MASK27)


def row_fingerprint(rows: Tensor) -> Tensor:
    """58-bit fingerprints of the rows of a non-negative integer matrix.

    :func:`sequence_fingerprint` of each row (head: the number of columns :math:`c`); every row
    has the same positions, so the powers of :math:`z` are computed once, :math:`c + 1` of them.
    """
    n, c = rows.shape
    parts = []
    for r in range(2):
        z = _FIXED[r, 2].to(rows.device)
        powers = mod_pow(z.expand(c + 1), torch.arange(1, c + 2, device=rows.device))
        # (c terms below P < 2^31 each: their sum stays below 2^63 for any c below 2^32)
        acc = (_reduce(rows, r) * powers[:c] % P).sum(1) % P
        acc = (acc + _reduce(torch.full_like(acc, c), r) + powers[c]) % P
        parts.append(acc)
    return (parts[0] << 27) | (parts[1] & _MASK27)


def keyed_hash(keys: Tensor, seed: int) -> Tensor:
    r"""A seeded random 62-bit value for every ``int64`` key (a pure function of key and seed).

    Two independent random affine functions modulo :math:`P` of the key's
    30-, 30- and 4-bit digits, side by side: equal keys get equal values in
    every call and on every device; two different keys collide with
    probability about :math:`2^{-62}`.
    """
    gen = torch.Generator().manual_seed(int(seed) ^ 0x5EED)
    coef = random_coefficients((2, 4), gen).to(keys.device)
    digits = (keys & _MASK30, (keys >> 30) & _MASK30, (keys >> 60) & 15)
    out = []
    for r in range(2):
        acc = coef[r, 0].expand_as(keys)
        for j, d in enumerate(digits):
            acc = (acc + d * coef[r, j + 1]) % P
        out.append(acc)
    return (out[0] << 31) | out[1]
