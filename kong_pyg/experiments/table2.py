r"""Ordered neighborhoods on real interaction data: the KONG paper's Table 2, with honest controls.

The protocol (the paper's Table 2, MovieLens row): one ordered ego graph per
user (:class:`~kong_pyg.datasets.MovieLensOrdered`), class = gender, features
with :math:`h = 1`, the cosine base kernel and :math:`p = 1`:

* **K-1**: 1-grams (label counts, the unordered case),
* **K-2**: 2-grams of the true (time) order,
* **K-2 consistent**: 2-grams after a *consistent* shuffle
  (:obj:`order="consistent"`: one seeded random position per rating, the
  same in every graph, i.e. random timestamps): the honest control for
  "does the time order matter?",
* **K-2 shuffled**: 2-grams after shuffling every neighborhood of every
  graph independently (:obj:`order="random"`), the paper's control; it turns
  a movie's audience order, the same in every graph, into per-graph noise,
  so it favours the true order,
* **K-2 reverse**: 2-grams in reversed time,
* **WL**: Weisfeiler-Lehman subtree histograms, :math:`h = 1`
  (:func:`kong_pyg.evaluation.baselines.wl_features`),
* **KW**: walk-label-sequence counts, walks of length :math:`\le 1`, cosine
  per node (:func:`kong_pyg.evaluation.baselines.walk_features`),
* **K-1 / K-2 authors** (and their shuffles): the KONG authors' features,
  options not code forks (:obj:`AUTHORS`: no own label, 1+2-grams, unit
  graph vectors, with the wide grid :obj:`C_GRID_NORMALIZED`),

and more variants (:func:`table2_methods`). The shuffled rows use split
:math:`s`'s seed (cycled over :obj:`shuffle_seeds` seeds if given). Every
method is scored by the shared evaluation harness
(:func:`~kong_pyg.evaluation.harness.evaluate_features`) on the same
stratified random splits (80 % / 20 % by default): a LinearSVC whose
:math:`C` is chosen by stratified inner cross-validation on the training
part only, refit there, scored on the test part (accuracy and ROC AUC).
Methods are compared split by split (:mod:`kong_pyg.evaluation.stats`:
paired t-test, Wilcoxon, and the Nadeau-Bengio corrected resampled t-test
with its interval, which accounts for the overlap of repeated splits).

Features are computed once on all graphs (the kernels are unsupervised and
transductive, as in the paper), then split. Run it with
``kong-pyg table2 --ml-dir PATH/ml-100k --out docs/results``
(:mod:`kong_pyg.cli.table2`; both tie rules, see
:class:`~kong_pyg.datasets.MovieLensOrdered`); the report is written by
:mod:`kong_pyg.experiments.table2_report`.
"""
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import __version__
from ..config import check_c_grid, check_int, python_number
from ..devices import cpu_by_default
from ..evaluation.splits import fewer_folds_note, inner_folds_used
from ..evaluation.stats import mean_ci, paired_comparison, with_corrected_interval
from ..ordertest import C_NORMALIZED
from ..warn import warn
from .resume import ResumeFile, graphs_digest
from .table2_report import PAPER_MOVIELENS, write_markdown

#: The C grid of the protocol (rows with unnormalized graph vectors).
C_GRID: Tuple[float, ...] = (0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0)
#: The C grid of rows with L2-normalized graph vectors: unit-length rows need large C (the
#: authors' variant chose 1e4, the top of :obj:`C_GRID`, in 85-96 % of splits).
C_GRID_NORMALIZED: Tuple[float, ...] = C_NORMALIZED

#: The fractions of the accuracy curve (the paper's Figure 2 analogue).
FRACTIONS: Tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)

#: A feature function: :obj:`features(graphs, seed) -> X`.
FeatureFn = Callable[[Any, int], Any]


