"""kong_pyg.order_test: does order matter in my data?"""
import json
import warnings

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

import kong_pyg
from kong_pyg.datasets import ProvenanceGraphs, provenance_stream, write_streamspot
from kong_pyg.ordertest import graph_labels, load_ordered_graphs, order_features

FAST = dict(splits=5, shuffles=1, C=(1.0, 100.0), inner_folds=2)


def test_shuffled_settings_score_the_mean_over_their_seeds():
    """With several shuffle seeds a shuffled setting's score on a split is the mean over its seeds, and
    the comparisons (the answer) read those means; every other test ran one seed, where seed 0 alone
    would have passed for the mean."""
    res = kong_pyg.order_test(ProvenanceGraphs(120, strength=0.3, seed=0), **{**FAST, "shuffles": 3})
    for m in res.scores:
        for s in ("consistent", "random"):
            per_seed = np.asarray(res.seed_scores[m][s])
            assert per_seed.shape == (3, 5) and not np.all(per_seed == per_seed[0])
            np.testing.assert_allclose(res.scores[m][s], per_seed.mean(axis=0), rtol=0, atol=1e-15)
    main = res.comparison("true", "consistent")
    d = np.subtract(res.scores["accuracy"]["true"], res.scores["accuracy"]["consistent"])
    assert main["mean_diff"] == pytest.approx(d.mean(), abs=1e-12)


def test_public_name_is_the_function():
    import kong_pyg.ordertest  # noqa: F401  (importing the module must not shadow the function)

    assert callable(kong_pyg.order_test) and kong_pyg.order_test.__name__ == "order_test"
    assert kong_pyg._LAZY["order_test"] == "kong_pyg.ordertest"


def test_order_matters_on_the_ordered_benchmark(tmp_path):
    ds = ProvenanceGraphs(120, strength=1.0, seed=0)
    res = kong_pyg.order_test(ds, **FAST)
    assert res.settings == ["k1", "true", "consistent", "random", "reverse"]
    main = res.comparison("true", "consistent")
    assert main["mean_diff"] > 0.3 and main["corrected_p"] < 0.01
    assert main["corrected_lo"] > 0
    assert res.comparison("true", "k1")["mean_diff"] > 0.3
    assert res.answer().startswith("Yes: the true order beats the consistent shuffle")
    assert np.mean(res.scores["accuracy"]["k1"]) < 0.7  # k = 1 cannot see the classes
    assert set(res.scores) == {"accuracy", "auc"} and len(res.scores["accuracy"]["true"]) == 5
    text = res.to_markdown("Provenance, strength 1")
    assert "## Provenance, strength 1" in text and "| true - consistent | accuracy |" in text
    back = kong_pyg.OrderTestResult.from_dict(json.loads(json.dumps(res.to_dict())))  # (as reports do)
    assert back.answer() == res.answer() and back.to_markdown("t") == res.to_markdown("t")
    res.plot(tmp_path / "new" / "order.png")  # its folder is made
    assert (tmp_path / "new" / "order.png").stat().st_size > 1000


def test_no_order_effect_at_strength_zero():
    ds = ProvenanceGraphs(120, strength=0.0, seed=0)
    res = kong_pyg.order_test(ds, **FAST, reverse=False)
    assert "reverse" not in res.settings
    main = res.comparison("true", "consistent")
    assert main["corrected_p"] > 0.05
    assert res.answer().startswith("No detectable order effect")


def test_graphs_without_a_key_get_the_per_graph_shuffle_only_with_a_warning():
    ds = ProvenanceGraphs(60, strength=1.0, seed=1)
    graphs = []
    for i in range(len(ds)):
        g = ds[i]
        graphs.append(Data(x=g.x, edge_index=g.edge_index, edge_attr=g.edge_attr, y=g.y))
    with pytest.warns(UserWarning, match="an edge's position in its graph is not one"):
        res = kong_pyg.order_test(graphs, **FAST)
    assert "consistent" not in res.settings
    assert res.comparison("true", "random")["mean_diff"] > 0.2
    assert "No per-edge key" in res.answer()
    assert any("not one" in w for w in res.info["warnings"])


