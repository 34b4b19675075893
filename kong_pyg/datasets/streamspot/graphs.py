r"""One ordered PyG graph per graph id of a StreamSpot edge stream, and graph labels."""
import numbers
import os
from typing import Any, Callable, Dict, Iterable, List, Optional, TextIO, Union

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Data, InMemoryDataset

from ...config import check_bool
from ...devices import cpu_by_default
from ...idmap import first_appearance
from ...inputs import top_beyond_int64
from ...warn import warn
from .reader import read_streamspot
from .records import EdgeStream, MalformedLine, format_malformed


def _lines(source: Any) -> Iterable[str]:
    """The lines of a path or of an open text file or iterable of lines.

    A path is read as UTF-8 (a BOM dropped, undecodable bytes as
    ``surrogateescape`` escapes, as the stream reader shows id tokens), with
    universal newlines.
    """
    if isinstance(source, (str, os.PathLike)):
        with open(source, "r", encoding="utf-8-sig", errors="surrogateescape") as f:
            yield from f
    else:
        yield from source


def _is_integer(text: str) -> bool:
    digits = text[1:] if text[:1] == "-" else text
    return digits.isascii() and digits.isdigit()


def _source_name(source: Any) -> str:
    """The file name of a path or open file (for messages), else an empty string."""
    if isinstance(source, (str, os.PathLike)):
        return os.fsdecode(source)
    name = getattr(source, "name", None)
    return name if isinstance(name, str) else ""


def _in_int64(label: int) -> bool:
    return -(2**63) <= label < 2**63


def _integer_label(gid: Any, value: Any) -> int:
    """A label of a dict as a 64-bit :obj:`int`: an integer, an integral float or a string of an integer."""
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.item()
    label: Optional[int] = None
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"'labels' gives graph id {gid!r} the label {value!r}; graph labels must be integers "
                        "(not booleans)")
    if isinstance(value, str) and _is_integer(value.strip()):
        label = int(value)
    elif isinstance(value, numbers.Integral):
        label = int(value)
    elif isinstance(value, numbers.Real) and float(value).is_integer():
        label = int(float(value))
    if label is not None and _in_int64(label):
        return label
    error = ValueError if isinstance(value, (numbers.Real, str)) else TypeError
    raise error(f"'labels' gives graph id {gid!r} the label {value!r}; graph labels must be integers"
                + ("" if label is None else " of 64 bits"))


def _label_tensor(labels: Any) -> Tensor:
    """A label tensor as integers: integral floats are accepted, other floats refused (never truncated)."""
    try:
        t = torch.as_tensor(labels)
    except (OverflowError, RuntimeError, TypeError, ValueError) as err:
        raise ValueError(f"'labels' must hold 64-bit integers ({err})") from None
    if t.is_complex() or t.dtype == torch.bool:
        raise TypeError(f"'labels' must hold integers (got {t.dtype})")
    if top_beyond_int64(t) is not None:
        raise ValueError("'labels' must hold 64-bit integers (got a label >= 2^63)")
    if t.is_floating_point():
        bad = ~(torch.isfinite(t) & (t == t.round()) & (t.abs() < 2**63))
        if bool(bad.any()):
            raise ValueError(f"'labels' holds non-integer values {t[bad][:5].tolist()}; graph labels must be "
                             f"integers")
    return t.long().view(-1)


