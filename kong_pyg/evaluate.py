r"""Graph classification with KONG features, as the paper did it and honestly.

:func:`classify` is what ``kong-pyg classify`` runs: it computes the
features of every setting of a grid **once**, then fits scikit-learn's
:class:`~sklearn.svm.LinearSVC` in stratified :math:`F`-fold cross-validation
repeated over :math:`R` random permutations, for every :math:`C` of a grid.

Two protocols read the same fits:

* ``paper`` (the KONG paper's Table 1): the (setting, :math:`C`) with the
  best mean accuracy over all :math:`R \times F` test folds is reported with
  that mean. The test folds choose the setting, so the number is optimistic.
* ``nested`` (the honest number): in every outer fold the (setting,
  :math:`C`) is chosen by an inner stratified :math:`I`-fold CV on the
  outer training part only, then scored on the outer test fold.

Both report the mean accuracy and its standard deviation over the
:math:`R` repeat means (each repeat mean is the mean over its :math:`F`
test folds); ``fold_std`` is the standard deviation over all
:math:`R \times F` fold accuracies. Repeat :math:`r` splits with
:class:`~sklearn.model_selection.StratifiedKFold` (shuffled,
:obj:`random_state=seed + r`); the inner splits of repeat :math:`r` use the
same seed. Ties go to the earlier setting, then the smaller :math:`C`.

When a feature matrix has more columns than rows (and, if sparse, many
nonzeros; see :func:`design_matrix`), the classifier is fit on
:math:`\Psi = V \Lambda^{1/2}` from the eigendecomposition :math:`X X^\top =
V \Lambda V^\top` (at most one column per graph): :math:`\Psi = X U` for an
orthonormal :math:`U` spanning the rows of :math:`X`, so the linear SVM on
:math:`\Psi` is the same classifier as on :math:`X` (same objective, same
predictions, up to eigenvalues below :math:`10^{-12}` of the largest) and
much faster to fit. Kernel baselines given as Gram matrices go the same way.

LinearSVC runs its primal solver (:obj:`dual=False`: it converges on these
badly scaled count features where the dual coordinate descent stalls) with
:obj:`tol=1e-2`, LIBLINEAR's own default for that solver; fits that reach
:obj:`max_iter` are counted and reported, not hidden.
"""
import itertools
import json
import math
import os
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np
import scipy.sparse as sp

from .inputs import KERNELS, NORMS, ORDERS, TRAVERSALS, check_choice, check_int

PROTOCOLS = ("paper", "nested", "both")
METHODS = ("kong", "wl", "wl-grakel", "sp", "kw")
DEFAULT_C = (0.1, 1.0, 10.0)
#: Sketch sizes of the accuracy-against-b curve (the paper's Figure 3).
PLOT_SIZES = (64, 128, 256, 512, 1024, 2048, 4096, 8192)

#: Every KONG setting and its default (see :class:`~kong_pyg.KongVectorizer`).
KONG_DEFAULTS: Dict[str, Any] = {
    "k": 1,
    "hops": 2,
    "traversal": "bfs",
    "kernel": "poly",
    "degree": 1,
    "const": 0.0,
    "relabel": False,
    "dim": None,
    "order": "edge",
    "blended": False,
    "normalize": False,
    "norm": "exact",
    "edge_labels": True,
}

#: The settings of each method and their defaults.
METHOD_DEFAULTS: Dict[str, Dict[str, Any]] = {
    "kong": KONG_DEFAULTS,
    "wl": {"hops": 2},
    "wl-grakel": {"hops": 2},
    "sp": {},
    "kw": {"length": 5},
}


def paper_grid(method: str = "kong") -> Dict[str, list]:
    r"""The grid of the KONG paper's Table 1 for :obj:`method`.

    KONG: :math:`h = 2`, :math:`k = 1`, BFS traversal, exact explicit map,
    polynomial and cosine kernels of degree :math:`p = 1, \ldots, 4`, with
    and without one WL relabelling round ("rlb"): 16 settings. WL:
    :math:`h \in \{1, 2\}`; k-walk: :math:`k \in \{5, 6\}`; shortest path:
    one setting.
    """
    check_choice("method", method, METHODS)
    return {
        "kong": {
            "k": [1], "hops": [2], "traversal": ["bfs"], "kernel": ["poly", "cosine"],
            "degree": [1, 2, 3, 4], "relabel": [False, True],
        },
        "wl": {"hops": [1, 2]},
        "wl-grakel": {"hops": [1, 2]},
        "sp": {},
        "kw": {"length": [5, 6]},
    }[method]


class Setting(NamedTuple):
    """One point of a grid: a method and all its parameters."""

    method: str
    params: Tuple[Tuple[str, Any], ...]

    @property
    def config(self) -> Dict[str, Any]:
        """The parameters as a dict."""
        return dict(self.params)

    @property
    def name(self) -> str:
        """A short name in the paper's style (``cosine-rlb-2``)."""
        p = self.config
        if self.method == "kong":
            base = f"{p['kernel']}{'-rlb' if p['relabel'] else ''}-{p['degree']}"
            extra = []
            for key, short in (("k", "k"), ("hops", "h")):
                if p[key] != KONG_DEFAULTS[key]:
                    extra.append(f"{short}={p[key]}")
            if p["traversal"] != "bfs":
                extra.append(p["traversal"])
            if p["dim"] is not None:
                extra.append(f"b={p['dim']}")
            if p["const"]:
                extra.append(f"c={p['const']:g}")
            if p["order"] != "edge":
                extra.append(f"order={p['order']}")
            if p["blended"]:
                extra.append("blended")
            if p["normalize"]:
                extra.append("gnorm")
            if p["dim"] is not None and p["kernel"] == "cosine" and p["norm"] != "exact":
                extra.append(f"norm={p['norm']}")
            if not p["edge_labels"]:
                extra.append("no-edge-labels")
            return base + (f" [{', '.join(extra)}]" if extra else "")
        if self.method in ("wl", "wl-grakel"):
            return f"{self.method}-h{p['hops']}"
        if self.method == "kw":
            return f"kw-{p['length']}"
        if self.method == "features":
            return f"features-{p['index']}"
        return self.method


