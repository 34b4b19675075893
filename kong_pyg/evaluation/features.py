r"""The features of a setting, and what the SVM is fit on.

:func:`setting_features` computes one setting's features on all graphs:
explicit maps as sparse or dense matrices, kernels without an explicit map
as a :class:`Gram` matrix. For an exact KONG map with :math:`p \geq 2` it
picks the cheaper of two exact routes (:func:`kong_route`): the explicit
map of :class:`~kong_pyg.KongVectorizer` (one column per distinct multiset
of :math:`p` k-grams) or the Gram matrix from node inner products
(:func:`kong_pyg.gram_matrix`), by a cost model; ``benchmarks/bench_eval.py
--parts routes`` times both routes against its choice
(``docs/results/bench_routes.md``).

Either way the SVM is the same: :func:`design_of` turns the features into
an exact basis of their span with the intercept folded in
(:func:`kong_pyg.evaluation.svm.design`), at most one column per graph (and the intercept's), on
which scikit-learn's LinearSVC problem has the same solution and the same
predictions.
"""
from typing import Any, Dict, NamedTuple, Optional, Tuple, Union, cast

import numpy as np
import scipy.sparse as sp

from .grid import Setting

#: A feature matrix: dense or sparse, one row per graph.
Matrix = Union[np.ndarray, sp.spmatrix]

#: The explicit map's seconds for E entries of the node maps' symmetric p-th powers:
#: EXPLICIT_SECONDS_PER_ENTRY * E ** EXPLICIT_EXPONENT (sorting and vocabularies: a little more than
#: linear) ...
EXPLICIT_SECONDS_PER_ENTRY = 1.35e-9
EXPLICIT_EXPONENT = 1.33
#: ... and the Gram route's per pair of distinct node maps (U x U blocks of products, powers and pooling),
#: whatever their nonzeros, ...
GRAM_SECONDS_PER_PAIR = 3.4e-9
#: ... and per entry of the [graphs, graphs] output, once per block of node maps (its pooling pass).
#: All fitted to one-thread CPU times of the paper grid's p >= 2 settings on MUTAG, PTC_MR, ENZYMES,
#: PROTEINS and NCI1 (``benchmarks/bench_eval.py --parts routes``).
GRAM_SECONDS_PER_OUTPUT = 2.0e-8
#: Fixed cost of either route (its setup and calls), seconds.
ROUTE_OVERHEAD = 0.005


class Gram(NamedTuple):
    """A kernel (Gram) matrix :obj:`[n, n]` standing in for features.

    Attributes:
        K (numpy.ndarray): The matrix (a torch tensor is read as its NumPy
            array, a ``float16`` or ``bfloat16`` one as ``float64`` checked
            at its own rounding).
        source (str): Where it comes from (reported with the results).
    """

    K: np.ndarray
    source: str = "kernel matrix"

    @property
    def shape(self) -> Tuple[int, ...]:
        """:obj:`(n, n)`."""
        return tuple(self.K.shape)

    @property
    def eps(self) -> Optional[float]:
        """The machine epsilon of the matrix as it was given, where :obj:`K` holds it in a wider type.

        (A torch ``bfloat16`` or ``float16`` matrix, read as ``float64``: its rounding sets the
        tolerance of the positive semi-definiteness check.) :obj:`None`: :obj:`K`'s own.
        """
        return getattr(self, "_given_eps", None)


class _WidenedGram(Gram):
    """A :class:`Gram` whose :obj:`K` holds a matrix given in a narrower type (:attr:`Gram.eps`)."""

    _given_eps: float


def _gram(K: Any, source: str, eps: Optional[float]) -> Gram:
    """A :class:`Gram` of :obj:`K`, remembering the precision it was given in (where not its own)."""
    if eps is None:
        return Gram(K, source)
    out = _WidenedGram(K, source)
    out._given_eps = eps
    return out


