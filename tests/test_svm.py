"""The batched LinearSVC solver against scikit-learn's LinearSVC on real data (bundled MUTAG; PTC_MR and
ENZYMES from /work/shared/data/tu when present)."""
import os
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

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
    from kong_pyg.evaluation.cv import make_splits, num_fits, plan_jobs, score_jobs
    from kong_pyg.evaluation.features import setting_features

    graphs = _graphs("MUTAG")
    y = graph_targets(graphs)
    X = setting_features(_setting("cosine-rlb-1"), graphs)
    jobs = plan_jobs(make_splits(y, 1, 5, 2, 0), y.size)
    exact = score_jobs(X, y, jobs, [0.1, 1.0, 10.0])
    monkeypatch.setattr(svm, "EXACT_MAX_WIDTH", 50)
    assert score_jobs(X, y, jobs, [0.1]).info["solver"].startswith("exact")  # few graphs: still exact
    monkeypatch.setattr(svm, "EXACT_MAX_GRAPHS", 100)
    monkeypatch.setattr(svm, "LIBLINEAR_NNZ_RATIO", 1.0)
    done = []  # the progress bar counts LIBLINEAR's problems one fit at a time, as the exact solver's

    class Counter:
        def update(self, n):
            done.append(n)

    lib = score_jobs(X, y, jobs, [0.1, 1.0, 10.0], progress=Counter())
    assert len(done) == len(jobs.keys) * 3 and sum(done) == num_fits(y, len(jobs.keys), 3)
    assert exact.info["solver"].startswith("exact") and lib.info["solver"].startswith("LIBLINEAR")
    # dense designs stay exact (LIBLINEAR's iterations cost every entry): a Gram matrix, dense features,
    # and sparse ones with more nonzeros per row than the ratio allows
    from kong_pyg.evaluation.features import Gram

    K = (X @ X.T).toarray() if hasattr(X, "toarray") else X @ X.T
    for dense in (Gram(K, "test"), X.toarray() if hasattr(X, "toarray") else np.asarray(X)):
        assert score_jobs(dense, y, jobs, [0.1]).info["solver"] == "exact (batched Newton)"
    monkeypatch.setattr(svm, "LIBLINEAR_NNZ_RATIO", 1e-9)
    assert score_jobs(X, y, jobs, [0.1]).info["solver"] == "exact (batched Newton)"
    n_test = np.array([t.size for t in jobs.test])[:, None]
    assert np.all(np.abs(exact.acc - lib.acc) * n_test <= 1)  # at most one test graph apart
    assert np.mean(exact.acc == lib.acc) > 0.9


def test_wide_designs_where_liblinear_hits_its_cap_get_the_exact_solver(monkeypatch):
    """A wide design of many graphs on which LIBLINEAR reaches its iteration cap on the first training set
    (MUTAG's raw poly-rlb-4 map) is fit by the exact solver instead: converged, with the exact
    solver's accuracies, and the progress bar counts every problem once."""
    from kong_pyg.evaluation import liblinear, svm
    from kong_pyg.evaluation.classify import graph_targets
    from kong_pyg.evaluation.cv import make_splits, num_fits, plan_jobs, score_jobs
    from kong_pyg.evaluation.features import design_matrix, setting_features

    graphs = _graphs("MUTAG")
    y = graph_targets(graphs)
    X = sp.csr_matrix(design_matrix(setting_features(_setting("poly-rlb-4"), graphs)))  # sparse
    jobs = plan_jobs(make_splits(y, 1, 5, 2, 0), y.size)
    Cs = [0.1, 1.0, 10.0]
    probe = liblinear.fit_liblinear(design_matrix(X), y, jobs.train[:1], Cs)
    # the premise: LIBLINEAR is capped here (at some C: that routes the design; at C = 10 it stops at 981 to
    # 1000 iterations of its 1000 with the rounding of the design, so "at every C" failed on some machines)
    assert not probe.converged.all()
    exact = score_jobs(X, y, jobs, Cs)
    monkeypatch.setattr(svm, "EXACT_MAX_WIDTH", 50)
    monkeypatch.setattr(svm, "EXACT_MAX_GRAPHS", 100)
    monkeypatch.setattr(svm, "LIBLINEAR_NNZ_RATIO", 1.0)
    done = []

    class Counter:
        def update(self, n):
            done.append(n)

    routed = score_jobs(X, y, jobs, Cs, progress=Counter())
    assert routed.info["solver"].startswith("exact") and "iteration cap" in routed.info["solver"]
    assert routed.stuck == 0 and np.array_equal(routed.acc, exact.acc)
    assert sum(done) == num_fits(y, len(jobs.keys), 3)
    # where the probe converges the other training sets follow it, and all of them are reported
    assert liblinear.fit_liblinear_if_converging(design_matrix(X), y, jobs.train, Cs) is None
    Xc = setting_features(_setting("cosine-rlb-1"), graphs)
    lib = liblinear.fit_liblinear_if_converging(design_matrix(Xc), y, jobs.train, Cs)
    whole = liblinear.fit_liblinear(design_matrix(Xc), y, jobs.train, Cs)
    assert lib is not None and np.array_equal(lib.scores, whole.scores)
    assert np.array_equal(lib.iterations, whole.iterations) and lib.converged.all()


