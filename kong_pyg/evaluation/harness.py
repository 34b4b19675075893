r"""One entry point for scoring feature maps on shared splits: :func:`evaluate_features`.

Table 1 (:func:`~kong_pyg.evaluation.cv.cross_validate`, which chooses one
setting among many), Table 2 (:mod:`kong_pyg.experiments.table2`) and the
order test (:mod:`kong_pyg.ordertest`) all fit the same classifier, with the
same solver settings, on the same kinds of splits:

* the classifier is scikit-learn's :class:`~sklearn.svm.LinearSVC` problem
  (squared hinge, L2, intercept regularized as LIBLINEAR does), solved to
  its exact optimum for every training set and every :math:`C` at once
  (:mod:`~kong_pyg.evaluation.svm`) on an exact basis of the span of the
  features (a Gram matrix is the same classifier);
* the splits are :func:`~kong_pyg.evaluation.cv.make_splits` (repeated
  stratified :math:`F`-fold) or :func:`~kong_pyg.evaluation.cv.random_splits`
  (stratified random train/test splits), with inner splits for the nested
  protocol;
* the metrics are test accuracy and, for two classes, ROC AUC of the
  decision values.

:func:`evaluate_features` scores each named feature map on its own: under
the ``nested`` protocol every outer split chooses :math:`C` by the mean
inner accuracy on its training part (ties: the earlier :math:`C` of the
grid) and reports the fit on the whole training part with that :math:`C`
(the refit of :class:`~sklearn.model_selection.GridSearchCV`); under the
``paper`` protocol one :math:`C` per map is chosen by the mean test accuracy
over all outer splits.
"""
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

from ..config import check_bool, check_c_grid, check_choice, check_int, check_usable_device
from ..devices import cpu_by_default
from .cv import DEFAULT_C, MAX_ITER, FeatureEntry, num_fits, score_jobs
from .progress import Progress
from .splits import Jobs, Splits, class_labels, plan_jobs

#: The metrics :func:`evaluate_features` reports.
METRICS = ("accuracy", "auc")
#: The protocols.
PROTOCOLS = ("nested", "paper")

#: Features of one map: shared by every split, or one entry per outer split (seeded maps).
MapFeatures = Union[FeatureEntry, Sequence[FeatureEntry]]


@dataclass
class FeatureScores:
    """The scores of one feature map on every outer split.

    Attributes:
        scores (dict): Per metric, one value per outer split (in the order
            of :obj:`splits.outer`, repeat by repeat, fold by fold).
        C (list): The :math:`C` used on every outer split.
        grid (dict): Per metric :obj:`[len(C grid), splits]` the test
            scores of every :math:`C` (the paper protocol reads these).
        fits (int): SVM problems solved (training set, :math:`C`, class).
        not_converged (int): Those stopped at :obj:`max_iter`.
        feature_seconds (float): Time computing the features (callables only).
        fit_seconds (float): Time fitting and scoring.
        info (list): What the SVM was fit on (one entry per feature matrix).
    """

    scores: Dict[str, List[float]]
    C: List[float]
    grid: Dict[str, List[List[float]]]
    fits: int
    not_converged: int
    feature_seconds: float
    fit_seconds: float
    info: List[Dict[str, Any]] = field(default_factory=list)

    def __repr__(self) -> str:  # (without the per-split lists)
        means = ", ".join(f"{m} {self.mean(m):.4f}" for m, v in self.scores.items() if len(v))
        splits = len(next(iter(self.scores.values()), []))
        return f"FeatureScores(mean over {splits} split(s): {means}; {self.fits} fits)"

    def mean(self, metric: str = "accuracy") -> float:
        """The mean of :obj:`metric` over the outer splits."""
        from .stats import metric_scores

        return float(np.mean(metric_scores(self.scores, metric)))


def _per_split(entry: MapFeatures, n_outer: int, name: str) -> Optional[List[FeatureEntry]]:
    """The per-split entries of a seeded map, or :obj:`None` for features shared by all splits."""
    from .features import Gram

    if isinstance(entry, (list, tuple)) and not isinstance(entry, Gram):  # (a Gram is a tuple)
        if len(entry) != n_outer:
            raise ValueError(f"features {name!r}: {len(entry)} entries for {n_outer} outer splits")
        return list(entry)
    return None


