"""The extended grid, the depth-sum and grid-sum kernels, the own SP map, the nested protocol's isolation."""
import json
import random

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from helpers import oracle_kernel as _oracle
from helpers import random_graph, to_data

from kong_pyg import brute_force_kernel, kong_strings
from kong_pyg.evaluation.cv import cross_validate
from kong_pyg.evaluation.depths import depth_settings, normalized_gram, sum_of_kernels
from kong_pyg.evaluation.features import Gram, setting_features
from kong_pyg.evaluation.grid import GRID_PRESETS, expand_grid, extended_grid, make_setting, name_legend


def _gram(X):
    if isinstance(X, Gram):
        return X.K
    K = X @ X.T
    return K.toarray() if hasattr(K, "toarray") else np.asarray(K)


# -- the grid --------------------------------------------------------------------------


def test_extended_grid_is_fixed():
    settings = expand_grid("kong", "extended")
    assert len(settings) == len(extended_grid()) == 54
    assert expand_grid("kong", GRID_PRESETS["extended"]) == settings
    names = [s.name for s in settings]
    assert len(set(names)) == len(names)
    assert names[0] == "cosine-2 [h=1, depth-sum]"
    assert names[-1] == "poly-rlb-2 [k=2, h=3, order=degree, rlb=2, gnorm, depth-sum]"
    assert "cosine-2 [k=2, order=label, depth-sum]" in names
    for s in settings:
        p = s.config
        assert p["depths"] == "sum" and p["traversal"] == "bfs" and p["dim"] is None
        assert (p["order"] == "edge") == (p["k"] == 1)  # k = 1 is not multiplied by orders
        assert (p["kernel"] == "cosine") != p["normalize"] and p["degree"] == 2  # node or graph normalisation
        s.kong_config()  # a valid KongConfig
    # the paper's grid stays the default; the extended one is public
    assert expand_grid("kong") == expand_grid("kong", "paper")
    import kong_pyg

    assert kong_pyg.extended_grid is extended_grid


def test_grid_presets_and_errors():
    with pytest.raises(ValueError, match="'grid' must be one of"):
        expand_grid("kong", "huge")
    with pytest.raises(ValueError, match="presets are KONG grids"):
        expand_grid("wl", "extended")
    with pytest.raises(ValueError, match="'depths' must be one of"):
        expand_grid("kong", {"depths": ["all"]})
    # depth 0 alone: the sum is the joint map
    assert expand_grid("kong", {"hops": [0], "depths": ["sum", "joint"]})[0].config["depths"] == "joint"
    wl = expand_grid("wl", {"hops": [1], "normalize": [False, True]})
    assert [s.name for s in wl] == ["wl-h1", "wl-h1-l2"]
    assert [s.name for s in expand_grid("sp", {"normalize": [False, True]})] == ["sp", "sp-l2"]


# -- the depth sum equals the sum of the per-depth kernels -----------------------------


def _depth_oracle(graphs, hops, traversal, kernel, degree, k=1, relabel=0, normalize=False, order="edge",
                  own_label=True):
    """sum_j K_j with K_j the brute-force kernel on the strings of depth j alone."""
    total = 0
    for j in range(0 if own_label else 1, hops + 1):
        strings = []
        for lab, e, el in graphs:
            if traversal == "bfs":  # level j of the BFS strings of depth h
                levels = kong_strings(e, lab, hops, "bfs", edge_labels=el, relabel=relabel, order=order)
                strings.append([lv[j] for lv in levels])
            else:
                strings.append(kong_strings(e, lab, j, "wl", edge_labels=el, relabel=relabel, order=order,
                                            own_label=own_label))
        total = total + np.array(brute_force_kernel(strings, k, kernel, degree, 0.0, False, normalize))
    return total


