r"""Graphs joined into one disjoint union (:class:`GraphBatch`), checked graph by graph.

:func:`concat_graphs` joins a chunk of a list of graphs (``Data`` objects, or
anything with their attributes): node indices shifted by :func:`union_edges`,
labels, edge labels and order keys concatenated, every graph's tensors checked
in bulk first, and an error naming the graph where one is wrong. Graphs that
are views into one storage (taken from a dataset one by one) join as one more
view, without a copy, except row parts small enough that copying them costs
less than the checks (:func:`_cat`). :mod:`kong_pyg.graphs` iterates
collections with it.
"""
import math
import operator
from typing import Any, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
import torch
from torch import Tensor

from .inputs import (
    BAD_EDGE_INDEX,
    NARROW_KERNELS,
    bad_edge_dtype,
    check_graph_size,
    is_dense,
    labels,
    not_dense,
    plain_tensor,
    top_beyond_int64,
)
from .kgrams import exclusive_cumsum


class GraphBatch(NamedTuple):
    """A disjoint union of consecutive graphs of the input.

    Attributes:
        x, edge_index, edge_attr, edge_order: The union's tensors.
        batch (torch.Tensor): :obj:`[N]` graph of each node (0-based here), on :obj:`x`'s device.
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


def union_edges(local: Tensor, n_sizes: Tensor, e_sizes: Tensor, start: int,
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


def attributes(d: Any) -> Any:
    """A graph's attributes as a mapping (a ``Data``'s own dict: no ``getattr`` per key)."""
    mapping = getattr(getattr(d, "_store", None), "_mapping", None)
    return mapping if isinstance(mapping, dict) else _GetAttr(d)


def not_a_graph(d: Any, i: int) -> Optional[Exception]:
    """The error for item :obj:`i` of a list of graphs that is no graph (no :obj:`x`, no edges), or None."""
    if hasattr(d, "x") or hasattr(d, "edge_index"):
        return None
    return TypeError(f"graph {i} is a {type(d).__name__}, not a torch_geometric.data.Data")


def x_error(x: Any, i: int) -> Optional[Exception]:
    """The error for graph :obj:`i`'s :obj:`x` if it is no tensor of one or two dimensions, or None."""
    if not isinstance(x, Tensor):
        return TypeError(f"graph {i}: 'x' must be a tensor of node labels (got {shape_of(x)})")
    if x.dim() not in (1, 2):
        return ValueError(f"graph {i}: 'x' must be a tensor of node labels, [num_nodes] integers or "
                          f"[num_nodes, C] one-hot rows (got {shape_of(x)})")
    return None


def no_labels(d: Any, i: int) -> Exception:
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
_DIM = operator.methodcaller("dim")
#: Joined along rows, parts of fewer bytes than this on average are copied (:func:`torch.cat`), not viewed,
#: if they hold at most :obj:`COPY_MAX_BYTES` in all (more: a fresh allocation's page faults cost more).
VIEW_MIN_BYTES = 8192
COPY_MAX_BYTES = 1 << 20