def _as_list(value) -> list:
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def expand_grid(method: str = "kong", grid: Union[None, Dict[str, Any], Sequence[Dict[str, Any]]] = None
                ) -> List[Setting]:
    r"""The settings of a grid, in order, without duplicates.

    Args:
        method (str, optional): One of :obj:`"kong"`, :obj:`"wl"`,
            :obj:`"wl-grakel"`, :obj:`"sp"`, :obj:`"kw"`. (default: :obj:`"kong"`)
        grid (dict or list of dicts, optional): A dict of values or lists of
            values (their product is the grid; missing keys take their
            default), or an explicit list of dicts. (default:
            :func:`paper_grid`)
    """
    check_choice("method", method, METHODS)
    defaults = METHOD_DEFAULTS[method]
    if grid is None:
        grid = paper_grid(method)
    if isinstance(grid, dict):
        keys = list(grid)
        for key in keys:
            if key not in defaults:
                raise ValueError(
                    f"unknown setting {key!r} for method {method!r}; expected one of {sorted(defaults)}"
                )
        values = [_as_list(grid[key]) for key in keys]
        for key, vals in zip(keys, values):
            if not vals:
                raise ValueError(f"grid entry {key!r} is empty")
        points = [dict(zip(keys, combo)) for combo in itertools.product(*values)]
    else:
        points = [dict(p) for p in grid]
        if not points:
            raise ValueError("'grid' is an empty list of settings")
    settings, seen = [], set()
    for point in points:
        for key in point:
            if key not in defaults:
                raise ValueError(
                    f"unknown setting {key!r} for method {method!r}; expected one of {sorted(defaults)}"
                )
        full = {**defaults, **point}
        _check_setting(method, full)
        if method == "kong" and full["kernel"] == "cosine":
            full["const"] = 0.0  # no constant coordinate in the cosine kernel
        if method == "kong" and (full["dim"] is None or full["kernel"] == "poly"):
            full["norm"] = "exact"  # sketch norms only matter for sketched cosine
        setting = Setting(method, tuple((key, full[key]) for key in defaults))
        if setting not in seen:
            seen.add(setting)
            settings.append(setting)
    return settings


def _check_setting(method: str, p: Dict[str, Any]) -> None:
    if method == "kong":
        from .nn import KongSketch

        if p["dim"] is not None:
            check_int("dim", p["dim"], 1)
        for key in ("relabel", "blended", "normalize", "edge_labels"):
            if not isinstance(p[key], (bool, np.bool_)):
                raise TypeError(f"'{key}' must be True or False (got {p[key]!r})")
            p[key] = bool(p[key])
        p["const"] = float(p["const"]) if isinstance(p["const"], (int, float)) else p["const"]
        KongSketch(k=p["k"], hops=p["hops"], traversal=p["traversal"], dim=p["dim"] or 1,
                   kernel=p["kernel"], degree=p["degree"], const=p["const"], order=p["order"],
                   relabel=p["relabel"], blended=p["blended"], norm=p["norm"])
    elif method in ("wl", "wl-grakel"):
        check_int("hops", p["hops"], 0)
    elif method == "kw":
        check_int("length", p["length"], 0)


class Gram(NamedTuple):
    """A kernel (Gram) matrix :obj:`[n, n]` standing in for features."""

    K: np.ndarray

    @property
    def shape(self) -> Tuple[int, int]:
        """:obj:`(n, n)`."""
        return self.K.shape


def setting_features(setting: Setting, graphs, seed: int = 0):
    r"""The feature matrix of one setting on :obj:`graphs`.

    KONG: :class:`~kong_pyg.KongVectorizer` (CSR for the exact map, dense
    for a sketch); WL and k-walk: CSR counts (:mod:`kong_pyg.baselines`);
    GraKeL kernels: a :class:`Gram` matrix.
    """
    p = setting.config
    if setting.method == "kong":
        from .vectorizer import KongVectorizer

        return KongVectorizer(seed=seed, **p).fit_transform(graphs)
    from . import baselines

    if setting.method == "wl":
        return baselines.wl_features(graphs, hops=p["hops"])
    if setting.method == "kw":
        return baselines.walk_features(graphs, length=p["length"])
    if setting.method == "wl-grakel":
        return Gram(baselines.grakel_gram(graphs, "wl", hops=p["hops"]))
    return Gram(baselines.grakel_gram(graphs, "sp"))


def kernel_map(K: np.ndarray, rtol: float = 1e-12) -> np.ndarray:
    r"""Features :math:`\Psi` with :math:`\Psi \Psi^\top = K`.

    One column per eigenvalue of the symmetric PSD matrix :obj:`K` above
    :obj:`rtol` times the largest.
    """
    K = np.asarray(K, dtype=np.float64)
    w, V = np.linalg.eigh((K + K.T) / 2)
    top = float(w.max()) if w.size else 0.0
    if not top > 0:
        return np.zeros((K.shape[0], 1))
    keep = w > rtol * top
    return np.ascontiguousarray(V[:, keep] * np.sqrt(w[keep]))


def design_matrix(features, project: Union[bool, str] = "auto"):
    r"""What the classifier is fit on.

    :obj:`features` itself, or :func:`kernel_map` of its Gram matrix
    (:math:`n` rows, at most :math:`n` columns, the same linear classifier).
    :obj:`project="auto"` projects a :class:`Gram` always, a dense matrix
    when it has more columns than rows, and a sparse one when it also has
    more than :math:`n^2` nonzeros (LIBLINEAR's work per pass is the number
    of stored values: at most :math:`n^2` after the projection; on NCI1 a
    sparse map with :math:`0.2 n^2` nonzeros fits 7x faster than its
    projection); :obj:`True` always, :obj:`False` never (not possible for a
    :class:`Gram`).
    """
    if isinstance(features, Gram):
        return kernel_map(features.K)
    n, d = features.shape
    if project == "auto":
        project = d > n and (not sp.issparse(features) or features.nnz > n * n)
    if project is True:
        K = features @ features.T
        K = K.toarray() if sp.issparse(K) else np.asarray(K)
        return kernel_map(K)
    if sp.issparse(features):
        return sp.csr_matrix(features, dtype=np.float64)
    return np.ascontiguousarray(features, dtype=np.float64)


# -- cross-validation ---------------------------------------------------------


class Splits(NamedTuple):
    """Train/test index pairs: :obj:`outer[r][f]`, :obj:`inner[r][f][i]`."""

    outer: List[List[Tuple[np.ndarray, np.ndarray]]]
    inner: Optional[List[List[List[Tuple[np.ndarray, np.ndarray]]]]]


