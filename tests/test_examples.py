"""Smoke tests: every example runs as a script on tiny data in seconds."""
import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def run_example(name, args, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", [str(EXAMPLES / name), *args])
    monkeypatch.syspath_prepend(str(EXAMPLES))
    torch.manual_seed(0)
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    return capsys.readouterr().out


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


def test_linear_head_bundled_mutag(monkeypatch, capsys):
    out = run_example("linear_head.py", ["--quick"], monkeypatch, capsys)
    assert "MUTAG (bundled), 40 graphs, 2 classes" in out and "epoch   3" in out
    assert "final test accuracy" in out


def test_linear_head_synthetic(monkeypatch, capsys):
    out = run_example("linear_head.py", ["--quick", "--dataset", "synthetic"], monkeypatch, capsys)
    assert "synthetic ordered events" in out and "final test accuracy" in out


def test_linear_head_on_tu_raw_files(tmp_path, monkeypatch, capsys):
    root = write_tu(tmp_path / "data", "TINY")
    os.chmod(root / "TINY" / "raw", 0o555)  # read-only input is fine: it is copied first
    try:
        out = run_example("linear_head.py", ["--quick", "--data-root", str(root), "--dataset", "TINY"],
                          monkeypatch, capsys)
    finally:
        os.chmod(root / "TINY" / "raw", 0o755)
    assert "TINY" in out and "12 graphs, 2 classes" in out and "final test accuracy" in out
    assert sorted(p.name for p in (root / "TINY").iterdir()) == ["raw"]  # nothing written beside it


def test_missing_tu_files_say_where_they_were_looked_for(tmp_path, monkeypatch, capsys):
    with pytest.raises(FileNotFoundError, match="NOPE_A.txt"):
        run_example("linear_head.py", ["--quick", "--data-root", str(tmp_path), "--dataset", "NOPE"],
                    monkeypatch, capsys)


def test_gnn_with_kong(monkeypatch, capsys):
    out = run_example("gnn_with_kong.py", ["--quick"], monkeypatch, capsys)
    assert "synthetic ordered events" in out and "fold 2:" in out
    assert "GIN + KONG  accuracy" in out and "GIN         accuracy" in out


def test_gnn_with_kong_in_model_on_tu(tmp_path, monkeypatch, capsys):
    root = write_tu(tmp_path, "TINY")
    args = ["--quick", "--in-model", "--data-root", str(root), "--dataset", "TINY"]
    out = run_example("gnn_with_kong.py", args, monkeypatch, capsys)
    assert "in the model" in out and "GIN + KONG  accuracy" in out


def test_ordered_vs_shuffled_as_a_script():
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    res = subprocess.run([sys.executable, str(EXAMPLES / "ordered_vs_shuffled.py"), "--quick"],
                         capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert "k = 2 in true order" in res.stdout and "neighbors shuffled" in res.stdout
    assert "| true - consistent | accuracy |" in res.stdout


def test_ordered_vs_shuffled_separates(monkeypatch, capsys):
    sys.modules.pop("ordered_vs_shuffled", None)
    monkeypatch.syspath_prepend(str(EXAMPLES))
    import ordered_vs_shuffled

    res = ordered_vs_shuffled.main(["--num-graphs", "120", "--splits", "4", "--shuffles", "1"])
    assert res["true"] > 0.9 and res["k1"] < 0.7, res
    assert res["consistent"] < 0.75 and res["random"] < 0.75, res
