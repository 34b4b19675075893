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
  (:func:`kong_pyg.baselines.wl_features`),
* **KW**: walk-label-sequence counts, walks of length :math:`\le 1`, cosine
  per node (:func:`kong_pyg.baselines.walk_features`),

and optional labelled variants (the authors' blended 1-and-2-gram "K-2",
graph-level normalization, longer walks). Every method is evaluated on the
same repeated stratified splits (80 % / 20 % by default); on each split a
:class:`~sklearn.svm.LinearSVC` (primal solver) picks :math:`C` from a grid
by stratified inner cross-validation on the training part only, is refit
there, and is scored on the test part (accuracy; ROC AUC from
:meth:`decision_function`). True order and shuffled order are compared split
by split (paired t-test, Wilcoxon signed-rank test, and the Nadeau-Bengio
corrected resampled t-test, which accounts for the overlap of the training
sets of repeated splits).

Features are computed once on all graphs (the kernels are unsupervised and
transductive, as in the paper), then split. Run it with
``kong-pyg table2 --ml-dir PATH/ml-100k --out docs/results``.
"""
import json
import math
import os
import tempfile
import time
import warnings
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence

import numpy as np

#: The C grid of the protocol.
C_GRID = (0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0)

#: The paper's MovieLens row of Table 2 (accuracy %, AUC %), SPEC section 7.
PAPER_MOVIELENS = {"K-1": (65.83, 71.00), "K-2 shuffled": (67.01, 73.31), "K-2": (67.68, 73.20)}


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
    features: Callable
    seeded: bool
    note: str


def _kong(**options) -> Callable:
    def run(graphs, seed):
        from .vectorizer import KongVectorizer

        return KongVectorizer(hops=1, kernel="cosine", degree=1, seed=seed, **options).fit_transform(graphs)

    return run


def _wl(graphs, seed):
    from .baselines import wl_features

    return wl_features(graphs, hops=1)


def _kw(length: int) -> Callable:
    def run(graphs, seed):
        from .baselines import walk_features

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


DEFAULT_METHODS = ("K-1", "K-2", "K-2 shuffled", "WL", "KW")
#: (true order, shuffled) pairs compared split by split.
PAIRS = (("K-2", "K-2 shuffled"), ("K-2 blended", "K-2 blended shuffled"), ("K-2", "K-1"))


# ---------------------------------------------------------------------------
# statistics
# ---------------------------------------------------------------------------


def mean_ci(values: Sequence[float], level: float = 0.95) -> Dict[str, float]:
    r"""Mean, standard deviation and a t confidence interval of the mean.

    The interval is :math:`\bar x \pm t_{(1+level)/2, n-1}\, s / \sqrt{n}`
    over the :math:`n` values (repeated splits): it describes the
    uncertainty of the mean over splits of this data set, not of a new
    data set (see :func:`paired_comparison` for the corrected test).
    """
    from scipy import stats

    x = np.asarray(values, dtype=float)
    n = x.size
    if n == 0:
        raise ValueError("'values' is empty")
    mean = float(x.mean())
    sd = float(x.std(ddof=1)) if n > 1 else 0.0
    half = float(stats.t.ppf((1 + level) / 2, n - 1) * sd / math.sqrt(n)) if n > 1 else float("nan")
    return {"mean": mean, "sd": sd, "n": n, "lo": mean - half, "hi": mean + half, "half": half}


def paired_comparison(a: Sequence[float], b: Sequence[float], test_fraction: float) -> Dict[str, float]:
    r"""Compare two methods scored on the same splits.

    Returns the mean difference :math:`\bar d` (a - b), its sd, the
    win/tie/loss counts, and three two-sided p-values: the paired t-test,
    the Wilcoxon signed-rank test (Pratt's treatment of zero differences),
    and the Nadeau-Bengio corrected resampled t-test

    .. math::
        t = \bar d \Big/ \sqrt{\big(\tfrac{1}{n} + \tfrac{n_{test}}{n_{train}}\big) s_d^2},

    which widens the variance for the overlap of repeated random splits
    (`Nadeau and Bengio, 2003 <https://doi.org/10.1023/A:1024068626366>`_).
    The plain tests treat splits as independent and are optimistic.
    """
    from scipy import stats

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or a.size < 2:
        raise ValueError("'a' and 'b' must be 1-D with the same length >= 2")
    if not 0 < test_fraction < 1:
        raise ValueError(f"'test_fraction' must be in (0, 1) (got {test_fraction})")
    d = a - b
    n = d.size
    sd = float(d.std(ddof=1))
    out = {"mean_diff": float(d.mean()), "sd_diff": sd, "n": n, "wins": int((d > 0).sum()),
           "ties": int((d == 0).sum()), "losses": int((d < 0).sum())}
    if sd == 0:
        p = 1.0 if d.mean() == 0 else 0.0
        out.update(t_p=p, wilcoxon_p=p, corrected_p=p, corrected_t=float("nan"))
        return out
    out["t_p"] = float(stats.ttest_rel(a, b).pvalue)
    if np.all(d == 0):
        out["wilcoxon_p"] = 1.0
    else:
        out["wilcoxon_p"] = float(stats.wilcoxon(a, b, zero_method="pratt").pvalue)
    ratio = test_fraction / (1 - test_fraction)
    t = d.mean() / math.sqrt((1 / n + ratio) * sd * sd)
    out["corrected_t"] = float(t)
    out["corrected_p"] = float(2 * stats.t.sf(abs(t), n - 1))
    return out


# ---------------------------------------------------------------------------
# the protocol
# ---------------------------------------------------------------------------


def select_and_fit(X, y, train, C_grid=C_GRID, inner_folds: int = 5, seed: int = 0):
    """Pick C by inner stratified CV on :obj:`train` only, refit there.

    The SVM is scikit-learn's :class:`~sklearn.svm.LinearSVC` with the
    primal solver (:obj:`dual=False`, fast when graphs outnumber features)
    and its default :obj:`max_iter=1000`: at the largest C of the grid on
    unnormalized features the solver may stop before its tolerance; those
    fits stay in the grid and are counted.

    Returns the fitted :class:`~sklearn.model_selection.GridSearchCV` and
    the number of fits that did not converge.
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.svm import LinearSVC

    counts = np.bincount(y[train])
    smallest = int(counts[counts > 0].min())
    folds = min(inner_folds, smallest)
    if folds < 2:
        raise ValueError(f"a class has only {smallest} training example(s); inner CV needs 2 or more")
    search = GridSearchCV(
        LinearSVC(dual=False), {"C": list(C_grid)},
        cv=StratifiedKFold(folds, shuffle=True, random_state=seed), scoring="accuracy",
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        search.fit(X[train], y[train])
    unconverged = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
    return search, unconverged


def score_split(X, y, train, test, C_grid=C_GRID, inner_folds: int = 5, seed: int = 0) -> Dict[str, float]:
    """Accuracy, ROC AUC, chosen C and training time of one split."""
    from sklearn.metrics import roc_auc_score

    t0 = time.perf_counter()
    search, unconverged = select_and_fit(X, y, train, C_grid, inner_folds, seed)
    seconds = time.perf_counter() - t0
    pred = search.predict(X[test])
    score = search.decision_function(X[test])
    auc = float(roc_auc_score(y[test], score)) if len(np.unique(y[test])) == 2 else float("nan")
    return {"acc": float((pred == y[test]).mean()), "auc": auc, "C": float(search.best_params_["C"]),
            "train_s": seconds, "unconverged": unconverged, "fits": len(C_grid) * search.n_splits_ + 1}


class FeatureCache:
    """Features of each method, per seed for seeded methods, with timings."""

    def __init__(self, graphs, methods: Dict[str, Method]):
        self.graphs = graphs
        self.methods = methods
        self.store: Dict[tuple, object] = {}
        self.seconds: Dict[str, List[float]] = {}
        self.dims: Dict[str, List[int]] = {}

    def get(self, name: str, seed: int):
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


def _labels(graphs) -> np.ndarray:
    from .evaluate import _targets

    return _targets(graphs).astype(np.int64)


def _iter(it, progress: bool, desc: str, total: int):
    if not progress:
        return it
    from tqdm.auto import tqdm

    return tqdm(it, desc=desc, total=total)


def run_table2(
    graphs,
    methods: Sequence[str] = DEFAULT_METHODS,
    n_splits: int = 100,
    test_size: float = 0.2,
    C_grid: Sequence[float] = C_GRID,
    inner_folds: int = 5,
    seed: int = 0,
    progress: bool = False,
    cache: Optional[FeatureCache] = None,
) -> Dict:
    """Evaluate :obj:`methods` on :obj:`n_splits` stratified random splits.

    Returns a dict with per-method per-split scores (:obj:`"splits"`),
    summaries (:obj:`"summary"`), feature dimension and times, and the
    paired comparisons of :obj:`PAIRS` that were run (:obj:`"paired"`).
    """
    from sklearn.model_selection import StratifiedShuffleSplit

    all_methods = table2_methods()
    unknown = [m for m in methods if m not in all_methods]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; choose from {list(all_methods)}")
    if not isinstance(n_splits, int) or n_splits < 2:
        raise ValueError(f"'n_splits' must be an integer >= 2 (got {n_splits!r})")
    y = _labels(graphs)
    cache = cache or FeatureCache(graphs, all_methods)
    splitter = StratifiedShuffleSplit(n_splits, test_size=test_size, random_state=seed)
    splits = list(splitter.split(np.zeros(len(y)), y))
    scores: Dict[str, List[Dict]] = {m: [] for m in methods}
    for s, (train, test) in _iter(enumerate(splits), progress, "splits", len(splits)):
        for name in methods:
            X = cache.get(name, seed + s)
            scores[name].append(score_split(X, y, train, test, C_grid, inner_folds, seed + s))
    summary = {}
    for name in methods:
        rows = scores[name]
        summary[name] = {
            "acc": mean_ci([r["acc"] for r in rows]),
            "auc": mean_ci([r["auc"] for r in rows]),
            "train_s": float(np.mean([r["train_s"] for r in rows])),
            "feature_s": float(np.mean(cache.seconds[name])),
            "dim": float(np.mean(cache.dims[name])),
            "C": {str(c): int(sum(r["C"] == c for r in rows)) for c in C_grid},
            "unconverged": int(sum(r["unconverged"] for r in rows)),
            "fits": int(sum(r["fits"] for r in rows)),
            "note": all_methods[name].note,
        }
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
            "splits": scores, "summary": summary, "paired": paired}


def accuracy_curve(
    graphs,
    methods: Sequence[str] = ("K-1", "K-2", "K-2 shuffled"),
    fractions: Sequence[float] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8),
    n_splits: int = 20,
    C_grid: Sequence[float] = C_GRID,
    inner_folds: int = 5,
    seed: int = 0,
    progress: bool = False,
    cache: Optional[FeatureCache] = None,
) -> Dict:
    """Test accuracy vs training-set fraction (the paper's Figure 2 analogue).

    For each fraction, :obj:`n_splits` stratified random splits train on
    that fraction and test on the rest. Returns per method and fraction the
    :func:`mean_ci` of the accuracy.
    """
    from sklearn.model_selection import StratifiedShuffleSplit

    y = _labels(graphs)
    cache = cache or FeatureCache(graphs, table2_methods())
    out: Dict[str, Dict[str, Dict]] = {m: {} for m in methods}
    for f in _iter(fractions, progress, "fractions", len(fractions)):
        splitter = StratifiedShuffleSplit(n_splits, train_size=f, random_state=seed)
        for s, (train, test) in enumerate(splitter.split(np.zeros(len(y)), y)):
            for name in methods:
                r = score_split(cache.get(name, seed + s), y, train, test, C_grid, inner_folds, seed + s)
                out[name].setdefault(str(f), []).append(r["acc"])
    return {"fractions": list(fractions), "n_splits": n_splits,
            "acc": {m: {f: mean_ci(v) for f, v in d.items()} for m, d in out.items()}}


