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
from kong_pyg.experiments.table2 import (
    C_GRID,
    C_GRID_NORMALIZED,
    DEFAULT_METHODS,
    PAIRS,
    FeatureCache,
    accuracy_curve,
    method_grids,
    run_table2,
    shuffle_seed,
    table2_methods,
)


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
    assert same["corrected_t"] == 0.0  # (0 / 0 was NaN, written as NaN into the JSON files)
    assert paired_comparison(a + 0.1, a, 0.2)["wilcoxon_p"] == 0.0625  # (was p = 0 and t = inf)
    with pytest.raises(ValueError, match="same length"):
        paired_comparison(a, b[:3], 0.2)
    with pytest.raises(ValueError, match="test_fraction"):
        paired_comparison(a, b, 1.0)
    assert "no significant difference" in verdict(c, "K-2", "K-2 shuffled", "accuracy")
    strong = dict(c, corrected_p=0.001, mean_diff=0.05)
    text = verdict(strong, "K-2", "K-2 shuffled", "accuracy")
    assert "K-2 is significantly better than K-2 shuffled" in text


@pytest.mark.parametrize("n, p", [(2, 0.5), (3, 0.25), (5, 0.0625), (8, 2 / 2 ** 8)])
def test_paired_comparison_without_spread(n, p):
    # every split differs by the same amount: no spread for the t-tests, an exact Wilcoxon p of 2 / 2^n
    for a, b in (([0.75] * n, [1.0] * n), ([0.8, 0.7] * n, [0.7, 0.6] * n)):
        a, b = a[:n], b[:n]  # (0.8 - 0.7 and 0.7 - 0.6 differ by rounding only)
        c = paired_comparison(a, b, 0.2)
        assert c["wilcoxon_p"] == p and math.isclose(p, stats.wilcoxon(np.subtract(a, b)).pvalue)
        assert math.isnan(c["t_p"]) and math.isnan(c["corrected_p"]) and math.isnan(c["corrected_t"])
        assert c["sd_diff"] == 0.0 and c["ties"] == 0 and c["wins"] + c["losses"] == n
    same = paired_comparison([0.8, 0.7, 0.9], [0.8, 0.7, 0.9], 0.2)
    assert (same["t_p"], same["wilcoxon_p"], same["corrected_p"], same["corrected_t"]) == (1.0, 1.0, 1.0, 0.0)


def test_paired_comparison_wilcoxon_equals_scipy():
    rng = np.random.default_rng(0)
    for n in (2, 3, 5, 8, 12, 20):
        a, b = rng.uniform(0.5, 1.0, n), rng.uniform(0.5, 1.0, n)
        d = a - b
        assert np.unique(np.abs(d)).size == n and np.all(d != 0)
        c = paired_comparison(a, b, 0.25)
        assert math.isclose(c["wilcoxon_p"], stats.wilcoxon(a, b).pvalue)
        assert math.isclose(c["wilcoxon_p"], stats.wilcoxon(a, b, zero_method="pratt").pvalue)
        assert math.isclose(c["t_p"], stats.ttest_rel(a, b).pvalue)


def test_verdict_without_spread():
    from kong_pyg.cli.common import plain_json

    c = paired_comparison([0.75, 0.75], [1.0, 1.0], 0.2)
    text = verdict(c, "true", "reverse", "accuracy")
    assert text == ("true − reverse: -25.00 points of accuracy on average: true is worse than reverse by the "
                    "same amount on every split, so there is no spread to test and the t-tests are undefined "
                    "(wins/ties/losses 0/0/2; paired t undefined, Wilcoxon p = 0.5 with 2 splits, corrected "
                    "resampled t undefined).")
    assert "significant" not in text and "e+00" not in text
    # as written to and read back from JSON (null), and with many splits: still not called significant
    back = json.loads(json.dumps(plain_json(c), allow_nan=False))
    assert back["t_p"] is None and back["corrected_t"] is None and back["wilcoxon_p"] == 0.5
    assert verdict(back, "true", "reverse", "accuracy") == text
    many = paired_comparison([0.9] * 10, [0.8] * 10, 0.2)
    assert many["wilcoxon_p"] < 0.05
    text = verdict(many, "true", "reverse", "accuracy")
    assert "true is better than reverse by the same amount on every split" in text
    assert "significant" not in text and "Wilcoxon p = 0.002 with 10 splits" in text


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
    assert len(res["splits"]["K-2"]["acc"]) == 4 and set(res["splits"]["K-2"]) >= {"acc", "auc", "C", "fit_s"}
    with pytest.raises(ValueError, match="unknown method"):
        run_table2(graphs, ["K-9"], n_splits=2)
    assert res["inner_folds_used"] == [3]


