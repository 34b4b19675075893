r"""Does neighbor order matter in my data? :func:`order_test` answers in one call.

Given ordered graphs with class labels, it computes KONG features for five
settings and scores them with the same classifier on the same repeated
random splits:

* ``k1``: :math:`k = 1`, label counts, which ignore the order;
* ``true``: :math:`k \geq 2` in the true order (the edge order, or the
  per-edge key :obj:`edge_order`, e.g. timestamps);
* ``consistent``: :math:`k \geq 2` after a **consistent shuffle**: every
  event (every value of the per-edge key) gets one seeded random position,
  the same in every graph it appears in ("random timestamps"; several
  seeds). This is the honest control for "does the order matter": it keeps
  everything but the order, including the fact that a node seen in several
  graphs has the same neighbor order in each of them;
* ``random``: :math:`k \geq 2` after a **per-graph shuffle** (several seeds),
  the usual "shuffled" control (the KONG paper's). When nodes or events are
  shared between graphs (ego graphs of one user-item graph, say) it turns a
  node's order, the same in every graph, into per-graph noise, so it makes
  the true order look better than it is;
* ``reverse``: :math:`k \geq 2` in time-reversed order. No control: with BFS
  strings and no edge labels (any depth and :math:`k`) its exact features are
  a permutation of the true order's, so the two score the same on every split
  (sketched ones estimate the same kernel).

It then reports the paired differences over the splits with the
Nadeau-Bengio corrected resampled t-test
(:func:`kong_pyg.evaluation.stats.paired_comparison`): **true vs consistent**
is the answer to "does order matter?"; true vs per-graph shuffle is the
paper's comparison; consistent vs per-graph shuffle measures the bias of the
per-graph control; true vs :math:`k = 1` says whether ordered features add
anything to label counts.

**The consistent shuffle needs a per-edge key that names the same event in
every graph** (a timestamp, a global event id: the :obj:`edge_order` that
:class:`~kong_pyg.datasets.InteractionGraphs`,
:class:`~kong_pyg.datasets.MovieLensOrdered` and
:class:`~kong_pyg.datasets.ProvenanceGraphs` store, or the arrival position
of a StreamSpot stream). An edge's position within its graph is not such a
key (position 3 of one graph and position 3 of another are different
events), so graphs without the key get the per-graph shuffle only, with a
warning; that control is unbiased only if no node or event appears in more
than one graph.

The classifier is the shared evaluation harness's
(:func:`~kong_pyg.evaluation.harness.evaluate_features`): stratified random
splits and scikit-learn's :class:`~sklearn.svm.LinearSVC` problem, solved
exactly, with its :math:`C` chosen by inner cross-validation.
"""
import os
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from .config import (
    MAX_SEED,
    KongConfig,
    check_attr_name,
    check_bool,
    check_c_grid,
    check_float,
    check_int,
    check_option_names,
    check_usable_device,
)
from .devices import cpu_by_default
from .evaluation.stats import with_corrected_interval  # noqa: F401  (its former home)
from .order_inputs import (  # (also importable from here)
    edge_label_values,
    graph_labels,
    load_ordered_graphs,
    tied_share,
)
from .warn import warn

#: The settings, in report order, and what each one is.
SETTINGS: Dict[str, str] = {
    "k1": "k = 1 (label counts, order-free)",
    "true": "true order",
    "consistent": "consistent shuffle (one random position per event, the same in every graph)",
    "random": "per-graph shuffle (the paper's control)",
    "reverse": "time reversal",
}
#: The paired comparisons (a - b), the first one is the answer.
COMPARISONS: Tuple[Tuple[str, str], ...] = (
    ("true", "consistent"), ("true", "random"), ("consistent", "random"), ("true", "k1"),
    ("true", "reverse"),
)
#: The most shuffle seeds (each is a feature map per split).
MAX_SHUFFLES = 1_000
#: The default C grids: unit-norm graph vectors need large C.
C_NORMALIZED: Tuple[float, ...] = (0.1, 1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6)
C_RAW: Tuple[float, ...] = (1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0, 1e3)

