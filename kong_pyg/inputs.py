r"""Checking user input and turning labels into symbols.

**How labels become symbols.** A label tensor (node labels :obj:`x`, edge
labels :obj:`edge_attr`) is read row by row:

* a 1-D integer (or bool) tensor, or a 2-D one with a single column: each
  value is the label (non-negative, below :math:`2^{58}`);
* a 2-D tensor whose row is one-hot (exactly one 1, all other entries 0): the
  label is the index of the 1, so a one-hot :obj:`x` (for instance from
  :class:`~torch_geometric.datasets.TUDataset`, which stores float one-hot
  rows) gives the same symbols as its :obj:`argmax`;
* any other row of a 2-D *integer* tensor: the whole row is one symbol (equal
  rows are equal symbols), identified by a 58-bit fingerprint of the row.

Floating-point values that are not one-hot rows are rejected with a
:class:`TypeError`: KONG needs discrete labels (discretize continuous
attributes first). The rule is applied to every row on its own, so a row
gives the same symbol whatever batch it arrives in.
"""
from typing import Any, NamedTuple, Optional

import numpy as np
import torch
from torch import Tensor

from .hashing import MAX_LABEL, edge_code, node_code, row_fingerprint
from .memory import check_allocation
from .ordering import (  # noqa: F401  (wl_relabel: also importable from here, its former home)
    ORDERS_WITH_KEY,
    TIED,
    Neighborhoods,
    colour_ranks,
    ordered_neighborhoods,
    tie_rounds,
    wl_relabel,
)


def is_sparse_adjacency(adj: Any) -> bool:
    """Whether :obj:`adj` is a sparse adjacency matrix (``torch.sparse`` or ``SparseTensor``)."""
    if isinstance(adj, Tensor):
        return adj.layout != torch.strided
    return type(adj).__name__ == "SparseTensor" and hasattr(adj, "coo")


def edge_index_from_sparse(adj_t: Any, num_nodes: int, flow: str, edge_attr: Any = None,
                           edge_order: Any = None) -> Tensor:
    r"""The edges of a sparse adjacency :obj:`adj_t` as :obj:`[2, m]`.

    An entry of value :math:`w` is :math:`w` parallel edges. As in PyG,
    :obj:`adj_t[i, j] != 0` means node :math:`i` collects from node
    :math:`j` (:obj:`flow="source_to_target"` only). A sparse matrix
    holds each row's neighbors sorted by id: its edges have no neighbor
    order, which only :math:`k = 1` (label counts) may ignore. Edge labels
    or order keys given with it (:obj:`edge_attr`, :obj:`edge_order`, those
    that would be used) are refused: they need :obj:`edge_index`.
    """
    if edge_attr is not None or edge_order is not None:
        raise ValueError("edge labels and edge order keys need 'edge_index', not a sparse adjacency "
                         "('adj_t'): keep 'edge_index' (no ToSparseTensor), or leave the edge labels out "
                         "(edge_labels=False) and the order key (edge_order_attr=None)")
    if flow != "source_to_target":
        raise ValueError("a sparse adjacency ('adj_t') needs flow='source_to_target', as in PyG")
    shape = tuple(adj_t.shape) if isinstance(adj_t, Tensor) else tuple(adj_t.sparse_sizes())
    if len(shape) != 2 or shape[0] != num_nodes or shape[1] != num_nodes:
        raise ValueError(f"the sparse adjacency must be [{num_nodes}, {num_nodes}] (got {list(shape)})")
    if isinstance(adj_t, Tensor):
        coo = adj_t.to_sparse_coo().coalesce()
        row, col = coo.indices()
        value: Optional[Tensor] = coo.values()
    else:  # torch_sparse.SparseTensor
        row, col, value = adj_t.coo()
    if value is not None and value.numel():
        if value.is_complex() or value.dim() != 1:
            raise TypeError(f"the sparse adjacency must hold one real count per entry (got {value.dtype} "
                            f"values of shape {list(value.shape)})")
        if value.is_floating_point() and not bool((value == value.round()).all()):
            raise ValueError("the sparse adjacency holds non-integer values: entries count parallel edges "
                             "(transforms.ToSparseTensor puts a graph's 'edge_weight' into them: delete "
                             "edge_weight first, or give edge_index)")
        if int(value.min()) < 0:
            raise ValueError("the sparse adjacency holds negative values: entries count parallel edges")
        total = float(value.double().sum())  # (edges; in float64: int64 could wrap)
        check_allocation(int(min(total, 2.0**62)) * 32, f"the {total:,.0f} edges of the sparse adjacency "
                         "(an entry of value w is w parallel edges)", row.device, advice="a 0/1 adjacency")
        count = value.long()
        row, col = row.repeat_interleave(count), col.repeat_interleave(count)
    return torch.stack([col, row]).long()