def make_splits(y: np.ndarray, repeats: int, folds: int, inner_folds: Optional[int], seed: int,
                inner_repeats: Optional[int] = None) -> Splits:
    """Stratified shuffled splits, repeat :obj:`r` seeded with :obj:`seed + r`.

    Inner splits (when :obj:`inner_folds` is given) for the first
    :obj:`inner_repeats` repeats (default: all), seeded the same way.
    """
    from sklearn.model_selection import StratifiedKFold

    _, counts = np.unique(y, return_counts=True)
    if counts.size < 2:
        raise ValueError("the graphs have a single class; classification needs at least two")
    if int(counts.min()) < folds:
        raise ValueError(
            f"folds={folds} but the smallest class has only {int(counts.min())} graphs; "
            "use fewer folds"
        )
    if inner_folds is not None and int(counts.min()) * (folds - 1) // folds < inner_folds:
        raise ValueError(
            f"inner_folds={inner_folds} is too many for the smallest class "
            f"({int(counts.min())} graphs, about {int(counts.min()) * (folds - 1) // folds} per "
            "outer training part); use fewer inner folds"
        )
    zeros = np.zeros(y.size)
    outer, inner = [], [] if inner_folds is not None else None
    for r in range(repeats):
        parts = list(StratifiedKFold(folds, shuffle=True, random_state=seed + r).split(zeros, y))
        outer.append(parts)
        if inner is not None and r < (repeats if inner_repeats is None else inner_repeats):
            rows = []
            for train, _ in parts:
                cv = StratifiedKFold(inner_folds, shuffle=True, random_state=seed + r)
                rows.append([(train[a], train[b]) for a, b in cv.split(zeros[train], y[train])])
            inner.append(rows)
    return Splits(outer, inner)


def _fit_scores(M, y, train, test, Cs, max_iter, tol, seed) -> Tuple[np.ndarray, int]:
    """Test accuracy of a LinearSVC per C, and how many fits hit max_iter."""
    from sklearn.svm import LinearSVC

    Xtr, Xte, ytr, yte = M[train], M[test], y[train], y[test]
    acc = np.empty(len(Cs))
    stuck = 0
    for j, C in enumerate(Cs):
        clf = LinearSVC(C=C, dual=False, max_iter=max_iter, tol=tol, random_state=seed)
        clf.fit(Xtr, ytr)
        stuck += int(np.max(clf.n_iter_) >= max_iter)
        acc[j] = float(np.mean(clf.predict(Xte) == yte))
    return acc, stuck


@dataclass
class ProtocolResult:
    """The outcome of one protocol.

    Attributes:
        protocol (str): :obj:`"paper"` or :obj:`"nested"`.
        accuracy_mean (float): Mean test accuracy.
        accuracy_std (float): Standard deviation over the repeat means.
        fold_std (float): Standard deviation over all test folds.
        repeat_accuracies (list): The mean accuracy of every repeat.
        best_setting (str): The chosen setting (nested: the most often chosen).
        best_params (dict): Its parameters and :obj:`C`.
        chosen (dict): Nested: how many outer folds chose each
            ``"setting, C=..."``.
    """

    protocol: str
    accuracy_mean: float
    accuracy_std: float
    fold_std: float
    repeat_accuracies: List[float]
    best_setting: str
    best_params: Dict[str, Any]
    chosen: Dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> Dict[str, Any]:
        """A JSON-ready dict."""
        return dict(self.__dict__)


@dataclass
class CVResult:
    """Every score of a grid search; :meth:`protocol` summarizes them.

    Attributes:
        settings (list): The :class:`Setting` of each row.
        C (list): The :math:`C` grid.
        outer (numpy.ndarray): :obj:`[S, len(C), R, F]` test accuracies.
        inner (numpy.ndarray, optional): :obj:`[S, len(C), R, F, I]` inner
            validation accuracies.
        feature_seconds (list): Feature time of each setting.
        cv_seconds (float): Time spent fitting.
        fits (int): LinearSVC fits; :obj:`stuck`: those that hit max_iter.
        fit_seconds (list), stuck_per_setting (list): The same per setting.
    """

    settings: List[Setting]
    C: List[float]
    outer: np.ndarray
    inner: Optional[np.ndarray]
    feature_seconds: List[float]
    cv_seconds: float
    fits: int
    stuck: int
    fit_seconds: List[float] = field(default_factory=list)
    stuck_per_setting: List[int] = field(default_factory=list)

    def _params(self, s: int, c: int) -> Dict[str, Any]:
        return {**self.settings[s].config, "C": self.C[c]}

    def protocol(self, name: str) -> ProtocolResult:
        """Summarize the scores under the :obj:`"paper"` or :obj:`"nested"` protocol."""
        check_choice("protocol", name, ("paper", "nested"))
        S, nC, R, F = self.outer.shape
        if name == "paper":
            means = self.outer.mean(axis=(2, 3)).reshape(-1)
            best = int(np.argmax(means))  # first maximum: earlier setting, smaller C
            s, c = divmod(best, nC)
            acc = self.outer[s, c]  # [R, F]
            return ProtocolResult(
                "paper", float(acc.mean()), float(acc.mean(axis=1).std()), float(acc.std()),
                acc.mean(axis=1).tolist(), self.settings[s].name, self._params(s, c),
            )
        if self.inner is None:
            raise ValueError("the nested protocol needs inner scores (inner_folds)")
        R = self.inner.shape[2]  # nested may use fewer repeats than the paper protocol
        inner = self.inner.mean(axis=4).reshape(S * nC, R, F)
        pick = np.argmax(inner, axis=0)  # [R, F]
        s_idx, c_idx = np.divmod(pick, nC)
        r_idx, f_idx = np.meshgrid(np.arange(R), np.arange(F), indexing="ij")
        acc = self.outer[s_idx, c_idx, r_idx, f_idx]  # [R, F]
        counts: Dict[str, int] = {}
        for s, c in zip(s_idx.reshape(-1).tolist(), c_idx.reshape(-1).tolist()):
            key = f"{self.settings[s].name}, C={self.C[c]:g}"
            counts[key] = counts.get(key, 0) + 1
        chosen = dict(sorted(counts.items(), key=lambda kv: -kv[1]))
        top = int(np.bincount(pick.reshape(-1), minlength=S * nC).argmax())
        s, c = divmod(top, nC)
        return ProtocolResult(
            "nested", float(acc.mean()), float(acc.mean(axis=1).std()), float(acc.std()),
            acc.mean(axis=1).tolist(), self.settings[s].name, self._params(s, c), chosen,
        )

    def grid_table(self) -> List[Dict[str, Any]]:
        """Per setting: its best :math:`C`, the mean CV accuracy there, and its times."""
        means = self.outer.mean(axis=(2, 3))
        rows = []
        for s, setting in enumerate(self.settings):
            c = int(np.argmax(means[s]))
            rows.append({
                "setting": setting.name, "params": setting.config, "C": self.C[c],
                "accuracy": float(means[s, c]), "feature_seconds": self.feature_seconds[s],
                "fit_seconds": self.fit_seconds[s] if self.fit_seconds else None,
                "fits_not_converged": self.stuck_per_setting[s] if self.stuck_per_setting else None,
            })
        return rows