def test_interaction_log_input_and_labels():
    rng = np.random.default_rng(0)
    n_users, n_items = 30, 12
    log = dict(user=torch.from_numpy(rng.integers(0, n_users, 400)),
               item=torch.from_numpy(rng.integers(0, n_items, 400)),
               time=torch.from_numpy(rng.integers(0, 50, 400)),
               user_label=torch.from_numpy(rng.integers(0, 3, n_users)),
               item_label=torch.from_numpy(rng.integers(0, 4, n_items)),
               y=torch.arange(n_users) % 2)
    graphs, key = load_ordered_graphs(log)
    assert key == "edge_order" and len(graphs) == n_users
    assert graph_labels(graphs).tolist() == (np.arange(n_users) % 2).tolist()
    with pytest.raises(ValueError, match=r"needs the keys \['item_label'\]"):
        load_ordered_graphs({k: v for k, v in log.items() if k != "item_label"})


def test_streamspot_file_input_keys_events_by_arrival(tmp_path):
    gen = provenance_stream(12, strength=1.0, seed=4)
    path = tmp_path / "stream.tsv"
    write_streamspot(gen.stream, str(path))
    labels = tmp_path / "labels.txt"
    labels.write_text("".join(f"{g} {int(gen.y[g])}\n" for g in range(12)))
    graphs, key = load_ordered_graphs(str(path), labels=str(labels))
    assert key == "edge_order"
    reference = ProvenanceGraphs(12, strength=1.0, seed=4)  # edge_order = arrival position
    for i, gid in enumerate(graphs.graph_ids):
        assert torch.equal(graphs[i].edge_order, reference[int(gid)].edge_order)
        assert torch.equal(graphs[i].edge_index, reference[int(gid)].edge_index)
    with pytest.raises(ValueError, match="needs 'labels'"):
        load_ordered_graphs(str(path))
    # malformed lines are skipped as before, with a warning and a note (they were dropped without a word)
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tb\n" + path.read_text() + "x\ty\tz\n")
    notes = []
    with pytest.warns(UserWarning, match=r"bad.tsv: 2 malformed lines skipped; line 1: .*; line \d+: "):
        again, _ = load_ordered_graphs(str(bad), labels=str(labels), notes=notes)
    assert len(notes) == 1 and notes[0].startswith(f"{bad}: 2 malformed lines skipped")
    assert all(torch.equal(again[i].edge_index, graphs[i].edge_index) for i in range(len(graphs)))


def test_edge_stream_input_keys_each_graphs_own_events():
    # a hand-made EdgeStream whose graph numbers are not in first-edge order: the graphs come in
    # first-edge order, and the key was laid out in graph-number order (graph 'b' got 'a''s positions)
    import numpy as np

    from kong_pyg import KongStream, KongVectorizer
    from kong_pyg.datasets import EdgeStream

    t = torch.tensor([(0, 0, 1, 1, 0, 1), (2, 0, 3, 1, 1, 0), (0, 0, 4, 1, 2, 1), (2, 0, 5, 1, 0, 0),
                      (2, 0, 6, 1, 1, 0)])
    es = EdgeStream(*[t[:, i] for i in range(6)], graph_ids=["a", "b"])
    graphs, key = load_ordered_graphs(es, labels={"a": 0, "b": 1})
    assert [(g.graph_id, g.edge_order.tolist()) for g in graphs] == [("b", [0, 0, 2, 2]),
                                                                     ("a", [1, 1, 3, 3, 4, 4])]
    # so the features read in the key's order are the stream's own
    np.testing.assert_allclose(KongVectorizer(k=2, hops=1, dim=64).fit_transform(graphs),
                               KongStream(k=2, hops=1, dim=64).fit(es).sketches().numpy())


def test_order_features_settings():
    ds = ProvenanceGraphs(20, strength=1.0, seed=2)
    opts = {"normalize": False, "blended": True}
    feats, cpu = order_features(ds, ["k1", "true", "consistent", "random", "reverse"], 2, 1, 2, 5,
                                "edge_order", opts)
    assert [len(feats[s]) for s in ("k1", "true", "consistent", "random", "reverse")] == [1, 1, 2, 2, 1]
    X = {s: feats[s][0].toarray() for s in feats}
    # every ordered setting holds the same 1-gram counts (blended), so their row sums of the
    # 1-gram block equal the k = 1 row sums; the 2-gram blocks differ between orders
    assert np.allclose(X["true"].sum(1) - X["consistent"].sum(1), 0)  # same number of k-grams
    assert not np.array_equal(X["true"], X["consistent"])
    assert not np.array_equal(feats["consistent"][0].toarray(), feats["consistent"][1].toarray())
    assert set(cpu) == set(feats)


