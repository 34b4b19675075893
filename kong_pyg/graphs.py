r"""Sequences of PyG graphs (lists of :class:`~torch_geometric.data.Data`, datasets) as disjoint unions.

Front-ends and baselines that work on many graphs at once read them through
:func:`iter_graph_batches`: consecutive graphs are concatenated into one
disjoint union (node indices shifted), straight from an in-memory dataset's
collated storage when it has one (no per-graph Python work), else by
:func:`~kong_pyg.graph_union.concat_graphs`.
"""
import copy
import gc
import threading
from contextlib import contextmanager
from typing import Any, Generator, Iterator, List, Optional, Sequence, Tuple, Union

import torch
from torch import Tensor

from .graph_union import GraphBatch, attributes, concat_graphs, no_labels, union_edges, x_error
from .inputs import plain_tensor
from .kgrams import exclusive_cumsum


def _ranges(starts: Tensor, sizes: Tensor) -> Tensor:
    """Concatenated :obj:`arange(start, start + size)` for every pair."""
    total = int(sizes.sum())
    owner = torch.repeat_interleave(sizes, output_size=total)  # (i repeated sizes[i] times)
    return starts[owner] + torch.arange(total, device=starts.device) - exclusive_cumsum(sizes)[owner]


def _collated(graphs):
    """The collated storage of an in-memory PyG dataset, if it has one."""
    from torch_geometric.data import InMemoryDataset

    if not isinstance(graphs, InMemoryDataset) or graphs.transform is not None:
        return None
    data, slices = graphs._data, graphs.slices
    if slices is None or "x" not in slices or "edge_index" not in slices:
        return None
    return data, slices


def as_graph_sequence(graphs: Any, name: str = "graphs") -> Union[Sequence[Any], Any]:
    """Check that :obj:`graphs` is a non-empty sequence of graphs; a single graph becomes one.

    Accepts a PyG dataset, a list or tuple of :class:`~torch_geometric.data.Data`,
    a :class:`~torch_geometric.data.Batch` (its graphs) or a single
    :class:`~torch_geometric.data.Data` (one graph). :obj:`name` is the argument's, for messages.
    """
    from torch_geometric.data import Batch, Data
    from torch_geometric.data.data import BaseData

    if isinstance(graphs, Batch):
        graphs = _batch_graphs(graphs, name)
    elif isinstance(graphs, Data):
        graphs = [graphs]
    elif isinstance(graphs, BaseData):  # (a HeteroData has __getitem__ and __len__: no sequence)
        raise TypeError(f"'{name}' is a {type(graphs).__name__}, not a torch_geometric.data.Data: KONG reads "
                        "homogeneous graphs (e.g. data.to_homogeneous())")
    if isinstance(graphs, (str, bytes, dict)) or not hasattr(graphs, "__getitem__"):
        from torch.utils.data import DataLoader

        hint = ""
        if isinstance(graphs, DataLoader) and hasattr(graphs, "data"):  # (PyG's NodeLoader, LinkLoader)
            hint = (": a loader of sampled subgraphs cuts each node's neighborhood; compute on the whole "
                    "graph (loader.data) first, e.g. with KongFeatures(level='node')")
        elif isinstance(graphs, DataLoader):
            hint = ": pass the loader's dataset (loader.dataset), which KONG reads in batches of its own"
        elif hasattr(graphs, "__iter__") and not isinstance(graphs, (str, bytes, dict)):
            hint = ": pass list(...) of it"  # (a generator, map or dict view: read once, and no length)
        raise TypeError(
            f"'{name}' must be a sequence of Data objects, a Batch or a PyG dataset "
            f"(got {type(graphs).__name__}){hint}"
        )
    try:
        total = len(graphs)
    except TypeError as err:
        raise TypeError(f"'{name}' must be a sequence of Data objects, a Batch or a PyG dataset") from err
    if total == 0:
        raise ValueError(f"'{name}' is empty")
    return graphs


