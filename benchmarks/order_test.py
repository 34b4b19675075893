"""Does neighbor order matter? kong_pyg.order_test on the provenance benchmark and MovieLens-100k.

    python benchmarks/order_test.py --ml-dir PATH/ml-100k             # every case
    python benchmarks/order_test.py --cases prov-s0,prov-s1           # some cases

Each case writes ``<out>/order_test/<case>.json`` and ``<case>.png``; then
``<out>/order_test.md`` is rebuilt from every case file present (so cases can
be re-run one at a time; ``--report-only`` just rebuilds it), with
``<out>/order_test_summary.md`` after the header and
``<out>/order_test_notes.md`` at the end (both written by hand after the runs)
if present.
Run from the repository root with the package installed (or
``PYTHONPATH=.``). The MovieLens files are copied to a temporary
folder first (the data folder is never written). The MovieLens folder
defaults to $KONG_ML100K, else ../shared/data/ml-100k next to the repository.
"""
import json
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
from bench_cli import DataError, folder, int_at_least, make_parser, names, out_dir, produced_by, run  # noqa: E402
from bench_paths import default_ml_dir  # noqa: E402

#: case -> (title, data, order_test options)
AUTHORS_FEATURES = dict(own_label=False, blended=True, normalize=True)
CASES = {
    "prov-s0": ("Provenance benchmark, strength 0 (order carries no class signal)",
                dict(kind="provenance", strength=0.0), {}),
    "prov-s0-b": ("Provenance benchmark, strength 0, another sample (generator seed 1)",
                  dict(kind="provenance", strength=0.0, data_seed=1), {}),
    "prov-s03": ("Provenance benchmark, strength 0.3", dict(kind="provenance", strength=0.3), {}),
    "prov-s1": ("Provenance benchmark, strength 1 (each session follows its class's script)",
                dict(kind="provenance", strength=1.0), {}),
    "ml-ego": ("MovieLens-100k, our ego graphs (ties: file row order), KONG strings with the own label",
               dict(kind="movielens", ties="row", layout="ego"), {}),
    "ml-ego-authors-ties": ("MovieLens-100k, our ego graphs with the authors' tie rule, KONG strings with "
                            "the own label", dict(kind="movielens", ties="authors", layout="ego"), {}),
    "ml-ego-authors-features": ("MovieLens-100k, our ego graphs (ties: row order), the authors' features",
                                dict(kind="movielens", ties="row", layout="ego"), AUTHORS_FEATURES),
    "ml-authors": ("MovieLens-100k, the authors' graphs (their layout and tie rule) and features",
                   dict(kind="movielens", ties="authors", layout="authors"), AUTHORS_FEATURES),
}

HEADER = """# Order test: does neighbor order matter?

Produced by `{command}`
(kong_pyg.order_test; one case per section below, each also drawn in `order_test/<case>.png`).
Timings are CPU seconds of one process on a 2-core machine (not wall time); the scores do not
depend on the machine.

What each row is (see `kong_pyg.ordertest`): *k = 1* counts labels and ignores the order;
*true order* is k = 2 in the data's order; the *consistent shuffle* gives every event (every
value of the per-edge key `edge_order`) one seeded random position, the same in every graph
it appears in ("random timestamps"); the *per-graph shuffle* shuffles each graph's
neighborhoods independently (the KONG paper's "shuffled" control; it turns a node's order,
the same in every graph that holds the node, into per-graph noise); *time reversal* reads the
order backwards. Ordered settings use 1- and 2-grams (blended) and L2-normalized graph
vectors unless the section says otherwise. Scores are means over {splits} stratified random
80/20 splits (shuffled settings: the mean of {shuffles} seeds per split), LinearSVC with C chosen
by 3-fold inner CV on each training part; paired differences use the same splits, with the
Nadeau-Bengio corrected resampled t-test.
"""