def test_fewer_inner_folds_than_asked_are_said(tmp_path):
    """A training part with few graphs of a class gets fewer inner folds: a warning and the report say so."""
    stream, y = synthetic_event_stream(12, seed=2)
    graphs = stream_to_graphs(stream, y)
    with pytest.warns(UserWarning, match="inner CV: 20 folds asked, 4 used"):
        res = run_table2(graphs, ["K-1"], n_splits=2, C_grid=(1.0,), inner_folds=20)
    assert res["inner_folds"] == 20 and res["inner_folds_used"] == [4]
    from kong_pyg.experiments.table2_report import setup_lines

    assert "C chosen by 4 (of 20 asked)-fold stratified CV" in "\n".join(setup_lines(res))
    from kong_pyg.evaluation.splits import random_splits

    with pytest.raises(ValueError, match="the smallest class has 1 graph; a stratified split needs 2"):
        random_splits(np.array([0, 0, 0, 1]), 2, test_size=0.5)


def test_the_protocol_lines_say_the_shuffle_seeds_and_c_ties_as_the_code_does():
    """The report said "split s the seed s mod N" (the code uses seed + (s mod N)) and "ties: the smaller C"
    (ties go to the C listed first, the larger one in a descending grid)."""
    from kong_pyg.experiments.table2 import score_split, shuffle_seed
    from kong_pyg.experiments.table2_report import setup_lines

    res = {"n_graphs": 546, "class_counts": [273, 273], "n_splits": 30, "test_size": 0.2, "seed": 3,
           "C_grid": [100.0, 10.0], "C_grid_normalized": [1.0], "inner_folds": 5, "shuffle_seeds": 10}
    text = "\n".join(setup_lines(res))
    assert shuffle_seed(3, 12, 10) == 5 and "split s the seed 3 + (s mod 10)" in text
    assert "(split s the seed 3 + s)" in "\n".join(setup_lines({**res, "shuffle_seeds": None}))
    assert "split s the seed (s mod 10)" in "\n".join(setup_lines({**res, "seed": 0}))
    y = np.arange(60) % 2
    assert score_split(np.ones((60, 1)), y, np.arange(45), np.arange(45, 60), C_grid=[100.0, 10.0, 1.0],
                       inner_folds=3)["C"] == 100.0
    assert "ties: the C listed first" in text


def test_methods_registry():
    ms = table2_methods()
    assert list(ms)[:7] == ["K-1", "K-2", "K-2 consistent", "K-2 shuffled", "K-2 reverse", "WL", "KW"]
    assert ms["K-2 shuffled"].seeded and ms["K-2 consistent"].seeded and not ms["K-2"].seeded
    assert all(m in ms for m in DEFAULT_METHODS)
    # the normalized rows (and only those) get the wide C grid
    grids = method_grids(list(ms), C_GRID, C_GRID_NORMALIZED)
    wide = {m for m, g in grids.items() if g == [float(c) for c in C_GRID_NORMALIZED]}
    assert wide == {"K-1 authors", "K-2 authors", "K-2 authors consistent", "K-2 authors shuffled",
                    "K-2 authors reverse", "K-1 graph-norm", "K-2 blended graph-norm"}
    assert max(C_GRID_NORMALIZED) == 1e6 and max(C_GRID) == 1e4
    # every pair's rows exist; the honest control comes first
    assert PAIRS[0] == ("K-2", "K-2 consistent") and all(a in ms and b in ms for a, b in PAIRS)


