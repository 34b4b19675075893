r"""Ordered neighborhoods on real interaction data: the KONG paper's Table 2.

The protocol (the paper's Table 2, MovieLens row): one ordered ego graph per
user (:class:`~kong_pyg.datasets.MovieLensOrdered`), class = gender, features
with :math:`h = 1`, the cosine base kernel and :math:`p = 1`:

* **K-1**: 1-grams (label counts, the unordered case),
* **K-2**: 2-grams of the true (time) order,
* **K-2 shuffled**: 2-grams after a seeded random shuffle of every
  neighborhood (:obj:`order="random"`; split :math:`s` uses shuffle seed
  :math:`s`, so the comparison averages over shuffles too),
* **WL**: Weisfeiler-Lehman subtree histograms, :math:`h = 1`
  (:func:`kong_pyg.evaluation.baselines.wl_features`),
* **KW**: walk-label-sequence counts, walks of length :math:`\le 1`, cosine
  per node (:func:`kong_pyg.evaluation.baselines.walk_features`),

and optional labelled variants (the authors' blended 1-and-2-gram "K-2",
graph-level normalization, longer walks). Every method is evaluated on the
same repeated stratified splits (80 % / 20 % by default); on each split a
:class:`~sklearn.svm.LinearSVC` picks :math:`C` from a grid by stratified
inner cross-validation on the training part only, is refit there, and is
scored on the test part (accuracy; ROC AUC from the decision values). The
fits are the shared evaluation harness's
(:func:`~kong_pyg.evaluation.harness.evaluate_features`: LinearSVC's problem
solved exactly for all splits and :math:`C` at once, as in Table 1). True
order and shuffled order are compared split by split
(:mod:`kong_pyg.evaluation.stats`: paired t-test, Wilcoxon signed-rank test,
and the Nadeau-Bengio corrected resampled t-test, which accounts for the
overlap of the training sets of repeated splits).

Features are computed once on all graphs (the kernels are unsupervised and
transductive, as in the paper), then split. Run it with
``kong-pyg table2 --ml-dir PATH/ml-100k --out docs/results``
(:mod:`kong_pyg.cli.table2`).
"""
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from ..evaluation.stats import format_ci, format_p, mean_ci, paired_comparison, verdict

#: The C grid of the protocol.
C_GRID: Tuple[float, ...] = (0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0)

#: The fractions of the accuracy curve (the paper's Figure 2 analogue).
FRACTIONS: Tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)

