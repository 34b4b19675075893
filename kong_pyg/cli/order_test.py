"""``kong-pyg order-test``: does neighbor order matter in my data?

Wraps :func:`kong_pyg.order_test` (no second implementation): it loads one
input (a TU data set, a MovieLens-100k folder, a StreamSpot file or the
provenance benchmark), runs the test and prints its answer; with ``--out``
it also writes ``order_test.md``, ``order_test.json`` and ``order_test.png``.
"""
import argparse
import json
import os
import sys
import tempfile
import warnings
from typing import Any, Dict, List, Optional, Tuple

from ..config import check_usable_device
from ..files import atomic_texts, printable
from ..threads import MAX_THREADS as MAX_TORCH_THREADS
from ..threads import default_jobs, torch_threads
from .common import (
    MAX_SEED,
    MAX_SPLITS,
    CommandError,
    add_cache_dir,
    add_command,
    add_quiet,
    check_distinct_files,
    check_output_dir,
    check_output_file,
    drop_stale,
    input_dir,
    input_file,
    int_at_least,
    list_of,
    no_plot,
    not_a_file,
    number_in,
    show_default,
    shown_path,
    yes_no,
)

#: The files ``--out`` receives.
OUTPUTS = ("order_test.md", "order_test.json", "order_test.png")
#: The most synthetic graphs (``--num-graphs``) and shuffled copies per setting (``--shuffles``) asked for.
MAX_GRAPHS = 10**7
MAX_SHUFFLES = 10**4


