"""The KONG paper's Table 2 on MovieLens-100k: true vs shuffled neighbor order.

    python benchmarks/table2.py --ml-dir PATH/ml-100k            # writes docs/results/table2.*

Every option of ``kong-pyg table2`` is accepted (see ``--help``); this script
only sets the defaults used for docs/results: the protocol rows plus the
labelled variants (blended 1+2-grams, graph-level normalization), 100 splits,
a 20-split-per-fraction accuracy curve, output in docs/results. The MovieLens
folder defaults to $KONG_ML100K, else ../shared/data/ml-100k next to the
repository, if it exists.
"""
import os
import sys
from pathlib import Path

from kong_pyg.cli import main

REPO = Path(__file__).resolve().parents[1]
METHODS = ["K-1", "K-2", "K-2 shuffled", "WL", "KW", "K-2 blended", "K-2 blended shuffled",
           "K-1 graph-norm", "K-2 blended graph-norm"]


def default_ml_dir():
    env = os.environ.get("KONG_ML100K")
    if env:
        return env
    shared = REPO.parent / "shared" / "data" / "ml-100k"
    return str(shared) if shared.is_dir() else None


if __name__ == "__main__":
    argv = sys.argv[1:]
    if "--ml-dir" not in argv and "--root" not in argv:
        ml = default_ml_dir()
        if ml is None:
            sys.exit("give --ml-dir PATH/ml-100k (or set KONG_ML100K)")
        argv = ["--ml-dir", ml] + argv
    if "--methods" not in argv:
        argv = ["--methods", ",".join(METHODS)] + argv
    if "--out" not in argv:
        argv += ["--out", str(REPO / "docs" / "results")]
    sys.exit(main(["table2", *argv]))
