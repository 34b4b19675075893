"""``kong-pyg table2``: the KONG paper's Table 2 on MovieLens-100k.

Runs :func:`kong_pyg.experiments.table2.run_table2` once per tie rule (and
the accuracy curve) and writes ``table2.md``, ``table2.json`` and
``table2_curve.png`` to ``--out`` (with ``--out``/table2_notes.md, a discussion
written by hand after a run, appended if present). ``--resume FILE`` keeps every finished
method (a row: all its splits) in a plain JSON file, so an interrupted run goes on with the
methods it had not finished.
"""
import argparse
import json
import os
import tempfile
from typing import Any, Dict, List, Optional

from ..config import check_usable_device
from ..experiments.table2 import (
    C_GRID,
    C_GRID_NORMALIZED,
    DEFAULT_METHODS,
    FRACTIONS,
    FeatureCache,
    accuracy_curve,
    dataset_summary,
    run_table2,
    table2_methods,
)
from ..experiments.table2_report import markdown
from ..files import atomic_texts, file_text
from ..threads import MAX_THREADS as MAX_TORCH_THREADS
from ..threads import default_jobs
from .common import (
    MAX_SEED,
    MAX_SPLITS,
    CommandError,
    add_command,
    add_quiet,
    add_renamed,
    check_output_dir,
    check_output_file,
    drop_stale,
    input_dir,
    int_at_least,
    list_of,
    no_plot,
    not_a_file,
    number_in,
    one_of,
    plain_json,
    show_default,
    shown_path,
)

#: The files ``--out`` receives.
OUTPUTS = ("table2.md", "table2.json", "table2_curve.png")


def register(subparsers: Any) -> None:
    """Add the ``table2`` subcommand."""
    p = add_command(
        subparsers, "table2", help="the paper's Table 2 on MovieLens-100k (true vs shuffled neighbor order)",
        description="Run the KONG paper's Table 2 protocol on MovieLens-100k ordered ego graphs and "
                    "write table2.md, table2.json and a Figure 2 analogue plot. Lists are "
                    "comma-separated (--methods 'K-1,K-2,K-2 shuffled', --C 0.1,1,10).",
    )
    data = p.add_argument_group("data")
    data.add_argument("--ml-dir", type=input_dir, default=None, metavar="DIR",
                      help="a folder with u.data, u.user, u.item (copied into ROOT/raw; an error if "
                           "ROOT/raw holds other files of those names) "
                           "(default: none; needed unless ROOT/raw has them)")
    data.add_argument("--root", type=not_a_file, default=None, metavar="ROOT",
                      help="dataset root (raw/ and processed/) (default: a temporary folder)")
    data.add_argument("--genre", choices=("single", "first"), default="single",
                      help="movies with exactly one genre (the paper) or every movie by its first genre")
    data.add_argument("--no-balance", action="store_true",
                      help="keep all users (default: off: as many men as women)")
    data.add_argument("--max-graphs", metavar="N", type=int_at_least(1), default=None,
                      help="at most this many users (default: all)")
    data.add_argument("--symmetric", action="store_true", help="2-hop users also see the ego's movies")
    data.add_argument("--ties", type=list_of(one_of(["row", "authors"])), default="row,authors",
                      metavar="RULE[,RULE]",
                      help="tie rules for ratings in the same second, one table each: row (file row order), "
                           "authors (user id, then movie id, as strings)")
    rows = p.add_argument_group("rows")
    rows.add_argument("--methods", type=list_of(one_of(list(table2_methods()))),
                      default=",".join(DEFAULT_METHODS), metavar="NAME[,NAME...]",
                      help="rows, comma-separated (see --list)")
    rows.add_argument("--extra", action="store_true", help="add the variant rows (blended, graph-norm, KW-2)")
    rows.add_argument("--list", action="store_true", help="list the methods and exit")
    ev = p.add_argument_group("protocol")
    ev.add_argument("--splits", metavar="N", type=int_at_least(2, MAX_SPLITS), default=30,
                    help="stratified random splits (the docs' run: benchmarks/table2.py, 50)")
    ev.add_argument("--test-size", metavar="X", type=number_in(0.0, 1.0), default=0.2,
                    help="test fraction of a split")
    ev.add_argument("--inner-folds", metavar="N", type=int_at_least(2), default=5,
                    help="inner folds choosing C")
    ev.add_argument("--C", dest="C_grid", type=list_of(number_in(0.0)), default=show_default(list(C_GRID)),
                    metavar="C[,C...]", help="LinearSVC C grid of rows with raw graph vectors")
    ev.add_argument("--C-normalized", dest="C_grid_normalized", type=list_of(number_in(0.0)),
                    default=show_default(list(C_GRID_NORMALIZED)), metavar="C[,C...]",
                    help="LinearSVC C grid of rows with L2-normalized graph vectors (the authors' variant)")
    ev.add_argument("--shuffle-seeds", metavar="N", type=int_at_least(0), default=10,
                    help="seeds of the random orders, cycled over the splits (0: a new seed per split)")
    ev.add_argument("--threads", metavar="N", type=int_at_least(1, MAX_TORCH_THREADS), default=default_jobs(),
                    help="solver threads (default: the cores this process is given, at most 8)")
    add_renamed(ev, "--jobs", "--threads", "threads", int_at_least(1, MAX_TORCH_THREADS))  # its former name
    ev.add_argument("--device", metavar="DEV", default=None,
                    help="where the SVM problems are solved (also those of the curve), e.g. cuda; the "
                         "features are computed on the CPU (default: the CPU)")
    ev.add_argument("--resume", metavar="FILE.json", default=None,
                    help="keep finished rows in this JSON file and skip them when run again "
                         "(one file per tie rule: FILE-row.json, ...) (default: none)")
    ev.add_argument("--curve-splits", metavar="N", type=int_at_least(0, MAX_SPLITS), default=5,
                    help="splits per fraction of the accuracy curve (0: no curve)")
    ev.add_argument("--fractions", type=list_of(number_in(0.0, 1.0)), default=None, metavar="F[,F...]",
                    help=f"training fractions of the curve (default: {show_default(list(FRACTIONS))})")
    ev.add_argument("--seed", metavar="N", type=int_at_least(0, MAX_SEED), default=0,
                    help="seed of the splits and of the class balancing")
    out = p.add_argument_group("output")
    out.add_argument("--out", type=not_a_file, default=".", metavar="DIR",
                     help="folder for table2.md, table2.json, table2_curve.png (made if missing)")
    out.add_argument("--no-plot", action="store_true",
                     help="no table2_curve.png (an earlier one in --out is removed)")
    add_quiet(out)
    p.set_defaults(func=run)


