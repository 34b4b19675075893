"""The last checks and touches of a KONG output: finite values, the output dtype, row normalization, NumPy.

Shared by every front-end through :mod:`kong_pyg.engine` (which re-exports them).
"""
import math
from typing import Optional

import numpy as np
import torch
from torch import Tensor

from .config import KongConfig
from .inputs import on_meta


def all_finite(values: Tensor) -> bool:
    """Whether every entry is finite: one pass, no temporary (``isfinite`` makes two full-size ones).

    A finite sum means finite entries (an infinity or a NaN makes the sum
    infinite or NaN); the sum is about 3x faster than the minimum and
    maximum, which decide where the sum itself overflowed (they are finite
    iff no entry is infinite or NaN: NaN propagates).
    """
    if values.numel() == 0:
        return True
    # (not for float16, whose sum overflows at 65504)
    if values.dtype != torch.float16 and bool(torch.isfinite(values.sum())):
        return True
    low, high = torch.aminmax(values)
    return bool(torch.isfinite(low) & torch.isfinite(high))


def check_finite(values: Tensor, cfg: KongConfig, what: str, dtype: torch.dtype = torch.float64,
                 cosine: bool = True) -> None:
    """Raise a clear error instead of returning an overflowed (inf/NaN) result, computed in :obj:`dtype`.

    :obj:`cosine=False`: the caller knows the cosine kernel cannot help (the counts themselves overflowed,
    whose norms it needs; a stream's cosine maps use norms estimated from sketches that overflow at the
    same depth), so its hint is left out.
    """
    if not all_finite(values):
        cosine_helps = cosine and cfg.kernel != "cosine"
        hint = ("" if dtype == torch.float64 else "dtype=torch.float64, ") + "fewer hops" + (
            " or kernel='cosine' (bounded node maps, where the counts themselves stay finite)"
            if cosine_helps else "")
        name, top = str(dtype).replace("torch.", ""), torch.finfo(dtype).max
        # (a kernel matrix's entries are products of counts: they overflow at about the square root)
        subject = "its entries, inner products of the k-gram counts," if "kernel" in what else \
            "the k-gram counts of these graphs"
        raise ValueError(
            f"the KONG {what} overflowed {name}: with hops={cfg.hops} (degree={cfg.degree}, "
            f"const={cfg.const}) {subject} exceed ~{top:.1e} (a node's string grows "
            f"like its neighbors' degrees to the power hops, its map like that to the power degree); use "
            f"{hint}{'' if abs(cfg.const) < 1e100 else ' or a smaller const'}"
        )


def cast_checked(out: Tensor, dtype: torch.dtype, cfg: KongConfig) -> Tensor:
    """:obj:`out` (``float64``, finite) in :obj:`dtype`, or a clear error where it overflows there."""
    res = out.to(dtype)
    if not all_finite(res):
        check_finite(out, cfg, "sketch")  # overflowed already in float64
        big = float(out.abs().max())
        hint = "dtype=torch.float64" + ("" if cfg.kernel == "cosine" else ", kernel='cosine'")
        raise ValueError(
            f"KONG features reach {big:.3g}, beyond the range of {dtype} (hops={cfg.hops}, "
            f"degree={cfg.degree}); pass {hint} or fewer hops"
        )
    return res


def root_sum_squares(x: Tensor, dim: int = -1, mean_dim: Optional[int] = None) -> Tensor:
    r"""Euclidean norms over :obj:`dim`, finite wherever :obj:`x` is.

    :math:`\sqrt{\sum x^2}` over :obj:`dim`, with the mean over :obj:`mean_dim` before the root
    if given. The plain sum of squares overflows once entries pass the square root of the dtype's
    maximum (about 1e154 in ``float64``, counts that deep :obj:`hops` reach long before the counts
    themselves overflow), and loses tiny ones; those norms are computed again from :obj:`x` scaled
    by its largest entry (the others are kept as they are), and so are the norms of 0 over entries
    that are not all 0 (every square underflowed: entries below about 1e-154).
    """

    def plain(v: Tensor) -> Tensor:  # (no temporary of the size of v)
        if mean_dim is None:
            return torch.linalg.vector_norm(v, dim=dim)
        return torch.linalg.vector_norm(v, dim=(mean_dim, dim)) / math.sqrt(v.size(mean_dim))

    norm = plain(x)
    bad = ~torch.isfinite(norm) | ((norm > 0) & (norm < math.sqrt(torch.finfo(norm.dtype).tiny)))
    dims = (dim,) if mean_dim is None else (mean_dim, dim)
    zero = norm == 0
    if bool(zero.any()):  # (a pass over x only where some norm is 0: zero rows, or underflow)
        bad |= zero & (x.abs().amax(dim=dims) > 0)
    if not bool(bad.any()):
        return norm
    big = x.abs().amax(dim=dims, keepdim=True)
    big = torch.where(big > 0, big, torch.ones_like(big))
    return torch.where(bad, plain(x / big) * big.squeeze(dims), norm)


#: The refusal of norms that overflowed (:func:`normalize_rows`, :func:`kong_pyg.kernels.inverse_or_zero`).
OVERFLOWED_NORMS = ("the norms of KONG's k-gram count vectors overflowed float64 (counts near 1.8e+308, "
                    "from many hops on dense graphs): a cosine map or a normalized row would be 0; use fewer "
                    "hops")


def normalize_rows(out: Tensor, in_place: bool = False) -> Tensor:
    """L2-normalize every row (a zero row stays zero); :obj:`in_place` overwrites :obj:`out`."""
    norm = root_sum_squares(out, dim=1).unsqueeze(1)
    if not all_finite(norm):  # (finite entries whose squares sum past the dtype: out / inf would be 0)
        raise ValueError(OVERFLOWED_NORMS)
    scale = torch.where(norm > 0, norm, torch.ones_like(norm))
    return out.div_(scale) if in_place else out / scale


def numpy_of(t: Tensor, name: str = "the tensor") -> np.ndarray:
    """A tensor of features as a NumPy array on the CPU (dense; half and bfloat16 as float64).

    A tensor on the meta device is a :class:`ValueError` naming :obj:`name` (it holds no values).
    """
    if t.is_meta:
        raise on_meta(name)
    t = t.detach().cpu()
    t = t if t.layout == torch.strided else t.to_dense()
    t = t.resolve_neg().resolve_conj()  # (NumPy has no lazy negation or conjugation)
    if t.is_floating_point() and t.element_size() < 4:  # NumPy has no bfloat16
        t = t.double()
    return t.numpy()


__all__ = ["all_finite", "check_finite", "cast_checked", "normalize_rows", "root_sum_squares", "numpy_of"]
