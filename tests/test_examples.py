"""Every example: --help runs nothing, bad input is one line (exit 2), the default run shows its point."""
import argparse
import os
import runpy
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SCRIPTS = sorted(p.name for p in EXAMPLES.glob("*.py") if p.name != "example_data.py")


def run_example(name, args, monkeypatch, capsys):
    """Run an example as ``__main__`` in this process; (exit status, stdout, stderr)."""
    monkeypatch.setattr(sys, "argv", [str(EXAMPLES / name), *args])
    monkeypatch.syspath_prepend(str(EXAMPLES))
    torch.manual_seed(0)
    code = 0
    try:
        runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    out, err = capsys.readouterr()
    return code, out, err


def main_of(name, monkeypatch):
    """The example's main(argv) function."""
    monkeypatch.syspath_prepend(str(EXAMPLES))
    return runpy.run_path(str(EXAMPLES / name), run_name="example")["main"]


def write_tu(root: Path, name: str, num_graphs: int = 12):
    """A tiny TU data set in PyG's raw layout (1-based ids, as TU files are)."""
    raw = root / name / "raw"
    raw.mkdir(parents=True)
    edges, indicator, labels, node_labels, edge_labels = [], [], [], [], []
    node = 1
    for g in range(num_graphs):
        size = 3 + g % 4
        for i in range(size):
            indicator.append(g + 1)
            node_labels.append((i + g) % 3)
        for i in range(size):  # a cycle, both directions
            a, b = node + i, node + (i + 1) % size
            edges += [(a, b), (b, a)]
            edge_labels += [i % 2, i % 2]
        labels.append(g % 2)
        node += size
    (raw / f"{name}_A.txt").write_text("".join(f"{a}, {b}\n" for a, b in edges))
    (raw / f"{name}_graph_indicator.txt").write_text("".join(f"{g}\n" for g in indicator))
    (raw / f"{name}_graph_labels.txt").write_text("".join(f"{y}\n" for y in labels))
    (raw / f"{name}_node_labels.txt").write_text("".join(f"{v}\n" for v in node_labels))
    (raw / f"{name}_edge_labels.txt").write_text("".join(f"{v}\n" for v in edge_labels))
    return root


def test_the_examples_are_these():
    assert SCRIPTS == ["gnn_with_kong.py", "linear_head.py", "ordered_vs_shuffled.py", "quickstart.py",
                       "stream_distributed.py"]


@pytest.mark.parametrize("name", SCRIPTS)
def test_help_runs_nothing_and_shows_defaults(name, monkeypatch, capsys):
    code, out, err = run_example(name, ["--help"], monkeypatch, capsys)
    assert code == 0 and err == ""
    assert out.startswith(f"usage: {name}") and "--threads N" in out and "(default: 1)" in out
    assert out.count("\n") < 80  # the help, nothing computed


@pytest.mark.parametrize("name", SCRIPTS)
def test_bad_values_are_one_line(name, monkeypatch, capsys):
    code, out, err = run_example(name, ["--threads", "0"], monkeypatch, capsys)
    assert code == 2 and out == ""
    assert err == f"{name}: error: argument --threads: must be >= 1 (got 0)\n"
    code, out, err = run_example(name, ["--no-such-flag"], monkeypatch, capsys)
    assert code == 2 and err.count("\n") == 1 and "unrecognized arguments: --no-such-flag" in err


def test_stream_distributed_checks_its_options_before_starting_processes(monkeypatch, capsys):
    """Checked first in the workers, a bad value ended in two nested tracebacks with exit status 1."""
    code, out, err = run_example("stream_distributed.py", ["--k", "1001"], monkeypatch, capsys)
    assert (code, out, err) == (2, "", "stream_distributed.py: error: 'k' must be <= 1,000 (got 1,001)\n")