def load(data, args, tmp):
    if data["kind"] == "provenance":
        from kong_pyg.datasets import ProvenanceGraphs

        data_seed = data.get("data_seed", args.seed)
        return ProvenanceGraphs(args.num_graphs, strength=data["strength"], seed=data_seed), {
            "num_graphs": args.num_graphs, "strength": data["strength"], "generator_seed": data_seed}
    from kong_pyg.datasets import MovieLensOrdered

    if args.ml_dir is None:
        raise SystemExit("give --ml-dir PATH/ml-100k (or set KONG_ML100K)")
    raw = Path(tmp) / "ml-100k"
    if not raw.is_dir():
        shutil.copytree(args.ml_dir, raw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the known dropped ratings of user 0 in this copy
        ds = MovieLensOrdered(str(Path(tmp) / "root"), ml_dir=str(raw), balance=True, seed=args.seed,
                              ties=data["ties"], layout=data["layout"])
    return ds, {"dataset": repr(ds), "balance": True}


def run_case(name, args, tmp):
    from kong_pyg import order_test

    title, data, options = CASES[name]
    graphs, about = load(data, args, tmp)
    t = time.process_time()
    res = order_test(graphs, splits=args.splits, shuffles=args.shuffles, seed=args.seed, **options)
    res.info["data"] = about
    res.info["total_cpu_s"] = time.process_time() - t
    res.info["title"] = title
    res.info["command"] = produced_by()  # (the report names the commands of the runs it shows)
    out = Path(args.out) / "order_test"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(res.to_dict(), indent=1))
    res.plot(out / f"{name}.png", title=title)
    print(res.to_markdown(title))


def write_report(args):
    from kong_pyg.ordertest import OrderTestResult

    out = Path(args.out)
    results = {name: OrderTestResult.from_dict(json.loads(path.read_text())) for name in CASES
               for path in [out / "order_test" / f"{name}.json"] if path.is_file()}
    if not results:
        raise DataError(f"--out {out} holds no stored run (order_test/CASE.json): run the cases first")

    def used(key):  # (what the stored runs used: --report-only rebuilds them under other options)
        values = sorted({r.info[key] for r in results.values()})
        return "/".join(map(str, values)) or str(getattr(args, key))

    commands = "`, `".join(dict.fromkeys(r.info.get("command", produced_by()) for r in results.values()))
    parts = [HEADER.format(command=commands, splits=used("splits"), shuffles=used("shuffles"))]
    summary = out / "order_test_summary.md"
    if summary.is_file():
        parts.append(summary.read_text())
    for name, res in results.items():
        parts.append(res.to_markdown(f"{res.info['title']} [`{name}`]")
                     + f"\n![{name}](order_test/{name}.png)\n\nData: {res.info['data']}; total CPU "
                     f"{res.info['total_cpu_s']:.0f} s.\n")
    notes = out / "order_test_notes.md"
    if notes.is_file():
        parts.append(notes.read_text())
    (out / "order_test.md").write_text("\n".join(parts))


def main(argv=None):
    p = make_parser(__doc__.splitlines()[0])
    p.add_argument("--cases", type=names(list(CASES)), default=",".join(CASES), metavar="CASE[,...]",
                   help="comma-separated cases")
    ml_default = default_ml_dir()  # a Path: checked below, only when an ml-* case runs
    p.add_argument("--ml-dir", type=folder, default=Path(ml_default) if ml_default else None, metavar="DIR",
                   help="MovieLens-100k (the ml-* cases)")
    p.add_argument("--num-graphs", type=int_at_least(4), default=1000, metavar="N",
                   help="provenance graphs per case")
    p.add_argument("--splits", type=int_at_least(2), default=20, metavar="N", help="stratified random splits")
    p.add_argument("--shuffles", type=int_at_least(1), default=3, metavar="N",
                   help="seeds per shuffled setting")
    p.add_argument("--seed", type=int_at_least(0), default=0, metavar="N",
                   help="seed of the splits and shuffles")
    p.add_argument("--out", type=out_dir, default=str(REPO / "docs" / "results"), metavar="DIR",
                   help="folder for order_test.md and order_test/")
    p.add_argument("--report-only", action="store_true", help="only rebuild order_test.md")
    args = p.parse_args(argv)
    if args.report_only:
        write_report(args)
        return 0
    cases = args.cases
    if any(CASES[c][1]["kind"] == "movielens" for c in cases):
        if args.ml_dir is None:
            p.error("the ml-* cases need --ml-dir PATH/ml-100k (or KONG_ML100K); for provenance cases only "
                    "pass --cases prov-s0,prov-s03,...")
        if not args.ml_dir.is_dir():
            p.error(f"--ml-dir: no such folder: '{args.ml_dir}' (from KONG_ML100K; pass --ml-dir DIR)")
    with tempfile.TemporaryDirectory() as tmp:
        for name in cases:
            run_case(name, args, tmp)
    write_report(args)


if __name__ == "__main__":
    sys.exit(run(main))