def command_line(args: argparse.Namespace) -> str:
    """The command line that reproduces a run (from the parsed options)."""
    parts = ["kong-pyg table2"]
    if args.ml_dir:
        parts.append("--ml-dir PATH/ml-100k")
    elif args.root:  # (the data set is read from its processed copy there: the command needs it)
        parts.append("--root DIR")
    parts.append(f"--genre {args.genre} --ties {','.join(args.ties)}")
    for flag in ("no_balance", "symmetric", "extra", "no_plot"):
        if getattr(args, flag):
            parts.append("--" + flag.replace("_", "-"))
    if args.max_graphs is not None:
        parts.append(f"--max-graphs {args.max_graphs}")
    if list(args.methods) != list(DEFAULT_METHODS):
        parts.append("--methods '" + ",".join(args.methods) + "'")
    parts.append(f"--splits {args.splits} --test-size {args.test_size} --inner-folds {args.inner_folds}")
    if list(args.C_grid) != list(C_GRID):
        parts.append("--C " + ",".join(f"{c:g}" for c in args.C_grid))
    if list(args.C_grid_normalized) != list(C_GRID_NORMALIZED):
        parts.append("--C-normalized " + ",".join(f"{c:g}" for c in args.C_grid_normalized))
    parts.append(f"--shuffle-seeds {args.shuffle_seeds}")
    parts.append(f"--curve-splits {args.curve_splits}")
    if args.curve_splits:
        parts.append("--fractions " + ",".join(f"{f:g}" for f in args.fractions))
    if args.device is not None:
        parts.append(f"--device {args.device}")
    parts.append(f"--seed {args.seed} --out {shown_path(args.out)}")
    return " ".join(parts)


def _check(args: argparse.Namespace) -> None:
    """Inputs given and outputs writable, before any work."""
    if args.root is None and args.ml_dir is None:
        raise CommandError("give --ml-dir (a MovieLens-100k folder) or --root")
    check_output_dir(args.out, "--out")
    for name in OUTPUTS:
        check_output_file(os.path.join(args.out, name), "--out")
    if args.root is not None:
        check_output_dir(args.root, "--root")
    if args.resume is not None:
        if not args.resume.strip():  # (it meant no resume file, silently)
            raise CommandError("--resume needs a file name (got an empty one)")
        for path in resume_files(args).values():
            check_output_file(path, "--resume")
    check_usable_device("--device", args.device)
    if args.curve_splits == 1:
        raise CommandError("--curve-splits: 0 (no curve) or at least 2 (the curve's spread needs two splits)")
    if args.curve_splits == 0 and args.fractions is not None:
        raise CommandError("--fractions: the curve's training fractions, but --curve-splits 0 draws no curve")
    if args.fractions is None:
        args.fractions = list(FRACTIONS)
    args.notes = _read_notes(os.path.join(args.out, NOTES))


#: A discussion kept in --out and copied into table2.md by every run.
NOTES = "table2_notes.md"


def _read_notes(path: str) -> Optional[str]:
    """The notes file's text (:obj:`None` without one), read before any work.

    A file that cannot be read is named now, not after the run.
    """
    if not os.path.lexists(path):
        return None
    if os.path.isdir(path):
        raise CommandError(f"{path}: a folder; --out's {NOTES} (copied into table2.md) must be a text file")
    try:
        with open(path, "rb") as f:
            content = f.read()
    except OSError as err:
        raise CommandError(f"{path}: cannot be read ({err.strerror})") from None
    try:  # (a byte-order mark, as Windows editors write it, is dropped)
        return file_text(content)
    except UnicodeDecodeError as err:
        raise CommandError(f"{path}: not UTF-8 text (byte {err.start}: {err.reason}); --out's {NOTES} is "
                           "copied into table2.md") from None