def kong_route(cfg: Any, graphs: Any) -> Tuple[str, Dict[str, float]]:
    r"""Which exact route is cheaper for a KONG map with :math:`p \geq 2`.

    The explicit map costs about :math:`a E^{1.33}` for :math:`E` entries of
    the node maps' symmetric powers, :math:`E = \sum_v \binom{n_v + p - 1}{p}`
    (:math:`n_v` nonzeros of :math:`g(c_v)`); the Gram route about
    :math:`b U^2 + c n^2 \lceil U / r \rceil` for :math:`U` distinct node maps, :math:`n` graphs and
    blocks of :math:`r` node maps (:func:`kong_pyg.node_pairs.block_rows`; :data:`EXPLICIT_SECONDS_PER_ENTRY`,
    :data:`GRAM_SECONDS_PER_PAIR`, :data:`GRAM_SECONDS_PER_OUTPUT`). Both give the same kernel; only the
    time differs, except where one route cannot hold a setting. The explicit map stops at a degree
    of 170 (:math:`p!` overflows) and at values whose products could overflow ``float64`` (graph maps
    beyond :data:`MAX_FEATURE_VALUE`, or beyond :math:`10^{300}` where rows are normalized); its entries
    are bounded by :math:`\max_G \sum_{v \in G} \|g(c_v)\|^p` (an entry of a node's symmetric power
    is at most its norm, :math:`\|g(c_v)\|^p`). Those settings take the Gram route. The other way
    round, :func:`setting_features` computes a normalized setting that the Gram route refuses
    (self-kernels beyond its rescaled range, :class:`kong_pyg.gram.GramRangeError`) with the
    explicit map where that holds it: it normalizes each row alone.

    Args:
        cfg (KongConfig): An exact configuration with :obj:`degree >= 2`.
        graphs: The graphs.

    Returns:
        (str, dict): :obj:`"explicit"` or :obj:`"gram"`, and the estimates.
    """
    from ..gram import node_maps

    return _route_of_maps(cfg, node_maps(cfg, graphs))


