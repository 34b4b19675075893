"""The shared evaluation harness: splits as before, nested C as GridSearchCV(LinearSVC), seeded maps."""
import warnings

import numpy as np
import pytest


def _mutag(**options):
    from kong_pyg import KongVectorizer
    from kong_pyg.datasets import load_tu
    from kong_pyg.evaluation.classify import graph_targets

    graphs = load_tu("MUTAG")
    return KongVectorizer(**options).fit_transform(graphs), graph_targets(graphs)


def test_make_splits_are_the_earlier_harness_splits():
    """Repeat r: StratifiedKFold(shuffle, seed + r); inner splits of its training parts with the same seed."""
    from sklearn.model_selection import StratifiedKFold

    from kong_pyg.evaluation.cv import make_splits

    y = np.array([0] * 13 + [1] * 9 + [2] * 8)
    sp = make_splits(y, 3, 4, 3, seed=5)
    zeros = np.zeros(y.size)
    for r in range(3):
        outer = list(StratifiedKFold(4, shuffle=True, random_state=5 + r).split(zeros, y))
        for f, (train, test) in enumerate(outer):
            assert np.array_equal(sp.outer[r][f][0], train) and np.array_equal(sp.outer[r][f][1], test)
            cv = StratifiedKFold(3, shuffle=True, random_state=5 + r)
            for i, (a, b) in enumerate(cv.split(zeros[train], y[train])):
                assert np.array_equal(sp.inner[r][f][i][0], train[a])
                assert np.array_equal(sp.inner[r][f][i][1], train[b])