def run(args: argparse.Namespace) -> int:
    """Run ``kong-pyg table2``."""
    methods = table2_methods()
    if args.list:
        for m in methods.values():
            print(f"{m.name}: {m.note}")
        return 0
    names: List[str] = list(args.methods)
    if args.extra:
        names += [m for m in methods if m not in names and m not in DEFAULT_METHODS]
    _check(args)
    tmp: Optional[tempfile.TemporaryDirectory] = None
    root = args.root
    if root is None:
        tmp = tempfile.TemporaryDirectory()
        root = tmp.name
    try:
        _run(args, names, root)
    finally:
        if tmp is not None:
            tmp.cleanup()
    return 0


def _check_fractions(ds: Any, args: argparse.Namespace) -> None:
    """Every curve fraction gives training and test parts with every class on these graphs."""
    from ..evaluation.classify import graph_targets
    from ..evaluation.splits import random_splits

    y = graph_targets(ds)
    for f in args.fractions:
        try:
            random_splits(y, 1, train_size=f, inner_folds=args.inner_folds, seed=args.seed)
        except ValueError as err:
            raise CommandError(f"--fractions {f:g} does not fit {len(y)} graphs: {err}") from None


def resume_files(args: argparse.Namespace) -> Dict[str, str]:
    """The resume file of each tie rule (``FILE-RULE.json``)."""
    stem = args.resume[:-5] if args.resume.endswith(".json") else args.resume
    return {tie: f"{stem}-{tie}.json" for tie in args.ties}


def _run(args: argparse.Namespace, names: List[str], root: str) -> None:
    from ..datasets.movielens import MovieLensOrdered
    from ..evaluation.stats import format_ci, format_p

    progress = not args.quiet
    shuffle_seeds = args.shuffle_seeds or None
    results: Dict[str, Any] = {}
    infos: Dict[str, Any] = {}
    curve = None
    for tie in args.ties:
        ds = MovieLensOrdered(root, ml_dir=args.ml_dir, genre=args.genre, symmetric=args.symmetric,
                              balance=not args.no_balance, max_graphs=args.max_graphs, seed=args.seed,
                              ties=tie)
        cache = FeatureCache(ds, table2_methods())
        if args.curve_splits > 0 and curve is None:
            _check_fractions(ds, args)  # (before the main table, not after it)
        results[tie] = run_table2(ds, names, args.splits, args.test_size, args.C_grid, args.inner_folds,
                                  args.seed, progress, cache, args.C_grid_normalized, shuffle_seeds,
                                  resume_files(args)[tie] if args.resume else None, tie, args.threads,
                                  device=args.device)
        infos[tie] = dataset_summary(ds)
        if args.curve_splits > 0 and curve is None:
            curve_methods = [m for m in ("K-1", "K-2", "K-2 consistent", "K-2 shuffled") if m in names] \
                or names[:3]
            curve = accuracy_curve(ds, curve_methods, args.fractions, args.curve_splits, args.C_grid,
                                   args.inner_folds, args.seed, progress, cache, args.C_grid_normalized,
                                   shuffle_seeds, args.threads, device=args.device)
            curve["ties"] = tie
    os.makedirs(args.out, exist_ok=True)
    figure = _figure(curve, args) if curve is not None else None
    if figure is None:
        drop_stale(os.path.join(args.out, "table2_curve.png"))
    out = {"command": command_line(args), "datasets": infos, "tables": results, "curve": curve}
    text = markdown(results, infos, curve, figure, command_line(args), args.notes)
    atomic_texts([(os.path.join(args.out, "table2.md"), text),
                  (os.path.join(args.out, "table2.json"), json.dumps(plain_json(out), allow_nan=False))])
    for tie, result in results.items():
        print(f"ties: {tie}")
        for name, r in result["summary"].items():
            print(f"  {name:24s} D={r['dim']:7.0f}  acc {format_ci(r['acc'])}  auc {format_ci(r['auc'])}  "
                  f"features {r['feature_s']:.2f}s  train {r['train_s']:.3f}s/split")
        for key, by_metric in result["paired"].items():
            c = by_metric["acc"]
            print(f"  {key}: acc diff {100 * c['mean_diff']:+.2f} points, "
                  f"corrected p = {format_p(c['corrected_p'])}")
    written = ["table2.md", "table2.json"] + ([figure] if figure is not None else [])
    print(f"wrote {', '.join(os.path.join(args.out, name) for name in written)}")


def _figure(curve: Any, args: argparse.Namespace) -> Optional[str]:
    """Draw the accuracy curve to ``--out``/table2_curve.png unless ``--no-plot``; its name or None."""
    if args.no_plot:
        return None
    from ..evaluation.plots import plot_fraction_curve

    try:
        plot_fraction_curve(curve, os.path.join(args.out, "table2_curve.png"))
    except ImportError as err:
        no_plot(err)
        return None
    return "table2_curve.png"


__all__ = ["register", "run", "command_line", "resume_files", "OUTPUTS"]
