r"""Graph classification with KONG features, as the paper did it and honestly.

:func:`classify` is what ``kong-pyg classify`` runs: it computes the
features of every setting of a grid (:mod:`~kong_pyg.evaluation.grid`)
**once**, then scores scikit-learn's :class:`~sklearn.svm.LinearSVC`
problem, solved exactly for all splits at once
(:mod:`~kong_pyg.evaluation.svm`), in repeated stratified cross-validation
for every :math:`C` of a grid
(:func:`~kong_pyg.evaluation.cv.cross_validate`) and reports the paper's
protocol, the nested one, or both (see :mod:`kong_pyg.evaluation.cv`).
:func:`sketch_curve` is the paper's Figure 3: accuracy against the sketch
size.
"""
from dataclasses import dataclass
from functools import partial
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ..config import check_bool, check_choice, check_int, check_usable_device, zero_dim
from ..devices import cpu_by_default
from ..graph_union import not_a_graph
from .cv import CVResult, FeatureEntry, ProtocolResult, cross_validate
from .features import setting_features
from .grid import (
    DEFAULT_C,
    FOLDS,
    INNER_FOLDS,
    MAX_ITER,
    PLOT_SIZES,
    PROTOCOLS,
    REPEATS,
    Grid,
    expand_grid,
    name_legend,
)


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

    def __repr__(self) -> str:  # (the dataclass's would print every score: thousands of characters)
        found = "; ".join(r.brief() for r in self.results.values())
        return (f"ClassifyResult({self.method.upper()} on {self.dataset}, {len(self.cv.settings)} "
                f"setting(s), {self.repeats} x {self.folds}-fold CV: {found}; .table() is the report)")

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
            "accuracy_std_over": "repeat means (population std, ddof 0: 0 with one repeat)",
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

    def _header(self) -> str:
        cv = self.cv
        text = (f"{self.method.upper()} on {self.dataset}: {self.num_graphs} graphs, {self.num_classes} "
                f"classes, {len(cv.settings)} setting(s), C in {{{', '.join(f'{c:g}' for c in cv.C)}}}, "
                f"{self.repeats} x {self.folds}-fold CV")
        if self.inner_folds:
            fewer = f", first {self.nested_repeats} repeats" if self.nested_repeats != self.repeats else ""
            text += f" (nested: {self.inner_folds} inner folds{fewer})"
        return text

    def _protocol_lines(self) -> List[str]:
        lines = [f"{'protocol':<8} {'accuracy (mean +- std)':>24}  chosen"]
        for name in ("paper", "nested"):
            if name not in self.results:
                continue
            res = self.results[name]
            what = f"{res.best_setting}, C={res.best_params['C']:g}"
            if name == "nested":
                total, times = sum(res.chosen.values()), res.chosen.get(what, 0)
                tied = tied_choices(res.chosen)
                also = f"; {tied} other choice{'s' if tied > 1 else ''} as often" if tied else ""
                what = f"most often {what} ({times}/{total} outer folds{also})"
            repeats = (self.nested_repeats or self.repeats) if name == "nested" else self.repeats
            spread = f"{100 * res.accuracy_std:<5.2f}" if repeats > 1 else "n/a  "  # (one repeat: no spread)
            lines.append(f"{name:<8} {100 * res.accuracy_mean:>14.2f} +- {spread}  {what}")
        return lines

    def table(self) -> str:
        """A readable report."""
        cv = self.cv
        rows = cv.grid_table()
        w = max([34] + [len(row["setting"]) for row in rows])  # (long names widen the column, not the rows)
        lines = [self._header(), "", f"{'setting':<{w}} {'best C':>6} {'CV accuracy':>12} {'feature s':>10} "
                 f"{'fit s':>7}  fit on"]
        for row in rows:
            fit_on = row["fit_on"] or {}
            lines.append(
                f"{row['setting']:<{w}} {row['C']:>6g} {100 * row['accuracy']:>11.2f}% "
                f"{row['feature_seconds']:>10.2f} {row['fit_seconds'] or 0.0:>7.2f}  "
                f"{fit_on.get('features', '?')} -> {fit_on.get('basis_columns', '?')} columns"
            )
        lines += ["", name_legend(cv.settings), ""]
        lines += self._protocol_lines()
        solvers: Dict[str, int] = {}
        for info in cv.fit_info or []:
            name = (info or {}).get("solver", "exact (batched Newton)")
            solvers[name] = solvers.get(name, 0) + 1
        how = "solved exactly" if all(s.startswith("exact") for s in solvers) else "; ".join(
            f"{n} setting{'s' if n > 1 else ''} by {name}" for name, n in solvers.items())
        lines += [
            "",
            "best C, CV accuracy: each setting's C with the best mean test-fold accuracy (as 'paper' picks: "
            "optimistic). std: over the repeat means (ddof 0). 'paper' picks the setting on the test "
            "folds (optimistic, as the paper did); 'nested' picks it on inner folds of each training part "
            "(honest).",
            f"features: {self.feature_seconds:.2f} s for all settings; fits: {cv.cv_seconds:.1f} s added up "
            f"over the settings ({cv.fits} LinearSVC problems, {how}"
            + (f", {cv.stuck} stopped at max_iter" if cv.stuck else ", all converged")
            + "; settings run side by side with n_jobs > 1, so this can exceed the wall time)",
        ]
        return "\n".join(lines)