@pytest.mark.parametrize("name", ["linear_head.py", "gnn_with_kong.py"])
@pytest.mark.parametrize("args,message", [
    (["--data-root", "{tmp}/nowhere", "--dataset", "MUTAG"], "--data-root '{tmp}/nowhere' is not a folder"),
    (["--data-root", "{tmp}/file.txt", "--dataset", "MUTAG"], "--data-root '{tmp}/file.txt' is not a folder"),
    (["--data-root", "{tmp}", "--dataset", "NOPE"], "no NOPE_A.txt under {tmp} (looked in {tmp}/NOPE/raw"),
    (["--dataset", "NOPE"],
        "--dataset 'NOPE' needs --data-root DIR (DIR/NOPE/raw); without it: MUTAG, synthetic"),
    (["--data-root", "{tmp}", "--dataset", "BAD"],
        "BAD_A.txt, line 1: edge 1, 99 names a node that does not exist"),
])
def test_bad_data_is_one_line(name, args, message, tmp_path, monkeypatch, capsys):
    (tmp_path / "file.txt").write_text("x")
    raw = tmp_path / "BAD" / "raw"
    raw.mkdir(parents=True)
    for part, text in (("A", "1, 99\n"), ("graph_indicator", "1\n1\n"), ("graph_labels", "1\n")):
        (raw / f"BAD_{part}.txt").write_text(text)
    args = [a.format(tmp=tmp_path) for a in args]
    code, out, err = run_example(name, args, monkeypatch, capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"{name}: error: ") and message.format(tmp=tmp_path) in err, err
    assert "--download" not in err


def test_data_root_needs_a_dataset_name(monkeypatch, capsys):
    # gnn_with_kong's default data set is the built-in 'synthetic', which reads no files
    code, out, err = run_example("gnn_with_kong.py", ["--data-root", "/no/such/folder"], monkeypatch, capsys)
    assert (code, out) == (2, "")
    assert err == ("gnn_with_kong.py: error: --data-root needs --dataset NAME (the TU data set under it; "
                   "'synthetic' is built in and reads no files)\n")


FOLDS = ("--folds {0}: the smallest of the 2 classes holds {1} of the {2} graphs; stratified {0}-fold CV "
         "needs at least {0} graphs of every class (a smaller --folds, or a larger --num-graphs)")


@pytest.mark.parametrize("args,message", [
    (["--folds", "1000", "--epochs", "1"], FOLDS.format(1000, 80, 160)),
    (["--num-graphs", "3"], FOLDS.format(4, 1, 3)),
    (["--num-graphs", "2", "--folds", "2"], FOLDS.format(2, 1, 2)),
    # --quick changes defaults only: the explicit --folds wins
    (["--quick", "--folds", "1000"], FOLDS.format(1000, 20, 40)),
])
def test_gnn_folds_are_checked_before_training(args, message, monkeypatch, capsys):
    code, out, err = run_example("gnn_with_kong.py", args, monkeypatch, capsys)
    assert (code, out) == (2, "")
    assert err == f"gnn_with_kong.py: error: {message}\n"


def test_linear_head_needs_two_classes(monkeypatch, capsys):
    args = ["--num-graphs", "2", "--epochs", "2"]
    code, out, err = run_example("linear_head.py", args, monkeypatch, capsys)
    assert (code, out) == (2, "")  # refused before any training or output
    assert err == ("linear_head.py: error: the 2 graphs are all of one class (class 0); classification "
                   "needs 2 or more classes (a larger --num-graphs, or another data set)\n")


def test_quick_only_changes_defaults(monkeypatch, capsys):
    acc = main_of("gnn_with_kong.py", monkeypatch)(["--quick", "--folds", "3", "--epochs", "1"])
    out = capsys.readouterr().out
    assert "40 graphs" in out and "3-fold CV, 1 epochs, GIN 3x8" in out and "dim=16" in out
    assert set(acc) == {"GIN", "GIN + KONG"}
    code, out, err = run_example("linear_head.py", ["--help"], monkeypatch, capsys)
    assert "options given explicitly win" in " ".join(out.split())


@pytest.mark.parametrize("layout", ["NAME/raw", "raw"])
def test_bad_raw_file_names_the_users_file(layout, tmp_path, monkeypatch, capsys):
    root = write_tu(tmp_path / "data", "TINY")
    path = root / "TINY" / "raw" / "TINY_A.txt"
    lines = path.read_text().splitlines(keepends=True)
    lines[4] = "1, x\n"
    path.write_text("".join(lines))
    data_root = root if layout == "NAME/raw" else root / "TINY"  # the second is read through a copy
    args = ["--quick", "--data-root", str(data_root), "--dataset", "TINY"]
    code, out, err = run_example("linear_head.py", args, monkeypatch, capsys)
    assert (code, out) == (2, "")
    assert err == f"linear_head.py: error: {path}, line 5: 'x' is not a number: '1, x'\n"