def test_bad_arguments():
    ds = ProvenanceGraphs(20, seed=0)
    with pytest.raises(ValueError, match="'k' must be >= 2"):
        kong_pyg.order_test(ds, k=1)
    with pytest.raises(ValueError, match="'hops' must be >= 1"):  # (it answered "No" on order-made classes)
        kong_pyg.order_test(ds, hops=0)
    with pytest.raises(ValueError, match="order_test sets 'order' itself"):
        kong_pyg.order_test(ds, order="edge")
    with pytest.raises(ValueError, match="'test_size' must be in"):
        kong_pyg.order_test(ds, test_size=1.5)
    with pytest.raises(ValueError, match="'C' must be"):
        kong_pyg.order_test(ds, C=(0, 1))
    with pytest.raises(ValueError, match="'traversal' must be one of"):
        kong_pyg.order_test(ds, traversal="dfs")
    with pytest.raises(ValueError, match="'y' has 3 labels for 20 graphs"):
        kong_pyg.order_test(ds, y=[0, 1, 0])
    # the shuffled settings use seed + i: more shuffles than splits at the top seed was refused mid-run
    with pytest.raises(ValueError, match=r"'seed' must be at most 2\*\*32 - 5 = 4294967291 here"):
        kong_pyg.order_test(ds, splits=2, shuffles=5, seed=2**32 - 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="at least two classes"):
            kong_pyg.order_test(ds, y=[0] * 20)
    # labels the rest of the harness refuses (NaN was a class, 0.25-offsets and 1 / '1' were taken)
    y = ds.y.numpy()
    nan = y.astype(float)
    nan[:4] = np.nan
    for bad, match in [(nan, "contains NaN"), (y + 0.25, "not continuous"),
                       ([0 if v == 0 else "1" for v in y], "strings mixed"),
                       (np.stack([y, y], 1), "1-D array")]:
        with pytest.raises(ValueError, match=match):
            kong_pyg.order_test(ds, y=bad)


def test_edge_order_attr_none_ignores_the_key():
    ds = ProvenanceGraphs(20, seed=3)
    graphs, key = load_ordered_graphs(ds, edge_order_attr=None)
    assert key is None and graphs is ds
    graphs, key = load_ordered_graphs([ds[i] for i in range(4)], edge_order_attr=None)
    assert key is None and len(graphs) == 4


def test_a_key_name_no_graph_has_or_some_lack_is_refused():
    """A misspelt key was the no-key warning, and a key on some graphs only ran without it, silently."""
    ds = ProvenanceGraphs(20, seed=3)
    graphs = [ds[i] for i in range(6)]
    assert load_ordered_graphs(graphs)[1] == "edge_order"
    for source in (ds, graphs):
        with pytest.raises(ValueError, match="no graph has the key edge_order_attr='edge_time'"):
            load_ordered_graphs(source, edge_order_attr="edge_time")
    plain = [Data(x=g.x, edge_index=g.edge_index, y=g.y) for g in graphs]
    assert load_ordered_graphs(plain)[1] is None  # the default name, absent: no key (a warning later)
    with pytest.raises(ValueError, match="graph 2 has no 'edge_order' but others have one"):
        load_ordered_graphs(graphs[:2] + plain[2:])


def test_labels_are_only_for_streamspot_inputs():
    ds = ProvenanceGraphs(20, seed=3)
    with pytest.raises(ValueError, match="'labels' are the graph labels of a StreamSpot input .* not of a "
                                         "ProvenanceGraphs: pass the class labels as 'y'"):
        kong_pyg.order_test(ds, labels=ds.y)


def test_a_stream_with_one_graph(tmp_path):
    # PyG collates one graph with slices=None: loading it used to fail with "'NoneType' object is not
    # subscriptable"; the graph now loads with its key, and order_test says it needs more graphs
    (tmp_path / "s.tsv").write_text("1\ta\t2\tb\te\tg1\n2\tb\t3\tc\te\tg1\n")
    (tmp_path / "l.txt").write_text("g1 0\n")
    graphs, key = load_ordered_graphs(str(tmp_path / "s.tsv"), labels=str(tmp_path / "l.txt"))
    assert key == "edge_order" and len(graphs) == 1 and graphs.graph_ids == ["g1"]
    assert graphs[0].edge_order.tolist() == [0, 0, 1, 1]
    assert graphs[0].edge_index.tolist() == [[1, 0, 2, 1], [0, 1, 1, 2]]
    with pytest.raises(ValueError, match=r"order_test needs at least two classes and at least two graphs of "
                                         r"every class \(graphs per class \{0: 1\}\)"):
        kong_pyg.order_test(str(tmp_path / "s.tsv"), labels=str(tmp_path / "l.txt"), splits=2)