def plain_tensor(t: Tensor) -> Tensor:
    """:obj:`t` as a plain :class:`torch.Tensor`, without a copy.

    PyG's :class:`~torch_geometric.EdgeIndex` and :class:`~torch_geometric.Index`
    (and other tensor subclasses) give their data: their own arithmetic
    refuses results that are not indices, which KONG computes.
    """
    if type(t) is Tensor:
        return t
    as_tensor = getattr(t, "as_tensor", None)
    try:
        out = as_tensor() if callable(as_tensor) else t.as_subclass(Tensor)
        return out if type(out) is Tensor else t.as_subclass(Tensor)
    except (RuntimeError, TypeError, NotImplementedError):  # (wrapper subclasses without their data)
        raise TypeError(f"a {type(t).__name__} cannot be read as a plain torch.Tensor: pass its data "
                        "(a torch.Tensor) instead") from None


#: The error for an edge_index of a dtype that cannot hold node indices.
BAD_EDGE_INDEX = "'edge_index' must hold integer node indices (torch.long, or int32, int16, int8, uint8)"
#: Integer dtypes torch cannot promote to int64 (concatenation with torch.long fails).
_UNPROMOTABLE = {getattr(torch, name) for name in ("uint16", "uint32", "uint64") if hasattr(torch, name)}


def top_beyond_int64(values: Any) -> Optional[int]:
    """The largest value of a uint64 tensor or array where it is 2^63 or more, else None.

    Such values wrap negative as ``int64``; other dtypes and empty inputs give None.
    """
    wide = isinstance(values, Tensor) and values.dtype == getattr(torch, "uint64", None)  # (PyTorch 2.3+)
    a = values.detach().cpu().numpy() if wide else values
    # (in either byte order: a big-endian '>u8' is not np.uint64, and wraps the same way)
    if not isinstance(a, np.ndarray) or a.dtype.kind != "u" or a.dtype.itemsize != 8 or not a.size:
        return None
    top = int(a.max())
    return top if top >= 2**63 else None


def bad_edge_dtype(dtype: torch.dtype) -> bool:
    """Whether :obj:`dtype` cannot hold node indices here (bool, float, complex, wide unsigned)."""
    return dtype == torch.bool or dtype.is_floating_point or dtype.is_complex or dtype in _UNPROMOTABLE


def check_edge_index(edge_index: Any, num_nodes: int, device: Optional[torch.device] = None,
                     check_range: bool = True) -> Tensor:
    """Check a :obj:`[2, num_edges]` index tensor against :obj:`num_nodes` (and :obj:`x`'s device).

    Without :obj:`check_range` the indices themselves are not read (the
    caller has checked them against :obj:`num_nodes` already). Returns a
    plain ``torch.long`` tensor (:func:`plain_tensor`: PyG's ``EdgeIndex``
    is accepted; narrower integer dtypes such as ``int32`` are widened).
    """
    if not isinstance(edge_index, Tensor):
        raise TypeError(
            "'edge_index' must be a [2, num_edges] torch.LongTensor; sparse "
            "adjacency matrices sort neighbors by id and lose the neighbor "
            f"order KONG reads (got {type(edge_index).__name__})"
        )
    edge_index = plain_tensor(edge_index)
    if edge_index.is_nested:
        raise TypeError(not_dense("edge_index", edge_index))
    if edge_index.is_sparse or edge_index.layout != torch.strided:
        raise TypeError(
            "'edge_index' must be a dense [2, num_edges] tensor: sparse "
            "adjacency sorts neighbors by id and loses the neighbor order "
            "(it is accepted only where the order cannot matter, k=1)"
        )
    if bad_edge_dtype(edge_index.dtype):
        raise TypeError(f"{BAD_EDGE_INDEX} (got {edge_index.dtype})")
    if edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise ValueError(
            f"'edge_index' must have shape [2, num_edges] (got {list(edge_index.shape)})"
        )
    if device is not None and edge_index.device != device:
        raise ValueError(f"'x' is on {device} but 'edge_index' is on {edge_index.device}")
    edge_index = edge_index.long()  # (no copy when it is)
    if check_range and edge_index.numel() > 0:
        low, high = torch.aminmax(edge_index)  # one pass, one sync
        lo, hi = int(low), int(high)
        if lo < 0:
            raise ValueError(f"'edge_index' holds a negative node index ({lo})")
        if hi >= num_nodes:
            raise ValueError(
                f"'edge_index' holds node index {hi} but there are only "
                f"{num_nodes} nodes"
            )
    return edge_index