def test_process_counts_are_capped(monkeypatch, capsys):
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    code, out, err = run_example("stream_distributed.py", ["--world-size", "9"], monkeypatch, capsys)
    assert (code, out) == (2, "")
    assert err == ("stream_distributed.py: error: argument --world-size: must be at most 8 (4 x the 2 CPUs "
                   "here) (got 9)\n")
    monkeypatch.syspath_prepend(str(EXAMPLES))
    from example_data import warn_processes

    monkeypatch.setattr(sys, "argv", ["stream_distributed.py"])
    warn_processes("--world-size", 3)
    warn_processes("--world-size", 2)  # not more than the CPUs: no warning
    assert capsys.readouterr().err == ("stream_distributed.py: warning: --world-size 3 is more than the 2 "
                                       "CPUs here: the processes share them (slower, the same result)\n")


# -- the benchmarks: bad values are one line at parse time -------------------------------------------

BENCHMARKS = ROOT / "benchmarks"


def run_benchmark(name, args, monkeypatch, capsys):
    """Run a benchmark as ``__main__`` in this process; (exit status, stdout, stderr)."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "argv", [str(BENCHMARKS / name), *args])
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    code = 0
    try:
        runpy.run_path(str(BENCHMARKS / name), run_name="__main__")
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("name,args,message", [
    ("bench_core.py", ["--repeats", "0"], "argument --repeats: must be >= 1 (got 0)"),
    ("bench_core.py", ["--hops", "-1"], "argument --hops: 'hops' must be >= 0 (got -1)"),
    ("bench_core.py", ["--data-root", "{tmp}/nowhere"],
        "argument --data-root: no such folder: '{tmp}/nowhere'"),
    ("bench_core.py", ["--data-root", "{tmp}"],
        "--data-root '{tmp}' holds none of --datasets MUTAG,PTC_MR,ENZYMES,PROTEINS,NCI1 (looked for "
        "{tmp}/NAME/raw)"),
    ("bench_transform.py", ["--repeats", "-1"], "argument --repeats: must be >= 1 (got -1)"),
    ("bench_transform.py", ["--k", "0"], "argument --k: 'k' must be >= 1 (got 0)"),
    ("normalize.py", ["--folds", "1"], "argument --folds: must be >= 2 (got 1)"),
    ("normalize.py", ["--C", "0,-1"], "argument --C: must be > 0 (got 0)"),
    ("normalize.py", ["--folds", "100"],
        "--folds 100: MUTAG's smallest class holds 63 graphs; stratified 100-fold CV needs at least 100 of "
        "every class"),
    ("table1.py", ["--repeats", "0"], "argument --repeats: must be >= 1 (got 0)"),
    ("table1.py", ["--repeats-for", "NCI1"], "argument --repeats-for: expects NAME=N items, e.g. NCI1=2 (got "
                                            "'NCI1')"),
    ("table1.py", ["--methods", "kong,nope"],
        "argument --methods: unknown 'nope'; expected some of: kong, kong-gnorm, kong-noedge, kong-mean, wl, "
        "wl-grakel, sp, kw"),
    ("order_test.py", ["--splits", "0"], "argument --splits: must be >= 2 (got 0)"),
    ("bench_svm_device.py", ["--repeats", "0"], "argument --repeats: must be >= 1 (got 0)"),
    ("bench_eval.py", ["--repeats", "0"], "argument --repeats: must be >= 1 (got 0)"),
    ("bench_gpu.py", ["--dims", "0"], "argument --dims: 'dim' must be >= 1 (got 0)"),
    ("bench_gpu.py", ["--max-graphs", "0"], "argument --max-graphs: must be >= 1 (got 0)"),
    ("bench_parallel.py", ["--repeats", "0"], "argument --repeats: must be >= 1 (got 0)"),
    ("bench_stream.py", ["--dims", "0"], "argument --dims: must be >= 1 (got 0)"),
    ("bench_stream_workers.py", ["--workers", "0"], "argument --workers: must be >= 1 (got 0)"),
    # lists: commas, spaces or both, each value once
    ("bench_stream.py", ["--dims", "256,1024", "256"],
        "argument --dims: lists 256 twice (in '256,1024 256'); give each value once"),
    ("bench_stream.py", ["--dims", "256,x"], "argument --dims: expects an integer (got 'x')"),
    ("bench_eval.py", ["--parts", "main,nope"],
        "argument --parts: invalid choice: 'nope' (choose from main, routes, grid)"),
    ("bench_core.py", ["--data-root", "{tmp}", "--datasets", "MUTAG,PTC_MR", "NCI1"],
        "--data-root '{tmp}' holds none of --datasets MUTAG,PTC_MR,NCI1 (looked for {tmp}/NAME/raw)"),
])
def test_benchmark_bad_values_are_one_line(name, args, message, tmp_path, monkeypatch, capsys):
    args = [a.format(tmp=tmp_path) for a in args]
    code, out, err = run_benchmark(name, args, monkeypatch, capsys)
    assert (code, out) == (2, "")
    assert err == f"{name}: error: {message.format(tmp=tmp_path)}\n"


@pytest.mark.parametrize("name,flag", [
    ("bench_core.py", "--out"), ("bench_core.py", "--json"), ("bench_eval.py", "--json"),
    ("bench_gpu.py", "--out"), ("bench_parallel.py", "--out"), ("bench_transform.py", "--json"),
    ("bench_stream.py", "--md"),
    ("bench_stream_workers.py", "--json"), ("bench_svm_device.py", "--out"), ("normalize.py", "--out"),
    ("order_test.py", "--out"), ("table1.py", "--out"),
])
def test_benchmark_outputs_are_checked_before_any_work(name, flag, tmp_path, monkeypatch, capsys):
    """Output paths were first opened after the run: a path that cannot be written gave a traceback at the
    end (bench_parallel after 38 s), and three scripts did not make a new folder."""
    (tmp_path / "file.txt").write_text("x")
    code, out, err = run_benchmark(name, [flag, str(tmp_path / "file.txt" / "x.md")], monkeypatch, capsys)
    assert (code, out) == (2, "")
    assert err == (f"{name}: error: argument {flag}: cannot create a folder under '{tmp_path}/file.txt': "
                   "it is a file\n")


def test_benchmark_output_folders_are_made_once_the_command_line_parsed(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import bench_cli

    parser = bench_cli.make_parser("doc")
    parser.add_argument("--out", type=bench_cli.out_file)
    parser.add_argument("--dir", type=bench_cli.out_dir)
    parser.add_argument("--n", type=bench_cli.int_at_least(1))
    args = [f"--out={tmp_path}/new/x.md", f"--dir={tmp_path}/a/b"]
    with pytest.raises(SystemExit):  # (a later bad argument: no folder made)
        parser.parse_args(args + ["--n", "0"])
    assert not (tmp_path / "new").exists() and not (tmp_path / "a").exists()
    parsed = parser.parse_args(args)
    assert parsed.out == tmp_path / "new" / "x.md" and (tmp_path / "new").is_dir()
    assert not parsed.out.exists() and (tmp_path / "a" / "b").is_dir()
    capsys.readouterr()


def test_plot_is_checked_before_any_work(tmp_path, monkeypatch, capsys):
    (tmp_path / "file.txt").write_text("x")
    args = ["--quick", "--plot", str(tmp_path / "file.txt" / "x.png")]
    code, out, err = run_example("ordered_vs_shuffled.py", args, monkeypatch, capsys)
    assert code == 2 and err.count("\n") == 1 and "--plot: cannot create a folder under" in err, err
    assert out == ""  # nothing ran

    def no_matplotlib():
        raise ImportError("plots need matplotlib: pip install 'kong-pyg[plot]'")

    monkeypatch.setattr("kong_pyg.evaluation.plots.pyplot", no_matplotlib)
    code, out, err = run_example("ordered_vs_shuffled.py", ["--quick", "--plot", str(tmp_path / "x.png")],
                                 monkeypatch, capsys)
    assert code == 2 and err.count("\n") == 1 and "plots need matplotlib" in err and out == "", err


# -- the default runs: each shows its point ---------------------------------------------------


def test_quickstart_default(monkeypatch, capsys):
    equal = main_of("quickstart.py", monkeypatch)([])
    out = capsys.readouterr().out
    assert equal == {1: True, 2: False}
    assert "node features (8, 256) graph features (2, 256)" in out


def test_ordered_vs_shuffled_default(monkeypatch, capsys):
    acc = main_of("ordered_vs_shuffled.py", monkeypatch)([])
    out = capsys.readouterr().out
    assert acc["true"] > 0.9 and acc["k1"] < 0.65, acc  # split-dependent: 0.945-0.97 seen
    assert acc["consistent"] < 0.65 and acc["random"] < 0.65, acc
    assert "**Answer.** Yes: the true order beats the consistent shuffle" in out


def test_linear_head_default(monkeypatch, capsys):
    acc = main_of("linear_head.py", monkeypatch)([])
    out = capsys.readouterr().out
    assert "MUTAG (bundled), 188 graphs, 2 classes" in out and "epoch  50" in out
    assert acc > 0.7  # a linear model on KONG graph features, 38 test graphs


def test_gnn_with_kong_default(monkeypatch, capsys):
    acc = main_of("gnn_with_kong.py", monkeypatch)([])
    out = capsys.readouterr().out
    assert "synthetic ordered events (built in), 160 graphs" in out and "4-fold CV, 20 epochs" in out
    # the classes differ only in neighbor order: GIN is at chance, KONG's k = 2 features see it
    # a small default run: 0.83-0.95 seen across fold seeds
    assert acc["GIN"] < 0.65 and acc["GIN + KONG"] > 0.75


# -- other data ---------------------------------------------------------------------------------


def test_linear_head_synthetic(monkeypatch, capsys):
    code, out, _ = run_example("linear_head.py", ["--quick", "--dataset", "synthetic"], monkeypatch, capsys)
    assert code == 0 and "synthetic ordered events" in out and "final test accuracy" in out


def test_linear_head_on_tu_raw_files(tmp_path, monkeypatch, capsys):
    root = write_tu(tmp_path / "data", "TINY")
    os.chmod(root / "TINY" / "raw", 0o555)  # read-only input is fine: it is only read
    try:
        code, out, _ = run_example("linear_head.py", ["--quick", "--data-root", str(root), "--dataset",
            "TINY"],
                                   monkeypatch, capsys)
    finally:
        os.chmod(root / "TINY" / "raw", 0o755)
    assert code == 0 and "TINY" in out and "12 graphs, 2 classes" in out and "final test accuracy" in out
    assert sorted(p.name for p in (root / "TINY").iterdir()) == ["raw"]  # nothing written beside it


def test_gnn_with_kong_in_model_on_tu(tmp_path, monkeypatch, capsys):
    root = write_tu(tmp_path, "TINY")
    args = ["--quick", "--in-model", "--data-root", str(root), "--dataset", "TINY"]
    code, out, _ = run_example("gnn_with_kong.py", args, monkeypatch, capsys)
    assert code == 0 and "in the model" in out and "GIN + KONG  accuracy" in out


def test_gnn_with_kong_full_flag(monkeypatch, capsys):
    main = main_of("gnn_with_kong.py", monkeypatch)
    main(["--full", "--quick"])  # --quick still wins: the flags are parsed, nothing long runs
    out = capsys.readouterr().out
    assert "2-fold CV, 2 epochs" in out


@pytest.mark.parametrize("given,splits,curve", [
    ([], 50, 10),                                              # the docs' run
    (["--splits", "30"], 30, 10),
    (["--splits=30", "--curve-splits=0"], 30, 0),              # the '=' form (was overridden by the defaults)
    (["--split", "7"], 7, 10),                                 # an abbreviation argparse accepts
])
def test_table2_benchmark_defaults_yield_to_the_users_options(given, splits, curve, tmp_path, monkeypatch,
                                                              capsys):
    from kong_pyg.cli import build_parser
    seen = []
    monkeypatch.setattr("kong_pyg.cli.main", lambda argv: seen.append(argv) or 0)
    monkeypatch.setattr("kong_pyg.tune_allocator", lambda *a, **k: None)
    args = ["--ml-dir", str(tmp_path), "--resume", str(tmp_path / "s.json"), *given]
    code, _, err = run_benchmark("table2.py", args, monkeypatch, capsys)
    assert code == 0, err
    args = build_parser().parse_args(seen[0])
    assert (args.splits, args.curve_splits) == (splits, curve)
    assert args.resume == str(tmp_path / "s.json")


def test_table1_never_shows_a_stored_result_of_other_options(tmp_path, monkeypatch, capsys):
    # a result stored by a run with another seed (or R, inner folds) is refused, not skipped into the table
    import json

    out = tmp_path / "t1"
    (out / "table1").mkdir(parents=True)
    stored = {"repeats": 10, "nested_repeats": 10, "inner_folds": 5, "seed": 0}
    (out / "table1" / "MUTAG_kong.json").write_text(json.dumps(stored))
    (tmp_path / "tu" / "MUTAG" / "raw").mkdir(parents=True)
    args = ["--data-root", str(tmp_path / "tu"), "--datasets", "MUTAG", "--section", "paper", "--methods",
            "kong", "--seed", "1", "--quiet", "--out", str(out / "table1.md")]
    code, _, err = run_benchmark("table1.py", args, monkeypatch, capsys)
    assert code == 2
    made = "{'repeats': 10, 'nested_repeats': 10, 'inner_folds': 5, 'seed': %d}"
    assert f"MUTAG_kong.json was made with {made % 0}, not {made % 1}: pass --force" in err
    # every stored result is checked before any work; a damaged one is a one-line error too
    (out / "table1" / "MUTAG_kong.json").write_text("{not json")
    code, _, err = run_benchmark("table1.py", args, monkeypatch, capsys)
    assert code == 2 and "MUTAG_kong.json is not a result file" in err and "Traceback" not in err
    assert err.startswith("table1.py: error: ") and err.count("\n") == 1  # (it lacked the script's name)



def test_table1_render_needs_stored_runs(tmp_path, monkeypatch, capsys):
    """--render with a mistyped --out wrote a table of "not run" cells and exited with 0."""
    code, out, err = run_benchmark("table1.py", ["--render", "--out", str(tmp_path / "TYPO.md")], monkeypatch,
                                   capsys)
    assert (code, out) == (2, "") and err.startswith("table1.py: error: --render: no stored runs under ")
    assert not (tmp_path / "TYPO.md").exists()


def test_table1_render_names_a_damaged_result_file(tmp_path, monkeypatch, capsys):
    """--render and the extended section read stored JSON: a truncated file said only 'Expecting property
    name ... line 2 column 1', naming no file."""
    out = tmp_path / "t1"
    (out / "table1" / "extended").mkdir(parents=True)
    (out / "table1" / "MUTAG_kong.json").write_text('{\n "dataset": "MUTAG",\n')
    args = ["--datasets", "MUTAG", "--render", "--quiet", "--out", str(out / "table1.md")]
    code, _, err = run_benchmark("table1.py", ["--section", "paper"] + args, monkeypatch, capsys)
    assert code == 2 and "MUTAG_kong.json is not a result file (" in err and "Traceback" not in err
    (out / "table1" / "MUTAG_kong.json").unlink()
    (out / "table1" / "extended" / "MUTAG.json").write_text('{"config": ')
    code, _, err = run_benchmark("table1.py", ["--section", "extended"] + args, monkeypatch, capsys)
    assert code == 2 and "MUTAG.json is not a result file (" in err and "Traceback" not in err