def test_authors_rows_are_the_authors_features():
    # the registry's "K-2 authors" is KongVectorizer with the authors' options (no own label, 1+2-grams,
    # unit graph vectors): same matrix
    from kong_pyg import KongVectorizer

    stream, y = synthetic_event_stream(8, seed=1)
    graphs = stream_to_graphs(stream, y)
    X = table2_methods()["K-2 authors"].features(graphs, 0).toarray()
    ref = KongVectorizer(k=2, hops=1, kernel="cosine", degree=1, own_label=False, blended=True,
                         normalize=True).fit_transform(graphs).toarray()
    assert np.allclose(X, ref) and np.allclose(np.linalg.norm(X, axis=1), 1.0)
    own = table2_methods()["K-2 blended graph-norm"].features(graphs, 0).toarray()
    assert X.shape != own.shape or not np.allclose(X, own)


def test_shuffle_seeds_cycle():
    assert [shuffle_seed(3, s, None) for s in range(4)] == [3, 4, 5, 6]
    assert [shuffle_seed(3, s, 2) for s in range(5)] == [3, 4, 3, 4, 3]
    stream, y = synthetic_event_stream(30, seed=2)
    graphs = stream_to_graphs(stream, y)
    cache = FeatureCache(graphs, table2_methods())
    run_table2(graphs, ["K-2", "K-2 shuffled"], n_splits=5, C_grid=(1.0,), inner_folds=2, cache=cache,
               shuffle_seeds=2)
    seeds = sorted(k[1] for k in cache.store if k[0] == "K-2 shuffled")
    assert seeds == [0, 1]
    with pytest.raises(ValueError, match="'shuffle_seeds' must be"):
        run_table2(graphs, ["K-2"], n_splits=2, shuffle_seeds=0)
    with pytest.raises(ValueError, match="'device' is 'meta', a device that holds no values"):
        run_table2(graphs, ["K-2"], n_splits=2, device="meta")
    with pytest.raises(ValueError, match="'device' is 'meta'"):
        accuracy_curve(graphs, ["K-2"], n_splits=2, device="meta")
    opts = dict(n_splits=5, C_grid=(1.0,), inner_folds=2, cache=cache, shuffle_seeds=2)
    on_cpu = run_table2(graphs, ["K-2", "K-2 shuffled"], device="cpu", **opts)
    same = run_table2(graphs, ["K-2", "K-2 shuffled"], **opts)
    for name, row in same["splits"].items():  # all but the fit seconds
        assert {k: v for k, v in on_cpu["splits"][name].items() if k != "fit_s"} == \
            {k: v for k, v in row.items() if k != "fit_s"}