def test_fewer_inner_folds_than_asked_are_reported_as_used():
    # 20 graphs, 16 training graphs per split, 8 of each class: 16 inner folds cannot be made
    ds = ProvenanceGraphs(20, strength=1.0, seed=0)
    res = kong_pyg.order_test(ds, **{**FAST, "inner_folds": 16, "splits": 2}, reverse=False)
    assert res.info["inner_folds"] == 16 and res.info["inner_folds_used"] == [8]
    assert "by 8 (of 16 asked)-fold inner CV" in res.to_markdown("t")
    assert any(w.startswith("inner CV: 16 folds asked, 8 used") for w in res.info["warnings"])
    same = kong_pyg.order_test(ds, **{**FAST, "splits": 2}, reverse=False)
    assert same.info["inner_folds_used"] == [2] and "by 2-fold inner CV" in same.to_markdown("t")


def test_answer_without_spread_is_undecided_not_significant():
    """Scores that differ by the same amount on every split have no spread: the t-tests are undefined."""
    from kong_pyg.evaluation.stats import paired_comparison
    from kong_pyg.ordertest import OrderTestResult

    scores = {"accuracy": {"true": [0.75, 0.75], "consistent": [1.0, 1.0]}}
    cmp = dict(a="true", b="consistent", metric="accuracy",
               **paired_comparison([0.75, 0.75], [1.0, 1.0], 0.2), corrected_lo=-0.25, corrected_hi=-0.25)
    res = OrderTestResult(["true", "consistent"], scores, {}, [cmp], 0.2)
    answer = res.answer()
    assert answer.startswith("Undecided: the true order and the consistent shuffle") and "-25.00" in answer
    assert "significantly" not in answer and "Wilcoxon p = 0.5 with 2 splits" in answer
    back = OrderTestResult.from_dict(json.loads(json.dumps(res.to_dict())))  # (NaN statistics as null)
    assert back.answer() == answer


def test_stored_results_without_spread_read_with_no_interval():
    """Results saved before 2026-11-29 gave a difference with no spread an interval of width 0; rebuilt
    reports (benchmarks/order_test.py --report-only) showed '[+0.00, +0.00]' in the table beside a bullet
    saying there is no spread to test. Loaded, they now have none ('undefined'), as new runs do; a
    difference with spread keeps its stored interval."""
    from kong_pyg.evaluation.stats import format_interval, paired_comparison
    from kong_pyg.ordertest import OrderTestResult

    a, b, c = [0.75, 0.75, 0.5], [0.75, 0.75, 0.5], [0.5, 1.0, 0.5]
    tie = dict(a="true", b="reverse", metric="accuracy", **paired_comparison(a, b, 0.2),
               corrected_lo=0.0, corrected_hi=0.0)
    spread = dict(a="true", b="consistent", metric="accuracy", **paired_comparison(a, c, 0.2),
                  corrected_lo=-0.3, corrected_hi=0.4)
    scores = {"accuracy": {"true": a, "reverse": b, "consistent": c}}
    old = OrderTestResult(["true", "reverse", "consistent"], scores, {}, [tie, spread], 0.2).to_dict()
    back = OrderTestResult.from_dict(json.loads(json.dumps(old)))
    assert format_interval(back.comparisons[0]) == "undefined"
    assert back.comparisons[1]["corrected_lo"] == -0.3 and back.comparisons[1]["corrected_hi"] == 0.4


def test_a_negative_answer_gives_its_interval_and_warns_with_few_splits():
    """+72 points over 3 splits, p = 0.11, read 'No detectable order effect' with no word on power."""
    from kong_pyg.evaluation.stats import paired_comparison, with_corrected_interval
    from kong_pyg.ordertest import OrderTestResult

    def answer(a, b):
        cmp = with_corrected_interval(paired_comparison(a, b, 0.2), 0.2)
        scores = {"accuracy": {"true": a, "consistent": b}}
        return OrderTestResult(["true", "consistent"], scores, {},
                               [dict(a="true", b="consistent", metric="accuracy", **cmp)], 0.2).answer(), cmp

    few, cmp = answer([0.95, 0.9, 1.0], [0.1, 0.6, 0.1])
    assert cmp["corrected_p"] > 0.05 and few.startswith("No detectable order effect")
    lo, hi = (100 * cmp[f"corrected_{e}"] for e in ("lo", "hi"))
    assert f"(95 % interval {lo:+.1f} to {hi:+.1f})" in few and lo < 0 < hi
    assert "Only 3 splits: the test has little power" in few
    rng = np.random.default_rng(0)
    a = list(0.8 + 0.05 * rng.standard_normal(12))
    many, cmp = answer(a, [v + 0.01 * rng.standard_normal() for v in a])
    assert many.startswith("No detectable order effect") and "little power" not in many


