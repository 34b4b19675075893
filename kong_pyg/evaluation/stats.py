r"""Summaries and comparisons of scores over repeated splits.

:func:`mean_ci` summarizes one method's scores; :func:`paired_comparison`
compares two methods scored on the same splits, with the Nadeau-Bengio
corrected resampled t-test for the overlap of repeated random splits;
:func:`verdict` says in one sentence what the comparison shows.
"""
import math
import numbers
from typing import Any, Dict, Optional, Sequence

import numpy as np

# differences within this share of the scores' magnitude are rounding, not differences
_ROUNDING = 1e-12


def mean_ci(values: Sequence[float], level: float = 0.95) -> Dict[str, float]:
    r"""Mean, standard deviation and a t confidence interval of the mean.

    The interval is :math:`\bar x \pm t_{(1+level)/2, n-1}\, s / \sqrt{n}`
    over the :math:`n` values (repeated splits): it describes the
    uncertainty of the mean over splits of this data set, not of a new
    data set (see :func:`paired_comparison` for the corrected test).

    Args:
        values (sequence): The scores, one per split.
        level (float, optional): The confidence level. (default: :obj:`0.95`)

    Returns:
        A dict with :obj:`mean`, :obj:`sd`, :obj:`n`, :obj:`lo`, :obj:`hi`
        and :obj:`half` (the half-width; NaN for one value).
    """
    from scipy import stats

    if isinstance(level, bool) or not isinstance(level, numbers.Real) or not 0 < float(level) < 1:
        raise ValueError(f"'level' must be a confidence level in (0, 1), such as 0.95 (got {level!r})")
    x = np.asarray(values, dtype=float)
    n = x.size
    if x.ndim != 1 or n == 0:
        raise ValueError(f"'values' must be a non-empty 1-D sequence of scores (got shape {x.shape})")
    mean = float(x.mean())
    sd = float(x.std(ddof=1)) if n > 1 else 0.0
    half = float(stats.t.ppf((1 + level) / 2, n - 1) * sd / math.sqrt(n)) if n > 1 else float("nan")
    return {"mean": mean, "sd": sd, "n": n, "lo": mean - half, "hi": mean + half, "half": half}