def test_resume_skips_finished_methods_and_refuses_another_protocol(tmp_path, monkeypatch):
    import kong_pyg.evaluation.harness as harness

    stream, y = synthetic_event_stream(30, seed=3)
    graphs = stream_to_graphs(stream, y)
    path = str(tmp_path / "state.json")
    first = run_table2(graphs, ["K-1", "K-2"], n_splits=3, C_grid=(1.0, 10.0), inner_folds=2, resume=path,
                       tag="row")
    state = json.loads((tmp_path / "state.json").read_text())
    assert sorted(state["done"]) == ["K-1", "K-2"] and state["protocol"]["tag"] == "row"
    assert len(state["done"]["K-2"]["acc"]) == 3
    # a file from before the per-graph random order (no version) holds other shuffled scores: another run
    old = dict(state, protocol={k: v for k, v in state["protocol"].items() if k != "random_order"})
    (tmp_path / "old.json").write_text(json.dumps(old))
    with pytest.raises(ValueError, match="belongs to another run \\(random_order: '\\(none\\)' there, "):
        run_table2(graphs, ["K-1"], n_splits=3, C_grid=(1.0, 10.0), inner_folds=2,
                   resume=str(tmp_path / "old.json"), tag="row")

    def no_fit(*a, **k):
        raise AssertionError("a finished method was fitted again")

    monkeypatch.setattr(harness, "evaluate_features", no_fit)
    again = run_table2(graphs, ["K-1", "K-2"], n_splits=3, C_grid=(1.0, 10.0), inner_folds=2, resume=path,
                       tag="row")
    assert again["splits"] == first["splits"] and again["paired"] == first["paired"]
    assert again["summary"]["K-2"]["dim"] == first["summary"]["K-2"]["dim"]
    with pytest.raises(ValueError, match="belongs to another run \\(n_splits: 3 there, 4 here\\)"):
        run_table2(graphs, ["K-1", "K-2"], n_splits=4, C_grid=(1.0, 10.0), inner_folds=2, resume=path,
                   tag="row")
    # the same protocol on other graphs or labels: another run (its rows were reused before)
    other = stream_to_graphs(*synthetic_event_stream(30, seed=4))
    with pytest.raises(ValueError, match="belongs to another run"):
        run_table2(other, ["K-1", "K-2"], n_splits=3, C_grid=(1.0, 10.0), inner_folds=2, resume=path,
                   tag="row")
    # rows that are not scores: an error naming the file (they were printed before, or crashed)
    for field, value, message in (("acc", [5.0, 7.0, 0.5], "needs 3 acc scores in \\[0, 1\\]"),
                                  ("auc", [float("nan")] * 3, "needs 3 auc scores"),
                                  ("C", [3.0, 1.0, 1.0], "needs 3 C values from the grid"),
                                  ("fits", "many", "needs a count 'fits'"),
                                  ("auc", None, "needs 3 auc scores")):
        bad = json.loads(json.dumps(state))
        bad["done"]["K-2"][field] = value
        (tmp_path / "bad.json").write_text(json.dumps(bad))
        with pytest.raises(ValueError, match=f"bad.json': the row of 'K-2' {message}"):
            run_table2(graphs, ["K-1", "K-2"], n_splits=3, C_grid=(1.0, 10.0), inner_folds=2,
                       resume=str(tmp_path / "bad.json"), tag="row")
    for text in ("[" * 100000 + "]" * 100000, '{"protocol": '):
        (tmp_path / "bad.json").write_text(text)
        with pytest.raises(ValueError, match="bad.json' is not a resume file|belongs to another run"):
            run_table2(graphs, ["K-1", "K-2"], n_splits=3, C_grid=(1.0, 10.0), inner_folds=2,
                       resume=str(tmp_path / "bad.json"), tag="row")
    # a file of another kong_pyg version: its features may differ (they were reused without notice)
    other_version = dict(state, protocol=dict(state["protocol"], kong_pyg="0.1.0"))
    (tmp_path / "old.json").write_text(json.dumps(other_version))
    from kong_pyg import __version__

    differs = f"belongs to another run \\(kong_pyg: '0.1.0' there, '{__version__}' here"
    with pytest.raises(ValueError, match=differs):
        run_table2(graphs, ["K-1", "K-2"], n_splits=3, C_grid=(1.0, 10.0), inner_folds=2,
                   resume=str(tmp_path / "old.json"), tag="row")


def test_resume_takes_numpy_numbers_and_refuses_a_folder_before_any_fit(tmp_path, monkeypatch):
    """NumPy scalars crashed the first write of the resume file, after the first method's fits (all
    lost); a folder given as the file failed there too."""
    import kong_pyg.evaluation.harness as harness

    graphs = stream_to_graphs(*synthetic_event_stream(30, seed=3))
    path = tmp_path / "state.json"
    run_table2(graphs, ["K-1"], n_splits=np.int64(3), C_grid=(1.0,), inner_folds=np.int64(2),
               test_size=np.float64(0.25), seed=np.int64(1), shuffle_seeds=np.int32(2), resume=str(path))
    protocol = json.loads(path.read_text())["protocol"]
    assert (protocol["n_splits"], protocol["inner_folds"], protocol["test_size"], protocol["seed"],
            protocol["shuffle_seeds"]) == (3, 2, 0.25, 1, 2)

    def no_fit(*a, **k):
        raise AssertionError("fitted before the resume file was checked")

    monkeypatch.setattr(harness, "evaluate_features", no_fit)
    with pytest.raises(ValueError, match="is a folder, not a file: give another resume file"):
        run_table2(graphs, ["K-1"], n_splits=3, C_grid=(1.0,), inner_folds=2, resume=str(tmp_path))