def test_capped_liblinear_fits_are_solved_again_exactly(monkeypatch):
    """LIBLINEAR's fits that reach its iteration cap are solved again by the exact solver: directly
    (resolve_capped, on fits capped at 2 iterations) and on the harness's route (one fit made to look
    capped)."""
    from kong_pyg.evaluation import liblinear, svm
    from kong_pyg.evaluation.classify import graph_targets
    from kong_pyg.evaluation.cv import design_of, make_splits, plan_jobs, score_jobs
    from kong_pyg.evaluation.features import design_matrix, setting_features

    graphs = _graphs("MUTAG")
    y = graph_targets(graphs)
    X = setting_features(_setting("cosine-rlb-1"), graphs)
    jobs = plan_jobs(make_splits(y, 1, 5, 2, 0), y.size)
    Cs = [0.1, 1.0, 10.0]
    D = design_of(X)[0]
    exact = svm.fit_many(D, y, jobs.train, Cs)
    capped = liblinear.fit_liblinear(design_matrix(X), y, jobs.train, Cs, max_iter=2)
    assert (~capped.converged).sum() > 10
    made = []
    fixed, again = liblinear.resolve_capped(capped, lambda: made.append(1) or D, y, jobs.train, Cs)
    assert again == int((~capped.converged).sum()) and made == [1] and fixed.converged.all()
    assert np.array_equal(fixed.predict()[~capped.converged], exact.predict()[~capped.converged])
    assert np.array_equal(fixed.scores[capped.converged], capped.scores[capped.converged])  # the others kept
    done, n = liblinear.resolve_capped(exact, lambda: 1 / 0, y, jobs.train, Cs)  # nothing capped: no design
    assert done is exact and n == 0

    real = liblinear.fit_liblinear

    def one_capped(M, y, train, Cs, **kw):  # the rest after the probe: its fit 3 is job 4 of the harness
        fits = real(M, y, train, Cs, **kw)
        if len(train) > 1:
            fits.converged[3, 2] = False
            fits.scores[3, 2] = -fits.scores[3, 2]  # a capped fit far from the optimum
        return fits

    reference = score_jobs(X, y, jobs, Cs)  # few graphs: the exact solver everywhere
    assert reference.info["solver"].startswith("exact")
    monkeypatch.setattr(liblinear, "fit_liblinear", one_capped)
    monkeypatch.setattr(svm, "EXACT_MAX_WIDTH", 50)
    monkeypatch.setattr(svm, "EXACT_MAX_GRAPHS", 100)
    monkeypatch.setattr(svm, "LIBLINEAR_NNZ_RATIO", 1.0)
    routed = score_jobs(X, y, jobs, Cs)
    solver = routed.info["solver"]
    assert solver.startswith("LIBLINEAR") and "its 1 capped fit solved again" in solver
    assert routed.stuck == 0 and routed.acc[4, 2] == reference.acc[4, 2] > 0.5
    # the work in each solver's own unit: LIBLINEAR's iterations, the Newton steps of the one fit solved again
    assert reference.info["steps_max"] >= 1 and "liblinear_iterations_mean" not in reference.info
    assert routed.info["liblinear_iterations_max"] >= routed.info["liblinear_iterations_mean"] >= 1
    assert routed.info["steps_mean"] == routed.info["steps_max"] >= 1


def _same_optimum(D, y, jobs, a, b):
    """Both fits converged, predict alike and reach the same objective (to 1e-9) on every problem."""
    from kong_pyg.evaluation import svm

    assert a.converged.all() and b.converged.all()
    assert np.array_equal(a.predict(), b.predict())
    ypm = np.where(y == a.classes[1], 1.0, -1.0)
    Zinv = np.linalg.pinv(D.Z.numpy())
    for j in range(len(jobs.keys)):
        for c, C in enumerate([0.1, 1.0, 10.0]):
            f1 = svm.objective(D, ypm, jobs.train[j], C, Zinv @ a.scores[j, c])
            f2 = svm.objective(D, ypm, jobs.train[j], C, Zinv @ b.scores[j, c])
            assert abs(f1 - f2) <= 1e-9 * max(f1, f2), (j, C, f1, f2)


def _plain(monkeypatch):
    """The plain monotone method: no full steps, no trial, one system size per group."""
    from kong_pyg.evaluation import svm

    monkeypatch.setattr(svm, "FULL_STEPS", 0)
    monkeypatch.setattr(svm, "PDAS_AFTER", 10 ** 9)
    monkeypatch.setattr(svm, "GROUP_RATIO", float("inf"))
    monkeypatch.setattr(svm, "GROUP_MIN", 10 ** 9)
    monkeypatch.setattr(svm, "LADDER_DECADES", 0)


@pytest.mark.parametrize("data,setting", [("MUTAG", "poly-4"), ("MUTAG", "cosine-rlb-3"),
                                          ("MUTAG", "poly-3")])
def test_full_steps_and_size_groups_change_the_path_not_the_optimum(monkeypatch, data, setting):
    """Full Newton steps (primal-dual active set, also the trial of :data:`PDAS_STEPS` of them after
    refused ones) and the grouping of systems by size only change how the optimum is reached: the
    same objective (to 1e-9) and predictions as the plain method, in other numbers of steps."""
    from kong_pyg.evaluation.classify import graph_targets
    from kong_pyg.evaluation.features import setting_features

    graphs = _graphs(data)
    y = graph_targets(graphs)
    X = setting_features(_setting(setting), graphs)
    jobs, D, fast = _fits(X, y, folds=3)
    _plain(monkeypatch)
    _, _, plain = _fits(X, y, folds=3)
    assert not np.array_equal(fast.iterations, plain.iterations)
    _same_optimum(D, y, jobs, fast, plain)