def test_plot_marks_a_comparison_without_spread(tmp_path, monkeypatch):
    """An undefined interval is drawn as a hollow marker with 'no spread', not as a point interval."""
    pytest.importorskip("matplotlib")
    from kong_pyg.evaluation.stats import paired_comparison
    from kong_pyg.ordertest import OrderTestResult, with_corrected_interval

    scores = {"accuracy": {"true": [0.75, 0.75, 0.7], "consistent": [1.0, 1.0, 0.95]}}
    flat = with_corrected_interval(paired_comparison([0.75, 0.75], [1.0, 1.0], 0.2), 0.2)
    res = OrderTestResult(["true", "consistent"], scores, {},
                          [dict(a="true", b="consistent", metric="accuracy", **flat)], 0.2)
    import matplotlib.axes

    notes = []
    original = matplotlib.axes.Axes.annotate
    monkeypatch.setattr(matplotlib.axes.Axes, "annotate",
                        lambda self, text, *a, **k: notes.append(text) or original(self, text, *a, **k))
    res.plot(tmp_path / "flat.png")
    assert notes == ["no spread"] and (tmp_path / "flat.png").stat().st_size > 1000


def test_ties_on_every_split_give_no_interval_and_say_so(tmp_path, monkeypatch):
    """The same score on every split gave a "95 % interval +0.0 to +0.0" "within split-to-split noise",
    with "effects up to the interval's ends are not ruled out", and the plot drew a zero-width bar: there
    is no spread, so there is no interval either (p = 1 stays)."""
    from kong_pyg.evaluation.stats import format_interval, paired_comparison, verdict, with_corrected_interval
    from kong_pyg.ordertest import OrderTestResult

    same = [0.75, 0.8, 0.7]
    cmp = with_corrected_interval(paired_comparison(same, list(same), 0.2), 0.2)
    assert cmp["corrected_p"] == 1.0 and np.isnan(cmp["corrected_lo"]) and np.isnan(cmp["corrected_hi"])
    assert format_interval(cmp) == "undefined"
    assert "scored the same on every split" in verdict(cmp, "a", "b", "accuracy")
    res = OrderTestResult(["true", "consistent"], {"accuracy": {"true": same, "consistent": list(same)}}, {},
                          [dict(a="true", b="consistent", metric="accuracy", **cmp)], 0.2)
    answer = res.answer()
    assert answer.startswith("No detectable order effect: the true order and the consistent shuffle")
    assert "scored the same accuracy on every one of the 3 splits" in answer.splitlines()[0]
    assert "interval +" not in answer and "not ruled out" not in answer
    pytest.importorskip("matplotlib")
    import matplotlib.axes

    notes = []
    original = matplotlib.axes.Axes.annotate
    monkeypatch.setattr(matplotlib.axes.Axes, "annotate",
                        lambda self, text, *a, **k: notes.append(text) or original(self, text, *a, **k))
    res.plot(tmp_path / "ties.png")
    assert notes == ["no spread"]


def test_seed_scores_hold_one_list_per_seed_also_for_one_shuffle():
    """seed_scores was empty with shuffles=1, where its docstring promised one list of per-split scores per
    seed of a shuffled setting (seed_scores['accuracy']['consistent'] was a KeyError)."""
    res = kong_pyg.order_test(ProvenanceGraphs(40, seed=1), **{**FAST, "splits": 2}, reverse=False)
    for metric in res.scores:
        assert set(res.seed_scores[metric]) == {"consistent", "random"}
        for s in ("consistent", "random"):
            assert res.seed_scores[metric][s] == [res.scores[metric][s]]