def test_paired_comparisons_carry_the_corrected_interval():
    from kong_pyg.datasets import ProvenanceGraphs

    graphs = ProvenanceGraphs(80, strength=1.0, seed=0)  # has the event key 'edge_order'
    res = run_table2(graphs, ["K-1", "K-2", "K-2 consistent", "K-2 shuffled"], n_splits=4,
                     C_grid=(1.0, 100.0), inner_folds=2)
    assert list(res["paired"]) == ["K-2 vs K-2 consistent", "K-2 vs K-2 shuffled",
                                   "K-2 consistent vs K-2 shuffled", "K-2 vs K-1"]
    c = res["paired"]["K-2 vs K-2 consistent"]["acc"]
    d = np.array(res["splits"]["K-2"]["acc"]) - np.array(res["splits"]["K-2 consistent"]["acc"])
    frac = 0.2 / 0.8
    half = stats.t.ppf(0.975, 3) * math.sqrt((1 / 4 + frac) * d.var(ddof=1))
    assert math.isclose(c["corrected_lo"], d.mean() - half)
    assert math.isclose(c["corrected_hi"], d.mean() + half)
    # the classes differ only in event order: true order beats the consistent shuffle
    assert c["mean_diff"] > 0.2


def test_cli_table2_on_tiny_data(tmp_path, capsys):
    ml = tmp_path / "ml"
    write_fake_ml100k(ml, num_users=24, num_items=10, ratings_per_user=5)
    out = tmp_path / "out"
    out.mkdir()
    # (with a byte-order mark and CRLF line ends, as a Windows editor writes it: the mark was copied into
    # table2.md)
    (out / "table2_notes.md").write_bytes(b"\xef\xbb\xbf## Discussion\r\n\r\nwritten by hand\r\n")
    (out / "table2_curve.png").write_bytes(b"an earlier run's curve")  # (not this run's: --no-plot)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(["table2", "--ml-dir", str(ml), "--root", str(tmp_path / "root"), "--genre", "first",
                     "--splits", "2", "--inner-folds", "2", "--C", "1,10", "--C-normalized", "10,1000",
                     "--curve-splits", "2", "--fractions", "0.5,0.8", "--out", str(out), "--no-plot", "-q",
                     "--resume", str(tmp_path / "state.json")])
    assert code == 0
    assert not (out / "table2_curve.png").exists()  # an earlier run's curve beside this run's table: removed
    text = (out / "table2.md").read_text()
    for row in ("| K-1 |", "| K-2 |", "| K-2 consistent |", "| K-2 shuffled |", "| K-2 reverse |",
                "| WL |", "| KW |", "| K-2 authors |", "| K-2 authors consistent |",
                "| K-2 - K-2 consistent | row | acc |", "| K-2 - K-2 consistent | authors | acc |",
                "## Results, ties: row", "## Results, ties: authors", "Figure 2 analogue", "65.83 / 71.00",
                "share their second"):
        assert row in text, row
    assert "--ml-dir PATH/ml-100k" in text and "--ties row,authors" in text
    assert text.rstrip().endswith("## Discussion\n\nwritten by hand") and "\ufeff" not in text
    res = json.loads((out / "table2.json").read_text())
    assert set(res["tables"]) == {"row", "authors"} and res["tables"]["row"]["n_graphs"] == 24
    assert res["tables"]["authors"]["summary"]["K-2 authors"]["C_grid"] == [10.0, 1000.0]
    assert res["tables"]["authors"]["summary"]["K-2"]["C_grid"] == [1.0, 10.0]
    assert 0 <= res["datasets"]["row"]["tie_share"]["all"] <= 1
    women, men = res["datasets"]["row"]["women"], res["datasets"]["row"]["men"]
    assert women + men == 24 and f"{women:,} women and {men:,} men here" in text  # not the default's 273
    assert set(res["curve"]["acc"]) == {"K-1", "K-2", "K-2 consistent", "K-2 shuffled"}
    assert (tmp_path / "state-row.json").is_file() and (tmp_path / "state-authors.json").is_file()
    assert f"wrote {out / 'table2.md'}, {out / 'table2.json'}\n" in capsys.readouterr().out  # (no figure)
    assert main(["table2", "--list"]) == 0
    assert main(["table2", "--methods", "nope", "--ml-dir", str(ml)]) == 2
    assert main(["table2"]) == 2  # neither --ml-dir nor --root
    assert main(["table2", "--ties", "row,nope", "--ml-dir", str(ml)]) == 2


def test_plot_fraction_curve(tmp_path):
    pytest.importorskip("matplotlib")
    from kong_pyg.evaluation.plots import plot_fraction_curve

    s = mean_ci([0.6, 0.7])
    curve = {"fractions": [0.1, 0.8], "n_splits": 2, "acc": {"K-1": {"0.1": s, "0.8": s}}}
    plot_fraction_curve(curve, str(tmp_path / "c.png"))
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"
    import io

    buffer = io.BytesIO()  # a file object works too (no folder to make)
    plot_fraction_curve(curve, buffer)
    assert buffer.getvalue()[:4] == b"\x89PNG"


