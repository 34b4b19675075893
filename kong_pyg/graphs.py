r"""Sequences of PyG graphs (lists of :class:`~torch_geometric.data.Data`, datasets) as disjoint unions.

Front-ends and baselines that work on many graphs at once read them through
:func:`iter_graph_batches`: consecutive graphs are concatenated into one
disjoint union (node indices shifted), straight from an in-memory dataset's
collated storage when it has one (no per-graph Python work).
"""
import copy
import gc
import operator
import threading
from contextlib import contextmanager
from typing import Any, Generator, Iterator, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np
import torch
from torch import Tensor

from .inputs import BAD_EDGE_INDEX, bad_edge_dtype, labels, plain_tensor
from .kgrams import exclusive_cumsum


class GraphBatch(NamedTuple):
    """A disjoint union of consecutive graphs of the input.

    Attributes:
        x, edge_index, edge_attr, edge_order: The union's tensors.
        batch (torch.Tensor): :obj:`[N]` graph of each node (0-based here).
        start (int): The index of the first graph in the input.
        num_graphs (int): How many graphs.
    """

    x: Tensor
    edge_index: Tensor
    edge_attr: Optional[Tensor]
    edge_order: Optional[Tensor]
    batch: Tensor
    start: int
    num_graphs: int


def _ranges(starts: Tensor, sizes: Tensor) -> Tensor:
    """Concatenated :obj:`arange(start, start + size)` for every pair."""
    total = int(sizes.sum())
    owner = torch.repeat_interleave(sizes, output_size=total)  # (i repeated sizes[i] times)
    return starts[owner] + torch.arange(total) - exclusive_cumsum(sizes)[owner]


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

    if isinstance(graphs, Batch):
        graphs = graphs.to_data_list()
    elif isinstance(graphs, Data):
        graphs = [graphs]
    if isinstance(graphs, (str, bytes, dict)) or not hasattr(graphs, "__getitem__"):
        raise TypeError(
            f"'{name}' must be a sequence of Data objects, a Batch or a PyG dataset "
            f"(got {type(graphs).__name__})"
        )
    try:
        total = len(graphs)
    except TypeError as err:
        raise TypeError(f"'{name}' must be a sequence of Data objects, a Batch or a PyG dataset") from err
    if total == 0:
        raise ValueError(f"'{name}' is empty")
    return graphs