@pytest.mark.parametrize("seed", range(16))
def test_depth_sum_equals_sum_of_depth_kernels(seed):
    rng = random.Random(500 + seed)
    cfg = dict(hops=rng.randint(1, 3), traversal=rng.choice(["bfs", "wl"]),
               kernel=rng.choice(["poly", "cosine"]),
               degree=rng.randint(1, 3), k=rng.randint(1, 2), relabel=rng.randint(0, 2),
               normalize=rng.random() < 0.4, order=rng.choice(["edge", "label", "degree"]))
    if cfg["traversal"] == "wl" and rng.random() < 0.3:
        cfg["own_label"] = False
    use_el = rng.random() < 0.5
    graphs = [random_graph(rng, max_nodes=5, max_edges=7, edge_labels=use_el) for _ in range(5)]
    setting = make_setting("kong", {**cfg, "depths": "sum"})
    X = setting_features(setting, [to_data(g) for g in graphs])
    np.testing.assert_allclose(_gram(X), _depth_oracle(graphs, **cfg), rtol=1e-9, atol=1e-9)


def test_depth_sum_is_bfs_only_for_the_linear_kernel():
    rng = random.Random(7)
    data = [to_data(random_graph(rng, max_nodes=6, max_edges=9)) for _ in range(6)]
    for degree, same in ((1, True), (2, False)):
        joint = make_setting("kong", {"hops": 2, "degree": degree})
        summed = make_setting("kong", {"hops": 2, "degree": degree, "depths": "sum"})
        a, b = _gram(setting_features(joint, data)), _gram(setting_features(summed, data))
        assert np.allclose(a, b) == same
    parts = depth_settings(make_setting("kong", {"hops": 2, "depths": "sum"}))
    assert [(s.config["traversal"], s.config["hops"], s.config["own_label"]) for s in parts] == [
        ("bfs", 0, True), ("wl", 1, False), ("wl", 2, False)]  # (depth 0: the label, either way)


def test_sum_of_kernels_mixes_maps_and_grams():
    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(4, 3)), rng.normal(size=(4, 5))
    np.testing.assert_allclose(_gram(sum_of_kernels([A, B])), A @ A.T + B @ B.T)
    np.testing.assert_allclose(sum_of_kernels([A, Gram(B @ B.T)]).K, A @ A.T + B @ B.T)
    with pytest.raises(ValueError, match="'parts' is empty"):
        sum_of_kernels([])


# -- the grid mean ("kong-mean") -------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_grid_mean_equals_the_oracle_mean_of_normalized_kernels(seed):
    # the paper grid: k = 1, h = 2, BFS, poly / cosine, p = 1..4, rlb 0 / 1; each kernel graph-normalised
    rng = random.Random(900 + seed)
    use_el = seed % 2 == 1
    graphs = [random_graph(rng, max_nodes=5, max_edges=7, edge_labels=use_el) for _ in range(6)]
    expected = sum(
        _oracle(graphs, 1, 2, "bfs", kernel, degree, relabel=relabel, normalize=True)
        for kernel in ("poly", "cosine") for degree in (1, 2, 3, 4) for relabel in (0, 1)) / 16
    got = setting_features(make_setting("kong-mean", {"grid": "paper"}), [to_data(g) for g in graphs])
    assert isinstance(got, Gram) and "16 normalised kernels" in got.source
    np.testing.assert_allclose(got.K, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.diag(got.K), 1.0)  # every graph has a label: K_s(G, G) > 0


def test_grid_mean_of_another_grid_is_that_grids_mean():
    # the quick grid: k = 1, h = 2, BFS, poly / cosine, p = 1, rlb 0 / 1 (not the paper grid's 16)
    rng = random.Random(950)
    graphs = [random_graph(rng, max_nodes=5, max_edges=7) for _ in range(5)]
    expected = sum(_oracle(graphs, 1, 2, "bfs", kernel, 1, relabel=relabel, normalize=True)
                   for kernel in ("poly", "cosine") for relabel in (0, 1)) / 4
    setting, = expand_grid("kong-mean", "quick")  # a preset's name: that grid's mean alone
    got = setting_features(setting, [to_data(g) for g in graphs])
    assert "4 normalised kernels of the 'quick' grid" in got.source
    np.testing.assert_allclose(got.K, expected, rtol=1e-9, atol=1e-12)
    # sparse integer or float32 features are normalised in float64
    K = normalized_gram(sp.csr_matrix(np.array([[3, 4], [1, 0]], dtype=np.int64)))
    assert K.dtype == np.float64
    np.testing.assert_allclose(K, [[1.0, 0.6], [0.6, 1.0]])


