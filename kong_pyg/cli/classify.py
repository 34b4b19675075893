"""``kong-pyg classify``: graph classification accuracy of KONG features (and baselines).

Wraps :func:`kong_pyg.classify` (and, with ``--plot``,
:func:`kong_pyg.sketch_curve`). The KONG options take comma lists and make a
grid (their product) on top of a ``--grid`` preset.
"""
import argparse
import itertools
import json
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ..config import check_usable_device, option_names
from ..evaluation.grid import (
    DEFAULT_C,
    FOLDS,
    GRID_PRESETS,
    INNER_FOLDS,
    KONG_DEFAULTS,
    MAX_ITER,
    METHODS,
    PLOT_SIZES,
    PROTOCOLS,
    REPEATS,
    Grid,
    expand_grid,
    paper_grid,
)
from ..threads import default_jobs
from .common import (
    MAX_SEED,
    MAX_THREADS,
    CommandError,
    add_cache_dir,
    add_command,
    add_kong_options,
    add_quiet,
    check_figure_file,
    input_dir,
    int_at_least,
    list_of,
    number_in,
    plain_json,
    show_default,
    show_kong,
)

#: Memory budgeted per --jobs process by default (the paper grid peaked at 4.1 GiB in one process on ENZYMES,
#: 2.8 GiB on PROTEINS).
PROCESS_MEMORY = 6 << 30

#: The solver's margin tolerance as ``--tol``'s help shows it (a test checks it against
#: :data:`~kong_pyg.evaluation.svm.MARGIN_TOL`, which this module does not import: it imports PyTorch).
SOLVER_TOL_TEXT = "1e-09"

#: The KONG options of a grid (the seed is ``--seed``, shared with the splits).
KONG_OPTIONS: List[str] = [name for name in option_names() if name != "seed"]

#: Grid flags -> (setting key, the methods they apply to); the KONG ones apply to kong only.
GRID_FLAGS: Dict[str, Tuple[str, Tuple[str, ...]]] = {
    **{name: (name, ("kong",)) for name in KONG_OPTIONS},
    "hops": ("hops", ("kong", "wl", "wl-grakel")),
    "normalize": ("normalize", ("kong", "wl", "sp")),
    "walk_length": ("length", ("kw",)),
}


def _grid_default(name: str) -> str:
    """Where a grid flag's values come from when it is absent."""
    if name not in GRID_PRESETS["paper"]:
        text = show_kong(name, KONG_DEFAULTS[name])
    else:
        values = {preset: show_kong(name, grid[name]) for preset, grid in GRID_PRESETS.items()
                  if isinstance(grid, dict)}
        text = ("from --grid: " + ", ".join(f"{p} {v}" for p, v in values.items())
                if len(set(values.values())) > 1 else f"{next(iter(values.values()))}, from --grid")
    for preset, settings in GRID_PRESETS.items():  # (a list of settings: the extended grid)
        if isinstance(settings, list):
            seen = sorted({setting.get(name, KONG_DEFAULTS[name]) for setting in settings}, key=str)
            if seen != [KONG_DEFAULTS[name]] or name in GRID_PRESETS["paper"]:
                text += f"; --grid {preset}: {show_kong(name, seen)}, per setting"
    if name == "hops":
        text += f"; wl, wl-grakel: {show_kong(name, paper_grid('wl')['hops'])}"
    return text


def register(subparsers: Any) -> None:
    """Add the ``classify`` subcommand."""
    p = add_command(
        subparsers, "classify",
        help="graph classification accuracy of KONG features (and baselines)",
        description=(
            "Compute KONG features (or a baseline's) for a graph-classification data set and "
            "evaluate a LinearSVC with repeated stratified k-fold CV. Without --dataset it runs on "
            "MUTAG, bundled with the package (offline). Grid options take comma-separated values "
            "(integers also ranges like 1-4; yes/no options also 'both'); the grid is their product."
        ),
    )
    data = p.add_argument_group("data")
    data.add_argument("--dataset", default=None, metavar="NAME",
                      help="TU data set name (default: the bundled MUTAG)")
    data.add_argument("--data-root", default=None, metavar="DIR", type=input_dir,
                      help="folder holding NAME/raw/NAME_*.txt (PyG TUDataset layout); only read "
                           "(default: none: bundled or cached data)")
    data.add_argument("--download", action="store_true",
                      help="let PyG download a data set that is neither in DIR nor bundled")
    add_cache_dir(data)
    _add_feature_options(p)
    _add_evaluation_options(p)
    out = p.add_argument_group("output")
    out.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    add_quiet(out)
    out.add_argument("--plot", default=None, metavar="FILE.png",
                     help="also plot accuracy against sketch size b for the best setting (needs "
                          "matplotlib) (default: no plot)")
    out.add_argument("--plot-sizes", default=None, metavar="B[,B...]", type=list_of(int_at_least(1)),
                     help=f"sketch sizes of --plot (default: {show_default(list(PLOT_SIZES))})")
    p.set_defaults(func=run)