@dataclass
class Method:
    """A feature map of the experiment.

    Attributes:
        name (str): The row label.
        features (callable): :obj:`features(graphs, seed) -> X` (numpy or
            scipy matrix, one row per graph).
        seeded (bool): Recompute per split with the split's seed (random
            orders); otherwise computed once.
        note (str): What it is, for the results file.
        normalized (bool): Unit-length graph vectors: :math:`C` comes from
            the wide grid (:obj:`C_GRID_NORMALIZED`). (default: :obj:`False`)
    """

    name: str
    features: FeatureFn
    seeded: bool
    note: str
    normalized: bool = False


def _kong(**options: Any) -> FeatureFn:
    def run(graphs: Any, seed: int) -> Any:
        from ..vectorizer import KongVectorizer

        return KongVectorizer(hops=1, kernel="cosine", degree=1, seed=seed, **options).fit_transform(graphs)

    return run


def _wl(graphs: Any, seed: int) -> Any:
    from ..evaluation.baselines import wl_features

    return wl_features(graphs, hops=1)


def _kw(length: int) -> FeatureFn:
    def run(graphs: Any, seed: int) -> Any:
        from ..evaluation.baselines import walk_features

        return walk_features(graphs, length=length, cumulative=True, node_norm=True)

    return run


#: The authors' features (their code): neighbor labels only, 1- and 2-grams, unit graph vectors.
AUTHORS: Dict[str, Any] = dict(own_label=False, blended=True, normalize=True)
_CONSISTENT = ("one seeded random position per rating (random timestamps), the same in every graph: "
               "the honest control")
_PER_GRAPH = ("every neighborhood of every graph shuffled independently: the paper's control, biased "
              "because a movie's audience, the same in every graph, becomes per-graph noise")


def table2_methods() -> Dict[str, Method]:
    """All methods by name (:obj:`DEFAULT_METHODS` are the default rows)."""
    a = AUTHORS
    ms = [
        Method("K-1", _kong(k=1), False, "1-grams, h=1, cosine p=1"),
        Method("K-2", _kong(k=2), False, "2-grams, true (time) order, h=1, cosine p=1"),
        Method("K-2 consistent", _kong(k=2, order="consistent"), True, f"2-grams after a {_CONSISTENT}"),
        Method("K-2 shuffled", _kong(k=2, order="random"), True, f"2-grams, {_PER_GRAPH}"),
        Method("K-2 reverse", _kong(k=2, order="reverse"), False, "2-grams in reversed time order"),
        Method("WL", _wl, False, "WL subtree histograms, h=1 (iterations 0 and 1), raw counts"),
        Method("KW", _kw(1), False, "label sequences of walks of length <= 1, cosine p=1 per node"),
        Method("K-1 authors", _kong(k=1, own_label=False, normalize=True), False,
               "the authors' K-1: neighbor labels only (no own label), graph vectors L2-normalized", True),
        Method("K-2 authors", _kong(k=2, **a), False,
               "the authors' K-2: neighbor labels only, 1- and 2-grams, graph vectors L2-normalized, "
               "true order", True),
        Method("K-2 authors consistent", _kong(k=2, order="consistent", **a), True,
               f"the authors' K-2 after a {_CONSISTENT}", True),
        Method("K-2 authors shuffled", _kong(k=2, order="random", **a), True,
               f"the authors' K-2, {_PER_GRAPH}", True),
        Method("K-2 authors reverse", _kong(k=2, order="reverse", **a), False,
               "the authors' K-2 in reversed time order", True),
        Method("K-2 blended", _kong(k=2, blended=True), False,
               "variant: 1-grams and 2-grams with the own label, true order"),
        Method("K-2 blended shuffled", _kong(k=2, blended=True, order="random"), True,
               f"variant: 1-grams and 2-grams with the own label, {_PER_GRAPH}"),
        Method("K-1 graph-norm", _kong(k=1, normalize=True), False,
               "variant: K-1 with each graph vector L2-normalized", True),
        Method("K-2 blended graph-norm", _kong(k=2, blended=True, normalize=True), False,
               "variant: 1+2-grams with the own label, graph vectors L2-normalized", True),
        Method("KW-2", _kw(2), False, "variant: walks of length <= 2, cosine p=1 per node"),
    ]
    return {m.name: m for m in ms}


