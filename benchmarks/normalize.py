"""Does graph-level normalization help a linear classifier? MUTAG (and others), per C.

For a few KONG settings, exact features with and without ``normalize=True``
(every graph's row scaled to unit L2 norm), scored by scikit-learn's
``LinearSVC(C=C, random_state=0)`` (its other defaults) under stratified 10-fold
cross-validation repeated ``--repeats`` times, for every C of ``--C`` (no C
is chosen: each column is one fixed C, so the effect of the scale is
visible). Writes docs/results/normalize.json and normalize.md.

    python benchmarks/normalize.py                              # bundled MUTAG (about 20 s)
    python benchmarks/normalize.py --data-root DIR --datasets MUTAG,PTC_MR   # docs/results (about 1 min)
"""
import json
import platform
import shlex
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.model_selection import StratifiedKFold, cross_val_score  # noqa: E402
from sklearn.svm import LinearSVC  # noqa: E402

from kong_pyg import KongVectorizer  # noqa: E402
from kong_pyg.datasets import load_tu  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cli import DataError, folder, int_at_least, list_of, make_parser, number_in, out_dir, run  # noqa: E402

#: name -> KONG options (exact map, h = 2).
SETTINGS = {
    "poly-1 (k=1)": dict(k=1, hops=2),
    "poly-rlb-1 (k=1)": dict(k=1, hops=2, relabel=1),
    "cosine-1 (k=1)": dict(k=1, hops=2, kernel="cosine"),
    "poly-1 (k=2)": dict(k=2, hops=2),
}


def scores(X, y, C, repeats, folds):
    """Mean and std over repeats of the mean CV accuracy."""
    means = []
    for r in range(repeats):
        cv = StratifiedKFold(folds, shuffle=True, random_state=r)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            means.append(cross_val_score(LinearSVC(C=C, random_state=0), X, y, cv=cv).mean())
    return float(np.mean(means)), float(np.std(means))


def load_all(args):
    """The data sets of ``--datasets``, checked before any work: each loads, ``--folds`` fits its classes."""
    out = {}
    for name in args.datasets:
        if not args.data_root and name != "MUTAG":  # (the library's message names download=True too)
            raise DataError(f"--datasets {name}: only MUTAG is bundled; give --data-root DIR holding "
                            f"DIR/{name}/raw")
        try:
            graphs = load_tu(name, args.data_root) if args.data_root else load_tu(name)
        except (OSError, ValueError) as err:
            raise DataError(f"--datasets {name}: {err}") from None
        counts = np.bincount(graphs._data.y.numpy())
        smallest = int(counts[counts > 0].min())
        if args.folds > smallest:
            raise DataError(f"--folds {args.folds}: {name}'s smallest class holds {smallest} graphs; "
                            f"stratified {args.folds}-fold CV needs at least {args.folds} of every class")
        out[name] = graphs
    return out


def evaluate(args):
    out = {"C": args.C, "repeats": args.repeats, "folds": args.folds, "results": {},
           "machine": f"{platform.processor() or platform.machine()}, {platform.python_version()}"}
    for name, graphs in load_all(args).items():
        y = graphs._data.y.numpy()
        rows = {}
        for label, opts in SETTINGS.items():
            for normalize in (False, True):
                t = time.perf_counter()
                X = KongVectorizer(normalize=normalize, **opts).fit_transform(graphs)
                row = {f"{c:g}": scores(X, y, c, args.repeats, args.folds) for c in args.C}
                rows[f"{label}{', normalized' if normalize else ''}"] = row
                print(f"{name:<9} {label:<18} normalize={normalize!s:<5} "
                      + " ".join(f"C={c:g}: {row[f'{c:g}'][0]:.3f}" for c in args.C)
                      + f"  ({time.perf_counter() - t:.1f} s)", flush=True)
        out["results"][name] = rows
    return out


def markdown(res):
    cs = [f"{c:g}" for c in res["C"]]
    lines = ["# Graph-level normalization and LinearSVC's C",
             "",
             "Exact KONG features (h = 2) with and without `normalize=True`, scored by scikit-learn's "
             f"`LinearSVC(C=C, random_state=0)` (other defaults), stratified {res['folds']}-fold CV repeated "
             f"{res['repeats']} times: mean accuracy per fixed C (no C is chosen). "
             f"`{res.get('command', 'python benchmarks/normalize.py')}`.",
             ""]
    for name, rows in res["results"].items():
        lines += [f"## {name}", "", "| setting | " + " | ".join(f"C={c}" for c in cs) + " |",
                  "|---|" + "---|" * len(cs)]
        for label, row in rows.items():
            best = max(row[c][0] for c in cs)
            cells = [(f"**{row[c][0]:.3f}**" if row[c][0] == best else f"{row[c][0]:.3f}") for c in cs]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines.append("")
        for label in SETTINGS:
            plain, normed = rows[label], rows[f"{label}, normalized"]
            bp, bn = (max(cs, key=lambda c, r=r: r[c][0]) for r in (plain, normed))
            at1 = f"; at C=1: {plain['1'][0]:.3f} -> {normed['1'][0]:.3f}" if "1" in cs else ""
            lines.append(f"- {label}: best {plain[bp][0]:.3f} (C={bp}) without, {normed[bn][0]:.3f} (C={bn}) "
                         f"normalized{at1}")
        lines.append("")
    lines.append(f"Machine: {res['machine']}; the accuracies do not depend on it.")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = make_parser(__doc__)
    parser.add_argument("--data-root", type=folder, default=None, metavar="DIR",
                        help="folder with NAME/raw (default: the bundled MUTAG)")
    parser.add_argument("--datasets", type=list_of(str), default="MUTAG", metavar="NAME[,...]",
                        help="comma-separated")
    parser.add_argument("--C", type=list_of(number_in(0.0)), default="0.01,0.1,1,10,100,1000",
                        metavar="C[,...]", help="comma-separated C values (each > 0)")
    parser.add_argument("--repeats", type=int_at_least(1), default=10, metavar="N", help="CV repeats")
    parser.add_argument("--folds", type=int_at_least(2), default=10, metavar="N", help="CV folds")
    parser.add_argument("--out", type=out_dir, default=str(ROOT / "docs" / "results"), metavar="DIR",
                        help="output folder")
    args = parser.parse_args(argv)
    res = evaluate(args)
    given = list(sys.argv[1:] if argv is None else argv)
    hidden = ("--data-root", "--out")  # (local paths stay out of the docs)
    shown = ["DIR" if i and given[i - 1] in hidden else
             (a.split("=")[0] + "=DIR" if a.split("=")[0] in hidden and "=" in a else a)
             for i, a in enumerate(given)]
    res["command"] = shlex.join(["python", "benchmarks/normalize.py", *shown])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "normalize.json").write_text(json.dumps(res, indent=1) + "\n")
    (out / "normalize.md").write_text(markdown(res))
    print(f"wrote {out / 'normalize.md'} and normalize.json")


if __name__ == "__main__":
    run(main)