def _cat(parts: List[Tensor], dim: int, shapes: Optional[List[Any]] = None) -> Tensor:
    """:func:`torch.cat`, or a view where the parts lie side by side in one storage.

    Graphs taken from a PyG dataset one by one are views into its collated
    storage, so their union is one more view (no copy); along rows, parts of
    fewer than :data:`VIEW_MIN_BYTES` on average (and :data:`COPY_MAX_BYTES`
    in all) are copied instead, which costs less than checking them for a
    view. :obj:`shapes`, if known, are the parts' shapes.
    """
    first = parts[0]
    if len(parts) > 1 and isinstance(first, Tensor) and first.dim() > dim and first.layout == torch.strided:
        if dim == 0:  # rows: a copy of small parts costs less than the checks of a view (0.5 us a part)
            if shapes is None:
                shapes = list(map(_SHAPE, parts))
            try:
                size = sum(map(_FIRST, shapes)) * math.prod(first.shape[1:]) * first.element_size()
            except (IndexError, TypeError):  # (a scalar among them: torch.cat's error, then its name)
                size = 0
            if size < VIEW_MIN_BYTES * len(parts) and size <= COPY_MAX_BYTES:
                return torch.cat(parts)
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
    try:
        strides = set(map(Tensor.stride, parts))
    except RuntimeError:  # (a sparse part has no strides: torch.cat, then the error naming it)
        return None
    if strides != {stride} or set(map(_DTYPE, parts)) != {first.dtype}:
        return None
    if first.is_floating_point() and len(set(map(Tensor.is_neg, parts))) > 1:
        return None  # (a view of them all would read every part with the first one's sign bit; the public
        # API makes negative views of real tensors only from complex ones, .conj().imag, which are float)
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
    :func:`concat_graphs` looks graph by graph for the error to raise.
    """
    if set(map(type, xs)) != {Tensor} or set(map(type, eis)) != {Tensor}:
        return None
    try:
        x_shapes, e_shapes = list(map(_SHAPE, xs)), list(map(_SHAPE, eis))
    except RuntimeError:  # (a nested tensor has no shape; refused by name graph by graph)
        return None
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


def concat_graphs(chunk: Sequence[Any], start: int, edge_labels: bool, edge_order_attr: Optional[str],
                  sparse_flow: Optional[str] = None) -> GraphBatch:
    """Graphs :obj:`chunk` (graphs :obj:`start`, ... of the input) as one checked disjoint union.

    Edge labels are read where :obj:`edge_labels`, the order key :obj:`edge_order_attr` where
    given; with :obj:`sparse_flow`, a graph with only a sparse ``adj_t`` gets its edges from it (in
    that flow: where the order cannot matter).
    """
    _not_one_graph(chunk, start)
    try:  # Data: their own dicts
        maps = [d._store._mapping for d in chunk]
        if set(map(type, maps)) != {dict}:
            raise AttributeError
    except AttributeError:
        maps = [attributes(d) for d in chunk]
    xs = [a.get("x") for a in maps]
    eis = [a.get("edge_index") for a in maps]
    # no edges, as KongFeatures and PyG read it (a sparse 'adj_t' instead is refused below); (not
    # 'None in eis': that compares every tensor with None, one torch call per graph)
    if any(e is None for e in eis):
        if sparse_flow is not None:
            eis = _from_adjacency(maps, xs, eis, start, sparse_flow, edge_labels, edge_order_attr)
        eis = [_no_edges(x) if e is None and a.get("adj_t") is None else e for a, x, e in zip(maps, xs, eis)]
    shapes = _plain_graphs(xs, eis)
    if shapes is not None:  # (before the union copies them)
        where = f"graphs {start}..{start + len(chunk) - 1}" if len(chunk) > 1 else f"graph {start}"
        check_graph_size(sum(map(_FIRST, shapes[0])), sum(map(operator.itemgetter(1), shapes[1])), what=where)
    for i, (x, ei) in enumerate([] if shapes is not None else zip(xs, eis)):
        if x is None:
            raise no_labels(chunk[i], start + i)
        for name, t in (("x", x), ("edge_index", ei)):
            if isinstance(t, Tensor) and t.is_nested:
                raise TypeError(f"graph {start + i}: {not_dense(name, t)}")
        bad_x = x_error(x, start + i)
        if bad_x is not None:
            raise bad_x
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
    nodes = list(map(operator.itemgetter(0), x_shapes))
    if 0 in nodes:
        raise ValueError(f"graph {start + nodes.index(0)} is empty (no nodes); KONG needs at least one node")
    if _read_alone(xs, x_shapes):  # (joined, they would be read in one dtype: another label rule)
        xs = _graph_labels(xs, "x", start)
        x_shapes = list(map(_SHAPE, xs))
    # (through NumPy: torch.tensor reads a list of ints about 20x slower)
    n_sizes = torch.from_numpy(np.array(nodes, dtype=np.int64))
    e_sizes = torch.from_numpy(np.array(list(map(operator.itemgetter(1), e_shapes)), dtype=np.int64))
    edge_index = union_edges(_cat_layout(eis, "edge_index", start, e_shapes, dim=1, labels_of=False), n_sizes,
                             e_sizes, start)

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
        if key != edge_order_attr and _read_alone(values):
            values = _graph_labels(values, key, start)
        if key == edge_order_attr:  # a sort key: torch.cat would promote a mix (int64 keys to float32)
            values = _common_keys(values, key, start)
            if len(set(map(_DIM, values))) > 1:  # [m] keys beside [m, 1] columns: one key per edge in both
                values = [v.reshape(-1) if v.dim() == 2 and v.size(1) == 1 else v for v in values]
        return _cat_layout(values, key, start, labels_of=key != edge_order_attr)

    e_counts = list(map(operator.itemgetter(1), e_shapes))
    x = _cat_layout(xs, "x", start, x_shapes)
    if x.device != edge_index.device:
        last = start + len(chunk) - 1
        raise ValueError(f"graphs {start}..{last}: 'x' is on {x.device} but 'edge_index' is on "
                         f"{edge_index.device}: move every graph to one device")
    batch = torch.repeat_interleave(n_sizes.to(x.device), output_size=sum(nodes))  # (where the graphs are)
    return GraphBatch(x, edge_index, _all_or_none("edge_attr" if edge_labels else None),
                      _all_or_none(edge_order_attr), batch, start, len(chunk))


#: Sort-key dtypes that join with others: integers widen to ``int64``, floats to ``float64`` exactly
#: (float8 keys are read as ``float32``, as one graph's are)
_INT_KEYS = tuple(getattr(torch, n) for n in ("uint8", "int8", "int16", "int32", "int64", "uint16", "uint32",
                                                "uint64") if hasattr(torch, n))
_FLOAT_KEYS = tuple(getattr(torch, n) for n in ("float16", "bfloat16", "float32", "float64", "float8_e4m3fn",
                                                  "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz")
                    if hasattr(torch, n))
#: Integers up to this size are exact in ``float64``
_EXACT_IN_DOUBLE = 2**53


def _common_keys(values: List[Tensor], key: str, start: int) -> List[Tensor]:
    """Per-edge sort keys of the graphs of a batch in one dtype that holds every value exactly.

    Keys are compared within a graph only (and, for the consistent order, equal values name one
    event in every graph: 5 and 5.0 alike), so graphs whose keys differ in dtype get the same
    order joined as alone: integers widen to ``int64``, a mix with floats to ``float64``. A mix
    that no dtype holds exactly (integers beyond 2^53 beside floats, unsigned ones beyond 2^63
    beside others) or of other dtypes is refused. Keys of graphs without edges hold nothing.
    """
    full = [v for v in values if v.numel()]
    kinds = [v.dtype for v in full]
    if all(d == kinds[0] for d in kinds):
        return values if not full else [v if v.numel() else v.to(kinds[0]) for v in values]
    if all(d in _INT_KEYS or d in _FLOAT_KEYS for d in kinds):
        floats = any(d in _FLOAT_KEYS for d in kinds)
        limit = _EXACT_IN_DOUBLE if floats else 2**63 - 1
        for i, v in enumerate(values):
            if v.dtype in _INT_KEYS and v.numel():
                top = top_beyond_int64(v)
                low, high = (int(t) for t in torch.aminmax(v.long())) if top is None else (0, top)
                if max(-low, high) > limit:
                    raise TypeError(f"graph {start + i}: '{key}' holds integers beyond "
                                    f"{'2^53' if floats else '2^63'} ({high if high > -low else low}), which "
                                    f"{'float64' if floats else 'int64'} (other graphs' keys are "
                                    f"{'floating-point' if floats else 'signed'}) cannot hold exactly: give "
                                    "every graph's sort key one dtype")
        if not floats:
            return [v.long() for v in values]
        return [(v.float() if v.is_floating_point() and v.element_size() == 1 else v).double()  # (float8)
                for v in values]
    bad = next(i for i, v in enumerate(values) if v.numel() and v.dtype != kinds[0])
    first = next(i for i, v in enumerate(values) if v.numel())
    raise TypeError(f"graph {start + bad}: '{key}' is {values[bad].dtype}, but graph {start + first} has "
                    f"{kinds[0]}: give every graph's sort key one dtype")


def _read_alone(values: List[Tensor], shapes: Optional[List[Any]] = None) -> bool:
    """Whether label tensors share one layout (their dimensions beyond the rows) but not one dtype.

    Joined, they would be promoted to one dtype and read by its rule, so they are read graph by
    graph first (:func:`_graph_labels`), except integers of other widths, which promote to
    ``int64`` with the same values. Labels in other layouts (integer labels in some graphs, one-hot
    rows in others, or rows of other widths) do not join at all: :func:`_cat_layout` reads them
    graph by graph then.
    """
    dtypes = set(map(_DTYPE, values))
    if len(dtypes) < 2 or not any(d.is_floating_point or d in NARROW_KERNELS for d in dtypes):
        return False
    return len({tuple(s[1:]) for s in (shapes if shapes is not None else map(_SHAPE, values))}) == 1


def _diagnose(values: List[Any], key: str, start: int) -> None:
    """Raise the error naming a graph whose :obj:`key` cannot be joined: sparse, without values, elsewhere.

    Called where joining failed or gave no dense tensor with values (no per-graph checks on the way
    that works).
    """
    tensors = [(i, v) for i, v in enumerate(values) if isinstance(v, Tensor)]
    for i, v in tensors:
        if not is_dense(v):
            raise TypeError(f"graph {start + i}: {not_dense(key, v)}")
        if v.device.type == "meta":
            raise ValueError(f"graph {start + i}: '{key}' is on the meta device (a shape without values)")
    for i, v in tensors:
        if v.device != tensors[0][1].device:
            first, where = start + tensors[0][0], tensors[0][1].device
            raise ValueError(f"graph {start + i}: '{key}' is on {v.device} but graph {first}'s is on "
                             f"{where}: move every graph to one device")


def _graph_labels(values: List[Tensor], key: str, start: int) -> List[Tensor]:
    """Every graph's labels :obj:`key` read alone (:func:`~kong_pyg.inputs.labels`: ``int64`` :obj:`[n]`).

    For graphs whose label tensors differ in dtype: joined, they would be
    promoted to one dtype and read by its rule (a float :obj:`[n, 1]` one-hot
    column is label 0, an integer one holds the labels themselves), so a
    graph's labels, and its row, would depend on the other graphs; some
    dtypes do not promote at all (``uint16``, ``float8``).
    """
    out = []
    for i, v in enumerate(values):
        try:
            out.append(labels(v, key, v.size(0) if v.dim() else -1))
        except (TypeError, ValueError) as err:
            raise type(err)(f"graph {start + i}: {err}") from None
    return out


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
        raise TypeError(f"graph {start + i}: '{key}' must be a tensor (got {shape_of(values[i])})")
    try:
        rows = list(map(_FIRST, map(_SHAPE, values)))
    except IndexError:  # (a scalar)
        rows = [v.size(0) if v.dim() else -1 for v in values]
    except RuntimeError:  # (a nested tensor has no shape)
        i = next(i for i, v in enumerate(values) if v.is_nested)
        raise TypeError(f"graph {start + i}: {not_dense(key, values[i])}") from None
    if rows != e_counts:
        i = next(i for i, (r, m) in enumerate(zip(rows, e_counts)) if r != m)
        got = f"has {rows[i]} rows" if rows[i] >= 0 else "is a scalar"
        raise ValueError(f"graph {start + i}: '{key}' {got}, expected {e_counts[i]} "
                         "(one per edge of the graph)")


def shape_of(value: Any) -> str:
    """A value's type and shape, for messages."""
    return f"a {type(value).__name__} of shape {list(value.shape)}" if isinstance(value, Tensor) else \
        f"a {type(value).__name__}"