#: The default rows: the paper's five, the honest control, time reversal and the authors' variant.
DEFAULT_METHODS: Tuple[str, ...] = ("K-1", "K-2", "K-2 consistent", "K-2 shuffled", "K-2 reverse", "WL", "KW",
                                    "K-1 authors", "K-2 authors", "K-2 authors consistent",
                                    "K-2 authors shuffled")
#: (a, b) pairs compared split by split (those whose rows ran); the first of each group is the answer.
PAIRS: Tuple[Tuple[str, str], ...] = (
    ("K-2", "K-2 consistent"), ("K-2", "K-2 shuffled"), ("K-2 consistent", "K-2 shuffled"), ("K-2", "K-1"),
    ("K-2", "K-2 reverse"),
    ("K-2 authors", "K-2 authors consistent"), ("K-2 authors", "K-2 authors shuffled"),
    ("K-2 authors consistent", "K-2 authors shuffled"), ("K-2 authors", "K-1 authors"),
    ("K-2 authors", "K-2 authors reverse"),
    ("K-2 blended", "K-2 blended shuffled"),
)


# ---------------------------------------------------------------------------
# the protocol
# ---------------------------------------------------------------------------


def score_split(X: Any, y: np.ndarray, train: np.ndarray, test: np.ndarray,
                C_grid: Sequence[float] = C_GRID, inner_folds: int = 5, seed: int = 0) -> Dict[str, float]:
    """Accuracy, ROC AUC, chosen C and fit time of one split (by the shared harness)."""
    from ..evaluation.harness import evaluate_features
    from ..evaluation.splits import Splits, _inner

    smallest = int(np.bincount(y[train])[np.unique(y[train])].min())
    if smallest < 2:
        raise ValueError(f"a class has only {smallest} training example(s); inner CV needs 2 or more")
    splits = Splits([[(train, test)]], [[_inner(y, train, min(inner_folds, smallest), seed)]])
    r = evaluate_features({"X": X}, y, splits=splits, Cs=C_grid)["X"]
    return {"acc": r.scores["accuracy"][0], "auc": r.scores["auc"][0], "C": r.C[0], "train_s": r.fit_seconds,
            "unconverged": r.not_converged, "fits": r.fits}


class FeatureCache:
    """Features of each method, per seed for seeded methods, with timings.

    Args:
        graphs: The graphs.
        methods (dict): The methods by name (see :func:`table2_methods`).
    """

    def __init__(self, graphs: Any, methods: Dict[str, Method]):
        self.graphs = graphs
        self.methods = methods
        self.store: Dict[Tuple[str, int], Any] = {}
        self.seconds: Dict[str, List[float]] = {}
        self.dims: Dict[str, List[int]] = {}

    def get(self, name: str, seed: int) -> Any:
        """The features of :obj:`name` (with :obj:`seed` if it is seeded)."""
        m = self.methods[name]
        key = (name, seed if m.seeded else 0)
        if key not in self.store:
            t0 = time.perf_counter()
            X = m.features(self.graphs, key[1])
            self.seconds.setdefault(name, []).append(time.perf_counter() - t0)
            self.dims.setdefault(name, []).append(int(X.shape[1]))
            if hasattr(X, "tocsr"):
                X = X.tocsr()
            self.store[key] = X
        return self.store[key]


def _labels(graphs: Any) -> np.ndarray:
    from ..evaluation.classify import graph_targets

    return graph_targets(graphs).astype(np.int64)


