"""Every example: --help runs nothing, bad input is one line (exit 2), the default run shows its point."""
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


@pytest.mark.parametrize("name", ["linear_head.py", "gnn_with_kong.py"])
@pytest.mark.parametrize("args,message", [
    (["--data-root", "{tmp}/nowhere"], "--data-root '{tmp}/nowhere' is not a folder"),
    (["--data-root", "{tmp}/file.txt"], "--data-root '{tmp}/file.txt' is not a folder"),
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
    os.chmod(root / "TINY" / "raw", 0o555)  # read-only input is fine: it is copied first
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
