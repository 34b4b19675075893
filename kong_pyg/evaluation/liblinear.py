r"""LinearSVC's problems fit by scikit-learn's LIBLINEAR, one at a time.

The fallback of the batched exact solver (:mod:`~kong_pyg.evaluation.svm`) for designs too wide
for it. :mod:`~kong_pyg.evaluation.svm` still answers for :func:`fit_liblinear` and the two constants.
"""
from typing import Any, Callable, Optional, Sequence, Tuple

import numpy as np

from ..warn import ignoring
from .svm import Fits

#: LIBLINEAR's tolerance and iteration cap there (scikit-learn's defaults).
LIBLINEAR_TOL = 1e-4
LIBLINEAR_MAX_ITER = 1000


def fit_liblinear(M: Any, y: Any, train: Any, Cs: Sequence[float], *, tol: float = LIBLINEAR_TOL,
                  max_iter: int = LIBLINEAR_MAX_ITER,
                  progress: Optional[Callable[[int], None]] = None) -> Fits:
    r"""The problems of :func:`~kong_pyg.evaluation.svm.fit_many`, one LinearSVC fit each.

    For designs too wide for the batched exact solver (its Newton systems cost the cube of
    :math:`\min(m, |S|)` per step): LIBLINEAR's primal trust-region Newton method
    (:obj:`dual=False`) with relative gradient tolerance :obj:`tol`, on :obj:`M` (features, sparse
    ones kept sparse, or :func:`~kong_pyg.evaluation.features.kernel_map` of a Gram matrix).

    Args:
        M: :obj:`[n, d]` features.
        y (array-like): :obj:`[n]` labels.
        train (array-like): :obj:`[B, n]` boolean training masks.
        Cs (sequence): The :math:`C` values.
        tol (float, optional): LIBLINEAR's tolerance. (default: :data:`LIBLINEAR_TOL`)
        max_iter (int, optional): LIBLINEAR's iteration cap; fits that reach it are reported
            as not converged. (default: :data:`LIBLINEAR_MAX_ITER`)
        progress (callable, optional): Called after every fit with the number of problems
            (training set, :math:`C`, class) it solved, as :func:`~kong_pyg.evaluation.svm.fit_many`
            reports them.

    Returns:
        :class:`~kong_pyg.evaluation.svm.Fits` (:attr:`Fits.iterations`: LIBLINEAR's iterations).
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import LinearSVC

    labels = np.asarray(y).reshape(-1)
    masks = np.asarray(train, dtype=bool)
    classes = np.unique(labels)
    k = 1 if classes.size == 2 else classes.size
    B, n = masks.shape
    scores = np.zeros((B, len(Cs), n, k))
    steps = np.zeros((B, len(Cs)), dtype=np.int64)
    with ignoring(ConvergenceWarning):
        for b in range(B):
            rows = np.flatnonzero(masks[b])
            for c, C in enumerate(Cs):
                clf = LinearSVC(C=float(C), dual=False, tol=tol, max_iter=max_iter)
                clf.fit(M[rows], labels[rows])
                scores[b, c] = clf.decision_function(M).reshape(n, k)
                steps[b, c] = int(np.max(clf.n_iter_))
                if progress is not None:
                    progress(k)
    return Fits(scores[..., 0] if k == 1 else scores, classes, steps, steps < max_iter)


def suits(features: Any) -> bool:
    """Whether LIBLINEAR may beat the exact solver on these features.

    Sparse features only, with few nonzeros per row for their width
    (:data:`~kong_pyg.evaluation.svm.LIBLINEAR_NNZ_RATIO`); not a Gram matrix, whose design is dense.
    """
    import scipy.sparse as sp

    from .svm import LIBLINEAR_NNZ_RATIO

    if not sp.issparse(features):
        return False
    n, d = features.shape
    return features.nnz <= n * LIBLINEAR_NNZ_RATIO * min(d + 1, n) ** 2


def fit_liblinear_if_converging(M: Any, y: Any, train: Any, Cs: Sequence[float], *,
                                progress: Optional[Callable[[int], None]] = None) -> Optional[Fits]:
    r""":func:`fit_liblinear`, or :obj:`None` where its first training set shows it would not converge.

    The first training set is fit at every :math:`C` first. Where one of its fits reaches
    LIBLINEAR's iteration cap (badly conditioned features, such as raw shortest-path counts, where
    it stops seconds later at a point that is not the optimum and disagrees with it on a few
    per cent of the graphs) the answer is :obj:`None`, and the caller fits the exact solver, which is
    then both faster and right. Otherwise the other training sets follow (the probe's fits are
    kept and reported to :obj:`progress` then).
    """
    masks = np.asarray(train, dtype=bool)
    probe = fit_liblinear(M, y, masks[:1], Cs)
    if not probe.converged.all():
        return None
    if progress is not None:
        for _ in Cs:  # one call per fit, as fit_liblinear
            progress(1 if probe.classes.size == 2 else probe.classes.size)
    rest = fit_liblinear(M, y, masks[1:], Cs, progress=progress)
    return Fits(np.concatenate([probe.scores, rest.scores]), probe.classes,
                np.concatenate([probe.iterations, rest.iterations]),
                np.concatenate([probe.converged, rest.converged]))


def resolve_capped(fits: Fits, make_design: Callable[[], Any], y: Any, train: Any, Cs: Sequence[float],
                   **options: Any) -> Tuple[Fits, int]:
    r"""LIBLINEAR's fits that reached its iteration cap, solved again by the exact solver.

    A capped fit stops at a point that is not the optimum (on NCI1's WL h = 2 features, 310 of
    1,800 fits at :math:`C = 10`). Those problems are solved by
    :func:`~kong_pyg.evaluation.svm.fit_many`, each :math:`C` alone, on :obj:`make_design()` (called
    only when a fit was capped), so every fit the caller gets is converged (or counted as not).

    Args:
        fits (Fits): :func:`fit_liblinear`'s answer.
        make_design (callable): Returns the :class:`~kong_pyg.evaluation.svm.Design`.
        y (array-like): :obj:`[n]` labels.
        train (array-like): :obj:`[B, n]` boolean training masks.
        Cs (sequence): The :math:`C` values.
        **options: Passed to :func:`~kong_pyg.evaluation.svm.fit_many`.

    Returns:
        (Fits, int): The fits, and how many were solved again.
    """
    from .svm import fit_many

    masks = np.asarray(train, dtype=bool)
    capped = ~fits.converged
    if not capped.any():
        return fits, 0
    D = make_design()
    scores, steps, ok = fits.scores.copy(), fits.iterations.copy(), fits.converged.copy()
    for c, C in enumerate(Cs):
        sets = np.flatnonzero(capped[:, c])
        if sets.size:
            exact = fit_many(D, y, masks[sets], [C], **options)
            scores[sets, c], steps[sets, c], ok[sets, c] = exact.scores[:, 0], exact.iterations[:, 0], \
                exact.converged[:, 0]
    return Fits(scores, fits.classes, steps, ok), int(capped.sum())


__all__ = ["fit_liblinear", "fit_liblinear_if_converging", "resolve_capped", "suits", "LIBLINEAR_TOL",
           "LIBLINEAR_MAX_ITER"]