def register(subparsers: Any) -> None:
    """Add the ``order-test`` subcommand."""
    p = add_command(
        subparsers, "order-test",
        help="does neighbor order matter in my data? (true order vs shuffles, paired tests)",
        description=(
            "Score KONG features with k = 1, k >= 2 in the true order, after a consistent shuffle "
            "(one random position per event, the same in every graph: the honest control), after a "
            "per-graph shuffle (the KONG paper's control) and in reversed time, on the same repeated "
            "stratified splits, and report the paired differences with the corrected resampled "
            "t-test (kong_pyg.order_test). One input: --dataset (TU; without any input, the bundled "
            "MUTAG), --ml-dir (MovieLens-100k), --streamspot FILE --labels FILE, or --provenance "
            "STRENGTH (the generated benchmark whose classes differ only in event order)."
        ),
    )
    data = p.add_argument_group("data (one of)")
    data.add_argument("--dataset", default=None, metavar="NAME",
                      help="TU data set name; edge order = neighbor order, no event key, so only the "
                           "per-graph shuffle runs (default: the bundled MUTAG when no other input is given)")
    data.add_argument("--data-root", default=None, metavar="DIR", type=input_dir,
                      help="folder holding NAME/raw/NAME_*.txt (PyG TUDataset layout); only read")
    data.add_argument("--download", action="store_true",
                      help="let PyG download a --dataset that is neither in DIR nor bundled")
    add_cache_dir(data)
    data.add_argument("--ml-dir", default=None, metavar="DIR", type=input_dir,
                      help="a MovieLens-100k folder (u.data, u.user, u.item; only read): one ordered ego "
                           "graph per user, class = gender, as many men as women")
    data.add_argument("--streamspot", default=None, metavar="FILE", type=input_file(),
                      help="a StreamSpot edge file (needs --labels); the event key is the arrival position")
    data.add_argument("--labels", default=None, metavar="FILE", type=input_file(),
                      help="graph labels of --streamspot, lines 'GRAPH_ID LABEL'")
    data.add_argument("--provenance", default=None, metavar="STRENGTH", type=number_in(0.0, 1.0, closed=True),
                      help="the provenance benchmark at this order strength in [0, 1] (0: order carries "
                           "no class signal)")
    data.add_argument("--num-graphs", metavar="N", type=int_at_least(4, MAX_GRAPHS), default=200,
                      help="graphs of --provenance")
    ml = p.add_argument_group("MovieLens graphs (--ml-dir)")
    ml.add_argument("--ties", choices=("row", "authors"), default="row",
                    help="ratings in the same second: file row order, or the KONG authors' rule (user id, "
                         "then movie id, compared as strings)")
    ml.add_argument("--layout", choices=("ego", "authors"), default="ego",
                    help="our 2-hop ego graphs, or the authors' undirected graphs")
    ml.add_argument("--genre", choices=("single", "first"), default="single",
                    help="movies with exactly one genre (the paper) or every movie by its first genre")
    feats = p.add_argument_group("features")
    feats.add_argument("--k", metavar="N", type=int_at_least(2), default=2,
                       help="k-gram length of the ordered settings")
    feats.add_argument("--hops", metavar="N", type=int_at_least(1), default=1, help="depth of the strings")
    feats.add_argument("--authors", action="store_true",
                       help="the KONG authors' features: --own-label no --blended yes --normalize yes")
    feats.add_argument("--own-label", type=yes_no, default=None, metavar="yes|no",
                       help="each node's own label in its string (default: yes; no with --authors)")
    feats.add_argument("--blended", type=yes_no, default=True, metavar="yes|no",
                       help="count the 1-grams too, so the ordered settings hold the k = 1 counts")
    feats.add_argument("--normalize", type=yes_no, default=True, metavar="yes|no",
                       help="L2-normalize each graph vector (then the C grid reaches 1e6)")
    feats.add_argument("--edge-labels", type=yes_no, default=True, metavar="yes|no",
                       help="edge labels (edge_attr, a stream's edge types) in the strings; with them a "
                            "k = 2 gram pairs a neighbor with the next edge's label: neighbor-to-neighbor "
                            "order needs --k 3 or --edge-labels no, unless the edge labels name the "
                            "neighbors' labels")
    ev = p.add_argument_group("protocol")
    ev.add_argument("--splits", metavar="N", type=int_at_least(2, MAX_SPLITS), default=20,
                    help="stratified random splits (repeats)")
    ev.add_argument("--shuffles", metavar="N", type=int_at_least(1, MAX_SHUFFLES), default=3,
                    help="seeds per shuffled setting (scores averaged per split)")
    ev.add_argument("--test-size", metavar="X", type=number_in(0.0, 1.0), default=0.2,
                    help="test share of each split")
    ev.add_argument("--C", dest="C", type=list_of(number_in(0.0)), default=None, metavar="C[,C...]",
                    help="LinearSVC C grid (default: 0.1 ... 1e6 with --normalize yes, 1e-3 ... 1e3 "
                         "without)")
    ev.add_argument("--inner-folds", metavar="N", type=int_at_least(2), default=3,
                    help="inner folds choosing C")
    ev.add_argument("--no-reverse", action="store_true", help="skip the time-reversal setting")
    ev.add_argument("--seed", metavar="N", type=int_at_least(0, MAX_SEED), default=0,
                    help="seed of the splits, the shuffles and the generated or balanced data")
    ev.add_argument("--device", metavar="DEV", default=None,
                    help="where the SVM problems are solved, e.g. cuda (the features are computed on the "
                         "CPU) (default: the CPU)")
    ev.add_argument("--threads", metavar="N", type=int_at_least(1, MAX_TORCH_THREADS), default=default_jobs(),
                    help="PyTorch threads for the features (default: the cores this process is given, "
                         "at most 8)")
    out = p.add_argument_group("output")
    out.add_argument("--out", type=not_a_file, default=None, metavar="DIR",
                     help="folder for order_test.md, order_test.json (plain JSON) and order_test.png "
                          "(made if missing) (default: none: print the report only)")
    out.add_argument("--no-plot", action="store_true",
                     help="no order_test.png (an earlier one in --out is removed)")
    out.add_argument("--json", action="store_true", help="print the result as one JSON object instead")
    add_quiet(out)
    p.set_defaults(func=run)


