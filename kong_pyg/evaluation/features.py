r"""The features of a setting, and what the classifier is fit on.

When a feature matrix has more columns than rows (and, if sparse, many
nonzeros; see :func:`design_matrix`), the classifier is fit on
:math:`\Psi = V \Lambda^{1/2}` from the eigendecomposition :math:`X X^\top =
V \Lambda V^\top` (at most one column per graph): :math:`\Psi = X U` for an
orthonormal :math:`U` spanning the rows of :math:`X`, so the linear SVM on
:math:`\Psi` is the same classifier as on :math:`X` (same objective, same
predictions, up to eigenvalues below :math:`10^{-12}` of the largest) and
much faster to fit. Kernel baselines given as Gram matrices go the same way.
"""
from typing import Any, NamedTuple, Tuple, Union

import numpy as np
import scipy.sparse as sp

from .grid import Setting

#: A feature matrix: dense or sparse, one row per graph.
Matrix = Union[np.ndarray, sp.spmatrix]


class Gram(NamedTuple):
    """A kernel (Gram) matrix :obj:`[n, n]` standing in for features."""

    K: np.ndarray

    @property
    def shape(self) -> Tuple[int, ...]:
        """:obj:`(n, n)`."""
        return tuple(self.K.shape)


def setting_features(setting: Setting, graphs: Any, seed: int = 0) -> Union[Matrix, Gram]:
    r"""The feature matrix of one setting on :obj:`graphs`.

    KONG: :class:`~kong_pyg.KongVectorizer` (CSR for the exact map, dense
    for a sketch); WL and k-walk: CSR counts
    (:mod:`kong_pyg.evaluation.baselines`); GraKeL kernels: a :class:`Gram`
    matrix.

    Args:
        setting (Setting): The setting.
        graphs: A PyG dataset or a list of :class:`~torch_geometric.data.Data`.
        seed (int, optional): The seed of KONG's hash tables. (default: :obj:`0`)

    Returns:
        :obj:`[num_graphs, D]` features, or a :class:`Gram`.
    """
    p = setting.config
    if setting.method == "kong":
        from ..vectorizer import KongVectorizer

        if p["depths"] == "sum":
            from .depths import depth_sum_features

            return depth_sum_features(setting, graphs, seed)
        return KongVectorizer(config=setting.kong_config(seed=seed)).fit_transform(graphs)
    from . import baselines

    if setting.method == "wl":
        return baselines.wl_features(graphs, hops=p["hops"], normalize=p["normalize"])
    if setting.method == "kw":
        return baselines.walk_features(graphs, length=p["length"])
    if setting.method == "wl-grakel":
        return Gram(baselines.grakel_gram(graphs, "wl", hops=p["hops"]))
    if setting.method == "sp":
        return baselines.sp_features(graphs, normalize=p["normalize"])
    raise ValueError(f"setting {setting.name!r} has no features to compute")


def kernel_map(K: np.ndarray, rtol: float = 1e-12) -> np.ndarray:
    r"""Features :math:`\Psi` with :math:`\Psi \Psi^\top = K`.

    Args:
        K (numpy.ndarray): A symmetric PSD matrix :obj:`[n, n]`.
        rtol (float, optional): Eigenvalues below :obj:`rtol` times the
            largest are dropped. (default: :obj:`1e-12`)

    Returns:
        :class:`numpy.ndarray` :obj:`[n, r]`, one column per kept eigenvalue
        (:obj:`[n, 1]` of zeros when :obj:`K` is zero).
    """
    K = np.asarray(K, dtype=np.float64)
    w, V = np.linalg.eigh((K + K.T) / 2)
    top = float(w.max()) if w.size else 0.0
    if not top > 0:
        return np.zeros((K.shape[0], 1))
    keep = w > rtol * top
    return np.ascontiguousarray(V[:, keep] * np.sqrt(w[keep]))


def design_matrix(features: Union[Matrix, Gram], project: Union[bool, str] = "auto") -> Matrix:
    r"""What the classifier is fit on.

    :obj:`features` itself, or :func:`kernel_map` of its Gram matrix
    (:math:`n` rows, at most :math:`n` columns, the same linear classifier).

    Args:
        features: :obj:`[n, d]` features (dense or sparse) or a :class:`Gram`.
        project (bool or str, optional): :obj:`"auto"` projects a
            :class:`Gram` always, a dense matrix when it has more columns
            than rows, and a sparse one when it also has more than
            :math:`n^2` nonzeros (LIBLINEAR's work per pass is the number of
            stored values: at most :math:`n^2` after the projection; on NCI1
            a sparse map with :math:`0.2 n^2` nonzeros fits 7x faster than
            its projection); :obj:`True` always, :obj:`False` never (not
            possible for a :class:`Gram`). (default: :obj:`"auto"`)

    Returns:
        A float64 CSR or dense matrix with :math:`n` rows.
    """
    if isinstance(features, Gram):
        return kernel_map(features.K)
    n, d = features.shape
    sparse = sp.issparse(features)
    if project == "auto":
        project = d > n and (not sparse or int(getattr(features, "nnz")) > n * n)
    if project is True:
        K: Any = features @ features.T
        return kernel_map(K.toarray() if sp.issparse(K) else np.asarray(K))
    if sp.issparse(features):
        return sp.csr_matrix(features, dtype=np.float64)
    return np.ascontiguousarray(features, dtype=np.float64)


__all__ = ["Gram", "Matrix", "setting_features", "kernel_map", "design_matrix"]