def test_full_step_trial_ends_in_the_optimum_where_it_wanders(monkeypatch):
    """Raw poly-4 (condition numbers from 1e12 to 1e14): by default no trial (:data:`PDAS_MAX_COND`);
    allowed, it ends at its best point, from which the monotone method reaches the same optimum as
    the plain method.

    Whether its full steps wander (more steps in all than without it) is rounding, of the design's
    eigendecomposition too: with two BLAS threads there, 110 steps with the trial against 95
    without; with one, 78 against 83. So only the optimum is asserted: a step count asserted here
    failed on one BLAS thread (``OMP_NUM_THREADS=1``)."""
    from kong_pyg.evaluation import svm
    from kong_pyg.evaluation.classify import graph_targets
    from kong_pyg.evaluation.features import setting_features

    graphs = _graphs("MUTAG")
    y = graph_targets(graphs)
    X = setting_features(_setting("poly-4"), graphs)
    jobs, D, default = _fits(X, y, folds=3)
    assert 1 + 2 * 0.1 * D.top > svm.PDAS_MAX_COND
    monkeypatch.setattr(svm, "PDAS_MAX_COND", float("inf"))
    _, _, trial = _fits(X, y, folds=3)
    assert trial.iterations.sum() != default.iterations.sum()  # (the trial ran: other steps)
    _plain(monkeypatch)
    _, _, plain = _fits(X, y, folds=3)
    _same_optimum(D, y, jobs, trial, plain)
    _same_optimum(D, y, jobs, default, plain)


def test_test_labels_never_reach_test_predictions_on_ill_conditioned_designs(monkeypatch):
    """Poly-2's Gram matrix times 1e6 (condition 7e13 at C = 0.1): flipping a fold's test labels
    leaves that fold's test predictions unchanged, because the path climbs from C = 0.001 (two
    hidden rungs, whose steps count as the first C's) rather than starting from the solution on
    all points. Without the climb up to 6-8 % of a fold's test predictions change: the start's flat
    directions, which rounding leaves unresolved, carry the test labels. The rungs equal the same C
    given explicitly; a rung cut short leaves the first C unconverged; beyond the ladder's reach
    every problem starts from zero (there rounding alone moves predictions, so only the start is
    checked)."""
    from kong_pyg.evaluation import svm
    from kong_pyg.evaluation.classify import graph_targets
    from kong_pyg.evaluation.cv import make_splits, plan_jobs
    from kong_pyg.evaluation.features import setting_features

    graphs = _graphs("MUTAG")
    y = graph_targets(graphs)
    jobs = plan_jobs(make_splits(y, 1, 5, None, 0), y.size)
    D = svm.design(None, setting_features(_setting("poly-2"), graphs).K * 1e6)
    assert svm._ladder(D, 0.1) == [pytest.approx(0.001), pytest.approx(0.01)]

    def changed():
        base = svm.fit_many(D, y, jobs.train, [0.1, 1.0, 10.0], parent=jobs.parent)
        out = []
        for j, test in enumerate(jobs.test):
            flipped = y.copy()
            flipped[test] = 1 - flipped[test]
            again = svm.fit_many(D, flipped, jobs.train, [0.1, 1.0, 10.0], parent=jobs.parent)
            out.append(np.mean(base.predict()[j][:, test] != again.predict()[j][:, test]))
        return base, np.array(out)

    climbed, moved = changed()
    assert climbed.converged.all() and climbed.iterations[:, 0].min() >= 3
    assert np.all(moved == 0)
    # the hidden rungs are the path [0.001, 0.01, 0.1, 1, 10] (whose first C needs none), steps summed
    seen = []
    explicit = svm.fit_many(D, y, jobs.train, [0.001, 0.01, 0.1, 1.0, 10.0], parent=jobs.parent)
    hidden = svm.fit_many(D, y, jobs.train, [0.1, 1.0, 10.0], parent=jobs.parent, progress=seen.append)
    np.testing.assert_array_equal(hidden.scores, explicit.scores[:, 2:])
    np.testing.assert_array_equal(hidden.iterations[:, 0], explicit.iterations[:, :3].sum(1))
    assert sum(seen) == 3 * len(jobs.keys)  # progress counts the real C only
    # a rung that runs out of steps leaves the first C unconverged (those problems are solved again from zero)
    short = svm.fit_many(D, y, jobs.train, [0.1, 1.0, 10.0], parent=jobs.parent, max_iter=25)
    assert not short.converged[:, 0].all()
    # where even the lowest allowed rung is beyond the bound, no problem starts from the solution on
    # all points (a wrong one changes nothing)
    monkeypatch.setattr(svm, "LADDER_DECADES", 1)
    newton = svm.newton

    def wrong_on_all_points(D_, y_, train, C, w, *args, **kwargs):
        out = newton(D_, y_, train, C, w, *args, **kwargs)
        return (out[0] + 1.0, *out[1:]) if train.size(0) == 1 and bool(train.all()) else out

    capped = svm.fit_many(D, y, jobs.train, [0.1, 1.0, 10.0], parent=jobs.parent)
    monkeypatch.setattr(svm, "newton", wrong_on_all_points)
    np.testing.assert_array_equal(svm.fit_many(D, y, jobs.train, [0.1, 1.0, 10.0], parent=jobs.parent).scores,
                                  capped.scores)
    monkeypatch.setattr(svm, "newton", newton)
    # (converged fits come out the same from any start, so the check above cannot see a start from the
    # solution on all points; what it would carry can be seen: beyond the one allowed decade, on the design
    # x 1e9, flipping a fold's test labels still moves none of its test predictions)
    D6 = D
    D = svm.design(None, setting_features(_setting("poly-2"), graphs).K * 1e9)
    _, far = changed()
    assert np.all(far == 0)
    D = D6
    monkeypatch.setattr(svm, "LADDER_DECADES", 0)
    _, leaked = changed()
    assert leaked.max() > 0.01


