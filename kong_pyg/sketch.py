r"""Count-Sketch and Tensor-Sketch of n-gram counts.

A Count-Sketch of size :math:`b` maps count vector :math:`c` to
:math:`CS(c)_j = \sum_{t: \mathrm{hash}(t) = j} \mathrm{sign}(t)\, c_t`; it
is linear and :math:`E\langle CS(x), CS(y)\rangle = \langle x, y\rangle`.
A Tensor-Sketch of degree :math:`p` combines :math:`p` independent
Count-Sketches, :math:`TS(c) = \mathrm{IFFT}(\prod_j \mathrm{FFT}(CS_j(c)))`,
with :math:`E\langle TS(x), TS(y)\rangle = \langle x, y\rangle^p`.

**BFS levels** are blocks of the feature vector. Sketch :math:`f` hashes
n-gram :math:`t` of level :math:`\ell` to bucket
:math:`(\mathrm{hash}_f(t) + g_f(\ell)) \bmod b` with sign
:math:`\mathrm{sign}_f(t)\,\sigma_f(\ell)`: signs stay pairwise independent
over (gram, level) pairs, so the sketch is unbiased, and a level's sketch is
a cyclic shift of a level-free one, which lets level-free sketches propagate
and be shifted into their block at the end.
"""
import numbers
from typing import Any, Callable, Dict, Optional, Tuple, cast

import numpy as np
import torch
from torch import Tensor

from .hashing import P, bucket_of, hash_offset, hash_terms, linear_hash_rows, random_coefficients, scramble
from .idmap import IdMap
from .kgrams import flat_nonzero
from .warn import warn

#: The hash scheme of the sketches: 2 scrambles the linear hashes (:func:`~kong_pyg.hashing.scramble`) and
#: draws distinct level shifts (:func:`distinct_shifts`); 1, before, did neither (one draw of coefficients
#: in about a hundred put small labels into few buckets). Objects made before keep scheme 1 (see
#: :class:`SketchHashes`), so their features do not change under them.
HASH_VERSION = 2