@pytest.mark.parametrize("trial", range(4))
def test_stratified_folds_are_scikit_learns(trial):
    """The harness's own stratified k-fold gives StratifiedKFold(shuffle=True)'s splits exactly."""
    from sklearn.model_selection import StratifiedKFold

    from kong_pyg.evaluation.splits import stratified_folds

    rng = np.random.default_rng(trial)
    checked = 0
    while checked < 60:
        classes, folds = int(rng.integers(2, 7)), int(rng.integers(2, 11))
        y = rng.integers(0, classes, size=int(rng.integers(folds, 300)))
        if trial % 2:  # labels that sort differently from their order of appearance
            y = np.array([f"c{9 - v}" for v in y])
        seed = int(rng.integers(0, 2**32 - 1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a class smaller than the folds: a warning, the same splits
            try:
                ref = list(StratifiedKFold(folds, shuffle=True, random_state=seed).split(np.zeros(y.size), y))
            except ValueError:  # every class smaller than the folds
                continue
        got = stratified_folds(y, folds, seed)
        assert len(got) == folds
        for (a, b), (c, d) in zip(ref, got):
            assert np.array_equal(a, c) and np.array_equal(b, d)
        checked += 1


def test_average_ranks_are_scipys():
    from scipy.stats import rankdata

    from kong_pyg.evaluation.cv import average_ranks

    rng = np.random.default_rng(0)
    for _ in range(200):
        shape = tuple(int(v) for v in rng.integers(1, 7, size=int(rng.integers(1, 4))))
        a = rng.integers(0, int(rng.integers(1, 5)), size=shape) + rng.choice([0.0, 0.5], size=shape)
        assert np.array_equal(average_ranks(a), rankdata(a, axis=-1))
    assert average_ranks(np.zeros((2, 0))).shape == (2, 0)


def test_roc_auc_of_nan_scores_is_nan():
    from kong_pyg.evaluation.cv import roc_auc

    scores = np.array([[0.1, np.nan, 0.2, 0.3, 0.9], [0.1, 0.8, 0.2, 0.05, 0.9]])
    auc = roc_auc(np.array([0, 1, 0, 1, 1]), scores)
    assert np.isnan(auc[0]) and auc[1] == 4 / 6


def test_labels_as_a_column_or_integral_floats_split_as_integers():
    from kong_pyg.evaluation.splits import make_splits

    y = np.array([0, 1, 1, 0, 2, 2, 1, 0, 2] * 3)
    a = make_splits(y, 2, 3, 2, seed=1)
    for other in (y.reshape(-1, 1), y.astype(float), np.array(list(y), dtype=object)):
        b = make_splits(other, 2, 3, 2, seed=1)
        pairs = [(u, v) for r, s in zip(a.outer, b.outer) for p, q in zip(r, s) for u, v in zip(p, q)]
        assert all(np.array_equal(u, v) for u, v in pairs)


def test_classify_imports_no_scikit_learn_or_scipy_stats():
    """Importing them costs about 1.5 s per process: the main job's fits need neither."""
    import subprocess
    import sys

    code = ("import sys; from kong_pyg import classify; "
            "classify(grid='quick', repeats=1, n_jobs=1, progress=False); "
            "print([m for m in ('sklearn', 'scipy.stats') if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_random_splits_are_table2s_splits():
    """StratifiedShuffleSplit(random_state=seed); split s: StratifiedKFold(min(I, smallest), seed + s)."""
    from sklearn.model_selection import StratifiedKFold, StratifiedShuffleSplit

    from kong_pyg.evaluation.cv import random_splits

    y = np.array([0] * 30 + [1] * 6)
    sp = random_splits(y, 4, test_size=0.4, inner_folds=5, seed=7)
    ref = list(StratifiedShuffleSplit(4, test_size=0.4, random_state=7).split(np.zeros(y.size), y))
    for s, (train, test) in enumerate(ref):
        assert np.array_equal(sp.outer[s][0][0], train) and np.array_equal(sp.outer[s][0][1], test)
        folds = min(5, int(np.bincount(y[train]).min()))
        assert folds < 5  # the small class has fewer than 5 graphs in training: fewer inner folds
        inner = list(StratifiedKFold(folds, shuffle=True, random_state=7 + s).split(np.zeros(train.size),
                                                                                     y[train]))
        assert len(sp.inner[s][0]) == len(inner)
        for (a, b), (ra, rb) in zip(sp.inner[s][0], inner):
            assert np.array_equal(a, train[ra]) and np.array_equal(b, train[rb])


def test_nested_choice_equals_gridsearchcv_linearsvc():
    """Per split: the C of GridSearchCV(LinearSVC) on the training part, its refit's accuracy and AUC."""
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import LinearSVC

    from kong_pyg.evaluation.cv import random_splits
    from kong_pyg.evaluation.harness import evaluate_features

    X, y = _mutag(kernel="cosine", relabel=1)
    Cs = [0.01, 0.1, 1.0, 10.0]
    sp = random_splits(y, 6, test_size=0.2, inner_folds=4, seed=3)
    res = evaluate_features({"K": X}, y, splits=sp, Cs=Cs)["K"]
    for s, ((train, test),) in enumerate(sp.outer):
        from sklearn.model_selection import PredefinedSplit

        fold = np.full(y.size, -1)
        for i, (_, b) in enumerate(sp.inner[s][0]):
            fold[b] = i
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search = GridSearchCV(LinearSVC(dual=False, tol=1e-8, max_iter=20000), {"C": Cs},
                                  cv=PredefinedSplit(fold[train])).fit(X[train], y[train])
        assert res.C[s] == search.best_params_["C"]
        assert res.scores["accuracy"][s] == pytest.approx(float((search.predict(X[test]) == y[test]).mean()))
        auc = roc_auc_score(y[test], search.decision_function(X[test]))
        assert res.scores["auc"][s] == pytest.approx(auc, abs=1e-9)


def test_seeded_maps_paper_protocol_and_errors():
    from kong_pyg.evaluation.cv import make_splits, random_splits
    from kong_pyg.evaluation.features import Gram
    from kong_pyg.evaluation.harness import evaluate_features

    X, y = _mutag(kernel="cosine")
    sp = random_splits(y, 5, test_size=0.2, inner_folds=3, seed=0)
    res = evaluate_features({"shared": X, "per-split": [X] * 5, "gram": Gram((X @ X.T).toarray())}, y,
                            splits=sp, Cs=[0.1, 10.0])
    shared = res["shared"]
    assert repr(shared) == (f"FeatureScores(mean over 5 split(s): accuracy {shared.mean('accuracy'):.4f}, "
                            f"auc {shared.mean('auc'):.4f}; {shared.fits} fits)")
    for name in ("per-split", "gram"):
        np.testing.assert_allclose(res[name].scores["accuracy"], res["shared"].scores["accuracy"])
        np.testing.assert_allclose(res[name].scores["auc"], res["shared"].scores["auc"], atol=1e-9)
        assert res[name].C == res["shared"].C
    paper = evaluate_features({"X": X}, y, splits=make_splits(y, 2, 5, None, 0), protocol="paper",
                              Cs=[0.1, 10.0], metrics=["accuracy"])["X"]
    grid = np.array(paper.grid["accuracy"])  # [C, splits]
    best = int(np.argmax(grid.mean(axis=1)))
    assert paper.C == [[0.1, 10.0][best]] * 10 and paper.scores["accuracy"] == grid[best].tolist()
    assert set(paper.scores) == {"accuracy"}
    with pytest.raises(ValueError, match="inner splits"):
        evaluate_features({"X": X}, y, splits=make_splits(y, 1, 5, None, 0))
    with pytest.raises(ValueError, match="2 entries for 5 outer splits"):
        evaluate_features({"X": [X, X]}, y, splits=sp)
    with pytest.raises(ValueError, match="'protocol'"):
        evaluate_features({"X": X}, y, splits=sp, protocol="best")
    with pytest.raises(TypeError, match="'splits' must be a Splits"):
        evaluate_features({"X": X}, y, splits=[(np.arange(5), np.arange(5, 10))])
    with pytest.raises(ValueError, match="the features contain NaN"):
        evaluate_features({"X": np.full((y.size, 2), np.nan)}, y, splits=sp)
    again = evaluate_features({"X": X}, y, splits=sp, Cs=[0.1, 10.0], device="cpu")["X"]
    assert again.scores == res["shared"].scores and again.C == res["shared"].C  # the default path
    with pytest.raises(ValueError, match="'device' is 'meta', a device that holds no values"):
        evaluate_features({"X": X}, y, splits=sp, device="meta")
    with pytest.raises(ValueError, match="'device' must be a device string"):
        evaluate_features({"X": X}, y, splits=sp, device="gpu7")


def test_cross_validate_takes_random_splits_with_fewer_inner_folds_on_some_splits():
    """random_splits lowers the inner folds of a split whose training part holds few graphs of a class: the
    inner scores are sized by the largest (an IndexError), and missing folds are NaN, never 0.0 scores."""
    from kong_pyg.evaluation.cv import cross_validate, random_splits
    from kong_pyg.evaluation.harness import evaluate_features

    y = np.array([1] * 6 + [0] * 54)
    X = np.random.default_rng(0).normal(size=(60, 4)) + y[:, None]
    sp = random_splits(y, 6, test_size=0.25, inner_folds=5, seed=1)
    counts = [len(folds) for rep in sp.inner for folds in rep]
    assert len(set(counts)) > 1, counts
    res = cross_validate([X], y, splits=sp, C=[0.1, 1])
    assert res.inner.shape[-1] == max(counts)
    for r, n in enumerate(counts):  # (one outer split per repeat)
        assert np.isfinite(res.inner[0, :, r, 0, :n]).all() and np.isnan(res.inner[0, :, r, 0, n:]).all()
    nested = res.protocol("nested")  # the C each outer split's own inner folds choose, as the harness's
    scores = evaluate_features({"X": X}, y, splits=sp, Cs=[0.1, 1])["X"]
    assert nested.accuracy_mean == pytest.approx(float(np.mean(scores.scores["accuracy"])))


def test_seeds_past_numpys_range_are_refused_up_front_with_their_name():
    from kong_pyg.evaluation.splits import make_splits, random_splits

    y = np.array([0, 1] * 10)
    make_splits(y, 2, 2, None, 2**32 - 2)  # repeat 1 uses 2**32 - 1: the last seed NumPy takes
    with pytest.raises(ValueError, match=r"'seed' must be at most 2\*\*32 - 2 = 4294967294 here: repeat r "
                                         r"uses seed \+ r, for 2 repeats \(got 4294967295\)"):
        make_splits(y, 2, 2, None, 2**32 - 1)
    with pytest.raises(ValueError, match=r"split r uses seed \+ r, for 3 splits"):
        random_splits(y, 3, test_size=0.3, inner_folds=2, seed=2**32 - 2)
    with pytest.raises(ValueError, match=r"'seed' must be in \[0, 2\*\*32\)"):
        random_splits(y, 3, test_size=0.3, seed=2**32)
    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="'test_size' must be a fraction in"):
            random_splits(y, 3, test_size=bad)


def test_evaluation_arguments_that_were_misread():
    """Sweep findings: each was an opaque crash, a silent choice or a NaN."""
    import scipy.sparse as ssp
    import torch

    import kong_pyg
    from kong_pyg.evaluation.features import Gram
    from kong_pyg.evaluation.harness import evaluate_features
    from kong_pyg.evaluation.splits import Splits, make_splits
    from kong_pyg.evaluation.stats import mean_ci

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 5)), rng.integers(0, 2, 30)
    sp_ = make_splits(y, 1, 3, 2, 0)
    # an outer fold without inner splits: cross_validate took the grid's first C there, silently
    holed = Splits(sp_.outer, [[sp_.inner[0][0], [], sp_.inner[0][2]]])
    with pytest.raises(ValueError, match="outer fold 1 of repeat 0 has no inner splits"):
        kong_pyg.cross_validate([X], y, splits=holed, C=[0.1, 1, 10])
    with pytest.raises(ValueError, match="inner splits for 1 repeats but 0 outer ones"):  # (IndexError)
        kong_pyg.cross_validate([X], y, splits=Splits([], sp_.inner), C=[1])
    extra = Splits(sp_.outer, [r + r[:1] for r in sp_.inner])
    with pytest.raises(ValueError, match="repeat 0 has 4 lists of inner splits for 3 outer folds"):
        kong_pyg.cross_validate([X], y, splits=extra, C=[1])
    with pytest.raises(TypeError, match="'splits' must be a Splits"):  # (AttributeError)
        kong_pyg.cross_validate([X], y, nested=False, splits=(sp_.outer, None))
    ragged = Splits([make_splits(y, 1, 2, None, 0).outer[0], make_splits(y, 1, 3, None, 1).outer[0]], None)
    with pytest.raises(ValueError, match=r"as many outer folds in every repeat \(got \[2, 3\]\)"):
        kong_pyg.cross_validate([X], y, nested=False, splits=ragged)
    # a Gram of a tensor, a sparse matrix or a list: the same results as of the array
    K = X @ X.T
    want = kong_pyg.cross_validate([Gram(K)], y, nested=False, repeats=1, folds=3).outer
    for held in (torch.tensor(K), ssp.csr_matrix(K), K.tolist()):
        got = kong_pyg.cross_validate([Gram(held)], y, nested=False, repeats=1, folds=3).outer
        assert np.array_equal(got, want)
    per_list = evaluate_features({"g": Gram(K.tolist())}, y, splits=sp_)["g"]  # (read as per-split entries)
    assert per_list.scores == evaluate_features({"g": Gram(K)}, y, splits=sp_)["g"].scores
    # one metric by name (was read letter by letter: got 'a')
    auc_only = evaluate_features({"x": X}, y, splits=sp_, metrics="auc")["x"]
    assert set(auc_only.scores) == {"auc"}
    # its mean() of the default metric names what was computed (a bare KeyError: 'accuracy')
    with pytest.raises(ValueError, match=r"no 'accuracy' scores: the metrics computed are \['auc'\]"):
        auc_only.mean()
    assert auc_only.mean("auc") == float(np.mean(auc_only.scores["auc"]))
    with pytest.raises(ValueError, match="'level' must be a confidence level in"):
        mean_ci([0.5, 0.6, 0.7], level=95)
    with pytest.raises(ValueError, match="1-D sequence"):
        mean_ci([[0.5, 0.6], [0.7, 0.8]])