def _summary(scores: Dict[str, Dict[str, Any]], cache: FeatureCache, grids: Dict[str, Sequence[float]],
             methods: Dict[str, Method]) -> Dict[str, Dict[str, Any]]:
    """Per method: :func:`mean_ci` of accuracy and AUC, times, dimension, chosen C, fits."""
    summary = {}
    for name, r in scores.items():
        n = len(r["acc"])
        summary[name] = {
            "acc": mean_ci(r["acc"]),
            "auc": mean_ci(r["auc"]),
            "train_s": r["fit_s"] / n,
            "feature_s": float(np.mean(cache.seconds[name])),
            "dim": float(np.mean(cache.dims[name])),
            "C_grid": list(grids[name]),
            "C": {str(c): int(sum(x == c for x in r["C"])) for c in grids[name]},
            "unconverged": int(r["not_converged"]),
            "fits": int(r["fits"]),
            "note": methods[name].note,
        }
    return summary


def method_grids(methods: Sequence[str], C_grid: Sequence[float] = C_GRID,
                 C_grid_normalized: Sequence[float] = C_GRID_NORMALIZED) -> Dict[str, Sequence[float]]:
    """The :math:`C` grid of each method: the wide one for normalized graph vectors (both checked)."""
    raw, normalized = check_c_grid("C_grid", C_grid), check_c_grid("C_grid_normalized", C_grid_normalized)
    all_methods = table2_methods()
    return {m: normalized if all_methods[m].normalized else raw for m in methods}


def shuffle_seed(seed: int, split: int, shuffle_seeds: Optional[int]) -> int:
    """The seed of the random orders on split :obj:`split`.

    :obj:`seed + split`, or cycled over :obj:`shuffle_seeds` seeds when given
    (each seed's features are then computed once).
    """
    return seed + (split % shuffle_seeds if shuffle_seeds else split)


def _score(cache: FeatureCache, name: str, y: np.ndarray, splits: Any, grid: Sequence[float], seed: int,
           shuffle_seeds: Optional[int], n_jobs: int, bar: Any, device: Any = None) -> Dict[str, Any]:
    """One method on every split, by the shared harness (:func:`evaluate_features`).

    A seeded method is scored once per seed, on the splits that use that
    seed together (:func:`shuffle_seed`), so its fits are batched as well as
    an unseeded method's.
    """
    from ..evaluation.harness import evaluate_features
    from ..evaluation.splits import Splits

    n = len(splits.outer)
    groups: Dict[int, List[int]] = {}
    for s in range(n):
        groups.setdefault(shuffle_seed(seed, s, shuffle_seeds) if cache.methods[name].seeded else seed,
                          []).append(s)
    row: Dict[str, Any] = {"acc": [0.0] * n, "auc": [0.0] * n, "C": [0.0] * n, "fits": 0, "not_converged": 0,
                           "fit_s": 0.0}
    for sd, members in groups.items():
        part = Splits([splits.outer[s] for s in members],
                      None if splits.inner is None else [splits.inner[s] for s in members])
        r = evaluate_features({name: cache.get(name, sd)}, y, splits=part, Cs=grid, n_jobs=n_jobs,
                              progress=bar, device=device)[name]
        for k, s in enumerate(members):
            row["acc"][s], row["auc"][s], row["C"][s] = r.scores["accuracy"][k], r.scores["auc"][k], r.C[k]
        row["fits"] += r.fits
        row["not_converged"] += r.not_converged
        row["fit_s"] += r.fit_seconds
    return row


