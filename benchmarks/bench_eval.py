"""Evaluation speed: the README main job old-style vs new, and the paper grid per data set (issue 11).

Two parts (issue 11):

* ``main``: the README main job, ``kong-pyg classify`` on bundled MUTAG (the
  paper's 16-setting KONG grid, C in {0.1, 1, 10}, 10 x 10-fold CV, both
  protocols, nested with 5 inner folds), run twice:

  - ``old``: the earlier harness, the explicit map of every setting
    (``KongVectorizer``) and one scikit-learn ``LinearSVC(dual=False,
    tol=1e-2)`` fit per (training set, C) on the projected features, as
    ``cross_validate`` did before (28,800 fits);
  - ``new``: ``kong_pyg.classify`` as it is now (exact Gram route where it
    is cheaper, the batched exact solver);

  feature and fit wall/CPU seconds of each, and both accuracies.
* ``grid``: ``kong_pyg.classify`` with the paper grid, both protocols,
  R repeats, on each data set of ``--datasets`` found under ``--data-root``
  (missing ones are skipped and listed), with ``--jobs`` processes over the
  settings.

Results go to ``--out`` (markdown) and ``--json``. Timings on a shared
machine are noisy: CPU seconds are reported next to wall seconds.

    python benchmarks/bench_eval.py --parts main \\
        --out docs/results/bench_eval.md --json docs/results/bench_eval.json
    python benchmarks/bench_eval.py --parts grid --datasets MUTAG PTC_MR ENZYMES PROTEINS NCI1 --jobs 16
"""
import argparse
import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Dict, List

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_cli import DataError, folder, int_at_least, items, make_parser, out_file, run  # noqa: E402
from bench_paths import TU_ROOT as DEFAULT_ROOT  # noqa: E402

DATASETS = ["MUTAG", "PTC_MR", "ENZYMES", "PROTEINS", "NCI1"]


def _clock() -> Dict[str, float]:
    t = os.times()
    return {"wall": time.perf_counter(), "cpu": t.user + t.system + t.children_user + t.children_system}


def _since(start: Dict[str, float]) -> Dict[str, float]:
    now = _clock()
    return {"wall_s": round(now["wall"] - start["wall"], 2), "cpu_s": round(now["cpu"] - start["cpu"], 2)}