def test_threads_reach_the_features(monkeypatch):
    """order_test(threads=N) (the CLI's --threads) sets the features' PyTorch threads; every KongVectorizer
    ran with its default of one thread, whatever was asked."""
    from kong_pyg.vectorizer import KongVectorizer

    seen = []
    real = KongVectorizer._compute

    def spy(self, *args, **kwargs):
        seen.append(torch.get_num_threads())
        return real(self, *args, **kwargs)

    monkeypatch.setattr(KongVectorizer, "_compute", spy)
    ds = ProvenanceGraphs(20, strength=1.0, seed=2)
    before = torch.get_num_threads()
    order_features(ds, ["k1", "true"], 2, 1, 1, 5, "edge_order", {}, threads=2)
    assert seen == [2, 2] and torch.get_num_threads() == before
    with pytest.raises(ValueError, match="'threads' must be >= 1"):
        kong_pyg.order_test(ds, threads=0)


def test_tied_keys_are_reported_the_consistent_shuffle_keeps_them():
    # coarse keys (many edges of a neighborhood on one value): equal keys are one event, so the consistent
    # shuffle keeps them in their true order; the result says so instead of a bare "no order effect"
    from kong_pyg.ordertest import tied_share

    ds = ProvenanceGraphs(60, strength=1.0, seed=0)
    fine = [ds[i] for i in range(len(ds))]
    assert tied_share(fine, "edge_order") == 0.0
    coarse = []
    for d in fine:
        d = d.clone()
        d.edge_order = d.edge_order // 100000
        coarse.append(d)
    share = tied_share(coarse, "edge_order")
    assert share > 0.5
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = kong_pyg.order_test(coarse, splits=3, shuffles=1)
    assert any("share their 'edge_order' value" in str(w.message) for w in caught)
    assert res.info["tied_key_share"] == share and "tie on the key" in res.answer()
    # integer keys beyond 2^53 are compared exactly (as float64 they would tie)
    g = Data(x=torch.zeros(3, dtype=torch.long), edge_index=torch.tensor([[1, 2], [0, 0]]),
             edge_order=torch.tensor([2**60, 2**60 + 1]))
    assert tied_share([g], "edge_order") == 0.0


def test_statistics_refuse_non_finite_scores_and_bad_alpha():
    from kong_pyg.evaluation.stats import paired_comparison, verdict

    for bad in ([0.5, float("inf")], [0.5, float("nan")]):  # (inf: every split a tie, p = 1)
        with pytest.raises(ValueError, match="finite scores"):
            paired_comparison(bad, [0.4, 0.5], 0.2)
    cmp = paired_comparison([0.5, 0.6, 0.55], [0.5, 0.55, 0.6], 0.2)
    for alpha in (5, -1, float("nan"), "0.05", True):  # (5 meant as 5 %: 'Yes' at p = 0.5)
        with pytest.raises(ValueError, match="'alpha' must be a significance level in \\(0, 1\\)"):
            verdict(cmp, "a", "b", "accuracy", alpha)


def test_tied_share_ignores_ties_that_change_no_string():
    # the authors' layout lists each ego item twice with one key, and a 2-hop user's edges to one item share
    # a key: edges to the same neighbor, whose order changes nothing (a false "weaker control" note)
    from kong_pyg.datasets import InteractionGraphs
    from kong_pyg.ordertest import tied_share

    rng = np.random.default_rng(0)
    e = 3000
    ds = InteractionGraphs(rng.integers(0, 200, e), rng.integers(0, 100, e), rng.permutation(e),
                           rng.integers(0, 2, 200), rng.integers(0, 3, 100), rng.integers(0, 2, 200),
                           layout="authors")
    assert tied_share(ds, "edge_order") == 0.0
    # flow: the neighborhood is the source's; a key of another shape is left to the features' checks
    g = Data(x=torch.zeros(4, dtype=torch.long), edge_index=torch.tensor([[0, 0, 1], [1, 2, 3]]),
             edge_order=torch.tensor([5, 5, 7]))
    assert tied_share([g], "edge_order") == 0.0
    assert tied_share([g], "edge_order", "target_to_source") == 2 / 3
    g.edge_order = torch.tensor([[5, 1], [5, 1], [7, 1]])
    assert tied_share([g], "edge_order") == 0.0


def test_a_class_too_small_for_every_test_part_is_named():
    """Two graphs of one class among 40, 20 % tested: a stratified split tests none of them, and ROC AUC of
    one class is undefined; the error names the split and the class (it was 'a' and 'b' must hold finite
    scores, from the statistics, after all the features)."""
    from kong_pyg import order_test

    ds = ProvenanceGraphs(40, strength=1.0, seed=3)
    y = np.zeros(40, dtype=np.int64)
    y[:2] = 1
    with pytest.raises(ValueError, match="split 0 tests no graph of class 1 \\(it has 2 graphs; test_size"):
        order_test(ds, y=y, splits=2, shuffles=1, test_size=0.2)