def test_order_test_benchmark_writes_its_report(tmp_path, monkeypatch, capsys):
    """The report is built from the stored JSON (it failed on the JSON's 'answer' and on the header)."""
    out = ["--out", str(tmp_path)]
    args = ["--cases", "prov-s1", "--num-graphs", "40", "--splits", "3", "--shuffles", "1"] + out
    code, _, err = run_benchmark("order_test.py", args, monkeypatch, capsys)
    assert code == 0, err
    report = (tmp_path / "order_test.md").read_text()
    for text in ("Scores are means over 3 stratified random", "(shuffled settings: the mean of 1 seeds",
                 "**Answer.**", "[`prov-s1`]"):
        assert text in report
    code, _, err = run_benchmark("order_test.py", ["--report-only"] + out, monkeypatch, capsys)
    assert code == 0 and (tmp_path / "order_test.md").read_text() == report  # (the runs' own command too)
    none = ["--report-only", "--out", str(tmp_path / "none")]
    code, _, err = run_benchmark("order_test.py", none, monkeypatch, capsys)
    assert code == 2 and "holds no stored run" in err


def test_table2_benchmark_help_needs_no_data(monkeypatch, capsys):
    # --help shows the script's defaults and the command's options, before any data is looked for
    monkeypatch.setenv("KONG_ML100K", "")
    code, out, err = run_benchmark("table2.py", ["--help"], monkeypatch, capsys)
    assert code == 0 and err == ""
    assert "kong-pyg table2 with the docs' run as its defaults" in out and "--splits 50" in out
    assert "usage: kong-pyg table2" in out