def _source(args: argparse.Namespace) -> str:
    """Which input was given (exactly one), checked before any work."""
    given = [name for name, value in (("--dataset", args.dataset), ("--ml-dir", args.ml_dir),
                                      ("--streamspot", args.streamspot), ("--provenance", args.provenance))
             if value is not None]
    if len(given) > 1:
        raise CommandError(f"give one input, not {' and '.join(given)}")
    if args.data_root is not None and args.dataset is None:
        raise CommandError("--data-root needs --dataset NAME (the folder DIR/NAME/raw to read)")
    if args.download and args.dataset is None:
        raise CommandError("--download needs --dataset NAME (a TU data set to fetch)")
    if args.cache_dir is not None and given and given[0] != "--dataset":
        raise CommandError(f"--cache-dir is where TU data sets are processed; it does not apply to "
                           f"{given[0]}")
    if (args.streamspot is None) != (args.labels is None):
        raise CommandError("--streamspot FILE and --labels FILE go together")
    source = given[0] if given else "--dataset"
    ml_flags = [f for f, v, d in (("--ties", args.ties, "row"), ("--layout", args.layout, "ego"),
                                  ("--genre", args.genre, "single")) if v != d]
    if ml_flags and source != "--ml-dir":
        raise CommandError(f"{', '.join(ml_flags)} only apply to --ml-dir")
    if args.num_graphs != 200 and source != "--provenance":
        raise CommandError("--num-graphs only applies to --provenance")
    return source


def _options(args: argparse.Namespace) -> Dict[str, Any]:
    """The KONG options every setting shares."""
    own = args.own_label if args.own_label is not None else not args.authors
    if args.authors and (own or not args.blended or not args.normalize):
        raise CommandError("--authors means --own-label no --blended yes --normalize yes; drop the others")
    options = {"own_label": own, "blended": args.blended, "normalize": args.normalize}
    return options if args.edge_labels else {**options, "edge_labels": False}


def _check_outputs(args: argparse.Namespace) -> None:
    if args.out is None:
        if args.no_plot:
            raise CommandError("--no-plot needs --out DIR (without it nothing is drawn)")
        return
    check_output_dir(args.out, "--out")
    for name in OUTPUTS:
        check_output_file(os.path.join(args.out, name), "--out")
    inputs = [(flag, path) for flag, path in (("--streamspot", args.streamspot), ("--labels", args.labels))
              if path is not None]  # (an output written over an input loses it)
    check_distinct_files(inputs + [("--out", os.path.join(args.out, name)) for name in OUTPUTS])


def load(args: argparse.Namespace, source: str, tmp: str) -> Tuple[Any, Dict[str, Any], Any]:
    """The graphs, a description of them, and the labels of a StreamSpot file (else None)."""
    if source == "--provenance":
        from ..datasets import ProvenanceGraphs

        ds = ProvenanceGraphs(args.num_graphs, strength=args.provenance, seed=args.seed)
        return ds, {"data": f"provenance benchmark, strength {args.provenance:g}, {args.num_graphs} graphs, "
                            f"generator seed {args.seed}"}, None
    if source == "--ml-dir":
        from ..datasets import MovieLensOrdered

        ds = MovieLensOrdered(os.path.join(tmp, "ml"), ml_dir=args.ml_dir, genre=args.genre, balance=True,
                              seed=args.seed, ties=args.ties, layout=args.layout)
        return ds, {"data": f"{ds!r} (balanced by gender, seed {args.seed})"}, None
    if source == "--streamspot":
        return args.streamspot, {"data": f"StreamSpot file {os.path.basename(args.streamspot)}"}, args.labels
    from ..datasets.tu import load_tu

    name = args.dataset or "MUTAG"
    return (load_tu(name, args.data_root, cache=args.cache_dir, download=args.download),
            {"data": f"TU data set {name}"}, None)