def _subjobs(jobs: Jobs, outer: int) -> Jobs:
    """The jobs of outer split :obj:`outer` only (its fit, then its inner fits)."""
    keep = _sub_index(jobs, outer)
    parent = np.where(jobs.parent[keep] < 0, -1, 0)
    return Jobs([jobs.keys[j] for j in keep], jobs.train[keep], [jobs.test[j] for j in keep], parent)


def _load(entry: FeatureEntry, n: int, name: str) -> Any:
    from .features import checked_features

    return checked_features(entry() if callable(entry) else entry, n, f"features {name!r}")


def _choose(acc: np.ndarray, jobs: Jobs, protocol: str) -> np.ndarray:
    """The chosen :math:`C` index of every outer split."""
    top = np.flatnonzero(jobs.parent < 0)
    if protocol == "paper":
        return np.full(top.size, int(np.argmax(acc[top].mean(axis=0))))
    picks = np.empty(top.size, dtype=np.int64)
    for k, j in enumerate(top):
        inner = np.flatnonzero(jobs.parent == j)
        if inner.size == 0:
            raise ValueError("the nested protocol needs inner splits (inner_folds)")
        picks[k] = int(np.argmax(acc[inner].mean(axis=0)))  # ties: the earlier C
    return picks


@cpu_by_default
def evaluate_features(
    features: Mapping[str, MapFeatures],
    y: Any,
    *,
    splits: Splits,
    protocol: str = "nested",
    Cs: Sequence[float] = DEFAULT_C,
    metrics: Sequence[str] = METRICS,
    max_iter: int = MAX_ITER,
    tol: Optional[float] = None,
    n_jobs: int = 1,
    progress: Union[bool, Progress] = False,
    device: Any = None,
) -> Dict[str, FeatureScores]:
    r"""Score every named feature map on the same splits, each with its own choice of :math:`C`.

    .. code-block:: python

        from kong_pyg.evaluation.cv import random_splits
        from kong_pyg.evaluation.harness import evaluate_features

        splits = random_splits(y, 100, test_size=0.2, inner_folds=5, seed=0)
        res = evaluate_features({"K-1": X1, "K-2": X2}, y, splits=splits, Cs=[0.1, 1, 10])
        res["K-2"].scores["accuracy"]  # one value per split

    Args:
        features (mapping): Per name a feature matrix (:obj:`[n, d]` SciPy
            sparse or dense), a :class:`~kong_pyg.evaluation.features.Gram`,
            or a callable returning one; or a list with one such entry per
            outer split (maps whose features depend on the split's seed).
        y (array-like): :obj:`[n]` class labels.
        splits (Splits): The splits
            (:func:`~kong_pyg.evaluation.cv.make_splits`,
            :func:`~kong_pyg.evaluation.cv.random_splits`); the nested
            protocol needs inner splits.
        protocol (str, optional): :obj:`"nested"` (:math:`C` by inner CV on
            each training part) or :obj:`"paper"` (one :math:`C` by the mean
            test accuracy). (default: :obj:`"nested"`)
        Cs (sequence, optional): The :math:`C` grid. (default: :obj:`(0.1, 1, 10)`)
        metrics (sequence, optional): Of :obj:`"accuracy"`, :obj:`"auc"`
            (two classes only; NaN otherwise). (default: both)
        max_iter (int, optional): Newton steps at most per SVM problem.
            (default: :obj:`100`)
        tol (float, optional): The solver's margin tolerance. (default:
            :data:`~kong_pyg.evaluation.svm.MARGIN_TOL`)
        n_jobs (int, optional): Solver threads. (default: :obj:`1`)
        progress (bool or Progress, optional): A progress bar on stderr
            counting SVM problems, or a :class:`Progress` to count into.
            (default: :obj:`False`)
        device (str or torch.device, optional): Where the SVM problems are
            solved (:func:`~kong_pyg.evaluation.cv.score_jobs`), e.g.
            :obj:`"cuda"`; the features stay where they are made.
            (default: the CPU)

    Returns:
        dict: Per name a :class:`FeatureScores`.
    """
    check_choice("protocol", protocol, PROTOCOLS)
    try:
        metrics = [metrics] if isinstance(metrics, str) else list(metrics)  # (one name: "auc")
    except TypeError:
        raise TypeError(f"'metrics' must be a metric's name or a list of them, of {list(METRICS)} (got "
                        f"{type(metrics).__name__})") from None
    if not metrics:
        raise ValueError(f"'metrics' is empty: name one or more of {list(METRICS)}")
    for m in metrics:
        check_choice("metrics", m, METRICS)
    check_int("max_iter", max_iter, 1)
    check_int("n_jobs", n_jobs, 1)
    check_usable_device("device", device)
    if not isinstance(progress, Progress):
        check_bool("progress", progress)
    if not isinstance(features, Mapping):
        raise TypeError("'features' must be a mapping of names to features (a dict such as "
                        f"{{'kong': X}}), got {type(features).__name__}")
    if not features:
        raise ValueError("'features' is empty")
    if not isinstance(splits, Splits):
        raise TypeError("'splits' must be a Splits (make_splits or random_splits), "
                        f"got {type(splits).__name__}")
    Cs = check_c_grid("Cs", Cs)
    y = class_labels(y)
    for name, entry in features.items():  # (before the splits' indices are checked against y: the cause)
        shape = getattr(entry, "shape", None)
        if shape is not None and len(shape) == 2 and shape[0] != y.size:
            raise ValueError(f"features {name!r} have {shape[0]} rows, y has {y.size}")  # (as a callable's)
    jobs = plan_jobs(splits, y.size, y)
    n_outer = int((jobs.parent < 0).sum())
    total = len(features) * num_fits(y, len(jobs.keys), len(Cs))
    bar = progress if isinstance(progress, Progress) else Progress(total, "evaluate", enabled=progress)
    out: Dict[str, FeatureScores] = {}
    try:
        for name, entry in features.items():
            out[name] = _evaluate_one(name, entry, y, jobs, n_outer, protocol, Cs, metrics, max_iter, tol,
                                      n_jobs, bar, device)
    finally:
        if not isinstance(progress, Progress):
            bar.close()
    return out