PathLike = Union[str, "os.PathLike[str]"]


@dataclass
class OrderTestResult:
    r"""What :func:`order_test` found.

    Attributes:
        settings (list): The settings that ran (keys of :obj:`SETTINGS`).
        scores (dict): :obj:`scores[metric][setting]`, one score per split
            (shuffled settings: the mean over their seeds); metrics
            :obj:`"accuracy"` and, for two classes, :obj:`"auc"`.
        seed_scores (dict): :obj:`seed_scores[metric][setting]`, one list of
            per-split scores per seed of a shuffled setting.
        comparisons (list): One dict per (comparison, metric): :obj:`a`,
            :obj:`b`, :obj:`metric` and the fields of
            :func:`~kong_pyg.evaluation.stats.paired_comparison`, plus the
            corrected 95 % interval of the mean difference
            (:obj:`corrected_lo`, :obj:`corrected_hi`).
        test_fraction (float): The share of graphs in each test part.
        info (dict): The data, options, protocol, timings and warnings
            (:obj:`"inner_folds"` as asked, :obj:`"inner_folds_used"` the
            inner folds the splits could have, :obj:`"svm_device"` where
            the SVM problems were solved).
    """

    settings: List[str]
    scores: Dict[str, Dict[str, List[float]]]
    seed_scores: Dict[str, Dict[str, List[List[float]]]]
    comparisons: List[Dict[str, Any]]
    test_fraction: float
    info: Dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:  # (without the per-split scores)
        return (f"OrderTestResult(settings {self.settings}, {self.info.get('splits', '?')} splits: "
                f"{self.answer()!r}; .to_markdown() is the report)")

    def comparison(self, a: str, b: str, metric: str = "accuracy") -> Dict[str, Any]:
        """The paired comparison of :obj:`a` against :obj:`b` on :obj:`metric`."""
        for c in self.comparisons:
            if (c["a"], c["b"], c["metric"]) == (a, b, metric):
                return c
        raise KeyError(f"no comparison {a} vs {b} on {metric!r} (settings run: {self.settings})")

    def summary(self, metric: str = "accuracy") -> Dict[str, Dict[str, float]]:
        """Mean, sd and 95 % t-interval of every setting's scores (:func:`mean_ci`)."""
        from .evaluation.stats import mean_ci, metric_scores

        scores = metric_scores(self.scores, metric)
        return {s: mean_ci(scores[s]) for s in self.settings}

    def answer(self, metric: str = "accuracy", alpha: float = 0.05) -> str:
        """The answer to "does order matter?" in a few sentences (the corrected test decides)."""
        from .evaluation.stats import check_alpha, undefined, verdict

        alpha = check_alpha(alpha)
        control = _control(self.settings)
        main = self.comparison("true", control, metric)
        d, p = 100 * main["mean_diff"], main["corrected_p"]
        if self.info.get("order_blind"):
            head = (f"No order effect can be seen: the true order's features equal those of the "
                    f"{_name(control)} shuffle on every graph, so they do not depend on the order (see the "
                    "warning).")
        elif undefined(p):
            head = (f"Undecided: the true order and the {SETTINGS[control]} differ by the same {d:+.2f} "
                    f"points of {metric} on every split, so there is no spread to test (too few splits?).")
        elif main["ties"] == main["n"]:
            head = (f"No detectable order effect: the true order and the {SETTINGS[control]} scored the same "
                    f"{metric} on every one of the {main['n']} splits, so there is no spread to test (no "
                    "interval either); more or larger splits may tell them apart.")
        elif p < alpha and d > 0:
            head = f"Yes: the true order beats the {SETTINGS[control]} by {d:+.2f} points of {metric}."
        elif p < alpha:
            head = f"The true order is worse than the {SETTINGS[control]} ({d:+.2f} points of {metric})."
        else:
            lo, hi = (100 * main.get(f"corrected_{end}", float("nan")) for end in ("lo", "hi"))
            head = (f"No detectable order effect: true order - {SETTINGS[control]} = {d:+.2f} points of "
                    f"{metric}, within split-to-split noise (95 % interval {lo:+.1f} to {hi:+.1f}).")
            if main["n"] < FEW_SPLITS:
                head += (f" Only {main['n']} splits: the test has little power, and effects up to the "
                         f"interval's ends are not ruled out; more splits decide.")
        lines = [head]
        for a, b in COMPARISONS:
            if a in self.settings and b in self.settings:
                lines.append("- " + verdict(self.comparison(a, b, metric), _name(a), _name(b), metric, alpha))
        if control == "random":
            lines.append("- No per-edge key: the per-graph shuffle was the only control; it favours the "
                         "true order when nodes or events appear in several graphs.")
        tied = float(self.info.get("tied_key_share", 0.0))
        if control == "consistent" and tied >= TIED_NOTE:
            lines.append(f"- {100 * tied:.1f} % of the edges tie on the key with another edge of their "
                         "neighborhood; the consistent shuffle keeps ties in their true order, so it "
                         "understates an order effect there.")
        return "\n".join(lines)

    def to_dict(self) -> Dict[str, Any]:
        """Everything, and :meth:`answer`, as plain JSON-ready values (NaN statistics as JSON's null)."""
        from .evaluation.stats import plain_json

        return plain_json({"settings": list(self.settings), "scores": self.scores,
                           "seed_scores": self.seed_scores, "comparisons": self.comparisons,
                           "test_fraction": self.test_fraction, "info": self.info, "answer": self.answer()})

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "OrderTestResult":
        """A result from :meth:`to_dict` (its JSON, say) again; the answer is derived, not read.

        Results saved before 2026-11-29 gave differences with no spread (the same on every split) an
        interval of width 0; they read as today's, with none.
        """
        fields = {k: v for k, v in d.items() if k != "answer"}
        if isinstance(fields.get("comparisons"), list):
            fields["comparisons"] = [
                {**c, "corrected_lo": float("nan"), "corrected_hi": float("nan")}
                if isinstance(c, dict) and c.get("sd_diff") == 0 else c for c in fields["comparisons"]]
        return cls(**fields)

    def to_markdown(self, title: str = "Order test") -> str:
        """A markdown report: the setup, every setting's scores, the paired differences, the answer."""
        from .evaluation.stats import format_ci, format_interval, format_p

        info = self.info
        metrics = list(self.scores)
        out = [f"## {title}", "",
               f"- Data: {info['num_graphs']} graphs, class counts {info['class_counts']}; per-edge key: "
               f"{info['key'] or 'none (no consistent shuffle)'}.",
               f"- Features: KONG k = {info['k']}, hops = {info['hops']}, options {info['options']}"
               + _edge_labels(info),
               f"- Protocol: {info['splits']} stratified random splits, {100 * self.test_fraction:.0f} % "
               f"test; LinearSVC, C in {list(info['C'])} by {_folds_used(info)}-fold inner CV on the "
               f"training part{_on_device(info)}; {info['shuffles']} seed(s) per shuffled setting "
               f"(scores averaged per split); seed {info['seed']}.", "",
               "| setting | " + " | ".join(f"{m} % (mean ± 95 % CI)" for m in metrics)
               + " | feature CPU s |", "|---|" + "---|" * (len(metrics) + 1)]
        for s in self.settings:
            cells = [format_ci(self.summary(m)[s]) for m in metrics]
            out.append(f"| {SETTINGS[s]} | " + " | ".join(cells) + f" | {info['feature_cpu_s'][s]:.2f} |")
        out += ["", "Paired differences over the same splits (a - b, points); the corrected resampled "
                "t-test (Nadeau-Bengio) accounts for overlapping training sets:", "",
                "| a - b | metric | mean | corrected 95 % CI | wins/ties/losses | corrected p | paired t p |",
                "|---|---|---|---|---|---|---|"]
        for c in self.comparisons:
            out.append(f"| {_name(c['a'])} - {_name(c['b'])} | {c['metric']} | {100 * c['mean_diff']:+.2f} | "
                       f"{format_interval(c)} | "
                       f"{c['wins']}/{c['ties']}/{c['losses']} | {format_p(c['corrected_p'])} | "
                       f"{format_p(c['t_p'])} |")
        out += ["", "**Answer.** " + self.answer()]
        for w in info.get("warnings", []):
            out += ["", f"> Warning: {w}"]
        return "\n".join(out) + "\n"

    def plot(self, path: PathLike, metric: str = "accuracy", title: str = "") -> None:
        """Draw every setting's scores and the paired differences to an image file.

        Left: each setting's per-split scores (dots) and mean with its 95 %
        t-interval. Right: each comparison's mean difference with its
        corrected 95 % interval; intervals that cross 0 show no effect.
        """
        from .evaluation.plots import pyplot, save_figure
        from .evaluation.stats import undefined

        plt = pyplot()
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [1.1, 1]})
        rng = np.random.default_rng(0)
        stats = self.summary(metric)
        for i, s in enumerate(self.settings):
            values = 100 * np.asarray(self.scores[metric][s])
            left.scatter(i + rng.uniform(-0.15, 0.15, values.size), values, s=8, alpha=0.35, color="gray")
            left.errorbar(i, 100 * stats[s]["mean"], yerr=100 * stats[s]["half"], fmt="o", color="C0",
                          capsize=4)
        left.set_xticks(range(len(self.settings)), [_name(s) for s in self.settings], rotation=20)
        left.set_ylabel(f"{metric} (%)")
        left.set_title("per split, mean ± 95 % CI")
        rows = [c for c in self.comparisons if c["metric"] == metric]
        for j, c in enumerate(rows):
            mean = 100 * c["mean_diff"]
            if undefined(c["corrected_lo"]):  # no spread: no interval; a hollow marker and a word say so
                right.plot(mean, j, "o", mfc="none", color="C7")
                right.annotate("no spread", (mean, j), xytext=(6, 0), textcoords="offset points", va="center",
                               fontsize=8, color="C7")
                continue
            lo, hi = 100 * c["corrected_lo"], 100 * c["corrected_hi"]
            color = "C3" if c["corrected_p"] < 0.05 else "C0"
            right.errorbar(mean, j, xerr=[[mean - lo], [hi - mean]], fmt="o", color=color, capsize=4)
        right.axvline(0, color="black", lw=0.8)
        right.set_yticks(range(len(rows)), [f"{_name(c['a'])} - {_name(c['b'])}" for c in rows])
        right.invert_yaxis()
        right.set_xlabel(f"difference in {metric} (points)")
        right.set_title("paired difference, corrected 95 % CI")
        for ax in (left, right):
            ax.grid(alpha=0.3)
        if title:
            fig.suptitle(title)
        fig.tight_layout()
        save_figure(fig, path, dpi=120)