def command_line(args: argparse.Namespace, source: str) -> str:
    """The command line that reproduces a run (paths shortened)."""
    parts = ["kong-pyg order-test"]
    if source == "--provenance":
        parts.append(f"--provenance {args.provenance:g} --num-graphs {args.num_graphs}")
    elif source == "--ml-dir":
        parts.append(f"--ml-dir PATH/ml-100k --ties {args.ties} --layout {args.layout} --genre {args.genre}")
    elif source == "--streamspot":
        parts.append("--streamspot FILE --labels FILE")
    elif args.dataset:
        parts.append(f"--dataset {args.dataset}" + (" --data-root DIR" if args.data_root else "")
                     + (" --download" if args.download else ""))
    opts = _options(args)
    parts.append(f"--k {args.k} --hops {args.hops}" + (" --authors" if args.authors else
                 f" --own-label {'yes' if opts['own_label'] else 'no'} --blended "
                 f"{'yes' if opts['blended'] else 'no'} --normalize {'yes' if opts['normalize'] else 'no'}")
                 + ("" if args.edge_labels else " --edge-labels no"))
    parts.append(f"--splits {args.splits} --shuffles {args.shuffles} --test-size {args.test_size:g} "
                 f"--inner-folds {args.inner_folds} --seed {args.seed}")
    if args.C is not None:
        parts.append("--C " + show_default(list(args.C)))
    if args.no_reverse:
        parts.append("--no-reverse")
    if args.out is not None:
        parts.append(f"--out {shown_path(args.out)}")
    return " ".join(parts)


def run(args: argparse.Namespace) -> int:
    """Run ``kong-pyg order-test``."""
    source = _source(args)
    options = _options(args)
    _check_outputs(args)
    check_usable_device("--device", args.device)  # before any data is read
    import torch_geometric  # noqa: F401  (imported before warnings are recorded: its own are not ours)

    from ..ordertest import order_test

    say = (lambda text: None) if args.quiet else (lambda text: print(text, file=sys.stderr, flush=True))
    with torch_threads(args.threads, cap=False), tempfile.TemporaryDirectory() as tmp, \
            warnings.catch_warnings(record=True) as caught:  # (the thread count given back after)
        warnings.simplefilter("always")
        say("kong-pyg order-test: loading the data")
        graphs, about, labels = load(args, source, tmp)
        say(f"kong-pyg order-test: features and {args.splits} splits per setting")
        res = order_test(graphs, k=args.k, hops=args.hops, shuffles=args.shuffles, splits=args.splits,
                         test_size=args.test_size, C=args.C, inner_folds=args.inner_folds,
                         reverse=not args.no_reverse, seed=args.seed, labels=labels, device=args.device,
                         threads=args.threads, **options)
    res.info["data"] = about["data"]
    res.info["command"] = command_line(args, source)
    notes = {str(w.message) for w in caught} - set(res.info["warnings"])
    res.info["warnings"] = list(res.info["warnings"]) + sorted(notes)
    written: List[str] = []
    if args.out is not None:
        written = _write(res, args, about)
    if args.json:  # (the result, and the report's one-paragraph answer)
        print(json.dumps(res.to_dict(), allow_nan=False))
    else:
        print(res.to_markdown(f"Order test: {about['data']}"))
        if written:
            print(f"wrote {', '.join(written)}")
    return 0


def _write(res: Any, args: argparse.Namespace, about: Dict[str, Any]) -> List[str]:
    """Write the report, its JSON and (with matplotlib) the figure into --out; returns the files written."""
    os.makedirs(args.out, exist_ok=True)
    title = printable(f"Order test: {about['data']}")  # (also the figure's: no lone surrogates)
    figure: Optional[str] = None
    if not args.no_plot:
        try:
            res.plot(os.path.join(args.out, "order_test.png"), title=title)
            figure = "order_test.png"
        except ImportError as err:
            no_plot(err)
    text = ["# " + title, "", "Produced by:", "", "```bash", res.info["command"], "```", "",
            res.to_markdown("Result")]
    if figure:
        text += ["", f"![order test]({figure})", ""]
    else:
        drop_stale(os.path.join(args.out, "order_test.png"))
    report = json.dumps(res.to_dict(), indent=1, allow_nan=False)
    files = [os.path.join(args.out, name) for name in ("order_test.md", "order_test.json")]
    atomic_texts(list(zip(files, ["\n".join(text), report])))
    return files + ([os.path.join(args.out, figure)] if figure else [])


__all__ = ["register", "run", "load", "command_line", "OUTPUTS"]