def test_fits_stopped_at_max_iter_never_carry_their_test_labels():
    """Fits start at the first C from the solution on all points (inner ones from their outer fold's);
    one stopped at max_iter stayed near that start, so its test labels reached its test predictions:
    on random labels 100 % test accuracy at max_iter=1, 85 % at 2. Such fits are solved again from
    zero: flipping a fold's test labels changes none of its test predictions, at any max_iter."""
    from kong_pyg.evaluation import svm
    from kong_pyg.evaluation.cv import cross_validate, make_splits, plan_jobs

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 120)
    X = rng.normal(size=(120, 500))
    for max_iter in (1, 2, 3):
        res = cross_validate([X], y, repeats=3, folds=5, nested=False, C=[1e4], max_iter=max_iter)
        assert res.outer.mean() < 0.6  # (chance: 0.5; 1.0, 0.85, 0.72 before)
    jobs = plan_jobs(make_splits(y, 1, 5, 3, 0), y.size)  # (inner folds: their parents' starts too)
    D = svm.design(X)
    for max_iter in (1, 2):
        base = svm.fit_many(D, y, jobs.train, [1e4], parent=jobs.parent, max_iter=max_iter)
        assert not base.converged.all() or max_iter > 1
        for j, test in enumerate(jobs.test):
            flipped = y.copy()
            flipped[test] = 1 - flipped[test]
            again = svm.fit_many(D, flipped, jobs.train, [1e4], parent=jobs.parent, max_iter=max_iter)
            np.testing.assert_array_equal(base.predict()[j][:, test], again.predict()[j][:, test])


def test_design_knows_its_largest_eigenvalue():
    """:attr:`Design.top` is the largest eigenvalue of :math:`Z Z^\\top` from features (both shapes)
    and from a Gram matrix; a design built by hand falls back to the trace, an upper bound."""
    import torch

    from kong_pyg.evaluation import svm

    rng = np.random.default_rng(0)
    for shape in [(30, 5), (8, 20)]:
        X = rng.poisson(2.0, size=shape).astype(float)
        for D in (svm.design(X), svm.design(None, X @ X.T)):
            expect = np.linalg.eigvalsh(X @ X.T + 1.0).max()
            assert D.top == pytest.approx(expect, rel=1e-10)
            assert float(torch.linalg.eigvalsh(D.gram).max()) == pytest.approx(expect, rel=1e-10)
    D = svm.design(rng.normal(size=(12, 3)))
    y = np.where(np.arange(12) % 2 == 0, 1, -1)
    train = np.ones((1, 12), dtype=bool)
    by_hand = svm.fit_many(svm.Design(D.Z, D.gram), y, train, [1.0])
    assert np.isnan(svm.Design(D.Z, D.gram).top)
    np.testing.assert_allclose(by_hand.scores, svm.fit_many(D, y, train, [1.0]).scores, atol=1e-12)


def test_newton_cut_short_never_returns_a_worse_point():
    """Stopped by :obj:`max_iter` at any step, also during a trial of full steps (whose objective may
    be far above its start), every problem's point is no worse than its starting point."""
    import torch

    from kong_pyg.evaluation import svm
    from kong_pyg.evaluation.classify import graph_targets
    from kong_pyg.evaluation.features import setting_features

    graphs = _graphs("MUTAG")
    y = graph_targets(graphs)
    X = setting_features(_setting("poly-3"), graphs)
    jobs, D, _ = _fits(X, y, folds=3)
    ypm = torch.from_numpy(np.where(y == 1, 1.0, -1.0))
    train = torch.as_tensor(jobs.train)
    C = torch.full((train.size(0),), 0.1, dtype=torch.float64)
    w0 = torch.zeros(train.size(0), D.Z.size(1), dtype=torch.float64)
    start = [svm.objective(D, ypm.numpy(), jobs.train[j], 0.1, w0[j].numpy()) for j in range(train.size(0))]
    unfinished = 0
    for max_iter in range(1, 16):
        w, _, done = svm.newton(D, ypm, train, C, w0, max_iter)
        unfinished += int((~done).sum())
        for j in range(train.size(0)):
            assert svm.objective(D, ypm.numpy(), jobs.train[j], 0.1, w[j].numpy()) <= start[j] * (1 + 1e-12)
    assert unfinished > 0


def test_device_argument():
    """device='cpu' is the default path bit for bit; a device this PyTorch cannot use is a ValueError
    naming 'device' (a CPU-only build asserts for 'cuda'), before any work."""
    import torch

    from kong_pyg.evaluation import svm
    from kong_pyg.evaluation.classify import graph_targets
    from kong_pyg.evaluation.features import setting_features

    graphs = _graphs("MUTAG")
    y = graph_targets(graphs)
    jobs, D, ref = _fits(setting_features(_setting("poly-rlb-2"), graphs), y)
    again = svm.fit_many(D, y, jobs.train, [0.1, 1.0, 10.0], parent=jobs.parent, device=torch.device("cpu"))
    assert np.array_equal(ref.scores, again.scores) and np.array_equal(ref.iterations, again.iterations)
    with pytest.raises(ValueError, match="'device' must be a device string"):
        svm.fit_many(D, y, jobs.train, [0.1], device="gpu7")
    with pytest.raises(TypeError, match="'device'"):
        svm.fit_many(D, y, jobs.train, [0.1], device=0.5)
    with pytest.raises(ValueError, match="'device' is 'meta', a device that holds no values"):
        svm.fit_many(D, y, jobs.train, [0.1], device="meta")  # allocates, but holds no values
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="'device' is 'cuda', which this PyTorch cannot use"):
            svm.fit_many(D, y, jobs.train, [0.1], device="cuda")


