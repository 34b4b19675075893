r"""Scikit-learn's :class:`~sklearn.svm.LinearSVC`, solved for many training sets at once.

The problem is exactly the one :class:`~sklearn.svm.LinearSVC` solves with
its defaults (:obj:`penalty="l2"`, :obj:`loss="squared_hinge"`,
:obj:`fit_intercept=True`, :obj:`intercept_scaling=1`,
:obj:`multi_class="ovr"`), for every class :math:`c` (one binary problem
for two classes):

.. math::
    \min_{w} \; \tfrac{1}{2} \|w\|^2 + C \sum_{i \in T}
    \max\big(0,\, 1 - y_i \langle w, z_i \rangle\big)^2,
    \qquad z_i = (x_i, 1),\; y_i = \pm 1,

with the intercept a regularized weight as in LIBLINEAR. It is solved by the
finite Newton method with exact line search (Keerthi and DeCoste, JMLR
2005; Chapelle, Neural Computation 2007): on the current set :math:`S` of
margin violators the objective is quadratic, its minimizer :math:`\bar w`
solves :math:`(I + 2C Z_S^\top Z_S) \bar w = 2C Z_S^\top y_S` (or, when
:math:`|S|` is smaller than the dimension,
:math:`\bar w = Z_S^\top \beta` with
:math:`(Z_S Z_S^\top + I / 2C) \beta = y_S`), and the step to it is
shortened to the exact minimizer of the piecewise quadratic objective along
the line (the first steps go all the way to :math:`\bar w` where that lowers
the objective, as the primal-dual active-set method does; a problem that
keeps needing line searches tries a run of full steps regardless, where its
systems are well enough conditioned, and goes on from the best point of the
run if it has not converged: on ENZYMES's raw polynomial kernels of
relabelled counts this takes 3.5-4.2 steps per problem where the line
searches took 14-15; a run that fails costs up to 10 steps). The method stops
when :math:`\bar w` is consistent with its own violator set (every margin on
the right side of 1, within :data:`MARGIN_TOL`): then :math:`\bar w` satisfies the optimality conditions
exactly, up to rounding. This is much tighter than LIBLINEAR's stopping rule
(:obj:`tol`, a relative gradient norm), so predictions equal those of a
well-converged :class:`~sklearn.svm.LinearSVC`; the test suite compares them.

All problems share one design matrix :math:`Z` (:func:`design`: an exact
basis of the span of the features with the intercept folded in, at most one
column per graph), so the training sets are masks, every linear algebra step
is batched over problems (:func:`fit_many`), the :math:`C` grid is a path
(each problem at a :math:`C` starts from its own solution at the previous
:math:`C`), and at the first :math:`C` every problem starts from the
solution on all graphs, or on its parent training set (inner folds start
from their outer fold), which leaves a few Newton steps per problem (one
stopped by :obj:`max_iter` from such a start is solved again from zero: the
start has seen its test points' labels). Where
the first :math:`C`'s systems are too ill-conditioned for those starts to be
forgotten (the test points' labels would leak into their predictions), the
path starts a few decades of :math:`C` lower, where they are not, and climbs
(:func:`_ladder`).
"""
import math
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
import torch
from torch import Tensor

from ..config import check_c_grid, check_float, check_int, check_usable_device
from ..warn import warn
from . import systems
from .basis import RANK_RTOL, Design, design, intercept_below_rounding, objective, to_device
from .linesearch import line_search
from .splits import class_labels

