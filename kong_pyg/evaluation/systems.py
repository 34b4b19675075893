r"""The Newton systems of :mod:`~kong_pyg.evaluation.svm`: built from the active sets, and solved.

A batch of problems shares one design :math:`Z` (:class:`Padded`, with a zero row for the
padding of active sets of different sizes); :func:`primal_target` and :func:`kernel_target`
build each problem's system on its active set :math:`S` in the primal (:math:`m \times m`) or
kernel (:math:`|S| \times |S|`) form. :func:`solve` factors each system by Cholesky, large
float64 ones on the CPU by SciPy's LAPACK in place (:data:`LAPACK_MIN`), the others by
PyTorch's batched calls on any device; a system that is numerically singular gets an
eigenvalue solve with its smallest eigenvalues clamped.
"""
import threading
from typing import List, Optional, Tuple

import numpy as np
import torch
from torch import Tensor

from .basis import Design

#: Kernel-form systems of at least this size are gathered by 2-D indexing, smaller ones by one
#: :func:`torch.take` of flat indices (faster for many small systems; for large ones the flat index
#: matrix is as large as the system: 30 % slower there, with twice the fresh pages).
TAKE_MAX = 128
#: On the CPU, float64 Newton systems of at least this size are solved one by one by SciPy's LAPACK
#: (``dpotrf`` and ``dpotrs``, in place; the rest by PyTorch's batched calls). On a 2-core AMD EPYC,
#: one thread, Cholesky factor and solve: 1.4x faster at 2,800 (one system), 2.5-2.7x at 128-512
#: (batches of 8-50), 1.4x at 64, even at 32 (PyTorch's CPU wheels use MKL, SciPy's OpenBLAS); and
#: no fresh factor of the size of the system is allocated for each.
LAPACK_MIN = 64


def solve(A: Tensor, b: Tensor) -> Tensor:
    r"""Solve batched SPD systems (Cholesky; eigenvalue fallback for numerically singular ones).

    :obj:`A` may be overwritten. Large float64 systems on the CPU go to SciPy's LAPACK
    (:data:`LAPACK_MIN`), the others to PyTorch.

    No iterative refinement: Cholesky is backward stable, and refinement in float64 did not lower
    the residuals (on MUTAG's 109,211 Newton systems none had a normwise backward error above
    :math:`\epsilon`; two rounds left as many residuals above :math:`10^{-12}` as before, at 13 % of the
    solver's time).
    """
    if A.device.type == "cpu" and A.dtype == torch.float64 and A.size(1) >= LAPACK_MIN \
            and threading.current_thread() is threading.main_thread():  # (SciPy's calls may hold the
        # GIL: in n_jobs threads PyTorch's, which release it, run in parallel)
        return solve_lapack(A, b)
    return solve_torch(A, b)


def solve_lapack(A: Tensor, b: Tensor) -> Tensor:
    """:func:`solve` by SciPy's LAPACK, one system at a time, factored in :obj:`A`'s own memory.

    A system whose factorization fails (numerically singular) or whose solution is not finite is
    restored from the triangle ``dpotrf`` leaves alone and its saved diagonal, and goes to
    :func:`solve_torch` (its eigenvalue fallback). Only in the main thread (:func:`solve`).
    """
    from scipy.linalg import lapack

    A = A.detach().contiguous()  # (C order: each matrix's transpose is a Fortran-order view of it)
    out = torch.empty_like(b)
    An, bn, on = A.numpy(), b.detach().contiguous().numpy(), out.numpy()
    failed: List[int] = []
    for i in range(An.shape[0]):
        a = An[i]
        diag = a.diagonal().copy()
        # the lower triangle of the Fortran view a.T is a's upper one: a's strict lower one is kept
        c, info = lapack.dpotrf(a.T, lower=1, clean=0, overwrite_a=1)
        if info == 0:
            on[i], _ = lapack.dpotrs(c, bn[i], lower=1)
        if info != 0 or not np.isfinite(on[i]).all():  # (OpenBLAS factors a NaN diagonal without a word)
            low = np.tril(a, -1)
            a[...] = low + low.T
            np.fill_diagonal(a, diag)
            failed.append(i)
    if failed:
        rows = torch.tensor(failed)
        out[rows] = solve_torch(A[rows], b[rows])
    return out