def _route_of_maps(cfg: Any, maps: Any) -> Tuple[str, Dict[str, float]]:
    """:func:`kong_route` of the graphs' node maps (:func:`kong_pyg.gram.node_maps`)."""
    import torch

    from ..exact import power_size
    from ..node_pairs import block_rows

    nodes = torch.bincount(maps.unique, weights=maps.mult, minlength=maps.num_unique)  # (per distinct map)
    entries = power_size(maps.rows, maps.num_unique, cfg.degree, nodes)
    # (entries capped: a float power of more than about 1e231 raises, and counts can overflow to inf)
    explicit = ROUTE_OVERHEAD + EXPLICIT_SECONDS_PER_ENTRY * min(entries, 1e200) ** EXPLICIT_EXPONENT
    u, n = float(maps.num_unique), float(maps.num_graphs)
    blocks = -(-maps.num_unique // block_rows(maps.num_graphs))
    gram = ROUTE_OVERHEAD + GRAM_SECONDS_PER_PAIR * u * u + GRAM_SECONDS_PER_OUTPUT * n * n * blocks
    est = {"explicit_entries": entries, "distinct_nodes": float(maps.num_unique),
           "explicit_s_est": explicit, "gram_s_est": gram,
           "explicit_log10_max_bound": _explicit_bound(cfg, maps)}
    return ("gram" if gram < explicit or not _explicit_fits(cfg, est) else "explicit"), est


#: The largest values (log10) of a normalized explicit map's rows before they are normalized.
NORMALIZED_LOG10_LIMIT = 300.0


def _explicit_bound(cfg: Any, maps: Any) -> float:
    r""":math:`\log_{10}` of a bound on the explicit graph map's entries: :math:`\max_G \sum_v \|g(c_v)\|^p`.

    Summed per graph in :math:`\log_{10}`, from the largest term (no power overflows).
    """
    import math

    import torch

    from ..exact import row_norms

    if not maps.num_unique:
        return -math.inf
    norm = row_norms(maps.rows, maps.num_unique)
    if not bool(torch.isfinite(norm).all()):
        return math.inf
    with torch.no_grad():
        term = cfg.degree * torch.log10(norm).index_select(0, maps.unique) + torch.log10(maps.mult)
        top = torch.full((maps.num_graphs,), -math.inf, dtype=term.dtype, device=term.device)
        top.scatter_reduce_(0, maps.graph, term, reduce="amax")
        shifted = torch.pow(10.0, term - top.index_select(0, maps.graph))  # (zero norms: 0; a graph of them:
        shifted = torch.nan_to_num(shifted, nan=0.0)  # -inf - -inf, NaN, read as 0)
        total = torch.zeros_like(top).index_add_(0, maps.graph, shifted)
        return float((top + torch.log10(total)).nan_to_num(nan=-math.inf, neginf=-math.inf).max())


def _explicit_fits(cfg: Any, est: Dict[str, float]) -> bool:
    """Whether the explicit map can hold a setting (see :func:`kong_route`)."""
    import math

    from ..exact import MAX_EXACT_DEGREE

    limit = NORMALIZED_LOG10_LIMIT if cfg.normalize else math.log10(MAX_FEATURE_VALUE)
    return cfg.degree <= MAX_EXACT_DEGREE and est["explicit_log10_max_bound"] <= limit


def setting_features(setting: Setting, graphs: Any, seed: int = 0) -> Union[Matrix, Gram]:
    r"""The features of one setting on :obj:`graphs`.

    KONG: the exact map as CSR (:class:`~kong_pyg.KongVectorizer`'s, computed by
    :class:`~kong_pyg.featuremap.FeatureMap` without importing scikit-learn), or for
    :math:`p \geq 2` the :class:`Gram` matrix from node inner products when
    :func:`kong_route` finds it cheaper (the same kernel, exactly); a sketch
    as a dense matrix; a :obj:`depths="sum"` setting: the sum of its
    per-depth kernels (:mod:`kong_pyg.evaluation.depths`); :obj:`"kong-mean"`:
    the :class:`Gram` of the mean of a grid's normalised kernels. WL, SP and k-walk:
    CSR counts (:mod:`kong_pyg.evaluation.baselines`); GraKeL kernels: a
    :class:`Gram` matrix.

    Args:
        setting (Setting): The setting.
        graphs: A PyG dataset or a list of :class:`~torch_geometric.data.Data`.
        seed (int, optional): The seed of KONG's hash tables. (default: :obj:`0`)

    Returns:
        :obj:`[num_graphs, D]` features, or a :class:`Gram`.
    """
    p = setting.config
    if setting.method == "kong":
        from ..exact import ExactMapTooLarge
        from ..featuremap import FeatureMap
        from ..threads import torch_threads

        if p["depths"] == "sum":
            from .depths import depth_sum_features

            return depth_sum_features(setting, graphs, seed)
        cfg = setting.kong_config(seed=seed)
        refused: Optional[Exception] = None
        if cfg.dim is None and cfg.degree >= 2:
            from ..gram import GramRangeError, gram_of_maps, node_maps
            from ..graphs import as_graph_sequence

            maps = node_maps(cfg, as_graph_sequence(graphs))  # (computed once: the route's and the Gram's)
            route, est = _route_of_maps(cfg, maps)
            if route == "gram":
                try:
                    return Gram(gram_of_maps(cfg, maps), "KONG Gram matrix from node inner products")
                except GramRangeError as err:
                    if not (cfg.normalize and _explicit_fits(cfg, est)):
                        raise
                    refused = err  # (the explicit map may hold it: rows normalized one by one)
            del maps
        with torch_threads(1):  # as KongVectorizer's default (threads=1)
            try:
                return FeatureMap(cfg).fit_transform(graphs)
            except ExactMapTooLarge as too_large:  # (the Gram route's refusal is the cause to name)
                if refused is None:
                    raise
                raise refused from too_large
    if setting.method == "kong-mean":
        from .depths import grid_mean_features

        return grid_mean_features(setting, graphs, seed)
    from . import baselines

    if setting.method == "wl":
        return baselines.wl_features(graphs, hops=p["hops"], normalize=p["normalize"])
    if setting.method == "kw":
        return baselines.walk_features(graphs, length=p["length"])
    if setting.method == "wl-grakel":
        return Gram(baselines.grakel_gram(graphs, "wl", hops=p["hops"]), "GraKeL kernel matrix")
    if setting.method == "sp":
        return baselines.sp_features(graphs, normalize=p["normalize"])
    raise ValueError(f"setting {setting.name!r} has no features to compute")


#: Feature values above this overflow float64 in their products (the Gram matrix).
MAX_FEATURE_VALUE = 1e150


def _tensor_as_numpy(value: Any) -> Any:
    """A torch tensor as its NumPy array (on the CPU); anything else as it is."""
    if type(value).__module__.startswith("torch") and hasattr(value, "detach"):
        from ..outputs import numpy_of

        return numpy_of(value, "a feature tensor")
    return value


def checked_features(X: Any, rows: int, name: str) -> Union[Matrix, Gram]:
    """:obj:`X` if it is a real :obj:`[rows, d]` NumPy or SciPy matrix or a :class:`Gram`, else a clear error.

    A :class:`torch.Tensor` is taken as its NumPy array (on the CPU).

    :obj:`name` names the entry in the messages (e.g. :obj:`"features of setting 2"`).
    """
    from ..inputs import unmasked

    X = unmasked(_tensor_as_numpy(X), name)  # (KongSketch.readout's)
    if isinstance(X, Gram):
        X = _gram(unmasked(X.K, f"{name}: the Gram's K"), X.source, X.eps)
    if isinstance(X, Gram) and not isinstance(X.K, np.ndarray):  # (a tensor, a list, a SciPy matrix)
        from .basis import rounding_of

        K = X.K.toarray() if sp.issparse(X.K) else X.K
        eps = X.eps if X.eps is not None else rounding_of(K)  # (a half tensor's, before it becomes float64)
        K = _tensor_as_numpy(K)
        try:  # (a float16/float32 matrix keeps its dtype: its rounding sets the PSD check's tolerance)
            K = np.asarray(K)
            K = K if K.dtype in (np.float16, np.float32) else np.asarray(K, dtype=np.float64)
            X = _gram(K, X.source, eps if eps > rounding_of(K) else X.eps)
        except (TypeError, ValueError):
            raise TypeError(f"{name}: the Gram's K must be a matrix of numbers (got "
                            f"{type(X.K).__name__})") from None
    if not (isinstance(X, (np.ndarray, Gram)) or sp.issparse(X)):
        raise TypeError(f"{name} must be a NumPy array, a SciPy sparse matrix or a Gram (got "
                        f"{type(X).__name__}); 'features' holds one such entry (or a callable "
                        "returning one) per setting")
    if sp.issparse(X) and X.format in ("dok", "lil"):  # (their values are no flat array: .data is read)
        X = X.tocsr()
    values = X.K if isinstance(X, Gram) else X
    if values.ndim != 2 or (isinstance(X, Gram) and values.shape[0] != values.shape[1]):
        raise ValueError(f"{name} must be a {'square ' if isinstance(X, Gram) else ''}2-D matrix "
                         f"(got shape {tuple(values.shape)})")
    if values.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers (got {values.dtype})")
    if isinstance(X, Gram) and values.size and np.isfinite(values).all():  # (else: check_finite's error)
        # (fit as (K + K^T) / 2 it would be another kernel)
        top = max(float(values.max()), -float(values.min()))
        gap = float(np.abs(values - values.T).max())
        if gap > 1e-9 * top:
            raise ValueError(f"{name}: the Gram matrix is not symmetric (entries differ from their "
                             f"transposes by up to {gap:.3g}, the largest entry is {top:.3g}): a kernel "
                             "matrix K = X X^T is")
    if X.shape[0] != rows:
        raise ValueError(f"{name} have {X.shape[0]} rows, y has {rows}")
    return X


def check_finite(features: Union[Matrix, Gram]) -> None:
    """A ValueError naming NaN, infinity or values whose products overflow in features (or a Gram matrix)."""
    gram = isinstance(features, Gram)
    what, verb = ("the Gram matrix", "contains") if gram else ("the features", "contain")
    if sp.issparse(features) and getattr(features, "format", "") in ("dok", "lil"):  # (no flat values)
        features = cast(Any, features).tocsr()
    values = np.asarray(features.K if isinstance(features, Gram) else (
        features.data if sp.issparse(features) else features))
    if np.isnan(values).any():
        raise ValueError(f"{what} {verb} NaN")
    if np.isinf(values).any():
        raise ValueError(f"{what} {verb} infinity")
    top = max(float(values.max()), -float(values.min())) if values.size else 0.0  # no |values| copy
    if not isinstance(features, Gram) and top > MAX_FEATURE_VALUE:
        raise ValueError(f"{what} hold values up to {top:.3g}, whose products overflow float64 (at most "
                         f"{MAX_FEATURE_VALUE:g}): scale them down, or normalize them")


def design_of(features: Union[Matrix, Gram]) -> Tuple[Any, Dict[str, Any]]:
    """The SVM design of features or a Gram matrix, and a description of it.

    Returns:
        (Design, dict): :func:`kong_pyg.evaluation.svm.design` and
        :obj:`{"features": ..., "basis_columns": m}`.
    """
    from .svm import design

    check_finite(features)
    D = design(None, features.K, eps=features.eps) if isinstance(features, Gram) else design(features)
    return D, {"features": _describe(features), "basis_columns": int(D.Z.shape[1])}


def _describe(features: Union[Matrix, Gram]) -> str:
    """What the SVM is fit on, in words."""
    if isinstance(features, Gram):
        return features.source
    kind = "sparse" if sp.issparse(features) else "dense"
    return f"{kind} features, {features.shape[1]} columns"


def kernel_map(K: np.ndarray, rtol: float = 1e-12, given: bool = False,
               eps: Optional[float] = None) -> np.ndarray:
    r"""Features :math:`\Psi` with :math:`\Psi \Psi^\top = K`.

    Args:
        K (numpy.ndarray): A symmetric PSD matrix :obj:`[n, n]`.
        rtol (float, optional): Eigenvalues below :obj:`rtol` times the
            largest are dropped. (default: :obj:`1e-12`)
        given (bool, optional): :obj:`K` is a user's Gram matrix, refused if
            clearly not positive semi-definite
            (:func:`~kong_pyg.evaluation.basis.check_psd`). (default: :obj:`False`)
        eps (float, optional): The machine epsilon of :obj:`K` as the user
            gave it, where coarser than its dtype's (:attr:`Gram.eps`): the
            check's tolerance. (default: :obj:`None`: from :obj:`K`'s dtype)

    Returns:
        :class:`numpy.ndarray` :obj:`[n, r]`, one column per kept eigenvalue
        (:obj:`[n, 1]` of zeros when :obj:`K` is zero).
    """
    from .basis import check_psd, rounding_of

    eps = max(rounding_of(K), eps or 0.0)
    K = np.asarray(_tensor_as_numpy(K), dtype=np.float64)  # (a bfloat16 tensor: through float64)
    w, V = np.linalg.eigh((K + K.T) / 2)
    if given:
        check_psd(w, eps)
    top = float(w.max()) if w.size else 0.0
    if not top > 0:
        return np.zeros((K.shape[0], 1))
    keep = w > rtol * top
    return np.ascontiguousarray(V[:, keep] * np.sqrt(w[keep]))


def design_matrix(features: Union[Matrix, Gram], project: Union[bool, str] = "auto") -> Matrix:
    r"""Features with the same linear classifier: :obj:`features` or :func:`kernel_map` of their Gram.

    Kept for users of the earlier harness; :func:`design_of` is what the
    evaluation fits on now.

    Args:
        features: :obj:`[n, d]` features (dense or sparse) or a :class:`Gram`.
        project (bool or str, optional): :obj:`"auto"` projects a
            :class:`Gram` always, a dense matrix when it has more columns
            than rows, and a sparse one when it also has more than
            :math:`n^2` nonzeros; :obj:`True` always, :obj:`False` never (not
            possible for a :class:`Gram`). (default: :obj:`"auto"`)

    Returns:
        A float64 CSR or dense matrix with :math:`n` rows.
    """
    if not (isinstance(project, bool) or (isinstance(project, str) and project == "auto")):
        raise ValueError(f"'project' must be True, False or 'auto' (got {project!r})")  # (others were False)
    if isinstance(features, Gram):
        return kernel_map(features.K, given=True, eps=features.eps)
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


__all__ = ["Gram", "Matrix", "setting_features", "kong_route", "design_of", "check_finite",
           "checked_features", "kernel_map", "design_matrix"]