#: The paper's MovieLens row of Table 2 (accuracy %, AUC %), SPEC section 7.
PAPER_MOVIELENS: Dict[str, Tuple[float, float]] = {
    "K-1": (65.83, 71.00), "K-2 shuffled": (67.01, 73.31), "K-2": (67.68, 73.20)}

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
    """

    name: str
    features: FeatureFn
    seeded: bool
    note: str


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


def table2_methods() -> Dict[str, Method]:
    """All methods by name (the first five are the protocol's rows)."""
    ms = [
        Method("K-1", _kong(k=1), False, "1-grams, h=1, cosine p=1"),
        Method("K-2", _kong(k=2), False, "2-grams, true (time) order, h=1, cosine p=1"),
        Method("K-2 shuffled", _kong(k=2, order="random"), True,
               "2-grams after a random shuffle of every neighborhood (seed = split index)"),
        Method("WL", _wl, False, "WL subtree histograms, h=1 (iterations 0 and 1), raw counts"),
        Method("KW", _kw(1), False, "label sequences of walks of length <= 1, cosine p=1 per node"),
        Method("K-2 blended", _kong(k=2, blended=True), False,
               "variant: 1-grams and 2-grams (the authors' K-2 feature set), true order"),
        Method("K-2 blended shuffled", _kong(k=2, blended=True, order="random"), True,
               "variant: 1-grams and 2-grams, shuffled (seed = split index)"),
        Method("K-1 graph-norm", _kong(k=1, normalize=True), False,
               "variant: K-1 with each graph vector L2-normalized"),
        Method("K-2 blended graph-norm", _kong(k=2, blended=True, normalize=True), False,
               "variant: the authors' K-2 files (1+2-grams, graph vectors L2-normalized)"),
        Method("KW-2", _kw(2), False, "variant: walks of length <= 2, cosine p=1 per node"),
    ]
    return {m.name: m for m in ms}


#: The protocol's rows.
DEFAULT_METHODS: Tuple[str, ...] = ("K-1", "K-2", "K-2 shuffled", "WL", "KW")
#: (true order, shuffled) pairs compared split by split.
PAIRS: Tuple[Tuple[str, str], ...] = (("K-2", "K-2 shuffled"), ("K-2 blended", "K-2 blended shuffled"),
                                      ("K-2", "K-1"))


# ---------------------------------------------------------------------------
# the protocol
# ---------------------------------------------------------------------------


def _entries(cache: "FeatureCache", name: str, n_splits: int, seed: int) -> Any:
    """The features of :obj:`name` for :func:`~kong_pyg.evaluation.harness.evaluate_features`.

    Computed on first use; a seeded method gets one entry per split (split :math:`s`: seed
    :obj:`seed + s`).
    """
    if cache.methods[name].seeded:
        return [lambda s=s: cache.get(name, seed + s) for s in range(n_splits)]
    return lambda: cache.get(name, seed)


def score_methods(cache: "FeatureCache", names: Sequence[str], y: np.ndarray, splits: Any,
                  C_grid: Sequence[float] = C_GRID, seed: int = 0,
                  progress: bool = False) -> Dict[str, List[Dict[str, float]]]:
    """Per method and split: accuracy, ROC AUC, chosen C, fit time, fits (the shared harness).

    Every split chooses :math:`C` by inner stratified CV on its training part only and reports the
    fit on the whole training part with that :math:`C`
    (:func:`~kong_pyg.evaluation.harness.evaluate_features`, nested protocol: scikit-learn's
    LinearSVC problem solved exactly, the same solver settings as Table 1).
    """
    from ..evaluation.harness import evaluate_features

    n_splits = len(splits.outer)
    res = evaluate_features({m: _entries(cache, m, n_splits, seed) for m in names}, y, splits=splits,
                            protocol="nested", Cs=C_grid, progress=progress)
    out: Dict[str, List[Dict[str, float]]] = {}
    for name, r in res.items():
        out[name] = [{"acc": r.scores["accuracy"][s], "auc": r.scores["auc"][s], "C": r.C[s],
                      "train_s": r.fit_seconds / n_splits, "unconverged": r.not_converged / n_splits,
                      "fits": r.fits / n_splits} for s in range(n_splits)]
    return out


def score_split(X: Any, y: np.ndarray, train: np.ndarray, test: np.ndarray,
                C_grid: Sequence[float] = C_GRID, inner_folds: int = 5, seed: int = 0) -> Dict[str, float]:
    """Accuracy, ROC AUC, chosen C and training time of one split (see :func:`score_methods`)."""
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


def _iter(it: Iterable, progress: bool, desc: str, total: int) -> Iterable:
    if not progress:
        return it
    from tqdm.auto import tqdm

    return tqdm(it, desc=desc, total=total)


def _summary(scores: Dict[str, List[Dict[str, float]]], cache: FeatureCache, C_grid: Sequence[float],
             methods: Dict[str, Method]) -> Dict[str, Dict[str, Any]]:
    """Per method: :func:`mean_ci` of accuracy and AUC, times, dimension, chosen C, fits."""
    summary = {}
    for name, rows in scores.items():
        summary[name] = {
            "acc": mean_ci([r["acc"] for r in rows]),
            "auc": mean_ci([r["auc"] for r in rows]),
            "train_s": float(np.mean([r["train_s"] for r in rows])),
            "feature_s": float(np.mean(cache.seconds[name])),
            "dim": float(np.mean(cache.dims[name])),
            "C": {str(c): int(sum(r["C"] == c for r in rows)) for c in C_grid},
            "unconverged": int(round(sum(r["unconverged"] for r in rows))),
            "fits": int(round(sum(r["fits"] for r in rows))),
            "note": methods[name].note,
        }
    return summary


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
) -> Dict[str, Any]:
    """Evaluate :obj:`methods` on :obj:`n_splits` stratified random splits.

    Args:
        graphs: The graphs (one class label each in :obj:`y`).
        methods (sequence, optional): Names from :func:`table2_methods`.
            (default: :obj:`DEFAULT_METHODS`)
        n_splits (int, optional): Random splits. (default: :obj:`100`)
        test_size (float, optional): The test fraction. (default: :obj:`0.2`)
        C_grid (sequence, optional): The :math:`C` grid. (default: :obj:`C_GRID`)
        inner_folds (int, optional): Inner folds choosing :math:`C`. (default: :obj:`5`)
        seed (int, optional): The seed of the splits; split :math:`s` uses
            :obj:`seed + s` for its inner folds and random orders. (default: :obj:`0`)
        progress (bool, optional): A progress bar over the splits. (default: :obj:`False`)
        cache (FeatureCache, optional): Features computed before (shared
            with :func:`accuracy_curve`).

    Returns:
        A dict with per-method per-split scores (:obj:`"splits"`),
        summaries (:obj:`"summary"`), feature dimension and times, and the
        paired comparisons of :obj:`PAIRS` that were run (:obj:`"paired"`).
    """
    from ..evaluation.cv import random_splits

    all_methods = table2_methods()
    unknown = [m for m in methods if m not in all_methods]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; choose from {list(all_methods)}")
    if not isinstance(n_splits, int) or n_splits < 2:
        raise ValueError(f"'n_splits' must be an integer >= 2 (got {n_splits!r})")
    y = _labels(graphs)
    cache = cache or FeatureCache(graphs, all_methods)
    parts = random_splits(y, n_splits, test_size=test_size, inner_folds=inner_folds, seed=seed)
    splits = [row[0] for row in parts.outer]
    scores = score_methods(cache, methods, y, parts, C_grid, seed, progress)
    paired = {}
    for a, b in PAIRS:
        if a in scores and b in scores:
            paired[f"{a} vs {b}"] = {
                metric: paired_comparison([r[metric] for r in scores[a]], [r[metric] for r in scores[b]],
                                          len(splits[0][1]) / len(y))
                for metric in ("acc", "auc")
            }
    return {"n_graphs": int(len(y)), "class_counts": np.bincount(y).tolist(), "n_splits": n_splits,
            "test_size": test_size, "C_grid": list(C_grid), "inner_folds": inner_folds, "seed": seed,
            "splits": scores, "summary": _summary(scores, cache, C_grid, all_methods), "paired": paired}


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
) -> Dict[str, Any]:
    """Test accuracy vs training-set fraction (the paper's Figure 2 analogue).

    For each fraction, :obj:`n_splits` stratified random splits train on
    that fraction and test on the rest.

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
        progress (bool, optional): A progress bar over the fractions. (default: :obj:`False`)
        cache (FeatureCache, optional): Features computed before.

    Returns:
        A dict with :obj:`fractions`, :obj:`n_splits` and :obj:`acc`: per
        method and fraction (as a string) the :func:`mean_ci` of the accuracy.
    """
    from ..evaluation.cv import random_splits

    y = _labels(graphs)
    cache = cache or FeatureCache(graphs, table2_methods())
    out: Dict[str, Dict[str, List[float]]] = {m: {} for m in methods}
    for f in _iter(fractions, progress, "fractions", len(fractions)):
        parts = random_splits(y, n_splits, train_size=f, inner_folds=inner_folds, seed=seed)
        for name, rows in score_methods(cache, methods, y, parts, C_grid, seed).items():
            out[name][str(f)] = [r["acc"] for r in rows]
    return {"fractions": list(fractions), "n_splits": n_splits,
            "acc": {m: {f: mean_ci(v) for f, v in d.items()} for m, d in out.items()}}