def test_summary_of_a_metric_not_computed_names_those_that_were():
    # order_test computes 'auc' for two classes only: summary('auc') (and plot) gave a bare KeyError
    from kong_pyg.ordertest import OrderTestResult

    scores = {"accuracy": {"true": [0.5, 0.6], "random": [0.5, 0.5]}}
    r = OrderTestResult(settings=["true", "random"], scores=scores, seed_scores={}, comparisons=[],
                        test_fraction=0.2)
    with pytest.raises(ValueError, match=r"no 'auc' scores: the metrics computed are \['accuracy'\]"):
        r.summary("auc")


def test_labels_are_the_graphs_own_after_a_transform_and_one_per_graph():
    """order_test read a dataset's stored y without its transform (which the features went through), and
    joined a list's y tensors by their total count only, so a graph with two labels beside one with none
    shifted every label between them onto the wrong graph. It reads them as classify does now."""
    from torch_geometric.data import InMemoryDataset

    from kong_pyg.datasets import load_tu
    from kong_pyg.order_inputs import graph_labels

    ds = load_tu("MUTAG")

    class Mem(InMemoryDataset):
        def __init__(self, graphs, transform=None):
            super().__init__(None, transform=transform)
            self.data, self.slices = self.collate(graphs)

    def big(d):
        d = d.clone()
        d.y = torch.tensor([int(d.num_nodes > 17)])
        return d

    m = Mem([ds[i] for i in range(len(ds))], transform=big)
    want = np.array([int(ds[i].num_nodes > 17) for i in range(len(ds))])
    assert np.array_equal(graph_labels(m), want)
    gl = [ds[i].clone() for i in range(8)]
    gl[0].y, gl[5].y = torch.tensor([1, 1]), torch.tensor([], dtype=torch.long)
    with pytest.raises(ValueError, match="graph 0 needs one class label in 'y'"):
        graph_labels(gl)
    gl[0].y = 3
    with pytest.raises(TypeError, match="graph 0: 'y' must be a tensor"):
        graph_labels(gl)


def test_labels_of_any_dtype_and_device_are_read_or_refused_by_name():
    """Reading labels through classify's graph_targets lost what order_test's old route did: bfloat16
    labels were a NumPy TypeError, labels on the meta device PyTorch's errors, and a graph without 'y' lost
    the hint to pass the labels as 'y'."""
    from torch_geometric.data import InMemoryDataset

    from kong_pyg.datasets import load_tu
    from kong_pyg.evaluation.classify import graph_targets
    from kong_pyg.order_inputs import graph_labels

    ds = load_tu("MUTAG")
    want = graph_labels(ds)

    class Mem(InMemoryDataset):
        def __init__(self, graphs):
            super().__init__(None)
            self.data, self.slices = self.collate(graphs)

    half = Mem([ds[i] for i in range(len(ds))])
    half._data.y = half._data.y.to(torch.bfloat16)
    assert np.array_equal(graph_labels(half), want) and np.array_equal(graph_targets(half), want)
    meta = Mem([ds[i] for i in range(len(ds))])
    meta._data.y = meta._data.y.to("meta")
    with pytest.raises(ValueError, match="'y' is on the meta device"):
        graph_labels(meta)
    gl = [ds[i].clone() for i in range(6)]
    gl[2].y = gl[2].y.to("meta")
    with pytest.raises(ValueError, match="graph 2's 'y' is on the meta device"):
        graph_labels(gl)
    del gl[2].y
    with pytest.raises(ValueError, match="graph 2 needs one class label in 'y'; or pass the class labels"):
        graph_labels(gl)


def _sorted_vs_shuffled_stars(n=60, edge_label=True):
    """Stars whose 6 neighbors (labels 1, 1, 2, 2, 3 and 4 last) come sorted (class 1) or with the first five
    shuffled (class 0), one edge label everywhere and a global event id per edge (a consistent shuffle)."""
    gen = torch.Generator().manual_seed(0)
    graphs = []
    for i in range(n):
        lab = torch.tensor([1, 1, 2, 2, 3, 4])
        if i % 2 == 0:
            lab[:5] = lab[:5][torch.randperm(5, generator=gen)]
        ei = torch.stack([torch.arange(1, 7), torch.zeros(6, dtype=torch.long)])
        d = Data(x=torch.cat([torch.zeros(1, dtype=torch.long), lab]), edge_index=ei, y=torch.tensor([i % 2]),
                 edge_order=torch.arange(6) + 6 * i)
        if edge_label:
            d.edge_attr = torch.zeros(6, dtype=torch.long)
        graphs.append(d)
    return graphs