def _evaluate(cache: FeatureCache, names: Sequence[str], y: np.ndarray, splits: Any,
              grids: Dict[str, Sequence[float]], seed: int, shuffle_seeds: Optional[int], n_jobs: int,
              progress: bool, desc: str, state: Optional[ResumeFile] = None,
              device: Any = None) -> Dict[str, Dict[str, Any]]:
    """Score every method on :obj:`splits` (skipping those :obj:`state` holds)."""
    from ..evaluation.cv import num_fits
    from ..evaluation.progress import Progress
    from ..evaluation.splits import plan_jobs

    jobs = len(plan_jobs(splits, y.size).keys)
    todo = [m for m in names if state is None or state.get(m) is None]
    out: Dict[str, Dict[str, Any]] = {}
    with Progress(sum(num_fits(y, jobs, len(grids[m])) for m in todo), desc, enabled=progress) as bar:
        for name in names:
            stored = state.get(name) if state is not None else None
            if stored is None:
                row = _score(cache, name, y, splits, grids[name], seed, shuffle_seeds, n_jobs, bar, device)
                if state is not None:
                    state.put(name, {**row, "feature_s": cache.seconds[name], "dims": cache.dims[name]})
            else:  # (its feature times and sizes go back into the cache, for the summary)
                cache.seconds[name], cache.dims[name] = list(stored["feature_s"]), list(stored["dims"])
                row = {k: v for k, v in stored.items() if k not in ("feature_s", "dims")}
            out[name] = row
    return out


@cpu_by_default
def run_table2(
    graphs: Any,
    methods: Sequence[str] = DEFAULT_METHODS,
    n_splits: int = 100,
    test_size: float = 0.2,
    C_grid: Sequence[float] = C_GRID,
    inner_folds: int = 5,
    seed: int = 0,
    progress: bool = False,
    cache: Optional[FeatureCache] = None,
    C_grid_normalized: Sequence[float] = C_GRID_NORMALIZED,
    shuffle_seeds: Optional[int] = None,
    resume: Optional[str] = None,
    tag: str = "",
    n_jobs: int = 1,
    device: Any = None,
) -> Dict[str, Any]:
    """Evaluate :obj:`methods` on :obj:`n_splits` stratified random splits.

    The classifier, splits and solver settings are the shared evaluation
    harness's (:func:`~kong_pyg.evaluation.harness.evaluate_features`):
    a LinearSVC solved exactly for every :math:`C` of the grid, :math:`C`
    chosen per split by inner stratified CV on its training part.

    Args:
        graphs: The graphs (one class label each in :obj:`y`).
        methods (sequence, optional): Names from :func:`table2_methods`.
            (default: :obj:`DEFAULT_METHODS`)
        n_splits (int, optional): Random splits. (default: :obj:`100`)
        test_size (float, optional): The test fraction. (default: :obj:`0.2`)
        C_grid (sequence, optional): The :math:`C` grid of rows with raw
            graph vectors. (default: :obj:`C_GRID`)
        inner_folds (int, optional): Inner folds choosing :math:`C`. (default: :obj:`5`)
        seed (int, optional): The seed of the splits; split :math:`s` uses
            :obj:`seed + s` for its inner folds and random orders. (default: :obj:`0`)
        progress (bool, optional): A progress bar counting SVM fits. (default: :obj:`False`)
        cache (FeatureCache, optional): Features computed before (shared
            with :func:`accuracy_curve`).
        C_grid_normalized (sequence, optional): The :math:`C` grid of rows
            with L2-normalized graph vectors. (default: :obj:`C_GRID_NORMALIZED`)
        shuffle_seeds (int, optional): Cycle the random orders over this many
            seeds (:func:`shuffle_seed`); :obj:`None`: a new seed per split.
            (default: :obj:`None`)
        resume (str, optional): A JSON file of finished methods: methods
            found there are not run again, others are added as they finish.
            (default: :obj:`None`)
        tag (str, optional): Names the data (e.g. the tie rule); part of the
            protocol a resume file must match. (default: :obj:`""`)
        n_jobs (int, optional): Solver threads. (default: :obj:`1`)
        device (str or torch.device, optional): Where the SVM problems are
            solved, e.g. :obj:`"cuda"` (the harness's :obj:`device`); the
            features are computed on the CPU. (default: the CPU)

    Returns:
        A dict with per-method per-split scores (:obj:`"splits"`: accuracy,
        AUC and chosen C lists), summaries (:obj:`"summary"`), and the paired
        comparisons of :obj:`PAIRS` that were run (:obj:`"paired"`, with the
        corrected 95 % interval of each mean difference).
    """
    from ..config import check_usable_device
    from ..evaluation.splits import random_splits

    check_usable_device("device", device)
    all_methods = table2_methods()
    unknown = [m for m in methods if m not in all_methods]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; choose from {list(all_methods)}")
    n_splits = check_int("n_splits", n_splits, 2)
    if shuffle_seeds is not None:
        shuffle_seeds = check_int("shuffle_seeds", shuffle_seeds, 1)
    C_grid = check_c_grid("C_grid", C_grid)
    C_grid_normalized = check_c_grid("C_grid_normalized", C_grid_normalized)
    y = _labels(graphs)
    grids = method_grids(methods, C_grid, C_grid_normalized)
    cache = cache or FeatureCache(graphs, all_methods)
    from ..ordering import RANDOM_ORDER_VERSION  # (here: the command line's parser imports this module)

    splits = random_splits(y, n_splits, test_size=test_size, inner_folds=inner_folds, seed=seed)
    # (checked by random_splits; NumPy scalars as Python numbers, which the resume file's JSON takes)
    protocol = {"n_graphs": int(len(y)), "class_counts": np.bincount(y).tolist(), "n_splits": n_splits,
                "test_size": python_number(test_size), "C_grid": list(C_grid),
                "C_grid_normalized": list(C_grid_normalized), "inner_folds": python_number(inner_folds),
                "seed": python_number(seed), "shuffle_seeds": shuffle_seeds, "tag": tag,
                "random_order": RANDOM_ORDER_VERSION, "kong_pyg": __version__,
                "graphs": graphs_digest(graphs, y) if resume else None}
    used = inner_folds_used(splits, inner_folds)
    if used != [inner_folds]:  # (said before the fits, not after them)
        warn(fewer_folds_note(inner_folds, used), UserWarning)
    scores = _evaluate(cache, methods, y, splits, grids, seed, shuffle_seeds, n_jobs, progress,
                       f"table2 {tag}".strip(), ResumeFile(resume, protocol, n_splits, grids), device)
    test_fraction = len(splits.outer[0][0][1]) / len(y)
    paired = {}
    for a, b in PAIRS:
        if a in scores and b in scores:
            paired[f"{a} vs {b}"] = {
                metric: with_corrected_interval(paired_comparison(scores[a][metric], scores[b][metric],
                                                                  test_fraction), test_fraction)
                for metric in ("acc", "auc")
            }
    return {**protocol, "inner_folds_used": used, "splits": scores,
            "summary": _summary(scores, cache, grids, all_methods), "paired": paired}