def _control(settings: Sequence[str]) -> str:
    """The control the answer reads: the consistent shuffle where it ran, else the per-graph one."""
    return "consistent" if "consistent" in settings else "random"


def _name(setting: str) -> str:
    return {"k1": "k=1", "true": "true", "consistent": "consistent", "random": "per-graph",
            "reverse": "reverse"}[setting]


@cpu_by_default
def order_test(
    graphs: Any,
    y: Any = None,
    *,
    k: int = 2,
    hops: int = 1,
    shuffles: int = 3,
    splits: int = 20,
    test_size: float = 0.2,
    C: Optional[Sequence[float]] = None,
    inner_folds: int = 3,
    reverse: bool = True,
    seed: int = 0,
    labels: Any = None,
    edge_order_attr: Optional[str] = "edge_order",
    device: Any = None,
    threads: Optional[int] = 1,
    **options: Any,
) -> OrderTestResult:
    r"""Test whether neighbor order matters for classifying these graphs (see :mod:`kong_pyg.ordertest`).

    Args:
        graphs: The ordered graphs: a PyG dataset or a list of
            :class:`~torch_geometric.data.Data` (neighbor order = edge order,
            or the per-edge key :obj:`edge_order_attr`), an interaction log
            (a mapping with :obj:`user`, :obj:`item`, :obj:`time`,
            :obj:`user_label`, :obj:`item_label`, :obj:`y` and optionally
            other :class:`~kong_pyg.datasets.InteractionGraphs` arguments),
            a StreamSpot file path or an
            :class:`~kong_pyg.datasets.EdgeStream` (with :obj:`labels`).
        y (array-like, optional): :obj:`[num_graphs]` class labels
            (default: the graphs' :obj:`y`).
        k (int, optional): The k-gram length of the ordered settings
            (:math:`\geq 2`). (default: :obj:`2`)
        hops (int, optional): The depth of the strings, at least 1 (at depth
            0 no string holds a neighbor). (default: :obj:`1`)
        shuffles (int, optional): Seeds per shuffled setting. (default: :obj:`3`)
        splits (int, optional): Stratified random splits. (default: :obj:`20`)
        test_size (float, optional): The test share of each split.
            (default: :obj:`0.2`)
        C (sequence, optional): The LinearSVC grid (default:
            :obj:`C_NORMALIZED` for normalized graph vectors, else :obj:`C_RAW`).
        inner_folds (int, optional): Folds of the inner CV that picks C.
            (default: :obj:`3`)
        reverse (bool, optional): Also run time reversal. (default: :obj:`True`)
        seed (int, optional): Seed of the splits and the shuffles. (default: :obj:`0`)
        labels (optional): Graph labels of a StreamSpot input (a dict, a
            labels file or a tensor; see :class:`~kong_pyg.datasets.StreamSpotGraphs`).
        edge_order_attr (str, optional): The per-edge key attribute;
            :obj:`None` ignores any key (edge order; no consistent shuffle).
            (default: :obj:`"edge_order"`)
        device (str or torch.device, optional): Where the SVM problems are
            solved, e.g. :obj:`"cuda"` (as in
            :func:`~kong_pyg.evaluation.harness.evaluate_features`; the
            features are computed on the CPU). (default: the CPU)
        threads (int, optional): PyTorch threads for the features (as
            :class:`~kong_pyg.KongVectorizer`'s; :obj:`None`: PyTorch's
            setting). (default: :obj:`1`)
        **options: Other KONG options for every setting (see
            :class:`~kong_pyg.KongConfig`; defaults here :obj:`normalize=True`
            and :obj:`blended=True`, so the ordered settings hold the
            :math:`k = 1` counts too); not :obj:`k`, :obj:`order` or :obj:`seed`.

    Returns:
        OrderTestResult
    """
    k = check_int("k", k, 2)
    hops = check_int("hops", hops, 1)  # (as k >= 2: at depth 0 no string holds a neighbor, so no order)
    shuffles = check_int("shuffles", shuffles, 1, MAX_SHUFFLES)
    splits = check_int("splits", splits, 2)
    inner_folds = check_int("inner_folds", inner_folds, 2)
    check_usable_device("device", device)
    test_size = check_float("test_size", test_size, 0.0)
    if not 0 < test_size < 1:
        raise ValueError(f"'test_size' must be in (0, 1) (got {test_size})")
    if threads is not None:
        check_int("threads", threads, 1)
    for bad in ("order", "seed"):
        if bad in options:
            raise ValueError(f"order_test sets '{bad}' itself (it compares orders over seeds); drop it")
    check_option_names("order_test", options, not_here=("order", "seed"))
    check_bool("reverse", reverse)
    check_attr_name("edge_order_attr", edge_order_attr)
    options = {"normalize": True, "blended": True, **options}
    KongConfig(k=k, hops=hops, **options)  # check every option once, with its name
    if check_int("seed", seed, 0, MAX_SEED) + shuffles - 1 > MAX_SEED:  # (the shuffled settings' seed + i)
        raise ValueError(f"'seed' must be at most 2**32 - {shuffles} = {MAX_SEED - shuffles + 1} here: "
                         f"shuffle i of a shuffled setting uses seed + i, {shuffles} shuffles (got {seed})")
    grid = tuple(check_c_grid("C", C) if C is not None
                 else (C_NORMALIZED if options["normalize"] else C_RAW))

    notes: List[str] = []
    graphs, key = load_ordered_graphs(graphs, labels, edge_order_attr, notes)
    y = graph_labels(graphs, y)
    from .evaluation.splits import check_split_sizes, fewer_folds_note, inner_folds_used

    check_split_sizes(y, test_size)  # (random_splits checks it too: here before the features)
    parts = _splits(y, splits, test_size, inner_folds, seed)
    if key is None:
        notes.append(
            f"the graphs have no '{edge_order_attr}' key: a consistent shuffle needs a per-edge key that "
            "names the same event in every graph (a timestamp or a global event id), and an edge's "
            "position in its graph is not one, so only the per-graph shuffle ran; it is an unbiased "
            "control only if no node or event appears in more than one graph")
        warn(notes[-1], UserWarning)
    tied = tied_share(graphs, key, options.get("flow", "source_to_target")) if key else 0.0
    if tied >= TIED_NOTE:
        notes.append(
            f"{100 * tied:.1f} % of the edges share their '{key}' value with another edge of the same "
            "neighborhood: equal keys are one event, so the consistent shuffle keeps those edges in their "
            "true order; it is a weaker control (finer keys, e.g. timestamps with sub-second parts, help)")
        warn(notes[-1], UserWarning)
    settings = ["k1", "true", "consistent", "random", "reverse"]
    settings = [s for s in settings if (s != "consistent" or key) and (s != "reverse" or reverse)]

    features, cpu = order_features(graphs, settings, k, hops, shuffles, seed, edge_order_attr, options,
                                   threads)
    # blind: equal to every control drawn with the true order's seed (its sketch tables too), the per-graph
    # shuffle included (tied keys can leave the consistent shuffle equal to the true order alone)
    blind = all(_same_matrix(features["true"][0], features[c][0]) for c in ("consistent", "random")
                if c in features)
    control = _control(settings)
    if blind:  # (no split can tell them apart: say why, not "more splits may")
        notes.append(ORDER_BLIND.format(control=f"{_name(control)} shuffle"))
        warn(notes[-1], UserWarning)
    edge_values = edge_label_values(graphs) if options.get("edge_labels", True) else 0
    if k == 2 and edge_values == 1 and not blind:
        notes.append(ONE_EDGE_LABEL)
        warn(notes[-1], UserWarning)
    all_runs = _fit_scores({s: features[s] for s in settings}, y, parts, grid, device)
    scores: Dict[str, Dict[str, List[float]]] = {}
    seed_scores: Dict[str, Dict[str, List[List[float]]]] = {}
    chosen: Dict[str, Dict[str, int]] = {}
    for s in settings:
        runs = all_runs[s]
        for metric in runs[0]["scores"]:
            per_seed = [r["scores"][metric] for r in runs]
            scores.setdefault(metric, {})[s] = np.mean(per_seed, axis=0).tolist()
            if s in ("consistent", "random"):  # (the shuffled settings: one list per seed, also for one)
                seed_scores.setdefault(metric, {})[s] = [list(v) for v in per_seed]
        chosen[s] = {f"{c:g}": sum(r["chosen"].count(c) for r in runs) for c in grid}
        stopped, fits = sum(r["not_converged"] for r in runs), sum(r["fits"] for r in runs)
        if stopped:
            notes.append(f"{s}: {stopped} of {fits} SVM fits stopped at max_iter")
    test_fraction = float(np.mean([len(row[0][1]) / len(y) for row in parts.outer]))
    used = inner_folds_used(parts, inner_folds)
    if used != [inner_folds]:
        notes.append(fewer_folds_note(inner_folds, used))
    comparisons = _compare(settings, scores, test_fraction)
    info = {"num_graphs": len(y), "class_counts": np.bincount(y).tolist(), "key": key, "k": k,
            "hops": hops, "options": options, "splits": splits, "test_size": test_size, "C": list(grid),
            "inner_folds": inner_folds, "inner_folds_used": used, "shuffles": shuffles, "seed": seed,
            "feature_cpu_s": cpu, "svm_device": str(device or "cpu"), "tied_key_share": tied,
            "C_chosen": chosen, "edge_labels": edge_values, "order_blind": blind, "warnings": notes}
    return OrderTestResult(settings, scores, seed_scores, comparisons, test_fraction, info)