# ---------------------------------------------------------------------------
# reporting
# ---------------------------------------------------------------------------


def _pct(s: Dict[str, float]) -> str:
    return f"{100 * s['mean']:.2f} ± {100 * s['half']:.2f}"


def _p(p: float) -> str:
    return f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}"


def verdict(cmp: Dict[str, float], a: str, b: str, metric: str, alpha: float = 0.05) -> str:
    """One honest sentence on a paired comparison (corrected test decides)."""
    d = 100 * cmp["mean_diff"]
    head = f"{a} − {b}: {d:+.2f} points of {metric} on average"
    tail = (f"(wins/ties/losses {cmp['wins']}/{cmp['ties']}/{cmp['losses']}; paired t p = {_p(cmp['t_p'])}, "
            f"Wilcoxon p = {_p(cmp['wilcoxon_p'])}, corrected resampled t p = {_p(cmp['corrected_p'])})")
    if cmp["corrected_p"] < alpha:
        word = "significantly better" if d > 0 else "significantly worse"
        return f"{head}: {a} is {word} than {b} {tail}."
    if cmp["t_p"] < alpha:
        return (f"{head}: significant only under the plain tests that treat overlapping splits as "
                f"independent, not under the corrected test {tail}.")
    return f"{head}: no significant difference {tail}."