def accuracy_curve(
    graphs: Any,
    methods: Sequence[str] = ("K-1", "K-2", "K-2 shuffled"),
    fractions: Sequence[float] = FRACTIONS,
    n_splits: int = 20,
    C_grid: Sequence[float] = C_GRID,
    inner_folds: int = 5,
    seed: int = 0,
    progress: bool = False,
    cache: Optional[FeatureCache] = None,
    C_grid_normalized: Sequence[float] = C_GRID_NORMALIZED,
    shuffle_seeds: Optional[int] = None,
    n_jobs: int = 1,
    device: Any = None,
) -> Dict[str, Any]:
    """Test accuracy vs training-set fraction (the paper's Figure 2 analogue).

    For each fraction, :obj:`n_splits` stratified random splits train on
    that fraction and test on the rest (the harness, as :func:`run_table2`).

    Args:
        graphs: The graphs.
        methods (sequence, optional): Names from :func:`table2_methods`.
            (default: K-1, K-2, K-2 shuffled)
        fractions (sequence, optional): Training fractions. (default: :obj:`FRACTIONS`)
        n_splits (int, optional): Splits per fraction. (default: :obj:`20`)
        C_grid (sequence, optional): The :math:`C` grid. (default: :obj:`C_GRID`)
        inner_folds (int, optional): Inner folds choosing :math:`C`. (default: :obj:`5`)
        seed (int, optional): The seed of the splits (as in :func:`run_table2`).
            (default: :obj:`0`)
        progress (bool, optional): A progress bar. (default: :obj:`False`)
        cache (FeatureCache, optional): Features computed before.
        C_grid_normalized (sequence, optional): The grid of normalized rows.
            (default: :obj:`C_GRID_NORMALIZED`)
        shuffle_seeds (int, optional): As in :func:`run_table2`. (default: :obj:`None`)
        n_jobs (int, optional): Solver threads. (default: :obj:`1`)
        device (str or torch.device, optional): Where the SVM problems are
            solved, e.g. :obj:`"cuda"` (the harness's :obj:`device`); the
            features are computed on the CPU. (default: the CPU)

    Returns:
        A dict with :obj:`fractions`, :obj:`n_splits` and :obj:`acc`: per
        method and fraction (as a string) the :func:`mean_ci` of the accuracy.
    """
    from ..config import check_usable_device
    from ..evaluation.splits import random_splits

    check_usable_device("device", device)
    C_grid = check_c_grid("C_grid", C_grid)
    C_grid_normalized = check_c_grid("C_grid_normalized", C_grid_normalized)
    y = _labels(graphs)
    grids = method_grids(methods, C_grid, C_grid_normalized)
    cache = cache or FeatureCache(graphs, table2_methods())
    out: Dict[str, Dict[str, Any]] = {m: {} for m in methods}
    for f in fractions:
        splits = random_splits(y, n_splits, train_size=f, inner_folds=inner_folds, seed=seed)
        res = _evaluate(cache, methods, y, splits, grids, seed, shuffle_seeds, n_jobs, progress,
                        f"curve, train {f:g}", device=device)
        for name in methods:
            out[name][str(f)] = mean_ci(res[name]["acc"])
    return {"fractions": list(fractions), "n_splits": n_splits, "acc": out}