def check_scheme(value: Any, name: str) -> int:
    """A hash scheme (1 or :data:`HASH_VERSION`, an integer), the argument named :obj:`name` in errors."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, 1 or {HASH_VERSION} (got {type(value).__name__} "
                        f"{value!r})")
    if value not in (1, HASH_VERSION):
        raise ValueError(f"{name} must be 1 or {HASH_VERSION} (got {value!r})")
    return int(value)


class SketchHashes(torch.nn.Module):
    r"""The random tables of :math:`p` Count-Sketches, held as buffers.

    Args:
        dim (int): The sketch size :math:`b`.
        degree (int): The number :math:`p` of independent sketches.
        max_length (int): The longest n-gram hashed.
        levels (int): The number of level blocks (:math:`h + 1`).
        seed (int): The seed; the same seed gives the same tables on any
            device.
        version (int, optional): The hash scheme (:data:`HASH_VERSION`; 1 for
            state made by earlier versions). Unpickled tables that predate the
            option are scheme 1. (default: :data:`HASH_VERSION`)
    """

    coef: Tensor
    shift: Tensor
    flip: Tensor
    scheme: Tensor

    def __init__(self, dim: int, degree: int, max_length: int, levels: int, seed: int,
                 version: int = HASH_VERSION):
        super().__init__()
        self.dim, self.degree, self.seed = dim, degree, seed
        self._scheme = check_scheme(version, "'version'")
        self.register_buffer("coef", torch.zeros(2 * degree, 2 + 2 * max_length, dtype=torch.long))
        self.register_buffer("shift", torch.zeros(degree, levels, dtype=torch.long))
        self.register_buffer("flip", torch.ones(degree, levels, dtype=torch.float64))
        self.register_buffer("scheme", torch.tensor(version))  # (:attr:`version`, saved with the tables)
        self.reset_parameters()

    def reset_parameters(self):
        """Redraw the tables from the seed (on the CPU, whatever the default device; then copied)."""
        gen = torch.Generator().manual_seed(int(self.seed))
        dev = self.coef.device
        self.scheme.fill_(self._scheme)  # (after to_empty() it holds whatever the memory held)
        self.coef.copy_(random_coefficients(tuple(self.coef.shape), gen).to(dev))
        if self.version >= 2:
            self.shift.copy_(distinct_shifts(self.dim, self.shift.size(0), self.shift.size(1), gen).to(dev))
        else:
            self.shift.copy_(torch.randint(0, self.dim, tuple(self.shift.shape), generator=gen,
                                           device="cpu").to(dev))
        bits = torch.randint(0, 2, tuple(self.flip.shape), generator=gen, device="cpu")
        self.flip.copy_((1 - 2 * bits).to(torch.float64).to(dev))

    def hash(self, grams: Tensor) -> tuple:
        """Buckets :obj:`[M, p]` (long) and signs :obj:`[M, p]` (float64)."""
        h = linear_hash_rows(grams, self.coef)  # [2p, M]: fast elementwise operations
        h = scramble(h) if self.version >= 2 else h
        p = self.degree
        bucket = bucket_of(h[:p], self.dim)
        sign = 1.0 - 2.0 * (h[p:] & 1).to(torch.float64)
        return bucket.t().contiguous(), sign.t().contiguous()  # (no copy for p = 1)

    @property
    def version(self) -> int:
        """The hash scheme (see :data:`HASH_VERSION`).

        Setting it redraws the tables from the seed under that scheme (nothing is learned: the tables
        are a function of the seed, the sizes and the scheme).
        """
        return self._scheme

    @version.setter
    def version(self, value: int) -> None:
        self._scheme = check_scheme(value, "'version'")
        self.reset_parameters()  # (the scheme buffer too)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        if "_scheme" not in state:  # pickled before the option: the scheme it was made with
            recorded = self._buffers.get("scheme")  # (kept as the buffer by an early version 2)
            self._scheme = int(recorded) if isinstance(recorded, Tensor) else 1
            self.__dict__.pop("_version", None)  # (that version's name for it: Module's own attribute)
            self.register_buffer("scheme", torch.tensor(self._scheme, device=self.coef.device))

    def _load_from_state_dict(self, state_dict: Any, prefix: str, *args: Any) -> None:
        # a state dict saved before the scheme was recorded holds scheme-1 tables: load them as such (the
        # features they were saved with), whatever this object's scheme
        self.__dict__["scheme_before_load"] = self._scheme  # (a refused load puts it back: KongSketch)
        if prefix + "coef" in state_dict and prefix + "scheme" not in state_dict:
            state_dict[prefix + "scheme"] = torch.tensor(1)
            if self._scheme != 1:
                warn("the state dict has no 'scheme': its hash tables were saved before hash scheme "
                     f"{HASH_VERSION}, and they load as scheme 1, to give the features they were "
                     "saved with (a new layer uses the current scheme)")
        scheme = state_dict.get(prefix + "scheme")
        saved = int(scheme) if isinstance(scheme, Tensor) and scheme.numel() == 1 and not scheme.is_meta \
            else None
        if saved is not None:
            check_scheme(saved, "the state dict's hash scheme")
        super()._load_from_state_dict(state_dict, prefix, *args)
        if not self.scheme.is_meta:
            self._scheme = int(self.scheme)
        elif saved is not None:  # (a meta layer copies nothing, PyTorch warns; the scheme is kept)
            self._scheme = saved

    def const_token(self) -> tuple:
        """Bucket and sign of the polynomial kernel's constant coordinate."""
        empty = self.coef.new_zeros(1, 0)
        bucket, sign = self.hash(empty)
        return bucket[0], sign[0]

    def level(self, f: int, level: int) -> tuple:
        """Shift and sign of level :obj:`level` in sketch :obj:`f`."""
        return int(self.shift[f, level]), self.flip[f, level]