def tied_choices(chosen: Mapping[str, int]) -> int:
    """How many other (setting, C) choices the nested protocol made as often as its most chosen one.

    (:attr:`ProtocolResult.chosen` lists the most chosen first, ties in grid order: the reported best.)
    """
    counts = list(chosen.values())
    return sum(1 for n in counts[1:] if n == counts[0]) if counts else 0


def graph_targets(graphs: Any, hint: str = "") -> np.ndarray:
    """The class label of every graph, as a numpy array.

    Args:
        graphs: A PyG dataset or a sequence of
            :class:`~torch_geometric.data.Data`, each with one label in :obj:`y`.
        hint (str, optional): Added to the error for a graph without one label.

    Returns:
        :class:`numpy.ndarray` :obj:`[num_graphs]`.
    """
    import torch
    from torch_geometric.data import InMemoryDataset

    from ..outputs import numpy_of
    from .splits import class_labels

    if isinstance(graphs, InMemoryDataset) and graphs.transform is None:
        y, ptr = graphs._data.y, graphs.slices.get("y") if graphs.slices else None
        # one row per graph, and one label per row ([G] or [G, 1]; a [G, 2] y has one row per graph too)
        if y is not None and ptr is not None and y.numel() == ptr.numel() - 1 and \
                bool(((ptr[1:] - ptr[:-1]) == 1).all()):
            idx = np.fromiter(graphs.indices(), dtype=np.int64, count=len(graphs))
            return _integral(class_labels(numpy_of(y, "'y'").reshape(-1)[idx]))  # (any device and dtype)
    ys = []
    for i in range(len(graphs)):
        g = graphs[i]
        odd = not_a_graph(g, i)  # (name that, not its labels)
        if odd is not None:
            raise odd
        t = getattr(g, "y", None)
        if t is not None and not isinstance(t, torch.Tensor):
            raise TypeError(f"graph {i}: 'y' must be a tensor of one class label (got {type(t).__name__})")
        if t is None or t.numel() != 1:
            raise ValueError(f"graph {i} needs one class label in 'y'{hint}")
        ys.append(numpy_of(t, f"graph {i}'s 'y'").reshape(-1)[0])
    return _integral(class_labels(np.asarray(ys)))


def _integral(y: np.ndarray) -> np.ndarray:
    """Checked labels (:func:`~.splits.class_labels`); integral floats and bools as integers."""
    return y.astype(np.int64) if y.dtype.kind in "fb" else y


def _graphs_and_name(dataset: Any, data_root: Any, cache: Any, download: bool,
                     arg: str = "dataset") -> Tuple[Any, str]:
    """The graphs of :func:`classify`'s :obj:`dataset` (a name or graphs; argument :obj:`arg`), their name."""
    if dataset is None or isinstance(dataset, str):
        from ..datasets.tu import load_tu

        graphs = load_tu(dataset, data_root, cache=cache, download=download)
        return graphs, str(graphs.name)
    if isinstance(dataset, (bytes, dict)) or not hasattr(dataset, "__getitem__") \
            or not hasattr(dataset, "__len__") or zero_dim(dataset):
        raise TypeError(f"'{arg}' must be a TU data set's name, a PyG dataset or a list of Data "
                        f"(got {type(dataset).__name__})")
    if data_root is not None:
        raise ValueError("'data_root' only applies when 'dataset' is a name")
    if len(dataset) == 0:
        raise ValueError(f"'{arg}' is empty: no graphs to classify")
    return dataset, str(getattr(dataset, "name", type(dataset).__name__))


def _processes(graphs: Any, n_jobs: int) -> int:
    """:obj:`n_jobs`, or 1 where the graphs are on a GPU.

    The settings' features are computed in forked processes, where CUDA cannot be used (the GPU is
    the parallelism then).
    """
    # (an in-memory dataset's storage, where no transform moves its graphs elsewhere: no graph made)
    store = getattr(graphs, "_data", None) if getattr(graphs, "transform", None) is None else None
    x = getattr(store, "x", None) if store is not None else getattr(graphs[0], "x", None)
    dev = getattr(x, "device", None)
    return 1 if getattr(dev, "type", "cpu") not in ("cpu", "meta") else n_jobs