# ---------------------------------------------------------------------------
# the data, for the report (:mod:`kong_pyg.experiments.table2_report` writes it)
# ---------------------------------------------------------------------------


def dataset_summary(ds: Any) -> Dict[str, Any]:
    """Sizes of a :class:`~kong_pyg.datasets.MovieLensOrdered` and its share of ties in time."""
    from ..datasets.interactions import tie_share
    from ..datasets.movielens import read_ml100k

    data = ds._data
    t = read_ml100k(ds.raw_dir, quiet=True)  # (the file's oddities were warned about when processing)
    kept = t.genres.sum(dim=1)[t.item] == 1 if ds.genre == "single" else slice(None)
    y = data.y.view(-1)
    return {"nodes": int(data.x.numel()), "edges": int(data.edge_index.size(1)), "ties": ds.ties,
            "layout": ds.layout, "women": int((y == 0).sum()), "men": int((y == 1).sum()),
            "tie_share": {"all": tie_share(t.time), "kept": tie_share(t.time[kept]),
                          "ratings": int(t.time.numel()), "kept_ratings": int(t.time[kept].numel())},
            "description": (f"MovieLens-100k ego graphs (genre={ds.genre!r}, symmetric={ds.symmetric}, "
                            f"balance={ds.balance}, max_graphs={ds.max_graphs}, seed={ds.seed}, "
                            f"layout={ds.layout!r}); users labelled age // 15, movies by genre, class = "
                            "gender, edges in rating-time order")}


__all__ = ["run_table2", "accuracy_curve", "table2_methods", "Method", "FeatureCache", "score_split",
           "write_markdown", "dataset_summary", "method_grids", "shuffle_seed", "C_GRID",
           "C_GRID_NORMALIZED", "FRACTIONS", "DEFAULT_METHODS", "PAIRS", "PAPER_MOVIELENS", "AUTHORS"]