def test_no_training_sets_give_empty_fits():
    """B = 0 training sets: empty results of the right shapes (an IndexError inside the solver before)."""
    from kong_pyg.evaluation import svm

    X = np.random.RandomState(0).randn(20, 3)
    y = np.array([0, 1] * 10)
    fits = svm.fit_many(svm.design(X), y, np.zeros((0, 20), bool), [0.1, 1.0])
    assert fits.scores.shape == (0, 2, 20)
    assert fits.iterations.shape == fits.converged.shape == (0, 2)
    assert fits.predict().shape == (0, 2, 20)
    y3 = np.array([0, 1, 2] * 7)[:20]
    assert svm.fit_many(svm.design(X), y3, np.zeros((0, 20), bool), [1.0]).scores.shape == (0, 1, 20, 3)


def test_liblinear_names_are_served_and_listed():
    """svm still answers for the LIBLINEAR fallback's names (moved to liblinear.py) and lists them."""
    from kong_pyg.evaluation import liblinear, svm

    for name in ("fit_liblinear", "LIBLINEAR_TOL", "LIBLINEAR_MAX_ITER"):
        assert getattr(svm, name) is getattr(liblinear, name) and name in dir(svm)
    assert "fit_many" in dir(svm)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        svm.nope  # noqa: B018


def test_the_intercept_survives_large_features():
    """Features of 1e6 made the intercept's direction of X X^T + 1 look negligible next to the
    features' (1e-12 of the largest eigenvalue), and the rank cut dropped it: the problem was no
    longer LinearSVC's. The intercept is now a column of its own there: the design spans the column
    of ones, Z Z^T = X X^T + 1 (the +1 visible where rounding allows), ``top`` is its largest
    eigenvalue, and on these data the scaled features predict as the unscaled ones."""
    from kong_pyg import cross_validate
    from kong_pyg.evaluation import svm

    rng = np.random.default_rng(5)
    B = rng.normal(size=(40, 4))
    y = (B[:, 0] + 0.5 * rng.normal(size=40) > 0).astype(int)
    ref = cross_validate([B], y, repeats=1, folds=4, C=[1.0], nested=False).outer
    for scale in (1e6, 1e8):
        X = B * scale
        for D in (svm.design(X), svm.design(None, X @ X.T)):
            Z = D.Z.numpy()
            ones = np.ones(40)
            assert np.linalg.norm(Z @ np.linalg.lstsq(Z, ones, rcond=None)[0] - ones) < 1e-6
            if scale == 1e6:  # (entries up to about 1e13: rounding about 1e-3, the +1 stands out)
                np.testing.assert_allclose(D.gram.numpy() - X @ X.T, np.ones((40, 40)), atol=0.05)
            assert D.top == pytest.approx(np.linalg.eigvalsh(X @ X.T + 1).max(), rel=1e-12)
        out = cross_validate([X], y, repeats=1, folds=4, C=[1.0], nested=False).outer
        np.testing.assert_array_equal(out, ref)


def test_the_intercept_check_does_not_fire_where_nothing_was_cut(monkeypatch):
    """Where the rank cut keeps every direction (counts up to 1e4 here) the design is the one of
    X X^T + 1 as a whole (the check of the spanned ones uses the columns' own norms: the
    eigenvalues differ from them by the rounding of the largest); where the ones column's direction
    falls below the cut (counts of 1e5: 6e-14 of the largest), the intercept gets its column."""
    from kong_pyg.evaluation import basis

    apart = []
    real = basis._arrowhead_top
    monkeypatch.setattr(basis, "_arrowhead_top", lambda *a: apart.append(1) or real(*a))
    for scale, expect in ((1e3, 0), (1e4, 0), (1e5, 20)):
        apart.clear()
        for seed in range(10):
            X = np.random.default_rng(seed).poisson(3, size=(60, 8)).astype(float) * scale
            basis.design(X)
            basis.design(None, X @ X.T)
        assert len(apart) == expect, scale


@pytest.mark.parametrize("w,a,n", [([0.0], [0.0], 7.0), ([5.0, 50.0], [0.0, 0.0], 7.0),
                                   ([5.0, 50.0], [0.0, 0.0], 70.0),
                                   ([1e12, 3.0, 0.5], [1e5, 0.2, 0.0], 40.0)])
def test_arrowhead_top_is_the_largest_eigenvalue(w, a, n):
    from kong_pyg.evaluation.basis import _arrowhead_top

    w, a = np.array(w), np.array(a)
    M = np.diag(np.append(w, n))
    M[-1, :-1] = M[:-1, -1] = a
    assert _arrowhead_top(w, a, n) == pytest.approx(np.linalg.eigvalsh(M).max(), rel=1e-13)
    rng = np.random.default_rng(0)
    for _ in range(50):
        Z = np.hstack([rng.normal(size=(30, 3)) * 10.0 ** rng.uniform(-3, 6), np.ones((30, 1))])
        U = np.linalg.eigh(Z[:, :3].T @ Z[:, :3])[1]
        ZX = Z[:, :3] @ U
        top = _arrowhead_top((ZX * ZX).sum(0), ZX.sum(0), 30.0)
        ZZ = np.hstack([ZX, np.ones((30, 1))])
        assert top == pytest.approx(np.linalg.eigvalsh(ZZ.T @ ZZ).max(), rel=1e-12)


