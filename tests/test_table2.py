import json
import math
import warnings

import numpy as np
import pytest
from ml_fake import write_fake_ml100k
from scipy import stats

from kong_pyg.cli import main
from kong_pyg.datasets import stream_to_graphs, synthetic_event_stream
from kong_pyg.evaluation.stats import mean_ci, paired_comparison, verdict
from kong_pyg.experiments.table2 import run_table2, table2_methods


def test_mean_ci():
    x = [0.6, 0.7, 0.65, 0.75]
    s = mean_ci(x)
    half = stats.t.ppf(0.975, 3) * np.std(x, ddof=1) / 2
    assert math.isclose(s["mean"], 0.675) and math.isclose(s["half"], half)
    assert math.isclose(s["lo"], 0.675 - half) and s["n"] == 4
    with pytest.raises(ValueError):
        mean_ci([])


def test_paired_comparison():
    a = np.array([0.70, 0.72, 0.68, 0.75, 0.71])
    b = np.array([0.66, 0.70, 0.69, 0.70, 0.66])
    c = paired_comparison(a, b, test_fraction=0.2)
    d = a - b
    assert math.isclose(c["mean_diff"], d.mean()) and (c["wins"], c["ties"], c["losses"]) == (4, 0, 1)
    assert math.isclose(c["t_p"], stats.ttest_rel(a, b).pvalue)
    t = d.mean() / math.sqrt((1 / 5 + 0.25) * d.var(ddof=1))
    assert math.isclose(c["corrected_t"], t) and math.isclose(c["corrected_p"], 2 * stats.t.sf(abs(t), 4))
    assert c["corrected_p"] > c["t_p"]  # the correction widens the variance
    same = paired_comparison(a, a, 0.2)
    assert same["t_p"] == same["wilcoxon_p"] == same["corrected_p"] == 1.0 and same["ties"] == 5
    with pytest.raises(ValueError, match="same length"):
        paired_comparison(a, b[:3], 0.2)
    with pytest.raises(ValueError, match="test_fraction"):
        paired_comparison(a, b, 1.0)
    assert "no significant difference" in verdict(c, "K-2", "K-2 shuffled", "accuracy")
    strong = dict(c, corrected_p=0.001, mean_diff=0.05)
    text = verdict(strong, "K-2", "K-2 shuffled", "accuracy")
    assert "K-2 is significantly better than K-2 shuffled" in text


def test_true_order_beats_shuffled_on_order_only_classes():
    # the synthetic StreamSpot classes differ only in event order
    stream, y = synthetic_event_stream(60, seed=2)
    graphs = stream_to_graphs(stream, y)
    res = run_table2(graphs, ["K-1", "K-2", "K-2 shuffled"], n_splits=4, C_grid=(1.0, 100.0), inner_folds=3)
    s = res["summary"]
    assert s["K-2"]["acc"]["mean"] > 0.9
    assert s["K-1"]["acc"]["mean"] < 0.75 and s["K-2 shuffled"]["acc"]["mean"] < 0.75
    cmp = res["paired"]["K-2 vs K-2 shuffled"]["acc"]
    assert cmp["wins"] == 4 and cmp["mean_diff"] > 0.2
    assert len(res["splits"]["K-2"]) == 4 and set(res["splits"]["K-2"][0]) >= {"acc", "auc", "C", "train_s"}
    with pytest.raises(ValueError, match="unknown method"):
        run_table2(graphs, ["K-9"], n_splits=2)


def test_methods_registry():
    ms = table2_methods()
    assert list(ms)[:5] == ["K-1", "K-2", "K-2 shuffled", "WL", "KW"]
    assert ms["K-2 shuffled"].seeded and not ms["K-2"].seeded


def test_cli_table2_on_tiny_data(tmp_path, capsys):
    ml = tmp_path / "ml"
    write_fake_ml100k(ml, num_users=24, num_items=10, ratings_per_user=5)
    out = tmp_path / "out"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(["table2", "--ml-dir", str(ml), "--root", str(tmp_path / "root"), "--genre", "first",
                     "--splits", "2", "--inner-folds", "2", "--C", "1,10", "--curve-splits", "2",
                     "--fractions", "0.5,0.8", "--out", str(out), "--no-plot", "-q"])
    assert code == 0
    text = (out / "table2.md").read_text()
    for row in ("| K-1 |", "| K-2 |", "| K-2 shuffled |", "| WL |", "| KW |", "K-2 vs K-2 shuffled",
                "Figure 2 analogue", "65.83 / 71.00"):
        assert row in text
    assert "--ml-dir PATH/ml-100k" in text
    res = json.loads((out / "table2.json").read_text())
    assert res["table"]["n_graphs"] == 24 and res["table"]["n_splits"] == 2
    assert set(res["curve"]["acc"]) == {"K-1", "K-2", "K-2 shuffled"}
    assert "wrote" in capsys.readouterr().out
    assert main(["table2", "--list"]) == 0
    assert main(["table2", "--methods", "nope", "--ml-dir", str(ml)]) == 2
    assert main(["table2"]) == 2  # neither --ml-dir nor --root


def test_plot_fraction_curve(tmp_path):
    pytest.importorskip("matplotlib")
    from kong_pyg.evaluation.plots import plot_fraction_curve

    s = mean_ci([0.6, 0.7])
    curve = {"fractions": [0.1, 0.8], "n_splits": 2, "acc": {"K-1": {"0.1": s, "0.8": s}}}
    plot_fraction_curve(curve, str(tmp_path / "c.png"))
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"