# ---------------------------------------------------------------------------
# reporting
# ---------------------------------------------------------------------------


def _setup_lines(result: Dict[str, Any], dataset_info: Dict[str, Any]) -> List[str]:
    return [
        "## Setup", "",
        f"- Data: {dataset_info.get('description', '')}",
        f"- Graphs: {result['n_graphs']} (class counts {result['class_counts']}, 0 = F, 1 = M); "
        f"{dataset_info.get('nodes', '?')} nodes and {dataset_info.get('edges', '?')} edges in all.",
        f"- Protocol: {result['n_splits']} stratified random splits, "
        f"{round(100 * (1 - result['test_size']))} % train / {round(100 * result['test_size'])} % test "
        f"(seed {result['seed']}); LinearSVC (its problem solved exactly), C in {result['C_grid']} "
        "chosen by "
        f"{result['inner_folds']}-fold stratified CV on the training part only, refit on it; "
        "accuracy and ROC AUC (decision function) on the test part. Same splits for every method.",
        "- ± is the 95 % t-interval of the mean over splits (t(0.975, n-1)·sd/√n); sd is the spread "
        "over splits. Splits overlap, so these intervals are narrower than the uncertainty about a new "
        "sample; the paired comparisons below add the corrected resampled t-test for that.",
        "- Feature time: computing the features of all graphs once (seeded methods: mean over their "
        "seeds). Train time: inner CV over the grid + refit (all splits solved together), per split. "
        "One process, 2 CPU cores.",
        "",
    ]