def test_the_liblinear_route_refuses_a_training_set_without_a_class(monkeypatch):
    """As the exact route does (LIBLINEAR's raised "cannot reshape array of size 2100 into shape ...")."""
    import scipy.sparse as sp

    from kong_pyg.evaluation import svm
    from kong_pyg.evaluation.cv import plan_jobs, score_jobs
    from kong_pyg.evaluation.splits import Splits

    monkeypatch.setattr(svm, "EXACT_MAX_WIDTH", 50)
    monkeypatch.setattr(svm, "EXACT_MAX_GRAPHS", 100)
    rng = np.random.default_rng(0)
    n, d = 300, 200
    X = sp.csr_matrix((np.ones(n * 3), (np.repeat(np.arange(n), 3), rng.integers(0, d, n * 3))), shape=(n, d))
    y = np.array(["a", "b", "c"])[rng.integers(0, 3, n)]
    train, test = np.flatnonzero(y != "c"), np.flatnonzero(y == "c")
    for route_width in (50, 10**6):  # the LIBLINEAR route, and the exact one: one message
        monkeypatch.setattr(svm, "EXACT_MAX_WIDTH", route_width)
        with pytest.raises(ValueError, match="training set 0 holds no graph of class 'c'"):
            score_jobs(X, y, plan_jobs(Splits([[(train, test)]], None), n), [1.0])


def test_feature_columns_below_the_rank_cut_are_warned_about():
    """Deep raw counts (1e10) beside shallow ones: the basis cannot keep the small columns, so the fit differs
    from LinearSVC's; it used to say nothing (all problems "converged")."""
    import warnings

    from kong_pyg.evaluation.svm import design

    rng = np.random.default_rng(0)
    X = rng.random((40, 6))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        design(X)  # comparable scales: no warning
        design(X * np.array([1, 1, 1, 1, 1, 1e5]))  # five decades: still kept
    with pytest.warns(UserWarning, match=r"5 of the 6 feature columns are below 1e-06 of the largest in norm "
                                         r"\(the features span .*e\+0?7 in scale\).*scale the columns"):
        D = design(X * np.array([1, 1, 1, 1, 1, 1e7]))
    assert D.Z.shape[1] < 7


@pytest.mark.parametrize("scale", [1.0, 1e4, 1e8, 1e12])
def test_large_centred_features_keep_the_intercept(scale):
    """Features of mixed signs and norm 1e8 or more (no warning: every column of one size): the kernel-form
    systems held the intercept below their rounding, and the fit stopped 3x above the optimum, reported as
    converged. The LinearSVC problem, rewritten in coordinates v = scale * w and solved by BFGS, is the
    reference: the same objective and predictions at every scale."""
    from scipy.optimize import minimize

    from kong_pyg.evaluation import svm

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 5))
    y = (X[:, 0] + 0.5 * rng.normal(size=30) > 0).astype(int)
    yy = np.where(y == 1, 1.0, -1.0)
    train = np.ones(30, dtype=bool)
    train[::3] = False
    D = svm.design(X * scale)
    assert D.apart == (scale >= 1e8)  # (the intercept's column apart: the rank cut would take it)
    for C in (0.1, 10.0):
        fits = svm.fit_many(D, y, train[None], [C])

        def f(p):
            m = np.maximum(0, 1 - yy[train] * (X[train] @ p[:-1] + p[-1]))
            return 0.5 * p[:-1] @ p[:-1] / scale ** 2 + 0.5 * p[-1] ** 2 + C * m @ m

        def grad(p):
            m = np.maximum(0, 1 - yy[train] * (X[train] @ p[:-1] + p[-1]))
            q = -2 * C * m * yy[train]
            return np.append(X[train].T @ q + p[:-1] / scale ** 2, p[-1] + q.sum())

        ref = minimize(f, np.zeros(6), jac=grad, method="BFGS", options={"gtol": 1e-13}).x
        score = X @ ref[:-1] + ref[-1]
        assert bool(fits.converged[0, 0])
        assert np.array_equal(np.sign(fits.scores[0, 0]), np.sign(score))
        np.testing.assert_allclose(fits.scores[0, 0], score, rtol=1e-5, atol=1e-5)


def test_warnings_name_the_callers_line_on_every_path():
    """The rank-cut warning is raised deep in the SVM's basis; reached from `design` or through
    `cross_validate`, it names the line in the caller's file (a fixed stacklevel named a line of
    kong_pyg on one of the two paths)."""
    from kong_pyg.evaluation.cv import cross_validate
    from kong_pyg.evaluation.svm import design

    rng = np.random.default_rng(0)
    X = rng.random((40, 6)) * np.array([1, 1, 1, 1, 1, 1e7])
    y = np.arange(40) % 2
    with pytest.warns(UserWarning, match="feature columns are below") as direct:
        design(X)
    with pytest.warns(UserWarning, match="feature columns are below") as through:
        cross_validate([X], y, repeats=1, folds=2, nested=False)
    with pytest.warns(UserWarning, match="feature columns are below") as forked:  # (raised in workers)
        cross_validate([X, 2 * X], y, repeats=1, folds=2, nested=False, n_jobs=2)
    for caught in (direct, through, forked):
        assert {w.filename for w in caught if "feature columns" in str(w.message)} == {__file__}

    from kong_pyg import KongSketch  # (a warning from a hook that torch's load_state_dict calls)

    state = {k: v for k, v in KongSketch(dim=8).state_dict().items() if not k.endswith("scheme")}
    with pytest.warns(UserWarning, match="the state dict has no 'scheme'") as hooked:
        KongSketch(dim=8).load_state_dict(state)
    assert {w.filename for w in hooked} == {__file__}