def old_style(graphs: Any, repeats: int) -> Dict[str, Any]:
    """The earlier harness: explicit maps, one LinearSVC(dual=False, tol=1e-2) per (training set, C)."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import LinearSVC

    from kong_pyg import KongVectorizer
    from kong_pyg.evaluation.classify import graph_targets
    from kong_pyg.evaluation.cv import CVResult, make_splits, plan_jobs
    from kong_pyg.evaluation.features import design_matrix
    from kong_pyg.evaluation.grid import expand_grid, paper_grid

    y = graph_targets(graphs)
    settings = expand_grid("kong", paper_grid("kong"))
    splits = make_splits(y, repeats, 10, 5, 0)
    jobs = plan_jobs(splits, y.size)
    Cs = [0.1, 1.0, 10.0]
    outer = np.zeros((len(settings), 3, repeats, 10))
    inner = np.zeros((len(settings), 3, repeats, 10, 5))
    feat = {"wall_s": 0.0, "cpu_s": 0.0}
    fit = {"wall_s": 0.0, "cpu_s": 0.0}
    for s, setting in enumerate(settings):
        t0 = _clock()
        X = KongVectorizer(config=setting.kong_config(seed=0)).fit_transform(graphs)
        d = _since(t0)
        t1 = _clock()
        M = design_matrix(X)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            for j, (r, f, i) in enumerate(jobs.keys):
                train, test = np.flatnonzero(jobs.train[j]), jobs.test[j]
                for c, C in enumerate(Cs):
                    clf = LinearSVC(C=C, dual=False, max_iter=1000, tol=1e-2, random_state=0)
                    acc = float(np.mean(clf.fit(M[train], y[train]).predict(M[test]) == y[test]))
                    if i is None:
                        outer[s, c, r, f] = acc
                    else:
                        inner[s, c, r, f, i] = acc
        e = _since(t1)
        for k in feat:
            feat[k] += d[k]
            fit[k] += e[k]
        print(f"  old {setting.name}: features {d['wall_s']:.2f} s, fits {e['wall_s']:.2f} s", flush=True)
    cv = CVResult(settings, Cs, outer, inner, [0.0] * len(settings), fit["wall_s"], 0, 0)
    return {"features": feat, "fits": fit, "fit_count": len(jobs.keys) * 3 * len(settings),
            "paper": cv.protocol("paper").accuracy_mean, "nested": cv.protocol("nested").accuracy_mean}


def new_style(graphs: Any, repeats: int, jobs: int, quiet: bool) -> Dict[str, Any]:
    from kong_pyg.evaluation.classify import classify
    from kong_pyg.evaluation.grid import paper_grid

    t0 = _clock()
    res = classify(graphs, grid=paper_grid("kong"), protocol="both", repeats=repeats, n_jobs=jobs,
                   progress=not quiet)
    total = _since(t0)
    cv = res.cv
    return {"total": total, "features_s": round(float(sum(cv.feature_seconds)), 2),
            "fits_s": round(float(sum(cv.fit_seconds)), 2), "fit_count": cv.fits, "stuck": cv.stuck,
            "paper": res.results["paper"].accuracy_mean, "nested": res.results["nested"].accuracy_mean,
            "paper_setting": res.results["paper"].best_setting,
            "per_setting": [{"setting": r["setting"], "feature_s": round(r["feature_seconds"], 3),
                             "fit_s": round(r["fit_seconds"] or 0.0, 3), "fit_on": r["fit_on"]}
                            for r in cv.grid_table()]}


def part_main(args: argparse.Namespace) -> Dict[str, Any]:
    from kong_pyg.datasets import load_tu

    graphs = load_tu("MUTAG")
    out: Dict[str, Any] = {}
    print("main job, new (kong_pyg.classify):", flush=True)
    out["new"] = new_style(graphs, args.repeats, args.jobs, args.quiet)
    print(f"  new: {out['new']['total']['wall_s']:.1f} s wall", flush=True)
    if not args.skip_old:
        print("main job, old-style (explicit maps + one LinearSVC per fit):", flush=True)
        t0 = _clock()
        out["old"] = old_style(graphs, args.repeats)
        out["old"]["total"] = _since(t0)
    return out


def part_routes(args: argparse.Namespace) -> Dict[str, Any]:
    """Exact p >= 2 features: the explicit map vs the Gram route, and which one kong_route picks."""
    import torch

    from kong_pyg import KongVectorizer, gram_matrix
    from kong_pyg.datasets import load_tu
    from kong_pyg.evaluation.features import kong_route
    from kong_pyg.evaluation.grid import expand_grid, paper_grid

    torch.set_num_threads(1)
    out: Dict[str, Any] = {}
    for name in args.route_datasets:
        if name != "MUTAG" and not (Path(args.data_root) / name / "raw").is_dir():
            out[name] = None  # (listed in the report as not run)
            print(f"{name}: not under {args.data_root}, skipped", flush=True)
            continue
        graphs = load_tu(name, None if name == "MUTAG" else args.data_root)
        rows = []
        for setting in expand_grid("kong", paper_grid("kong")):
            cfg = setting.kong_config()
            if cfg.degree < 2:
                continue
            t = time.process_time()
            KongVectorizer(config=cfg).fit_transform(graphs)
            explicit = time.process_time() - t
            t = time.process_time()
            gram_matrix(graphs, config=cfg)
            gram = time.process_time() - t
            picked, est = kong_route(cfg, graphs)
            rows.append({"setting": setting.name, "explicit_cpu_s": round(explicit, 3),
                         "gram_cpu_s": round(gram, 3), "picked": picked,
                         "explicit_s_est": round(est["explicit_s_est"], 3),
                         "gram_s_est": round(est["gram_s_est"], 3)})
            print(f"  {name} {setting.name}: explicit {explicit:.2f} s, gram {gram:.2f} s, picked {picked}",
                  flush=True)
        out[name] = rows
    return out


def part_grid(args: argparse.Namespace) -> Dict[str, Any]:
    from kong_pyg.datasets import load_tu

    out: Dict[str, Any] = {"runs": {}, "skipped": []}
    for name in args.datasets:
        if name != "MUTAG" and not (Path(args.data_root) / name / "raw").is_dir():
            out["skipped"].append(name)
            print(f"{name}: not under {args.data_root}, skipped", flush=True)
            continue
        graphs = load_tu(name, None if name == "MUTAG" else args.data_root)
        print(f"{name}: paper grid, both protocols, R = {args.repeats}, {args.jobs} process(es)", flush=True)
        out["runs"][name] = new_style(graphs, args.repeats, args.jobs, args.quiet)
        out["runs"][name]["num_graphs"] = len(graphs)
        print(f"  {name}: {out['runs'][name]['total']['wall_s']:.1f} s wall", flush=True)
    return out


def markdown(result: Dict[str, Any]) -> str:
    lines = ["# Evaluation speed (issue 11)", "",
             f"Machine: {result['machine']}; {result['note']}", ""]
    main = result.get("main")
    if main:
        new = main["new"]
        lines += ["## README main job: `kong-pyg classify` on bundled MUTAG", "",
                  f"Paper grid (16 settings), C in {{0.1, 1, 10}}, R = {result['repeats']} x 10-fold, both "
                  f"protocols (nested: 5 inner folds); {result['jobs']} process(es).", "",
                  "| run | total wall s | total CPU s | features s | fits s | fits | paper acc % "
                  "| nested acc % |",
                  "|---|---|---|---|---|---|---|---|"]
        if "old" in main:
            old = main["old"]
            lines.append(f"| old-style (explicit maps, LinearSVC tol 1e-2 per fit) | "
                         f"{old['total']['wall_s']:.1f} | {old['total']['cpu_s']:.1f} | "
                         f"{old['features']['wall_s']:.1f} | "
                         f"{old['fits']['wall_s']:.1f} | {old['fit_count']} | {100 * old['paper']:.2f} | "
                         f"{100 * old['nested']:.2f} |")
        lines.append(f"| new (`kong_pyg.classify`) | {new['total']['wall_s']:.1f} | "
                     f"{new['total']['cpu_s']:.1f} | {new['features_s']:.1f} | {new['fits_s']:.1f} | "
                     f"{new['fit_count']} | "
                     f"{100 * new['paper']:.2f} | {100 * new['nested']:.2f} |")
        lines += ["", "Per setting (new):", "", "| setting | feature s | fit s | fit on |",
                  "|---|---|---|---|"]
        for row in new["per_setting"]:
            fit_on = row["fit_on"] or {}
            lines.append(f"| {row['setting']} | {row['feature_s']:.2f} | {row['fit_s']:.2f} | "
                         f"{fit_on.get('features', '')} -> {fit_on.get('basis_columns', '')} columns |")
        lines.append("")
    routes = result.get("routes")
    if routes:
        lines += ["## Exact p >= 2 features: explicit map or Gram route", "",
                  "CPU seconds, one thread; `picked` is what `kong_route` chooses (cost model).", "",
                  "| data set | setting | explicit map s | Gram route s | picked | faster |",
                  "|---|---|---|---|---|---|"]
        for name, rows in routes.items():
            if rows is None:
                lines.append(f"| {name} | not run: no data under the data root | | | | |")
            for r in rows or []:
                faster = "explicit" if r["explicit_cpu_s"] < r["gram_cpu_s"] else "gram"
                lines.append(f"| {name} | {r['setting']} | {r['explicit_cpu_s']:.2f} | "
                             f"{r['gram_cpu_s']:.2f} | {r['picked']} | {faster} |")
        lines.append("")
    grid = result.get("grid")
    if grid:
        lines += ["## Paper grid per data set", "",
                  f"R = {result['repeats']}, both protocols, {result['jobs']} process(es) over settings.", "",
                  "| data set | graphs | wall s | CPU s | features s | fits s | paper acc % | nested acc % |",
                  "|---|---|---|---|---|---|---|---|"]
        for name, r in grid["runs"].items():
            lines.append(f"| {name} | {r['num_graphs']} | {r['total']['wall_s']:.1f} | "
                         f"{r['total']['cpu_s']:.1f} | {r['features_s']:.1f} | {r['fits_s']:.1f} | "
                         f"{100 * r['paper']:.2f} | "
                         f"{100 * r['nested']:.2f} |")
        if grid["skipped"]:
            lines += ["", f"Not run (no data under the data root): {', '.join(grid['skipped'])}."]
        lines.append("")
    return "\n".join(lines)


def main(argv: List[str] = None) -> int:
    ap = make_parser(__doc__.splitlines()[0])
    ap.add_argument("--parts", nargs="+", action=items(choices=["main", "routes", "grid"]),
                    default=["main", "routes", "grid"],
                    help="main: the README's main job against the old-style harness; routes: the two exact "
                         "routes of the p >= 2 settings; grid: the paper grid per data set")
    ap.add_argument("--route-datasets", nargs="+", action=items(),
                    default=["MUTAG", "PTC_MR"], help="data sets of 'routes'")
    ap.add_argument("--data-root", type=folder, default=DEFAULT_ROOT, metavar="DIR",
                    help="TU data sets in PyG's raw layout (DIR/NAME/raw); MUTAG is bundled")
    ap.add_argument("--datasets", nargs="+", action=items(),
                    default=DATASETS, help="data sets of 'main' (MUTAG) and 'grid'")
    ap.add_argument("--repeats", type=int_at_least(1), default=10, metavar="N", help="CV repeats R")
    ap.add_argument("--jobs", type=int_at_least(1), default=1, metavar="N",
                    help="processes over the settings (a pool)")
    ap.add_argument("--skip-old", action="store_true", help="main: only the new run")
    ap.add_argument("--quiet", action="store_true", help="no progress bars")
    ap.add_argument("--note", default="a shared machine, other work running (wall times are noisy)",
                    help="a line about the machine, written into the report")
    ap.add_argument("--out", type=out_file, default=None, help="write the Markdown report here")
    ap.add_argument("--json", type=out_file, default=None, help="write the results as JSON here")
    args = ap.parse_args(argv)
    for flag, part, names in (("--datasets", "grid", args.datasets), ("--route-datasets", "routes",
                                                                     args.route_datasets)):
        if part in args.parts and not any(n == "MUTAG" or (Path(args.data_root) / n / "raw").is_dir()
                                          for n in names):  # (some missing: skipped and listed)
            raise DataError(f"--data-root '{args.data_root}' holds none of {flag} {','.join(names)} (looked "
                            f"for {Path(args.data_root) / 'NAME' / 'raw'}; MUTAG is bundled)")
    result: Dict[str, Any] = {"machine": f"{platform.machine()}, {os.cpu_count()} CPUs", "note": args.note,
                              "repeats": args.repeats, "jobs": args.jobs}
    if "main" in args.parts:
        result["main"] = part_main(args)
    if "routes" in args.parts:
        result["routes"] = part_routes(args)
    if "grid" in args.parts:
        result["grid"] = part_grid(args)
    text = markdown(result)
    print(text)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
