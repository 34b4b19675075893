"""The batched LinearSVC solver against scikit-learn's LinearSVC on real data (bundled MUTAG; PTC_MR and
ENZYMES from /work/shared/data/tu when present)."""
import os
import warnings

import numpy as np
import pytest

TU_ROOT = "/work/shared/data/tu"


def _graphs(name):
    from kong_pyg.datasets import load_tu

    if name == "MUTAG":
        return load_tu("MUTAG")
    if not os.path.isdir(os.path.join(TU_ROOT, name, "raw")):
        pytest.skip(f"{name} is not under {TU_ROOT}")
    return load_tu(name, TU_ROOT)


def _setting(name):
    from kong_pyg.evaluation.grid import expand_grid, paper_grid

    return next(s for s in expand_grid("kong", paper_grid("kong")) if s.name == name)


def _sklearn(M, y, train, test, C, tol=1e-8, max_iter=20000):
    from sklearn.svm import LinearSVC

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = LinearSVC(C=C, dual=False, tol=tol, max_iter=max_iter).fit(M[train], y[train])
    return clf


def _fits(X, y, folds=5):
    from kong_pyg.evaluation import svm
    from kong_pyg.evaluation.cv import make_splits, plan_jobs
    from kong_pyg.evaluation.features import design_of

    jobs = plan_jobs(make_splits(y, 1, folds, None, 0), y.size)
    D, _ = design_of(X)
    return jobs, D, svm.fit_many(D, y, jobs.train, [0.1, 1.0, 10.0], parent=jobs.parent)


@pytest.mark.parametrize("data,setting", [("MUTAG", "cosine-1"), ("MUTAG", "poly-1"),
                                          ("MUTAG", "cosine-rlb-2"), ("PTC_MR", "cosine-rlb-1"),
                                          ("ENZYMES", "cosine-1")])
def test_predictions_equal_linearsvc(data, setting):
    """Same predictions and test accuracy as a tightly converged LinearSVC on the raw features, every C,
    every fold (ENZYMES: six classes, one-vs-rest); decision values agree."""
    from kong_pyg.evaluation.classify import graph_targets
    from kong_pyg.evaluation.features import Gram, kernel_map, setting_features

    graphs = _graphs(data)
    y = graph_targets(graphs)
    X = setting_features(_setting(setting), graphs)
    jobs, _, fits = _fits(X, y)
    assert fits.converged.all()
    M = kernel_map(X.K) if isinstance(X, Gram) else X
    pred = fits.predict()
    for j, test in enumerate(jobs.test):
        for c, C in enumerate([0.1, 1.0, 10.0]):
            clf = _sklearn(M, y, jobs.train[j], test, C)
            assert np.array_equal(clf.predict(M[test]), pred[j, c, test]), (j, C)
            if fits.classes.size == 2:  # (one-vs-rest: LIBLINEAR may stop early on a class)
                np.testing.assert_allclose(fits.scores[j, c][test], clf.decision_function(M[test]),
                                           rtol=1e-4, atol=1e-4)


def test_objective_never_worse_than_linearsvc_on_badly_scaled_features():
    """poly-4 on raw MUTAG counts (Gram entries up to 4e11): LIBLINEAR stops early; ours is the optimum."""
    from kong_pyg.evaluation import svm
    from kong_pyg.evaluation.classify import graph_targets
    from kong_pyg.evaluation.features import kernel_map, setting_features

    graphs = _graphs("MUTAG")
    y = graph_targets(graphs)
    X = setting_features(_setting("poly-4"), graphs)
    jobs, D, fits = _fits(X, y, folds=3)
    assert fits.converged.all()
    M = kernel_map(X.K)
    ypm = np.where(y == 1, 1.0, -1.0)
    for j, test in enumerate(jobs.test[:1]):
        for c, C in [(0, 0.1), (2, 10.0)]:
            clf = _sklearn(M, y, jobs.train[j], test, C, tol=1e-4, max_iter=200)  # stops early
            # sklearn's solution as a point of our design: w_sk such that Z w_sk = decision values
            w_sk = np.linalg.lstsq(D.Z.numpy(), clf.decision_function(M), rcond=None)[0]
            w_ours = np.linalg.lstsq(D.Z.numpy(), fits.scores[j, c], rcond=None)[0]
            f_sk = svm.objective(D, ypm, jobs.train[j], C, w_sk)
            f_ours = svm.objective(D, ypm, jobs.train[j], C, w_ours)
            assert f_ours <= f_sk * (1 + 1e-6), (j, C, f_ours, f_sk)