def _add_feature_options(p: argparse.ArgumentParser) -> None:
    model = p.add_argument_group("features")
    model.add_argument("--method", default="kong", choices=METHODS,
                       help="kong; kong-mean (one kernel per grid: the mean of the paper grid's and of the "
                            "extended grid's normalised kernels, 2 settings); wl (PyG WLConv); sp (labelled "
                            "shortest paths); wl-grakel (GraKeL, needs kong-pyg[bench]); kw (k-walks)")
    model.add_argument("--grid", default=None, choices=sorted(GRID_PRESETS),
                       help="KONG grid preset: paper = h 2, k 1, bfs, exact map, poly and cosine, p 1-4, "
                            "with and without rlb (16 settings); quick = the same with p 1 (4 settings); "
                            f"extended = {len(GRID_PRESETS['extended'])} settings: k 1 and k 2 ordered by "
                            "label or degree, h 1-3, the sum of depths 0..h, rlb 0-2, node (cosine) or "
                            "graph normalisation. The options below replace single entries. With --method "
                            "kong-mean: the grid whose kernels are averaged (default: paper; kong-mean: "
                            "two settings, the paper grid's mean and the extended grid's)")
    add_kong_options(
        model, KONG_OPTIONS, grid=True, defaults={name: None for name in KONG_OPTIONS},
        default_text={name: _grid_default(name) for name in KONG_OPTIONS},
        suffix={"hops": " [kong, wl, wl-grakel]", "normalize": " [kong, wl, sp]"},
    )
    model.add_argument("--walk-length", dest="walk_length", default=None, metavar="N[,N...]",
                       type=list_of(int_at_least(0), ranges=True),
                       help=f"walk length(s) k [kw] (default: "
                            f"{show_default(paper_grid('kw')['length'])}, from --grid)")


def _add_evaluation_options(p: argparse.ArgumentParser) -> None:
    ev = p.add_argument_group("evaluation")
    ev.add_argument("--protocol", default="both", choices=PROTOCOLS,
                    help="paper: best setting and C by mean CV accuracy (optimistic, as in the paper); "
                         "nested: chosen on inner folds (honest); both")
    ev.add_argument("--repeats", metavar="N", type=int_at_least(1), default=REPEATS,
                    help="random permutations R")
    ev.add_argument("--folds", metavar="N", type=int_at_least(2), default=FOLDS, help="outer folds")
    ev.add_argument("--inner-folds", metavar="N", type=int_at_least(2), default=None,
                    help=f"inner folds of the nested protocol (default: {INNER_FOLDS})")
    ev.add_argument("--nested-repeats", metavar="N", type=int_at_least(1), default=None,
                    help="with --protocol both: nested protocol on the first N repeats only "
                         "(default: all repeats)")
    ev.add_argument("--C", dest="C", default=show_default(list(DEFAULT_C)), metavar="C[,C...]",
                    type=list_of(number_in(0.0)), help="LinearSVC C grid")
    ev.add_argument("--seed", metavar="N", type=int_at_least(0, MAX_SEED), default=0,
                    help="seed of the splits and of the sketches' hash tables")
    ev.add_argument("--jobs", metavar="N", type=int_at_least(1, MAX_THREADS),
                    default=default_jobs(PROCESS_MEMORY),
                    help="processes over the settings of the grid (each computes a setting's features and "
                         "fits them, one thread each; the results do not depend on it; each holds one "
                         "setting's features, so use fewer where memory is short) (default: the cores "
                         "this process is given, at most 8, and at most one per 6 GiB of available memory)")
    ev.add_argument("--max-iter", metavar="N", type=int_at_least(1), default=MAX_ITER,
                    help="Newton steps at most per SVM problem (those that hit it are counted)")
    ev.add_argument("--tol", metavar="X", type=number_in(0.0), default=None,
                    help="margin tolerance of the SVM solver's stopping rule (the LinearSVC problem is "
                         "solved to its exact optimum up to this) (default: the solver's, "
                         f"{SOLVER_TOL_TEXT})")
    ev.add_argument("--device", metavar="DEV", default=None,
                    help="where the SVM problems are solved (also those of --plot), e.g. cuda: the settings "
                         "then run one after the other in this process, --jobs aside, and every design "
                         "gets the exact solver, whose Gram matrix must fit in the GPU's memory; the "
                         "features are computed on the CPU (default: the CPU)")


