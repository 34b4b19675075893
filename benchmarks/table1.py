"""The KONG paper's Table 1 in our harness, and the extended grid against WL and SP.

Two sections, both written to docs/results/table1.md (and a summary to
docs/results/table1.json):

* **paper grid** (``--section paper``): KONG with the paper's grid, WL, SP and
  k-walk features on MUTAG, PTC_MR, ENZYMES, PROTEINS and NCI1, under the
  paper's protocol and the nested one. Every (data set, run) is one JSON under
  docs/results/table1/, skipped when it exists (--force reruns it).
* **extended grid** (``--section extended``, issue 16): KONG with
  ``grid="extended"`` next to WL (h 1..3, raw and L2) and SP (raw and L2), all
  in the same harness, both protocols. The work is split into one unit per
  (data set, run, setting), run by ``--jobs`` processes; each finished unit is
  added to docs/results/table1/extended/NAME.json (plain JSON, one file per
  data set) at once, so a stopped run resumes where it stopped.

    python benchmarks/table1.py --section extended --jobs 16        # the full measurement
    python benchmarks/table1.py --section extended --datasets MUTAG,PTC_MR --jobs 2
    python benchmarks/table1.py --section extended --datasets NCI1 --repeats 1 --inner-folds 3
    python benchmarks/table1.py --section paper --datasets NCI1 --methods kong --device cuda
    python benchmarks/table1.py --section extended --datasets PROTEINS --jobs 4 --device cuda
    python benchmarks/table1.py --render                             # only rewrite the markdown

Data: TU raw folders under --data-root (default ../shared/data/tu next to the
repository), only read; absent data sets are skipped with a note.
"""
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import table1_ext  # noqa: E402
from bench_cli import DataError, folder, int_at_least, list_of, make_parser, names, out_file, overrides, run  # noqa: E402
from bench_paths import TU_ROOT  # noqa: E402

from kong_pyg import classify, paper_grid, tune_allocator  # noqa: E402
from kong_pyg.config import check_usable_device  # noqa: E402
from kong_pyg.datasets import load_tu  # noqa: E402

DATASETS = ["MUTAG", "PTC_MR", "ENZYMES", "PROTEINS", "NCI1"]

#: The paper's Table 1; PTC is PTC_MR.
PAPER = {
    "MUTAG": {"kw": 83.7, "sp": 84.7, "wl": 84.9, "kong": (87.8, "poly-rlb-1")},
    "ENZYMES": {"kw": 34.8, "sp": 39.6, "wl": 52.9, "kong": (50.1, "cosine-rlb-2")},
    "PTC_MR": {"kw": 57.7, "sp": 59.1, "wl": 62.4, "kong": (63.7, "cosine-2")},
    "PROTEINS": {"kw": 70.9, "sp": 72.7, "wl": 71.4, "kong": (73.0, "cosine-rlb-1")},
    "NCI1": {"kw": 74.1, "sp": 73.3, "wl": 81.4, "kong": (76.4, "cosine-rlb-1")},
}

#: Runs: name -> (method, grid, description).
RUNS = {
    "kong": ("kong", paper_grid("kong"),
             "KONG, the paper's grid: h=2, k=1, BFS, exact map, poly/cosine p=1..4, +-rlb (16 settings)"),
    "kong-gnorm": ("kong", {**paper_grid("kong"), "normalize": [True]},
                   "KONG variant: the same grid with graph-level normalization"),
    "kong-noedge": ("kong", {**paper_grid("kong"), "edge_labels": [False]},
                    "KONG, the paper's grid, edge labels ignored (as the baselines do)"),
    "kong-mean": ("kong-mean", None,
                  "KONG, the mean of the normalised kernels of the paper's grid and of the extended grid "
                  "(two settings; kong_pyg.evaluation.depths.grid_mean_features)"),
    "wl": ("wl", None, "WL subtree features from PyG WLConv, h in {1, 2}"),
    "wl-grakel": ("wl-grakel", None, "GraKeL WeisfeilerLehman (VertexHistogram), h in {1, 2}"),
    "sp": ("sp", None, "labelled shortest-path counts (GraKeL's ShortestPath kernel; "
                       "older runs used GraKeL)"),
    "kw": ("kw", None, "k-walk label-sequence counts (torch sparse), k in {5, 6}"),
}
PAPER_COLUMN = {"kong": "kong", "kong-gnorm": "kong", "kong-noedge": "kong", "wl": "wl", "wl-grakel": "wl",
                "sp": "sp", "kw": "kw"}
