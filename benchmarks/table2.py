"""The KONG paper's Table 2 on MovieLens-100k, with honest controls: writes docs/results/table2.*.

    python benchmarks/table2.py --ml-dir PATH/ml-100k            # the full table (see below)
    python benchmarks/table2.py --splits 10 --curve-splits 0     # a reduced run

Every option of ``kong-pyg table2`` is accepted (see ``--help``); this script
only sets the defaults used for docs/results: every default row (K-1, K-2 in
true order, the consistent shuffle, the per-graph shuffle, time reversal, WL,
KW, and the authors' K-1 / K-2 with their shuffles) plus the other labelled
variants (14 rows), both tie rules, 50 splits, a 10-split-per-fraction accuracy curve
(about 3 minutes on a quiet 2-core machine),
``--resume .cache/table2_state.json`` (ignored by git; an interrupted run goes
on where it stopped; delete the state files to start over), output in
docs/results.
The MovieLens folder defaults to $KONG_ML100K, else ../shared/data/ml-100k
next to the repository, if it exists (it is only read).
"""
import shlex
import sys
from pathlib import Path

from bench_paths import default_ml_dir

from kong_pyg import tune_allocator
from kong_pyg.cli import main
from kong_pyg.experiments.table2 import DEFAULT_METHODS

REPO = Path(__file__).resolve().parents[1]
METHODS = list(DEFAULT_METHODS) + ["K-2 authors reverse", "K-2 blended", "K-2 blended shuffled"]


def _given(argv, option):
    """Whether :obj:`argv` sets :obj:`option` (``--opt VALUE`` or ``--opt=VALUE``)."""
    return any(a == option or a.startswith(option + "=") for a in argv)


if __name__ == "__main__":
    argv = sys.argv[1:]
    # the defaults come first, so that the user's options, in any spelling argparse accepts
    # ('--splits 30', '--splits=30', '--split 30'), come later and win
    defaults = ["--methods", ",".join(METHODS), "--splits", "50", "--curve-splits", "10",
                "--out", str(REPO / "docs" / "results")]
    if "-h" in argv or "--help" in argv:  # (before the data is looked for and .cache/ is made)
        print("benchmarks/table2.py: kong-pyg table2 with the docs' run as its defaults (the options below "
              "override them): " + shlex.join(defaults) + " --resume .cache/table2_state.json, and --ml-dir "
              "from KONG_ML100K or ../shared/data/ml-100k\n")
        sys.exit(main(["table2", "--help"]))
    if not _given(argv, "--ml-dir") and not _given(argv, "--root"):
        ml = default_ml_dir()
        if ml is None:
            print("table2.py: error: --ml-dir: give --ml-dir PATH/ml-100k (or set KONG_ML100K)",
                  file=sys.stderr)
            sys.exit(2)
        defaults = ["--ml-dir", ml] + defaults
    if not _given(argv, "--resume"):
        (REPO / ".cache").mkdir(exist_ok=True)
        defaults += ["--resume", str(REPO / ".cache" / "table2_state.json")]
    tune_allocator()  # as the kong-pyg program does (main() with arguments leaves it to its caller)
    sys.exit(main(["table2", *defaults, *argv]))