def distinct_shifts(dim: int, degree: int, levels: int, generator: torch.Generator) -> Tensor:
    r"""Level shifts :obj:`[degree, levels]` in :math:`[0, b)`, distinct within each sketch.

    Two levels with one shift (and one flip) would put a gram's count at both
    levels into one bucket with one sign in every graph: a whole level's worth of
    collisions in one draw (one draw in :math:`b / \binom{h+1}{2}` with
    independent shifts: 5 % of the seeds at :math:`b = 64`, :math:`h = 2`).
    With distinct shifts the same gram at two levels never collides, and grams
    that differ still do with probability :math:`1/b` (their hashes are
    independent): the sketch stays unbiased. Levels beyond :math:`b` start
    another round of distinct values.
    """
    rows = []
    for _ in range(degree):
        row: list = []
        taken: set = set()
        while len(row) < levels:
            if len(taken) == dim:
                taken.clear()
            value = int(torch.randint(0, dim, (1,), generator=generator, device="cpu"))
            if value not in taken:
                taken.add(value)
                row.append(value)
        rows.append(row)
    return torch.tensor(rows, dtype=torch.long, device="cpu").view(degree, levels)


def place(out: Tensor, rows: Tensor, bucket: Tensor, value: Tensor) -> Tensor:
    """Add :obj:`value` at :obj:`(rows, bucket)` of the 2-D :obj:`out`."""
    b = out.size(1)
    out.view(-1).scatter_add_(0, rows * b + bucket, value)
    return out


def shift_level(sketch: Tensor, shift: int, sign: Tensor) -> Tensor:
    """Move a level-free sketch :obj:`[N, b]` into its level block."""
    return torch.roll(sketch, shifts=shift, dims=1) * sign


def tensor_sketch(sketches: Tensor) -> Tensor:
    r"""Combine :obj:`[p, N, b]` Count-Sketches into :obj:`[N, b]`."""
    if sketches.size(0) == 1:
        return sketches[0]
    b = sketches.size(-1)
    spec = torch.fft.rfft(sketches, dim=-1)
    return torch.fft.irfft(spec.prod(dim=0), n=b, dim=-1)