def _cat_layout(values: List[Any], key: str, start: int, shapes: Optional[List[Any]] = None,
                dim: int = 0, labels_of: bool = True) -> Tensor:
    """The graphs' :obj:`key` tensors joined along :obj:`dim` (dense, with values), or an error naming one."""
    try:
        out = _cat(values, dim, shapes)
    except (RuntimeError, TypeError, NotImplementedError):
        _diagnose(values, key, start)
        if labels_of and all(isinstance(v, Tensor) and v.dim() in (1, 2) for v in values):
            # labels in other layouts: every graph's own symbols (a one-hot row is the index of its 1)
            return torch.cat(_graph_labels(values, key, start))
        _same_layout(values, key, start, labels_of, dim)
        raise
    if out.layout != torch.strided or out.device.type == "meta":
        _diagnose(values, key, start)
    return out


def _same_layout(values: List[Any], key: str, start: int, labels_of: bool, dim: int = 0) -> None:
    """Every graph's :obj:`key` a tensor with the first one's dimensions but :obj:`dim`, the joined one.

    Labels of one or two dimensions in other layouts are read graph by graph (:func:`_cat_layout`):
    for them only a tensor of other dimensions is an error.
    """
    odd = next((i for i, t in enumerate(values) if not isinstance(t, Tensor) or t.dim() not in (1, 2)), None)
    if labels_of and odd is not None:
        raise ValueError(f"graph {start + odd}: '{key}' is {shape_of(values[odd])}: labels are [rows] "
                         "integers or [rows, C] one-hot rows")
    first = values[0]

    def others(t: Tensor) -> list:
        return [n for d, n in enumerate(t.shape) if d != dim]

    for i, v in enumerate(values):
        if not isinstance(v, Tensor) or v.dim() != first.dim() or others(v) != others(first):
            raise ValueError(f"graph {start + i}: '{key}' is {shape_of(v)}, but graph {start} has "
                             f"{shape_of(first)}: every graph needs the same layout")


__all__ = ["GraphBatch", "attributes", "concat_graphs", "no_labels", "union_edges"]
