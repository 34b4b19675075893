r"""The evaluation harness: splits, LinearSVC scores over a grid, and two protocols.

:func:`cross_validate` scores scikit-learn's :class:`~sklearn.svm.LinearSVC`
problem (:mod:`kong_pyg.evaluation.svm`) for every setting and every
:math:`C` of a grid, on the outer splits and, for the nested protocol, on
inner splits of every outer training part, reading each setting's features
once. The splits are either stratified :math:`F`-fold cross-validation
repeated over :math:`R` random permutations (:func:`make_splits`, Table 1)
or :math:`R` stratified random train/test splits (:func:`random_splits`,
Table 2, where a split is an outer "fold" :math:`F = 1`). Two protocols read
the same fits (:meth:`CVResult.protocol`):

* ``paper`` (the KONG paper's Table 1): the (setting, :math:`C`) with the
  best mean accuracy over all outer test parts is reported with that mean.
  The test parts choose the setting, so the number is optimistic.
* ``nested`` (the honest number): on every outer split the (setting,
  :math:`C`) is chosen by the mean accuracy over the inner splits of its
  training part only, then scored on its test part (accuracy and, for two
  classes, ROC AUC of the decision values).

Both report the mean accuracy and its standard deviation over the
:math:`R` repeat means (each repeat mean is the mean over its :math:`F`
test folds); ``fold_std`` is the standard deviation over all
:math:`R \times F` fold accuracies. Repeat :math:`r` splits as
:class:`~sklearn.model_selection.StratifiedKFold` (shuffled,
:obj:`random_state=seed + r`) does
(:func:`~kong_pyg.evaluation.splits.stratified_folds`); the inner splits of
repeat :math:`r` use the same seed. Ties go to the earlier setting, then to the :math:`C` that comes
first in the grid.

Every setting's problems (all splits, all :math:`C`, all classes) are solved
together to the exact optimum (:func:`~kong_pyg.evaluation.svm.fit_many`);
problems that reach :obj:`max_iter` Newton steps are counted and reported
(their fits start from zero, as LinearSVC's, never near a solution that saw their test labels).
The exception, on the CPU: more than
:data:`~kong_pyg.evaluation.svm.EXACT_MAX_GRAPHS` graphs with sparse
features wider than :data:`~kong_pyg.evaluation.svm.EXACT_MAX_WIDTH` basis
columns and few nonzeros per row go to LIBLINEAR one fit at a time
(:mod:`~kong_pyg.evaluation.liblinear`, ``LinearSVC(dual=False, tol=1e-4)``,
where :obj:`max_iter` and :obj:`tol` do not apply), unless it runs into its
iteration cap; :attr:`CVResult.fit_info` names the solver of every setting.
"""
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from ..config import check_bool, check_c_grid, check_choice, check_int, check_usable_device
from ..devices import cpu_by_default
from ..warn import warn
from .features import (
    Gram,
    Matrix,
    _describe,
    check_finite,
    checked_features,
    design_matrix,
    design_of,
)
from .grid import DEFAULT_C, FOLDS, INNER_FOLDS, MAX_ITER, REPEATS, Setting
from .processes import run_settings
from .progress import Progress
from .splits import Jobs, Splits, check_given_splits, class_labels, make_splits, plan_jobs, random_splits

#: The most CV repeats (each repeat's splits, fits and scores are held at once).
MAX_REPEATS = 1_000
#: Decision values equal to this many digits (relative to the largest) tie in the ROC AUC.
TIE_DIGITS = 9

#: A feature matrix, a Gram matrix, or a callable returning one.
FeatureEntry = Union[Matrix, Gram, Callable[[], Union[Matrix, Gram]]]


def num_fits(y: Any, jobs: int, Cs: int) -> int:
    """SVM problems of :obj:`jobs` training sets and :obj:`Cs` values of :math:`C` (one per class, OvR)."""
    k = np.unique(np.asarray(y)).size
    return jobs * Cs * (1 if k <= 2 else k)