def on_meta(name: str) -> ValueError:
    """The refusal of a tensor on the meta device (shapes, no values); :obj:`name` as the message shows it."""
    return ValueError(f"{name} is on the meta device (shapes only, no values)")


def is_dense(t: Tensor) -> bool:
    """Whether :obj:`t` is a plain strided tensor: not sparse, not nested (a nested tensor is strided)."""
    return t.layout == torch.strided and not t.is_nested


def not_dense(name: str, t: Tensor) -> str:
    """The message for a sparse, nested (or other non-strided) tensor argument :obj:`name`."""
    if t.is_nested:
        return (f"'{name}' must be a regular tensor, not a nested tensor: several graphs go in as a list of "
                "Data or a Batch (one tensor with a 'batch' vector), not as one nested tensor")
    return f"'{name}' must be a dense tensor (got {str(t.layout).replace('torch.', '')}): use .to_dense()"



def _not_one_hot(name: str, t: Tensor, bad: Tensor, nonzeros: Tensor) -> str:
    """The refusal of floating-point rows that are not one-hot, quoting the first such row."""
    row = int(bad.nonzero()[0])
    values = t[row][t[row] != 0].tolist()[:4]
    seen = f"non-zero values {values}" if values else "all zeros"
    msg = (f"'{name}' holds floating-point values that are not one-hot rows (row {row}: {seen}); KONG needs "
           "discrete labels (integers or one-hot): discretize them first (.long() where they are whole "
           "numbers, such as categorical columns stored as floats)")
    if name == "edge_attr":
        msg += ", or read the graphs without edge labels (edge_labels=False)"
    if name == "edge_attr" and int(nonzeros[row]) == 1 and values[0] >= 2 and float(values[0]).is_integer():
        msg += ("; one value above 1 is what adding up copies of a one-hot label gives, e.g. "
                "torch_geometric.transforms.ToUndirected() (reduce='add') on graphs that already store "
                "both directions of every edge: use ToUndirected(reduce='max'), or leave them as they are")
    return msg