def test_settings_run_with_one_blas_thread():
    """`--jobs 1` promised one thread per setting, but NumPy's BLAS (the basis' eigh, the products) kept its
    own pool of threads: a second busy thread beside the PyTorch one."""
    from threadpoolctl import threadpool_info

    from kong_pyg.evaluation.cv import cross_validate

    rng = np.random.default_rng(0)
    X = rng.random((40, 6))
    seen = []

    def features():
        seen.append({i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"})
        return X

    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=2, user_api="blas"):  # (a BLAS of two threads around, whatever the machine)
        cross_validate([features], np.arange(40) % 2, repeats=1, folds=2, nested=False)
    assert seen == [{1}]


def test_forked_workers_follow_the_callers_warning_filters():
    """Warnings from cross_validate's worker processes are raised again in the caller; the workers recorded
    every warning ("always"), so filters that ignore one let it through with n_jobs=2 only, and an "error"
    filter let the workers finish every setting first."""
    import warnings

    from kong_pyg.evaluation.cv import cross_validate

    rng = np.random.default_rng(0)
    X = rng.random((40, 6)) * np.array([1, 1, 1, 1, 1, 1e7])
    y = np.arange(40) % 2
    import types

    lib = types.ModuleType("lib_for_this_test")  # (a library that warns, which the caller silences by module)
    exec(compile("import warnings\ndef f():\n    warnings.warn('the library says so', UserWarning)\n",
                 "lib_for_this_test.py", "exec"), lib.__dict__)

    def features():
        lib.f()
        return X

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", module="lib_for_this_test")
        warnings.filterwarnings("ignore", message=".*feature columns are below")
        cross_validate([features, features], y, repeats=1, folds=2, nested=False, n_jobs=2)
    assert not [w for w in caught if "the library says so" in str(w.message)]
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*feature columns are below")
        with pytest.raises(UserWarning, match="feature columns are below"):
            cross_validate([X, 2 * X], y, repeats=1, folds=2, nested=False, n_jobs=2)


def test_masked_features_are_refused_where_entries_are_masked():
    """cross_validate read the values hidden under a masked array's mask (kernel_matrix does not either)."""
    from kong_pyg.evaluation.cv import cross_validate
    from kong_pyg.evaluation.features import Gram

    X = np.random.default_rng(0).random((20, 3))
    mask = np.zeros_like(X, dtype=bool)
    mask[3, 1] = True
    y = np.arange(20) % 2
    for entry, what in ((np.ma.masked_array(X, mask), "features of setting 0 is a masked array"),
                        (Gram(np.ma.masked_array(X @ X.T, np.zeros((20, 20), bool) | (np.eye(20) > 0))),
                         "the Gram's K is a masked array")):
        with pytest.raises(ValueError, match=what):
            cross_validate([entry], y, repeats=1, folds=2, nested=False)
    plain = cross_validate([np.ma.masked_array(X)], y, repeats=1, folds=2, nested=False)
    assert np.array_equal(plain.outer, cross_validate([X], y, repeats=1, folds=2, nested=False).outer)


def test_forked_workers_stop_on_an_error_and_send_any_warning(tmp_path):
    """An "error" filter (or any error) in a worker let the pool run every setting not yet begun before the
    error reached the caller; a warning category that does not pickle (made in a function) failed the whole
    cross_validate with n_jobs=2."""
    import time
    import warnings

    from kong_pyg.evaluation.cv import cross_validate

    X = np.random.default_rng(0).random((20, 3))
    y = np.arange(20) % 2
    log = tmp_path / "begun"

    def setting(i):
        def features():
            with open(log, "a") as f:
                f.write(f"{i}\n")
            if i == 0:
                warnings.warn("setting 0 is odd", UserWarning)
            time.sleep(0.3)
            return X
        return features

    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="setting 0 is odd")
        with pytest.raises(UserWarning, match="setting 0 is odd"):
            cross_validate([setting(i) for i in range(10)], y, repeats=1, folds=2, nested=False, n_jobs=2)
    assert len(log.read_text().split()) < 10

    class LocalWarning(UserWarning):
        pass

    def odd():
        warnings.warn("a local kind", LocalWarning)
        return X

    with pytest.warns(UserWarning, match="LocalWarning: a local kind"):
        cross_validate([odd, odd], y, repeats=1, folds=2, nested=False, n_jobs=2)


def test_lapack_and_torch_solves_agree_and_a_failed_factor_is_restored():
    """SciPy's LAPACK route (:data:`LAPACK_MIN`) solves what PyTorch's does, to rounding; a system whose
    factorization fails there is rebuilt from the triangle ``dpotrf`` left alone and solved by the
    eigenvalue fallback, as PyTorch's route solves it (a wrong restore would solve another matrix)."""
    import torch

    from kong_pyg.evaluation import systems

    g = torch.Generator().manual_seed(0)
    for s, B in [(64, 3), (130, 2), (300, 1)]:
        X = torch.randn(B, s, s + 5, generator=g, dtype=torch.float64)
        A = X @ X.mT / s + 0.01 * torch.eye(s, dtype=torch.float64)
        b = torch.randn(B, s, generator=g, dtype=torch.float64)
        want = systems.solve_torch(A.clone(), b)
        got = systems.solve(A.clone(), b)  # (the LAPACK route: float64 on the CPU, s >= LAPACK_MIN)
        assert s >= systems.LAPACK_MIN
        assert torch.allclose(got, want, rtol=1e-9, atol=1e-9 * float(want.abs().max()))
        assert torch.allclose(A @ got.unsqueeze(2), b.unsqueeze(2), atol=1e-8)
    # a singular (rank 10) PSD system between two regular ones
    s = 80
    V = torch.randn(s, 10, generator=g, dtype=torch.float64)
    X = torch.randn(s, s, generator=g, dtype=torch.float64)
    eye, f64 = torch.eye(s, dtype=torch.float64), torch.float64
    A = torch.stack([X @ X.T + eye, V @ V.T, X @ X.T / s + eye])
    b = torch.stack([torch.randn(s, generator=g, dtype=f64), V @ torch.randn(10, generator=g, dtype=f64),
                     torch.randn(s, generator=g, dtype=f64)])
    assert int(torch.linalg.cholesky_ex(A[1])[1]) != 0  # (it does fail)
    want = systems.solve_torch(A.clone(), b)
    got = systems.solve(A.clone(), b)
    assert torch.allclose(got, want, rtol=1e-7, atol=1e-7 * float(want.abs().max()))
    assert torch.allclose(A[1] @ got[1], b[1], atol=1e-6 * float(b[1].abs().max()))