def average_ranks(a: np.ndarray) -> np.ndarray:
    """Ranks 1..n along the last axis, tied values given their mean rank.

    As :func:`scipy.stats.rankdata` (:obj:`method="average"`, a test compares them) for values
    without NaN, without importing :mod:`scipy.stats` (about 1 s per process).

    Args:
        a (numpy.ndarray): :obj:`[..., n]` values.

    Returns:
        numpy.ndarray: :obj:`[..., n]` float ranks.
    """
    a = np.asarray(a)
    n = a.shape[-1]
    if a.size == 0:
        return np.zeros(a.shape)
    flat = a.reshape(-1, n)
    order = np.argsort(flat, axis=1, kind="stable")
    ordered = np.take_along_axis(flat, order, 1)
    new = np.ones(ordered.shape, dtype=bool)  # where a run of equal values starts (every row starts one)
    new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], new.size)  # runs never cross rows
    mean_rank = (starts + ends - 1) / 2.0 - (starts // n) * n + 1.0
    ranks = np.empty(flat.shape)
    np.put_along_axis(ranks, order, mean_rank[np.cumsum(new) - 1].reshape(flat.shape), 1)
    return ranks.reshape(a.shape)


def roc_auc(y_true: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """ROC AUC of every row of :obj:`scores` (:obj:`[..., n]`) for binary :obj:`y_true`.

    Ties count 1/2; scores equal to :data:`TIE_DIGITS` digits of the row's largest are ties.
    """
    pos = np.asarray(y_true, dtype=bool)
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    if n_pos == 0 or n_neg == 0:
        return np.full(scores.shape[:-1], np.nan)
    # graphs with the same features get the same score up to rounding: ties, whatever the route
    scale = np.abs(scores).max(axis=-1, keepdims=True)
    scale = np.where(scale > 0, scale, 1.0)
    ranks = average_ranks(np.round(scores / scale, TIE_DIGITS))
    auc = (ranks[..., pos].sum(-1) - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)
    return np.where(np.isnan(scores).any(-1), np.nan, auc)  # no ranking of NaN scores


class SettingScores(NamedTuple):
    """Test scores of every job and :math:`C` for one setting.

    Attributes:
        acc (numpy.ndarray): :obj:`[J, len(C)]` test accuracies.
        auc (numpy.ndarray): :obj:`[J, len(C)]` ROC AUC (NaN unless two classes).
        stuck (int): Problems that reached :obj:`max_iter`.
        info (dict): What the SVM was fit on (see :func:`~kong_pyg.evaluation.features.design_of`),
            :obj:`solver`, and the work: :obj:`steps_mean`/:obj:`steps_max`, the exact solver's
            Newton steps per fit; on the LIBLINEAR route :obj:`liblinear_iterations_mean`/
            :obj:`_max` instead, with :obj:`steps_*` counting only the capped fits solved again.
    """

    acc: np.ndarray
    auc: np.ndarray
    stuck: int
    info: Dict[str, Any]


def score_jobs(features: Union[Matrix, Gram], y: np.ndarray, jobs: Jobs, Cs: Sequence[float], *,
               max_iter: int = MAX_ITER, n_jobs: int = 1, tol: Optional[float] = None,
               progress: Optional[Progress] = None, device: Any = None) -> SettingScores:
    """Solve every (job, :math:`C`, class) problem of one feature matrix and score the test parts.

    Args:
        features: :obj:`[n, d]` features or a :class:`Gram`.
        y (numpy.ndarray): :obj:`[n]` labels.
        jobs (Jobs): The training sets (:func:`plan_jobs`).
        Cs (sequence): The :math:`C` grid.
        max_iter (int, optional): Newton steps at most per problem. (default: :data:`MAX_ITER`)
        n_jobs (int, optional): Threads. (default: :obj:`1`)
        tol (float, optional): The solver's margin tolerance. (default:
            :data:`~kong_pyg.evaluation.svm.MARGIN_TOL`)
        progress (Progress, optional): Counts the problems as they finish.
        device (str or torch.device, optional): Where the exact solver runs
            (:func:`~kong_pyg.evaluation.svm.fit_many`). Off the CPU every
            design gets the exact solver; on the CPU wide designs of many
            graphs go to LIBLINEAR, unless it reaches its iteration cap on the first
            training set (:func:`~kong_pyg.evaluation.liblinear.fit_liblinear_if_converging`).
            (default: the CPU)

    Returns:
        :class:`SettingScores`
    """
    from . import liblinear, svm

    width = features.shape[0] if isinstance(features, Gram) else features.shape[1] + 1
    dev = check_usable_device("device", device)
    on_cpu = dev is None or dev.type == "cpu"
    report = None if progress is None else progress.update
    lib: Optional[svm.Fits] = None
    M = None
    if on_cpu and width > svm.EXACT_MAX_WIDTH and y.size > svm.EXACT_MAX_GRAPHS and liblinear.suits(features):
        check_finite(features)
        svm.check_classes(y, jobs.train)  # (as the exact route does: LIBLINEAR fails opaquely)
        M = design_matrix(features)
        lib = liblinear.fit_liblinear_if_converging(M, y, jobs.train, Cs, progress=report)
    if lib is not None and M is not None:
        fits, again = liblinear.resolve_capped(lib, lambda: design_of(features)[0], y, jobs.train, Cs,
                                               max_iter=max_iter, tol=tol, n_jobs=n_jobs)
        info: Dict[str, Any] = {"features": _describe(features), "basis_columns": int(M.shape[1]),
                                "solver": f"LIBLINEAR (LinearSVC, tol {liblinear.LIBLINEAR_TOL:g})"
                                + (f"; its {again} capped fit{'' if again == 1 else 's'} solved again "
                                   "exactly" if again else "")}
    else:
        D, info = design_of(features)
        fits = svm.fit_many(D, y, jobs.train, Cs, parent=jobs.parent, max_iter=max_iter, n_jobs=n_jobs,
                            tol=tol, progress=report, device=device)
        info = dict(info, solver="exact (batched Newton)" + ("" if on_cpu else f" on {device}")
                    + ("" if M is None else "; LIBLINEAR hit its iteration cap on the first training set"))
    pred = fits.predict()
    binary = fits.classes.size == 2
    acc = np.empty((len(jobs.keys), len(Cs)))
    auc = np.full((len(jobs.keys), len(Cs)), np.nan)
    one_class = 0
    for j, test in enumerate(jobs.test):
        acc[j] = (pred[j][:, test] == y[test]).mean(axis=1)
        if binary and jobs.parent[j] < 0:
            auc[j] = roc_auc(y[test] == fits.classes[1], fits.scores[j][:, test])
            one_class += int(np.unique(y[test]).size < 2)
    if one_class:  # (as scikit-learn's roc_auc_score warns)
        warn(f"ROC AUC is undefined (NaN) on {one_class} test part{'s' if one_class > 1 else ''} holding "
             "graphs of one class only: use splits whose test parts hold both classes (a larger test_size)")
    if lib is None:  # the exact solver's Newton steps
        info = dict(info, steps_mean=float(fits.iterations.mean()), steps_max=int(fits.iterations.max()))
    else:  # LIBLINEAR's iterations (its capped fits at the cap), and the Newton steps of those solved again
        capped = ~lib.converged
        info = dict(info, liblinear_iterations_mean=float(lib.iterations.mean()),
                    liblinear_iterations_max=int(lib.iterations.max()))
        if capped.any():
            info = dict(info, steps_mean=float(fits.iterations[capped].mean()),
                        steps_max=int(fits.iterations[capped].max()))
    return SettingScores(acc, auc, int((~fits.converged).sum()), info)


@dataclass
class ProtocolResult:
    """The outcome of one protocol.

    Attributes:
        protocol (str): :obj:`"paper"` or :obj:`"nested"`.
        accuracy_mean (float): Mean test accuracy.
        accuracy_std (float): Standard deviation (population, ddof 0) over
            the repeat means; 0 with one repeat (no spread measured).
        fold_std (float): Standard deviation over all test folds.
        repeat_accuracies (list): The mean accuracy of every repeat.
        best_setting (str): The chosen setting (nested: the most often chosen).
        best_params (dict): Its parameters and :obj:`C`.
        chosen (dict): Nested: how many outer folds chose each
            ``"setting, C=..."``.
        folds (dict): Per outer split :obj:`[R][F]`: :obj:`accuracy`,
            :obj:`auc` (two classes), the chosen :obj:`setting` index and :obj:`C`.
    """

    protocol: str
    accuracy_mean: float
    accuracy_std: float
    fold_std: float
    repeat_accuracies: List[float]
    best_setting: str
    best_params: Dict[str, Any]
    chosen: Dict[str, int] = field(default_factory=dict)
    folds: Dict[str, Any] = field(default_factory=dict)

    def brief(self) -> str:
        """One line: the protocol, its accuracy (%, mean +- std over the repeats) and the choice."""
        return (f"{self.protocol}: accuracy {100 * self.accuracy_mean:.2f} +- {100 * self.accuracy_std:.2f} "
                f"over {len(self.repeat_accuracies)} repeat(s), "
                f"{'most often ' if self.protocol == 'nested' else ''}{self.best_setting}, "
                f"C={self.best_params['C']:g}")

    def __repr__(self) -> str:  # (without the per-fold lists)
        return f"ProtocolResult({self.brief()})"

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
            validation accuracies; NaN beyond a split's own inner folds
            (:func:`~kong_pyg.evaluation.splits.random_splits` gives fewer where a
            training part is small).
        feature_seconds (list): Feature time of each setting.
        cv_seconds (float): Time spent fitting.
        fits (int): SVM problems solved; :obj:`stuck`: those that hit max_iter.
        fit_seconds (list), stuck_per_setting (list): The same per setting.
        outer_auc (numpy.ndarray, optional): :obj:`[S, len(C), R, F]` test
            ROC AUC (two classes).
        fit_info (list): Per setting, what the SVM was fit on (route,
            design width, Newton steps or LIBLINEAR iterations: :attr:`SettingScores.info`).
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
    outer_auc: Optional[np.ndarray] = None
    fit_info: List[Dict[str, Any]] = field(default_factory=list)

    def __repr__(self) -> str:  # (without the score arrays)
        S, nC, R, F = self.outer.shape
        inner = "" if self.inner is None else f", inner CV of {self.inner.shape[-1]} folds"
        return (f"CVResult({S} setting(s) x {nC} C, {R} repeat(s) x {F} folds{inner}, {self.fits} fits: "
                ".protocol('paper' or 'nested') summarizes, .grid_table() lists the settings)")

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

    def _folds(self, s_idx: np.ndarray, c_idx: np.ndarray, acc: np.ndarray) -> Dict[str, Any]:
        R, F = acc.shape
        r_idx, f_idx = np.meshgrid(np.arange(R), np.arange(F), indexing="ij")
        out: Dict[str, Any] = {"accuracy": acc.tolist(), "setting": s_idx.tolist(),
                               "C": np.asarray(self.C)[c_idx].tolist()}
        if self.outer_auc is not None:
            out["auc"] = self.outer_auc[s_idx, c_idx, r_idx, f_idx].tolist()
        return out

    def _paper(self) -> ProtocolResult:
        nC = self.outer.shape[1]
        means = self.outer.mean(axis=(2, 3)).reshape(-1)
        best = int(np.argmax(means))  # first maximum: earlier setting, smaller C
        s, c = divmod(best, nC)
        acc = self.outer[s, c]  # [R, F]
        folds = self._folds(np.full(acc.shape, s), np.full(acc.shape, c), acc)
        return ProtocolResult(
            "paper", float(acc.mean()), float(acc.mean(axis=1).std()), float(acc.std()),
            acc.mean(axis=1).tolist(), self.settings[s].name, self._params(s, c), folds=folds,
        )

    def _nested(self) -> ProtocolResult:
        if self.inner is None:
            raise ValueError("the nested protocol needs inner scores (inner_folds)")
        S, nC, _, F = self.outer.shape
        R = self.inner.shape[2]  # nested may use fewer repeats than the paper protocol
        inner = np.nanmean(self.inner, axis=4).reshape(S * nC, R, F)  # (NaN: folds a split does not have)
        pick = np.argmax(inner, axis=0)  # [R, F]
        s_idx, c_idx = np.divmod(pick, nC)
        r_idx, f_idx = np.meshgrid(np.arange(R), np.arange(F), indexing="ij")
        acc = self.outer[s_idx, c_idx, r_idx, f_idx]  # [R, F]
        times = np.bincount(pick.reshape(-1), minlength=S * nC)
        # most often first; ties in grid order, so the first is the best setting reported (argmax's pick)
        order = sorted(np.flatnonzero(times).tolist(), key=lambda i: (-int(times[i]), i))
        chosen: Dict[str, int] = {}
        for i in order:  # (two choices shown alike, e.g. C = 1 and 1.0000001, add up)
            key = f"{self.settings[i // nC].name}, C={self.C[i % nC]:g}"
            chosen[key] = chosen.get(key, 0) + int(times[i])
        top = int(times.argmax())
        s, c = divmod(top, nC)
        return ProtocolResult(
            "nested", float(acc.mean()), float(acc.mean(axis=1).std()), float(acc.std()),
            acc.mean(axis=1).tolist(), self.settings[s].name, self._params(s, c), chosen,
            self._folds(s_idx, c_idx, acc),
        )

    def only(self, s: int) -> "CVResult":
        """The scores of one setting alone: its :meth:`protocol` chooses only :math:`C`.

        Args:
            s (int): The setting's index in :attr:`settings`.

        Returns:
            :class:`CVResult` with one setting (the times and counts of the
            fits are that setting's where recorded per setting, else the
            totals' share).
        """
        S = len(self.settings)
        if not 0 <= s < S:
            raise ValueError(f"'s' must be a setting index in [0, {S}) (got {s})")

        def one(values: List[Any]) -> List[Any]:
            return values[s : s + 1] if values else []

        fit_seconds = one(self.fit_seconds)
        stuck = one(self.stuck_per_setting)
        return CVResult(
            one(self.settings), self.C, self.outer[s : s + 1],
            None if self.inner is None else self.inner[s : s + 1], one(self.feature_seconds),
            float(sum(fit_seconds)) if fit_seconds else self.cv_seconds / S, self.fits // S,
            int(sum(stuck)) if stuck else (self.stuck if S == 1 else 0), fit_seconds, stuck,
            None if self.outer_auc is None else self.outer_auc[s : s + 1], one(self.fit_info),
        )

    def grid_table(self) -> List[Dict[str, Any]]:
        """Per setting: its best :math:`C`, the mean CV accuracy there, its times and fit route."""
        means = self.outer.mean(axis=(2, 3))
        rows = []
        for s, setting in enumerate(self.settings):
            c = int(np.argmax(means[s]))
            rows.append({
                "setting": setting.name, "params": setting.config, "C": self.C[c],
                "accuracy": float(means[s, c]), "feature_seconds": self.feature_seconds[s],
                "fit_seconds": self.fit_seconds[s] if self.fit_seconds else None,
                "fits_not_converged": self.stuck_per_setting[s] if self.stuck_per_setting else None,
                "fit_on": self.fit_info[s] if self.fit_info else None,
            })
        return rows


def _plan(y: np.ndarray, repeats: int, folds: int, nested: bool, inner_folds: int,
          nested_repeats: Optional[int], C: Union[float, Sequence[float]], seed: int,
          splits: Optional[Splits]) -> Tuple[List[float], Splits, int]:
    """Check the CV arguments; the C grid, the splits and the nested repeats."""
    Cs = check_c_grid("C", C)
    if splits is not None:
        check_given_splits(splits, nested)
        return Cs, splits, len(splits.inner) if nested and splits.inner is not None else 0
    check_int("repeats", repeats, 1, MAX_REPEATS)
    check_int("folds", folds, 2)
    if nested:
        check_int("inner_folds", inner_folds, 2)
        nested_repeats = repeats if nested_repeats is None else check_int("nested_repeats", nested_repeats, 1)
        if nested_repeats > repeats:
            raise ValueError(f"'nested_repeats' ({nested_repeats}) must be at most 'repeats' ({repeats})")
    else:
        nested_repeats = 0
    out = make_splits(y, repeats, folds, inner_folds if nested else None, seed, nested_repeats)
    return Cs, out, nested_repeats


def _load(entry: FeatureEntry, rows: int, index: int) -> Tuple[Union[Matrix, Gram], float]:
    """A setting's features (calling :obj:`entry` if it is callable) and the seconds it took."""
    t0 = time.perf_counter()
    X = entry() if callable(entry) else entry
    seconds = time.perf_counter() - t0 if callable(entry) else 0.0
    return checked_features(X, rows, f"features of setting {index}"), seconds


def _setting_scores(entry: FeatureEntry, index: int, y: np.ndarray, jobs: Jobs, Cs: List[float],
                    max_iter: int, tol: Optional[float], device: Any = None,
                    progress: Optional[Progress] = None) -> Tuple[float, float, SettingScores]:
    """One setting: its features (timed), then every fit; (feature seconds, fit seconds, scores).

    One PyTorch thread and one BLAS thread for NumPy and SciPy (settings are the parallelism,
    ``n_jobs``): features and fits are many small operations, 6x (features) to 10x (fits) slower with
    two threads on a loaded 2-core machine.
    """
    from threadpoolctl import threadpool_limits  # (scikit-learn's own dependency)

    from ..threads import torch_threads

    with torch_threads(1), threadpool_limits(limits=1, user_api="blas"):
        X, seconds = _load(entry, y.size, index)
        t1 = time.perf_counter()
        res = score_jobs(X, y, jobs, Cs, max_iter=max_iter, tol=tol, progress=progress, device=device)
    return seconds, time.perf_counter() - t1, res  # (a GPU's work included: fit_many copies results back)


@cpu_by_default
def cross_validate(
    features: Sequence[FeatureEntry],
    y: Any,
    *,
    settings: Optional[Sequence[Setting]] = None,
    nested: bool = True,
    nested_repeats: Optional[int] = None,
    repeats: int = REPEATS,
    folds: int = FOLDS,
    inner_folds: int = INNER_FOLDS,
    C: Sequence[float] = DEFAULT_C,
    seed: int = 0,
    n_jobs: int = 1,
    max_iter: int = MAX_ITER,
    tol: Optional[float] = None,
    project: Union[bool, str] = "auto",
    progress: Union[bool, Progress] = False,
    splits: Optional[Splits] = None,
    device: Any = None,
) -> CVResult:
    r"""Score every (setting, :math:`C`) on repeated splits.

    Args:
        features (sequence): Per setting a feature matrix
            (:obj:`[n, d]` CSR or dense, or a :class:`Gram`), or a callable
            returning one; callables are called once, timed, and the matrix
            is dropped after its fits (memory holds one setting at a time).
        y (array-like): :obj:`[n]` class labels.
        settings (list, optional): The :class:`Setting` of each entry (for
            names); defaults to ``features-0, features-1, ...``.
        nested (bool, optional): Also compute the inner-split scores of the
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
        n_jobs (int, optional): Processes over settings (each computes a
            setting's features and fits them; one thread each). The results
            do not depend on it. Forked: where the system has no ``fork``
            (Windows) the settings run in this process, with a warning.
            (default: :obj:`1`)
        max_iter (int, optional): Newton steps at most per SVM problem;
            problems that hit it are counted. (default: :obj:`100`)
        tol (float, optional): The solver's margin tolerance
            (:data:`~kong_pyg.evaluation.svm.MARGIN_TOL`; not LIBLINEAR's
            relative gradient norm). (default: :obj:`None`)
        project (bool or str, optional): Kept for compatibility: the SVM is
            always fit on an exact basis of the features' span
            (:func:`~kong_pyg.evaluation.svm.design`). (default: :obj:`"auto"`)
        progress (bool or Progress, optional): A progress bar on stderr
            counting SVM problems (or a :class:`Progress` to count into).
            (default: :obj:`False`)
        splits (Splits, optional): Use these splits instead of
            :obj:`repeats`, :obj:`folds` and :obj:`inner_folds` (for
            instance :func:`random_splits`). (default: :obj:`None`)
        device (str or torch.device, optional): Where the SVM problems are
            solved, e.g. :obj:`"cuda"` (the features are computed as the
            entries compute them; off the CPU the settings run one after the
            other in this process, whatever :obj:`n_jobs`, and every design
            gets the exact solver). (default: the CPU)

    Returns:
        :class:`CVResult`
    """
    del project  # every setting is fit on an exact basis of its span
    check_bool("nested", nested)
    y = class_labels(y)
    check_int("n_jobs", n_jobs, 1)
    check_int("max_iter", max_iter, 1)
    if not isinstance(progress, Progress):
        check_bool("progress", progress)
    dev = check_usable_device("device", device)
    if dev is not None and dev.type != "cpu":
        n_jobs = 1  # the GPU is the parallelism (and CUDA does not survive a fork)
    if not isinstance(features, (list, tuple)) or isinstance(features, Gram):  # (a Gram is a tuple too)
        raise TypeError("'features' must be a list with one entry per setting (a matrix, a Gram or a "
                        f"callable returning one; got {type(features).__name__}): wrap one matrix as [X]")
    if not features:
        raise ValueError("'features' is empty")
    Cs, sp, nested_repeats = _plan(y, repeats, folds, nested, inner_folds, nested_repeats, C, seed, splits)
    jobs = plan_jobs(sp, y.size, y)
    names = list(settings) if settings is not None else [
        Setting("features", (("index", i),)) for i in range(len(features))]
    if len(names) != len(features) or not all(isinstance(n, Setting) for n in names):
        raise ValueError(f"'settings' must hold one Setting per entry of 'features' ({len(features)}; got "
                         f"{len(names)}: {[type(n).__name__ for n in names][:3]})")
    S, nC = len(features), len(Cs)
    R, F = len(sp.outer), len(sp.outer[0])
    # (random splits may have fewer inner folds where a training part is small: NaN beyond a split's own)
    n_inner = max(len(folds) for rep in sp.inner for folds in rep) if nested and sp.inner else 0
    outer = np.zeros((S, nC, R, F))
    auc = np.full((S, nC, R, F), np.nan)
    inner = np.full((S, nC, nested_repeats, F, n_inner), np.nan) if nested else None
    per_setting = num_fits(y, len(jobs.keys), nC)
    own = not isinstance(progress, Progress)
    bar = progress if isinstance(progress, Progress) else Progress(S * per_setting, "CV", enabled=progress)
    feature_seconds: List[float] = [0.0] * S
    fit_seconds: List[float] = [0.0] * S
    stuck: List[int] = [0] * S
    info: List[Dict[str, Any]] = [{} for _ in range(S)]
    work = partial(_setting_scores, y=y, jobs=jobs, Cs=Cs, max_iter=max_iter, tol=tol, device=dev)
    try:
        for s, (seconds, t_fit, res) in run_settings(work, features, names, n_jobs, bar, per_setting):
            feature_seconds[s], fit_seconds[s], stuck[s], info[s] = seconds, t_fit, res.stuck, res.info
            for j, (r, f, i) in enumerate(jobs.keys):
                if i is None:
                    outer[s, :, r, f] = res.acc[j]
                    auc[s, :, r, f] = res.auc[j]
                elif inner is not None:
                    inner[s, :, r, f, i] = res.acc[j]
    finally:
        if own:
            bar.close()
    has_auc = bool(np.isfinite(auc).any())
    return CVResult(names, Cs, outer, inner, feature_seconds, float(sum(fit_seconds)), S * per_setting,
                    int(sum(stuck)), fit_seconds, stuck, auc if has_auc else None, info)


__all__ = [
    "DEFAULT_C",
    "MAX_ITER",
    "Splits",
    "Jobs",
    "make_splits",
    "random_splits",
    "plan_jobs",
    "num_fits",
    "roc_auc",
    "average_ranks",
    "score_jobs",
    "SettingScores",
    "ProtocolResult",
    "CVResult",
    "cross_validate",
]