def test_a_sketch_curve_of_the_exact_row_alone_and_failed_saves_close_their_figure(tmp_path):
    """A curve holding only the exact row (drawn as a line, as documented) failed in matplotlib's log scale
    ("Data cannot be log-scaled"), and a failed save left its figure open in pyplot."""
    pytest.importorskip("matplotlib")
    from kong_pyg.evaluation.plots import plot_sketch_curve, pyplot

    open_before = len(pyplot().get_fignums())
    plot_sketch_curve([{"dim": None, "accuracy_mean": 0.8, "accuracy_std": 0.1}], str(tmp_path / "e.png"))
    assert (tmp_path / "e.png").read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(ValueError):  # (a format matplotlib does not write)
        plot_sketch_curve([{"dim": 64, "accuracy_mean": 0.8, "accuracy_std": 0.1}], str(tmp_path / "c.nope"))
    assert len(pyplot().get_fignums()) == open_before and not (tmp_path / "c.nope").exists()


def test_a_sketch_curve_draws_its_points_and_error_bars_in_percent(tmp_path, monkeypatch):
    """The curve is drawn in percent: the means and their error bars (the standard deviations) both times
    100, and the exact row as a line at its mean; no test read what was drawn."""
    pytest.importorskip("matplotlib")
    from matplotlib.axes import Axes

    from kong_pyg.evaluation.plots import plot_sketch_curve

    drawn = {}
    real_errorbar, real_axhline = Axes.errorbar, Axes.axhline

    def errorbar(self, x, y, *args, **kwargs):
        drawn.update(x=list(x), y=list(y), yerr=list(kwargs["yerr"]))
        return real_errorbar(self, x, y, *args, **kwargs)

    def axhline(self, y=0, *args, **kwargs):
        drawn["exact"] = y
        return real_axhline(self, y, *args, **kwargs)

    monkeypatch.setattr(Axes, "errorbar", errorbar)
    monkeypatch.setattr(Axes, "axhline", axhline)
    curve = [{"dim": 64, "accuracy_mean": 0.71, "accuracy_std": 0.02},
             {"dim": 256, "accuracy_mean": 0.8, "accuracy_std": 0.015},
             {"dim": None, "accuracy_mean": 0.83, "accuracy_std": 0.01}]
    plot_sketch_curve(curve, str(tmp_path / "c.png"))
    assert drawn["x"] == [64, 256]
    np.testing.assert_allclose(drawn["y"], [71.0, 80.0])
    np.testing.assert_allclose(drawn["yerr"], [2.0, 1.5])
    assert drawn["exact"] == pytest.approx(83.0)


def test_json_outputs_are_plain_json():
    from kong_pyg.cli.common import plain_json

    value = {"t": float("nan"), "rows": [1.0, float("inf"), (2, -float("inf"))], "name": "x"}
    assert json.loads(json.dumps(plain_json(value), allow_nan=False)) == \
        {"t": None, "rows": [1.0, None, [2, None]], "name": "x"}


def test_no_interval_without_spread():
    """Where the corrected test is undefined, its interval is too (it was [d, d], a zero width)."""
    from kong_pyg.evaluation.stats import format_interval
    from kong_pyg.ordertest import with_corrected_interval

    flat = with_corrected_interval(paired_comparison([0.8, 0.8], [0.7, 0.7], 0.2), 0.2)
    assert math.isnan(flat["corrected_lo"]) and math.isnan(flat["corrected_hi"])
    assert format_interval(flat) == "undefined"
    assert format_interval({"corrected_lo": None, "corrected_hi": None}) == "undefined"  # (read from JSON)
    spread = with_corrected_interval(paired_comparison([0.8, 0.7, 0.9], [0.7, 0.7, 0.6], 0.2), 0.2)
    lo, hi = 100 * spread["corrected_lo"], 100 * spread["corrected_hi"]
    assert format_interval(spread) == f"[{lo:+.2f}, {hi:+.2f}]"
    assert spread["corrected_lo"] < spread["mean_diff"] < spread["corrected_hi"]