@cpu_by_default
def classify(
    dataset: Any = None,
    *,
    data_root: Any = None,
    download: bool = False,
    cache: Any = None,
    method: str = "kong",
    grid: Optional[Union[str, Grid]] = None,
    protocol: str = "both",
    repeats: int = REPEATS,
    folds: int = FOLDS,
    inner_folds: int = INNER_FOLDS,
    nested_repeats: Optional[int] = None,
    C: Sequence[float] = DEFAULT_C,
    seed: int = 0,
    n_jobs: int = 1,
    max_iter: int = MAX_ITER,
    tol: Optional[float] = None,
    progress: bool = False,
    device: Any = None,
) -> ClassifyResult:
    r"""Graph classification accuracy of a feature map over a grid of settings.

    Under the paper's and/or the nested protocol (see
    :mod:`kong_pyg.evaluation.cv`). The ``kong-pyg classify`` command wraps
    this function.

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
        method (str, optional): :obj:`"kong"`, :obj:`"kong-mean"` (the
            mean of a KONG grid's normalised kernels as one setting; see
            :func:`~kong_pyg.evaluation.depths.grid_mean_features`), :obj:`"wl"` (PyG
            :class:`~torch_geometric.nn.conv.WLConv`), :obj:`"wl-grakel"`,
            :obj:`"sp"` (shortest paths), :obj:`"kw"` (k-walks). (default: :obj:`"kong"`)
        grid (str, dict or list, optional): Settings (see :func:`expand_grid`),
            or a KONG preset name: :obj:`"paper"`, :obj:`"quick"`,
            :obj:`"extended"` (:func:`~kong_pyg.evaluation.grid.extended_grid`;
            for :obj:`"kong-mean"`: the one setting averaging that grid).
            (default: :func:`paper_grid`; for :obj:`"kong-mean"` the paper
            grid's and the extended grid's means)
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
        n_jobs (int, optional): Processes over the settings (as in
            :func:`~kong_pyg.evaluation.cv.cross_validate`; one where the graphs are on a GPU).
            (default: :obj:`1`)
        max_iter (int, optional): Newton steps at most per SVM problem.
            (default: :obj:`100`)
        tol (float, optional): The solver's margin tolerance (see
            :func:`~kong_pyg.evaluation.cv.cross_validate`). (default: :obj:`None`)
        progress (bool, optional): A progress bar on stderr. (default: :obj:`False`)
        device (str or torch.device, optional): Where the SVM problems are
            solved, e.g. :obj:`"cuda"` (see
            :func:`~kong_pyg.evaluation.cv.cross_validate`). (default: the CPU)

    Returns:
        :class:`ClassifyResult`
    """
    check_choice("protocol", protocol, PROTOCOLS)
    check_usable_device("device", device)
    settings = expand_grid(method, grid)
    graphs, name = _graphs_and_name(dataset, data_root, cache, check_bool("download", download))
    if nested_repeats is not None and protocol != "both":
        raise ValueError("'nested_repeats' only applies to protocol='both' (use 'repeats' otherwise)")
    y = graph_targets(graphs)
    nested = protocol in ("nested", "both")
    entries: List[FeatureEntry] = [partial(setting_features, s, graphs, seed) for s in settings]
    cv = cross_validate(
        entries, y, settings=settings, nested=nested, nested_repeats=nested_repeats, repeats=repeats,
        folds=folds, inner_folds=inner_folds, C=C, seed=seed, n_jobs=_processes(graphs, n_jobs),
        max_iter=max_iter, tol=tol, progress=progress, device=device,
    )
    wanted = ("paper", "nested") if protocol == "both" else (protocol,)
    results = {p: cv.protocol(p) for p in wanted}
    return ClassifyResult(
        dataset=name, method=method, num_graphs=int(y.size), num_classes=int(np.unique(y).size),
        protocol=protocol, results=results, cv=cv, repeats=repeats, folds=folds,
        inner_folds=inner_folds if nested else None, seed=seed,
        nested_repeats=(repeats if nested_repeats is None else nested_repeats) if nested else None,
    )