def test_an_interrupt_stops_the_settings_under_way_in_worker_processes():
    """Ctrl-C or SIGTERM while settings run in forked workers ends the workers at once (the parent waited
    for every setting under way to finish: minutes on NCI1)."""
    import signal
    import time

    from kong_pyg.evaluation.grid import Setting
    from kong_pyg.evaluation.processes import run_settings
    from kong_pyg.progress import Progress

    if not hasattr(signal, "SIGALRM"):
        pytest.skip("needs SIGALRM")

    def work(entry, s, progress=None):
        time.sleep(120)

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    names = [Setting("kong", (("hops", 1),)), Setting("kong", (("hops", 2),))]
    previous = signal.signal(signal.SIGALRM, interrupt)
    start = time.monotonic()
    try:
        signal.alarm(3)  # (in this process only: the forked workers inherit no timer)
        with pytest.raises(KeyboardInterrupt):
            list(run_settings(work, [0, 1], names, 2, Progress(4, "t", enabled=False), 2))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert time.monotonic() - start < 60


def test_random_splits_refuse_a_training_part_without_a_class():
    """train_size=0.1 of 50/30/4 graphs gave class 2 no training graph (scikit-learn's rounding); it failed
    later as 'training set 0 holds no graph of class 2', a solver job's number."""
    from kong_pyg.evaluation.cv import random_splits

    y = np.array([0] * 50 + [1] * 30 + [2] * 4)
    for kw in (dict(train_size=0.1), dict(train_size=0.1, inner_folds=3), dict(train_size=8)):
        with pytest.raises(ValueError, match=r"split 0 \(train_size=(0.1|8)\) trains on no graph of class 2 "
                           r"\(4 of 84 graphs\); give a larger training part"):
            random_splits(y, 3, **kw)
    assert len(random_splits(y, 3, test_size=0.2).outer) == 3


