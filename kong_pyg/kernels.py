r"""The base kernels :math:`\kappa(c, c')` on node count vectors.

A base kernel of degree :math:`p` has an explicit node map
:math:`\phi(c) = g(c)^{\otimes p}` for a per-node vector :math:`g(c)`:

* ``"poly"``: :math:`g(c) = c \oplus \sqrt{const}` (one extra coordinate),
  so :math:`\langle \phi(c), \phi(c') \rangle = (\langle c, c' \rangle +
  const)^p`;
* ``"cosine"``: :math:`g(c) = c / \|c\|` (and :math:`0` for an empty
  :math:`c`, never NaN), so :math:`\langle \phi(c), \phi(c') \rangle =
  \cos(c, c')^p`.

Every consumer goes through a :class:`BaseKernel`: the exact sparse map
(:meth:`BaseKernel.exact_node_rows`, before the symmetric :math:`p`-th
power), the sketched node maps (:meth:`BaseKernel.sketch_node_maps`, shared
by :class:`~kong_pyg.KongSketch` and :class:`~kong_pyg.KongStream`), and the
linear readout, which needs only a weight per node
(:meth:`BaseKernel.node_weight`). A new base kernel is one subclass here
and its name in :data:`KERNEL_RULES` and :data:`kong_pyg.config.KERNELS`.
"""
import math
from typing import Dict, Optional

import torch
from torch import Tensor

from .config import KongConfig
from .exact import Rows, sum_duplicates
from .outputs import OVERFLOWED_NORMS, root_sum_squares
from .sketch import SketchHashes, tensor_sketch


def inverse_or_zero(norm: Tensor) -> Tensor:
    """:math:`1 / x`, and 0 where :math:`x = 0` (empty count vectors).

    A norm beyond the dtype's range (counts near ``float64``'s maximum, whose squares sum past it) is an
    error: its inverse would read as 0, a silent zero vector.
    """
    if not bool(torch.isfinite(norm).all()):
        raise ValueError(OVERFLOWED_NORMS)
    return torch.where(norm > 0, 1.0 / norm.clamp(min=1e-300), torch.zeros_like(norm))


class BaseKernel:
    """A base kernel; subclasses say how :math:`g(c)` is formed."""

    name = ""

    def needs_norms(self, cfg: KongConfig) -> bool:
        r"""Whether :math:`g(c)` needs the norm :math:`\|c\|`."""
        return False

    def is_linear(self, cfg: KongConfig) -> bool:
        r"""Whether :math:`\sum_v \phi(c_v)` is a weighted sum of the :math:`c_v`.

        Then a graph's map needs one weight per node, never the node maps
        (exact cosine norms are cheap; sketch-estimated ones are not).
        """
        return cfg.degree == 1 and (not self.needs_norms(cfg) or cfg.norm == "exact")

    def node_weight(self, cfg: KongConfig, norms: Optional[Tensor], like: Tensor) -> Tensor:
        """The weight of every node in the linear map (:obj:`like`: a ``[N]`` float tensor)."""
        return torch.ones_like(like)

    def const_value(self, cfg: KongConfig) -> float:
        r"""The constant coordinate :math:`\sqrt{const}` of :math:`g(c)` (0: none)."""
        return 0.0

    def exact_node_rows(self, cfg: KongConfig, rows: Rows, norms: Optional[Tensor], num_nodes: int,
                        const_col: int) -> Rows:
        r"""Sparse rows of :math:`g(c_v)` from the count rows :math:`c_v`.

        Args:
            cfg (KongConfig): The options.
            rows (Rows): Node count rows (columns below :obj:`const_col`).
            norms (torch.Tensor, optional): :obj:`[N]` exact norms, when
                :meth:`needs_norms`.
            num_nodes (int): :math:`N`.
            const_col (int): The column of the constant coordinate.
        """
        const = self.const_value(cfg)
        if not const:
            return rows
        nodes = torch.arange(num_nodes, device=rows.row.device)
        value = torch.full((num_nodes,), const, dtype=torch.float64, device=nodes.device)
        return sum_duplicates(
            torch.cat([rows.row, nodes]),
            torch.cat([rows.col, torch.full_like(nodes, const_col)]),
            torch.cat([rows.val.double(), value]),
            const_col + 1,
        )

    def sketch_node_maps(self, cfg: KongConfig, hashes: SketchHashes, cs: Tensor,
                         norms: Optional[Tensor] = None) -> Tensor:
        r"""Node maps :obj:`[n, b]` from the Count-Sketches :obj:`[p, n, b]` of their :math:`c_v`.

        The Count-Sketches of :math:`g(c_v)` are combined by
        :func:`~kong_pyg.sketch.tensor_sketch` (the identity for
        :math:`p = 1`). :obj:`cs` may be modified in place.

        Args:
            cfg (KongConfig): The options.
            hashes (SketchHashes): The hash tables (for the constant's bucket).
            cs (torch.Tensor): :obj:`[p, n, b]` Count-Sketches of :math:`c_v`.
            norms (torch.Tensor, optional): :obj:`[n]` exact norms; when
                :meth:`needs_norms` and none are given they are estimated
                from :obj:`cs`.
        """
        const = self.const_value(cfg)
        if const:
            bucket, sign = hashes.const_token()
            p = cs.size(0)
            cs[torch.arange(p, device=cs.device), :, bucket] += sign.view(-1, 1).to(cs.dtype) * const
        return tensor_sketch(cs)