ORDER = ["kw", "sp", "wl", "wl-grakel", "kong", "kong-gnorm", "kong-noedge", "kong-mean"]
#: Data sets with edge labels (elsewhere kong-noedge is kong).
EDGE_LABELLED = ("MUTAG", "PTC_MR")


def cv_setup(dataset, args):
    """(repeats, nested repeats, inner folds) of a data set: the defaults or its per-data-set overrides."""
    repeats = args.repeats_for.get(dataset, args.repeats)
    nested = args.nested_repeats_for.get(dataset, repeats)
    inner = args.inner_folds_for.get(dataset, args.inner_folds)
    return repeats, nested, inner


def device_name(device):
    """The SVM solver's device in words: "cpu", or the GPU's name."""
    if device is None or str(device) == "cpu":
        return "cpu"
    import torch

    dev = torch.device(device)
    return torch.cuda.get_device_name(dev) if dev.type == "cuda" else str(dev)


def stored(dataset, name, args, out_dir):
    """Whether the run's result is stored, made with these options (another one: a one-line error)."""
    path = out_dir / f"{dataset}_{name}.json"
    if not path.exists() or args.force:
        return False
    repeats, nested, inner = cv_setup(dataset, args)
    wanted = {"repeats": repeats, "nested_repeats": nested, "inner_folds": inner, "seed": args.seed}
    stored_result = table1_ext.read_result(path)
    if not isinstance(stored_result, dict):
        table1_ext.refuse(f"{path} is not a result file (not a JSON object): pass --force to redo it")
    made = {key: stored_result.get(key) for key in wanted}
    if made != wanted:  # (its numbers would stand in the table for a run with other options)
        table1_ext.refuse(f"{path} was made with {made}, not {wanted}: pass --force to redo it (or the same "
                          "options, or another --out)")
    return True


def run_one(dataset, name, args, out_dir):
    path = out_dir / f"{dataset}_{name}.json"
    repeats, nested, inner = cv_setup(dataset, args)
    if stored(dataset, name, args, out_dir):
        print(f"skip {path.name} (exists, the same options)", flush=True)
        return
    method, grid, _ = RUNS[name]
    graphs = load_tu(dataset, table1_ext.data_root_of(dataset, args.data_root))
    print(f"== {dataset} {name}: R={repeats}, nested R={nested}, inner={inner}", flush=True)
    t0 = time.perf_counter()
    res = classify(graphs, method=method, grid=grid, protocol="both", repeats=repeats, folds=10,
                   inner_folds=inner, nested_repeats=nested, seed=args.seed, n_jobs=args.threads,
                   progress=not args.quiet, device=args.device)
    wall = time.perf_counter() - t0
    payload = res.to_dict()
    payload.update({
        "run": name, "wall_seconds": wall, "description": RUNS[name][2],
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "platform": platform.platform(), "svm_device": device_name(args.device)},
    })
    table1_ext.write_result(path, payload, indent=1)
    p, n = payload["protocols"]["paper"], payload["protocols"]["nested"]
    print(f"   paper {100 * p['accuracy_mean']:.2f} +- {100 * p['accuracy_std']:.2f} ({p['best_setting']}), "
          f"nested {100 * n['accuracy_mean']:.2f} +- {100 * n['accuracy_std']:.2f}, {wall:.0f} s", flush=True)


def pct(res, protocol):
    r = res["protocols"][protocol]
    return f"{100 * r['accuracy_mean']:.1f} ± {100 * r['accuracy_std']:.1f}"


def cell(results, d, name, protocol):
    res = results.get((d, name))
    if res is None:
        return "= KONG (no edge labels)" if name == "kong-noedge" and d not in EDGE_LABELLED else "not run"
    reps = res["repeats"] if protocol == "paper" else res["nested_repeats"]
    mark = f" {EARLIER}" if earlier(res) else ""
    if reps == 1:  # no spread over repeats to show
        return f"{100 * res['protocols'][protocol]['accuracy_mean']:.1f} (R=1){mark}"
    out = pct(res, protocol)
    return (out if reps == 10 else f"{out} (R={reps})") + mark


