r"""Resumable runs: finished rows kept in a plain JSON file (never a pickle).

A file belongs to one run: its protocol (the splits, the grids, the seed)
and a digest of the graphs and their labels. A file of another run is an
error, never mixed in; a file whose rows are not the scores that run
writes (fractions in [0, 1], one per split, C from the grid) is an error
that names the file.
"""
import hashlib
import json
import math
import os
from typing import Any, Dict, Optional, Sequence

import numpy as np

from ..files import atomic_write, regular_file


def graphs_digest(graphs: Any, y: np.ndarray) -> str:
    """A digest of every tensor of the graphs (or of a PyG data set's storage) and of the labels."""
    import torch
    from torch_geometric.data import InMemoryDataset

    h = hashlib.blake2b(digest_size=16)

    def add(name: str, t: Any) -> None:
        if isinstance(t, torch.Tensor):
            t = t.detach().cpu().contiguous()
            h.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
            h.update(t.view(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")

    if isinstance(graphs, InMemoryDataset) and graphs.transform is None and graphs.slices is not None:
        data = graphs._data
        for key in sorted(graphs.slices):
            add(key, data[key])
            add(f"{key}/slices", graphs.slices[key])
        add("indices", torch.as_tensor(list(graphs.indices()), dtype=torch.long))
    else:
        for i in range(len(graphs)):
            g = graphs[i]
            for key in sorted(g.keys()):
                add(f"{i}/{key}", g[key])
    h.update(np.ascontiguousarray(y, dtype=np.int64).tobytes())
    return h.hexdigest()


class ResumeFile:
    """Finished methods of a run, kept in :obj:`path` (None: kept in memory only).

    Args:
        path (str, optional): The JSON file.
        protocol (dict): What the run is (compared with the file's).
        n_splits (int): Scores per row.
        grids (dict): Per method, the :math:`C` values it may choose.
    """

    def __init__(self, path: Optional[str], protocol: Dict[str, Any], n_splits: int,
                 grids: Dict[str, Sequence[float]]):
        self.path, self.protocol = path, protocol
        self.done: Dict[str, Dict[str, Any]] = {}
        # (a folder of that name: refused now, not at the first finished method's write)
        if not (path and regular_file(path, "give another resume file")):
            return
        try:
            with open(path, encoding="utf-8") as f:
                state = json.load(f)
        except (ValueError, RecursionError, UnicodeDecodeError) as err:
            raise ValueError(f"the resume file {path!r} is not a resume file ({type(err).__name__}: {err}); "
                             "delete it or give another --resume file") from None
        if not isinstance(state, dict) or state.get("protocol") != protocol:
            saved = state.get("protocol") if isinstance(state, dict) else None
            if isinstance(saved, dict):  # name what differs: the saved value and this run's
                keys = sorted(set(saved) | set(protocol), key=str)
                what = "; ".join(f"{k}: {saved.get(k, '(none)')!r} there, {protocol.get(k, '(none)')!r} here"
                                 for k in keys if saved.get(k, "(none)") != protocol.get(k, "(none)"))
            else:
                what = f"protocol {saved!r}"
            raise ValueError(f"the resume file {path!r} belongs to another run ({what}); delete it or give "
                             "another --resume file")
        done = state.get("done")
        if not isinstance(done, dict):
            raise ValueError(f"the resume file {path!r} has no 'done' rows")
        for name, row in done.items():
            problem = _row_problem(row, n_splits, grids.get(name))
            if problem:
                raise ValueError(f"the resume file {path!r}: the row of {name!r} {problem}; delete it or "
                                 "give another --resume file")
        self.done = done

    def get(self, name: str) -> Optional[Dict[str, Any]]:
        """The row of a finished method (None if it did not finish)."""
        return self.done.get(name)

    def put(self, name: str, row: Dict[str, Any]) -> None:
        """Keep a finished row (written at once, atomically)."""
        self.done[name] = row
        if self.path:
            os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
            text = json.dumps({"protocol": self.protocol, "done": self.done})
            atomic_write([text.encode("utf-8")], self.path)


def _row_problem(row: Any, n: int, grid: Optional[Sequence[float]]) -> str:
    """What is wrong with a stored row ('' if nothing)."""
    if not isinstance(row, dict):
        return "is not a mapping"
    for key in ("acc", "auc"):
        v = row.get(key)
        if not _numbers(v, n) or not all(0.0 <= x <= 1.0 for x in v or ()):
            return f"needs {n} {key} scores in [0, 1] (got {_short(v)})"
    C = row.get("C")
    if not _numbers(C, n) or (grid is not None and not all(c in grid for c in C or ())):
        return f"needs {n} C values from the grid {list(grid or [])} (got {_short(C)})"
    for key in ("fits", "not_converged"):
        if not isinstance(row.get(key), int) or isinstance(row.get(key), bool) or row[key] < 0:
            return f"needs a count {key!r} (got {_short(row.get(key))})"
    if not _numbers([row.get("fit_s")], 1) or row["fit_s"] < 0:
        return f"needs seconds 'fit_s' (got {_short(row.get('fit_s'))})"
    feature_s, dims = row.get("feature_s"), row.get("dims")
    if not isinstance(feature_s, list) or not feature_s or not _numbers(feature_s, len(feature_s)) \
            or min(feature_s) < 0:
        return f"needs feature seconds 'feature_s' (got {_short(feature_s)})"
    if not isinstance(dims, list) or len(dims) != len(feature_s) or \
            not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in dims):
        return f"needs one dimension per feature time in 'dims' (got {_short(dims)})"
    return ""


def _numbers(v: Any, n: int) -> bool:
    """Whether :obj:`v` is a list of :obj:`n` finite real numbers."""
    return isinstance(v, list) and len(v) == n and all(
        isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in v)


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


__all__ = ["ResumeFile", "graphs_digest"]