#: A training point is a margin violator when :math:`y \langle w, z \rangle < 1`;
#: a Newton target whose margins are within this of 1 on the wrong side counts as consistent.
MARGIN_TOL = 1e-9
#: A Newton step that lowers the objective by less than this fraction of it ends the problem
#: (features so badly scaled that rounding hides the remaining margin errors).
STALL_RTOL = 1e-13
#: Designs whose kernel-form systems would lose the intercept (:func:`intercept_below_rounding`)
#: of at most this many columns are solved in the primal form only; wider ones warn.
PRIMAL_MAX = 512
#: Newton steps per problem that go all the way to the target (as the primal-dual active-set
#: method does) where that lowers the objective, rather than to the line search's minimizer;
#: fewer steps on badly scaled features, as the next active set is the target's.
FULL_STEPS = 10
#: A problem that has needed this many line searches (slow progress: full steps refused, or no longer
#: offered after :data:`FULL_STEPS`) tries :data:`PDAS_STEPS` full steps whatever the objective does
#: (the primal-dual active-set method, which often ends in a few steps where the monotone method
#: crawls), then goes on monotone from the best point it met.
PDAS_AFTER = 3
PDAS_STEPS = 10
#: ... only where the Newton systems are accurate enough for it: their condition number, at most
#: :math:`1 + 2C\lambda_{max}` (:attr:`Design.top`), is at most this (relative error about
#: :math:`10^{-4}`); beyond, rounding makes the active sets wander (on MUTAG's raw poly-4, condition
#: numbers 1e12-1e14, the trial takes more steps in all than the monotone method or fewer, with the
#: rounding of the design: tests/test_svm.py).
PDAS_MAX_COND = 1e12
#: A path whose first :math:`C` is beyond that bound starts at most this many decades lower, at the
#: first :math:`C / 10^j` within it, and climbs to the first :math:`C` by decades (:func:`_ladder`);
#: where even :math:`C / 10^{16}` is beyond it, every problem starts there from zero.
LADDER_DECADES = 16
#: Kernel-form systems are solved in groups whose sizes differ by at most this factor.
GROUP_RATIO = 1.1
#: ... unless the larger is at most this (small systems cost their calls more than their padding).
GROUP_MIN = 96
#: Designs wider than this may go to LIBLINEAR (:func:`~kong_pyg.evaluation.liblinear.fit_liblinear`)
#: when the data set has more than :data:`EXACT_MAX_GRAPHS` graphs and the features are sparse enough
#: (:data:`LIBLINEAR_NNZ_RATIO`, the bound that decides in practice): the Newton systems cost the cube
#: of the number of margin violators (or of columns). Unless LIBLINEAR reaches its iteration cap on
#: the first training set: then the exact solver is both faster and right (NCI1's raw shortest-path
#: counts, 767 basis columns: 0.7 s per converged fit against 3.2 s per capped LIBLINEAR fit).
EXACT_MAX_WIDTH = 400
#: Up to this many graphs every design gets the exact solver: there it is the faster one (on ENZYMES
#: and PROTEINS LIBLINEAR, on the raw polynomial kernels, runs into its iteration cap at seconds per fit).
EXACT_MAX_GRAPHS = 2000
#: ... and only sparse features whose rows hold on average at most this times the squared width
#: (:math:`\min(d + 1, n)`) nonzeros: LIBLINEAR's iterations cost the nonzeros, the exact solver's
#: steps the squared width. On NCI1, WL h = 2 (33 nonzeros per row, 2,298 basis columns): LIBLINEAR
#: 0.6 s per fit against the exact solver's 1.35 s; the same kernel as a dense design (GraKeL's
#: Gram matrix, 2,297 columns): LIBLINEAR 6.5-92 s per fit.
LIBLINEAR_NNZ_RATIO = 1e-5
#: Bytes of the batched Newton matrices of one chunk of problems.
CHUNK_BYTES = 64 << 20
#: ... on a GPU, where larger batches keep it busy.
GPU_CHUNK_BYTES = 2 << 30