def grid_from_args(args: argparse.Namespace) -> Grid:
    """The grid of a ``classify`` command line: the preset with the given flags replacing entries."""
    method = args.method
    if method == "kong":
        preset = GRID_PRESETS[args.grid or "paper"]
        if not isinstance(preset, Mapping):  # a list of settings: the flags replace entries of each
            flags = {key: getattr(args, dest) for dest, (key, _) in GRID_FLAGS.items()
                     if getattr(args, dest) is not None}
            combos = [dict(zip(flags, values)) for values in itertools.product(*flags.values())]
            return [{**point, **combo} for point in preset for combo in combos]
        grid = dict(preset)
    elif method == "kong-mean":  # --grid NAME: that grid's mean alone
        grid = {"grid": [args.grid]} if args.grid is not None else dict(paper_grid(method))
    else:
        if args.grid is not None:
            raise CommandError(f"--grid {args.grid} is a KONG grid; it does not apply to --method {method}")
        grid = dict(paper_grid(method))
    for dest, (key, methods) in GRID_FLAGS.items():
        values = getattr(args, dest)
        if values is None:
            continue
        if method not in methods:
            flag = "--" + dest.replace("_", "-")
            raise CommandError(f"{flag} applies to --method {' or '.join(methods)}, not {method}")
        grid[key] = values
    return grid


def _check_combinations(args: argparse.Namespace) -> None:
    """Options that only make sense together."""
    if args.data_root is not None and args.dataset is None:
        raise CommandError("--data-root needs --dataset NAME (the folder DIR/NAME/raw to read)")
    if args.download and args.dataset is None:
        raise CommandError("--download needs --dataset NAME (a TU data set to fetch)")
    if args.protocol == "paper" and args.inner_folds is not None:
        raise CommandError("--inner-folds only applies to --protocol nested or both")
    if args.nested_repeats is not None and args.protocol != "both":
        raise CommandError("--nested-repeats only applies to --protocol both (use --repeats otherwise)")
    if "consistent" in (args.order or []):
        raise CommandError("--order consistent shuffles by a per-edge event key ('edge_order': a timestamp "
                           "or a global event id, the same in every graph), which TU data sets do not have; "
                           "use 'random' for a shuffled control")
    if args.plot is not None and args.method != "kong":
        raise CommandError("--plot draws KONG sketch sizes; it needs --method kong")
    if args.plot_sizes is not None and args.plot is None:
        raise CommandError("--plot-sizes needs --plot FILE.png")


def _check_extras(args: argparse.Namespace) -> None:
    """The optional packages a run needs, and that --plot can be written (before any work)."""
    if args.plot is not None:
        check_figure_file(args.plot, "--plot")
    if args.method == "wl-grakel":
        try:
            import grakel  # noqa: F401
        except ImportError:
            raise CommandError(
                f"--method {args.method} needs GraKeL: pip install 'kong-pyg[bench]'") from None


def run(args: argparse.Namespace) -> int:
    """Run ``kong-pyg classify``."""
    grid = grid_from_args(args)
    _check_combinations(args)
    expand_grid(args.method, grid)  # check the settings before loading anything
    _check_extras(args)
    check_usable_device("--device", args.device)
    common = dict(
        repeats=args.repeats, folds=args.folds, C=args.C, seed=args.seed,
        n_jobs=args.jobs, max_iter=args.max_iter, tol=args.tol, progress=not args.quiet, device=args.device,
    )
    if args.inner_folds is not None:  # (else the API's default)
        common["inner_folds"] = args.inner_folds
    from ..datasets.tu import load_tu
    from ..evaluation.classify import classify

    graphs = load_tu(args.dataset, args.data_root, cache=args.cache_dir, download=args.download)
    res = classify(graphs, method=args.method, grid=grid, protocol=args.protocol,
                   nested_repeats=args.nested_repeats, **common)
    payload = res.to_dict()
    if args.plot is not None:
        payload["plot"] = _plot(args, graphs, res, common)
    if args.json:
        print(json.dumps(plain_json(payload), indent=2, allow_nan=False))
        return 0
    print(res.table())
    if args.plot is not None:
        plot = payload["plot"]
        print(f"\nplot: {args.plot} (accuracy against sketch size b, {plot['protocol']} protocol)")
        for row in plot["curve"]:
            print(f"  b={row['dim'] or 'exact':>5}: {100 * row['accuracy_mean']:.2f} +- "
                  f"{100 * row['accuracy_std']:.2f}%  ({row['feature_seconds']:.2f} s features)")
    return 0


def _plot(args: argparse.Namespace, graphs: Any, res: Any, common: Dict[str, Any]) -> Dict[str, Any]:
    """The accuracy-against-b curve of the headline setting, drawn to ``--plot``."""
    from ..evaluation.classify import sketch_curve
    from ..evaluation.plots import plot_sketch_curve

    sizes: Optional[List[int]] = args.plot_sizes
    head = res.primary
    proto = "nested" if args.protocol in ("nested", "both") else "paper"
    curve = sketch_curve(graphs, head.best_params, sizes or list(PLOT_SIZES), protocol=proto, **common)
    plot_sketch_curve(curve, args.plot, title=f"{res.dataset}: {head.best_setting} ({proto} protocol)")
    return {"file": str(args.plot), "protocol": proto, "curve": curve}


__all__ = ["register", "run", "grid_from_args", "GRID_FLAGS", "KONG_OPTIONS"]