def test_one_edge_label_hides_the_order_from_k_2_and_the_test_says_so(capsys):
    """With edge labels in the strings (e s_u1 e s_u2 ...) every k = 2 gram has the edge label on one side:
    with one label value k = 2 sees which neighbor comes last, not which follows which. The test warns and
    says how to see it; k = 3 or edge_labels=False find the planted order (the same last neighbor)."""
    from kong_pyg.order_inputs import edge_label_values
    from kong_pyg.ordertest import ONE_EDGE_LABEL

    graphs = _sorted_vs_shuffled_stars()
    assert edge_label_values(graphs) == 1 and edge_label_values(_sorted_vs_shuffled_stars(4, False)) == 0
    two = [g.clone() for g in graphs[:3]]
    two[2].edge_attr = torch.nn.functional.one_hot(torch.tensor([0, 0, 0, 0, 0, 1]), 2).float()
    assert edge_label_values(two) == 2  # (one-hot rows read as the features read them)
    from torch_geometric.data import InMemoryDataset

    class Stored(InMemoryDataset):
        def __init__(self, gs):
            super().__init__()
            self._data, self.slices = self.collate(gs)

    two[2].edge_attr = torch.tensor([0, 0, 0, 0, 0, 1])
    assert edge_label_values(Stored(graphs)) == 1 and edge_label_values(Stored(two)[:2]) == 1  # (its storage
    assert edge_label_values(Stored(two)) == 2  # at once, or graph by graph for a subset)
    bad = [g.clone() for g in graphs]
    bad[3].edge_attr = bad[3].edge_attr.float() + 0.5
    with pytest.raises(TypeError, match="graph 3"):  # (the features' error, naming the graph, comes first)
        kong_pyg.order_test(bad, **FAST, reverse=False)
    with pytest.warns(UserWarning, match="every edge has the same label"):
        blind = kong_pyg.order_test(graphs, **FAST, reverse=False)
    assert ONE_EDGE_LABEL in blind.info["warnings"] and blind.info["edge_labels"] == 1
    assert blind.comparison("true", "consistent")["mean_diff"] == pytest.approx(0, abs=0.05)
    assert "edge labels in the strings: one value (a k = 2 gram pairs" in blind.to_markdown()
    assert repr(blind) == (f"OrderTestResult(settings ['k1', 'true', 'consistent', 'random'], 5 splits: "
                           f"{blind.answer()!r}; .to_markdown() is the report)")
    for opts in (dict(edge_labels=False), dict(k=3)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # (no edge-label warning: k = 3, or no labels in the strings)
            res = kong_pyg.order_test(graphs, **FAST, reverse=False, **opts)
        assert res.answer().startswith("Yes: the true order beats the consistent shuffle"), opts
    assert res.info["edge_labels"] == 1 and "one value." in res.to_markdown()
    from kong_pyg.cli import main

    assert main(["order-test", "--help"]) == 0 and "--edge-labels" in capsys.readouterr().out
    from kong_pyg.cli import build_parser
    from kong_pyg.cli import order_test as cli

    for flags, given in (["--edge-labels", "no"], False), (["--authors", "--edge-labels", "no"], False), \
            ([], True):
        args = build_parser().parse_args(["order-test", "--provenance", "1", *flags])
        assert cli._options(args).get("edge_labels", True) is given  # (reaches order_test's options)
        assert ("--edge-labels no" in cli.command_line(args, "--provenance")) is not given


def test_tied_keys_leave_the_consistent_shuffle_equal_yet_the_features_see_the_order():
    """One key value per graph: the consistent shuffle keeps every edge in place (its features equal the
    true order's), but the per-graph shuffle does not: not order-blind, and the answer does not say so."""
    graphs = _sorted_vs_shuffled_stars(edge_label=False)
    for g in graphs:
        g.edge_order = torch.zeros(6, dtype=torch.long)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the tied-keys note)
        res = kong_pyg.order_test(graphs, **FAST, reverse=False)
    assert not res.info["order_blind"] and not res.answer().startswith("No order effect can be seen")
    assert res.comparison("true", "k1")["mean_diff"] > 0.2  # (the features do see the planted order)