def sketch_curve(
    graphs: Any,
    params: Dict[str, Any],
    sizes: Sequence[int] = PLOT_SIZES,
    *,
    protocol: str = "paper",
    repeats: int = REPEATS,
    folds: int = FOLDS,
    inner_folds: int = INNER_FOLDS,
    C: Sequence[float] = DEFAULT_C,
    seed: int = 0,
    n_jobs: int = 1,
    max_iter: int = MAX_ITER,
    tol: Optional[float] = None,
    exact: bool = True,
    progress: bool = False,
    device: Any = None,
) -> List[Dict[str, Any]]:
    r"""Accuracy of one KONG setting against the sketch size :math:`b`.

    The paper's Figure 3: for every :math:`b` in :obj:`sizes`, the sketched map
    (:obj:`dim=b`) of the setting :obj:`params` is scored with :math:`C`
    chosen by :obj:`protocol` (the other arguments as in :func:`classify`).

    Args:
        graphs: A PyG dataset, a list of :class:`~torch_geometric.data.Data`
            or a bundled data set's name (as :func:`classify`'s :obj:`dataset`).
        params (dict): The KONG setting (a :obj:`"C"` entry is ignored).
        sizes (sequence, optional): The sketch sizes, each once.
            (default: :obj:`PLOT_SIZES`)
        protocol (str, optional): :obj:`"paper"` or :obj:`"nested"`.
            (default: :obj:`"paper"`)
        repeats (int, optional): :math:`R`. (default: :obj:`10`)
        folds (int, optional): :math:`F`. (default: :obj:`10`)
        inner_folds (int, optional): :math:`I` (nested). (default: :obj:`5`)
        C (sequence, optional): The :math:`C` grid. (default: :obj:`(0.1, 1, 10)`)
        seed (int, optional): Seed of the splits and of the sketches. (default: :obj:`0`)
        n_jobs (int, optional): Processes over the sizes (as in
            :func:`~kong_pyg.evaluation.cv.cross_validate`; one where the graphs are on a GPU).
            (default: :obj:`1`)
        max_iter (int, optional): Newton steps at most per SVM problem.
            (default: :obj:`100`)
        tol (float, optional): The solver's margin tolerance (see
            :func:`~kong_pyg.evaluation.cv.cross_validate`). (default: :obj:`None`)
        exact (bool, optional): Score the exact map first (:obj:`dim=None`).
            (default: :obj:`True`)
        progress (bool, optional): A progress bar on stderr. (default: :obj:`False`)
        device (str or torch.device, optional): Where the SVM problems are
            solved (as in :func:`classify`). (default: the CPU)

    Returns:
        A list of dicts ``{dim, accuracy_mean, accuracy_std, C, feature_seconds}``.
    """
    check_choice("protocol", protocol, ("paper", "nested"))
    if not isinstance(params, Mapping):
        raise TypeError("'params' must be a dict of KONG options, e.g. {'k': 2} "
                        f"(got {type(params).__name__})")
    if isinstance(sizes, (str, bytes)) or not isinstance(sizes, Iterable):
        raise TypeError(f"'sizes' must be a sequence of sketch sizes (got {type(sizes).__name__})")
    sizes = [check_int("sizes", b, 1) for b in sizes]
    twice = sorted({b for b in sizes if sizes.count(b) > 1})
    if twice:
        raise ValueError(f"'sizes' must hold each sketch size once (got {twice} more than once)")
    exact, progress = check_bool("exact", exact), check_bool("progress", progress)
    if not sizes and not exact:
        raise ValueError("'sizes' is empty and exact=False: no map to score")
    graphs = _graphs_and_name(graphs, None, None, False, "graphs")[0]
    params = {k: v for k, v in params.items() if k != "C"}
    dims: List[Optional[int]] = [None] if exact else []
    settings = expand_grid("kong", [{**params, "dim": b} for b in dims + list(sizes)])
    y = graph_targets(graphs)
    cv = cross_validate(  # one run over every size: the same splits, and the sizes in n_jobs processes
        [partial(setting_features, setting, graphs, seed) for setting in settings], y, settings=settings,
        nested=protocol == "nested", repeats=repeats, folds=folds, inner_folds=inner_folds, C=C,
        seed=seed, n_jobs=_processes(graphs, n_jobs), max_iter=max_iter, tol=tol, progress=progress,
        device=device,
    )
    out = []
    for i, setting in enumerate(settings):
        res = cv.only(i).protocol(protocol)  # each size chooses its own C
        out.append({
            "dim": setting.config["dim"], "accuracy_mean": res.accuracy_mean,
            "accuracy_std": res.accuracy_std, "C": res.best_params["C"],
            "feature_seconds": cv.feature_seconds[i],
        })
    return out


__all__ = [
    "PROTOCOLS",
    "tied_choices",
    "PLOT_SIZES",
    "ClassifyResult",
    "graph_targets",
    "classify",
    "sketch_curve",
]
