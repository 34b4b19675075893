r"""Count-Sketch and Tensor-Sketch of n-gram counts (SPEC section 5).

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
import torch
from torch import Tensor

from .hashing import P, linear_hash, random_coefficients


class SketchHashes(torch.nn.Module):
    r"""The random tables of :math:`p` Count-Sketches, held as buffers.

    Args:
        dim (int): The sketch size :math:`b`.
        degree (int): The number :math:`p` of independent sketches.
        max_length (int): The longest n-gram hashed.
        levels (int): The number of level blocks (:math:`h + 1`).
        seed (int): The seed; the same seed gives the same tables on any
            device.
    """

    coef: Tensor
    shift: Tensor
    flip: Tensor

    def __init__(self, dim: int, degree: int, max_length: int, levels: int, seed: int):
        super().__init__()
        self.dim, self.degree, self.seed = dim, degree, seed
        self.register_buffer("coef", torch.zeros(2 * degree, 2 + 2 * max_length, dtype=torch.long))
        self.register_buffer("shift", torch.zeros(degree, levels, dtype=torch.long))
        self.register_buffer("flip", torch.ones(degree, levels, dtype=torch.float64))
        self.reset_parameters()

    def reset_parameters(self):
        """Redraw the tables from the seed."""
        gen = torch.Generator().manual_seed(int(self.seed))
        dev = self.coef.device
        self.coef.copy_(random_coefficients(tuple(self.coef.shape), gen).to(dev))
        self.shift.copy_(torch.randint(0, self.dim, tuple(self.shift.shape), generator=gen).to(dev))
        bits = torch.randint(0, 2, tuple(self.flip.shape), generator=gen)
        self.flip.copy_((1 - 2 * bits).to(torch.float64).to(dev))

    def hash(self, grams: Tensor) -> tuple:
        """Buckets :obj:`[M, p]` (long) and signs :obj:`[M, p]` (float64)."""
        h = linear_hash(grams, self.coef)
        p = self.degree
        bucket = h[:, :p] % self.dim
        sign = 1.0 - 2.0 * (h[:, p:] & 1).to(torch.float64)
        return bucket, sign

    def const_token(self) -> tuple:
        """Bucket and sign of the polynomial kernel's constant coordinate."""
        empty = self.coef.new_zeros(1, 0)
        bucket, sign = self.hash(empty)
        return bucket[0], sign[0]

    def level(self, f: int, level: int) -> tuple:
        """Shift and sign of level :obj:`level` in sketch :obj:`f`."""
        return int(self.shift[f, level]), self.flip[f, level]


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


__all__ = ["SketchHashes", "P", "place", "shift_level", "tensor_sketch"]