def first_types(stream: EdgeStream) -> Tensor:
    """The type of every node at its first appearance in the stream."""
    e = stream.num_edges
    num_nodes = int(torch.maximum(stream.src.max(), stream.dst.max())) + 1 if e else 0
    arrival = torch.arange(e)
    # position 2e for the source of edge e, 2e + 1 for its destination
    first = torch.full((num_nodes,), 2 * e, dtype=torch.long)
    first.scatter_reduce_(0, torch.cat([stream.src, stream.dst]),
                          torch.cat([2 * arrival, 2 * arrival + 1]), reduce="amin")
    if e == 0:
        return torch.zeros(num_nodes, dtype=torch.long)
    edge = (first // 2).clamp(max=e - 1)  # (indices of no edge get a type they never use)
    return torch.where(first % 2 == 0, stream.src_type[edge], stream.dst_type[edge])


def check_nodes_per_graph(stream: EdgeStream) -> None:
    """Refuse a node index that edges of two graphs use (an :class:`EdgeStream` numbers (graph, node))."""
    e = stream.num_edges
    if e == 0:
        return
    nodes = torch.cat([stream.src, stream.dst])
    graph = stream.graph.repeat(2)
    num_nodes = int(nodes.max()) + 1
    low = torch.full((num_nodes,), len(stream.graph_ids), dtype=torch.long)
    low.scatter_reduce_(0, nodes, graph, "amin")
    high = torch.full((num_nodes,), -1, dtype=torch.long).scatter_reduce_(0, nodes, graph, "amax")
    shared = (low != high) & (high >= 0)
    if bool(shared.any()):
        v = int(shared.nonzero()[0])
        a, b = stream.graph_ids[int(low[v])], stream.graph_ids[int(high[v])]
        raise ValueError(f"'stream' uses node index {v} in graphs {a!r} and {b!r}: an EdgeStream's 'src' and "
                         "'dst' number (graph, node id) pairs, one index per node of one graph (as "
                         "read_streamspot and synthetic_event_stream build them)")


def graph_order(graph: Tensor, num_graphs: int) -> Tensor:
    """Graph indices in order of their first edge; graphs without an edge last, by index."""
    e = graph.numel()
    first = torch.full((num_graphs,), e, dtype=torch.long)
    first.scatter_reduce_(0, graph, torch.arange(e), reduce="amin")
    return torch.argsort(first * max(num_graphs, 1) + torch.arange(num_graphs))


def events_in_graph_order(stream: EdgeStream) -> Tensor:
    """The stream's event positions in the order :func:`stream_to_graphs` lists the events.

    Graphs in order of their first edge (:func:`graph_order`), each graph's events in arrival order.
    """
    num_graphs = len(stream.graph_ids)
    rank = torch.empty(num_graphs, dtype=torch.long)
    rank[graph_order(stream.graph, num_graphs)] = torch.arange(num_graphs)
    return torch.sort(rank.index_select(0, stream.graph), stable=True).indices


@cpu_by_default
def stream_to_graphs(
    stream: EdgeStream, labels: Union[Tensor, Dict[Any, int], None] = None, undirected: bool = True
) -> List[Data]:
    r"""One ordered PyG graph per graph id, edges in arrival order.

    Graphs come in order of their first edge in the stream: the row
    order of :meth:`KongStream.sketches <kong_pyg.KongStream.sketches>` on
    the same stream. Graphs of :obj:`stream.graph_ids` without any edge come
    last, in index order, with no nodes: a stream has no row for them, and
    KONG refuses an empty graph (drop them, e.g. :obj:`[g for g in graphs if
    g.num_nodes]`, to match the stream's rows). :func:`read_streamspot` and
    :func:`synthetic_event_stream` number graphs in that order, so for their
    streams it is also the index order (that of :obj:`stream.graph_ids` and
    of their labels). Each graph keeps its id as :obj:`graph_id`.

    Nodes are numbered in order of first appearance within their graph.
    Node :math:`v`'s label is its type (from its first edge); every edge
    carries its type as :obj:`edge_attr`. With :obj:`undirected`, each
    arrival :math:`(s, d)` becomes the two edges :math:`d \to s` and
    :math:`s \to d` next to each other, so with PyG's default flow both
    endpoints see the other in arrival order: a process sees the objects it
    acted on, an object the processes that touched it.

    Args:
        stream (EdgeStream): The edges.
        labels (torch.Tensor or dict, optional): Graph labels, stored as
            :obj:`y`: a tensor indexed like :obj:`stream.graph_ids`, or a dict
            from graph id to label (keys compared as strings); integers
            (integral floats are taken, others are a :class:`ValueError`).
        undirected (bool, optional): Add both directions. Otherwise only
            :math:`d \to s`, so that (default flow) a source sees its
            destinations in order. (default: :obj:`True`)
    """
    if not isinstance(stream, EdgeStream):
        raise TypeError(f"'stream' must be an EdgeStream (got {type(stream).__name__})")
    check_bool("undirected", undirected)  # ('no' read as True)
    stream = EdgeStream(*[t.cpu() if isinstance(t, Tensor) else t for t in stream])  # type: ignore[arg-type]
    # (data prep: on the CPU, wherever the stream's columns are)
    num_graphs = len(stream.graph_ids)
    labels = _graph_labels(labels, stream.graph_ids)
    order = torch.sort(stream.graph, stable=True).indices  # arrival order kept per graph
    per_graph = torch.bincount(stream.graph, minlength=num_graphs).tolist()
    edges = torch.split(order, per_graph)
    check_nodes_per_graph(stream)
    node_type = first_types(stream)
    out = []
    for g in graph_order(stream.graph, num_graphs).tolist():
        idx = edges[g]
        src, dst = stream.src[idx], stream.dst[idx]
        glob, local = first_appearance(torch.stack([src, dst], dim=1).view(-1))
        local = local.view(-1, 2)
        if undirected:
            ei = torch.stack([torch.stack([local[:, 1], local[:, 0]], 1),
                              torch.stack([local[:, 0], local[:, 1]], 1)], dim=1).view(-1, 2).t()
            attr = stream.edge_type[idx].repeat_interleave(2)
        else:
            ei = torch.stack([local[:, 1], local[:, 0]])
            attr = stream.edge_type[idx]
        d = Data(x=node_type[glob], edge_index=ei.contiguous(), edge_attr=attr,
                 graph_id=stream.graph_ids[g])
        if labels is not None:
            d.y = labels[g].view(1)
        out.append(d)
    return out


def _graph_labels(labels: Any, graph_ids: List[Any]) -> Optional[Tensor]:
    """The labels as an ``int64`` tensor indexed like :obj:`graph_ids`, checked.

    From a dict (graph id to label, keys compared as strings), or a tensor, array or sequence
    indexed like :obj:`graph_ids`; every label an integer (integral floats taken, others refused).
    """
    if labels is None:
        return None
    if isinstance(labels, dict):
        by_str: Dict[str, int] = {}
        for k, v in labels.items():
            label = _integer_label(k, v)
            if by_str.setdefault(str(k), label) != label:
                raise ValueError(f"'labels' gives graph id {str(k)!r} two labels ({by_str[str(k)]} and "
                                 f"{label}; keys are compared as strings)")
        missing = [g for g in graph_ids if str(g) not in by_str]
        if missing:
            raise ValueError(f"'labels' has no label for graph id(s) {missing[:5]} ({len(missing)} of "
                             f"{len(graph_ids)})")
        if len(by_str) > len(graph_ids):  # (a shard of the stream may hold fewer graphs: not an error)
            present = {str(g) for g in graph_ids}
            extra = [g for g in by_str if g not in present]
            warn(f"'labels' names {len(extra)} graph(s) that are not in the stream, e.g. "
                 f"{extra[:3]} (their labels are not used)")
        return torch.tensor([by_str[str(g)] for g in graph_ids], dtype=torch.long)
    if isinstance(labels, (str, bytes)) or not isinstance(labels, (Tensor, list, tuple, np.ndarray)):
        raise TypeError(f"'labels' must be a tensor, an array, a sequence or a dict of graph labels "
                        f"(got {type(labels).__name__})")
    out = _label_tensor(labels)
    if out.numel() != len(graph_ids):
        raise ValueError(f"'labels' must hold one label per graph: {len(graph_ids)} (got {out.numel()})")
    return out


def read_graph_labels(source: Union[str, "os.PathLike[str]", TextIO, Iterable[str]]) -> Dict[str, int]:
    """Read a labels file: one ``graph-id label`` pair per line (whitespace-separated).

    Blank lines and lines starting with ``#`` are skipped; labels are integers.
    A graph id may repeat with the same label; with another label it is a
    :class:`ValueError` naming the file, the id and both lines.
    """
    out: Dict[str, int] = {}
    first_line: Dict[str, int] = {}
    name = _source_name(source)
    where = f"{name}: " if name else ""
    for line_no, line in enumerate(_lines(source), start=1):
        text = line.lstrip("\ufeff").strip()  # (a byte-order mark starts the file, or each of files joined)
        if not text or text.startswith("#"):
            continue
        fields = text.split()
        if len(fields) != 2 or not _is_integer(fields[1]):
            raise ValueError(f"{where}labels line {line_no}: expected 'graph-id label' (integer label), "
                             f"got {text!r}")
        gid, label = fields[0], int(fields[1])
        if not _in_int64(label):
            raise ValueError(f"{where}labels line {line_no}: the label {label} does not fit 64 bits")
        if gid in out and out[gid] != label:
            raise ValueError(f"{where}labels line {line_no}: graph id {gid!r} is labelled {label}, but line "
                             f"{first_line[gid]} labelled it {out[gid]}")
        out[gid] = label
        first_line.setdefault(gid, line_no)
    return out


class StreamSpotGraphs(InMemoryDataset):
    r"""The ordered graphs of a StreamSpot edge stream, as a PyG dataset.

    Reads the stream with :func:`read_streamspot` and builds one graph per
    graph id with :func:`stream_to_graphs` (arrival order = neighbor order,
    node label = node type, :obj:`edge_attr` = edge type, :obj:`graph_id`
    kept). Graphs are in order of their first edge (:func:`stream_to_graphs`'s
    order, the row order of :class:`~kong_pyg.KongStream`).

    .. warning::
        The neighbor order is the order of :obj:`edge_index`; never
        :obj:`coalesce`, sort or :obj:`ToUndirected` these graphs.

    Args:
        source (str, file, lines or EdgeStream): A StreamSpot file (path,
            open text file or lines) or an already read :class:`EdgeStream`.
        labels (dict, str or torch.Tensor, optional): Graph labels stored as
            :obj:`y`: a dict from graph id to integer label (keys compared as
            strings), a path to a labels file (see :func:`read_graph_labels`),
            or a tensor indexed like :obj:`stream.graph_ids` (the stream's
            graph numbers, not this data set's order). Every graph needs a label;
            labels must be integers (integral floats such as :obj:`1.0` are
            taken, others are a :class:`ValueError`, never truncated).
            (default: :obj:`None`)
        undirected (bool, optional): As in :func:`stream_to_graphs`.
            (default: :obj:`True`)
        strict (bool, optional): Fail on the first malformed line (otherwise
            malformed lines are skipped and counted in :obj:`num_malformed`,
            the first ones kept in :obj:`malformed`). (default: :obj:`False`)
        transform (callable, optional): A transform applied on access.
    """

    @cpu_by_default
    def __init__(self, source: Any, labels: Any = None, undirected: bool = True, strict: bool = False,
                 transform: Optional[Callable[..., Any]] = None) -> None:
        super().__init__(None, transform)
        self.malformed: List[MalformedLine]
        self.num_malformed: int
        if isinstance(source, EdgeStream):
            stream, self.malformed, self.num_malformed = source, [], 0
        else:
            stream, self.malformed, self.num_malformed = read_streamspot(source, strict=strict)
            if self.num_malformed:  # (skipped lines are data lost: said, as the command and order_test say)
                name = _source_name(source)
                warn(f"{name + ': ' if name else ''}"
                     + format_malformed(self.malformed[:3], self.num_malformed).replace("\n  ", "; ")
                     + " (all in .malformed; strict=True makes the first an error)")
        if stream.num_edges == 0:
            raise ValueError("the stream has no edges")
        kinds = {type(g) for g in stream.graph_ids}
        if len(kinds) > 1 and not all(issubclass(k, numbers.Integral) for k in kinds):
            names = sorted(k.__name__ for k in kinds)
            raise ValueError(f"the stream's graph ids are of several kinds ({names}): a PyG data set stores "
                             "them as one tensor or one list; give ids of one kind (read_streamspot gives "
                             "strings)")
        if isinstance(labels, (str, os.PathLike)):
            labels = read_graph_labels(labels)
        graphs = stream_to_graphs(stream, labels, undirected)
        self._data, self.slices = self.collate(graphs)

    @property
    def graph_ids(self) -> List[Any]:
        """The graph ids of the graphs held, in their order.

        That of their first edge; a subset or a shuffle of the data set holds its own graphs' ids, in
        its order.
        """
        stored = self._data.graph_id  # (the storage's, one per graph it holds: also after copy())
        if isinstance(stored, Tensor):  # (one graph's copy() stores its id as a tensor too)
            stored = stored.reshape(-1).tolist()
        elif self.slices is None:  # (one graph: PyG stores it as it is)
            stored = [stored]
        else:
            stored = list(stored)
        return [stored[i] for i in self.indices()]


__all__ = ["first_types", "graph_order", "stream_to_graphs", "read_graph_labels", "StreamSpotGraphs"]