#: Why no split can tell the true order from the control where their features are equal.
ORDER_BLIND = (
    "the true order's features equal those of the {control} on every graph: they do not depend on the order "
    "(for instance where every node has the same label, or every edge with k = 2), so no test can find an "
    "order effect. Give the nodes labels that tell them apart (for an interaction log, the items' ids: "
    "item_label=torch.arange(num_items))")


def _same_matrix(a: Any, b: Any) -> bool:
    """Whether two feature matrices (CSR or dense; columns in the vectorizer's canonical order) are equal."""
    if a.shape != b.shape:
        return False
    if hasattr(a, "tocsr") and hasattr(b, "tocsr"):
        return (a != b).nnz == 0
    return bool(np.array_equal(np.asarray(a), np.asarray(b)))


#: Why k = 2 cannot see the order where every edge has the same label (SPEC: ``e s_u1 e s_u2 ...``).
ONE_EDGE_LABEL = (
    "every edge has the same label, and edge labels are in the strings (e s_u1 e s_u2 ...): every k = 2 "
    "gram has that label on one side, so the k = 2 features see which neighbor comes last but not which "
    "neighbor follows which, and this test can miss an order effect. Use k = 3 or edge_labels=False "
    "(kong-pyg order-test: --k 3 or --edge-labels no)")


