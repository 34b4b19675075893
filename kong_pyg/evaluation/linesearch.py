r"""The exact line search of the batched Newton solver (:mod:`~kong_pyg.evaluation.svm`).

Along a Newton direction the squared-hinge objective is a piecewise quadratic
in the step length; its minimizer is found exactly from the sorted
breakpoints, for every problem of a batch at once.
"""
import math

import torch
from torch import Tensor


def _cumsum(x: Tensor) -> Tensor:
    """Cumulative sums along dim 1.

    On the CPU where a CUDA tensor asks for deterministic algorithms: CUDA has no deterministic float
    cumsum (:func:`torch.use_deterministic_algorithms` refuses it).
    """
    if x.is_cuda and torch.are_deterministic_algorithms_enabled():
        return torch.cumsum(x.cpu(), 1).to(x.device)
    return torch.cumsum(x, 1)

def line_search(a: Tensor, b: Tensor, m: Tensor, q: Tensor, C: Tensor) -> Tensor:
    r"""The exact minimizer :math:`t \geq 0` of the objective along the Newton direction.

    Along :math:`w + t d`, with :math:`a = \langle w, d \rangle`,
    :math:`b = \|d\|^2`, slack :math:`m_i = 1 - y_i o_i` and change
    :math:`q_i = y_i \langle d, z_i \rangle` (both zero off the training set),

    .. math::
        \varphi'(t) = a + t b - 2C \sum_i q_i \max(0,\, m_i - t q_i),

    a nondecreasing piecewise linear function; its root is found exactly
    from the sorted breakpoints :math:`t_i = m_i / q_i`.

    Args:
        a (torch.Tensor): :obj:`[B]` :math:`\langle w, d \rangle`.
        b (torch.Tensor): :obj:`[B]` :math:`\|d\|^2`.
        m (torch.Tensor): :obj:`[B, n]` slacks.
        q (torch.Tensor): :obj:`[B, n]` changes.
        C (torch.Tensor): :obj:`[B]`.

    Returns:
        torch.Tensor: :obj:`[B]` step lengths.
    """
    two_c = (2 * C).unsqueeze(1)
    active = (m > 0) | ((m == 0) & (q < 0))
    A1 = (q * m * active).sum(1, keepdim=True)
    A2 = (q * q * active).sum(1, keepdim=True)
    nonzero = q != 0
    tb = m / torch.where(nonzero, q, torch.ones_like(q))
    valid = nonzero & (tb > 0)
    tb = torch.where(valid, tb, torch.full_like(tb, math.inf))
    sign = torch.where(q > 0, -1.0, 1.0).to(q.dtype) * valid
    tb, order = torch.sort(tb, dim=1)
    c1 = A1 + _cumsum((sign * q * m).gather(1, order))
    c2 = A2 + _cumsum((sign * q * q).gather(1, order))
    finite = torch.isfinite(tb)
    slope = a.unsqueeze(1) - two_c * c1 + torch.where(finite, tb, torch.zeros_like(tb)) * (
        b.unsqueeze(1) + two_c * c2)
    hit = (slope >= 0) & finite
    last = torch.full_like(a, tb.size(1), dtype=torch.long)
    k = torch.where(hit.any(1), hit.to(torch.int8).argmax(1), last)
    P1 = torch.cat([A1, c1], 1).gather(1, k.unsqueeze(1)).squeeze(1)
    P2 = torch.cat([A2, c2], 1).gather(1, k.unsqueeze(1)).squeeze(1)
    denom = b + 2 * C * P2
    t = -(a - 2 * C * P1) / torch.where(denom > 0, denom, torch.ones_like(denom))
    return torch.where(denom > 0, t.clamp(min=0.0), torch.zeros_like(t))


__all__ = ["line_search"]