def test_reports_name_the_command_that_made_them(monkeypatch):
    # every option as given (order_test.md named a fixed command; bench_core.md dropped --datasets),
    # local data paths as placeholders
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    from bench_cli import produced_by

    argv = ["/x/benchmarks/order_test.py", "--ml-dir", "/home/me/ml", "--cases", "prov-s1", "--out=a b"]
    want = "python benchmarks/order_test.py --ml-dir PATH/ml-100k --cases prov-s1 '--out=a b'"
    assert produced_by(argv) == want
    assert produced_by(["bench_core.py", "--data-root=/d", "--datasets", "MUTAG"]) == \
        "python benchmarks/bench_core.py --data-root=DIR --datasets MUTAG"


def test_scripts_interrupted_print_one_line(monkeypatch, capsys):
    # Ctrl-C in an example or a benchmark: one line and status 130, as kong-pyg (a traceback before)
    monkeypatch.syspath_prepend(str(EXAMPLES))
    from example_data import run

    def interrupted(argv):
        raise KeyboardInterrupt

    monkeypatch.setattr(sys, "argv", ["quickstart.py"])
    with pytest.raises(SystemExit) as done:
        run(interrupted)
    assert done.value.code == 130 and capsys.readouterr().err == "\nquickstart.py: interrupted\n"