def test_grid_mean_settings_names_and_errors():
    assert [s.name for s in expand_grid("kong-mean")] == ["kong-mean-paper", "kong-mean-extended"]
    assert "kong-mean-GRID" in name_legend(expand_grid("kong-mean"))
    with pytest.raises(ValueError, match="'grid'"):
        make_setting("kong-mean", {"grid": "nope"})
    with pytest.raises(ValueError, match="unknown setting 'k'"):
        make_setting("kong-mean", {"k": 2})
    with pytest.raises(ValueError, match="grid means are 'kong-mean' settings"):
        from kong_pyg.evaluation.depths import grid_mean_features

        grid_mean_features(make_setting("kong", {}), [])
    # a graph without features (K(G, G) = 0) gets a zero row, not NaN
    K = normalized_gram(np.array([[3.0, 4.0], [0.0, 0.0], [1.0, 0.0]]))
    np.testing.assert_allclose(K, [[1.0, 0.0, 0.6], [0.0, 0.0, 0.0], [0.6, 0.0, 1.0]])


def test_grid_mean_classifies_through_the_api():
    from tu_helpers import paths_and_stars

    from kong_pyg import classify

    graphs, classes = paths_and_stars(12)
    data = []
    for (n, edges), c in zip(graphs, classes):
        d = to_data(([0] * n, edges, None))
        d.y = torch.tensor([c])
        data.append(d)
    res = classify(data, method="kong-mean", grid={"grid": ["quick", "paper"]}, repeats=1, folds=2,
                   inner_folds=2)
    assert res.method == "kong-mean"
    assert [s.name for s in res.cv.settings] == ["kong-mean-quick", "kong-mean-paper"]
    assert res.results["nested"].accuracy_mean == 1.0  # paths against stars: degrees separate them


# -- our SP map is GraKeL's SP kernel -----------------------------------------------


def test_sp_features_equal_grakel():
    pytest.importorskip("grakel")
    from kong_pyg.datasets import load_tu
    from kong_pyg.evaluation.baselines import grakel_gram, sp_features

    graphs = load_tu("MUTAG")[:60]
    np.testing.assert_array_equal(_gram(sp_features(graphs)), grakel_gram(graphs, "sp"))
    rng = random.Random(3)
    small = []
    for _ in range(12):  # directed, no multi-edges (GraKeL would read them as weights)
        lab, edges, _ = random_graph(rng, max_nodes=6, max_edges=9)
        small.append(to_data((lab, sorted({(a, b) for a, b in edges if a != b}), None)))
    np.testing.assert_array_equal(_gram(sp_features(small)), grakel_gram(small, "sp"))
    Kn = _gram(sp_features(small, normalize=True))
    assert np.allclose(np.diag(Kn)[np.diag(Kn) > 0], 1.0)


# -- the nested protocol never sees the test fold --------------------------------------