def cross_validate(
    features: Sequence[Union[Any, Callable[[], Any]]],
    y,
    *,
    settings: Optional[Sequence[Setting]] = None,
    nested: bool = True,
    nested_repeats: Optional[int] = None,
    repeats: int = 10,
    folds: int = 10,
    inner_folds: int = 5,
    C: Sequence[float] = DEFAULT_C,
    seed: int = 0,
    n_jobs: int = 1,
    max_iter: int = 1000,
    tol: float = 1e-2,
    project: Union[bool, str] = "auto",
    progress: bool = False,
) -> CVResult:
    r"""Score every (setting, :math:`C`) with repeated stratified CV.

    Args:
        features (sequence): Per setting a feature matrix
            (:obj:`[n, d]` CSR or dense, or a :class:`Gram`), or a callable
            returning one; callables are called once, timed, and the matrix
            is dropped after its fits (memory holds one setting at a time).
        y (array-like): :obj:`[n]` class labels.
        settings (list, optional): The :class:`Setting` of each entry (for
            names); defaults to ``setting0, setting1, ...``.
        nested (bool, optional): Also compute the inner-fold scores of the
            nested protocol. (default: :obj:`True`)
        nested_repeats (int, optional): Inner-fold scores for the first
            :obj:`nested_repeats` repeats only (the nested protocol then
            reports those repeats). (default: all :obj:`repeats`)
        repeats (int, optional): :math:`R`. (default: :obj:`10`)
        folds (int, optional): :math:`F`. (default: :obj:`10`)
        inner_folds (int, optional): :math:`I`. (default: :obj:`5`)
        C (sequence, optional): The :math:`C` grid. (default: :obj:`(0.1, 1, 10)`)
        seed (int, optional): Repeat :math:`r` splits with seed
            :obj:`seed + r`. (default: :obj:`0`)
        n_jobs (int, optional): Threads fitting in parallel (liblinear
            releases the GIL). (default: :obj:`1`)
        max_iter (int, optional): LinearSVC's iteration cap (primal
            solver); fits that hit it are counted. (default: :obj:`1000`)
        tol (float, optional): LinearSVC's tolerance; :obj:`1e-2` is LIBLINEAR's own
            default for this (primal) solver. (default: :obj:`1e-2`)
        project (bool or str, optional): See :func:`design_matrix`.
            (default: :obj:`"auto"`)
        progress (bool, optional): A progress bar on stderr. (default: :obj:`False`)
    """
    y = np.asarray(y).reshape(-1)
    check_int("repeats", repeats, 1)
    check_int("folds", folds, 2)
    if nested:
        check_int("inner_folds", inner_folds, 2)
        nested_repeats = repeats if nested_repeats is None else check_int("nested_repeats", nested_repeats, 1)
        if nested_repeats > repeats:
            raise ValueError(f"'nested_repeats' ({nested_repeats}) must be at most 'repeats' ({repeats})")
    else:
        nested_repeats = 0
    check_int("n_jobs", n_jobs, 1)
    check_int("max_iter", max_iter, 1)
    Cs = [float(c) for c in _as_list(C)]
    if not Cs or any(not (c > 0 and math.isfinite(c)) for c in Cs):
        raise ValueError(f"'C' must be positive numbers (got {list(C)!r})")
    if not features:
        raise ValueError("'features' is empty")
    if settings is None:
        settings = [Setting("features", (("index", i),)) for i in range(len(features))]
    splits = make_splits(y, repeats, folds, inner_folds if nested else None, seed, nested_repeats)
    S, R, F, nC = len(features), repeats, folds, len(Cs)
    outer = np.zeros((S, nC, R, F))
    inner = np.zeros((S, nC, nested_repeats, F, inner_folds)) if nested else None
    tasks_per_setting = R * F + nested_repeats * F * (inner_folds if nested else 0)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=S * tasks_per_setting, desc="CV fits", unit="task", file=sys.stderr,
                   dynamic_ncols=True)
    feature_seconds: List[float] = []
    fit_seconds: List[float] = []
    stuck_per_setting: List[int] = []
    fits = stuck = 0
    cv_seconds = 0.0
    pool = ThreadPoolExecutor(n_jobs) if n_jobs > 1 else None
    try:
        with warnings.catch_warnings():
            # non-convergence is counted from n_iter_ (thread-safe), not warned per fit
            from sklearn.exceptions import ConvergenceWarning

            warnings.simplefilter("ignore", ConvergenceWarning)
            for s, entry in enumerate(features):
                if bar is not None:
                    bar.set_postfix_str(f"features: {settings[s].name}")
                t0 = time.perf_counter()
                X = entry() if callable(entry) else entry
                feature_seconds.append(time.perf_counter() - t0 if callable(entry) else 0.0)
                if X.shape[0] != y.size:
                    raise ValueError(f"features of setting {s} have {X.shape[0]} rows, y has {y.size}")
                t1 = time.perf_counter()
                M = design_matrix(X, project)
                del X
                if bar is not None:
                    bar.set_postfix_str(f"fitting: {settings[s].name}")
                jobs = []
                for r in range(R):
                    for f in range(F):
                        train, test = splits.outer[r][f]
                        jobs.append(((r, f, None), train, test))
                        if nested and r < nested_repeats:
                            for i, (a, b) in enumerate(splits.inner[r][f]):
                                jobs.append(((r, f, i), a, b))

                def run(job, M=M):
                    return job[0], _fit_scores(M, y, job[1], job[2], Cs, max_iter, tol, seed)

                results = pool.map(run, jobs) if pool is not None else map(run, jobs)
                stuck_before = stuck
                for (r, f, i), (acc, n_stuck) in results:
                    if i is None:
                        outer[s, :, r, f] = acc
                    else:
                        inner[s, :, r, f, i] = acc
                    fits += nC
                    stuck += n_stuck
                    if bar is not None:
                        bar.update(1)
                fit_seconds.append(time.perf_counter() - t1)
                stuck_per_setting.append(stuck - stuck_before)
                cv_seconds += fit_seconds[-1]
                del M
    finally:
        if pool is not None:
            pool.shutdown()
        if bar is not None:
            bar.close()
    return CVResult(list(settings), Cs, outer, inner, feature_seconds, cv_seconds, fits, stuck,
                    fit_seconds, stuck_per_setting)


