r"""The design matrix of the SVM problems: an exact basis of the span of the features.

Every LinearSVC problem of :mod:`~kong_pyg.evaluation.svm` is solved on one
:class:`Design` (:func:`design`), with the intercept folded in and at most one
column per graph (one more where the intercept needs a column of its own);
:mod:`~kong_pyg.evaluation.svm` re-exports both names, and :func:`objective` (one problem's primal objective).
"""
import math
from typing import Any, NamedTuple, Optional, Tuple

import numpy as np
import torch
from torch import Tensor

from ..warn import warn

#: Eigenvalues of the design's Gram matrix below this times the largest are dropped.
RANK_RTOL = 1e-12

#: Where the rank cut leaves out more than this share of the intercept's column (its squared norm), the
#: features alone are cut and the intercept added as a column of its own.
INTERCEPT_RTOL = 1e-10


class Design(NamedTuple):
    r"""The matrix every problem is solved on.

    Attributes:
        Z (torch.Tensor): :obj:`[n, m]` rows :math:`z_i` with
            :math:`Z Z^\top = X X^\top + 1` (the intercept folded in).
        gram (torch.Tensor): :obj:`[n, n]` :math:`Z Z^\top`.
        top (float): The largest eigenvalue of :obj:`gram`
            (:obj:`nan`: unknown; its trace, an upper bound, is used).
        apart (bool): The last column of :obj:`Z` is the intercept's column of
            ones (features so large that the rank cut would take it).
    """

    Z: Tensor
    gram: Tensor
    top: float = math.nan
    apart: bool = False


#: Eigenvalues of a given Gram matrix (plus 1) below -PSD_RTOL times the largest are not rounding (a
#: matrix given in a lower precision: PSD_EPS times its machine epsilon, where that is more).
PSD_RTOL = 1e-8
PSD_EPS = 1e3
#: ... but never more than this (float16's epsilon times PSD_EPS is about 1: no check at all).
PSD_MAX_RTOL = 1e-2


def rounding_of(K: Any) -> float:
    """The machine epsilon of a matrix's floating-point dtype (float64's for any other)."""
    if isinstance(K, Tensor):
        if K.is_floating_point():
            return float(torch.finfo(K.dtype).eps)
    else:
        try:
            dtype = np.dtype(getattr(K, "dtype", None))
        except TypeError:  # (a dtype NumPy does not know)
            dtype = np.dtype(np.float64)
        if np.issubdtype(dtype, np.floating):
            return float(np.finfo(dtype).eps)
    return float(np.finfo(np.float64).eps)


def check_psd(w: np.ndarray, eps: float = 0.0) -> None:
    """Refuse a given Gram matrix whose eigenvalues :obj:`w` show it is clearly not positive semi-definite.

    (Fit as the nearest PSD matrix it would be another kernel than the one given.) :obj:`eps`: the
    machine epsilon of the matrix as given (float32's: its rounding alone gives negative eigenvalues).
    """
    top = float(w.max()) if w.size else 0.0
    if w.size and float(w.min()) < -max(PSD_RTOL, min(PSD_EPS * eps, PSD_MAX_RTOL)) * max(top, 1.0):
        raise ValueError(f"the Gram matrix is not positive semi-definite: an eigenvalue of "
                         f"{float(w.min()):.3g}, the largest {top:.3g} (a kernel matrix K = X X^T has none "
                         "below 0)")


def _eig_basis(G: np.ndarray, rtol: float, given: bool = False,
               eps: float = 0.0) -> Tuple[np.ndarray, np.ndarray]:
    """Eigenvectors and eigenvalues of a symmetric PSD matrix, the negligible ones dropped.

    :obj:`given`: the matrix is a user's kernel matrix (plus 1), checked by :func:`check_psd` (with
    :obj:`eps`, the machine epsilon of the matrix as given).
    """
    w, V = np.linalg.eigh((G + G.T) / 2)
    top = float(w.max()) if w.size else 0.0
    if given:
        check_psd(w, eps)
    keep = w > rtol * top if top > 0 else np.zeros(w.size, dtype=bool)
    if not keep.any():  # an all-zero matrix: one zero column
        return np.zeros((G.shape[0], 1)), np.zeros(1)
    return V[:, keep], w[keep]