def solve_torch(A: Tensor, b: Tensor) -> Tensor:
    """:func:`solve` by PyTorch's batched calls (any device and dtype)."""
    L, info = torch.linalg.cholesky_ex(A)
    # two triangular solves: several times faster than cholesky_solve
    half = torch.linalg.solve_triangular(L, b.unsqueeze(2), upper=False)
    out = torch.linalg.solve_triangular(L.mT, half, upper=True).squeeze(2)
    bad = info != 0
    if bool(bad.any()):
        w, V = torch.linalg.eigh(A[bad])
        w = w.clamp(min=float(torch.finfo(A.dtype).eps) * w.abs().max(dim=1, keepdim=True).values)
        out[bad] = (V @ ((V.transpose(1, 2) @ b[bad].unsqueeze(2)).squeeze(2) / w).unsqueeze(2)).squeeze(2)
    return out



def pad_index(mask: Tensor, pad: int) -> Tuple[Tensor, Tensor]:
    """Per row of a bool :obj:`[b, n]` mask the indices of its true entries, padded with :obj:`pad`."""
    counts = mask.sum(1)
    width = max(int(counts.max()), 1)
    order = torch.argsort((~mask).to(torch.int8), dim=1, stable=True)[:, :width]
    valid = torch.arange(width, device=mask.device).unsqueeze(0) < counts.unsqueeze(1)
    return torch.where(valid, order, torch.full_like(order, pad)), valid


def primal_target(Zp: Tensor, yp: Tensor, act: Tensor, C: Tensor) -> Tensor:
    r""":math:`\bar w = (I + 2C Z_S^\top Z_S)^{-1} 2C Z_S^\top y_S` for each problem."""
    n = Zp.size(0) - 1
    idx, _ = pad_index(act, n)
    Zs = Zp[idx]  # [b, s, m], the active rows (padding: the zero row)
    two_c = (2 * C).view(-1, 1, 1)
    H = torch.matmul(Zs.mT, Zs).mul_(two_c)  # costs |S|, not n, per column pair
    H.diagonal(dim1=1, dim2=2).add_(1.0)
    rhs = two_c[:, :, 0] * torch.matmul(yp[idx].unsqueeze(1), Zs).squeeze(1)  # padding: label 0
    return solve(H, rhs)


def kernel_target(Zp: Tensor, Kp: Tensor, yp: Tensor, act: Tensor, C: Tensor) -> Tensor:
    r""":math:`\bar w = Z_S^\top \beta`, :math:`(K_{SS} + I / 2C)\, \beta = y_S` for each problem."""
    n = Zp.size(0) - 1
    idx, valid = pad_index(act, n)
    # [b, s, s]; padding is zero
    if idx.size(1) >= TAKE_MAX:
        A = Kp[idx.unsqueeze(2), idx.unsqueeze(1)]
    else:  # (one take of the flat matrix: much faster than 2-D advanced indexing for small systems)
        A = torch.take(Kp, idx.unsqueeze(2) * (n + 1) + idx.unsqueeze(1))
    diag = torch.where(valid, (0.5 / C).view(-1, 1).expand_as(valid).to(A.dtype), torch.ones_like(A[:, 0]))
    A.diagonal(dim1=1, dim2=2).add_(diag)
    beta = solve(A, yp[idx])  # padding: label 0
    alpha = Zp.new_zeros(idx.size(0), n + 1).scatter_(1, idx, beta)  # padding: beta = 0
    return alpha @ Zp


class Padded:
    """A design's rows and Gram matrix with a zero row (and column) appended, made once per fit.

    Row :math:`n` is the padding of the gathered active sets. Both are as large as the design (and
    its Gram matrix): building them in every :func:`~kong_pyg.evaluation.svm.newton` call, one per
    problem on NCI1's 4,110-graph Gram matrix, cost a tenth of the fits' time in fresh pages.
    """

    def __init__(self, D: Design):
        self.D = D
        self.Z = torch.cat([D.Z, D.Z.new_zeros(1, D.Z.size(1))])
        self._K: Optional[Tensor] = None
        self._lock = threading.Lock()  # (problems may be solved in threads)

    @property
    def K(self) -> Tensor:
        """The Gram matrix, padded (made on first use: the primal form does not need it)."""
        with self._lock:
            if self._K is None:
                n = self.D.Z.size(0)
                K = self.D.Z.new_zeros(n + 1, n + 1)
                K[:n, :n] = self.D.gram
                self._K = K
        return self._K


__all__ = ["Padded", "pad_index", "primal_target", "kernel_target", "solve", "solve_lapack", "solve_torch",
           "LAPACK_MIN", "TAKE_MAX"]
