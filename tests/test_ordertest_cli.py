"""``kong-pyg order-test``: the command line of kong_pyg.order_test."""
import json
import warnings

import numpy as np
import pytest
from ml_fake import write_fake_ml100k

from kong_pyg.cli import main
from kong_pyg.datasets import provenance_stream, write_streamspot

FAST = ["--num-graphs", "120", "--splits", "5", "--shuffles", "1", "--C", "1,100", "--inner-folds", "2", "-q"]


def test_help_shows_defaults_and_does_no_work(capsys, tmp_path):
    assert main(["order-test", "--help"]) == 0
    text = capsys.readouterr().out
    for part in ("--provenance STRENGTH", "--ml-dir DIR", "--streamspot FILE", "--dataset NAME",
                 "(default: 20)", "(default: 3)", "--threads N", "consistent shuffle", "(default: row)"):
        assert part in text
    assert list(tmp_path.iterdir()) == []


def test_finds_the_order_effect_at_strength_one(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["order-test", "--provenance", "1", *FAST, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "**Answer.** Yes: the true order beats the consistent shuffle" in printed
    assert printed.rstrip().endswith(f"wrote {out / 'order_test.md'}, {out / 'order_test.json'}, "
                                     f"{out / 'order_test.png'}")  # (it named the report only)
    res = json.loads((out / "order_test.json").read_text())
    assert res["answer"].startswith("Yes: the true order beats the consistent shuffle")  # (as --json's)
    main_cmp = next(c for c in res["comparisons"]
                    if (c["a"], c["b"], c["metric"]) == ("true", "consistent", "accuracy"))
    assert main_cmp["mean_diff"] > 0.3 and main_cmp["corrected_p"] < 0.01
    assert np.mean(res["scores"]["accuracy"]["k1"]) < 0.7  # order-free features cannot see the classes
    assert res["info"]["command"].startswith("kong-pyg order-test --provenance 1 --num-graphs 120")
    assert res["info"]["splits"] == 5 and res["info"]["options"]["own_label"] is True
    md = (out / "order_test.md").read_text()
    assert "```bash\nkong-pyg order-test --provenance 1" in md and "![order test](order_test.png)" in md
    assert (out / "order_test.png").read_bytes()[:4] == b"\x89PNG"


def test_no_order_effect_at_strength_zero(capsys):
    assert main(["order-test", "--provenance", "0", *FAST, "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    main_cmp = next(c for c in res["comparisons"]
                    if (c["a"], c["b"], c["metric"]) == ("true", "consistent", "accuracy"))
    assert main_cmp["corrected_p"] > 0.05
    assert res["settings"] == ["k1", "true", "consistent", "random", "reverse"]
    assert res["answer"].startswith("No detectable order effect")


def test_streamspot_file_and_authors_options(tmp_path, capsys):
    gen = provenance_stream(60, strength=1.0, seed=4)
    path = tmp_path / "stream.tsv"
    write_streamspot(gen.stream, str(path))
    labels = tmp_path / "labels.txt"
    labels.write_text("".join(f"{g} {int(gen.y[g])}\n" for g in range(60)))
    code = main(["order-test", "--streamspot", str(path), "--labels", str(labels), "--authors",
                 "--no-reverse", "--splits", "3", "--shuffles", "1", "--C", "1,100", "--inner-folds", "2",
                 "-q", "--json"])
    assert code == 0
    res = json.loads(capsys.readouterr().out)
    assert res["info"]["key"] == "edge_order" and "reverse" not in res["settings"]
    assert res["info"]["options"] == {"normalize": True, "blended": True, "own_label": False}
    assert res["info"]["command"].count("--authors") == 1


def test_tu_data_set_without_a_key_warns_in_the_report(capsys):
    code = main(["order-test", "--splits", "2", "--shuffles", "1", "--C", "1", "--inner-folds", "2", "-q"])
    assert code == 0
    text = capsys.readouterr().out
    assert "TU data set MUTAG" in text and "> Warning: the graphs have no 'edge_order' key" in text
    assert "| consistent" not in text


def test_movielens_folder_with_the_authors_tie_rule(tmp_path, capsys):
    ml = tmp_path / "ml"
    write_fake_ml100k(ml, num_users=24, num_items=10, ratings_per_user=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(["order-test", "--ml-dir", str(ml), "--genre", "first", "--ties", "authors",
                     "--splits", "2", "--shuffles", "1", "--C", "1", "--inner-folds", "2", "-q", "--json"])
    assert code == 0
    res = json.loads(capsys.readouterr().out)
    assert res["info"]["key"] == "edge_order" and "ties='authors'" in res["info"]["data"]
    assert list(ml.iterdir()) and sorted(p.name for p in ml.iterdir()) == ["u.data", "u.item", "u.user"]


@pytest.mark.parametrize("argv, words", [
    (["--provenance", "1", "--dataset", "MUTAG"], "give one input"),
    (["--no-plot"], "--no-plot needs --out"),
    (["--num-graphs", "50"], "--num-graphs only applies to --provenance"),
])
def test_one_line_errors(argv, words, capsys):
    assert main(["order-test", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and "\n" not in err and err.startswith("kong-pyg order-test: error:")


def test_device_is_checked_before_the_data(capsys):
    assert main(["order-test", "--device", "gpu7"]) == 2
    err = capsys.readouterr().err
    assert "'--device' must be a device string such as 'cpu' or 'cuda:0' (got 'gpu7')" in err


def test_cache_dir_is_an_option_here_too(capsys):
    """The cache message names --cache-dir: order-test has it, as classify does (one definition)."""
    argv = ["order-test", "--dataset", "PROTEINS", "--download", "--cache-dir", "/proc/no-cache-here", "-q"]
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2 and "cannot create the cache folder /proc/no-cache-here" in err
    assert err.rstrip().endswith("environment variable or --cache-dir")
    assert main(["order-test", "--provenance", "1", "--cache-dir", "/tmp", "-q"]) == 2
    assert "--cache-dir is where TU data sets are processed; it does not apply to --provenance" in \
        capsys.readouterr().err


def test_without_matplotlib_the_report_is_written_and_a_warning_says_so(tmp_path, monkeypatch):
    """The note was a bare stderr line with an unquoted 'kong-pyg[plot]' (a zsh glob), not a warning line."""
    import kong_pyg.evaluation.plots as plots

    def missing():
        raise ImportError("plots need matplotlib: pip install 'kong-pyg[plot]'")

    monkeypatch.setattr(plots, "pyplot", missing)
    out = tmp_path / "out"
    with pytest.warns(UserWarning, match=r"^plots need matplotlib: pip install 'kong-pyg\[plot\]'; no plot$"):
        assert main(["order-test", "--provenance", "1", *FAST, "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["order_test.json", "order_test.md"]


def test_progress_lines_name_the_program_as_the_other_subcommands_do(monkeypatch, capsys):
    """order-test's progress lines began 'order-test:', every other line 'kong-pyg CMD:'."""
    from kong_pyg.cli import order_test

    def stop(*args, **kwargs):
        raise ValueError("stopped here")

    monkeypatch.setattr(order_test, "load", stop)
    assert main(["order-test", "--provenance", "1"]) == 2
    assert capsys.readouterr().err.splitlines() == ["kong-pyg order-test: loading the data",
                                                   "kong-pyg order-test: error: stopped here"]