#: The mark of a run made with the earlier harness (LinearSVC per fit, tol 1e-2).
EARLIER = "†"


def earlier(res):
    """Whether a run predates the exact solver (its settings record no 'fit_on')."""
    return not res["settings"] or "fit_on" not in res["settings"][0]


def render(out_dir, md_path, datasets):
    results = {}
    for f in sorted(out_dir.glob("*.json")):
        res = table1_ext.read_result(f)
        results[(res["dataset"], res["run"])] = res
    head = ["| | " + " | ".join(datasets) + " |", "|---|" + "---|" * len(datasets)]
    gpu_runs = {}
    for (d, n), res in sorted(results.items()):
        if res.get("machine", {}).get("svm_device", "cpu") != "cpu":
            gpu_runs.setdefault(d, []).append(n)
    on_gpu = ("; these runs were fit on a GPU, every design exact, and their wall times are that machine's: "
              + "; ".join(f"{d} {', '.join(ns)}" for d, ns in gpu_runs.items())) if gpu_runs else ""
    marked = (f"runs marked {EARLIER} come from the earlier harness (one scikit-learn LinearSVC per fit, "
              "primal solver, tol 1e-2 = LIBLINEAR's default for it) and were not re-run. "
              if any(earlier(res) for res in results.values()) else "")
    lines = [
        "# Table 1: graph classification accuracy (%), KONG and baselines",
        "",
        "Written by `benchmarks/table1.py` from the JSON runs in the `table1/` folder beside this file: "
        "every number below comes from those runs (commands, times and caveats at the end).",
        "",
        "Set-up: scikit-learn's LinearSVC problem (squared hinge, L2, the intercept regularized as "
        "LIBLINEAR does), solved to its exact optimum for all folds and C at once "
        "(`kong_pyg.evaluation.svm`; on the CPU, LIBLINEAR per fit only for wide designs of more than 2,000 "
        "graphs, only for sparse features with few nonzeros per row where it converges on the first "
        f"training set, its capped fits solved again exactly{on_gpu}); {marked}C in "
        "{0.1, 1, 10}, stratified 10-fold CV repeated R = 10 times unless marked (repeat r splits with "
        "seed s + r, s the run's seed: 0 unless its JSON says otherwise). '± x' is the standard deviation "
        "over the R repeat means. **Paper protocol**: the "
        "(setting, C) with the best mean CV accuracy is reported with that accuracy, as the paper did "
        "(the test folds take part in the choice: optimistic). **Nested protocol**: in every outer fold "
        "the (setting, C) is chosen by an inner CV (its folds: the times table below) on the outer "
        "training part only: the honest number. Both protocols read the same outer fits.",
        "",
        "## Paper protocol, next to the paper's numbers",
        "",
        *head,
    ]
    paper_label = {"kw": "KW", "sp": "SP", "wl": "WL", "kong": "KONG"}
    for name in ORDER:
        if name in paper_label:
            cells = []
            for d in datasets:
                v = PAPER[d][PAPER_COLUMN[name]]
                cells.append(f"{v[0]} ({v[1]})" if isinstance(v, tuple) else f"{v}")
            lines.append(f"| *{paper_label[name]}, paper* | " + " | ".join(cells) + " |")
        lines.append(f"| {label_of(name)} | " + " | ".join(cell(results, d, name, "paper") for d in datasets)
                     + " |")
    lines += ["", "## Nested protocol (honest), same runs", "", *head]
    for name in ORDER:
        lines.append(f"| {label_of(name)} | " + " | ".join(cell(results, d, name, "nested") for d in datasets)
                     + " |")
    lines += [
        "",
        "## KONG against the paper's KONG column (paper protocol)",
        "",
        "| data set | paper | ours: exact map | ours: graph-normalized variant | at or above? |",
        "|---|---|---|---|---|",
    ]
    for d in datasets:
        paper_value, paper_setting = PAPER[d]["kong"]
        row = [f"{paper_value} ({paper_setting})"]
        best = None
        for name in ("kong", "kong-gnorm"):
            res = results.get((d, name))
            if res is None:
                row.append("not run")
                continue
            acc = 100 * res["protocols"]["paper"]["accuracy_mean"]
            best = acc if best is None else max(best, acc)
            row.append(f"{cell(results, d, name, 'paper')} ({res['protocols']['paper']['best_setting']})")
        row.append("not run" if best is None else ("yes" if round(best, 1) >= paper_value else "**no**"))
        lines.append(f"| {d} | " + " | ".join(row) + " |")
    lines += [
        "",
        "## Best settings, feature time and run time",
        "",
        "| data set | run | paper protocol: best setting, C | nested: most often chosen (outer folds) "
        "| feature s: all settings / best | LinearSVC fits (not converged) | R / nested R / inner folds "
        "| wall s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for d in datasets:
        for name in ORDER:
            res = results.get((d, name))
            if res is None:
                continue
            p, n = res["protocols"]["paper"], res["protocols"]["nested"]
            lines.append(
                f"| {d} | {name} | {p['best_setting']}, C={p['best_params']['C']:g} "
                f"| {table1_ext.most_chosen(n['chosen'])} "
                f"| {res['feature_seconds']:.1f} / {res['best_feature_seconds']:.2f} "
                f"| {res['fits']} ({res['fits_not_converged']}) "
                f"| {res['repeats']} / {res['nested_repeats']} / {res['inner_folds']} "
                f"| {res['wall_seconds']:.0f} |"
            )
    notes = md_path.with_name("table1_notes.md")
    if notes.exists():
        lines += ["", notes.read_text().strip()]
    summary = table1_ext.summarize(out_dir, datasets)
    lines += ["", *table1_ext.render_section(summary, datasets)]
    ext_notes = md_path.with_name("table1_ext_notes.md")
    if ext_notes.exists():
        lines += ["", ext_notes.read_text().strip()]
    md_path.write_text("\n".join(lines) + "\n")
    paper_runs = {f"{d}/{name}": {k: res[k] for k in ("protocols", "repeats", "nested_repeats", "inner_folds",
                                                     "feature_seconds", "cv_seconds", "wall_seconds")}
                  for (d, name), res in sorted(results.items())}
    md_path.with_suffix(".json").write_text(json.dumps({"paper_grid": paper_runs, "extended": summary},
                                                       indent=1, default=str))
    print(f"wrote {md_path} and {md_path.with_suffix('.json')}")


def label_of(name):
    return {"kw": "KW (k-walks, torch sparse)", "sp": "SP (labelled shortest paths)", "wl": "WL (PyG WLConv)",
            "wl-grakel": "WL (GraKeL)", "kong": "KONG", "kong-gnorm": "KONG, graph-normalized",
            "kong-noedge": "KONG, edge labels ignored",
            "kong-mean": "KONG, mean of the normalised kernels (kong-mean)"}[name]


def extended(args, datasets, out_dir):
    runs = args.ext_runs  # checked while parsing

    def cfg_of(d):
        return table1_ext.unit_config(*cv_setup(d, args), args.seed)

    table1_ext.run_extended(datasets, runs, cfg_of, out_dir, args.data_root, args.jobs, args.threads,
                            args.force, args.device)


def present(datasets, data_root):
    out = []
    for d in datasets:
        if (Path(data_root) / d / "raw").is_dir() or d == "MUTAG":
            out.append(d)
        else:
            print(f"skip {d}: no {Path(data_root) / d / 'raw'}", flush=True)
    return out


def main(argv=None):
    ap = make_parser(__doc__)
    ap.add_argument("--data-root", type=folder, default=TU_ROOT, metavar="DIR",
                    help="TU data sets in PyG's raw layout (DIR/NAME/raw); MUTAG is bundled")
    ap.add_argument("--datasets", type=list_of(str), default=",".join(DATASETS), metavar="NAME[,...]",
                    help="TU data sets to run (absent ones are skipped with a note)")
    ap.add_argument("--section", default="extended", choices=["paper", "extended", "all"],
                    help="which runs: the paper-grid section, the extended-grid section (default) or both")
    ap.add_argument("--methods", type=names(list(RUNS)), default=",".join(ORDER), metavar="RUN[,...]",
                    help=f"paper-grid runs among {', '.join(RUNS)}")
    ap.add_argument("--ext-runs", type=names(list(table1_ext.EXT_RUNS)),
                    default=",".join(table1_ext.EXT_ORDER), metavar="RUN[,...]",
                    help=f"extended runs among {', '.join(table1_ext.EXT_RUNS)}")
    ap.add_argument("--repeats", type=int_at_least(1), default=10, metavar="N", help="CV repeats R")
    ap.add_argument("--repeats-for", type=overrides(1), default={}, metavar="NAME=N[,...]",
                    help="per data set, e.g. NCI1=2 (default: none)")
    ap.add_argument("--nested-repeats-for", type=overrides(1), default={}, metavar="NAME=N[,...]",
                    help="per data set, e.g. NCI1=1 (default: none)")
    ap.add_argument("--inner-folds", type=int_at_least(2), default=5, metavar="N", help="inner CV folds")
    ap.add_argument("--inner-folds-for", type=overrides(2), default={}, metavar="NAME=N[,...]",
                    help="per data set, e.g. NCI1=3 (default: none)")
    ap.add_argument("--seed", type=int_at_least(0), default=0, metavar="N", help="the seed of the CV splits")
    ap.add_argument("--jobs", type=int_at_least(1), default=1, metavar="N",
                    help="processes (extended section: over data sets and settings)")
    ap.add_argument("--threads", type=int_at_least(1), default=1, metavar="N",
                    help="n_jobs of the harness inside each process")
    ap.add_argument("--device", default=None,
                    help="where the SVM problems are solved, e.g. cuda (both sections) (default: the CPU)")
    ap.add_argument("--force", action="store_true", help="redo existing results")
    ap.add_argument("--quiet", action="store_true", help="no progress bars")
    ap.add_argument("--render", action="store_true", help="only rewrite the markdown")
    ap.add_argument("--out", type=out_file, default=str(ROOT / "docs" / "results" / "table1.md"),
                    metavar="FILE",
                    help="the Markdown table (its JSON beside it, the per-run files in its table1/ folder)")
    args = ap.parse_args(argv)
    args.data_root = str(args.data_root)
    if not args.render:
        try:
            check_usable_device("--device", args.device)
        except (TypeError, ValueError) as err:
            ap.error(str(err))
    if not args.render and args.section in ("paper", "all") and "wl-grakel" in args.methods:
        try:
            import grakel  # noqa: F401
        except ImportError:
            if args.methods != ORDER:  # (asked for by name: say so before any work)
                ap.error("--methods wl-grakel needs GraKeL: pip install 'kong-pyg[bench]'")
            args.methods = [m for m in args.methods if m != "wl-grakel"]
            print("skip wl-grakel: GraKeL is not installed (pip install 'kong-pyg[bench]')", flush=True)
    tune_allocator()  # glibc's malloc as the kong-pyg command line sets it (workers inherit it)
    md = Path(args.out)
    out_dir = md.with_suffix("")
    if args.render and not any(out_dir.glob("*.json")) and not any((out_dir / "extended").glob("*.json")):
        raise DataError(f"--render: no stored runs under {str(out_dir)!r} (NAME_RUN.json, "
                        "extended/NAME.json), the folder named after --out without its suffix: run the "
                        "sections first, or give the --out whose folder holds them")
    out_dir.mkdir(parents=True, exist_ok=True)
    if not args.render:  # (--render reads the stored runs only: no data set is looked for)
        datasets = present(args.datasets, args.data_root)
        if args.section in ("paper", "all"):
            planned = [(d, name) for d in datasets for name in args.methods
                       if name != "kong-noedge" or d in EDGE_LABELLED]
            for d, name in planned:  # (every stored result checked before any work)
                stored(d, name, args, out_dir)
            for d in datasets:
                for name in args.methods:
                    if name == "kong-noedge" and d not in EDGE_LABELLED:
                        print(f"== {d} kong-noedge: skipped, {d} has no edge labels (the same as kong)")
                        continue
                    run_one(d, name, args, out_dir)
        if args.section in ("extended", "all"):
            extended(args, datasets, out_dir)
    render(out_dir, md, DATASETS)


if __name__ == "__main__":
    run(main)