def test_nested_protocol_never_sees_the_test_fold():
    """A planted leak that only a selection reading the outer test fold would take.

    Setting 1 is a weak copy of the label on the training part of outer fold
    0 and an exact copy on its test part: it wins that test fold (accuracy 1)
    but loses every inner validation to setting 0, an honest noisy copy of
    the label. A nested protocol that chose on the test fold would pick it
    there; the honest one picks setting 0 in every outer fold.
    """
    from kong_pyg.evaluation.cv import make_splits

    rng = np.random.default_rng(0)
    n = 150
    y = np.repeat([0, 1], n // 2)
    sign = 2.0 * y - 1
    honest = (sign + rng.normal(scale=0.7, size=n)).reshape(-1, 1)
    test = make_splits(y, 1, 5, None, seed=0).outer[0][0][1]
    leak = (0.4 * sign + rng.normal(size=n)).reshape(-1, 1)
    leak[test, 0] = 10.0 * sign[test]
    res = cross_validate([honest, leak], y, repeats=1, folds=5, inner_folds=3, C=[1.0], seed=0)
    outer = res.outer[:, 0, 0, :]  # [setting, fold]
    assert outer[1, 0] == 1.0 > outer[0, 0]  # the leak wins the test fold it was planted in
    inner = res.inner[:, 0, 0, 0, :].mean(axis=1)
    assert inner[0] > inner[1]  # ... and loses on the inner folds of that fold's training part
    nested = res.protocol("nested")
    assert nested.chosen == {"features-0, C=1": 5}
    np.testing.assert_allclose(nested.accuracy_mean, outer[0].mean())


# -- the command line and the API -------------------------------------------------------


def test_cli_grid_extended_runs_on_a_tiny_set(tmp_path, monkeypatch, capsys):
    import warnings

    from tu_helpers import paths_and_stars, write_tu

    from kong_pyg.cli import main

    monkeypatch.setenv("KONG_PYG_CACHE", str(tmp_path / "cache"))
    graphs, classes = paths_and_stars(12)
    write_tu(tmp_path / "root", "SHAPES", graphs, classes)
    argv = ["classify", "--data-root", str(tmp_path / "root"), "--dataset", "SHAPES", "--grid", "extended",
            "--json", "--repeats", "1", "--folds", "2", "--quiet", "--jobs", "1"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # degree labels
        assert main([*argv, "--protocol", "paper"]) == 0
        res = json.loads(capsys.readouterr().out)
        assert res["num_settings"] == 54 and res["accuracy_mean"] == 1.0
        assert all("depth-sum" in row["setting"] for row in res["settings"])
        # grid flags replace entries of every setting of the list (duplicates collapse)
        assert main([*argv, "--hops", "1", "--relabel", "0", "--inner-folds", "2"]) == 0
        res = json.loads(capsys.readouterr().out)
        assert res["num_settings"] == 6 and res["protocols"]["nested"]["accuracy_mean"] == 1.0
        # --k 1 over the list's three string kinds (k = 1, k = 2 by label, by degree): one map, not three
        assert main([*argv, "--hops", "1", "--relabel", "0", "--k", "1", "--protocol", "paper"]) == 0
        assert json.loads(capsys.readouterr().out)["num_settings"] == 2
        # the table's columns stay in line with long setting names (they pushed their rows right)
        table = [*argv, "--hops", "1", "--relabel", "0", "--protocol", "paper"]
        assert main([a for a in table if a != "--json"]) == 0
        lines = capsys.readouterr().out.splitlines()
        head = next(i for i, line in enumerate(lines) if line.startswith("setting "))
        rows = lines[head + 1 : head + 7]
        end = lines[head].index("CV accuracy") + len("CV accuracy")
        assert {line.index("%") + 1 for line in rows} == {end}
        # the means of the paper grid's and the extended grid's normalised kernels: two settings
        assert main([*argv[:5], "--method", "kong-mean", *argv[7:], "--inner-folds", "2"]) == 0
        res = json.loads(capsys.readouterr().out)
        assert [row["setting"] for row in res["settings"]] == ["kong-mean-paper", "kong-mean-extended"]
        assert res["protocols"]["nested"]["accuracy_mean"] == 1.0
        quick = [*argv[:5], "--method", "kong-mean", "--grid", "quick", *argv[7:], "--protocol", "paper"]
        assert main(quick) == 0
        res = json.loads(capsys.readouterr().out)
        assert [row["setting"] for row in res["settings"]] == ["kong-mean-quick"]
        assert main([*argv[:5], "--method", "wl", "--grid", "quick", *argv[7:]]) == 2  # not a KONG method