def iter_graph_batches(
    graphs,
    batch_size: int,
    edge_labels: bool = True,
    edge_order_attr: Optional[str] = "edge_order",
    sparse_flow: Optional[str] = None,
) -> Iterator[GraphBatch]:
    """Yield disjoint unions of :obj:`batch_size` consecutive graphs.

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
    for start in range(0, total, batch_size):
        stop = min(start + batch_size, total)
        if store is not None:
            union = _slice_store(graphs, store, start, stop, edge_labels, edge_order_attr)
        else:
            with gc_paused():  # (the graphs and their shapes are gone before the batch is used)
                union = _concat([graphs[i] for i in range(start, stop)], start, edge_labels, edge_order_attr,
                                sparse_flow)
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
        idx = torch.as_tensor(indices[start:stop], dtype=torch.long)
        n_sizes = xs[idx + 1] - xs[idx]
        e_sizes = es[idx + 1] - es[idx]
        nodes = _ranges(xs[idx], n_sizes)
        edges = _ranges(es[idx], e_sizes)
        offsets, num_nodes = None, None
    if bool((n_sizes == 0).any()):
        bad = start + int((n_sizes == 0).nonzero()[0])
        raise ValueError(f"graph {bad} is empty (no nodes); KONG needs at least one node")
    edge_index = _union_edges(plain_tensor(data.edge_index)[:, edges], n_sizes, e_sizes, start, offsets)
    batch = torch.repeat_interleave(n_sizes, output_size=num_nodes)  # (graph g n_sizes[g] times)
    attr = None
    if edge_labels and "edge_attr" in slices and data.edge_attr is not None:
        _same_slices(slices, "edge_attr", dataset, start, stop)
        attr = data.edge_attr[edges]
    order = None
    if edge_order_attr and edge_order_attr in slices:
        _same_slices(slices, edge_order_attr, dataset, start, stop)
        order = data[edge_order_attr][edges]
    return GraphBatch(data.x[nodes], edge_index, attr, order, batch, start, n_sizes.numel())


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
    idx = torch.as_tensor(indices[start:stop], dtype=torch.long)
    bad = torch.nonzero((mine[idx] != edges[idx]) | (mine[idx + 1] != edges[idx + 1])).view(-1)
    if bad.numel():
        g, i = int(bad[0]), int(idx[bad[0]])
        raise ValueError(f"graph {start + g}: '{key}' is rows {int(mine[i])}:{int(mine[i + 1])} of the data "
                         f"set's storage, its edges {int(edges[i])}:{int(edges[i + 1])} (one row per edge)")


def _union_edges(local: Tensor, n_sizes: Tensor, e_sizes: Tensor, start: int,
                 offsets: Optional[Tensor] = None) -> Tensor:
    """Shift each graph's local :obj:`edge_index` by its node offset, checking it first.

    :obj:`offsets`, if known, are the first node of each graph in the union
    (the exclusive cumulative sum of :obj:`n_sizes`).
    """
    if bad_edge_dtype(local.dtype):
        raise TypeError(f"{BAD_EDGE_INDEX} (got {local.dtype})")
    dev = local.device
    if n_sizes.device != dev:
        n_sizes, e_sizes = n_sizes.to(dev), e_sizes.to(dev)
        offsets = None if offsets is None else offsets.to(dev)
    g_of_edge = torch.repeat_interleave(e_sizes, output_size=local.size(1))  # (graph g e_sizes[g] times)
    top = (n_sizes - 1).index_select(0, g_of_edge)
    # 0 <= local <= top iff neither local nor top - local is negative: one sign test, one sync
    if local.numel() and int((local | (top - local)).min()) < 0:
        bad = ((local < 0) | (local > top)).any(dim=0)
        g = int(g_of_edge[bad.nonzero()[0, 0]])
        raise ValueError(
            f"graph {start + g}: 'edge_index' holds node indices outside [0, {int(n_sizes[g])}) "
            "(an edge into another graph, or a negative index)"
        )
    if offsets is None:
        offsets = exclusive_cumsum(n_sizes)[:-1]
    return local + offsets.index_select(0, g_of_edge)


def _attributes(d: Any) -> Any:
    """A graph's attributes as a mapping (a ``Data``'s own dict: no ``getattr`` per key)."""
    mapping = getattr(getattr(d, "_store", None), "_mapping", None)
    return mapping if isinstance(mapping, dict) else _GetAttr(d)


def _no_labels(d: Any, i: int) -> Exception:
    """The error for graph :obj:`i` without :obj:`x`: not a graph at all, or a graph without labels."""
    if not hasattr(d, "edge_index"):
        return TypeError(f"graph {i} is a {type(d).__name__}, not a torch_geometric.data.Data")
    return ValueError(f"graph {i} has no 'x': KONG needs node labels (set data.x, for instance to node "
                      "degrees)")


class _GetAttr:
    """``getattr`` as a mapping (graphs that are not :class:`~torch_geometric.data.Data`)."""

    def __init__(self, obj: Any):
        self.obj = obj

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self.obj, key, default)


_DTYPE = operator.attrgetter("dtype")
_SHAPE = operator.attrgetter("shape")
_FIRST = operator.itemgetter(0)


def _cat(parts: List[Tensor], dim: int, shapes: Optional[List[Any]] = None) -> Tensor:
    """:func:`torch.cat`, or a view where the parts lie side by side in one storage.

    Graphs taken from a PyG dataset one by one are views into its collated
    storage, so their union is one more view (no copy). :obj:`shapes`, if
    known, are the parts' shapes.
    """
    first = parts[0]
    if len(parts) > 1 and isinstance(first, Tensor) and first.dim() > dim and first.layout == torch.strided:
        view = _side_by_side(parts, dim, shapes)
        if view is not None:
            return view
    return torch.cat(parts, dim=dim)


def _side_by_side(parts: List[Tensor], dim: int, shapes: Optional[List[Any]] = None) -> Optional[Tensor]:
    """The parts as one view, if each starts where the previous one ends with the same layout (or None).

    Checked in bulk (a few calls per part, no Python loop body).
    """
    first = parts[0]
    if not all(issubclass(t, Tensor) for t in set(map(type, parts))):
        return None
    stride = first.stride()
    if set(map(Tensor.stride, parts)) != {stride} or set(map(_DTYPE, parts)) != {first.dtype}:
        return None
    if shapes is None:
        shapes = list(map(_SHAPE, parts))
    others = [d for d in range(first.dim()) if d != dim]  # (same strides: the same number of dimensions)
    if others and len(set(map(operator.itemgetter(*others), shapes))) != 1:
        return None
    sizes = np.array(list(map(operator.itemgetter(dim), shapes)), dtype=np.int64)
    step = stride[dim] * first.element_size()
    ptrs = np.array(list(map(Tensor.data_ptr, parts)), dtype=np.int64)
    if step <= 0 or not np.array_equal(np.diff(ptrs), sizes[:-1] * step):
        return None
    if parts[-1].untyped_storage().data_ptr() != first.untyped_storage().data_ptr():
        return None
    new_shape = list(first.shape)
    new_shape[dim] = int(sizes.sum())
    return first.as_strided(new_shape, stride, first.storage_offset())


def _plain_graphs(xs: List[Any], eis: List[Any]) -> Optional[Tuple[List[Any], List[Any]]]:
    """The shapes of :obj:`xs` and :obj:`eis` if they are plain graphs, else None.

    Plain: every :obj:`x` a 1-D or 2-D tensor, every :obj:`edge_index` an
    integer ``[2, m]`` tensor. Checked in bulk; where this fails,
    :func:`_concat` looks graph by graph for the error to raise.
    """
    if set(map(type, xs)) != {Tensor} or set(map(type, eis)) != {Tensor}:
        return None
    x_shapes, e_shapes = list(map(_SHAPE, xs)), list(map(_SHAPE, eis))
    if not set(map(len, x_shapes)) <= {1, 2} or set(map(len, e_shapes)) != {2}:
        return None
    if set(map(operator.itemgetter(0), e_shapes)) != {2}:
        return None
    if any(map(bad_edge_dtype, set(map(_DTYPE, eis)))):
        return None
    return x_shapes, e_shapes


def _not_one_graph(chunk: Sequence[Any], start: int) -> None:
    """Refuse a :class:`~torch_geometric.data.Batch` or a dataset in place of one graph.

    (Both have an :obj:`x` and an :obj:`edge_index`: their graphs would be read as one.)
    """
    from torch_geometric.data import Batch, Dataset

    if not any(issubclass(kind, (Batch, Dataset)) for kind in set(map(type, chunk))):
        return  # (a few types: no per-graph isinstance in the usual case)
    for i, d in enumerate(chunk):  # (one graph in it is read right: list(DataLoader(ds, batch_size=1)))
        many = d.num_graphs if isinstance(d, Batch) else len(d) if isinstance(d, Dataset) else 1
        if many != 1:
            raise TypeError(f"graph {start + i} is a {type(d).__name__} of {many} graphs, not one graph: "
                            "pass the graphs themselves (a Batch's to_data_list(), or the dataset instead "
                            "of a list of its batches or slices)")


def _from_adjacency(maps: List[Any], xs: List[Any], eis: List[Any], start: int, flow: str,
                    edge_labels: bool, edge_order_attr: Optional[str]) -> List[Any]:
    """Edges read from :obj:`adj_t` for the graphs that have only that (where the order cannot matter)."""
    from .inputs import edge_index_from_sparse

    out = list(eis)
    for i, (a, x, e) in enumerate(zip(maps, xs, eis)):
        adj = a.get("adj_t")
        if e is not None or adj is None or not isinstance(x, Tensor):
            continue
        try:
            out[i] = edge_index_from_sparse(adj, x.size(0) if x.dim() else 0, flow,
                                            a.get("edge_attr") if edge_labels else None,
                                            a.get(edge_order_attr) if edge_order_attr else None)
        except ValueError as err:
            raise ValueError(f"graph {start + i}: {err}") from None
    return out


def _concat(chunk, start, edge_labels, edge_order_attr, sparse_flow: Optional[str] = None) -> GraphBatch:
    _not_one_graph(chunk, start)
    try:  # Data: their own dicts
        maps = [d._store._mapping for d in chunk]
        if set(map(type, maps)) != {dict}:
            raise AttributeError
    except AttributeError:
        maps = [_attributes(d) for d in chunk]
    xs = [a.get("x") for a in maps]
    eis = [a.get("edge_index") for a in maps]
    # no edges, as KongFeatures and PyG read it (a sparse 'adj_t' instead is refused below); (not
    # 'None in eis': that compares every tensor with None, one torch call per graph)
    if any(e is None for e in eis):
        if sparse_flow is not None:
            eis = _from_adjacency(maps, xs, eis, start, sparse_flow, edge_labels, edge_order_attr)
        eis = [_no_edges(x) if e is None and a.get("adj_t") is None else e for a, x, e in zip(maps, xs, eis)]
    shapes = _plain_graphs(xs, eis)
    for i, (x, ei) in enumerate([] if shapes is not None else zip(xs, eis)):
        if x is None:
            raise _no_labels(chunk[i], start + i)
        if not isinstance(x, Tensor):
            raise TypeError(f"graph {start + i}: 'x' must be a tensor of node labels (got {_shape_of(x)})")
        if x.dim() not in (1, 2):
            raise ValueError(f"graph {start + i}: 'x' must be a tensor of node labels, [num_nodes] "
                             f"integers or [num_nodes, C] one-hot rows (got {_shape_of(x)})")
        if ei is None and maps[i].get("adj_t") is not None:
            raise TypeError(f"graph {start + i} has a sparse adjacency 'adj_t' and no 'edge_index': a sparse "
                            "adjacency stores neighbors sorted by id and so has no neighbor order; give "
                            "'edge_index' [2, num_edges] in neighbor order ('adj_t' is accepted with k=1)")
        if not isinstance(ei, Tensor) or ei.dim() != 2 or ei.size(0) != 2:
            raise ValueError(f"graph {start + i}: 'edge_index' must be a [2, num_edges] tensor")
        if bad_edge_dtype(ei.dtype):  # before cat promotes it (or fails to)
            raise TypeError(f"graph {start + i}: {BAD_EDGE_INDEX} (got {ei.dtype})")
    if shapes is None:  # (tensors of other types, checked above: PyG's EdgeIndex and Index as plain ones)
        xs, eis = [plain_tensor(x) for x in xs], [plain_tensor(ei) for ei in eis]
        shapes = list(map(_SHAPE, xs)), list(map(_SHAPE, eis))
    x_shapes, e_shapes = shapes
    x_dtypes = set(map(_DTYPE, xs))
    if len({d.is_floating_point for d in x_dtypes}) > 1 and len(set(map(len, x_shapes))) == 1:
        # joined, integer rows would turn float: float rows (which must be one-hot, as alone) become
        # integers first, with the same labels (where layouts differ, _cat_layout says so)
        xs = [_integer_rows(x, start + i) if x.is_floating_point() else x for i, x in enumerate(xs)]
    nodes = list(map(operator.itemgetter(0), x_shapes))
    if 0 in nodes:
        raise ValueError(f"graph {start + nodes.index(0)} is empty (no nodes); KONG needs at least one node")
    # (through NumPy: torch.tensor reads a list of ints about 20x slower)
    n_sizes = torch.from_numpy(np.array(nodes, dtype=np.int64))
    e_sizes = torch.from_numpy(np.array(list(map(operator.itemgetter(1), e_shapes)), dtype=np.int64))
    edge_index = _union_edges(_cat(eis, 1, e_shapes), n_sizes, e_sizes, start)

    def _all_or_none(key: Optional[str]) -> Optional[Tensor]:
        if not key:
            return None
        values = [a.get(key) for a in maps]
        present = [v is not None for v in values]
        if not any(present):
            return None
        if not all(present):
            # a graph without edges has nothing to label: an empty one like the others' (else an error)
            first = next((i for i, p in enumerate(present) if not p and e_counts[i]), None)
            if first is not None:
                raise ValueError(f"graph {start + first} has no '{key}' but others have one")
            like = values[present.index(True)]
            if isinstance(like, Tensor):
                empty = like.new_zeros((0,) + tuple(like.shape[1:]))
                values = [empty if v is None else v for v in values]
        _per_edge(values, key, start, e_counts)
        if 0 in e_counts and any(e_counts):  # a graph without edges has no labels to hold: its (empty)
            like = values[next(i for i, m in enumerate(e_counts) if m)]  # tensor takes the others' layout
            empty = like.new_zeros((0,) + tuple(like.shape[1:]))
            values = [empty if m == 0 else v for v, m in zip(values, e_counts)]
        if key == edge_order_attr:  # a sort key: a mix of dtypes would promote (int64 keys to float32)
            kinds = [v.dtype for v in values]
            if any(d != kinds[0] for d in kinds):
                bad = next(i for i, d in enumerate(kinds) if d != kinds[0])
                raise TypeError(f"graph {start + bad}: '{key}' is {kinds[bad]}, but graph {start} has "
                                f"{kinds[0]}: give every graph's sort key one dtype")
        return _cat_layout(values, key, start)

    e_counts = list(map(operator.itemgetter(1), e_shapes))
    batch = torch.repeat_interleave(n_sizes, output_size=sum(nodes))
    return GraphBatch(
        _cat_layout(xs, "x", start, x_shapes), edge_index, _all_or_none("edge_attr" if edge_labels else None),
        _all_or_none(edge_order_attr), batch, start, len(chunk),
    )


def _integer_rows(x: Tensor, g: int) -> Tensor:
    """Graph :obj:`g`'s floating-point :obj:`x` as integers, checked as one graph alone would be."""
    try:
        labels(x, "x", x.size(0))
    except (TypeError, ValueError) as err:
        raise type(err)(f"graph {g}: {err}") from None
    return x.long()