def test_lapack_route_and_gathers_reach_the_same_optimum(monkeypatch):
    """Fits with SciPy's LAPACK route and with PyTorch's alone (:data:`LAPACK_MIN`), and with kernel
    systems gathered by 2-D indexing or by one flat take (:data:`TAKE_MAX`), reach the same optimum and
    predictions (MUTAG's poly-2, a Gram design)."""
    from kong_pyg.evaluation import systems
    from kong_pyg.evaluation.classify import graph_targets
    from kong_pyg.evaluation.features import setting_features

    graphs = _graphs("MUTAG")
    y = graph_targets(graphs)
    X = setting_features(_setting("poly-2"), graphs)
    jobs, D, default = _fits(X, y, folds=3)
    monkeypatch.setattr(systems, "LAPACK_MIN", 1 << 62)
    monkeypatch.setattr(systems, "TAKE_MAX", 1 << 62)
    _, _, torch_only = _fits(X, y, folds=3)
    _same_optimum(D, y, jobs, default, torch_only)
    monkeypatch.setattr(systems, "TAKE_MAX", 0)
    _, _, gathered = _fits(X, y, folds=3)
    _same_optimum(D, y, jobs, gathered, torch_only)


def test_lapack_route_only_in_the_main_thread_and_never_for_non_finite_solutions(monkeypatch):
    """In n_jobs threads the systems go to PyTorch (SciPy's calls may hold the GIL; PyTorch's release it),
    and a LAPACK solution that is not finite (OpenBLAS factors a NaN diagonal without an error) goes to
    PyTorch's route, as a failed factorization does."""
    import threading

    import torch

    from kong_pyg.evaluation import systems

    A = torch.eye(70, dtype=torch.float64).unsqueeze(0) * 2
    b = torch.ones(1, 70, dtype=torch.float64)
    calls = []
    real = systems.solve_lapack
    monkeypatch.setattr(systems, "solve_lapack", lambda A, b: calls.append(1) or real(A, b))
    assert torch.allclose(systems.solve(A.clone(), b), b / 2) and calls == [1]
    out = []
    worker = threading.Thread(target=lambda: out.append(systems.solve(A.clone(), b)))
    worker.start()
    worker.join()
    assert torch.allclose(out[0], b / 2) and calls == [1]  # (PyTorch's route in the thread)
    torch_calls = []
    real_torch = systems.solve_torch
    monkeypatch.setattr(systems, "solve_torch",
                        lambda A, b: torch_calls.append(A.clone()) or real_torch(A, b))
    bad = A.clone()
    bad[0, 3, 3] = float("nan")
    systems.solve(bad.clone(), b)
    assert len(torch_calls) == 1 and torch.equal(torch_calls[0].isnan(), bad.isnan())  # (restored, then sent)


def _phi_slope(t, a, b, m, q, C):
    """phi'(t) = a + t b - 2C sum_i q_i max(0, m_i - t q_i), in Python floats."""
    return a + t * b - 2 * C * sum(qi * max(0.0, mi - t * qi) for mi, qi in zip(m, q))


def _exact_step(a, b, m, q, C):
    """The minimizer t >= 0 of the piecewise quadratic (phi' nondecreasing): 0, or phi's root by bisection."""
    if _phi_slope(0.0, a, b, m, q, C) >= 0:
        return 0.0
    hi = 1.0
    while _phi_slope(hi, a, b, m, q, C) < 0:
        hi *= 2
    lo = 0.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _phi_slope(mid, a, b, m, q, C) < 0 else (lo, mid)
    return (lo + hi) / 2


def test_line_search_is_the_exact_minimizer():
    """The line search had no test of its own (the Newton loop converged around its errors): points on
    the margin (m = 0) moving into it were left out of the active set (a step of 1 where 1/3 is exact,
    raising the objective), and an ascent direction (a > 0) could return a negative step. Against
    bisection on phi' for random problems with slacks of 0 and changes of 0, both signs of a."""
    import torch

    from kong_pyg.evaluation.linesearch import line_search

    d = torch.float64
    def one(a, b, m, q, C):
        return float(line_search(*(torch.tensor(v, dtype=d) for v in ([a], [b], [[m]], [[q]], [C]))))

    t = one(-1.0, 1.0, 0.0, -1.0, 1.0)
    assert t == pytest.approx(1 / 3, rel=1e-12)
    assert one(1.0, 1.0, -1.0, 1.0, 1.0) == 0.0
    rng = np.random.default_rng(0)
    B, n = 60, 7
    a = rng.normal(size=B) * rng.choice([0.1, 1, 10], size=B)
    b = rng.uniform(0.01, 3, size=B)
    m = rng.normal(size=(B, n)) * (rng.random((B, n)) < 0.7)  # (a third of the slacks exactly 0)
    q = rng.normal(size=(B, n)) * (rng.random((B, n)) < 0.8)  # (some changes exactly 0)
    C = rng.choice([0.1, 1.0, 10.0], size=B)
    got = line_search(*(torch.tensor(v, dtype=d) for v in (a, b, m, q, C))).numpy()
    want = [_exact_step(a[i], b[i], m[i], q[i], C[i]) for i in range(B)]
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    assert (got > 0).sum() > 10 and (got == 0).sum() > 5  # (both kinds of problem occur)
