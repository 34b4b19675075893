import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import LinearSVC
from tu_helpers import paths_and_stars, write_tu

from kong_pyg import classify, expand_grid
from kong_pyg.cli import main
from kong_pyg.config import option_defaults
from kong_pyg.datasets import NoNodeLabelsWarning
from kong_pyg.evaluation.cv import CVResult, cross_validate, make_splits
from kong_pyg.evaluation.features import Gram, design_matrix, kernel_map
from kong_pyg.evaluation.grid import KONG_DEFAULTS, Setting, name_legend

FAST = ["--repeats", "1", "--folds", "3", "--inner-folds", "2", "--quiet"]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KONG_PYG_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def run(capsys, *argv):
    rc = main(["classify", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


# -- grids ---------------------------------------------------------------------


def test_paper_grid():
    names = [s.name for s in expand_grid("kong")]
    assert names == [f"{k}{r}-{p}" for k in ("poly", "cosine") for p in (1, 2, 3, 4) for r in ("", "-rlb")]
    first = expand_grid("kong")[0].config
    assert first["k"] == 1 and first["hops"] == 2 and first["traversal"] == "bfs" and first["dim"] is None
    assert [s.name for s in expand_grid("wl")] == ["wl-h1", "wl-h2"]
    assert [s.name for s in expand_grid("kw")] == ["kw-5", "kw-6"]
    assert [s.name for s in expand_grid("sp")] == ["sp"]


def test_grid_rules():
    # the cosine kernel has no constant: duplicates collapse
    assert len(expand_grid("kong", {"kernel": ["cosine"], "const": [0, 1]})) == 1
    assert len(expand_grid("kong", {"kernel": ["poly"], "const": [0, 1]})) == 2
    # with k = 1 no order matters (label counts): k = 1 under three orders was three settings of one map
    one = expand_grid("kong", {"k": [1], "order": ["edge", "label", "degree"]})
    assert [s.name for s in one] == ["poly-1"]
    assert len(expand_grid("kong", {"k": [2], "order": ["edge", "label", "degree"]})) == 3
    # ... and the one kept is the first, with its order: k = 1 by label reads no stored key (it did once
    # the order was set to "edge": a key some graphs lacked, or NaN, was refused)
    assert expand_grid("kong", {"k": [1], "order": ["label", "edge"]})[0].config["order"] == "label"
    import torch
    from torch_geometric.data import Data

    from kong_pyg import classify

    gen = torch.Generator().manual_seed(0)
    graphs = []
    for i in range(20):
        d = Data(x=torch.randint(0, 3, (5,), generator=gen),
                 edge_index=torch.randint(0, 5, (2, 8), generator=gen), y=torch.tensor([i % 2]))
        if i % 2 == 0:
            d.edge_order = torch.full((8,), float("nan"))
        graphs.append(d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = classify(graphs, grid={"k": [1], "order": ["label"]}, protocol="paper", repeats=1, folds=2)
    assert res.to_dict()["num_settings"] == 1
    s = expand_grid("kong", [{"k": 2, "traversal": "wl", "dim": 64, "normalize": True}])[0]
    assert s.name == "poly-1 [k=2, wl, b=64, gnorm]"
    with pytest.raises(ValueError, match="unknown setting 'p'"):
        expand_grid("kong", {"p": [1]})
    with pytest.raises(ValueError, match="'kernel' must be one of"):
        expand_grid("kong", {"kernel": ["rbf"]})
    with pytest.raises(TypeError, match="'relabel' must be an integer"):
        expand_grid("kong", {"relabel": ["yes"]})
    with pytest.raises(ValueError, match="unknown setting 'kernel' for method 'wl'"):
        expand_grid("wl", {"kernel": ["poly"]})


def test_kong_settings_come_from_the_config():
    assert KONG_DEFAULTS == {k: v for k, v in option_defaults().items() if k != "seed"}
    s = expand_grid("kong", [{"k": 2, "dim": 64, "relabel": True}])[0]
    assert s.name == s.kong_config().short_name() == "poly-rlb-1 [k=2, b=64]"
    assert s.config["relabel"] == 1 and s.kong_config(seed=3).seed == 3
    legend = name_legend(expand_grid("kong", {"k": [1, 2], "dim": [None, 64]}))
    assert legend.startswith("names: kernel-degree") and "[...] = options off their defaults" in legend
    assert (legend.index("k=2 (option k, --k, default 1: k-gram length")
            < legend.index("b=64 (option dim, --dim, default None: sketch"))
    flags = name_legend(expand_grid("kong", {"k": [2], "edge_labels": [False], "own_label": [False]}))
    assert "(option edge_labels, --edge-labels, default True: " in flags
    assert "(option own_label, --own-label, default True: " in flags
    assert name_legend(expand_grid("kong", {"kernel": ["poly"]})).count("[...]") == 0
    assert "wl-hH" in name_legend(expand_grid("wl"))


# -- protocols -------------------------------------------------------------------


def test_protocols_on_known_scores():
    S, nC, R, F, inner_folds = 2, 2, 2, 3, 2
    outer = np.zeros((S, nC, R, F))
    outer[0, 0] = 0.5
    outer[1, 1] = [[0.9, 0.8, 1.0], [0.7, 0.9, 0.8]]  # best on the test folds: mean 0.85
    outer[0, 1] = 0.6
    inner = np.zeros((S, nC, R, F, inner_folds))
    inner[0, 0] = 1.0  # the inner folds prefer (setting 0, C0) ...
    inner[1, 1, 1, 2] = 2.0  # ... except in repeat 1, fold 2
    settings = [Setting("features", (("index", i),)) for i in range(S)]
    cv = CVResult(settings, [0.1, 1.0], outer, inner, [0.0, 0.0], 0.0, 0, 0)
    paper = cv.protocol("paper")
    assert paper.best_params == {"index": 1, "C": 1.0}
    assert paper.accuracy_mean == pytest.approx(0.85)
    assert paper.repeat_accuracies == pytest.approx([0.9, 0.8])
    assert paper.accuracy_std == pytest.approx(0.05)
    nested = cv.protocol("nested")
    assert nested.repeat_accuracies == pytest.approx([0.5, (0.5 + 0.5 + 0.8) / 3])
    assert nested.best_params == {"index": 0, "C": 0.1}
    assert nested.chosen == {"features-0, C=0.1": 5, "features-1, C=1": 1}
    # ties go to the earlier setting and the smaller C
    flat = CVResult(settings, [0.1, 1.0], np.ones((S, nC, R, F)), None, [0, 0], 0, 0, 0)
    assert flat.protocol("paper").best_params == {"index": 0, "C": 0.1}
    # a tie in how often the nested protocol chose: 'chosen' lists first the best setting it reports
    tied = np.zeros((S, nC, R, F, inner_folds))
    tied[1, 1, 0] = 1.0  # (setting 1, C1) in the three folds of repeat 0 ...
    tied[0, 1, 1] = 1.0  # ... (setting 0, C1) in those of repeat 1: the grid's earlier one is reported
    nested = CVResult(settings, [0.1, 1.0], outer, tied, [0.0, 0.0], 0.0, 0, 0).protocol("nested")
    assert nested.best_params == {"index": 0, "C": 1.0}
    assert list(nested.chosen.items()) == [("features-0, C=1", 3), ("features-1, C=1", 3)]
    # two choices shown alike (C = 1 and 1.0000001) add up: the counts still sum to every outer fold
    alike = CVResult(settings, [1.0, 1.0000001], outer, tied, [0.0, 0.0], 0.0, 0, 0).protocol("nested")
    assert sum(alike.chosen.values()) == R * F
    with pytest.raises(ValueError, match="inner"):
        flat.protocol("nested")


def test_splits_are_seeded_and_stratified():
    y = np.array([0] * 12 + [1] * 8)
    a = make_splits(y, 2, 4, 2, seed=3)
    b = make_splits(y, 2, 4, 2, seed=3)
    for r in range(2):
        for f in range(4):
            assert np.array_equal(a.outer[r][f][1], b.outer[r][f][1])
            test = a.outer[r][f][1]
            assert sorted(np.bincount(y[test]).tolist()) == [2, 3]
            for tr, te in a.inner[r][f]:
                assert set(tr) | set(te) == set(a.outer[r][f][0])
    assert not np.array_equal(a.outer[0][0][1], a.outer[1][0][1])
    with pytest.raises(ValueError, match=r"'folds' \(10\) must be at most the size of the smallest class"):
        make_splits(y, 1, 10, None, 0)
    with pytest.raises(ValueError, match=r"'inner_folds' \(7\) is too many"):
        make_splits(y, 1, 4, 7, 0)
    with pytest.raises(ValueError, match="single class"):
        make_splits(np.zeros(10), 1, 2, None, 0)


def test_kernel_map_fits_the_same_classifier():
    rng = np.random.default_rng(0)
    X = sp.random(40, 300, density=0.05, random_state=1, format="csr") * 3
    y = (X @ rng.normal(size=300) > 0).astype(int)
    P = design_matrix(X, project=True)
    assert P.shape[0] == 40 and P.shape[1] <= 40
    assert np.allclose(P @ P.T, (X @ X.T).toarray())
    assert np.allclose(design_matrix(Gram((X @ X.T).toarray())) @ P.T, P @ P.T)
    kw = dict(C=1.0, dual=False, tol=1e-10, max_iter=100000)
    a = LinearSVC(**kw).fit(X[:30], y[:30]).decision_function(X[30:])
    b = LinearSVC(**kw).fit(P[:30], y[:30]).decision_function(P[30:])
    assert np.allclose(a, b, atol=1e-5)
    # narrow features are used as they are
    assert design_matrix(X[:, :20]).shape == (40, 20)
    assert kernel_map(np.zeros((3, 3))).shape == (3, 1)


def test_cross_validate_with_processes_from_two_threads_at_once_scores_its_own_features():
    """The forked workers read their call's features from one module-level entry, which a call in another
    thread overwrote before the first call's workers forked: 4-9 of 10 concurrent pairs scored the other
    call's settings, silently."""
    import multiprocessing
    import threading

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork here: the settings run in the calling process")
    rng = np.random.default_rng(2)
    y = np.array([0, 1] * 20)
    sets = {"a": [np.c_[y + s * rng.normal(size=40), rng.normal(size=40)] for s in (0.3, 3.0)],
            "b": [rng.normal(size=(40, 3)) for _ in range(2)]}

    def run(name):
        return cross_validate(sets[name], y, repeats=1, folds=4, nested=False, n_jobs=2).outer

    alone = {name: run(name) for name in sets}
    for _ in range(4):
        out = {}
        threads = [threading.Thread(target=lambda n=name: out.__setitem__(n, run(n))) for name in sets]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for name in sets:
            assert np.array_equal(out[name], alone[name]), name


def test_cross_validate_reads_each_setting_once():
    rng = np.random.default_rng(1)
    y = np.array([0, 1] * 20)
    good = np.c_[y + 0.1 * rng.normal(size=40), rng.normal(size=40)]
    calls = []

    def noise():
        calls.append(1)
        return rng.normal(size=(40, 2))

    cv = cross_validate([noise, good], y, repeats=2, folds=4, inner_folds=2, n_jobs=2)
    assert len(calls) == 0  # two processes: each setting's features are read in a worker
    assert cv.outer.shape == (2, 3, 2, 4) and cv.inner.shape == (2, 3, 2, 4, 2)
    assert cv.fits == 2 * 3 * 2 * 4 * 3
    assert cv.protocol("paper").best_params["index"] == 1
    assert cv.protocol("nested").accuracy_mean > 0.9
    serial = cross_validate([noise, good], y, repeats=2, folds=4, inner_folds=2, n_jobs=1)
    assert len(calls) == 1
    assert np.array_equal(serial.outer[1], cv.outer[1]) and np.array_equal(serial.inner[1], cv.inner[1])
    with pytest.raises(ValueError, match="'C' must be positive"):
        cross_validate([good], y, C=[0])


# -- the command line and the API ------------------------------------------------------


def test_cli_json_on_bundled_mutag(cache, capsys):
    rc, out, err = run(capsys, "--grid", "quick", "--json", *FAST)
    assert rc == 0, err
    res = json.loads(out)
    for key in ("dataset", "num_graphs", "accuracy_mean", "accuracy_std", "best_params", "feature_seconds",
                "protocol"):
        assert key in res
    assert res["dataset"] == "MUTAG" and res["num_graphs"] == 188 and res["protocol"] == "both"
    assert set(res["protocols"]) == {"paper", "nested"}
    assert res["accuracy_mean"] == res["protocols"]["nested"]["accuracy_mean"]
    assert res["num_settings"] == 4 and len(res["settings"]) == 4
    assert 0.7 < res["protocols"]["paper"]["accuracy_mean"] <= 1.0
    assert {"kernel", "degree", "relabel", "C"} <= set(res["best_params"])
    # the Python API gives the same numbers
    api = classify("MUTAG", grid={"kernel": ["poly", "cosine"], "relabel": [False, True]}, repeats=1, folds=3,
                   inner_folds=2)
    assert api.to_dict()["protocols"] == res["protocols"]
    # short reprs with the headline numbers (the dataclasses' own printed every score: kilobytes)
    nested = api.results["nested"]
    head = (f"nested: accuracy {100 * nested.accuracy_mean:.2f} +- {100 * nested.accuracy_std:.2f} over 1 "
            f"repeat(s), most often {nested.best_setting}, C={nested.best_params['C']:g}")
    assert repr(nested) == f"ProtocolResult({head})" and head in repr(api) and len(repr(api)) < 400
    assert repr(api).startswith("ClassifyResult(KONG on MUTAG, 4 setting(s), 1 x 3-fold CV: paper: accuracy ")
    assert repr(api.cv).startswith("CVResult(4 setting(s) x 3 C, 1 repeat(s) x 3 folds, inner CV of 2 folds")


def test_cli_table_and_paper_protocol(cache, capsys):
    rc, out, _ = run(capsys, "--kernel", "cosine", "--degree", "1", "--relabel", "no", "--protocol", "paper",
                     "--repeats", "2", "--folds", "3", "--quiet")
    assert rc == 0
    assert "KONG on MUTAG: 188 graphs" in out and "cosine-1" in out and "paper" in out
    assert "names: kernel-degree" in out and "rlb = WL relabelling first" in out
    assert "nested " not in out.split("protocol")[-1].splitlines()[1]
    rc, out, _ = run(capsys, "--kernel", "cosine", "--degree", "1", "--relabel", "no", "--protocol", "nested",
                     "--json", *FAST)
    assert json.loads(out)["protocol"] == "nested" and list(json.loads(out)["protocols"]) == ["nested"]


def test_cli_table_names_the_solver_the_spread_and_the_optimistic_columns(cache, capsys, monkeypatch):
    """The table said "solved exactly" when LIBLINEAR fit (wide designs of many graphs), printed "+- 0.00" for
    one repeat, and its per-setting best C / CV accuracy columns (picked on the test folds) were not named
    as optimistic."""
    from kong_pyg.evaluation import svm

    args = ["--kernel", "poly", "--degree", "1", "--relabel", "yes", "--protocol", "nested",
            "--normalize", "no"]
    rc, out, _ = run(capsys, *args, *FAST)
    assert rc == 0 and "nested            " in out and "+- n/a" in out
    assert "s added up over the settings (" in out
    assert "LinearSVC problems, solved exactly, all converged" in out
    assert "can exceed the wall time)" in out  # (settings run side by side: the sum is not the run's time)
    assert "best C, CV accuracy: each setting's C with the best mean test-fold accuracy" in out
    rc, out, _ = run(capsys, *args, "--repeats", "2", "--folds", "3", "--inner-folds", "2", "--quiet")
    assert "+- n/a" not in out and "std: over the repeat means (ddof 0)" in out
    monkeypatch.setattr(svm, "EXACT_MAX_WIDTH", 10)
    monkeypatch.setattr(svm, "EXACT_MAX_GRAPHS", 10)
    monkeypatch.setattr(svm, "LIBLINEAR_NNZ_RATIO", 1.0)
    rc, out, _ = run(capsys, *args, *FAST)
    assert rc == 0 and "1 setting by LIBLINEAR (LinearSVC, tol 0.0001)" in out and "solved exactly" not in out


def test_cli_baselines(cache, capsys):
    rc, out, err = run(capsys, "--method", "wl", "--json", *FAST)
    assert rc == 0, err
    assert [s["setting"] for s in json.loads(out)["settings"]] == ["wl-h1", "wl-h2"]
    rc, out, err = run(capsys, "--method", "kw", "--walk-length", "2", "--json", *FAST)
    assert rc == 0, err
    assert json.loads(out)["best_params"]["length"] == 2
    # --normalize reaches the baselines' L2-normalised variants (it applied to KONG only)
    rc, out, err = run(capsys, "--method", "sp", "--normalize", "both", "--json", *FAST)
    assert rc == 0, err
    assert [s["setting"] for s in json.loads(out)["settings"]] == ["sp", "sp-l2"]
    rc, out, err = run(capsys, "--method", "wl", "--hops", "1", "--normalize", "yes", "--json", *FAST)
    assert [s["setting"] for s in json.loads(out)["settings"]] == ["wl-h1-l2"]


def test_cli_grakel_baselines(cache, capsys):
    pytest.importorskip("grakel")
    for method, names in (("sp", ["sp"]), ("wl-grakel", ["wl-grakel-h1"])):
        extra = ["--hops", "1"] if method == "wl-grakel" else []
        rc, out, err = run(capsys, "--method", method, *extra, "--json", *FAST)
        assert rc == 0, err
        assert [s["setting"] for s in json.loads(out)["settings"]] == names


@pytest.mark.parametrize("argv, message", [
    (["--dataset", "NOPE"], "unknown data set 'NOPE'"),
    (["--dataset", "mutag"], "did you mean 'MUTAG'"),
    (["--data-root", "."], "--data-root needs --dataset"),
    (["--method", "wl", "--kernel", "poly"], "--kernel applies to --method kong"),
    (["--method", "sp", "--walk-length", "3"], "--walk-length applies to --method kw"),
    (["--method", "kw", "--normalize", "yes"], "--normalize applies to --method kong or wl or sp"),
    (["--method", "wl", "--grid", "quick"], "does not apply to --method wl"),
    (["--method", "wl", "--plot", "x.png"], "--plot draws KONG sketch sizes"),
    (["--protocol", "paper", "--inner-folds", "3"], "--inner-folds only applies"),
    (["--degree", "one"], "argument --degree: expects an integer"),
    (["--relabel", "maybe"], "argument --relabel: expects yes, no, both"),
    (["--dim", "big"], "argument --dim: expects 'exact'"),
    (["--kernel", "rbf"], "argument --kernel: 'kernel' must be one of ['poly', 'cosine']"),
    (["--folds", "100"], "error: --folds (100) must be at most the size of the smallest class (63 graphs)"),
    (["--protocol", "both", "--repeats", "2", "--nested-repeats", "3"],
     "error: --nested-repeats (3) must be at most --repeats (2)"),
    (["--protocol", "nested", "--inner-folds", "60"], "error: --inner-folds (60) is too many"),
    (["--C", "0"], "argument --C: must be > 0"),
    (["--grid", "quick", "--k", "2", "--order", "edge,consistent"],
     "error: --order consistent shuffles by a per-edge event key"),
    (["--plot-sizes", "64"], "--plot-sizes needs --plot"),
])
def test_cli_errors(cache, capsys, argv, message):
    rc, out, err = run(capsys, *argv, "--quiet")
    assert rc == 2 and out == ""
    assert message in err and err.startswith("kong-pyg classify: error:")


def test_cli_missing_raw_files(cache, tmp_path, capsys):
    graphs, classes = paths_and_stars()
    raw = write_tu(tmp_path / "root", "SHAPES", graphs, classes)
    (raw / "SHAPES_graph_indicator.txt").unlink()
    rc, _, err = run(capsys, "--data-root", str(tmp_path / "root"), "--dataset", "SHAPES")
    assert rc == 2 and "SHAPES_graph_indicator.txt" in err


def test_cli_degree_label_fallback(cache, tmp_path, capsys):
    graphs, classes = paths_and_stars(12)
    write_tu(tmp_path / "root", "SHAPES", graphs, classes)
    with pytest.warns(NoNodeLabelsWarning, match="using node degrees as labels"):
        rc, out, err = run(capsys, "--data-root", str(tmp_path / "root"), "--dataset", "SHAPES", "--grid",
                           "quick", "--json", *FAST)
    assert rc == 0, err
    res = json.loads(out)
    assert res["dataset"] == "SHAPES" and res["num_graphs"] == 12
    # paths and stars differ in their degree labels: separable
    assert res["protocols"]["paper"]["accuracy_mean"] == 1.0


def test_cli_plot(cache, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    png = tmp_path / "new" / "folder" / "curve.png"  # the folder is made, as --out folders are
    rc, out, err = run(capsys, "--kernel", "cosine", "--degree", "1", "--relabel", "no", "--plot", str(png),
                       "--plot-sizes", "16,64", "--json", *FAST)
    assert rc == 0, err
    curve = json.loads(out)["plot"]["curve"]
    assert [row["dim"] for row in curve] == [None, 16, 64]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_nested_on_fewer_repeats_and_api_on_a_list():
    import torch
    from torch_geometric.data import Data

    graphs = []
    for n, edges in paths_and_stars(16)[0]:
        ei = torch.tensor(edges, dtype=torch.long).t()
        deg = torch.bincount(ei[1], minlength=n)
        graphs.append(Data(x=deg, edge_index=ei, y=torch.tensor([int(deg.max() > 2)])))
    res = classify(graphs, grid={"kernel": ["cosine", "poly"]}, repeats=3, nested_repeats=2, folds=4,
                   inner_folds=2)
    assert res.cv.outer.shape == (2, 3, 3, 4) and res.cv.inner.shape == (2, 3, 2, 4, 2)
    assert len(res.results["paper"].repeat_accuracies) == 3
    assert len(res.results["nested"].repeat_accuracies) == 2
    assert res.to_dict()["nested_repeats"] == 2 and res.dataset == "list"
    with pytest.raises(ValueError, match="'nested_repeats' only applies"):
        classify(graphs, protocol="paper", nested_repeats=1, folds=4)
    with pytest.raises(ValueError, match="at most 'repeats'"):
        cross_validate([np.eye(16)], [0, 1] * 8, repeats=1, nested_repeats=2, folds=2, inner_folds=2)


def test_lazy_public_names_and_a_light_import():
    code = (
        "import sys, kong_pyg, kong_pyg.evaluation\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('sklearn', 'scipy', 'tqdm', 'matplotlib')\n"
        "         or m.startswith(('kong_pyg.evaluation.', 'kong_pyg.stream', 'kong_pyg.experiments'))]\n"
        "assert not heavy, heavy\n"
        "for name in ('classify', 'ClassifyResult', 'cross_validate', 'expand_grid', 'paper_grid',\n"
        "             'sketch_curve'):\n"
        "    assert kong_pyg._LAZY[name].startswith('kong_pyg.evaluation.'), name\n"
        "    assert getattr(kong_pyg, name).__name__ == name\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=str(Path(__file__).resolve().parents[1]))
    assert done.returncode == 0, done.stderr


def test_sketch_curve_is_one_run_per_size_in_one_cross_validation(cache):
    from functools import partial

    from kong_pyg.datasets.tu import load_tu
    from kong_pyg.evaluation.classify import graph_targets, sketch_curve
    from kong_pyg.evaluation.features import setting_features

    graphs = load_tu("MUTAG")
    y = graph_targets(graphs)
    params = {"k": 1, "hops": 1}
    settings = expand_grid("kong", [{**params, "dim": b} for b in [None, 16, 64]])
    opts = dict(repeats=2, folds=3, inner_folds=2)
    for protocol in ("paper", "nested"):
        curve = sketch_curve(graphs, params, [16, 64], protocol=protocol, n_jobs=2, **opts)
        assert [row["dim"] for row in curve] == [None, 16, 64]
        for row, setting in zip(curve, settings):  # each size alone, as a cross-validation of its own
            alone = cross_validate([partial(setting_features, setting, graphs, 0)], y, settings=[setting],
                                   nested=protocol == "nested", **opts).protocol(protocol)
            assert row["accuracy_mean"] == alone.accuracy_mean and row["accuracy_std"] == alone.accuracy_std
            assert row["C"] == alone.best_params["C"]
    cv = cross_validate([np.eye(16)[:, :4], np.eye(16)], [0, 1] * 8, repeats=1, folds=2, inner_folds=2)
    one = cv.only(1)
    assert one.outer.shape == (1, 3, 1, 2) and one.inner.shape == (1, 3, 1, 2, 2)
    assert np.array_equal(one.outer[0], cv.outer[1]) and one.settings == cv.settings[1:]
    with pytest.raises(ValueError, match="'s' must be a setting index in \\[0, 2\\)"):
        cv.only(2)


def test_tied_choices_counts_the_others_as_often_as_the_first():
    from kong_pyg.evaluation.classify import tied_choices

    assert tied_choices({"a, C=1": 4, "b, C=1": 4, "c, C=10": 2}) == 1
    assert tied_choices({"a, C=1": 5, "b, C=1": 4}) == 0
    assert tied_choices({}) == 0


def test_grid_values_and_sketch_curve_inputs():
    """A NumPy array or range of values is a list of values (it was 'must be an integer (got ndarray)');
    sketch_curve takes a bundled name as classify does, and names its own empty arguments."""
    import numpy as np

    import kong_pyg

    want = [s.name for s in kong_pyg.expand_grid("kong", {"k": [1, 2], "hops": [1, 2]})]
    got = kong_pyg.expand_grid("kong", {"k": np.array([1, 2]), "hops": range(1, 3)})
    assert [s.name for s in got] == want
    by_name = kong_pyg.sketch_curve("MUTAG", {"k": 1}, sizes=[64], repeats=1, folds=2)
    from kong_pyg.datasets import load_tu

    assert by_name == [dict(r, feature_seconds=by_name[i]["feature_seconds"]) for i, r in enumerate(
        kong_pyg.sketch_curve(load_tu("MUTAG"), {"k": 1}, sizes=[64], repeats=1, folds=2))]
    with pytest.raises(ValueError, match="'graphs' is empty"):
        kong_pyg.sketch_curve([], {"k": 1})
    with pytest.raises(ValueError, match="'sizes' is empty and exact=False"):
        kong_pyg.sketch_curve("MUTAG", {"k": 1}, sizes=[], exact=False)


def test_grid_sizes_and_repeats_have_named_caps():
    """--k 1-1000 --hops 1-1000 built 10^6 settings (3.6 GB) before running out of memory; --repeats 100000
    and order_test(shuffles=10**9) ran out of memory naming nothing."""
    from kong_pyg import order_test
    from kong_pyg.evaluation.grid import MAX_SETTINGS

    with pytest.raises(ValueError, match=r"grid has 1,000,000 settings \(1000 x 1000 values of k, hops\)"):
        expand_grid("kong", {"k": list(range(1, 1001)), "hops": list(range(1000))})
    with pytest.raises(ValueError, match="more than 10,000"):
        expand_grid("kong", [{"k": 1}] * (MAX_SETTINGS + 1))
    assert len(expand_grid("kong", {"k": [1, 2], "hops": [1, 2]})) == 4
    with pytest.raises(ValueError, match=r"'repeats' must be <= 1,000"):
        classify("MUTAG", repeats=100_000, progress=False)
    with pytest.raises(ValueError, match=r"'shuffles' must be <= 1,000"):
        order_test("MUTAG", shuffles=10**9)


def test_n_jobs_without_fork_runs_here_and_says_so(monkeypatch):
    """Windows has no 'fork': the settings ran one after another in this process, silently."""
    import multiprocessing

    rng = np.random.default_rng(1)
    y = np.array([0, 1] * 20)
    sets = [np.c_[y + 0.1 * rng.normal(size=40), rng.normal(size=40)], rng.normal(size=(40, 2))]
    forked = cross_validate(sets, y, repeats=1, folds=4, nested=False, n_jobs=2)
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    with pytest.warns(UserWarning, match=r"n_jobs = 2 runs the settings in forked processes, and this system "
                                         r"has no 'fork' \(Windows\): they run one after another"):
        here = cross_validate(sets, y, repeats=1, folds=4, nested=False, n_jobs=2)
    assert np.array_equal(forked.outer, here.outer)


def test_files_are_written_where_os_has_no_fchmod(tmp_path, monkeypatch):
    """Windows before Python 3.13 has no os.fchmod: every file write (caches, outputs) failed."""
    import os

    from kong_pyg.files import atomic_files

    monkeypatch.delattr(os, "fchmod")
    with atomic_files([str(tmp_path / "a.bin")]) as (out,):
        out.write(b"kong")
    assert (tmp_path / "a.bin").read_bytes() == b"kong"


def test_kong_route_picks_the_route_measured_faster():
    """kong_route's cost model predated the Gram route's speed-up: a fixed 0.3 s for the explicit map and
    U^2 x nonzeros for the Gram route sent 600 small graphs at p = 2 to the Gram route (0.069 s against the
    explicit map's 0.008 s, one thread), and the paper grid's p <= 3 settings on ENZYMES, PROTEINS and
    NCI1 with them (12.5 s lost of 28.8 s on four data sets). It is now fitted to both routes' times, with a
    pass over the [graphs, graphs] output per block of node maps (docs/results/bench_routes.md). Clear
    cases only: no timing here."""
    import random

    from helpers import random_graph, to_data

    from kong_pyg import KongConfig
    from kong_pyg.datasets import load_tu
    from kong_pyg.evaluation.features import kong_route

    rng = random.Random(0)
    small = [to_data(random_graph(rng, 15, 40, 3)) for _ in range(600)]
    route, est = kong_route(KongConfig(k=1, hops=2, degree=2), small)
    assert route == "explicit" and est["gram_s_est"] > 3 * est["explicit_s_est"]  # (measured: 8x)
    route, est = kong_route(KongConfig(k=1, hops=2, degree=4), load_tu("MUTAG"))  # (few distinct node maps)
    assert route == "gram" and est["explicit_s_est"] > 5 * est["gram_s_est"]
    import torch
    from torch_geometric.data import Data

    n = 401  # (a star of 400 labels at p = 400: 1e231+ monomials, whose float power raised OverflowError)
    leaves = torch.arange(1, n)
    star = Data(x=torch.arange(n), edge_index=torch.stack([leaves, torch.zeros_like(leaves)]))
    assert kong_route(KongConfig(k=1, hops=1, degree=400, kernel="cosine"), [star, star])[0] == "gram"


@pytest.mark.parametrize("options,route", [
    (dict(hops=0, degree=200, kernel="cosine"), "gram"),  # the explicit map stops at p = 170 (p! overflows)
    (dict(hops=1, degree=4, const=1e75), "gram"),  # explicit values beyond 1e150, whose products overflow
    (dict(hops=2, degree=6, const=1e60, normalize=True), "gram"),  # normalized, raw kernel > float64
])
def test_settings_one_route_cannot_hold_take_the_other(options, route):
    """The route was chosen by time alone, so a setting worked or failed with the data set's size: on 200
    small graphs kong_route picked the explicit map, which refuses p > 170 and values beyond 1e150,
    while the Gram route (picked for 30 graphs) computes them; and the Gram route refused a normalized
    kernel whose raw values overflow, which the explicit map computes, row by row (it rescales them now).
    Each now takes a route that holds it, and gives gram_matrix's kernel (the oracle-tested route)."""
    import torch
    from torch_geometric.data import Data

    from kong_pyg import KongConfig, gram_matrix
    from kong_pyg.evaluation.features import Gram, kong_route, setting_features
    from kong_pyg.evaluation.grid import make_setting

    g = torch.Generator().manual_seed(0)
    graphs = []
    for i in range(200):
        n = 2 + i % 4
        graphs.append(Data(x=torch.randint(0, 2 + i % 2, (n,), generator=g),
                           edge_index=torch.randint(0, n, (2, 2 * n), generator=g)))
    assert kong_route(KongConfig(**options), graphs)[0] == route
    features = setting_features(make_setting("kong", options), graphs)
    assert isinstance(features, Gram) == (route == "gram")
    K = features.K if route == "gram" else (features @ features.T).toarray()
    # (the normalized one: the explicit map's rows against the Gram route's rescaled matrix)
    np.testing.assert_allclose(K, gram_matrix(graphs, **options), rtol=1e-9, atol=1e-12)


def test_the_routes_bound_on_explicit_values_is_the_sum_of_node_norms_to_the_p():
    """kong_route bounds the explicit graph map's entries by max_G sum_v ||g(c_v)||^p (an entry of a
    symmetric power is at most its norm); it was |G| sqrt(p!) m^p, which sent cosine p = 170 (entries of
    at most 1) to the Gram route, 27 GiB on 30,000 graphs. Against the count vectors of the string oracle."""
    import math
    import random

    from helpers import random_graph, to_data

    from kong_pyg import KongConfig, kgram_counts, kong_strings
    from kong_pyg.evaluation.features import kong_route

    rng = random.Random(3)
    raw = [random_graph(rng, 6, 10, 3) for _ in range(12)]
    graphs = [to_data(g) for g in raw]
    for options in (dict(k=1, hops=1, degree=3, const=2.0), dict(k=2, hops=2, degree=5),
                    dict(k=1, hops=2, degree=170, kernel="cosine")):
        cfg = KongConfig(**options)
        want = -math.inf
        for labels, edges, _ in raw:
            strings = kong_strings(edges, labels, cfg.hops)
            total = 0.0
            for s in strings:
                c = kgram_counts(s, cfg.k)
                sq = sum(v * v for v in c.values())
                if cfg.kernel == "cosine":
                    total += 1.0 if sq else 0.0
                else:
                    total += (sq + cfg.const) ** (cfg.degree / 2)
            want = max(want, math.log10(total) if total else -math.inf)
        assert kong_route(cfg, graphs)[1]["explicit_log10_max_bound"] == pytest.approx(want, rel=1e-12)


def test_a_normalized_setting_beyond_the_gram_routes_range_takes_the_explicit_map():
    """The Gram route rescales the whole matrix and refuses self-kernels more than about 1e290 apart; the
    explicit map normalizes each row and holds them: a normalized setting the Gram route refuses is
    computed with it (a star of 10,000 leaves beside one node at p = 40: 1.0001e-156, exact in integers).
    The route itself still goes by time (the Gram route's, here)."""
    from fractions import Fraction

    import torch
    from torch_geometric.data import Data

    from kong_pyg import KongConfig
    from kong_pyg.evaluation.features import kong_route, setting_features
    from kong_pyg.evaluation.grid import make_setting

    leaves = torch.arange(1, 10_001)
    hub = torch.zeros_like(leaves)
    star = Data(x=torch.zeros(10_001, dtype=torch.long),
                edge_index=torch.stack([torch.cat([leaves, hub]), torch.cat([hub, leaves])]))
    lone = Data(x=torch.zeros(1, dtype=torch.long), edge_index=torch.empty(2, 0, dtype=torch.long))
    options = dict(k=1, hops=1, degree=40, normalize=True)
    assert kong_route(KongConfig(**options), [star, lone])[0] == "gram"
    X = setting_features(make_setting("kong", options), [star, lone])
    assert sp.issparse(X)  # (the explicit map's rows)
    K = (X @ X.T).toarray()
    # maps (1, degree): the hub (1, 10^4), leaves (1, 1), the lone node (1, 0)
    nodes = ((10_000, 1), (1, 10_000))  # (degree, how many)
    k_ss = sum(n * m * (1 + a * b) ** 40 for a, n in nodes for b, m in nodes)
    k_sl = 1 + 10_000  # (every <c_v, lone> = 1)
    want = float(Fraction(k_sl**2, k_ss)) ** 0.5
    np.testing.assert_allclose(K, [[1.0, want], [want, 1.0]], rtol=1e-12)


@pytest.mark.parametrize("labels,degree", [(1, 80), (10, 50)])
def test_a_normalized_setting_neither_route_holds_names_the_gram_routes_refusal(labels, degree):
    """Where the explicit map cannot hold the setting either (values beyond 1e300 at p = 80; 7.5e10
    entries at p = 50 over 10 leaf labels), the Gram route's refusal is the error, not the explicit map's
    'too large, use a sketch' (which hid why the kernel could not be computed)."""
    import torch
    from torch_geometric.data import Data

    from kong_pyg.evaluation.features import setting_features
    from kong_pyg.evaluation.grid import make_setting
    from kong_pyg.gram import GramRangeError

    n = 10_000
    leaves = torch.arange(1, n + 1)
    hub = torch.zeros_like(leaves)
    star = Data(x=torch.cat([torch.tensor([labels]), torch.arange(n) % labels]),
                edge_index=torch.stack([torch.cat([leaves, hub]), torch.cat([hub, leaves])]))
    lone = Data(x=torch.zeros(1, dtype=torch.long), edge_index=torch.empty(2, 0, dtype=torch.long))
    with pytest.raises(GramRangeError, match="cannot be computed in float64"):
        setting_features(make_setting("kong", dict(k=1, hops=1, degree=degree, normalize=True)), [star, lone])


@pytest.mark.parametrize("data,setting,route", [
    ("MUTAG", "poly-4", "gram"), ("MUTAG", "cosine-rlb-3", "gram"), ("small", "poly-2", "explicit")])
def test_setting_features_computes_the_node_maps_once(monkeypatch, data, setting, route):
    """A p >= 2 setting computed its node maps twice: once for kong_route's choice, once more inside
    gram_matrix (about a third of NCI1 poly-2's features). The route now hands its maps on: one engine
    pass, and the same kernel as gram_matrix on either route (600 small graphs at p = 2: the explicit
    map, whose X X^T it is)."""
    import random

    from helpers import random_graph, to_data

    import kong_pyg.gram as gram
    from kong_pyg import gram_matrix
    from kong_pyg.datasets import load_tu
    from kong_pyg.evaluation.features import setting_features
    from kong_pyg.evaluation.grid import expand_grid, paper_grid

    rng = random.Random(0)
    small = [to_data(random_graph(rng, 15, 40, 3)) for _ in range(600)]
    graphs = load_tu("MUTAG") if data == "MUTAG" else small
    s = next(s for s in expand_grid("kong", paper_grid("kong")) if s.name == setting)
    calls = []
    real = gram.node_maps
    monkeypatch.setattr(gram, "node_maps", lambda *a, **k: calls.append(1) or real(*a, **k))
    out = setting_features(s, graphs)
    assert len(calls) == 1
    monkeypatch.undo()
    assert isinstance(out, Gram) == (route == "gram")
    K = out.K if isinstance(out, Gram) else (out @ out.T).toarray()
    np.testing.assert_allclose(K, gram_matrix(graphs, config=s.kong_config()), rtol=1e-12, atol=1e-9)


def test_settings_run_in_process_where_the_graphs_are_on_a_gpu():
    """classify and sketch_curve compute each setting's features in forked processes with n_jobs > 1; a
    forked child cannot use CUDA, so graphs on a GPU failed there ("Cannot re-initialize CUDA in forked
    subprocess", or a misleading layout error). Such graphs keep n_jobs = 1 (as device= does); graphs on
    the CPU keep n_jobs (a stand-in device here: this machine may have no GPU)."""
    from types import SimpleNamespace

    import torch

    from kong_pyg.evaluation.classify import _processes

    gpu = SimpleNamespace(x=SimpleNamespace(device=torch.device("cuda", 0)))
    assert _processes([gpu, gpu], 4) == 1
    assert _processes(SimpleNamespace(_data=gpu), 4) == 1  # (an in-memory dataset's moved storage)
    from kong_pyg.datasets import load_tu

    assert _processes(load_tu("MUTAG"), 4) == 4 and _processes(list(load_tu("MUTAG"))[:3], 2) == 2
    moved = load_tu("MUTAG")  # (a transform that moves each graph, as T.ToDevice does: its storage stays)
    moved.transform = lambda g: gpu
    assert _processes(moved, 4) == 1
    from kong_pyg.memory import gib

    assert [gib(2**30 - 1), gib(2**30), gib(5 << 20), gib(0)] == ["1.0 GiB", "1.0 GiB", "5.0 MiB", "0.0 MiB"]


@pytest.mark.parametrize("method", ["wl", "sp"])
def test_baseline_settings_read_their_normalize_option(method):
    """The extended grid's WL-L2 and SP-L2 settings (normalize=True) give unit rows, the raw ones counts:
    a setting_features that dropped the option ran every '-l2' setting raw, and no test noticed."""
    import torch
    from torch_geometric.data import Data

    from kong_pyg.evaluation.features import setting_features
    from kong_pyg.evaluation.grid import make_setting

    e = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
    graphs = [Data(x=torch.tensor([0, 1, 1]), edge_index=e),
              Data(x=torch.tensor([0, 0]), edge_index=e[:, :2])]
    l2 = setting_features(make_setting(method, {"normalize": True}), graphs)
    raw = setting_features(make_setting(method, {"normalize": False}), graphs)
    np.testing.assert_allclose(np.sqrt(l2.multiply(l2).sum(axis=1)).A.ravel(), 1.0, rtol=1e-12)
    norms = np.sqrt(raw.multiply(raw).sum(axis=1)).A
    np.testing.assert_allclose(l2.toarray(), raw.toarray() / norms, rtol=1e-12)
    assert norms.max() > 1.5


def test_sketched_cosine_norms_are_two_settings():
    """norm="sketch" only means something for a sketched cosine map: there the grid keeps both norms as
    two settings (elsewhere they are folded into one)."""
    s = expand_grid("kong", {"dim": [64], "kernel": ["cosine"], "norm": ["exact", "sketch"]})
    assert [x.config["norm"] for x in s] == ["exact", "sketch"]
    assert len(expand_grid("kong", {"kernel": ["cosine"], "norm": ["exact", "sketch"]})) == 1