class Fits(NamedTuple):
    r"""The solutions of :func:`fit_many`.

    Attributes:
        scores (numpy.ndarray): :obj:`[B, len(Cs), n]` decision values on
            every point for two classes, :obj:`[B, len(Cs), n, k]` for
            :math:`k > 2` classes (one-vs-rest), as
            :meth:`~sklearn.svm.LinearSVC.decision_function`.
        classes (numpy.ndarray): The class labels, sorted.
        iterations (numpy.ndarray): :obj:`[B, len(Cs)]` Newton steps (the
            most over the classes; the first :math:`C`'s include the hidden
            rungs climbed to it, :func:`_ladder`, and a capped warm start's
            steps before the solve from zero).
        converged (numpy.ndarray): :obj:`[B, len(Cs)]` whether every class
            converged within :obj:`max_iter` (at the first :math:`C`, also on
            every rung).
    """

    scores: np.ndarray
    classes: np.ndarray
    iterations: np.ndarray
    converged: np.ndarray

    def predict(self) -> np.ndarray:
        """:obj:`[B, len(Cs), n]` predicted labels (as :meth:`~sklearn.svm.LinearSVC.predict`)."""
        if self.scores.ndim == 3:
            return self.classes[(self.scores > 0).astype(np.int64)]
        return self.classes[self.scores.argmax(axis=-1)]


# -- one Newton iteration, batched ---------------------------------------------------


def _size_groups(sizes: Tensor, use: Tensor) -> List[Tensor]:
    """The problems in :obj:`use` in groups of similar system size (padding to the largest costs its cube)."""
    idx = use.nonzero().view(-1)
    idx = idx[torch.argsort(sizes[idx])]
    s = sizes[idx].tolist()
    groups, start = [], 0
    for i in range(1, len(s) + 1):
        if i == len(s) or s[i] > max(GROUP_RATIO * s[start], GROUP_MIN):
            groups.append(idx[start:i])
            start = i
    return groups


def _objective(w: Tensor, yo: Tensor, mask: Tensor, C: Tensor) -> Tensor:
    """:obj:`[b]` primal objectives from the margins :obj:`yo` (:obj:`[b, n]`) and training masks."""
    slack = (1 - yo).clamp(min=0) * mask
    return 0.5 * (w * w).sum(1) + C * (slack * slack).sum(1)


