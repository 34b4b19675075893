r"""Repeated stratified cross-validation over a grid, and its two protocols.

:func:`cross_validate` fits scikit-learn's :class:`~sklearn.svm.LinearSVC`
in stratified :math:`F`-fold cross-validation repeated over :math:`R` random
permutations, for every setting and every :math:`C` of a grid, reading each
setting's features once. Two protocols read the same fits
(:meth:`CVResult.protocol`):

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

LinearSVC runs its primal solver (:obj:`dual=False`: it converges on these
badly scaled count features where the dual coordinate descent stalls) with
:obj:`tol=1e-2`, LIBLINEAR's own default for that solver; fits that reach
:obj:`max_iter` are counted and reported, not hidden.
"""
import math
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from ..config import check_choice, check_int
from .features import Gram, Matrix, design_matrix
from .grid import Setting, as_list

#: The default :math:`C` grid.
DEFAULT_C: Tuple[float, ...] = (0.1, 1.0, 10.0)

#: A train/test index pair.
Split = Tuple[np.ndarray, np.ndarray]
#: A feature matrix, a Gram matrix, or a callable returning one.
FeatureEntry = Union[Matrix, Gram, Callable[[], Union[Matrix, Gram]]]


class Splits(NamedTuple):
    """Train/test index pairs: :obj:`outer[r][f]`, :obj:`inner[r][f][i]`."""

    outer: List[List[Split]]
    inner: Optional[List[List[List[Split]]]]


def _check_class_sizes(y: np.ndarray, folds: int, inner_folds: Optional[int]) -> None:
    _, counts = np.unique(y, return_counts=True)
    if counts.size < 2:
        raise ValueError("the graphs have a single class; classification needs at least two")
    smallest = int(counts.min())
    if smallest < folds:
        raise ValueError(f"folds={folds} but the smallest class has only {smallest} graphs; use fewer folds")
    if inner_folds is not None and smallest * (folds - 1) // folds < inner_folds:
        raise ValueError(
            f"inner_folds={inner_folds} is too many for the smallest class "
            f"({smallest} graphs, about {smallest * (folds - 1) // folds} per "
            "outer training part); use fewer inner folds"
        )


def make_splits(y: np.ndarray, repeats: int, folds: int, inner_folds: Optional[int], seed: int,
                inner_repeats: Optional[int] = None) -> Splits:
    """Stratified shuffled splits, repeat :obj:`r` seeded with :obj:`seed + r`.

    Args:
        y (numpy.ndarray): :obj:`[n]` class labels.
        repeats (int): :math:`R`.
        folds (int): :math:`F`.
        inner_folds (int, optional): :math:`I`; :obj:`None` for no inner splits.
        seed (int): The seed of repeat 0.
        inner_repeats (int, optional): Inner splits for the first
            :obj:`inner_repeats` repeats only. (default: all)

    Returns:
        :class:`Splits`
    """
    from sklearn.model_selection import StratifiedKFold

    _check_class_sizes(y, folds, inner_folds)
    zeros = np.zeros(y.size)
    outer: List[List[Split]] = []
    inner: Optional[List[List[List[Split]]]] = [] if inner_folds is not None else None
    for r in range(repeats):
        parts = list(StratifiedKFold(folds, shuffle=True, random_state=seed + r).split(zeros, y))
        outer.append(parts)
        if inner is not None and inner_folds is not None and r < (
                repeats if inner_repeats is None else inner_repeats):
            rows = []
            for train, _ in parts:
                cv = StratifiedKFold(inner_folds, shuffle=True, random_state=seed + r)
                rows.append([(train[a], train[b]) for a, b in cv.split(zeros[train], y[train])])
            inner.append(rows)
    return Splits(outer, inner)


def fit_scores(M: Matrix, y: np.ndarray, train: np.ndarray, test: np.ndarray, Cs: Sequence[float],
               max_iter: int, tol: float, seed: int) -> Tuple[np.ndarray, int]:
    """Test accuracy of a LinearSVC per :math:`C`, and how many fits hit :obj:`max_iter`."""
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
        """Summarize the scores under the :obj:`"paper"` or :obj:`"nested"` protocol.

        Args:
            name (str): :obj:`"paper"` or :obj:`"nested"`.

        Returns:
            :class:`ProtocolResult`
        """
        check_choice("protocol", name, ("paper", "nested"))
        return self._paper() if name == "paper" else self._nested()

    def _paper(self) -> ProtocolResult:
        nC = self.outer.shape[1]
        means = self.outer.mean(axis=(2, 3)).reshape(-1)
        best = int(np.argmax(means))  # first maximum: earlier setting, smaller C
        s, c = divmod(best, nC)
        acc = self.outer[s, c]  # [R, F]
        return ProtocolResult(
            "paper", float(acc.mean()), float(acc.mean(axis=1).std()), float(acc.std()),
            acc.mean(axis=1).tolist(), self.settings[s].name, self._params(s, c),
        )

    def _nested(self) -> ProtocolResult:
        if self.inner is None:
            raise ValueError("the nested protocol needs inner scores (inner_folds)")
        S, nC, _, F = self.outer.shape
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


# -- cross_validate and its parts ---------------------------------------------------


#: A fit task: ((repeat, fold, inner fold or None), train, test).
_Key = Tuple[int, int, Optional[int]]
_Job = Tuple[_Key, np.ndarray, np.ndarray]