def labels(t, name: str, length: int) -> Tensor:
    """Turn a label tensor into non-negative ``int64`` values (see module doc).

    Args:
        t (torch.Tensor): The labels, :obj:`[length]` or :obj:`[length, C]`.
        name (str): The argument's name, for error messages.
        length (int): The expected number of rows.
    """
    if not isinstance(t, Tensor):
        raise TypeError(f"'{name}' must be a torch.Tensor (got {type(t).__name__})")
    if not is_dense(t):
        raise TypeError(not_dense(name, t))
    if t.is_quantized:
        raise TypeError(f"'{name}' is a quantized tensor ({t.dtype}): pass its values (.dequantize() for "
                        "one-hot rows, .int_repr() for integer labels)")
    if t.dim() == 0 or t.dim() > 2:
        raise ValueError(
            f"'{name}' must have shape [{length}] or [{length}, C] (got {list(t.shape)})"
        )
    if t.size(0) != length:
        raise ValueError(f"'{name}' has {t.size(0)} rows, expected {length}")
    if t.dim() == 2 and t.size(1) == 1 and not t.is_floating_point():
        t = t.view(-1)  # (integer labels in a column; float ones are one-hot rows of one class, below)
    if t.is_complex():
        raise TypeError(f"'{name}' must hold integer labels (got {t.dtype})")
    if t.dim() == 2 and t.dtype in NARROW_KERNELS:  # (one-hot rows; few kernels for these dtypes)
        top = top_beyond_int64(t)
        if top is not None:
            raise ValueError(f"'{name}' holds labels >= 2^63 ({t.dtype} {top})")
        t = t.long() if not t.is_floating_point() else t.float()
    if t.dim() == 1:
        if t.is_floating_point() and t.numel():  # (an empty one holds no values: a graph without edges)
            raise TypeError(
                f"'{name}' holds floating-point values ({t.dtype}); KONG needs "
                "discrete labels: pass integer labels or one-hot rows"
            )
        top = top_beyond_int64(t)
        if top is not None:
            raise ValueError(f"'{name}' holds labels >= 2^63 (uint64 {top})")
        out = t.long()
    else:
        if t.size(1) == 0:
            raise ValueError(f"'{name}' has zero columns")
        # The dot product of a one-hot row with 0..C-1 is the index of its 1.
        arg = one_hot_index(t)
        top = t.gather(1, arg.view(-1, 1)).view(-1)
        # As many non-zeros as rows and a 1 at every row's index: every row has a non-zero there,
        # so no other. Exactly one-hot rows, in one pass over the entries (their count) and two
        # syncs. Non-zeros are counted on the bits (-0.0 counts, and such rows take the path
        # below): several times faster than counting floats.
        if bool((top == 1).all()) and _count_nonzero(_bits(t)) == t.size(0):
            return arg
        if t.is_floating_point():
            # One non-zero per row, a 1 (a row sum of 1 would let rounding hide small values); non-zero
            # by the bits without the sign (-0.0 is 0, and subnormals count under set_flush_denormal)
            magnitude = _bits(t) & _MAGNITUDE[t.element_size()]
            nonzeros = (magnitude != 0).sum(dim=1)
            bad = ~((nonzeros == 1) & (top == 1))
            if bool(bad.any()):
                raise TypeError(_not_one_hot(name, t, bad, nonzeros))
            return arg
        # Integers: a row is one-hot iff its entries are >= 0, sum to 1 and one is 1
        onehot = (t.sum(dim=1) == 1) & (top == 1)
        t = t.long()
        low, high = (int(v) for v in torch.aminmax(t))
        if low < 0:
            raise ValueError(f"'{name}' holds negative labels")
        if bool(onehot.all()):
            return arg
        if high >= MAX_LABEL:
            raise ValueError(f"'{name}' holds labels >= 2^58")
        return torch.where(onehot, arg, row_fingerprint(t))
    if out.numel() > 0:
        low, high = (int(v) for v in torch.aminmax(out))
        if low < 0:
            raise ValueError(f"'{name}' holds negative labels ({low})")
        if high >= MAX_LABEL:
            raise ValueError(f"'{name}' holds labels >= 2^58 ({high})")
    return out


_SAME_SIZE_INT = {2: torch.int16, 4: torch.int32, 8: torch.int64}
#: Every bit but the sign, for :func:`_bits` of each size
_MAGNITUDE = {size: (1 << (8 * size - 1)) - 1 for size in _SAME_SIZE_INT}
#: Dtypes with few kernels: their 2-D labels are widened first, and a join reads graphs of them one by one
NARROW_KERNELS = {getattr(torch, n) for n in ("uint16", "uint32", "uint64", "float8_e4m3fn",
                                               "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz")
                   if hasattr(torch, n)}


def _bits(t: Tensor) -> Tensor:
    """A floating-point tensor's bits as integers of its size (a view), other tensors as they are."""
    if t.is_floating_point() and t.element_size() in _SAME_SIZE_INT:
        return t.resolve_neg().view(_SAME_SIZE_INT[t.element_size()])  # (a negative view has no bits to view)
    return t


def _count_nonzero(t: Tensor) -> int:
    """The number of non-zero entries (on the CPU through NumPy, about 1.3x faster for a large tensor)."""
    if (t.device.type == "cpu" and t.dtype in (torch.int16, torch.int32, torch.int64, torch.bool)
            and not t.requires_grad and not t.is_neg()):
        return int(np.count_nonzero(t.numpy()))
    return int(t.count_nonzero())