def _evaluate_one(name: str, entry: MapFeatures, y: np.ndarray, jobs: Jobs, n_outer: int, protocol: str,
                  Cs: List[float], metrics: Sequence[str], max_iter: int, tol: Optional[float], n_jobs: int,
                  bar: Progress, device: Any) -> FeatureScores:
    """:func:`evaluate_features` for one map."""
    per = _per_split(entry, n_outer, name)
    parts = [(jobs, entry)] if per is None else [(_subjobs(jobs, k), per[k]) for k in range(n_outer)]
    acc = np.zeros((len(jobs.keys), len(Cs)))
    auc = np.full((len(jobs.keys), len(Cs)), np.nan)
    feature_s = fit_s = 0.0
    stuck = 0
    info: List[Dict[str, Any]] = []
    everything = np.arange(len(jobs.keys))
    for k, (sub, item) in enumerate(parts):
        bar.status(f"{name}: features")
        t0 = time.perf_counter()
        X = _load(item, y.size, name)
        feature_s += time.perf_counter() - t0 if callable(item) else 0.0
        bar.status(f"{name}: fitting")
        t1 = time.perf_counter()
        res = score_jobs(X, y, sub, Cs, max_iter=max_iter, n_jobs=n_jobs, tol=tol, progress=bar,
                         device=device)
        fit_s += time.perf_counter() - t1
        del X
        stuck += res.stuck
        info.append(res.info)
        idx = everything if per is None else _sub_index(jobs, k)
        acc[idx], auc[idx] = res.acc, res.auc
    picks = _choose(acc, jobs, protocol)
    top = np.flatnonzero(jobs.parent < 0)
    table = {"accuracy": acc[top], "auc": auc[top]}
    scores = {m: [float(table[m][k, c]) for k, c in enumerate(picks)] for m in metrics}
    grid = {m: table[m].T.tolist() for m in metrics}
    return FeatureScores(scores, [Cs[c] for c in picks], grid, num_fits(y, len(jobs.keys), len(Cs)), stuck,
                         feature_s, fit_s, info)


def _sub_index(jobs: Jobs, outer: int) -> np.ndarray:
    """The rows of :obj:`jobs` that :func:`_subjobs` keeps for outer split :obj:`outer`."""
    top = np.flatnonzero(jobs.parent < 0)[outer]
    return np.flatnonzero((np.arange(len(jobs.keys)) == top) | (jobs.parent == top))


__all__ = ["evaluate_features", "FeatureScores", "METRICS", "PROTOCOLS"]