def _edge_labels(info: Mapping[str, Any]) -> str:
    """The report's words for :obj:`info["edge_labels"]` (how many distinct edge labels: 0, 1, 2 or more)."""
    if "edge_labels" not in info:  # (results saved before it was recorded)
        return "."
    n = info["edge_labels"]
    words = {0: "none", 1: "one value", 2: "several values"}.get(n, "?")
    if n and info["k"] == 2:
        words += " (a k = 2 gram pairs a neighbor with the next edge's label, not with the next neighbor)"
    return f"; edge labels in the strings: {words}."


#: Fewer splits than this: a negative answer says that the test has little power.
FEW_SPLITS = 10
#: The share of tied key values in neighborhoods from which the consistent shuffle is called weaker.
TIED_NOTE = 0.01


def order_features(
    graphs: Any,
    settings: Sequence[str],
    k: int,
    hops: int,
    shuffles: int,
    seed: int,
    edge_order_attr: Optional[str],
    options: Mapping[str, Any],
    threads: Optional[int] = 1,
) -> Tuple[Dict[str, List[Any]], Dict[str, float]]:
    """The feature matrices of every setting (one per shuffle seed for the shuffled ones).

    Returns the matrices and the CPU seconds each setting took (all its seeds).
    """
    from .vectorizer import KongVectorizer

    plan = {"k1": (1, "edge", [seed]), "true": (k, "edge", [seed]), "reverse": (k, "reverse", [seed]),
            "consistent": (k, "consistent", [seed + i for i in range(shuffles)]),
            "random": (k, "random", [seed + i for i in range(shuffles)])}
    features: Dict[str, List[Any]] = {}
    cpu: Dict[str, float] = {}
    for s in settings:
        kk, order, seeds = plan[s]
        t = time.process_time()
        features[s] = [KongVectorizer(k=kk, hops=hops, order=order, seed=sd, edge_order_attr=edge_order_attr,
                                      threads=threads, **options).fit_transform(graphs) for sd in seeds]
        cpu[s] = time.process_time() - t
    return features, cpu