# -- the user-facing API ------------------------------------------------------


@dataclass
class ClassifyResult:
    """What :func:`classify` returns (:meth:`to_dict` is the CLI's ``--json``).

    Attributes:
        dataset (str): The data set's name.
        method (str): The feature map.
        num_graphs (int), num_classes (int): Its size.
        protocol (str): What was asked: :obj:`"paper"`, :obj:`"nested"` or
            :obj:`"both"`.
        results (dict): :class:`ProtocolResult` per protocol.
        cv (CVResult): Every score.
        repeats, folds, inner_folds, seed, nested_repeats: The CV set-up.
    """

    dataset: str
    method: str
    num_graphs: int
    num_classes: int
    protocol: str
    results: Dict[str, ProtocolResult]
    cv: CVResult
    repeats: int
    folds: int
    inner_folds: Optional[int]
    seed: int
    nested_repeats: Optional[int] = None

    @property
    def primary(self) -> ProtocolResult:
        """The headline result: the requested protocol (nested for ``both``)."""
        return self.results["nested" if self.protocol in ("nested", "both") else "paper"]

    @property
    def feature_seconds(self) -> float:
        """Feature time of all settings together."""
        return float(sum(self.cv.feature_seconds))

    def to_dict(self) -> Dict[str, Any]:
        """A JSON-ready summary; the top-level accuracy is :attr:`primary`'s."""
        head = self.primary
        best_index = [s.name for s in self.cv.settings].index(head.best_setting)
        return {
            "dataset": self.dataset,
            "method": self.method,
            "num_graphs": self.num_graphs,
            "num_classes": self.num_classes,
            "protocol": self.protocol,
            "accuracy_mean": head.accuracy_mean,
            "accuracy_std": head.accuracy_std,
            "accuracy_std_over": "repeat means",
            "best_setting": head.best_setting,
            "best_params": head.best_params,
            "feature_seconds": self.feature_seconds,
            "best_feature_seconds": self.cv.feature_seconds[best_index],
            "cv_seconds": self.cv.cv_seconds,
            "repeats": self.repeats,
            "folds": self.folds,
            "inner_folds": self.inner_folds,
            "nested_repeats": self.nested_repeats,
            "C": self.cv.C,
            "seed": self.seed,
            "num_settings": len(self.cv.settings),
            "fits": self.cv.fits,
            "fits_not_converged": self.cv.stuck,
            "protocols": {k: v.to_dict() for k, v in self.results.items()},
            "settings": self.cv.grid_table(),
        }

    def table(self) -> str:
        """A readable report."""
        cv = self.cv
        lines = [
            f"{self.method.upper()} on {self.dataset}: {self.num_graphs} graphs, {self.num_classes} "
            f"classes, {len(cv.settings)} setting(s), C in {{{', '.join(f'{c:g}' for c in cv.C)}}}, "
            f"{self.repeats} x {self.folds}-fold CV"
            + (f" (nested: {self.inner_folds} inner folds" + (
                f", first {self.nested_repeats} repeats" if self.nested_repeats != self.repeats else "")
               + ")" if self.inner_folds else ""),
            "",
            f"{'setting':<34} {'best C':>6} {'CV accuracy':>12} {'feature s':>10}",
        ]
        for row in cv.grid_table():
            lines.append(
                f"{row['setting']:<34} {row['C']:>6g} {100 * row['accuracy']:>11.2f}% "
                f"{row['feature_seconds']:>10.2f}"
            )
        lines += ["", f"{'protocol':<8} {'accuracy (mean +- std)':>24}  chosen"]
        for name in ("paper", "nested"):
            if name not in self.results:
                continue
            res = self.results[name]
            what = f"{res.best_setting}, C={res.best_params['C']:g}"
            if name == "nested":
                total = sum(res.chosen.values())
                what = f"most often {what} ({res.chosen.get(what, 0)}/{total} outer folds)"
            lines.append(
                f"{name:<8} {100 * res.accuracy_mean:>14.2f} +- {100 * res.accuracy_std:<5.2f}  {what}"
            )
        lines += [
            "",
            "std: over the repeat means. 'paper' picks the setting on the test folds (optimistic, as "
            "the paper did); 'nested' picks it on inner folds of each training part (honest).",
            f"features: {self.feature_seconds:.2f} s for all settings; fits: {cv.cv_seconds:.1f} s "
            f"({cv.fits} LinearSVC fits"
            + (f", {cv.stuck} hit max_iter" if cv.stuck else ", all converged") + ")",
        ]
        return "\n".join(lines)


def _targets(graphs) -> np.ndarray:
    """The class label of every graph, as a numpy array."""
    import torch
    from torch_geometric.data import InMemoryDataset

    if isinstance(graphs, InMemoryDataset) and graphs.transform is None:
        y, ptr = graphs._data.y, graphs.slices.get("y") if graphs.slices else None
        if y is not None and ptr is not None and bool(((ptr[1:] - ptr[:-1]) == 1).all()):
            idx = torch.as_tensor(list(graphs.indices()), dtype=torch.long)
            return y.view(-1)[idx].numpy()
    ys = []
    for i in range(len(graphs)):
        t = getattr(graphs[i], "y", None)
        if t is None or t.numel() != 1:
            raise ValueError(f"graph {i} needs one class label in 'y'")
        ys.append(int(t.view(-1)[0]))
    return np.asarray(ys)


