r"""Parse and check the raw text files of a TU data set (vectorized, no pickle).

The format (`TU collection <https://chrsmrrs.github.io/datasets/>`_):
``NAME_A.txt`` has one edge ``u, v`` per line (1-based node ids, all graphs
together), ``NAME_graph_indicator.txt`` the graph id of every node (1-based,
nodes listed graph by graph), ``NAME_graph_labels.txt`` one class per graph,
and the optional ``NAME_node_labels.txt`` / ``NAME_edge_labels.txt`` one row
of integer labels per node / per line of ``NAME_A.txt``. Attribute files are
ignored.

:func:`parse_tu` builds what PyG's
:class:`~torch_geometric.datasets.TUDataset` builds from these files (node
and edge labels one-hot, classes renumbered ``0..C-1``,
self-loops removed, edges coalesced) as collated tensors, after checking the
files: every malformation is a :class:`ValueError` that names the file and
line. A data set without node labels gets every node's in-degree as its
label.
"""
import io
import re
from typing import Dict, List, Mapping, Optional, Tuple

import numpy as np
import torch
from torch import Tensor

from ..files import file_text

#: The raw files read (the suffix of ``NAME_<part>.txt``).
PARTS = ("A", "graph_indicator", "graph_labels", "node_labels", "edge_labels")
#: The sizes :func:`parse_tu` gives beside the graphs (a cache lacking one is rebuilt).
SIZES = ("num_node_labels", "num_edge_labels")

#: The most bytes (float32) of one-hot label matrices built for one data set (node and edge labels).
MAX_ONE_HOT_BYTES = 2 << 30

_EXACT = float(2 ** 53)  # integers beyond this are not exact in float64

Files = Mapping[str, Tuple[str, bytes]]


#: A number as a line's field may write it: ASCII digits, an optional sign, fraction and exponent.
_NUMBER = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*", re.ASCII)


def _lines(text: str) -> List[str]:
    r"""The lines of a file's text: they end at ``\n`` (the text's line ends made ``\n`` first)."""
    return text.split("\n")


def _line_of(text: str, row: int) -> int:
    """The 1-based line number of data row :obj:`row` (blank lines are skipped)."""
    seen = -1
    no = 0
    for no, line in enumerate(_lines(text), start=1):
        if line.strip():
            seen += 1
            if seen == row:
                return no
    return no


def _locate(where: str, text: str) -> ValueError:
    """The error for a table that does not parse: the first bad line."""
    width = None
    for no, line in enumerate(_lines(text), start=1):
        if not line.strip():
            continue
        fields = line.split(",")
        if width is None:
            width = len(fields)
        elif len(fields) != width:
            return ValueError(f"{where}, line {no}: {len(fields)} comma-separated value(s), but the "
                              f"lines above have {width}: {line!r}")
        for field in fields:
            if not _NUMBER.fullmatch(field) and field.strip().lower() not in ("nan", "inf", "+inf", "-inf"):
                return ValueError(f"{where}, line {no}: {field.strip()!r} is not a number: {line!r}")
    return ValueError(f"{where}: cannot be read as lines of comma-separated integers")


def _parse(where: str, text: str) -> Optional[np.ndarray]:
    """The integers in :obj:`text` (not blank; integral floats accepted), or None where it does not parse.

    Raises:
        ValueError: A number that is no integer (or too large), with its line.
    """
    # (no warning filter: NumPy warns only about text without values)
    try:
        return np.loadtxt(io.StringIO(text), delimiter=",", dtype=np.int64, ndmin=2, comments=None)
    except ValueError:
        try:
            values = np.loadtxt(io.StringIO(text), delimiter=",", dtype=np.float64, ndmin=2, comments=None)
        except ValueError:
            return None
    bad = ~np.isfinite(values) | (values != np.round(values)) | (np.abs(values) >= _EXACT)
    if bad.any():
        row, col = (int(i) for i in np.argwhere(bad)[0])
        value = float(values[row, col])
        raise ValueError(f"{where}, line {_line_of(text, row)}: {value!r} is not an integer (or is too "
                         f"large)")
    return values.astype(np.int64)