def _no_edges(x: Any) -> Tensor:
    """An empty ``edge_index`` (on :obj:`x`'s device where it is a tensor)."""
    return torch.empty(2, 0, dtype=torch.long, device=x.device if isinstance(x, Tensor) else None)


def _per_edge(values: List[Any], key: str, start: int, e_counts: List[int]) -> None:
    """Every graph's :obj:`key` a tensor with one row per edge of that graph (checked in bulk).

    Without it, rows too many in one graph and too few in the next would pass
    the joined check and shift labels (or sort keys) into the next graph.
    """
    if not all(isinstance(v, Tensor) for v in values):
        i = next(i for i, v in enumerate(values) if not isinstance(v, Tensor))
        raise TypeError(f"graph {start + i}: '{key}' must be a tensor (got {_shape_of(values[i])})")
    try:
        rows = list(map(_FIRST, map(_SHAPE, values)))
    except IndexError:  # (a scalar)
        rows = [v.size(0) if v.dim() else -1 for v in values]
    if rows != e_counts:
        i = next(i for i, (r, m) in enumerate(zip(rows, e_counts)) if r != m)
        got = f"has {rows[i]} rows" if rows[i] >= 0 else "is a scalar"
        raise ValueError(f"graph {start + i}: '{key}' {got}, expected {e_counts[i]} "
                         "(one per edge of the graph)")


