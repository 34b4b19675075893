"""The inputs of :func:`~kong_pyg.order_test`: ordered graphs, their class labels and their key's ties.

Any input the order test accepts (a PyG data set, a list of
:class:`~torch_geometric.data.Data`, an interaction log, a StreamSpot file or
:class:`~kong_pyg.datasets.EdgeStream`) becomes graphs here, with the name of
the per-edge key they all carry (or :obj:`None`).
"""

import os
from typing import Any, List, Mapping, Optional, Tuple

import numpy as np

from .devices import cpu_by_default
from .warn import warn


def tied_share(graphs: Any, key: str, flow: str = "source_to_target") -> float:
    """The share of edges whose key value an edge to another neighbor in the same neighborhood has too.

    (Edges to the same neighbor with one key, e.g. the authors' layout's doubled items, tie harmlessly:
    their order changes no string.)
    """
    import torch

    tied = total = 0
    for g in graphs:
        values, ei = getattr(g, key, None), g.edge_index
        if values is None or ei is None or ei.numel() == 0 or values.numel() != ei.size(1):
            continue  # (a key of another shape: the features' own checks name it)
        owner, other = (ei[1], ei[0]) if flow == "source_to_target" else (ei[0], ei[1])
        values = values.reshape(-1)
        kind = torch.float64 if values.is_floating_point() else torch.long  # (int64 keys stay exact)
        rows, edge_row = torch.unique(torch.stack([owner.to(kind), values.to(kind), other.to(kind)], dim=1),
                                      dim=0, return_inverse=True)
        _, group, size = torch.unique(rows[:, :2], dim=0, return_inverse=True, return_counts=True)
        tied += int((size[group] > 1)[edge_row].sum())  # (edges of (owner, key) groups of 2+ neighbors)
        total += owner.numel()
    return tied / total if total else 0.0


def edge_label_values(graphs: Any) -> int:
    """How many distinct edge labels the graphs' :obj:`edge_attr` hold: 0 (none), 1, or 2 (two or more).

    Read as the features read them (after the features: their errors name the graph); a whole
    in-memory data set is read from its collated storage at once.
    """
    import torch

    from .inputs import labels

    attr = getattr(getattr(graphs, "_data", None), "edge_attr", None)
    if getattr(graphs, "_indices", True) is None and isinstance(attr, torch.Tensor):
        # (every stored graph is in the data set: one pass over all of them)
        if attr.numel() == 0:
            return 0
        return min(2, int(torch.unique(labels(attr, "edge_attr", attr.size(0))).numel()))
    seen: Optional[torch.Tensor] = None
    for g in graphs:
        attr = getattr(g, "edge_attr", None)
        if attr is None or attr.numel() == 0:
            continue
        values = torch.unique(labels(attr, "edge_attr", attr.size(0)))  # (as the features read them)
        seen = values if seen is None else torch.unique(torch.cat([seen, values]))
        if seen.numel() > 1:
            return 2
    return 0 if seen is None else 1