def one_hot_index(t: Tensor) -> Tensor:
    """The index of the 1 in every one-hot row of a 2-D tensor (any value elsewhere).

    A dot product with :obj:`0..C-1` (no argmax pass, no ``float64`` copy
    of a float input: ``float32`` holds the indices exactly). Rows that are
    not one-hot get some index in :obj:`0..C-1`.
    """
    c = t.size(1)
    if t.dtype in (torch.float32, torch.float64) and c < 2**24:
        arg = t @ torch.arange(c, device=t.device, dtype=t.dtype)
    elif t.is_floating_point():
        arg = t.double() @ torch.arange(c, device=t.device, dtype=torch.float64)
    else:
        arg = t.long().argmax(dim=1)
    return arg.long().clamp_(0, c - 1)


def native_order(a: Any) -> Any:
    """A NumPy array of numbers in the machine's byte order (a copy of a big-endian one; others as they are).

    PyTorch refuses other byte orders (``'>i8'``, as read from some files) with an error about bytes.
    """
    if isinstance(a, np.ndarray) and a.dtype.kind in "biufc" and not a.dtype.isnative:
        return a.astype(a.dtype.newbyteorder("="))
    return a


def unmasked(X: Any, what: str) -> Any:
    """A NumPy masked array without masked entries as its data (anything else as it is).

    :func:`numpy.asarray` would read the values hidden under a mask, so one
    with masked entries is refused; :obj:`what` names it in the message.
    """
    if np.ma.isMaskedArray(X):
        if np.ma.getmaskarray(X).any():
            raise ValueError(f"{what} is a masked array with masked entries: fill them first (.filled(0)) or "
                             "drop those rows")
        return np.ma.getdata(X)
    return X


def check_edge_vector(t: Optional[Tensor], name: str, num_edges: int) -> Optional[Tensor]:
    """Check an optional per-edge sort key."""
    if t is None:
        return None
    if not isinstance(t, Tensor):
        raise TypeError(f"'{name}' must be a torch.Tensor (got {type(t).__name__})")
    if not is_dense(t):
        raise TypeError(not_dense(name, t))
    if t.dim() == 2 and t.size(1) == 1:  # (a column of keys, of any dtype)
        t = t.view(-1)
    if t.dim() != 1 or t.size(0) != num_edges:
        raise ValueError(
            f"'{name}' must have shape [{num_edges}] (one key per edge), "
            f"got {list(t.shape)}"
        )
    if t.dtype == torch.bool or t.is_complex():
        raise TypeError(f"'{name}' must be a real-valued sort key (got {t.dtype})")
    if t.is_floating_point() and t.element_size() == 1:  # (float8: no sort kernel; float32 holds them)
        try:
            t = t.float()
        except (RuntimeError, NotImplementedError):  # (packed float4 pairs: no conversion either)
            raise TypeError(f"'{name}' is {t.dtype}, which PyTorch cannot sort or convert: give the keys as "
                            "float32 or integers") from None
    if t.is_floating_point() and bool(torch.isnan(t).any()):
        raise ValueError(f"'{name}' holds NaN")
    return t


def check_batch(batch: Optional[Tensor], num_nodes: int,
                device: Optional[torch.device] = None) -> Optional[Tensor]:
    """Check an optional node-to-graph assignment vector (against :obj:`x`'s device); returns it."""
    if batch is None:
        return None
    if not isinstance(batch, Tensor) or bad_edge_dtype(batch.dtype):
        raise TypeError("'batch' must hold integer graph indices (torch.long, or int32, int16, int8, uint8; "
                        f"got {batch.dtype if isinstance(batch, Tensor) else type(batch).__name__})")
    if batch.is_nested:
        raise TypeError(not_dense("batch", batch))
    batch = batch.long()  # (no copy when it is one)
    if device is not None and batch.device != device:
        raise ValueError(f"'x' is on {device} but 'batch' is on {batch.device}")
    if batch.dim() != 1 or batch.size(0) != num_nodes:
        raise ValueError(
            f"'batch' must have shape [{num_nodes}] (one graph index per node), "
            f"got {list(batch.shape)}"
        )
    if num_nodes and int(batch.min()) < 0:
        raise ValueError("'batch' holds negative graph indices")
    return batch