class SymbolHashTable:
    r"""Tabulated Count-Sketch hashes of n-grams over a growing symbol vocabulary.

    Symbols are numbered by dense ids ``0, 1, ...`` in order of first
    appearance (:meth:`ids`); an n-gram is a row of ids. The hash of
    :meth:`SketchHashes.hash` is affine in the symbols' digits modulo
    :math:`P` (:func:`~kong_pyg.hashing.linear_hash`), so it is a sum of
    per-(position, symbol) terms (:func:`~kong_pyg.hashing.hash_terms`),
    tabulated once per symbol: hashing a gram is :math:`n` lookups. While the
    vocabulary is small (:math:`V^n \leq` :attr:`max_table`) the buckets and
    signs of every n-gram *code* :math:`\sum_t s_t V^{n - 1 - t}` are
    tabulated too, and grams are added into sketch rows by code
    (:meth:`scatter_codes`), counted first when there are few rows.

    The numbers are exactly those of :meth:`SketchHashes.hash` on the
    symbols' codes (and of its level shift, :attr:`SketchHashes.shift` and
    :attr:`SketchHashes.flip`, when a level is given).

    Args:
        hashes (SketchHashes): The hash tables (their CPU copies are used).
        dtype (torch.dtype, optional): The dtype of the tabulated signs.
            (default: :obj:`torch.float64`)
        keys (numpy.ndarray, optional): Symbol codes already numbered, in id
            order (as returned by :attr:`keys`). (default: :obj:`None`)
    """

    #: Tabulate every n-gram code when there are at most this many.
    max_table = 1 << 16
    #: Count (row, gram) pairs before adding them, up to this many pairs.
    max_agg = 1 << 22
    #: Symbol codes below this are numbered through a direct array.
    max_direct = 1 << 16
    #: At most this many symbols (a stream keeps symbol ids as ``int32``).
    max_symbols = 2**31 - 1
    #: Whether the hashes are scrambled (:attr:`SketchHashes.version` 2; False for tables pickled before).
    _scrambled = False

    def __init__(self, hashes: SketchHashes, dtype: torch.dtype = torch.float64,
                 keys: Optional[np.ndarray] = None):
        self.dim, self.degree = hashes.dim, hashes.degree
        self.dtype = dtype
        self._coef = cast(Tensor, hashes.coef).cpu()
        self._scrambled = hashes.version >= 2
        self._shift = cast(Tensor, hashes.shift).cpu()
        self._flip = cast(Tensor, hashes.flip).cpu()
        self._symbols = IdMap() if keys is None else IdMap.from_keys(keys)
        self._direct = np.zeros(0, dtype=np.int64)
        self._terms = torch.zeros(0, 0, self._coef.size(0), dtype=torch.long)
        self._terms_for = -1
        self._codes: Dict[Tuple[int, Optional[int]], Tuple[Tensor, Tensor]] = {}
        self._codes_for = -1
        #: Called (no arguments) just before new symbols are numbered (the gram codes change).
        self.on_grow: Optional[Callable[[], None]] = None

    def __len__(self) -> int:
        """The number :math:`V` of symbols numbered so far."""
        return len(self._symbols)

    @property
    def keys(self) -> np.ndarray:
        """The symbol codes, indexed by id (a view; do not modify)."""
        return self._symbols.keys

    def _number(self, codes: np.ndarray) -> np.ndarray:
        """Ids of codes, unseen ones numbered next (after :attr:`on_grow`); at most :attr:`max_symbols`."""
        if self.on_grow is not None and (self._symbols.lookup(codes, insert=False)[0] < 0).any():
            self.on_grow()
        ids = self._symbols.lookup(codes)[0]
        if len(self._symbols) > self.max_symbols:
            raise ValueError(f"a stream holds at most {self.max_symbols:,} distinct node and edge types")
        return ids

    def ids(self, codes: np.ndarray) -> Tensor:
        """Dense ids of symbol codes :obj:`[M]`; unseen codes get the next ids."""
        top = int(codes.max()) + 1 if codes.size else 0
        if codes.size == 0 or top > self.max_direct:
            return torch.from_numpy(self._number(codes))
        if self._direct.size < top:
            grown = np.full(max(top, 2 * self._direct.size, 64), -1, dtype=np.int64)
            grown[: self._direct.size] = self._direct
            self._direct = grown
        ids = np.take(self._direct, codes)  # (a copy; take: about 2x faster than [ ])
        miss = ids < 0
        if miss.any():
            ids[miss] = self._number(codes[miss])
            self._direct[codes[miss]] = ids[miss]
        return torch.from_numpy(ids)

    def tabulated(self, n: int) -> bool:
        r"""Whether the n-gram codes are tabulated (:math:`V^n \leq` :attr:`max_table`)."""
        return len(self) ** n <= self.max_table

    def _symbol_terms(self) -> Tensor:
        """:obj:`[n_max, V, 2p]` hash terms of every symbol at every position."""
        v = len(self)
        if self._terms_for != v:
            codes = torch.from_numpy(self.keys.copy())
            positions = (self._coef.size(1) - 2) // 2
            self._terms = torch.stack([hash_terms(codes, self._coef, t) for t in range(positions)])
            self._terms_for = v
        return self._terms

    def hash(self, grams: Tensor) -> Tuple[Tensor, Tensor]:
        r"""Buckets and signs (``int64``, :math:`\pm 1`) :obj:`[M, p]` of grams of ids :obj:`[M, n]`."""
        terms = self._symbol_terms()
        n = grams.size(1)
        h = hash_offset(self._coef, n).unsqueeze(0)
        for t in range(n):
            h = h + terms[t].index_select(0, grams[:, t])
        h = (h & P) + (h >> 31)  # h < 2^34, so this and one subtraction reduce mod P
        h = torch.where(h >= P, h - P, h)
        h = scramble(h) if self._scrambled else h
        p, b = self.degree, self.dim
        bucket = bucket_of(h[:, :p], b)
        sign = 1 - 2 * (h[:, p:] & 1)
        return bucket, sign

    def _placed(self, bucket: Tensor, sign: Tensor, level: Optional[int]) -> Tuple[Tensor, Tensor]:
        """Buckets and signs moved into level :obj:`level`'s block (None: unchanged)."""
        if level is None:
            return bucket, sign
        bucket = bucket_of(bucket + self._shift[:, level], self.dim)
        return bucket, sign * self._flip[:, level].to(sign.dtype)

    def place_rows(self, y: Tensor, level: Optional[int]) -> Tensor:
        """Level-free sketches :obj:`[n, p b]` moved into level :obj:`level`'s block (None: :obj:`y`)."""
        if level is None:
            return y
        p, b = self.degree, self.dim
        parts = y.view(-1, p, b)
        out = torch.empty_like(parts)
        for f in range(p):
            out[:, f] = shift_level(parts[:, f], int(self._shift[f, level]), self._flip[f, level].to(y.dtype))
        return out.view(y.shape)

    def code_table(self, n: int, level: Optional[int]) -> Tuple[Tensor, Tensor]:
        r"""Buckets and signs :obj:`[V^n + 1, p]` of every n-gram code.

        Code :math:`V^n` is no gram (sign 0). Only while :meth:`tabulated`.
        """
        v = len(self)
        if self._codes_for != v:
            self._codes, self._codes_for = {}, v
        key = (n, level)
        if key not in self._codes:
            code = torch.arange(v**n)
            digits = torch.stack([(code // v ** (n - 1 - t)) % v for t in range(n)], dim=1)
            bucket, sign = self.hash(digits)
            bucket, sign = self._placed(bucket, sign.to(self.dtype), level)
            # one more code, v^n, for "no gram here": sign 0
            bucket = torch.cat([bucket, torch.zeros_like(bucket[:1])])
            sign = torch.cat([sign, torch.zeros_like(sign[:1])])
            self._codes[key] = (bucket, sign)
        return self._codes[key]

    def scatter(self, buf: Tensor, row: Tensor, grams: Tensor, level: Optional[int],
                weight: Optional[Tensor] = None) -> None:
        """Add the sketches of grams (ids :obj:`[M, n]`) into rows :obj:`row` of :obj:`buf` :obj:`[R, p b]`.

        :obj:`level` places them in that level's block (None: level-free);
        :obj:`weight` :obj:`[M]` multiplies each gram (None: every gram once).
        """
        if grams.size(0) == 0:
            return
        n, v = grams.size(1), len(self)
        if self.tabulated(n):
            code = grams[:, 0]
            for t in range(1, n):
                code = code * v + grams[:, t]
            self.scatter_codes(buf, row, code, n, level, weight)
            return
        bucket, sign = self.hash(grams.long())
        bucket, sign = self._placed(bucket, sign.to(buf.dtype), level)
        if weight is not None:
            sign = sign * weight.to(buf.dtype).unsqueeze(1)
        p, b = self.degree, self.dim
        idx = row.long().unsqueeze(1) * (p * b) + torch.arange(p) * b + bucket
        buf.view(-1).index_add_(0, idx.view(-1), sign.view(-1))

    def scatter_codes(self, buf: Tensor, row: Tensor, code: Tensor, n: int, level: Optional[int],
                      weight: Optional[Tensor] = None) -> None:
        """Add n-grams given by code (:meth:`code_table`) into rows :obj:`row` of :obj:`buf` :obj:`[R, p b]`.

        Few rows (graphs) are aggregated first: one count per (row, gram).
        :obj:`weight` :obj:`[M]` multiplies each gram (None: every gram once).
        """
        if code.numel() == 0:
            return
        bucket, sign = self.code_table(n, level)
        p, b = self.degree, self.dim
        c = bucket.size(0)
        rows = buf.size(0)
        w = None if weight is None else weight.to(buf.dtype)
        if rows * c <= self.max_agg and code.numel() * p > rows * c // 4:
            count = torch.bincount(torch.add(code, row, alpha=c), weights=w, minlength=rows * c)
            nz = flat_nonzero(count)
            row, code = nz // c, nz % c
            val = sign.index_select(0, code) * count.index_select(0, nz).to(buf.dtype).unsqueeze(1)
        else:
            val = sign.index_select(0, code)
            if w is not None:
                val = val * w.unsqueeze(1)
        idx = torch.add(bucket.index_select(0, code), row.unsqueeze(1), alpha=p * b)
        if p > 1:
            idx += torch.arange(p) * b
        buf.view(-1).index_add_(0, idx.view(-1), val.view(-1).to(buf.dtype))


__all__ = ["SketchHashes", "SymbolHashTable", "HASH_VERSION", "P", "distinct_shifts", "place", "shift_level",
           "tensor_sketch"]