def paired_comparison(a: Sequence[float], b: Sequence[float], test_fraction: float) -> Dict[str, Any]:
    r"""Compare two methods scored on the same splits.

    Returns the mean difference :math:`\bar d` (a - b), its sd, the
    win/tie/loss counts, and three two-sided p-values: the paired t-test,
    the Wilcoxon signed-rank test (Pratt's treatment of zero differences),
    and the Nadeau-Bengio corrected resampled t-test

    .. math::
        t = \bar d \Big/ \sqrt{\big(\tfrac{1}{n} + \tfrac{n_{test}}{n_{train}}\big) s_d^2},

    which widens the variance for the overlap of repeated random splits
    (`Nadeau and Bengio, 2003 <https://doi.org/10.1023/A:1024068626366>`_).
    The plain tests treat splits as independent and are optimistic.

    Differences within rounding of the scores (:math:`10^{-12}` of their
    largest magnitude) count as 0. When every split differs by the same
    amount (:math:`s_d = 0`) there is no spread to test: both t-tests are
    undefined (:obj:`corrected_t`, :obj:`t_p` and :obj:`corrected_p` NaN,
    written as null by :func:`plain_json`) unless the
    difference is 0 everywhere (:math:`t = 0`, :math:`p = 1`). The Wilcoxon
    test is defined there: its exact two-sided p for :math:`n` differences
    of one sign is :math:`\min(1, 2 / 2^n)` (0.5 for 2 splits, 0.0625 for 5).

    Args:
        a (sequence): The scores of the first method, one per split.
        b (sequence): The scores of the second method on the same splits.
        test_fraction (float): The fraction of the data in each test part.

    Returns:
        A dict with :obj:`mean_diff`, :obj:`sd_diff`, :obj:`n`, :obj:`wins`,
        :obj:`ties`, :obj:`losses`, :obj:`t_p`, :obj:`wilcoxon_p`,
        :obj:`corrected_t` and :obj:`corrected_p`.
    """
    from scipy import stats

    x, z = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != z.shape or x.ndim != 1 or x.size < 2:
        raise ValueError("'a' and 'b' must be 1-D with the same length >= 2")
    if not 0 < test_fraction < 1:
        raise ValueError(f"'test_fraction' must be in (0, 1) (got {test_fraction})")
    if not (np.isfinite(x).all() and np.isfinite(z).all()):  # (an infinite score made every split a tie)
        raise ValueError("'a' and 'b' must hold finite scores (got NaN or infinity)")
    d = x - z
    n = d.size
    # rounding of the scores (0.8 - 0.7 vs 0.7 - 0.6, means over seeds) is no difference and no spread
    tol = _ROUNDING * max(float(np.abs(x).max()), float(np.abs(z).max()))
    d[np.abs(d) <= tol] = 0.0
    sd = float(d.std(ddof=1))
    out: Dict[str, Any] = {"mean_diff": float(d.mean()), "sd_diff": sd, "n": n, "wins": int((d > 0).sum()),
                           "ties": int((d == 0).sum()), "losses": int((d < 0).sum())}
    if sd <= tol:
        out["sd_diff"] = 0.0
        if np.all(d == 0):
            # for two methods with the same score on every split, the corrected t is 0 (0 / 0 would be NaN)
            out.update(t_p=1.0, wilcoxon_p=1.0, corrected_p=1.0, corrected_t=0.0)
        else:
            # every split differs by the same amount: t = d / 0 is undefined, not infinite; the
            # exact Wilcoxon test has only its two extreme sign patterns at least this far out
            nan = float("nan")
            out.update(t_p=nan, wilcoxon_p=min(1.0, 2.0 ** (1 - n)), corrected_p=nan, corrected_t=nan)
        return out
    out["t_p"] = float(stats.ttest_1samp(d, 0.0).pvalue)
    out["wilcoxon_p"] = float(stats.wilcoxon(d, zero_method="pratt").pvalue)
    ratio = test_fraction / (1 - test_fraction)
    t = d.mean() / math.sqrt((1 / n + ratio) * sd * sd)
    out["corrected_t"] = float(t)
    out["corrected_p"] = float(2 * stats.t.sf(abs(t), n - 1))
    return out


def with_corrected_interval(cmp: Dict[str, Any], test_fraction: float,
                            level: float = 0.95) -> Dict[str, Any]:
    r"""Add the corrected resampled t-interval of the mean difference to a paired comparison.

    :math:`\bar d \pm t_{n-1} \sqrt{(1/n + n_{test}/n_{train})\, s_d^2}`, the interval that
    goes with the corrected p-value of
    :func:`paired_comparison`.

    Args:
        cmp (dict): What :func:`~kong_pyg.evaluation.stats.paired_comparison` returned.
        test_fraction (float): The test share of each split.
        level (float, optional): The coverage. (default: :obj:`0.95`)

    Returns:
        dict: :obj:`cmp` with :obj:`corrected_lo` and :obj:`corrected_hi` (NaN where the
        differences have no spread: the same on every split, 0 included, where :math:`p = 1`).
    """
    from scipy import stats

    if undefined(cmp["corrected_p"]) or cmp["sd_diff"] == 0:  # no spread: no interval (not one of width 0)
        return {**cmp, "corrected_lo": float("nan"), "corrected_hi": float("nan")}
    n, ratio = cmp["n"], test_fraction / (1 - test_fraction)
    half = stats.t.ppf(0.5 + level / 2, n - 1) * math.sqrt((1 / n + ratio) * cmp["sd_diff"] ** 2)
    return {**cmp, "corrected_lo": cmp["mean_diff"] - half, "corrected_hi": cmp["mean_diff"] + half}


def plain_json(value: Any) -> Any:
    """:obj:`value` with NaN and infinities as None (JSON's null).

    Then ``json.dump(..., allow_nan=False)`` writes plain JSON; Python's
    default writes ``NaN``, which JSON has not.
    """
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else None
    if isinstance(value, dict):
        return {k: plain_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_json(v) for v in value]
    return value


def undefined(p: Any) -> bool:
    """Whether a p-value of :func:`paired_comparison` is undefined (NaN, or None as read from JSON)."""
    return p is None or p != p