def _batch_graphs(b: Any, name: str) -> List[Any]:
    """A :class:`~torch_geometric.data.Batch`'s graphs, its bookkeeping checked against its batch vector.

    PyG splits a batch by its recorded slices; :meth:`Batch.subgraph` (and
    edits of :obj:`ptr`) leave them stale: the split then fails deep inside
    PyG or returns other graphs.
    """
    bad = (f"'{name}' is a Batch whose recorded graph slices do not match its 'batch' vector (stale after "
           "Batch.subgraph or an edited 'ptr'): pass the graphs, or Batch.from_data_list(...) of them")
    vec, ptr = getattr(b, "batch", None), getattr(b, "ptr", None)  # (both from the graphs' num_nodes)
    if isinstance(vec, Tensor) and isinstance(ptr, Tensor) and vec.dim() == 1 and ptr.dim() == 1:
        num = int(b.num_graphs)
        sizes = ptr.diff().cpu()
        if vec.numel() and (int(vec.min()) < 0 or int(vec.max()) >= num):
            raise ValueError(bad)
        counts = torch.bincount(vec.cpu().long(), minlength=num)
        if sizes.numel() != num or not torch.equal(counts, sizes.long()):
            raise ValueError(bad)
    try:
        return b.to_data_list()
    except (RuntimeError, IndexError) as err:
        why = " ".join(str(err).split())
        raise ValueError(f"'{name}' is a Batch that PyG cannot split back into its graphs ({why}): pass the "
                         "graphs, or Batch.from_data_list(...) of them") from err