def _compare(settings: Sequence[str], scores: Dict[str, Dict[str, List[float]]],
             test_fraction: float) -> List[Dict[str, Any]]:
    from .evaluation.stats import paired_comparison

    out = []
    for a, b in COMPARISONS:
        if a not in settings or b not in settings:
            continue
        for metric in scores:
            cmp = paired_comparison(scores[metric][a], scores[metric][b], test_fraction)
            out.append({"a": a, "b": b, "metric": metric, **with_corrected_interval(cmp, test_fraction)})
    return out


def _folds_used(info: Dict[str, Any]) -> str:
    """The inner folds as used ("3"), or as asked and used where fewer were possible ("3-4 (of 16 asked)")."""
    from .evaluation.splits import describe_folds

    return describe_folds(info["inner_folds"], info.get("inner_folds_used", [info["inner_folds"]]))


def _on_device(info: Dict[str, Any]) -> str:
    """Where the SVM problems were solved, when not on the CPU (" (SVMs on cuda)")."""
    device = info.get("svm_device", "cpu")
    return "" if device == "cpu" else f" (SVMs on {device})"


def _splits(y: np.ndarray, splits: int, test_size: float, inner_folds: int, seed: int) -> Any:
    """The stratified random splits (:func:`~kong_pyg.evaluation.cv.random_splits`), before any feature.

    Raises:
        ValueError: With two classes, a test part holds one class only (ROC AUC is undefined there).
    """
    from .evaluation.cv import random_splits

    parts = random_splits(y, splits, test_size=test_size, inner_folds=inner_folds, seed=seed)
    if y.max() == 1:  # (a test part of one class has no ROC AUC: the comparison read NaN)
        for i, ((_, test),) in enumerate(parts.outer):
            held = np.unique(y[test])
            if held.size < 2:
                other = 1 - int(held[0])
                count = int((y == other).sum())
                raise ValueError(f"split {i} tests no graph of class {other} (it has {count} graphs; "
                                 f"test_size {test_size:g}), and ROC AUC needs both classes in every test "
                                 "part: give more graphs of that class or a larger test_size")
    return parts