def format_p(p: Optional[float]) -> str:
    """A p-value in a few characters (``0.034``, ``2.1e-07``; ``undefined`` for NaN or None)."""
    if undefined(p):
        return "undefined"
    assert p is not None
    return f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}"


def format_ci(s: Dict[str, float]) -> str:
    """A :func:`mean_ci` summary of fractions as ``mean ± half-width`` in percent."""
    return f"{100 * s['mean']:.2f} ± {100 * s['half']:.2f}"


def format_interval(cmp: Dict[str, Any]) -> str:
    """The corrected interval of a comparison in points (``[-1.20, +3.40]``; ``undefined`` without spread)."""
    lo, hi = cmp.get("corrected_lo"), cmp.get("corrected_hi")
    if lo is None or hi is None or undefined(lo) or undefined(hi):
        return "undefined"
    return f"[{100 * lo:+.2f}, {100 * hi:+.2f}]"


def check_alpha(alpha: Any) -> float:
    """A significance level: a number in (0, 1) (``alpha=5`` meant as 5 % answered 'Yes' to p = 0.5)."""
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0 < float(alpha) < 1:
        raise ValueError(f"'alpha' must be a significance level in (0, 1), such as 0.05 (got {alpha!r})")
    return float(alpha)


def verdict(cmp: Dict[str, Any], a: str, b: str, metric: str, alpha: float = 0.05) -> str:
    """One honest sentence on a paired comparison (the corrected test decides).

    Args:
        cmp (dict): A :func:`paired_comparison` of :obj:`a` against :obj:`b`.
        a (str): The first method's name.
        b (str): The second method's name.
        metric (str): The metric's name, e.g. :obj:`"accuracy"`.
        alpha (float, optional): The significance level. (default: :obj:`0.05`)

    Returns:
        str
    """
    check_alpha(alpha)
    d = 100 * cmp["mean_diff"]
    head = f"{a} − {b}: {d:+.2f} points of {metric} on average"
    t_p, w_p, c_p = cmp["t_p"], cmp["wilcoxon_p"], cmp["corrected_p"]
    no_spread = undefined(c_p) and undefined(t_p) and not undefined(w_p)
    splits = f" with {cmp['n']} splits" if no_spread else ""
    tail = (f"(wins/ties/losses {cmp['wins']}/{cmp['ties']}/{cmp['losses']}; {_p_text('paired t', t_p)}, "
            f"{_p_text('Wilcoxon', w_p)}{splits}, {_p_text('corrected resampled t', c_p)})")
    if cmp["ties"] == cmp["n"]:
        return f"{head}: {a} and {b} scored the same on every split, so there is no spread to test {tail}."
    if no_spread:
        # the corrected test decides, and it is undefined: nothing is called significant
        side = "better" if d > 0 else "worse"
        return (f"{head}: {a} is {side} than {b} by the same amount on every split, so there is no spread "
                f"to test and the t-tests are undefined {tail}.")
    if not undefined(c_p) and c_p < alpha:
        word = "significantly better" if d > 0 else "significantly worse"
        return f"{head}: {a} is {word} than {b} {tail}."
    if not undefined(t_p) and t_p < alpha:
        return (f"{head}: significant only under the plain tests that treat overlapping splits as "
                f"independent, not under the corrected test {tail}.")
    return f"{head}: no significant difference {tail}."


def _p_text(test: str, p: Any) -> str:
    """``paired t p = 0.034``, or ``paired t undefined``."""
    return f"{test} undefined" if undefined(p) else f"{test} p = {format_p(p)}"


def metric_scores(scores: Dict[str, Any], metric: str) -> Any:
    """:obj:`scores[metric]`, or a ValueError naming the metrics that were computed (not a bare KeyError).

    (``'auc'`` is computed for two classes only, and a caller may have asked for other metrics.)
    """
    if metric not in scores:
        raise ValueError(f"no {metric!r} scores: the metrics computed are {sorted(scores)}")
    return scores[metric]


__all__ = ["metric_scores", "mean_ci", "paired_comparison", "with_corrected_interval", "verdict", "format_p",
           "format_ci", "format_interval", "undefined", "plain_json"]