def iter_graph_batches(
    graphs,
    batch_size: int,
    edge_labels: bool = True,
    edge_order_attr: Optional[str] = "edge_order",
    sparse_flow: Optional[str] = None,
) -> Iterator[GraphBatch]:
    """Yield disjoint unions of at most :obj:`batch_size` consecutive graphs.

    The fewest batches that hold :obj:`batch_size` graphs each, of sizes
    as equal as possible (4,110 graphs in batches of 4,096: two of 2,055,
    not 4,096 and 14: a batch has a fixed cost of a few hundred tensor
    operations, about as much as a thousand small graphs' work).
    Reads :obj:`x`, :obj:`edge_index` and, when present, :obj:`edge_attr`
    and the per-edge order key :obj:`edge_order_attr`. An in-memory PyG
    dataset without a transform is sliced straight from its collated
    storage (no per-graph Python work); other inputs (lists of
    :class:`~torch_geometric.data.Data`, datasets with transforms) are
    concatenated graph by graph. Every graph with edges has the order key
    or none does, whatever the batches (an error names the first that
    differs). A graph with a sparse adjacency :obj:`adj_t` instead of
    :obj:`edge_index` is refused, or with :obj:`sparse_flow` (where the
    neighbor order cannot matter, :math:`k = 1`) read as its edges for that
    flow (:func:`~kong_pyg.inputs.edge_index_from_sparse`).
    """
    total = len(graphs)
    store = _collated(graphs)
    keyed: Optional[Tuple[bool, int]] = None  # (whether the graphs with edges have the key; the first such)
    count = -(-total // batch_size)
    for i in range(count):
        start, stop = total * i // count, total * (i + 1) // count
        if store is not None:
            union = _slice_store(graphs, store, start, stop, edge_labels, edge_order_attr)
        else:
            with gc_paused():  # (the graphs and their shapes are gone before the batch is used)
                union = concat_graphs([graphs[i] for i in range(start, stop)], start, edge_labels,
                                      edge_order_attr, sparse_flow)
        if edge_order_attr and union.edge_index.size(1):
            first = start + int(union.batch[union.edge_index[0, 0]])  # (its first graph with edges)
            has = union.edge_order is not None
            if keyed is None:
                keyed = (has, first)
            elif keyed[0] != has:
                raise ValueError(f"graph {first} has {'an' if has else 'no'} '{edge_order_attr}' but graph "
                                 f"{keyed[1]} has {'none' if has else 'one'}; give every graph with edges a "
                                 f"'{edge_order_attr}' or none")
        yield union


_GC_LOCK = threading.Lock()
#: How many threads are inside :func:`gc_paused`, and whether the collector was on when the first came in.
_GC_PAUSE = {"depth": 0, "was_enabled": False}


@contextmanager
def gc_paused() -> Generator[None, None, None]:
    """Python's cyclic garbage collector off inside the block (as it was before, afterwards).

    Joining graphs one by one makes a few short-lived tuples per graph (shapes,
    strides); thousands alive at once start collections that scan every
    object of the process, and move them towards the old generation, whose
    full scans then come sooner: a list of NCI1's 4,110 graphs spent on
    average 8 ms per call in full collections (a third of the call) in a
    process holding about 430,000 objects. Reference counting still frees
    everything the block drops. Nested and concurrent uses (threads) keep the
    state of the first one in.
    """
    with _GC_LOCK:
        if _GC_PAUSE["depth"] == 0:
            _GC_PAUSE["was_enabled"] = gc.isenabled()
            gc.disable()
        _GC_PAUSE["depth"] += 1
    try:
        yield
    finally:
        with _GC_LOCK:
            _GC_PAUSE["depth"] -= 1
            if _GC_PAUSE["depth"] == 0 and _GC_PAUSE["was_enabled"]:
                gc.enable()


def _slice_store(dataset, store, start, stop, edge_labels, edge_order_attr) -> GraphBatch:
    data, slices = store
    indices = dataset.indices()
    xs, es = slices["x"], slices["edge_index"]
    nodes: Union[slice, Tensor]
    edges: Union[slice, Tensor]
    if isinstance(indices, range) and indices.step == 1:  # consecutive graphs: plain slices
        g0 = indices.start + start
        x_bounds, e_bounds = xs[g0 : g0 + stop - start + 1], es[g0 : g0 + stop - start + 1]
        n_sizes, e_sizes = x_bounds.diff(), e_bounds.diff()
        last = stop - start
        x_lo, x_hi, e_lo, e_hi = torch.cat([x_bounds[::last], e_bounds[::last]]).tolist()
        nodes, edges = slice(x_lo, x_hi), slice(e_lo, e_hi)
        offsets: Optional[Tensor] = x_bounds[:-1] - x_lo
        num_nodes: Optional[int] = x_hi - x_lo
    else:
        idx = torch.as_tensor(indices[start:stop], dtype=torch.long, device=xs.device)  # (not the default's)
        n_sizes = xs[idx + 1] - xs[idx]
        e_sizes = es[idx + 1] - es[idx]
        nodes = _ranges(xs[idx], n_sizes)
        edges = _ranges(es[idx], e_sizes)
        offsets, num_nodes = None, None
    if bool((n_sizes == 0).any()):
        bad = start + int((n_sizes == 0).nonzero()[0])
        raise ValueError(f"graph {bad} is empty (no nodes); KONG needs at least one node")
    edge_index = union_edges(plain_tensor(data.edge_index)[:, edges], n_sizes, e_sizes, start, offsets)
    x = data.x[nodes]
    batch = torch.repeat_interleave(n_sizes.to(x.device), output_size=num_nodes)  # (graph g n_sizes[g] times)
    attr = None
    if edge_labels and "edge_attr" in slices and data.edge_attr is not None:
        _same_slices(slices, "edge_attr", dataset, start, stop)
        attr = data.edge_attr[edges]
    order = None
    if edge_order_attr and edge_order_attr in slices:
        _same_slices(slices, edge_order_attr, dataset, start, stop)
        order = data[edge_order_attr][edges]
    return GraphBatch(x, edge_index, attr, order, batch, start, n_sizes.numel())


def _same_slices(slices: Any, key: str, dataset: Any, start: int, stop: int) -> None:
    """Graphs :obj:`start..stop-1` of the storage have their :obj:`key` rows where their edges are.

    Only the batch's part of the slices is read (the whole would make a
    pass over the data set quadratic in its size).
    """
    mine, edges = slices[key], slices["edge_index"]
    if mine.shape != edges.shape:
        raise ValueError(f"the data set's storage slices '{key}' for {mine.numel() - 1} graphs and "
                         f"'edge_index' for {edges.numel() - 1}")
    indices = dataset.indices()
    if isinstance(indices, range) and indices.step == 1:
        window = slice(indices.start + start, indices.start + stop + 1)
        if torch.equal(mine[window], edges[window]):
            return
    idx = torch.as_tensor(indices[start:stop], dtype=torch.long, device=mine.device)
    bad = torch.nonzero((mine[idx] != edges[idx]) | (mine[idx + 1] != edges[idx + 1])).view(-1)
    if bad.numel():
        g, i = int(bad[0]), int(idx[bad[0]])
        raise ValueError(f"graph {start + g}: '{key}' is rows {int(mine[i])}:{int(mine[i + 1])} of the data "
                         f"set's storage, its edges {int(edges[i])}:{int(edges[i + 1])} (one row per edge)")


def edges_checked(gb: GraphBatch) -> bool:
    """Whether every edge index of a union of :func:`iter_graph_batches` is known to be a row of its :obj:`x`.

    Each graph's edges were checked against its node count; so the union's
    are against the union's, if :obj:`x` holds those nodes.
    """
    return gb.x.size(0) == gb.batch.numel()


def split_batch(gb: GraphBatch) -> Tuple[GraphBatch, GraphBatch]:
    """The first and second half (by graphs) of a union of at least two graphs."""
    if gb.num_graphs < 2:
        raise ValueError("a batch of one graph cannot be split")
    half = gb.num_graphs // 2
    first = gb.batch < half
    node_start = int(first.sum())
    edge_first = first.index_select(0, gb.edge_index[0])
    parts = []
    for keep_nodes, keep_edges, shift, g0, count in (
        (first, edge_first, 0, 0, half),
        (~first, ~edge_first, node_start, half, gb.num_graphs - half),
    ):
        e = keep_edges.nonzero().view(-1)
        parts.append(GraphBatch(
            gb.x[keep_nodes], gb.edge_index.index_select(1, e) - shift,
            None if gb.edge_attr is None else gb.edge_attr.index_select(0, e),
            None if gb.edge_order is None else gb.edge_order.index_select(0, e),
            gb.batch[keep_nodes] - g0, gb.start + g0, count,
        ))
    return parts[0], parts[1]



def count_nodes(graphs: Any) -> int:
    """The total number of nodes (rows of :obj:`x`) of a sequence of graphs."""
    store = _collated(graphs)
    if store is not None:
        sizes = store[1]["x"]
        idx = torch.as_tensor(graphs.indices(), dtype=torch.long)
        return int((sizes[idx + 1] - sizes[idx]).sum())
    total = 0
    for i in range(len(graphs)):
        x = attributes(graphs[i]).get("x")
        if x is None:
            raise no_labels(graphs[i], i)
        bad = x_error(x, i)  # (as the features' own check says it)
        if bad is not None:
            raise bad
        total += x.size(0)
    return total


def compact_graphs(graphs: Any) -> List[Any]:
    r"""The graphs as a list whose tensors own just their own memory: small when pickled.

    A graph taken from a PyG data set (:obj:`dataset[i]`, or a list of them)
    holds *views* into the data set's collated storage, and pickling a view
    pickles the whole storage: 188 MUTAG graphs pickle to about 60 MB (the
    data set itself too, once it has cached its graphs), and
    :class:`~sklearn.model_selection.GridSearchCV` with :obj:`n_jobs > 1`
    sends that to every worker task. The compact list pickles to about
    0.5 MB and gives the same features.

    Args:
        graphs (Sequence[Data] or Dataset): The graphs.

    Returns:
        List[Data]: Shallow copies whose tensors are copies of the viewed rows.

    Example:
        >>> from sklearn.model_selection import GridSearchCV
        >>> from sklearn.pipeline import make_pipeline
        >>> from sklearn.svm import LinearSVC
        >>> from kong_pyg import KongVectorizer, compact_graphs
        >>> from kong_pyg.datasets import load_tu
        >>> ds = load_tu("MUTAG")  # (bundled)
        >>> X, y = compact_graphs(ds), ds.y.numpy()
        >>> search = GridSearchCV(make_pipeline(KongVectorizer(k=2), LinearSVC()),
        ...                       {"linearsvc__C": [0.1, 1]}, n_jobs=2).fit(X, y)
    """
    graphs = as_graph_sequence(graphs)
    out = []
    for i in range(len(graphs)):
        g = graphs[i]
        if not hasattr(g, "edge_index"):
            raise TypeError(f"graph {i} is not a torch_geometric.data.Data (got {type(g).__name__})")
        d = copy.copy(g)
        attrs = attributes(d)
        for key, value in list(attrs.items()) if isinstance(attrs, dict) else []:
            if isinstance(value, Tensor) and value.layout == torch.strided \
                    and value.untyped_storage().nbytes() > value.nbytes:  # (sparse ones: their own arrays)
                d[key] = value.clone()
        out.append(d)
    return out


__all__ = [
    "GraphBatch", "as_graph_sequence", "compact_graphs", "count_nodes", "edges_checked", "iter_graph_batches",
    "split_batch",
]