def check_no_empty_graph(batch: Tensor, num_graphs: int, where: str) -> None:
    """Refuse a graph index below :obj:`num_graphs` that :obj:`batch` (checked) holds for no node.

    An empty graph in a batch is refused as it is alone (KONG needs at
    least one node), not given a row of zeros.
    """
    # (a fill: cheaper than counting, the same on every device; indices at or beyond num_graphs are left
    # to the caller's checks)
    present = torch.zeros(num_graphs, dtype=torch.bool, device=batch.device)
    present.index_fill_(0, batch[batch < num_graphs], True)
    empty = (~present).nonzero()
    if empty.numel():
        raise ValueError(f"graph {int(empty[0])} {where} is empty (no nodes); KONG needs at least one node")


class PreparedGraph(NamedTuple):
    """A checked graph (or batch of graphs) ready for the k-gram engine.

    Attributes:
        node_sym (torch.Tensor): :obj:`[N]` node symbol codes.
        hood (Neighborhoods): Ordered neighborhoods.
        edge_sym (torch.Tensor, optional): :obj:`[m]` edge symbol codes in
            :obj:`hood` order.
    """

    node_sym: Tensor
    hood: Neighborhoods
    edge_sym: Optional[Tensor]

    @property
    def num_nodes(self) -> int:
        """The number of nodes."""
        return self.node_sym.numel()


def _labels_in_batch(t: Tensor, name: str, length: int, graph: Optional[Tensor], first_graph: int) -> Tensor:
    """:func:`labels`; where they fail in a batch, the error names the first graph at fault.

    :obj:`graph` is the graph of each row; the graph is found by halving the
    range of graphs (a few more checks, on errors only).
    """
    try:
        return labels(t, name, length)
    except (TypeError, ValueError) as err:
        if graph is None or not graph.numel() or not isinstance(t, Tensor) or t.dim() == 0:
            raise
        if t.size(0) != length:
            raise

        def error(lo: int, hi: int) -> Optional[Exception]:
            rows = (graph >= lo) & (graph < hi)
            try:
                labels(t[rows], name, int(rows.sum()))
            except (TypeError, ValueError) as inner:
                return inner
            return None

        lo, hi = 0, int(graph.max()) + 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if error(lo, mid) is not None else (mid, hi)
        found = error(lo, hi)
        if found is None:  # (not a property of one graph's rows)
            raise
        raise type(err)(f"graph {first_graph + lo}: {found}") from None


#: Bytes per node and per edge that every map holds at the least (labels, symbols, neighborhoods, copies).
NODE_BYTES, EDGE_BYTES = 32, 48


def check_graph_size(num_nodes: int, num_edges: int, device: Any = None, what: str = "the graph") -> None:
    """Refuse (:class:`ValueError`) a graph whose node and edge arrays alone would not fit in memory.

    Before any copy: a tensor that repeats one stored value (:meth:`torch.Tensor.expand`) can declare
    10^12 nodes in a few bytes, and its first copy failed in the allocator.
    """
    check_allocation(num_nodes * NODE_BYTES + num_edges * EDGE_BYTES,
                     f"{what} ({num_nodes:,} nodes, {num_edges:,} edges)", device,
                     "fewer or smaller graphs per call")