def _fit_scores(features: Dict[str, List[Any]], y: np.ndarray, parts: Any, grid: Sequence[float],
                device: Any = None) -> Dict[str, List[Dict[str, Any]]]:
    """Per setting the scores of each of its feature matrices (one per shuffle seed) on :obj:`parts`.

    The shared evaluation harness (:func:`~kong_pyg.evaluation.harness.evaluate_features`): the
    splits of :func:`_splits`, LinearSVC's problem solved exactly, :math:`C` chosen by inner
    stratified CV on each training part (ties: the :math:`C` first in the grid), test accuracy and,
    for two classes, ROC AUC.
    """
    from .evaluation.harness import evaluate_features

    metrics = ("accuracy", "auc") if y.max() == 1 else ("accuracy",)
    named = {f"{s}/{i}": X for s, Xs in features.items() for i, X in enumerate(Xs)}
    res = evaluate_features(named, y, splits=parts, Cs=grid, metrics=metrics, device=device)
    return {s: [{"scores": res[f"{s}/{i}"].scores, "chosen": res[f"{s}/{i}"].C, "fits": res[f"{s}/{i}"].fits,
                 "not_converged": res[f"{s}/{i}"].not_converged} for i in range(len(Xs))]
            for s, Xs in features.items()}


__all__ = ["order_test", "OrderTestResult", "order_features", "load_ordered_graphs", "graph_labels",
           "tied_share", "with_corrected_interval",
           "SETTINGS", "COMPARISONS", "C_NORMALIZED", "C_RAW"]
