"""Does graph-level normalization help a linear classifier? MUTAG (and others), per C.

For a few KONG settings, exact features with and without ``normalize=True``
(every graph's row scaled to unit L2 norm), scored by scikit-learn's
``LinearSVC(C=C, random_state=0)`` (its other defaults) under stratified 10-fold
cross-validation repeated ``--repeats`` times, for every C of ``--C`` (no C
is chosen: each column is one fixed C, so the effect of the scale is
visible). Writes docs/results/normalize.json and normalize.md.

    python benchmarks/normalize.py                              # bundled MUTAG (about 1 min)
    python benchmarks/normalize.py --data-root DIR --datasets MUTAG,PTC_MR,PROTEINS
"""
import argparse
import json
import platform
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


def run(args):
    out = {"C": args.C, "repeats": args.repeats, "folds": args.folds, "results": {},
           "machine": f"{platform.processor() or platform.machine()}, {platform.python_version()}"}
    for name in args.datasets:
        graphs = load_tu(name, args.data_root) if args.data_root else load_tu(name)
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
             "`python benchmarks/normalize.py`.",
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
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-root", default=None, help="folder with NAME/raw (default: the bundled MUTAG)")
    parser.add_argument("--datasets", default="MUTAG", help="comma-separated (default: MUTAG)")
    parser.add_argument("--C", default="0.01,0.1,1,10,100,1000", help="comma-separated C values")
    parser.add_argument("--repeats", type=int, default=10, help="CV repeats (default: 10)")
    parser.add_argument("--folds", type=int, default=10, help="CV folds (default: 10)")
    parser.add_argument("--out", default=str(ROOT / "docs" / "results"), help="output folder")
    args = parser.parse_args(argv)
    args.datasets = [d for d in args.datasets.split(",") if d]
    args.C = [float(c) for c in args.C.split(",") if c]
    res = run(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "normalize.json").write_text(json.dumps(res, indent=1) + "\n")
    (out / "normalize.md").write_text(markdown(res))
    print(f"wrote {out / 'normalize.md'} and normalize.json")


if __name__ == "__main__":
    main()