def newton(D: Design, y: Tensor, train: Tensor, C: Tensor, w: Tensor, max_iter: int,
           tol: float = MARGIN_TOL, full_steps: Optional[int] = None,
           padded: Optional[systems.Padded] = None) -> Tuple[Tensor, Tensor, Tensor]:
    r"""Solve a batch of problems from the starting points :obj:`w`.

    Args:
        D (Design): The design.
        y (torch.Tensor): :obj:`[n]` labels :math:`\pm 1`.
        train (torch.Tensor): :obj:`[b, n]` training masks.
        C (torch.Tensor): :obj:`[b]` the :math:`C` of each problem.
        w (torch.Tensor): :obj:`[b, m]` starting points.
        max_iter (int): Newton steps at most.
        tol (float, optional): The margin tolerance of the stopping rule.
            (default: :data:`MARGIN_TOL`)
        full_steps (int, optional): The first steps of each problem go all
            the way to the Newton target where that lowers the objective
            (else to the line search's minimizer). (default:
            :data:`FULL_STEPS`) A problem that has needed
            :data:`PDAS_AFTER` line searches then takes up to :data:`PDAS_STEPS`
            full steps whatever the objective does (where
            :data:`PDAS_MAX_COND` allows), until it converges, meets an
            active set a second time or runs out of them; then it goes on
            from the best point it met.
        padded (systems.Padded, optional): :obj:`D` padded, shared by the calls of
            one fit. (default: made here)

    Returns:
        (torch.Tensor, torch.Tensor, torch.Tensor): Solutions :obj:`[b, m]`,
        Newton steps :obj:`[b]` and convergence flags :obj:`[b]`.
    """
    Z = D.Z
    n, m = Z.shape
    B = w.size(0)
    padded = systems.Padded(D) if padded is None else padded
    Zp = padded.Z
    yp = torch.cat([y, y.new_zeros(1)]).to(Z.dtype)  # label 0 there
    primal_only = m <= PRIMAL_MAX and intercept_below_rounding(D)
    w = w.clone()
    dev = Z.device
    steps = torch.zeros(B, dtype=torch.long, device=dev)
    done = torch.zeros(B, dtype=torch.bool, device=dev)
    trainf = train.to(Z.dtype)
    full_steps = FULL_STEPS if full_steps is None else full_steps
    # the full-step trial (PDAS_AFTER): 0 not yet, 1 under way, 2 over (or not allowed)
    trial = torch.where(_ill_conditioned(C, _top(D)), 2, 0)
    can_try, trying = bool((trial == 0).any()), 0  # any problem may try; how many are trying
    refused = torch.zeros(B, dtype=torch.long, device=dev)
    best, best_w = torch.full((B,), math.inf, dtype=Z.dtype, device=dev), w.clone()
    seen = torch.full((B, PDAS_STEPS), -1, dtype=torch.long, device=dev)  # the trial's active sets (hashed)
    # integer codes, summed exactly (below 2**63 up to 2**23 points): a set's key never depends on the batch
    code = torch.randint(0, 1 << 40, (n,), generator=torch.Generator().manual_seed(0)).to(dev)
    for _ in range(max_iter):
        live = (~done).nonzero().view(-1)
        if live.numel() == 0:
            break
        wl, tr, Cl = w[live], train[live], C[live]
        mask = trainf[live]
        yo = y * (wl @ Z.t())
        before = _objective(wl, yo, mask, Cl)
        act = tr & (yo < 1)
        pd = trial[live] == 1 if trying else torch.zeros_like(done[live])
        if trying:
            better = pd & (before < best[live])
            best[live[better]], best_w[live[better]] = before[better], wl[better]
            key = (act * code).sum(1)
            met = seen[live]
            taken = (met >= 0).sum(1)
            end = pd & ((taken >= PDAS_STEPS) | (met == key.unsqueeze(1)).any(1))  # spent, or a cycle
            go = (pd & ~end).nonzero().view(-1)
            seen[live[go], taken[go]] = key[go]
            if bool(end.any()):  # monotone from here, from the best point of the trial
                trial[live[end]] = 2
                trying -= int(end.sum())
                pd &= ~end
                back = (end & (before > best[live])).nonzero().view(-1)
                if back.numel():
                    wl[back] = best_w[live[back]]
                    yo[back] = y * (wl[back] @ Z.t())
                    before[back] = _objective(wl[back], yo[back], mask[back], Cl[back])
                    act[back] = tr[back] & (yo[back] < 1)
        sizes = act.sum(1)
        # the smaller system, |S| x |S| against m x m (never where the kernel form loses the intercept)
        kernel = (sizes ** 3 < m ** 2 * (3 * sizes + m)) & (not primal_only)
        target = torch.empty_like(wl)
        if bool(kernel.any()):
            Kp = padded.K
            for group in _size_groups(sizes, kernel):
                target[group] = systems.kernel_target(Zp, Kp, yp, act[group], Cl[group])
        if not bool(kernel.all()):
            group = (~kernel).nonzero().view(-1)
            target[group] = systems.primal_target(Zp, yp, act[group], Cl[group])
        yn = y * (target @ Z.t())
        ok = ((act & (yn < 1 + tol)) | (~act & (yn > 1 - tol)) | ~tr).all(1)
        # the full step (primal-dual active set) where it lowers the objective, or in a trial
        full = pd | ((steps[live] < full_steps) & (_objective(target, yn, mask, Cl) <= before))
        steps[live] += 1
        d = target - wl
        t = torch.ones_like(before)
        short = (~ok & ~full).nonzero().view(-1)  # the others take the full step: no line search
        if short.numel():
            ds, ws, ms = d[short], wl[short], mask[short]
            t[short] = line_search((ws * ds).sum(1), (ds * ds).sum(1), ms * (1 - yo[short]),
                                   ms * (yn[short] - yo[short]), Cl[short])
        w_new = wl + t.unsqueeze(1) * d
        after = _objective(w_new, yo + t.unsqueeze(1) * (yn - yo), mask, Cl)
        # no decrease left in floating point (badly scaled features): the optimum up to rounding
        stalled = ~ok & ~full & (before - after <= STALL_RTOL * before)
        w[live] = torch.where(stalled.unsqueeze(1) & (after > before).unsqueeze(1), wl, w_new)
        done[live[ok | stalled]] = True
        if trying:
            trying -= int((pd & ok).sum())  # trials that converged
        if short.numel() and can_try:
            slow = live[short]
            refused[slow] += 1
            start = slow[(trial[slow] == 0) & (refused[slow] >= PDAS_AFTER) & ~done[slow]]
            trial[start], best[start] = 1, math.inf
            trying += start.numel()
    if trying:  # out of steps during a trial: its best point
        cut = (~done & (trial == 1)).nonzero().view(-1)
        now = _objective(w[cut], y * (w[cut] @ Z.t()), trainf[cut], C[cut])
        w[cut] = torch.where((best[cut] < now).unsqueeze(1), best_w[cut], w[cut])
    return w, steps, done