def test_the_shared_helper_answers_help_and_runs_nothing():
    """The guide says every example takes --help: examples/example_data.py, the helper the others import,
    prints what it holds; run otherwise, it says it is not run, in one line (it printed nothing, exit 0)."""
    import subprocess
    import sys

    script = str(EXAMPLES / "example_data.py")
    out = subprocess.run([sys.executable, script, "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.startswith("What the examples share") and out.stderr == ""
    out = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == ("example_data.py: error: this is the examples' shared helper, imported by them, "
                          "not run (--help says what it holds)\n")


def test_bench_eval_lists_the_route_data_sets_it_could_not_run(tmp_path, monkeypatch, capsys):
    """bench_eval.py --parts routes with one data set absent says so and lists it in the report (it was left
    out without a word)."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    bench = runpy.run_path(str(BENCHMARKS / "bench_eval.py"))
    args = argparse.Namespace(route_datasets=["NOPE"], data_root=str(tmp_path))
    threads = torch.get_num_threads()
    try:
        routes = bench["part_routes"](args)
    finally:
        torch.set_num_threads(threads)  # (the part runs with one)
    assert routes == {"NOPE": None}
    assert capsys.readouterr().out == f"NOPE: not under {tmp_path}, skipped\n"
    text = bench["markdown"]({"machine": "m", "note": "n", "routes": routes})
    assert "| NOPE | not run: no data under the data root | | | | |" in text


def test_output_into_a_closed_pipe_ends_quietly(tmp_path):
    """python examples/quickstart.py | head -1: the reader goes early; the example ends with the shell's
    status for SIGPIPE and no message, as kong-pyg does (it printed a traceback and exit 1)."""
    import signal

    from helpers import into_closed_pipe

    for status, stderr in into_closed_pipe([sys.executable, str(EXAMPLES / "quickstart.py")], tmp_path):
        assert status == 128 + signal.SIGPIPE and stderr == "", stderr


def test_table1_without_grakel_says_so_in_one_line_before_any_work(tmp_path, monkeypatch, capsys):
    """--methods wl-grakel without GraKeL ran the other methods, then died in a 41-line traceback that also
    said 'sp' needs GraKeL (sp is our own)."""
    monkeypatch.setitem(sys.modules, "grakel", None)  # (import grakel raises ImportError)
    args = ["--section", "paper", "--datasets", "MUTAG", "--methods", "sp,wl-grakel", "--quiet",
            "--out", str(tmp_path / "table1.md")]
    code, out, err = run_benchmark("table1.py", args, monkeypatch, capsys)
    assert code == 2 and "--methods wl-grakel needs GraKeL" in err and "Traceback" not in err
    assert not (tmp_path / "table1").exists() or not any((tmp_path / "table1").iterdir())
    from kong_pyg.evaluation.baselines import grakel_gram

    with pytest.raises(ImportError, match=r"grakel_gram \(kernel='wl'; the 'wl-grakel' baseline\) needs"):
        grakel_gram([], "wl")