class PolyKernel(BaseKernel):
    r""":math:`(\langle c, c' \rangle + const)^p`."""

    name = "poly"

    def const_value(self, cfg: KongConfig) -> float:
        r""":math:`\sqrt{const}`, or 0 without a constant."""
        return math.sqrt(cfg.const) if cfg.const > 0 else 0.0


class CosineKernel(BaseKernel):
    r""":math:`(\langle c, c' \rangle / \|c\| \|c'\|)^p`; an empty :math:`c` maps to 0."""

    name = "cosine"

    def needs_norms(self, cfg: KongConfig) -> bool:
        r"""Always: :math:`g(c) = c / \|c\|`."""
        return True

    def node_weight(self, cfg: KongConfig, norms: Optional[Tensor], like: Tensor) -> Tensor:
        r""":math:`1 / \|c_v\|` (0 for an empty :math:`c_v`)."""
        if norms is None:
            raise ValueError("the cosine kernel's linear map needs exact node norms")
        return inverse_or_zero(norms)

    def exact_node_rows(self, cfg: KongConfig, rows: Rows, norms: Optional[Tensor], num_nodes: int,
                        const_col: int) -> Rows:
        r"""Rows scaled by :math:`1 / \|c_v\|`."""
        if norms is None:
            raise ValueError("the cosine kernel's exact map needs the node norms")
        scale = inverse_or_zero(norms)
        return Rows(rows.row, rows.col, rows.val * scale.index_select(0, rows.row))

    def sketch_node_maps(self, cfg: KongConfig, hashes: SketchHashes, cs: Tensor,
                         norms: Optional[Tensor] = None) -> Tensor:
        r"""Tensor-Sketches scaled by :math:`\|c_v\|^{-p}` (norms estimated if not given)."""
        if norms is None:  # estimated: the mean of the p sketches' squared norms
            norms = root_sum_squares(cs, dim=-1, mean_dim=0)
        scale = inverse_or_zero(norms.to(cs.dtype)).unsqueeze(1)
        # each factor scaled (the product's scale^p and the unscaled product under- and overflow first)
        return tensor_sketch(cs * scale)


#: Every base kernel by name.
KERNEL_RULES: Dict[str, BaseKernel] = {"poly": PolyKernel(), "cosine": CosineKernel()}


def get_kernel(name: str) -> BaseKernel:
    """The :class:`BaseKernel` called :obj:`name`."""
    try:
        return KERNEL_RULES[name]
    except KeyError:
        raise ValueError(f"'kernel' must be one of {list(KERNEL_RULES)} (got {name!r})") from None


__all__ = ["BaseKernel", "PolyKernel", "CosineKernel", "KERNEL_RULES", "get_kernel", "inverse_or_zero"]