def _result_lines(summary: Dict[str, Dict[str, Any]]) -> List[str]:
    lines = [
        "## Results", "",
        "| method | D | feature time (s) | train time / split (s) | accuracy % | sd | ROC AUC % | sd "
        "| paper acc / AUC % |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in summary.items():
        paper = PAPER_MOVIELENS.get(name)
        paper_s = f"{paper[0]:.2f} / {paper[1]:.2f}" if paper else "—"
        lines.append(
            f"| {name} | {r['dim']:.0f} | {r['feature_s']:.2f} | {r['train_s']:.3f} | {format_ci(r['acc'])} "
            f"| {100 * r['acc']['sd']:.2f} | {format_ci(r['auc'])} | {100 * r['auc']['sd']:.2f} | {paper_s} |"
        )
    lines += ["", "What each row is:", ""]
    lines += [f"- **{name}**: {r['note']}. C chosen: "
              + ", ".join(f"{c}×{n}" for c, n in r["C"].items() if n)
              + f"; {r['unconverged']} of {r['fits']} SVM fits stopped at max_iter."
              for name, r in summary.items()]
    return lines


def _paired_lines(paired: Dict[str, Dict[str, Dict[str, Any]]]) -> List[str]:
    lines = ["", "## True order vs shuffled (paired over the same splits)", ""]
    lines += ["| comparison | metric | mean diff (points) | sd | wins/ties/losses | paired t p "
              "| Wilcoxon p | corrected t p |", "|---|---|---|---|---|---|---|---|"]
    for key, by_metric in paired.items():
        for metric, c in by_metric.items():
            lines.append(
                f"| {key} | {metric} | {100 * c['mean_diff']:+.2f} | {100 * c['sd_diff']:.2f} | "
                f"{c['wins']}/{c['ties']}/{c['losses']} | {format_p(c['t_p'])} | "
                f"{format_p(c['wilcoxon_p'])} | {format_p(c['corrected_p'])} |"
            )
    lines += [""]
    for key, by_metric in paired.items():
        a, b = key.split(" vs ")
        for metric, c in by_metric.items():
            lines.append(f"- {verdict(c, a, b, 'accuracy' if metric == 'acc' else 'ROC AUC')}")
    return lines


def _curve_lines(curve: Dict[str, Any], figure: Optional[str]) -> List[str]:
    lines = ["", "## Accuracy vs training-set fraction (Figure 2 analogue)", ""]
    if figure:
        lines += [f"![accuracy vs training fraction]({figure})", ""]
    lines += [f"{curve['n_splits']} stratified splits per fraction (train on the fraction, test on the "
              "rest; C chosen by inner CV on the training part). Accuracy %, mean ± 95 % t-interval.", ""]
    methods = list(curve["acc"])
    lines += ["| train fraction | " + " | ".join(methods) + " |", "|---" * (len(methods) + 1) + "|"]
    for f in curve["fractions"]:
        lines.append(f"| {f} | " + " | ".join(format_ci(curve["acc"][m][str(f)]) for m in methods) + " |")
    return lines


def write_markdown(result: Dict[str, Any], path: str, dataset_info: Dict[str, Any],
                   curve: Optional[Dict[str, Any]] = None, figure: Optional[str] = None,
                   command: Optional[str] = None) -> None:
    """Write the results of :func:`run_table2` (and the curve) as Markdown.

    Args:
        result (dict): What :func:`run_table2` returned.
        path (str): The Markdown file.
        dataset_info (dict): :func:`dataset_summary` of the data.
        curve (dict, optional): What :func:`accuracy_curve` returned.
        figure (str, optional): The curve's image, relative to :obj:`path`.
        command (str, optional): The command line that produced the results.
    """
    lines = ["# Table 2: ordered neighborhoods on MovieLens-100k", ""]
    if command:
        lines += ["Produced by:", "", "```bash", command, "```", ""]
    lines += _setup_lines(result, dataset_info)
    lines += _result_lines(result["summary"])
    if result["paired"]:
        lines += _paired_lines(result["paired"])
    if curve is not None:
        lines += _curve_lines(curve, figure)
    lines += ["", "Paper (SPEC section 7, MovieLens, 80 % train): K-1 65.83 / 71.00, K-2 shuffled "
              "67.01 / 73.31, K-2 67.68 / 73.20 (accuracy / AUC %); about 590 s of feature time in pure "
              "Python on a laptop for about 99 M edges.", ""]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def dataset_summary(ds: Any) -> Dict[str, Any]:
    """Sizes of a :class:`~kong_pyg.datasets.MovieLensOrdered` for the report."""
    data = ds._data
    return {"nodes": int(data.x.numel()), "edges": int(data.edge_index.size(1)),
            "description": (f"MovieLens-100k ego graphs (genre={ds.genre!r}, symmetric={ds.symmetric}, "
                            f"balance={ds.balance}, max_graphs={ds.max_graphs}, seed={ds.seed}); users "
                            "labelled age // 15, movies by genre, class = gender, edges in rating-time "
                            "order (ties: file row order)")}


__all__ = ["run_table2", "accuracy_curve", "table2_methods", "Method", "FeatureCache", "score_methods",
           "score_split", "write_markdown", "dataset_summary", "C_GRID", "FRACTIONS", "DEFAULT_METHODS",
           "PAIRS", "PAPER_MOVIELENS"]