def read_table(where: str, content: bytes, columns: Optional[int] = None) -> np.ndarray:
    r"""Parse comma-separated integers into an :obj:`int64` array :obj:`[rows, cols]`.

    Lines end at ``\n``, ``\r\n`` or ``\r``; blank lines (empty or only
    whitespace) are skipped; integral floats (``"1.0"``) are accepted; a
    UTF-8 byte-order mark at the start is dropped (as editors on Windows write it).

    Args:
        where (str): The file, for messages.
        content (bytes): Its content.
        columns (int, optional): The number of values every line must have.

    Raises:
        ValueError: Not text, a non-number, a line with another number of
            values, a non-integral, non-finite or too large value (the file
            and line are named).
    """
    try:
        text = file_text(content)
    except UnicodeDecodeError as err:
        line = len(_lines(file_text(content[:err.start])))  # (the bytes before the error decode)
        raise ValueError(f"{where}, line {line}: not UTF-8 text") from None
    if not text.strip():
        return np.zeros((0, columns or 1), dtype=np.int64)
    table = _parse(where, text)
    if table is None:  # (NumPy skips empty lines, not lines of whitespace: blank those and try again)
        lines = _lines(text)
        if any(line and not line.strip() for line in lines):
            text = "\n".join(line if line.strip() else "" for line in lines)
            table = _parse(where, text)
    if table is None:
        raise _locate(where, text)
    if columns is not None and table.shape[1] != columns:
        raise ValueError(f"{where}, line {_line_of(text, 0)}: expected {columns} comma-separated "
                         f"value(s) per line, got {table.shape[1]}")
    return table


def _bad_line(where: str, content: bytes, row: int, message: str) -> ValueError:
    return ValueError(f"{where}, line {_line_of(file_text(content), row)}: {message}")


def _check_rows(files: Files, part: str, table: np.ndarray, expected: int, what: str, note: str = "") -> None:
    if table.shape[0] != expected:
        where, content = files[part]
        got = table.shape[0]
        at = f", line {_line_of(file_text(content), expected)}" if got > expected else ""
        raise ValueError(f"{where}{at}: {got} line(s), but the data set has {expected} {what} "
                         f"(one line per {what.rstrip('s')}{note})")


def _indicator(files: Files) -> np.ndarray:
    where, content = files["graph_indicator"]
    ind = read_table(where, content, 1)[:, 0]
    if ind.size == 0:
        raise ValueError(f"{where}: is empty (it must give the graph id of every node)")
    if ind[0] != 1:
        raise ValueError(f"{where}, line {_line_of(file_text(content), 0)}: the first graph id "
                         f"must be 1, got {int(ind[0])}")
    step = np.diff(ind)
    bad = (step != 0) & (step != 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0]) + 1
        raise ValueError(f"{where}, line {_line_of(file_text(content), i)}: graph id {int(ind[i])} "
                         f"follows {int(ind[i - 1])}; nodes must be listed graph by graph with ids "
                         "1, 2, 3, ... (no gaps, no going back)")
    return ind


def _edges(files: Files, ind: np.ndarray) -> np.ndarray:
    where, content = files["A"]
    a = read_table(where, content, 2)
    if a.shape[0] == 0:
        raise ValueError(f"{where}: is empty (it must list the edges 'u, v', one per line)")
    n = ind.size
    ind_where = files["graph_indicator"][0]
    outside = ((a < 1) | (a > n)).any(axis=1)
    if outside.any():
        row = int(np.flatnonzero(outside)[0])
        raise _bad_line(where, content, row,
                        f"edge {a[row, 0]}, {a[row, 1]} names a node that does not exist "
                        f"(node ids are 1..{n}, one per line of {ind_where})")
    g = ind[a - 1]
    across = g[:, 0] != g[:, 1]
    if across.any():
        row = int(np.flatnonzero(across)[0])
        raise _bad_line(where, content, row, f"edge {a[row, 0]}, {a[row, 1]} joins graph "
                        f"{g[row, 0]} and graph {g[row, 1]} ({ind_where})")
    return a


def _no_repeated_edges(files: Files, a: np.ndarray, num_nodes: int) -> None:
    """With edge labels, every edge once (coalescing adds a repeated edge's one-hot labels into 2s)."""
    key = a[:, 0] * (num_nodes + 1) + a[:, 1]
    key = np.where(a[:, 0] == a[:, 1], -1 - np.arange(len(a)), key)  # (self-loops are dropped anyway)
    order = np.argsort(key, kind="stable")
    again = np.flatnonzero(np.diff(key[order]) == 0)
    if again.size:
        first, row = int(order[again[0]]), int(order[again[0] + 1])
        where, content = files["A"]
        raise _bad_line(where, content, row,
                        f"edge {a[row, 0]}, {a[row, 1]} is listed again (first on line "
                        f"{_line_of(file_text(content), first)}); with edge labels "
                        f"({files['edge_labels'][0]}) a repeated edge would hold two labels: remove one line")