def _arrowhead_top(w: np.ndarray, a: np.ndarray, n: float) -> float:
    r"""The largest eigenvalue of :math:`Z^\top Z = [[\mathrm{diag}(w), a], [a^\top, n]]`, where Z = [X U, 1].

    The columns :math:`X U` are orthogonal with squared norms :math:`w`, so :math:`Z^\top Z` is an
    arrowhead matrix: its largest eigenvalue is :math:`\max(w)` or the root above it of
    :math:`h(\lambda) = n - \lambda + \sum_i a_i^2 / (\lambda - w_i)`, which decreases there and
    is at most 0 at :math:`\max(w) + n`. Bisection to the last bit, :math:`O(m)` per step (an
    eigendecomposition would cost as much as the basis).
    """
    lo = float(w.max()) if w.size else 0.0
    hi = lo + n
    a2 = a * a
    for _ in range(2100):  # (each step halves [lo, hi]; it ends when the two are neighbours)
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:
            break
        if n - mid + float((a2 / (mid - w)).sum()) > 0:
            lo = mid
        else:
            hi = mid
    return hi


def _warn_small_columns(X: Any, rtol: float) -> None:
    """Warn where whole feature columns lie below the rank cut (:func:`design`): the fit ignores them."""
    import scipy.sparse as sp

    sq = np.asarray(X.multiply(X).sum(axis=0) if sp.issparse(X) else np.einsum("ij,ij->j", X, X)).reshape(-1)
    top = float(sq.max()) if sq.size else 0.0
    small = int(((sq > 0) & (sq < rtol * top)).sum())
    if small:
        warn(
            f"{small} of the {sq.size} feature columns are below {math.sqrt(rtol):g} of the largest in norm "
            f"(the features span {math.sqrt(top / float(sq[sq > 0].min())):.1e} in scale): the SVM cannot "
            "tell them from rounding and fits without them, where LinearSVC would use them; if they matter, "
            "scale the columns to comparable sizes (e.g. scikit-learn's MaxAbsScaler: normalize=True and "
            "cosine kernels scale rows, which evens out graph sizes only)")


def design(features: Any, gram: Optional[np.ndarray] = None, rtol: float = RANK_RTOL,
           given: bool = True, eps: Optional[float] = None) -> Design:
    r"""The design matrix of the SVM problems: an exact basis of the features' span.

    LinearSVC's solution lies in the span of the training rows of
    :math:`A = [X, 1]`, so the problem is the same on any :math:`Z = A W`
    with :math:`W` an orthonormal basis of the row space of :math:`A`
    (:math:`\|w\|` and every margin are preserved). :math:`Z` is
    :math:`A W` from the eigendecomposition of :math:`A^\top A` when
    :math:`X` has fewer columns than rows, else
    :math:`V \Lambda^{1/2}` from :math:`A A^\top = X X^\top + 1 = V \Lambda V^\top`
    (a Gram matrix is used directly). Eigenvalues below :obj:`rtol` times the
    largest are dropped. Where that drops part of the intercept (the column of
    ones lies outside the kept span: features of :math:`10^6` and more make
    the intercept's direction look negligible), :math:`Z = [X U, 1]` instead,
    with :math:`U` the kept eigenvectors of :math:`X^\top X` (or
    :math:`[V \Lambda^{1/2}, 1]` from :math:`X X^\top`): the intercept is
    never cut, however large the features. The cut still applies to the
    features' own directions: one whose eigenvalue is below :obj:`rtol` times
    the largest (a constant or small-valued column beside features of
    :math:`10^6`) is dropped, as any direction at the scale of rounding would
    be; scale such features to comparable sizes (or normalize them). So is a
    direction that small without any small column (the difference of two
    nearly equal columns), which no warning names: there the solution can
    differ from LinearSVC's at large :math:`C`.

    Args:
        features: :obj:`[n, d]` features (SciPy sparse or dense), or
            :obj:`None` when :obj:`gram` is given.
        gram (numpy.ndarray, optional): The kernel matrix :math:`X X^\top`
            :obj:`[n, n]` instead of features.
        rtol (float, optional): See above. (default: :data:`RANK_RTOL`)
        given (bool, optional): :obj:`gram` is the user's (checked to be
            positive semi-definite), not this function's own :math:`X X^\top`.
            (default: :obj:`True`)
        eps (float, optional): The machine epsilon of :obj:`gram` as the
            user gave it, where that is coarser than its dtype's (a torch
            ``bfloat16`` matrix read as float64): the check's tolerance.
            (default: :obj:`None`: from :obj:`gram`'s dtype)

    Returns:
        :class:`Design`
    """
    import scipy.sparse as sp

    from .features import Gram, check_finite  # (features imports this module)

    if features is None and gram is None:
        raise TypeError("design needs 'features' or 'gram'")
    check_finite(Gram(np.asarray(gram)) if gram is not None else features)  # (NaN, inf, overflow: named)
    if gram is not None:
        rounding = max(rounding_of(gram), eps or 0.0)
        V, w = _eig_basis(np.asarray(gram, dtype=np.float64) + 1.0, rtol, given=given, eps=rounding)
        Z = V * np.sqrt(w)
        top = float(w.max())
    else:
        # (in float64: float32 rounding alone would look like negative eigenvalues)
        X: Any = features.astype(np.float64) if sp.issparse(features) else \
            np.asarray(features, dtype=np.float64)
        n, d = X.shape
        _warn_small_columns(X, rtol)
        if d + 1 > n:
            K = X @ X.T
            return design(None, K.toarray() if sp.issparse(K) else K, rtol, given=False)
        ones = np.ones((n, 1))
        A = sp.hstack([X, ones], format="csr") if sp.issparse(X) else np.hstack([X, ones])
        cov = A.T @ A
        cov = cov.toarray() if sp.issparse(cov) else np.asarray(cov)
        W, w = _eig_basis(cov, rtol)
        Z = np.asarray(A @ W)
        top = float(w.max())  # A^T A and A A^T share their nonzero eigenvalues
    # Z's columns are orthogonal: the part of the intercept's column 1 that Z spans (by the columns' own
    # squared norms: the eigenvalues differ from them by rounding of the largest, too much for small ones)
    n = Z.shape[0]
    norms = (Z * Z).sum(axis=0)
    spanned = float(((Z.sum(axis=0) ** 2) / np.where(norms > 0, norms, np.inf)).sum())
    apart = n - spanned > INTERCEPT_RTOL * n
    if apart:  # the rank cut took part of the intercept: fold it in apart
        if gram is None:  # (X^T X is A^T A without the intercept's row and column)
            U, w = _eig_basis(cov[:d, :d], rtol)
            ZX = np.asarray(X @ U)  # (X^T X and X X^T share their nonzero eigenvalues)
        else:
            V, w = _eig_basis(np.asarray(gram, dtype=np.float64), rtol, given=given, eps=rounding)
            ZX = V * np.sqrt(w)
        Z = np.hstack([ZX, np.ones((n, 1))])
        top = _arrowhead_top(w, ZX.sum(axis=0), float(n))
    Zt = torch.from_numpy(np.ascontiguousarray(Z, dtype=np.float64))
    return Design(Zt, Zt @ Zt.t(), top, apart)