def classify(
    dataset=None,
    *,
    data_root=None,
    download: bool = False,
    cache=None,
    method: str = "kong",
    grid=None,
    protocol: str = "both",
    repeats: int = 10,
    folds: int = 10,
    inner_folds: int = 5,
    nested_repeats: Optional[int] = None,
    C: Sequence[float] = DEFAULT_C,
    seed: int = 0,
    n_jobs: int = 1,
    max_iter: int = 1000,
    tol: float = 1e-2,
    progress: bool = False,
) -> ClassifyResult:
    r"""Graph classification accuracy of a feature map over a grid of settings.

    Under the paper's and/or the nested protocol (see the module doc). The
    ``kong-pyg classify`` command wraps this function.

    .. code-block:: python

        from kong_pyg import classify
        res = classify("MUTAG", protocol="both")   # bundled, offline
        res.results["paper"].accuracy_mean, res.results["nested"].accuracy_mean
        classify("NCI1", data_root="data/tu", method="wl", repeats=3)

    Args:
        dataset (str or dataset, optional): A TU data set name (bundled
            :obj:`"MUTAG"` by default; others need :obj:`data_root` or
            :obj:`download`), or a PyG dataset / list of
            :class:`~torch_geometric.data.Data` with :obj:`x` and :obj:`y`.
        data_root (str, optional): A folder holding :obj:`NAME/raw` (read
            only; see :func:`~kong_pyg.datasets.load_tu`).
        download (bool, optional): Let PyG download a missing data set.
        cache (str, optional): The cache folder for processed data.
        method (str, optional): :obj:`"kong"`, :obj:`"wl"` (PyG
            :class:`~torch_geometric.nn.conv.WLConv`), :obj:`"wl-grakel"`,
            :obj:`"sp"` (GraKeL), :obj:`"kw"` (k-walks). (default: :obj:`"kong"`)
        grid (dict or list, optional): Settings (see :func:`expand_grid`).
            (default: :func:`paper_grid`)
        protocol (str, optional): :obj:`"paper"`, :obj:`"nested"` or
            :obj:`"both"`. (default: :obj:`"both"`)
        repeats (int, optional): :math:`R`. (default: :obj:`10`)
        folds (int, optional): :math:`F`. (default: :obj:`10`)
        inner_folds (int, optional): :math:`I` (nested). (default: :obj:`5`)
        nested_repeats (int, optional): With :obj:`protocol="both"`, run the
            (costlier) nested protocol on the first :obj:`nested_repeats`
            repeats only. (default: all)
        C (sequence, optional): The :math:`C` grid. (default: :obj:`(0.1, 1, 10)`)
        seed (int, optional): Seed of the splits and of sketches. (default: :obj:`0`)
        n_jobs (int, optional): Fitting threads. (default: :obj:`1`)
        max_iter (int, optional): LinearSVC's max_iter. (default: :obj:`1000`)
        tol (float, optional): LinearSVC's tol. (default: :obj:`1e-2`)
        progress (bool, optional): A progress bar on stderr. (default: :obj:`False`)

    Returns:
        :class:`ClassifyResult`
    """
    check_choice("protocol", protocol, PROTOCOLS)
    settings = expand_grid(method, grid)
    name = None
    if dataset is None or isinstance(dataset, str):
        from .datasets.tu import load_tu

        graphs = load_tu(dataset, data_root, cache=cache, download=download)
        name = graphs.name
    else:
        if data_root is not None:
            raise ValueError("'data_root' only applies when 'dataset' is a name")
        graphs = dataset
        name = getattr(dataset, "name", type(dataset).__name__)
    if nested_repeats is not None and protocol != "both":
        raise ValueError("'nested_repeats' only applies to protocol='both' (use 'repeats' otherwise)")
    y = _targets(graphs)
    nested = protocol in ("nested", "both")
    entries = [lambda s=s: setting_features(s, graphs, seed) for s in settings]
    cv = cross_validate(
        entries, y, settings=settings, nested=nested, nested_repeats=nested_repeats, repeats=repeats,
        folds=folds, inner_folds=inner_folds, C=C, seed=seed, n_jobs=n_jobs, max_iter=max_iter, tol=tol,
        progress=progress,
    )
    wanted = ("paper", "nested") if protocol == "both" else (protocol,)
    results = {p: cv.protocol(p) for p in wanted}
    return ClassifyResult(
        dataset=str(name), method=method, num_graphs=int(y.size), num_classes=int(np.unique(y).size),
        protocol=protocol, results=results, cv=cv, repeats=repeats, folds=folds,
        inner_folds=inner_folds if nested else None, seed=seed,
        nested_repeats=(repeats if nested_repeats is None else nested_repeats) if nested else None,
    )


def sketch_curve(
    graphs,
    params: Dict[str, Any],
    sizes: Sequence[int] = PLOT_SIZES,
    *,
    protocol: str = "paper",
    repeats: int = 10,
    folds: int = 10,
    inner_folds: int = 5,
    C: Sequence[float] = DEFAULT_C,
    seed: int = 0,
    n_jobs: int = 1,
    max_iter: int = 1000,
    tol: float = 1e-2,
    exact: bool = True,
    progress: bool = False,
) -> List[Dict[str, Any]]:
    r"""Accuracy of one KONG setting against the sketch size :math:`b`.

    The paper's Figure 3: for every :math:`b` in :obj:`sizes`, the sketched map
    (:obj:`dim=b`) of the setting :obj:`params` is scored with :math:`C`
    chosen by :obj:`protocol` (the other arguments as in :func:`classify`).
    With :obj:`exact=True` the exact map comes first (:obj:`dim=None`).

    Returns:
        A list of dicts ``{dim, accuracy_mean, accuracy_std, C, feature_seconds}``.
    """
    check_choice("protocol", protocol, ("paper", "nested"))
    sizes = [check_int("sizes", b, 1) for b in sizes]
    params = {k: v for k, v in params.items() if k != "C"}
    dims = ([None] if exact else []) + sizes
    settings = expand_grid("kong", [{**params, "dim": b} for b in dims])
    y = _targets(graphs)
    out = []
    for setting in settings:
        cv = cross_validate(
            [lambda s=setting: setting_features(s, graphs, seed)], y, settings=[setting],
            nested=protocol == "nested", repeats=repeats, folds=folds, inner_folds=inner_folds, C=C,
            seed=seed, n_jobs=n_jobs, max_iter=max_iter, tol=tol, progress=progress,
        )
        res = cv.protocol(protocol)
        out.append({
            "dim": setting.config["dim"], "accuracy_mean": res.accuracy_mean,
            "accuracy_std": res.accuracy_std, "C": res.best_params["C"],
            "feature_seconds": cv.feature_seconds[0],
        })
    return out