def test_hand_made_splits_without_a_class_in_training_name_the_split():
    """It was 'training set 0 holds no graph of class 2', the solver's job number (outer and inner splits
    interleaved), which a user cannot map to a split."""
    from kong_pyg.evaluation.harness import evaluate_features
    from kong_pyg.evaluation.splits import Splits

    y = np.array([0] * 10 + [1] * 10 + [2] * 3)
    inner = [[[(np.r_[0:5, 10:15], np.r_[20:22])]]]  # (repeat 0, fold 0, inner split 0: within the outer)
    sp = Splits([[(np.r_[0:5, 10:15, 20:22], np.r_[5:10, 15:20, 22:23])]], inner)
    with pytest.raises(ValueError, match=r"^'splits' split \(0, 0, 0\) trains on no graph of class 2$"):
        evaluate_features({"a": np.random.default_rng(0).random((23, 3))}, y, splits=sp, protocol="nested")


def test_an_undefined_auc_warns_as_scikit_learn_does():
    """A two-class test part holding one class only gave a NaN ROC AUC without a word (scikit-learn's
    roc_auc_score warns); parts holding both classes give no warning."""
    from kong_pyg.evaluation.cv import random_splits
    from kong_pyg.evaluation.harness import evaluate_features

    rng = np.random.default_rng(0)
    y = np.array([1] * 3 + [0] * 97)
    X = rng.normal(size=(100, 4)) + y[:, None]
    sp = random_splits(y, 4, test_size=0.05, inner_folds=2, seed=0)
    one = sum(int(np.unique(y[test]).size < 2) for ((_, test),) in sp.outer)
    assert one > 0
    with pytest.warns(UserWarning, match=rf"ROC AUC is undefined \(NaN\) on {one} test part"):
        res = evaluate_features({"K": X}, y, splits=sp, Cs=[1.0], protocol="paper")["K"]
    assert np.isnan(res.scores["auc"]).sum() == one  # (whatever the field's layout: one NaN per such part)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evaluate_features({"K": X}, y, splits=random_splits(y, 2, test_size=0.5, inner_folds=2, seed=0),
                          Cs=[1.0], protocol="paper")