def objective(D: Design, y: Any, train: Any, C: float, w: Any) -> float:
    r"""The primal objective of one problem.

    :math:`\tfrac12 \|w\|^2 + C \sum_{i \in T} \max(0, 1 - y_i \langle w, z_i \rangle)^2`
    for training mask :obj:`train`, labels :obj:`y` (:math:`\pm 1`) and :obj:`w` :obj:`[m]`.
    """
    dev = D.Z.device
    wt = torch.as_tensor(np.asarray(w, dtype=np.float64), device=dev)
    yt = torch.as_tensor(np.asarray(y, dtype=np.float64), device=dev)
    tr = torch.as_tensor(np.asarray(train, dtype=bool), device=dev)
    slack = (1 - yt * (D.Z @ wt)).clamp(min=0) * tr
    return float(0.5 * wt @ wt + C * (slack * slack).sum())


#: The kernel-form Newton systems hold the intercept as the 1 in every entry of :math:`Z Z^\top`;
#: entries beyond this keep fewer than 7 of its digits (none from about :math:`10^{16}`).
KERNEL_MAX_ENTRY = 1e9


def intercept_below_rounding(D: Design) -> bool:
    """Whether kernel-form systems on :obj:`D` would lose the intercept to rounding.

    Where the features' span does not hold the intercept's direction either (:attr:`Design.apart`:
    large features centred or of mixed signs, unlike counts) and an entry passes
    :data:`KERNEL_MAX_ENTRY`.
    """
    return D.apart and bool(D.gram.numel()) and float(D.gram.diagonal().max()) > KERNEL_MAX_ENTRY


def to_device(D: Design, device: torch.device, problems: int, chunk_bytes: int) -> Design:
    """A copy of :obj:`D` on :obj:`device`, refused (:class:`ValueError`) where it cannot fit.

    Off the CPU: the Gram matrix twice (the design's and the solver's padded copy), :math:`Z`, and
    the Newton systems of one chunk of :obj:`problems` (at most :obj:`chunk_bytes`).
    """
    if device.type != "cpu":
        from ..memory import check_allocation

        n, m = D.Z.shape
        need = 8 * (2 * (n + 1) ** 2 + n * m) + min(chunk_bytes, 8 * problems * (m * m + 3 * n * m))
        check_allocation(need, f"the SVM design of {n} graphs ({m} columns) on {device}", device,
                         "solve on the CPU (device=None), where wide designs go to LIBLINEAR")
    return Design(D.Z.to(device), D.gram.to(device), D.top, D.apart)


__all__ = ["Design", "design", "objective", "to_device", "intercept_below_rounding", "RANK_RTOL",
           "rounding_of", "INTERCEPT_RTOL", "KERNEL_MAX_ENTRY"]