def write_markdown(result: Dict, path: str, dataset_info: Dict, curve: Optional[Dict] = None,
                   figure: Optional[str] = None, command: Optional[str] = None) -> None:
    """Write the results of :func:`run_table2` (and the curve) as Markdown."""
    s = result["summary"]
    lines = ["# Table 2: ordered neighborhoods on MovieLens-100k", ""]
    if command:
        lines += ["Produced by:", "", "```bash", command, "```", ""]
    lines += [
        "## Setup", "",
        f"- Data: {dataset_info.get('description', '')}",
        f"- Graphs: {result['n_graphs']} (class counts {result['class_counts']}, 0 = F, 1 = M); "
        f"{dataset_info.get('nodes', '?')} nodes and {dataset_info.get('edges', '?')} edges in all.",
        f"- Protocol: {result['n_splits']} stratified random splits, "
        f"{round(100 * (1 - result['test_size']))} % train / {round(100 * result['test_size'])} % test "
        f"(seed {result['seed']}); LinearSVC (primal solver, max_iter 1000), C in {result['C_grid']} "
        "chosen by "
        f"{result['inner_folds']}-fold stratified CV on the training part only, refit on it; "
        "accuracy and ROC AUC (decision function) on the test part. Same splits for every method.",
        "- ± is the 95 % t-interval of the mean over splits (t(0.975, n-1)·sd/√n); sd is the spread "
        "over splits. Splits overlap, so these intervals are narrower than the uncertainty about a new "
        "sample; the paired comparisons below add the corrected resampled t-test for that.",
        "- Feature time: computing the features of all graphs once (seeded methods: mean over their "
        "seeds). Train time: inner CV over the grid + refit, mean per split. One process, 2 CPU cores.",
        "",
        "## Results", "",
        "| method | D | feature time (s) | train time / split (s) | accuracy % | sd | ROC AUC % | sd "
        "| paper acc / AUC % |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in s.items():
        paper = PAPER_MOVIELENS.get(name)
        paper_s = f"{paper[0]:.2f} / {paper[1]:.2f}" if paper else "—"
        lines.append(
            f"| {name} | {r['dim']:.0f} | {r['feature_s']:.2f} | {r['train_s']:.3f} | {_pct(r['acc'])} "
            f"| {100 * r['acc']['sd']:.2f} | {_pct(r['auc'])} | {100 * r['auc']['sd']:.2f} | {paper_s} |"
        )
    lines += ["", "What each row is:", ""]
    lines += [f"- **{name}**: {r['note']}. C chosen: "
              + ", ".join(f"{c}×{n}" for c, n in r["C"].items() if n)
              + f"; {r['unconverged']} of {r['fits']} SVM fits stopped at max_iter."
              for name, r in s.items()]
    if result["paired"]:
        lines += ["", "## True order vs shuffled (paired over the same splits)", ""]
        lines += ["| comparison | metric | mean diff (points) | sd | wins/ties/losses | paired t p "
                  "| Wilcoxon p | corrected t p |", "|---|---|---|---|---|---|---|---|"]
        for key, by_metric in result["paired"].items():
            for metric, c in by_metric.items():
                lines.append(
                    f"| {key} | {metric} | {100 * c['mean_diff']:+.2f} | {100 * c['sd_diff']:.2f} | "
                    f"{c['wins']}/{c['ties']}/{c['losses']} | {_p(c['t_p'])} | {_p(c['wilcoxon_p'])} | "
                    f"{_p(c['corrected_p'])} |"
                )
        lines += [""]
        for key, by_metric in result["paired"].items():
            a, b = key.split(" vs ")
            for metric, c in by_metric.items():
                lines.append(f"- {verdict(c, a, b, 'accuracy' if metric == 'acc' else 'ROC AUC')}")
    if curve is not None:
        lines += ["", "## Accuracy vs training-set fraction (Figure 2 analogue)", ""]
        if figure:
            lines += [f"![accuracy vs training fraction]({figure})", ""]
        lines += [f"{curve['n_splits']} stratified splits per fraction (train on the fraction, test on the "
                  "rest; C chosen by inner CV on the training part). Accuracy %, mean ± 95 % t-interval.", ""]
        methods = list(curve["acc"])
        lines += ["| train fraction | " + " | ".join(methods) + " |", "|---" * (len(methods) + 1) + "|"]
        for f in curve["fractions"]:
            lines.append(f"| {f} | " + " | ".join(_pct(curve["acc"][m][str(f)]) for m in methods) + " |")
    lines += ["", "Paper (SPEC section 7, MovieLens, 80 % train): K-1 65.83 / 71.00, K-2 shuffled "
              "67.01 / 73.31, K-2 67.68 / 73.20 (accuracy / AUC %); about 590 s of feature time in pure "
              "Python on a laptop for about 99 M edges.", ""]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def plot_curve(curve: Dict, path: str) -> None:
    """Save the accuracy-vs-fraction plot as a small PNG (needs matplotlib)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.4), dpi=100)
    fr = curve["fractions"]
    for name, by_f in curve["acc"].items():
        m = np.array([100 * by_f[str(f)]["mean"] for f in fr])
        h = np.array([100 * by_f[str(f)]["half"] for f in fr])
        ax.errorbar(fr, m, yerr=h, marker="o", ms=3, capsize=2, label=name)
    ax.set_xlabel("training-set fraction")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title("MovieLens-100k, gender from ordered ego graphs", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def dataset_summary(ds) -> Dict:
    """Sizes of a :class:`~kong_pyg.datasets.MovieLensOrdered` for the report."""
    data = ds._data
    return {"nodes": int(data.x.numel()), "edges": int(data.edge_index.size(1)),
            "description": (f"MovieLens-100k ego graphs (genre={ds.genre!r}, symmetric={ds.symmetric}, "
                            f"balance={ds.balance}, max_graphs={ds.max_graphs}, seed={ds.seed}); users "
                            "labelled age // 15, movies by genre, class = gender, edges in rating-time "
                            "order (ties: file row order)")}


# ---------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------


def register_cli(subparsers) -> None:
    """Add the ``table2`` subcommand."""
    p = subparsers.add_parser(
        "table2", help="the paper's Table 2 on MovieLens-100k (true vs shuffled neighbor order)",
        description="Run the KONG paper's Table 2 protocol on MovieLens-100k ordered ego graphs and "
                    "write table2.md, table2.json and a Figure 2 analogue plot.",
    )
    p.add_argument("--ml-dir", help="a folder with u.data, u.user, u.item (copied into ROOT/raw)")
    p.add_argument("--root", help="dataset root (raw/ and processed/); default: a temporary folder")
    p.add_argument("--genre", choices=("single", "first"), default="single",
                   help="movies with exactly one genre (the paper) or every movie by its first genre")
    p.add_argument("--no-balance", action="store_true", help="keep all users (default: as many men as women)")
    p.add_argument("--max-graphs", type=int, default=None)
    p.add_argument("--symmetric", action="store_true", help="2-hop users also see the ego's movies")
    p.add_argument("--methods", nargs="+", default=list(DEFAULT_METHODS), help="rows (see --list)")
    p.add_argument("--extra", action="store_true", help="add the variant rows (blended, graph-norm, KW-2)")
    p.add_argument("--list", action="store_true", help="list the methods and exit")
    p.add_argument("--splits", type=int, default=100)
    p.add_argument("--test-size", type=float, default=0.2)
    p.add_argument("--inner-folds", type=int, default=5)
    p.add_argument("--C", type=float, nargs="+", default=list(C_GRID), dest="C_grid")
    p.add_argument("--curve-splits", type=int, default=20, help="splits per fraction of the curve (0: none)")
    p.add_argument("--fractions", type=float, nargs="+", default=[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8])
    p.add_argument("--seed", type=int, default=0, help="seed of the splits and of the class balancing")
    p.add_argument("--out", default=".", help="folder for table2.md, table2.json, table2_curve.png")
    p.add_argument("--no-plot", action="store_true")
    p.add_argument("--progress", action="store_true")
    p.set_defaults(func=_main)


def _command(args) -> str:
    """The command line that reproduces a run (from the parsed options)."""
    parts = ["kong-pyg table2"]
    if args.ml_dir:
        parts.append("--ml-dir PATH/ml-100k")
    parts.append(f"--genre {args.genre}")
    for flag in ("no_balance", "symmetric", "extra", "no_plot"):
        if getattr(args, flag):
            parts.append("--" + flag.replace("_", "-"))
    if args.max_graphs is not None:
        parts.append(f"--max-graphs {args.max_graphs}")
    if list(args.methods) != list(DEFAULT_METHODS):
        parts.append("--methods " + " ".join(f"'{m}'" for m in args.methods))
    parts.append(f"--splits {args.splits} --test-size {args.test_size} --inner-folds {args.inner_folds}")
    if list(args.C_grid) != list(C_GRID):
        parts.append("--C " + " ".join(f"{c:g}" for c in args.C_grid))
    parts.append(f"--curve-splits {args.curve_splits}")
    if args.curve_splits:
        parts.append("--fractions " + " ".join(f"{f:g}" for f in args.fractions))
    parts.append(f"--seed {args.seed} --out {os.path.relpath(args.out)}")
    return " ".join(parts)


def _main(args) -> int:
    import sys

    methods = table2_methods()
    if args.list:
        for m in methods.values():
            print(f"{m.name}: {m.note}")
        return 0
    names = list(args.methods)
    if args.extra:
        names += [m for m in methods if m not in names and m not in DEFAULT_METHODS]
    unknown = [m for m in names if m not in methods]
    if unknown:
        print(f"kong-pyg table2: unknown method(s) {unknown}; see --list", file=sys.stderr)
        return 2
    if not 0 < args.test_size < 1:
        print("kong-pyg table2: --test-size must be in (0, 1)", file=sys.stderr)
        return 2
    from .datasets.movielens import MovieLensOrdered

    root = args.root
    tmp = None
    if root is None:
        if args.ml_dir is None:
            print("kong-pyg table2: give --ml-dir (a MovieLens-100k folder) or --root", file=sys.stderr)
            return 2
        tmp = tempfile.TemporaryDirectory()
        root = tmp.name
    try:
        ds = MovieLensOrdered(root, ml_dir=args.ml_dir, genre=args.genre, symmetric=args.symmetric,
                              balance=not args.no_balance, max_graphs=args.max_graphs, seed=args.seed)
        cache = FeatureCache(ds, methods)
        result = run_table2(ds, names, args.splits, args.test_size, args.C_grid, args.inner_folds,
                            args.seed, args.progress, cache)
        curve = None
        if args.curve_splits > 0:
            curve_methods = [m for m in ("K-1", "K-2", "K-2 shuffled") if m in names] or names[:3]
            curve = accuracy_curve(ds, curve_methods, args.fractions, args.curve_splits, args.C_grid,
                                   args.inner_folds, args.seed, args.progress, cache)
        os.makedirs(args.out, exist_ok=True)
        figure = None
        if curve is not None and not args.no_plot:
            try:
                plot_curve(curve, os.path.join(args.out, "table2_curve.png"))
                figure = "table2_curve.png"
            except ImportError:
                print("matplotlib is not installed (pip install kong-pyg[plot]); no plot", file=sys.stderr)
        info = dataset_summary(ds)
        command = _command(args)
        write_markdown(result, os.path.join(args.out, "table2.md"), info, curve, figure, command)
        with open(os.path.join(args.out, "table2.json"), "w", encoding="utf-8") as f:
            json.dump({"dataset": info, "table": result, "curve": curve}, f)
        for name, r in result["summary"].items():
            print(f"{name:24s} D={r['dim']:7.0f}  acc {_pct(r['acc'])}  auc {_pct(r['auc'])}  "
                  f"features {r['feature_s']:.2f}s  train {r['train_s']:.3f}s/split")
        for key, by_metric in result["paired"].items():
            c = by_metric["acc"]
            print(f"{key}: acc diff {100 * c['mean_diff']:+.2f} points, corrected p = {_p(c['corrected_p'])}")
        print(f"wrote {os.path.join(args.out, 'table2.md')}")
    finally:
        if tmp is not None:
            tmp.cleanup()
    return 0


__all__ = ["run_table2", "accuracy_curve", "mean_ci", "paired_comparison", "table2_methods", "Method",
           "FeatureCache", "write_markdown", "plot_curve", "verdict", "C_GRID", "PAPER_MOVIELENS"]