def prepare_graph(
    x: Tensor,
    edge_index: Tensor,
    edge_attr: Optional[Tensor] = None,
    edge_order: Optional[Tensor] = None,
    *,
    flow: str = "source_to_target",
    order: str = "edge",
    relabel: int = 0,
    seed: int = 0,
    grouped: bool = True,
    edges_checked: bool = False,
    batch: Optional[Tensor] = None,
    first_graph: int = 0,
    depth: int = 0,
) -> PreparedGraph:
    r"""Check a graph and turn it into symbols and ordered neighborhoods.

    Args:
        x (torch.Tensor): Node labels (see the module doc).
        edge_index (torch.Tensor): :obj:`[2, m]` edges, in neighbor order.
        edge_attr (torch.Tensor, optional): Edge labels.
        edge_order (torch.Tensor, optional): A per-edge sort key (for
            :obj:`order` "edge", "reverse" or "consistent").
        flow (str): As in :class:`~torch_geometric.nn.conv.MessagePassing`.
        order (str): See :func:`~kong_pyg.ordering.ordered_neighborhoods`.
        relabel (int): Rounds of WL relabelling first (:obj:`True` is 1).
        seed (int): The seed of :obj:`order="random"`.
        grouped (bool): Group edges by center in neighbor order (needed for
            :math:`k \geq 2`); see
            :func:`~kong_pyg.ordering.ordered_neighborhoods`.
        batch (torch.Tensor, optional): The graph of each node, where the
            input joins several graphs (see
            :func:`~kong_pyg.ordering.ordered_neighborhoods`).
        first_graph (int): The number of :obj:`batch`'s graph 0 in error
            messages (a batch of a longer list).
        edges_checked (bool): The caller has checked every index of
            :obj:`edge_index` against the rows of :obj:`x` (the unions of
            :func:`~kong_pyg.graphs.iter_graph_batches`): no second pass.
        depth (int): The depth :math:`h` of the strings: :obj:`order="label"` and
            :obj:`"degree"` break ties by the edge label, then by :func:`tie_rounds` rounds of
            WL colours (:func:`colour_ranks`), so that the strings do not depend on the node
            numbering; only neighbors whose strings are equal keep edge order.
    """
    if isinstance(x, tuple) and len(x) == 2 and all(isinstance(t, Tensor) for t in x):
        raise TypeError("'x' is a pair of tensors (x_src, x_dst), as torch_geometric.nn.to_hetero passes for "
                        "an edge type between two node types: KONG reads one node set, whose nodes are both "
                        "the centres and the neighbors: compute it on HeteroData.to_homogeneous(), outside "
                        "to_hetero's model")
    if not isinstance(x, Tensor):
        raise TypeError(f"'x' must be a torch.Tensor of node labels (got {type(x).__name__})")
    if x.is_nested:  # (before its size(0), the number of its parts, is read as the number of nodes)
        raise TypeError(not_dense("x", x))
    if x.dim() == 0:
        raise ValueError(f"'x' must have shape [num_nodes] or [num_nodes, C] (got a scalar, {x.dtype})")
    n = x.size(0)
    if n == 0:
        raise ValueError("the graph is empty: 'x' has no rows (KONG needs at least one node)")
    if x.device.type == "meta":
        raise ValueError("'x' is on the 'meta' device, which holds no values: KONG reads the labels")
    if isinstance(edge_index, Tensor) and edge_index.dim() == 2:
        check_graph_size(n, edge_index.size(1), x.device)
    edge_index = check_edge_index(edge_index, n, x.device, check_range=not edges_checked)
    m = edge_index.size(1)
    for name, t in (("edge_attr", edge_attr), ("edge_order", edge_order)):
        if isinstance(t, Tensor) and t.device != x.device:
            raise ValueError(f"'x' is on {x.device} but '{name}' is on {t.device}")
    graph = batch if isinstance(batch, Tensor) and batch.dim() == 1 and batch.numel() == n else None
    node_label = _labels_in_batch(x, "x", n, graph, first_graph)
    edge_label = None if edge_attr is None else _labels_in_batch(
        edge_attr, "edge_attr", m, None if graph is None else graph[edge_index[0]], first_graph)
    edge_order = check_edge_vector(edge_order, "edge_order", m)
    if edge_order is not None and order not in ORDERS_WITH_KEY:
        raise ValueError(
            f"'edge_order' defines the neighbor order, but order='{order}' asks "
            f"for another one; pass order in {list(ORDERS_WITH_KEY)} or drop 'edge_order'"
        )
    given = node_code(node_label) if order == "random" else None  # (random reads the labels as given)
    tied = grouped and order in TIED  # (ties broken by what the numbering cannot change: see colour_ranks)
    rounds = tie_rounds(order, depth) if tied else 0
    plain = ordered_neighborhoods(edge_index, n, flow) if relabel or rounds else None
    if plain is not None:
        for _ in range(int(relabel)):
            node_label = wl_relabel(node_label, plain)
    node_sym = node_code(node_label)
    edge_sym = None if edge_label is None else edge_code(edge_label)
    ties = None
    if plain is not None and rounds:
        ties = colour_ranks(node_sym, plain, None if edge_sym is None else edge_sym[plain.perm], rounds)
    edge_ties = edge_sym if tied else None
    hood = ordered_neighborhoods(edge_index, n, flow, order, edge_order, node_sym if given is None else given,
                                 seed, grouped, batch, ties, edge_ties)
    if edge_sym is not None and grouped:
        edge_sym = edge_sym[hood.perm]
    return PreparedGraph(node_sym, hood, edge_sym)