def _shape_of(value: Any) -> str:
    """A value's type and shape, for messages."""
    return f"a {type(value).__name__} of shape {list(value.shape)}" if isinstance(value, Tensor) else \
        f"a {type(value).__name__}"


def _cat_layout(values: List[Any], key: str, start: int, shapes: Optional[List[Any]] = None) -> Tensor:
    """The graphs' :obj:`key` tensors stacked; where they do not fit together, an error naming a graph."""
    try:
        return _cat(values, 0, shapes)
    except (RuntimeError, TypeError):
        _same_layout(values, key, start)
        raise


def _same_layout(values: List[Any], key: str, start: int) -> None:
    """Every graph's :obj:`key` a tensor with the first one's dimensions beyond the first (one layout)."""
    first = values[0]
    for i, v in enumerate(values):
        if not isinstance(v, Tensor) or v.dim() != first.dim() or v.shape[1:] != first.shape[1:]:
            raise ValueError(f"graph {start + i}: '{key}' is {_shape_of(v)}, but graph {start} has "
                             f"{_shape_of(first)}: every graph needs the same layout (integer labels, "
                             "or one-hot rows of one width)")


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
        x = _attributes(graphs[i]).get("x")
        if x is None:
            raise _no_labels(graphs[i], i)
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
        attrs = _attributes(d)
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