@cpu_by_default
def load_ordered_graphs(source: Any, labels: Any = None,
                        edge_order_attr: Optional[str] = "edge_order",
                        notes: Optional[List[str]] = None) -> Tuple[Any, Optional[str]]:
    """Turn any accepted input of :func:`order_test` into graphs; also say which per-edge key they carry.

    A StreamSpot file's malformed lines are skipped, with a warning that counts them and names the
    first (also appended to :obj:`notes`, if given).

    Returns:
        (graphs, str or None): The graphs and :obj:`edge_order_attr` if every
        graph has that key, else :obj:`None`.
    """
    from torch_geometric.data import InMemoryDataset

    from .datasets import EdgeStream, InteractionGraphs, StreamSpotGraphs, read_streamspot

    if labels is not None and not isinstance(source, (str, os.PathLike, EdgeStream)):
        raise ValueError(f"'labels' are the graph labels of a StreamSpot input (a file or an EdgeStream), "
                         f"not of a {type(source).__name__}: pass the class labels as 'y'")
    if isinstance(source, Mapping):
        missing = [n for n in ("user", "item", "time", "user_label", "item_label") if n not in source]
        if missing:
            raise ValueError(f"an interaction log needs the keys {missing} (got {sorted(source)})")
        source = InteractionGraphs(**dict(source))
    elif isinstance(source, (str, os.PathLike)):
        if labels is None:
            raise ValueError("a StreamSpot file needs 'labels' (a dict, a labels file or a tensor)")
        path = os.fspath(source)
        source, bad, num_bad = read_streamspot(source, keep=3)
        if num_bad:
            from .datasets.streamspot import format_malformed

            note = f"{path}: " + format_malformed(bad, num_bad).replace("\n  ", "; ")
            warn(note)
            if notes is not None:
                notes.append(note)
    if isinstance(source, EdgeStream):
        if labels is None:
            raise ValueError("a StreamSpot stream needs 'labels'")
        stream = source
        source = StreamSpotGraphs(stream, labels, undirected=True)

        from .datasets.streamspot.graphs import events_in_graph_order

        # the key: each event's arrival position, on both of its edges (the graphs come in order of their
        # first edge, and list their events in arrival order, each as the two directions)
        key = events_in_graph_order(stream).repeat_interleave(2)
        # PyG collates a single graph with slices=None: its storage is that graph
        slices = source.slices
        assert key.numel() == (source._data.edge_index.size(1) if slices is None
                               else int(slices["edge_index"][-1]))
        if edge_order_attr:
            source._data[edge_order_attr] = key
            if slices is not None:
                slices[edge_order_attr] = slices["edge_index"]
            source._data_list = None
    if isinstance(source, InMemoryDataset) and source.slices is not None:
        return source, _key(edge_order_attr, bool(edge_order_attr) and edge_order_attr in source.slices)
    from .graph_union import not_a_graph
    from .graphs import as_graph_sequence

    graphs = as_graph_sequence(source)
    odd = next((err for err in map(not_a_graph, graphs, range(len(graphs))) if err is not None), None)
    if odd is not None:  # (name that, not its missing labels)
        raise odd
    has = [bool(edge_order_attr) and getattr(g, str(edge_order_attr), None) is not None for g in graphs]
    if any(has) and not all(has):
        raise ValueError(f"graph {has.index(False)} has no '{edge_order_attr}' but others have one: give "
                         "every graph the key, or none (edge_order_attr=None ignores it)")
    return graphs, _key(edge_order_attr, all(has))


def _key(edge_order_attr: Optional[str], present: bool) -> Optional[str]:
    """The key if the graphs have it; else None for the default name (no consistent shuffle), or an error."""
    if present or edge_order_attr in (None, "", "edge_order"):
        return edge_order_attr if present else None
    raise ValueError(f"no graph has the key edge_order_attr='{edge_order_attr}': check its name, or "
                     "pass edge_order_attr=None to run without a key (no consistent shuffle)")


def graph_labels(graphs: Any, y: Any = None) -> np.ndarray:
    """The class labels as consecutive integers :obj:`0..C-1` (from :obj:`y` or the graphs' :obj:`y`)."""
    from .evaluation.classify import graph_targets
    from .evaluation.splits import class_labels

    if y is None:  # (one label per graph, as the graphs give them: a dataset's transform included)
        y = graph_targets(graphs, hint="; or pass the class labels as 'y'")

    # (NaN, continuous values and strings mixed with numbers are refused as everywhere in the harness)
    y = class_labels(y)  # (a tensor given as 'y' read there, a meta one refused by name)
    if y.size != len(graphs):
        raise ValueError(f"'y' has {y.size} labels for {len(graphs)} graphs")
    classes, y = np.unique(y, return_inverse=True)
    counts = np.bincount(y)
    if classes.size < 2 or counts.min() < 2:
        sizes = ", ".join(f"{c}: {n}" for c, n in zip(classes.tolist(), counts.tolist()))
        raise ValueError(f"order_test needs at least two classes and at least two graphs of every class "
                         f"(graphs per class {{{sizes}}})")
    return y.astype(np.int64)


__all__ = ["tied_share", "load_ordered_graphs", "graph_labels"]