def test_protocol_choices_pinned_on_hand_made_scores():
    """The nested protocol picks, per outer fold, the (setting, C) of the best MEAN inner accuracy (one
    lucky inner fold must not win), and names the choice made in the most outer folds as its best; the
    paper protocol picks the C of the best mean OUTER accuracy. A mutation sweep found none of the three
    pinned: max for mean, fewest for most, and all splits for the top ones all passed the tests."""
    from kong_pyg.evaluation.cv import CVResult
    from kong_pyg.evaluation.grid import Setting
    from kong_pyg.evaluation.harness import evaluate_features
    from kong_pyg.evaluation.splits import make_splits

    settings = [Setting("features", (("index", i),)) for i in range(2)]
    outer = np.zeros((2, 1, 1, 2))
    outer[0], outer[1] = 0.3, 0.7
    inner = np.zeros((2, 1, 1, 2, 2))
    inner[0, 0, :, :] = [1.0, 0.0]  # mean 0.5, one lucky inner fold
    inner[1, 0, :, :] = [0.6, 0.6]  # mean 0.6: the choice
    res = CVResult(settings, [1.0], outer, inner, [0.0, 0.0], 0.0, 0, 0).protocol("nested")
    assert res.accuracy_mean == pytest.approx(0.7) and res.best_params["index"] == 1
    outer = np.full((2, 1, 1, 3), 0.5)
    inner = np.zeros((2, 1, 1, 3, 2))
    inner[1, 0, 0, :2] = 1.0  # setting 1 chosen in folds 0 and 1, setting 0 in fold 2
    res = CVResult(settings, [1.0], outer, inner, [0.0, 0.0], 0.0, 0, 0).protocol("nested")
    assert res.best_setting == "features-1" and res.chosen == {"features-1, C=1": 2, "features-0, C=1": 1}
    assert list(res.chosen) == ["features-1, C=1", "features-0, C=1"]  # (most often first, as reported)
    Cs = [1e-3, 1e-2, 0.1, 1, 10]
    for seed in range(12):
        rng = np.random.default_rng(seed)
        y = np.repeat([0, 1], 15)
        X = rng.normal(size=(30, 5)) + 0.4 * y[:, None]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = evaluate_features({"a": X}, y, splits=make_splits(y, 1, 3, 2, seed=seed), protocol="paper",
                                  Cs=Cs)["a"]
        means = np.mean(r.grid["accuracy"], axis=1)
        assert r.mean() == pytest.approx(means.max(), abs=1e-12) and r.C[0] == Cs[int(np.argmax(means))]