def plot_curve(curve: List[Dict[str, Any]], path, title: str = "") -> None:
    """Write the accuracy-against-b curve of :func:`sketch_curve` to an image.

    Needs matplotlib (``pip install 'kong-pyg[plot]'``).
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as err:
        raise ImportError("--plot needs matplotlib: pip install 'kong-pyg[plot]'") from err
    rows = [row for row in curve if row["dim"] is not None]
    dims = [row["dim"] for row in rows]
    mean = np.array([row["accuracy_mean"] for row in rows]) * 100
    std = np.array([row["accuracy_std"] for row in rows]) * 100
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.errorbar(dims, mean, yerr=std, marker="o", capsize=3, label="sketch (dim = b)")
    for row in curve:
        if row["dim"] is None:
            ax.axhline(100 * row["accuracy_mean"], color="gray", linestyle="--", label="exact map")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("sketch size b")
    ax.set_ylabel("accuracy (%)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# -- the command line -----------------------------------------------------------


def _split(text: str) -> List[str]:
    return [t.strip() for t in str(text).split(",") if t.strip()]


def _ints(text: str, name: str) -> List[int]:
    out = []
    for tok in _split(text):
        try:
            if "-" in tok[1:]:
                lo, hi = tok.split("-", 1)
                out.extend(range(int(lo), int(hi) + 1))
            else:
                out.append(int(tok))
        except ValueError:
            raise ValueError(f"--{name} expects integers or ranges like 1-4 (got {text!r})") from None
    if not out:
        raise ValueError(f"--{name} is empty")
    return out


def _floats(text: str, name: str) -> List[float]:
    try:
        out = [float(t) for t in _split(text)]
    except ValueError:
        raise ValueError(f"--{name} expects numbers separated by commas (got {text!r})") from None
    if not out:
        raise ValueError(f"--{name} is empty")
    return out


_TRUE = {"yes": True, "true": True, "1": True, "on": True, "no": False, "false": False, "0": False,
         "off": False}


def _bools(text: str, name: str) -> List[bool]:
    toks = _split(text)
    if toks == ["both"]:
        return [False, True]
    try:
        return [_TRUE[t.lower()] for t in toks] or _bad(name, text)
    except KeyError:
        raise ValueError(f"--{name} expects yes, no or both (got {text!r})") from None


def _bad(name, text):
    raise ValueError(f"--{name} is empty (got {text!r})")


def _choices(text: str, name: str, allowed) -> List[str]:
    out = _split(text)
    for tok in out:
        if tok not in allowed:
            raise ValueError(f"--{name} expects values from {', '.join(allowed)} (got {tok!r})")
    return out or _bad(name, text)


def _dims(text: str, name: str) -> List[Optional[int]]:
    out = []
    for tok in _split(text):
        if tok == "exact":
            out.append(None)
        else:
            try:
                out.append(int(tok))
            except ValueError:
                raise ValueError(f"--{name} expects 'exact' or sketch sizes (got {tok!r})") from None
    return out or _bad(name, text)


#: CLI option -> (setting key, parser, methods it applies to)
_GRID_OPTIONS = {
    "k": ("k", _ints, ("kong",)),
    "hops": ("hops", _ints, ("kong", "wl", "wl-grakel")),
    "traversal": ("traversal", lambda t, n: _choices(t, n, TRAVERSALS), ("kong",)),
    "kernel": ("kernel", lambda t, n: _choices(t, n, KERNELS), ("kong",)),
    "degree": ("degree", _ints, ("kong",)),
    "const": ("const", _floats, ("kong",)),
    "relabel": ("relabel", _bools, ("kong",)),
    "dim": ("dim", _dims, ("kong",)),
    "order": ("order", lambda t, n: _choices(t, n, ORDERS), ("kong",)),
    "blended": ("blended", _bools, ("kong",)),
    "normalize": ("normalize", _bools, ("kong",)),
    "norm": ("norm", lambda t, n: _choices(t, n, NORMS), ("kong",)),
    "edge_labels": ("edge_labels", _bools, ("kong",)),
    "walk_length": ("length", _ints, ("kw",)),
}

#: Named grids for KONG (``--grid``).
GRID_PRESETS = {
    "paper": paper_grid("kong"),
    "quick": {"k": [1], "hops": [2], "traversal": ["bfs"], "kernel": ["poly", "cosine"], "degree": [1],
              "relabel": [False, True]},
}


def grid_from_args(args) -> Dict[str, list]:
    """The grid of a ``classify`` command line."""
    method = args.method
    if method == "kong":
        grid = dict(GRID_PRESETS[args.grid])
    else:
        if args.grid != "paper":
            raise ValueError(f"--grid {args.grid} is a KONG grid; it does not apply to --method {method}")
        grid = dict(paper_grid(method))
    for opt, (key, parse, methods) in _GRID_OPTIONS.items():
        text = getattr(args, opt)
        if text is None:
            continue
        flag = "--" + opt.replace("_", "-")
        if method not in methods:
            raise ValueError(f"{flag} applies to --method {' or '.join(methods)}, not {method}")
        grid[key] = parse(text, opt.replace("_", "-"))
    return grid


def register_cli(subparsers) -> None:
    """Add the ``classify`` subcommand."""
    p = subparsers.add_parser(
        "classify",
        help="graph classification accuracy of KONG features (and baselines)",
        description=(
            "Compute KONG features (or a baseline's) for a graph-classification data set and "
            "evaluate a LinearSVC with repeated stratified k-fold CV. Without --dataset it runs on "
            "MUTAG, bundled with the package (offline). Grid options take comma-separated values "
            "(integers also ranges like 1-4); the grid is their product."
        ),
    )
    data = p.add_argument_group("data")
    data.add_argument("--dataset", default=None, metavar="NAME",
                      help="TU data set name (default: the bundled MUTAG)")
    data.add_argument("--data-root", default=None, metavar="DIR",
                      help="folder holding NAME/raw/NAME_*.txt (PyG TUDataset layout); only read")
    data.add_argument("--download", action="store_true",
                      help="let PyG download a data set that is neither in DIR nor bundled")
    data.add_argument("--cache-dir", default=None, metavar="DIR",
                      help="where processed data sets go (default: $KONG_PYG_CACHE or ~/.cache/kong_pyg)")
    model = p.add_argument_group("features")
    model.add_argument("--method", default="kong", choices=METHODS,
                       help="kong (default); wl (PyG WLConv); wl-grakel, sp (GraKeL, needs "
                            "kong-pyg[bench]); kw (k-walks)")
    model.add_argument("--grid", default="paper", choices=sorted(GRID_PRESETS),
                       help="KONG grid preset: paper = h 2, k 1, bfs, exact map, poly and cosine, p 1-4, "
                            "with and without rlb (16 settings); quick = the same with p 1 (4 settings). "
                            "The options below replace single entries (default: paper)")
    for opt, (_, _, methods) in _GRID_OPTIONS.items():
        flag = "--" + opt.replace("_", "-")
        helps = {
            "k": "k-gram length(s)", "hops": "depth(s) h (KONG, WL)", "traversal": "bfs and/or wl",
            "kernel": "poly and/or cosine", "degree": "kernel degree(s) p, e.g. 1-4",
            "const": "poly constant(s)", "relabel": "WL relabelling first (rlb): yes, no or both",
            "dim": "'exact' and/or sketch size(s) b",
            "order": "neighbor order(s): edge, label, degree, random",
            "blended": "count all n-grams n=1..k: yes, no or both",
            "normalize": "L2-normalize each graph vector: yes, no or both",
            "norm": "cosine norms of sketches: exact or sketch", "edge_labels": "use edge labels: yes/no",
            "walk_length": "walk length(s) k (kw; default 5,6)",
        }
        model.add_argument(flag, dest=opt, default=None, metavar="V[,V...]",
                           help=helps[opt] + ("" if methods == ("kong",) else f" [{', '.join(methods)}]")
                           + " (default: from --grid)")
    ev = p.add_argument_group("evaluation")
    ev.add_argument("--protocol", default="both", choices=PROTOCOLS,
                    help="paper: best setting and C by mean CV accuracy (optimistic, as in the paper); "
                         "nested: chosen on inner folds (honest); both (default)")
    ev.add_argument("--repeats", type=int, default=10, help="random permutations R (default: 10)")
    ev.add_argument("--folds", type=int, default=10, help="outer folds (default: 10)")
    ev.add_argument("--inner-folds", type=int, default=None, help="inner folds (nested; default 5)")
    ev.add_argument("--nested-repeats", type=int, default=None,
                    help="with --protocol both: nested protocol on the first N repeats only (default: all)")
    ev.add_argument("--C", dest="C", default="0.1,1,10", metavar="C[,C...]",
                    help="LinearSVC C grid (default: 0.1,1,10)")
    ev.add_argument("--seed", type=int, default=0, help="seed of the splits and of sketches (default: 0)")
    ev.add_argument("--jobs", type=int, default=min(os.cpu_count() or 1, 8),
                    help="threads fitting in parallel (default: the CPU count, at most 8)")
    ev.add_argument("--max-iter", type=int, default=1000,
                    help="LinearSVC max_iter (primal solver; default: 1000)")
    ev.add_argument("--tol", type=float, default=1e-2,
                    help="LinearSVC tol (default: 1e-2, LIBLINEAR's default for the primal solver)")
    out = p.add_argument_group("output")
    out.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    out.add_argument("--quiet", action="store_true", help="no progress bar")
    out.add_argument("--plot", default=None, metavar="FILE.png",
                     help="also plot accuracy against sketch size b for the best setting (needs matplotlib)")
    out.add_argument("--plot-sizes", default=None, metavar="B[,B...]",
                     help="sketch sizes of --plot (default 64,128,...,8192)")
    p.set_defaults(func=run_cli)


def _error(msg: str) -> int:
    print(f"kong-pyg classify: error: {msg}", file=sys.stderr)
    return 2


def run_cli(args) -> int:
    """Run ``kong-pyg classify``."""
    try:
        grid = grid_from_args(args)
        if args.data_root is not None and args.dataset is None:
            raise ValueError("--data-root needs --dataset NAME (the folder DIR/NAME/raw to read)")
        if args.protocol == "paper" and args.inner_folds is not None:
            raise ValueError("--inner-folds only applies to --protocol nested or both")
        if args.plot is not None and args.method != "kong":
            raise ValueError("--plot draws KONG sketch sizes; it needs --method kong")
        if args.plot_sizes is not None and args.plot is None:
            raise ValueError("--plot-sizes needs --plot FILE.png")
        sizes = _ints(args.plot_sizes, "plot-sizes") if args.plot_sizes else list(PLOT_SIZES)
        if args.plot is not None:
            try:
                import matplotlib  # noqa: F401
            except ImportError:
                raise ImportError("--plot needs matplotlib: pip install 'kong-pyg[plot]'") from None
        if args.method in ("sp", "wl-grakel"):
            try:
                import grakel  # noqa: F401
            except ImportError:
                raise ImportError(
                    f"--method {args.method} needs GraKeL: pip install 'kong-pyg[bench]'"
                ) from None
        inner = 5 if args.inner_folds is None else args.inner_folds
        if args.nested_repeats is not None and args.protocol != "both":
            raise ValueError("--nested-repeats only applies to --protocol both (use --repeats otherwise)")
        common = dict(
            repeats=args.repeats, folds=args.folds, inner_folds=inner,
            C=_floats(args.C, "C"), seed=args.seed, n_jobs=args.jobs, max_iter=args.max_iter,
            tol=args.tol, progress=not args.quiet,
        )
        from .datasets.tu import load_tu

        graphs = load_tu(args.dataset, args.data_root, cache=args.cache_dir, download=args.download)
        res = classify(graphs, method=args.method, grid=grid, protocol=args.protocol,
                       nested_repeats=args.nested_repeats, **common)
        payload = res.to_dict()
        if args.plot is not None:
            head = res.primary
            proto = "nested" if args.protocol in ("nested", "both") else "paper"
            curve = sketch_curve(graphs, head.best_params, sizes, protocol=proto, **common)
            plot_curve(curve, args.plot, title=f"{res.dataset}: {head.best_setting} ({proto} protocol)")
            payload["plot"] = {"file": str(args.plot), "protocol": proto, "curve": curve}
    except (ValueError, TypeError, FileNotFoundError, ImportError, OSError) as err:
        return _error(str(err))
    if args.json:
        print(json.dumps(payload, indent=2))
    else:
        print(res.table())
        if args.plot is not None:
            print(f"\nplot: {args.plot} (accuracy against sketch size b, {proto} protocol)")
            for row in payload["plot"]["curve"]:
                print(f"  b={row['dim'] or 'exact':>5}: {100 * row['accuracy_mean']:.2f} +- "
                      f"{100 * row['accuracy_std']:.2f}%  ({row['feature_seconds']:.2f} s features)")
    return 0


__all__ = [
    "classify",
    "ClassifyResult",
    "ProtocolResult",
    "CVResult",
    "cross_validate",
    "make_splits",
    "expand_grid",
    "paper_grid",
    "Setting",
    "Gram",
    "setting_features",
    "design_matrix",
    "kernel_map",
    "sketch_curve",
    "plot_curve",
    "register_cli",
    "PROTOCOLS",
    "METHODS",
    "DEFAULT_C",
    "PLOT_SIZES",
]