def test_wide_designs_go_to_liblinear_with_the_same_scores(monkeypatch):
    """Above EXACT_MAX_WIDTH columns and EXACT_MAX_GRAPHS graphs the harness fits LIBLINEAR per problem:
    same accuracies up to its tolerance."""
    from kong_pyg.evaluation import svm
    from kong_pyg.evaluation.classify import graph_targets
    from kong_pyg.evaluation.cv import make_splits, plan_jobs, score_jobs
    from kong_pyg.evaluation.features import setting_features

    graphs = _graphs("MUTAG")
    y = graph_targets(graphs)
    X = setting_features(_setting("cosine-rlb-1"), graphs)
    jobs = plan_jobs(make_splits(y, 1, 5, 2, 0), y.size)
    exact = score_jobs(X, y, jobs, [0.1, 1.0, 10.0])
    monkeypatch.setattr(svm, "EXACT_MAX_WIDTH", 50)
    assert score_jobs(X, y, jobs, [0.1]).info["solver"].startswith("exact")  # few graphs: still exact
    monkeypatch.setattr(svm, "EXACT_MAX_GRAPHS", 100)
    lib = score_jobs(X, y, jobs, [0.1, 1.0, 10.0])
    assert exact.info["solver"].startswith("exact") and lib.info["solver"].startswith("LIBLINEAR")
    n_test = np.array([t.size for t in jobs.test])[:, None]
    assert np.all(np.abs(exact.acc - lib.acc) * n_test <= 1)  # at most one test graph apart
    assert np.mean(exact.acc == lib.acc) > 0.9


@pytest.mark.parametrize("data,setting", [("MUTAG", "poly-4"), ("MUTAG", "cosine-rlb-3")])
def test_full_steps_and_size_groups_change_the_path_not_the_optimum(monkeypatch, data, setting):
    """Full Newton steps (primal-dual active set) and the grouping of systems by size only change how
    the optimum is reached: the same objective (to 1e-9) and predictions as the plain method."""
    from kong_pyg.evaluation import svm
    from kong_pyg.evaluation.classify import graph_targets
    from kong_pyg.evaluation.features import setting_features

    graphs = _graphs(data)
    y = graph_targets(graphs)
    X = setting_features(_setting(setting), graphs)
    jobs, D, fast = _fits(X, y, folds=3)
    monkeypatch.setattr(svm, "FULL_STEPS", 0)
    monkeypatch.setattr(svm, "GROUP_RATIO", float("inf"))
    monkeypatch.setattr(svm, "GROUP_MIN", 10 ** 9)
    _, _, plain = _fits(X, y, folds=3)
    assert fast.converged.all() and plain.converged.all()
    assert np.array_equal(fast.predict(), plain.predict())
    ypm = np.where(y == fast.classes[1], 1.0, -1.0)
    Zinv = np.linalg.pinv(D.Z.numpy())
    for j in range(len(jobs.keys)):
        for c, C in enumerate([0.1, 1.0, 10.0]):
            f1 = svm.objective(D, ypm, jobs.train[j], C, Zinv @ fast.scores[j, c])
            f2 = svm.objective(D, ypm, jobs.train[j], C, Zinv @ plain.scores[j, c])
            assert abs(f1 - f2) <= 1e-9 * max(f1, f2), (j, C, f1, f2)