class _Plan(NamedTuple):
    """What :func:`cross_validate` runs for every setting."""

    Cs: List[float]
    jobs: List[_Job]
    nested_repeats: int


def _plan(y: np.ndarray, repeats: int, folds: int, nested: bool, inner_folds: int,
          nested_repeats: Optional[int], C: Union[float, Sequence[float]], seed: int) -> _Plan:
    """Check the CV arguments and list the fit tasks of one setting."""
    check_int("repeats", repeats, 1)
    check_int("folds", folds, 2)
    if nested:
        check_int("inner_folds", inner_folds, 2)
        nested_repeats = repeats if nested_repeats is None else check_int("nested_repeats", nested_repeats, 1)
        if nested_repeats > repeats:
            raise ValueError(f"'nested_repeats' ({nested_repeats}) must be at most 'repeats' ({repeats})")
    else:
        nested_repeats = 0
    Cs = [float(c) for c in as_list(C)]
    if not Cs or any(not (c > 0 and math.isfinite(c)) for c in Cs):
        raise ValueError(f"'C' must be positive numbers (got {as_list(C)!r})")
    splits = make_splits(y, repeats, folds, inner_folds if nested else None, seed, nested_repeats)
    jobs: List[_Job] = []
    for r in range(repeats):
        for f in range(folds):
            train, test = splits.outer[r][f]
            jobs.append(((r, f, None), train, test))
            if splits.inner is not None and r < nested_repeats:
                for i, (a, b) in enumerate(splits.inner[r][f]):
                    jobs.append(((r, f, i), a, b))
    return _Plan(Cs, jobs, nested_repeats)


class _Bar:
    """A tqdm bar counting LinearSVC fits, or nothing."""

    def __init__(self, total: int, enabled: bool):
        self.bar: Any = None
        if enabled:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc="CV", unit="fit", file=sys.stderr, dynamic_ncols=True)

    def status(self, text: str) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(text)

    def update(self, n: int) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _load(entry: FeatureEntry, rows: int, index: int) -> Tuple[Union[Matrix, Gram], float]:
    """A setting's features (calling :obj:`entry` if it is callable) and the seconds it took."""
    t0 = time.perf_counter()
    X = entry() if callable(entry) else entry
    seconds = time.perf_counter() - t0 if callable(entry) else 0.0
    if X.shape[0] != rows:
        raise ValueError(f"features of setting {index} have {X.shape[0]} rows, y has {rows}")
    return X, seconds


def cross_validate(
    features: Sequence[FeatureEntry],
    y: Any,
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
            names); defaults to ``features-0, features-1, ...``.
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
        progress (bool, optional): A progress bar on stderr counting
            LinearSVC fits. (default: :obj:`False`)

    Returns:
        :class:`CVResult`
    """
    y = np.asarray(y).reshape(-1)
    check_int("n_jobs", n_jobs, 1)
    check_int("max_iter", max_iter, 1)
    if not features:
        raise ValueError("'features' is empty")
    plan = _plan(y, repeats, folds, nested, inner_folds, nested_repeats, C, seed)
    names = list(settings) if settings is not None else [
        Setting("features", (("index", i),)) for i in range(len(features))]
    S, nC = len(features), len(plan.Cs)
    outer = np.zeros((S, nC, repeats, folds))
    inner = np.zeros((S, nC, plan.nested_repeats, folds, inner_folds)) if nested else None
    bar = _Bar(S * len(plan.jobs) * nC, progress)
    feature_seconds: List[float] = []
    fit_seconds: List[float] = []
    stuck_per_setting: List[int] = []
    pool = ThreadPoolExecutor(n_jobs) if n_jobs > 1 else None
    try:
        with warnings.catch_warnings():
            # non-convergence is counted from n_iter_ (thread-safe), not warned per fit
            from sklearn.exceptions import ConvergenceWarning

            warnings.simplefilter("ignore", ConvergenceWarning)
            for s, entry in enumerate(features):
                bar.status(f"features: {names[s].name}")
                X, seconds = _load(entry, y.size, s)
                feature_seconds.append(seconds)
                t1 = time.perf_counter()
                M = design_matrix(X, project)
                del X
                bar.status(f"fitting: {names[s].name}")

                def run(job: _Job, M: Matrix = M) -> Tuple[_Key, Tuple[np.ndarray, int]]:
                    return job[0], fit_scores(M, y, job[1], job[2], plan.Cs, max_iter, tol, seed)

                results: Iterable = pool.map(run, plan.jobs) if pool is not None else map(run, plan.jobs)
                n_stuck = 0
                for (r, f, i), (acc, stuck) in results:
                    if i is None:
                        outer[s, :, r, f] = acc
                    elif inner is not None:
                        inner[s, :, r, f, i] = acc
                    n_stuck += stuck
                    bar.update(nC)
                fit_seconds.append(time.perf_counter() - t1)
                stuck_per_setting.append(n_stuck)
                del M
    finally:
        if pool is not None:
            pool.shutdown()
        bar.close()
    return CVResult(names, plan.Cs, outer, inner, feature_seconds, float(sum(fit_seconds)),
                    S * len(plan.jobs) * nC, int(sum(stuck_per_setting)), fit_seconds, stuck_per_setting)


__all__ = [
    "DEFAULT_C",
    "Splits",
    "make_splits",
    "fit_scores",
    "ProtocolResult",
    "CVResult",
    "cross_validate",
]