# -- many problems ------------------------------------------------------------------


class _Run(NamedTuple):
    """What every batch of one :func:`fit_many` call shares."""

    D: Design
    y: Tensor
    max_iter: int
    tol: float
    pool: Optional[ThreadPoolExecutor]
    padded: systems.Padded


def _chunks(count: int, m: int, n: int, budget: int = CHUNK_BYTES) -> List[Tuple[int, int]]:
    per = max(1, budget // (8 * (m * m + 2 * n * max(m, 1) + n * n // 4 + 1)))
    return [(lo, min(lo + per, count)) for lo in range(0, count, per)]


def _solve_all(run: _Run, train: Tensor, C: Tensor, w0: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    """:func:`newton` over chunks of problems (in parallel threads when the run has a pool)."""
    budget = CHUNK_BYTES if run.D.Z.device.type == "cpu" else GPU_CHUNK_BYTES
    parts = _chunks(train.size(0), run.D.Z.size(1), run.D.Z.size(0), budget)

    def one(part: Tuple[int, int]) -> Tuple[Tensor, Tensor, Tensor]:
        lo, hi = part
        return newton(run.D, run.y, train[lo:hi], C[lo:hi], w0[lo:hi], run.max_iter, run.tol,
                      padded=run.padded)

    results = list(run.pool.map(one, parts)) if run.pool is not None else [one(p) for p in parts]
    return (torch.cat([r[0] for r in results]), torch.cat([r[1] for r in results]),
            torch.cat([r[2] for r in results]))


def _top(D: Design) -> float:
    """The largest eigenvalue of the design's Gram matrix (its trace, an upper bound, if unknown)."""
    return float(D.gram.diagonal().sum()) if math.isnan(D.top) else D.top


def _ill_conditioned(C: Any, top: float) -> Any:
    r"""Whether the Newton systems at :obj:`C` (a float or a tensor) may be beyond :data:`PDAS_MAX_COND`.

    Their condition number is at most :math:`1 + 2C\lambda_{max}`, :obj:`top` bounding :math:`\lambda_{max}`.
    """
    return 1 + 2 * C * top > PDAS_MAX_COND


def _ladder(D: Design, first: float) -> List[float]:
    r"""Hidden :math:`C` values below the first of a path whose systems are too ill-conditioned there.

    Where :math:`1 + 2C\lambda_{max}` exceeds :data:`PDAS_MAX_COND` at the first :math:`C`, the
    solution on all points is a start that has seen every problem's test points, and Newton steps
    from it cannot resolve the directions that rounding leaves flat: the test predictions then
    depend on the test labels (on PROTEINS's raw degree-4 kernel of relabelled counts, a warm start
    from all points scores 69.2 % where a start from zero scores 58.7 %, at the same objective to
    :math:`10^{-5}`; on MUTAG's degree-2 Gram matrix times :math:`10^6`, flipping a fold's test
    labels changes up to 6-8 % of its test predictions). The path therefore starts at the first
    :math:`C / 10^j` within the bound (:math:`j \leq` :data:`LADDER_DECADES`), where every problem
    converges to its own optimum whatever its start, and climbs by decades, each problem from its
    own solution. It is also faster there: PROTEINS's raw degree-3 and 4 kernels of relabelled
    counts need 10-15 steps per problem in all instead of 38-47 at the first :math:`C`.
    """
    top = _top(D)
    rungs: List[float] = []
    c = first
    while _ill_conditioned(c, top) and len(rungs) < LADDER_DECADES:
        c /= 10
        rungs.append(c)
    return rungs[::-1]


def _path(run: _Run, masks: Tensor, Cs: List[float], parents: np.ndarray,
          progress: Optional[Callable[[int], None]]) -> List[Tuple[Tensor, Tensor, Tensor]]:
    """One class, every C (increasing).

    The first :math:`C`: every problem starts from the solution on all points, then inner problems
    from their parent's solution (waves by depth); a problem that stops at :obj:`max_iter` from
    such a start is solved again from zero (stopped near a start that has seen its test points'
    labels, its predictions would lean to them: on random labels, 100 % test accuracy at
    :obj:`max_iter=1`). A converged problem is at its own optimum whatever its start. Every later
    :math:`C`: each problem starts from its own solution at the previous :math:`C` (fewer Newton
    steps on the paper grid's settings).
    Where the first :math:`C`'s systems are too ill-conditioned for the full-step trial, the path
    starts lower, at the rungs of :func:`_ladder` (their steps count as the first :math:`C`'s).

    Returns:
        Per C: solutions :obj:`[B, m]`, Newton steps and convergence flags.
    """
    D = run.D
    B, m = masks.size(0), D.Z.size(1)
    depth = np.zeros(B, dtype=np.int64)
    for i in range(B):
        depth[i] = 0 if parents[i] < 0 else depth[parents[i]] + 1
    out: List[Tuple[Tensor, Tensor, Tensor]] = []
    hidden = _ladder(D, Cs[0]) if Cs else []
    # beyond the bound even at the lowest rung (LADDER_DECADES spent): every problem starts from zero
    cold = bool(hidden) and _ill_conditioned(hidden[0], _top(D))
    dev = D.Z.device
    for j, C in enumerate(hidden + Cs):
        Cb = torch.full((B,), C, dtype=D.Z.dtype, device=dev)
        report = progress if j >= len(hidden) else None
        if out or cold:
            start = out[-1][0] if out else D.Z.new_zeros(B, m)
            w, steps, ok = _solve_all(run, masks, Cb, start)
            if report is not None:
                report(B)
            out.append((w, steps, ok))
            continue
        ref, _, _ = newton(D, run.y, torch.ones(1, masks.size(1), dtype=torch.bool, device=dev), Cb[:1],
                           D.Z.new_zeros(1, m), run.max_iter, run.tol, padded=run.padded)
        w = ref.expand(B, m).clone()
        steps = torch.zeros(B, dtype=torch.long, device=dev)
        ok = torch.ones(B, dtype=torch.bool, device=dev)
        for level in range(int(depth.max()) + 1 if B else 0):
            at = np.flatnonzero(depth == level)
            idx = torch.from_numpy(at).to(dev)
            start = w[torch.from_numpy(np.maximum(parents[at], 0)).to(dev)] if level else w[idx]
            w[idx], steps[idx], ok[idx] = _solve_all(run, masks[idx], Cb[idx], start)
            if report is not None:
                report(int(idx.numel()))
        capped = (~ok).nonzero().view(-1)
        if capped.numel():  # stopped near a start that saw other points' labels: solved again from zero
            w[capped], again, ok[capped] = _solve_all(run, masks[capped], Cb[capped],
                                                      D.Z.new_zeros(capped.numel(), m))
            steps[capped] += again
        out.append((w, steps, ok))
    if hidden:  # the first C's steps count the rungs', and it converged only if they all did
        climb = torch.stack([o[1] for o in out[:len(hidden)]]).sum(0)
        held = torch.stack([o[2] for o in out[:len(hidden)]]).all(0)
        w, steps, ok = out[len(hidden)]
        out[len(hidden)] = (w, steps + climb, ok & held)
    return out[len(hidden):]


def check_classes(labels: np.ndarray, train: Any, classes: Optional[np.ndarray] = None) -> np.ndarray:
    """Check that every training set (a row of the boolean :obj:`train` :obj:`[B, n]`) holds every class.

    Returns the class index of every label (in :obj:`classes`, sorted).
    """
    masks = torch.as_tensor(np.asarray(train, dtype=bool))
    classes = np.unique(labels) if classes is None else classes
    code = np.searchsorted(classes, labels)
    for c in range(classes.size):
        held = masks[:, torch.from_numpy(code == c)].any(1)
        if not bool(held.all()):
            first = int((~held).nonzero()[0])
            raise ValueError(f"training set {first} holds no graph of class {classes.tolist()[c]!r}")
    return code


def fit_many(
    D: Design,
    y: Any,
    train: Any,
    Cs: Sequence[float],
    *,
    parent: Any = None,
    max_iter: int = 100,
    n_jobs: int = 1,
    tol: Optional[float] = None,
    progress: Optional[Callable[[int], None]] = None,
    device: Any = None,
) -> Fits:
    r"""Fit LinearSVC on many training sets and a path of :math:`C`, on one design.

    Args:
        D (Design): The design (:func:`design`).
        y (array-like): :obj:`[n]` class labels (two or more classes; every
            training set must hold every class).
        train (array-like): :obj:`[B, n]` boolean training masks.
        Cs (sequence): The :math:`C` values (solved in increasing order,
            each from the previous one's solution; below the first, hidden
            decades of :math:`C` where its systems are too ill-conditioned,
            see :func:`_ladder`).
        parent (sequence, optional): :obj:`[B]` a problem whose solution
            starts this one (it must come earlier; :obj:`-1`: start from the
            solution on all points). (default: all :obj:`-1`)
        max_iter (int, optional): Newton steps at most per problem and
            :math:`C` (and per hidden rung below the first) in one solve; the others are
            reported in :attr:`Fits.converged`. At the first :math:`C` a problem that
            reaches it from its warm start is solved once more from zero (up to twice
            the steps in all). (default: :obj:`100`)
        n_jobs (int, optional): Threads. (default: :obj:`1`)
        tol (float, optional): The margin tolerance of the stopping rule.
            (default: :data:`MARGIN_TOL`)
        progress (callable, optional): Called with the number of problems
            (training set, :math:`C`, class) done, as they finish.
        device (str or torch.device, optional): Where to solve, e.g.
            :obj:`"cuda"` (the design is copied there; the results come back
            as NumPy arrays). The same problems and stopping rule on every
            device; solutions agree up to rounding. (default: the design's
            device)

    Returns:
        :class:`Fits`
    """
    dev = check_usable_device("device", device)
    labels = class_labels(y)
    Cs = check_c_grid("Cs", Cs)
    check_int("max_iter", max_iter, 1)
    check_int("n_jobs", n_jobs, 1)
    tol = None if tol is None else check_float("tol", tol, 0.0)
    if tol is not None and tol >= 1:  # (margins are measured against 1: every margin would pass)
        raise ValueError(f"'tol' must be below 1: it is the solver's margin tolerance (default "
                         f"{MARGIN_TOL:g}; got {tol:g})")
    if labels.size != D.Z.size(0):
        raise ValueError(f"'y' has {labels.size} labels for the design's {D.Z.size(0)} rows")
    masks = torch.as_tensor(np.asarray(train, dtype=bool))
    if masks.dim() != 2 or masks.size(1) != labels.size:
        raise ValueError(f"'train' must be [B, {labels.size}] booleans (got {tuple(masks.shape)})")
    classes = np.unique(labels)
    if classes.size < 2:
        raise ValueError("'y' holds a single class; classification needs at least two")
    B, n = masks.shape
    parents = np.full(B, -1) if parent is None else np.asarray(parent)
    if parents.size and parents.dtype.kind not in "iu":
        raise TypeError(f"'parent' must hold integers (got {parents.dtype})")
    parents = parents.astype(np.int64, copy=False)
    if parents.shape != (B,) or np.any(parents >= np.arange(B)) or np.any(parents < -1):
        raise ValueError("'parent' must give, per problem, -1 or an earlier problem")
    code = check_classes(labels, masks, classes)
    if dev is not None and D.Z.device != dev:  # after the checks: nothing is copied for bad input
        D = to_device(D, dev, B, GPU_CHUNK_BYTES)
    masks = masks.to(D.Z.device)
    order = np.argsort(np.asarray(Cs, dtype=np.float64), kind="stable")
    positive = [1] if classes.size == 2 else list(range(classes.size))
    scores = np.zeros((B, len(Cs), n, len(positive)))
    steps = np.zeros((B, len(Cs)), dtype=np.int64)
    conv = np.ones((B, len(Cs)), dtype=bool)
    if B == 0:  # no training sets: nothing to solve
        return Fits(scores[..., 0] if len(positive) == 1 else scores, classes, steps, conv)
    if D.Z.size(1) > PRIMAL_MAX and intercept_below_rounding(D):
        warn(f"features of norm up to {math.sqrt(float(D.gram.diagonal().max())):.1e}: the SVM's "
             "kernel-form systems hold the intercept (a column of ones) below their rounding, so "
             "fits may miss LinearSVC's optimum; scale the features (e.g. divide them by their "
             "largest value, or normalize=True)")
    from threadpoolctl import threadpool_limits  # (scikit-learn's own dependency)

    threads = torch.get_num_threads()
    pool = ThreadPoolExecutor(n_jobs) if n_jobs > 1 else None
    try:
        # one thread (PyTorch's, and the BLAS of SciPy's LAPACK, systems.LAPACK_MIN): the batched steps are
        # many small operations, where intra-op threads cost more than they bring (about 10x slower
        # with 2 threads on a loaded 2-core machine); n_jobs is the parallelism
        torch.set_num_threads(1)
        padded = systems.Padded(D)  # (one for every class's path)
        with threadpool_limits(limits=1, user_api="blas"):
            for k, c in enumerate(positive):
                run = _Run(D, torch.from_numpy(np.where(code == c, 1.0, -1.0)).to(D.Z.device), max_iter,
                           MARGIN_TOL if tol is None else float(tol), pool, padded)
                path = _path(run, masks, [float(Cs[i]) for i in order], parents, progress)
                for j, (w, s, ok) in zip(order, path):
                    scores[:, j, :, k] = (w @ D.Z.t()).cpu().numpy()
                    steps[:, j] = np.maximum(steps[:, j], s.cpu().numpy())
                    conv[:, j] &= ok.cpu().numpy()
    finally:
        torch.set_num_threads(threads)
        if pool is not None:
            pool.shutdown()
    return Fits(scores[..., 0] if len(positive) == 1 else scores, classes, steps, conv)


#: Names served from :mod:`~kong_pyg.evaluation.liblinear` (imported on use).
_FROM_LIBLINEAR = ("fit_liblinear", "LIBLINEAR_TOL", "LIBLINEAR_MAX_ITER")


def __getattr__(name: str) -> Any:
    """The LIBLINEAR fallback's names, from :mod:`~kong_pyg.evaluation.liblinear` (imported on use)."""
    if name in _FROM_LIBLINEAR:
        from . import liblinear

        return getattr(liblinear, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(_FROM_LIBLINEAR))


__all__ = ["Design", "Fits", "design", "fit_many", "newton", "line_search", "objective",
           "EXACT_MAX_WIDTH", "EXACT_MAX_GRAPHS", "LIBLINEAR_NNZ_RATIO", "MARGIN_TOL", "RANK_RTOL"]
