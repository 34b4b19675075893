"""The evaluation's figures (need matplotlib: ``pip install 'kong-pyg[plot]'``).

* :func:`plot_sketch_curve`: accuracy against the sketch size :math:`b`
  (the paper's Figure 3; :func:`~kong_pyg.evaluation.classify.sketch_curve`).
* :func:`plot_fraction_curve`: accuracy against the training-set fraction
  (the paper's Figure 2 analogue; :func:`kong_pyg.experiments.table2.accuracy_curve`).
"""
import os
from typing import Any, Dict, List, Union

import numpy as np

PathLike = Union[str, "os.PathLike[str]"]


def pyplot() -> Any:
    """:mod:`matplotlib.pyplot` on the non-interactive Agg backend.

    Raises:
        ImportError: matplotlib is not installed (the message says how to get it).
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as err:
        raise ImportError("plots need matplotlib: pip install 'kong-pyg[plot]'") from err
    return plt


def save_figure(fig: Any, path: Union[PathLike, Any], **kwargs: Any) -> None:
    """Write a figure and close it.

    Args:
        fig: A :class:`matplotlib.figure.Figure`.
        path (str or file object): The image file (its folder is made if
            needed; its suffix picks the format), or a binary file object.
        **kwargs: Passed to :meth:`~matplotlib.figure.Figure.savefig`.
    """
    try:
        if isinstance(path, (str, os.PathLike)):  # (atomically: the old image or the new one, not a cut one)
            from ..files import atomic_file

            target = os.fspath(path)
            os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
            fmt = kwargs.pop("format", None) or os.path.splitext(target)[1][1:].lower() or None
            with atomic_file(target) as f:
                fig.savefig(f, format=fmt, **kwargs)
        else:
            fig.savefig(path, **kwargs)
    finally:  # (a failed save too: pyplot keeps every open figure until closed)
        pyplot().close(fig)


def plot_sketch_curve(curve: List[Dict[str, Any]], path: PathLike, title: str = "") -> None:
    """Write the accuracy-against-b curve of :func:`~kong_pyg.sketch_curve` to an image.

    Args:
        curve (list): The rows of :func:`~kong_pyg.sketch_curve`; a row with
            :obj:`dim=None` (the exact map) is drawn as a horizontal line.
        path (str): The image file (its suffix picks the format).
        title (str, optional): The title. (default: :obj:`""`)
    """
    plt = pyplot()
    rows = [row for row in curve if row["dim"] is not None]
    dims = [row["dim"] for row in rows]
    mean = np.array([row["accuracy_mean"] for row in rows]) * 100
    std = np.array([row["accuracy_std"] for row in rows]) * 100
    fig, ax = plt.subplots(figsize=(6, 4))
    if rows:  # (a curve of the exact row alone is its line: no b to put on a log axis)
        ax.errorbar(dims, mean, yerr=std, marker="o", capsize=3, label="sketch (dim = b)")
        ax.set_xscale("log", base=2)
    for row in curve:
        if row["dim"] is None:
            ax.axhline(100 * row["accuracy_mean"], color="gray", linestyle="--", label="exact map")
    ax.set_xlabel("sketch size b")
    ax.set_ylabel("accuracy (%)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    save_figure(fig, path, dpi=120)


def plot_fraction_curve(curve: Dict[str, Any], path: PathLike,
                        title: str = "MovieLens-100k, gender from ordered ego graphs") -> None:
    """Write the accuracy-against-training-fraction curve as a small image.

    Args:
        curve (dict): What :func:`kong_pyg.experiments.table2.accuracy_curve`
            returns: :obj:`fractions` and, per method and fraction, a
            :func:`~kong_pyg.evaluation.stats.mean_ci` of the accuracy.
        path (str): The image file (its suffix picks the format).
        title (str, optional): The title.
            (default: :obj:`"MovieLens-100k, gender from ordered ego graphs"`)
    """
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 3.4), dpi=100)
    fr = curve["fractions"]
    for name, by_f in curve["acc"].items():
        m = np.array([100 * by_f[str(f)]["mean"] for f in fr])
        h = np.array([100 * by_f[str(f)]["half"] for f in fr])
        ax.errorbar(fr, m, yerr=h, marker="o", ms=3, capsize=2, label=name)
    ax.set_xlabel("training-set fraction")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, path)


__all__ = ["pyplot", "save_figure", "plot_sketch_curve", "plot_fraction_curve"]