def _one_hot_columns(files: Files, part: str, table: np.ndarray, used: int = 0) -> Tensor:
    """PyG's labels: the column shifted to start at 0, one-hot (:obj:`used` bytes of the budget taken).

    Several label columns are one label per distinct row (their combinations numbered in sorted
    order), one-hot: KONG's strings need one discrete label per node or edge, where PyG's
    concatenated one-hot blocks (a multi-hot row) would be refused as features.
    """
    if table.shape[1] > 1:
        table = np.unique(table, axis=0, return_inverse=True)[1].reshape(-1, 1)
    low, high = table.min(axis=0).tolist(), table.max(axis=0).tolist()
    widths = [h - lo + 1 for lo, h in zip(low, high)]  # (Python integers: a span past 2^63 does not wrap)
    size = sum(widths) * table.shape[0] * 4
    if size > MAX_ONE_HOT_BYTES - used:
        left = f" left of {MAX_ONE_HOT_BYTES / 2**30:.1f} GiB for all labels" if used else ""
        raise ValueError(f"{files[part][0]}: labels span {widths} values per column; their one-hot "
                         f"matrix would take {size / 2**30:.1f} GiB (more than the "
                         f"{(MAX_ONE_HOT_BYTES - used) / 2**30:.1f} GiB{left})")
    out = torch.zeros(table.shape[0], sum(widths), dtype=torch.float32)  # (filled in place: the peak)
    start = 0
    rows = torch.arange(table.shape[0])
    for j, (lo, w) in enumerate(zip(low, widths)):
        out[rows, torch.from_numpy(table[:, j] - lo) + start] = 1.0
        start += w
    return out


def parse_tu(name: str, files: Files) -> Tuple[Dict[str, Tensor], Dict[str, Tensor], Dict[str, int]]:
    r"""Build a collated TU data set from its raw files.

    Args:
        name (str): The data set (for messages).
        files (Mapping[str, Tuple[str, bytes]]): For every present part of
            :obj:`PARTS` (:obj:`"A"`, :obj:`"graph_indicator"` and
            :obj:`"graph_labels"` are required) the file's name for messages
            and its content.

    Returns:
        (dict, dict, dict): :obj:`Data.to_dict()` of the collated data
        (:obj:`x`, :obj:`edge_index`, :obj:`edge_attr` when there are edge
        labels, :obj:`y`), its slices, and the sizes
        :obj:`num_node_labels` (0: :obj:`x` holds in-degrees) and
        :obj:`num_edge_labels`.

    Raises:
        ValueError: A malformed file (named, with the line).
    """
    from torch_geometric.utils import coalesce, remove_self_loops

    missing = [p for p in ("A", "graph_indicator", "graph_labels") if p not in files]
    if missing:
        raise ValueError(f"data set {name!r} lacks {', '.join(f'{name}_{p}.txt' for p in missing)}")
    ind = _indicator(files)
    num_nodes, num_graphs = int(ind.size), int(ind[-1])
    a = _edges(files, ind)
    labels = read_table(*files["graph_labels"], 1)
    _check_rows(files, "graph_labels", labels, num_graphs, "graphs")
    x: Optional[Tensor] = None
    if "node_labels" in files:
        table = read_table(*files["node_labels"])
        _check_rows(files, "node_labels", table, num_nodes, "nodes")
        x = _one_hot_columns(files, "node_labels", table)
    edge_attr: Optional[Tensor] = None
    if "edge_labels" in files:
        table = read_table(*files["edge_labels"])
        _check_rows(files, "edge_labels", table, a.shape[0], "edges", f", as in {files['A'][0]}")
        _no_repeated_edges(files, a, num_nodes)
        used = 0 if x is None else x.numel() * x.element_size()
        edge_attr = _one_hot_columns(files, "edge_labels", table, used)

    edge_index = torch.from_numpy(np.ascontiguousarray(a.T - 1))
    edge_index, edge_attr = remove_self_loops(edge_index, edge_attr)
    edge_index, edge_attr = coalesce(edge_index, edge_attr, num_nodes)
    batch = torch.from_numpy(ind - 1)
    node_ptr = torch.zeros(num_graphs + 1, dtype=torch.long)
    torch.cumsum(torch.bincount(batch, minlength=num_graphs), 0, out=node_ptr[1:])
    edge_graph = batch[edge_index[0]]
    edge_ptr = torch.zeros(num_graphs + 1, dtype=torch.long)
    torch.cumsum(torch.bincount(edge_graph, minlength=num_graphs), 0, out=edge_ptr[1:])
    sizes = dict(zip(SIZES, (0 if x is None else int(x.size(1)),
                             0 if edge_attr is None else int(edge_attr.size(1)))))
    if x is None:  # in-degree labels
        x = torch.bincount(edge_index[1], minlength=num_nodes).view(-1, 1)
    data = {"x": x, "edge_index": edge_index - node_ptr[edge_graph].view(1, -1),
            "y": torch.unique(torch.from_numpy(labels[:, 0]), sorted=True, return_inverse=True)[1]}
    slices = {"x": node_ptr, "edge_index": edge_ptr, "y": torch.arange(num_graphs + 1)}
    if edge_attr is not None:
        data["edge_attr"] = edge_attr
        slices["edge_attr"] = edge_ptr
    return data, slices, sizes


__all__ = ["parse_tu", "read_table", "PARTS", "SIZES", "MAX_ONE_HOT_BYTES"]
