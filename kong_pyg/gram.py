r"""Exact KONG kernel matrices without the explicit feature map.

The KONG graph kernel is a double sum over node pairs,

.. math::
    K(G, H) = \sum_{v \in G} \sum_{w \in H} \kappa(c_v, c_w)
            = \sum_{v \in G} \sum_{w \in H} \langle g(c_v), g(c_w) \rangle^p,

with :math:`g(c) = c \oplus \sqrt{const}` (poly) or :math:`c / \|c\|`
(cosine; :mod:`kong_pyg.kernels`). The explicit map of
:class:`~kong_pyg.KongVectorizer` stores one column per distinct multiset of
:math:`p` k-grams, which grows like :math:`d^p`; :func:`gram_matrix` never
forms it. It computes the node count vectors :math:`c_v` once with the
engine (:func:`~kong_pyg.engine.prepare`, :func:`~kong_pyg.engine.kgram_steps`,
:func:`~kong_pyg.engine.exact_counts`), keeps every *distinct* :math:`c_v`
once (graphs of a data set share most of them) with a count per graph
:math:`M` (:obj:`[num_graphs, U]`), and forms

.. math::
    K = M \, \big( U U^\top \big)^{\circ p} M^\top

block by block (:math:`U`: the distinct :math:`g(c_v)` rows,
:math:`\circ p`: elementwise power), so memory stays bounded by
:obj:`block_entries` whatever the number of nodes. Everything is ``float64``
and exact up to rounding. With :math:`p = 1` the node maps are pooled per
graph first (:math:`K = (M U)(M U)^\top`).

:func:`kernel_matrix` is the matching helper for explicit features (for
instance a sketch): the linear kernel :math:`X Y^\top` as a dense array.
Both feed :class:`sklearn.svm.SVC` with :obj:`kernel="precomputed"`,
Gaussian processes or kernel ridge regression.
"""
import datetime
import math
import re
import sys
from typing import Any, List, NamedTuple, Optional, Sequence

import numpy as np
import torch
from torch import Tensor

from . import engine
from .config import KongConfig, check_attr_name, check_int, option_defaults, resolve_config
from .exact import Rows, dense_rank, dense_row_ids, index_grams, row_norms, sum_duplicates
from .graphs import as_graph_sequence, iter_graph_batches
from .inputs import unmasked
from .kernels import get_kernel
from .kgrams import exclusive_cumsum, flat_nonzero
from .memory import check_allocation
from .node_pairs import BLOCK_ENTRIES, pair_kernel  # (also importable from here)
from .ordering import key_attribute
from .outputs import numpy_of  # (also importable from here)


class NodeMaps(NamedTuple):
    r"""The distinct node maps :math:`g(c_v)` of a set of graphs and who holds them.

    Attributes:
        rows (Rows): The :math:`U` distinct rows :math:`g(c)` (row = id,
            sorted by :obj:`(row, col)`).
        num_unique (int): :math:`U`.
        num_cols (int): The width of the rows.
        graph (torch.Tensor): :obj:`[P]` graph of each (graph, row) pair.
        unique (torch.Tensor): :obj:`[P]` the row id of each pair.
        mult (torch.Tensor): :obj:`[P]` how many nodes of the graph have
            that row (``float64``). Pairs are sorted by :obj:`(unique, graph)`.
        num_graphs (int): The number of graphs.
    """

    rows: Rows
    num_unique: int
    num_cols: int
    graph: Tensor
    unique: Tensor
    mult: Tensor
    num_graphs: int


def distinct_rows(rows: Rows, num_rows: int) -> tuple:
    """Ids of the distinct rows of sparse :obj:`rows` (exact: equal columns and values).

    Rows are grouped by their number of entries and each group is ranked with
    :func:`~kong_pyg.exact.dense_row_ids` on its columns and the bit patterns
    of its values (no hashing, so no collisions).

    Args:
        rows (Rows): Sparse rows sorted by :obj:`(row, col)`.
        num_rows (int): The number of rows :math:`N`.

    Returns:
        (torch.Tensor, Rows, int): The id of every row :obj:`[N]`, the
        distinct rows (row = id) and their number.
    """
    dev = rows.row.device
    nnz = torch.bincount(rows.row, minlength=num_rows)
    start = exclusive_cumsum(nnz)
    uid = torch.empty(num_rows, dtype=torch.long, device=dev)
    bits = rows.val.double().view(torch.int64)
    base = 0
    for length in torch.unique(nnz).tolist():
        members = flat_nonzero(nnz == length)
        if length == 0:
            uid[members] = base
            base += 1
            continue
        at = start[members].unsqueeze(1) + torch.arange(length, device=dev)
        key = torch.cat([rows.col[at], bits[at]], dim=1)
        ids, table = dense_row_ids(key)
        uid[members] = ids + base
        base += table.size(0)
    first = torch.full((base,), num_rows, dtype=torch.long, device=dev)
    first.scatter_reduce_(0, uid, torch.arange(num_rows, device=dev), reduce="amin")
    counts = nnz[first]
    total = int(counts.sum())
    owner = torch.repeat_interleave(torch.arange(base, device=dev), counts, output_size=total)
    pos = start[first][owner] + torch.arange(total, device=dev) - exclusive_cumsum(counts)[owner]
    return uid, Rows(owner, rows.col[pos], rows.val[pos]), base


def node_maps(cfg: KongConfig, graphs: Any, edge_order_attr: Optional[str] = "edge_order") -> NodeMaps:
    r"""The distinct node maps :math:`g(c_v)` of all graphs, in one engine call.

    Args:
        cfg (KongConfig): The options (exact: :obj:`dim=None`).
        graphs: A non-empty sequence of graphs (see
            :func:`~kong_pyg.graphs.iter_graph_batches`).
        edge_order_attr (str, optional): The per-edge order key attribute.
            (default: :obj:`"edge_order"`)

    Returns:
        :class:`NodeMaps`
    """
    key = key_attribute(cfg.order, edge_order_attr)
    sparse_flow = cfg.flow if cfg.k == 1 else None
    gb = next(iter(iter_graph_batches(graphs, len(graphs), cfg.edge_labels, key, sparse_flow)))
    prep = engine.prepare(cfg, gb.x, gb.edge_index, gb.edge_attr, gb.edge_order, batch=gb.batch,
                          first_graph=gb.start)
    grams = index_grams(engine.kgram_steps(cfg, prep))
    counts = engine.exact_counts(cfg, prep, grams)
    uid, distinct, num_unique = distinct_rows(counts, prep.num_nodes)
    kernel = get_kernel(cfg.kernel)
    norms = engine.count_norms(cfg, distinct, num_unique) if kernel.needs_norms(cfg) else None
    const_col = (cfg.hops + 1) * max(grams.num_grams, 1)
    rows = kernel.exact_node_rows(cfg, distinct, norms, num_unique, const_col)
    ones = torch.ones(uid.numel(), dtype=torch.float64, device=uid.device)
    pairs = sum_duplicates(uid, gb.batch, ones, gb.num_graphs, num_unique)
    return NodeMaps(rows, num_unique, const_col + 1, pairs.col, pairs.row, pairs.val, gb.num_graphs)


def _graph_rows(maps: NodeMaps) -> Any:
    r"""The graph maps :math:`\sum_v g(c_v)` (:math:`p = 1`) as a SciPy CSR matrix."""
    import scipy.sparse as sp

    # (SciPy: on the CPU, wherever the graphs are)
    pool = sp.csr_matrix((maps.mult.cpu().numpy(), (maps.graph.cpu().numpy(), maps.unique.cpu().numpy())),
                         shape=(maps.num_graphs, maps.num_unique))
    rows = maps.rows
    node = sp.csr_matrix((rows.val.cpu().numpy(), (rows.row.cpu().numpy(), rows.col.cpu().numpy())),
                         shape=(maps.num_unique, maps.num_cols))
    return pool @ node


def _restrict(maps: NodeMaps, lo: int, hi: int) -> NodeMaps:
    """The maps of graphs :obj:`lo .. hi - 1` only (ids compacted)."""
    keep = (maps.graph >= lo) & (maps.graph < hi)
    used, unique = dense_rank(maps.unique[keep])
    old_to_new = torch.full((maps.num_unique,), -1, dtype=torch.long, device=used.device)
    old_to_new[used] = torch.arange(used.numel(), device=used.device)
    sel = old_to_new[maps.rows.row] >= 0
    rows = Rows(old_to_new[maps.rows.row[sel]], maps.rows.col[sel], maps.rows.val[sel])
    return NodeMaps(rows, used.numel(), maps.num_cols, maps.graph[keep] - lo, unique, maps.mult[keep],
                    hi - lo)


def self_kernels(maps: NodeMaps, degree: int, block_entries: int = BLOCK_ENTRIES) -> Tensor:
    r""":math:`K(G, G)` of every graph, in chunks of graphs (never the full matrix)."""
    out = torch.empty(maps.num_graphs, dtype=torch.float64, device=maps.rows.val.device)
    step = 256
    for lo in range(0, maps.num_graphs, step):
        hi = min(lo + step, maps.num_graphs)
        sub = _restrict(maps, lo, hi)
        if degree == 1:
            rows = _graph_rows(sub)
            out[lo:hi] = torch.from_numpy(np.asarray(rows.multiply(rows).sum(axis=1)).ravel())
        else:
            out[lo:hi] = pair_kernel(sub, sub, degree, block_entries).diagonal()
    return out


class _Chain:
    """Two sequences of graphs, one after the other (indexable, with a length)."""

    def __init__(self, first: Sequence, second: Sequence):
        self.first, self.second = first, second

    def __len__(self) -> int:
        return len(self.first) + len(self.second)

    def __getitem__(self, i: int) -> Any:
        n = len(self.first)
        return self.first[i] if i < n else self.second[i - n]


def _raised_here(err: BaseException) -> bool:
    """Whether kong_pyg's own checks raised :obj:`err` (a user's dataset may say "graph i" too)."""
    tb = err.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and str(tb.tb_frame.f_globals.get("__name__", "")).startswith("kong_pyg.")


def _which_sequence(message: str, n_first: int) -> str:
    """A message about "graph i" of the two sequences joined, with each as graph i of 'graphs' or 'other'."""
    def one(found: "re.Match[str]") -> str:
        i = int(found.group(1))
        return f"graph {i} of 'graphs'" if i < n_first else f"graph {i - n_first} of 'other'"

    return re.sub(r"\bgraph (\d+)\b", one, message)


def _split(maps: NodeMaps, n_first: int) -> List[NodeMaps]:
    """The maps of the first :obj:`n_first` graphs and of the others."""
    return [_restrict(maps, 0, n_first), _restrict(maps, n_first, maps.num_graphs)]


def _normalize(K: Tensor, left: Tensor, right: Tensor) -> Tensor:
    r""":math:`K_{ij} / \sqrt{l_i r_j}` (0 where a self-kernel is 0)."""
    def inv(d: Tensor) -> Tensor:
        return torch.where(d > 0, d.clamp(min=1e-300).rsqrt(), torch.zeros_like(d))

    # (p = 1: K is on the CPU, the self-kernels where the graphs are)
    return K * inv(left.to(K.device)).unsqueeze(1) * inv(right.to(K.device)).unsqueeze(0)


#: Peak bytes per entry of :func:`gram_matrix`'s output: the matrix and the temporaries of its pair
#: products or its normalization (measured: about 26-30 on 3000 MUTAG graphs, k = 2, p = 1 and 2).
GRAM_BYTES = 32
#: Peak bytes per entry of :func:`kernel_matrix`'s output: for sparse features the sparse product (up to
#: one 12-byte entry per pair) and its dense copy; for dense ones the matrix and its finite check.
SPARSE_PRODUCT_BYTES = 20
DENSE_PRODUCT_BYTES = 9


def gram_matrix(
    graphs: Any,
    other: Any = None,
    *,
    config: Optional[KongConfig] = None,
    edge_order_attr: Optional[str] = "edge_order",
    block_entries: int = BLOCK_ENTRIES,
    **options: Any,
) -> np.ndarray:
    r"""The exact KONG graph kernel matrix, without the explicit map.

    :math:`K_{ij} = K(G_i, H_j) = \sum_{v \in G_i} \sum_{w \in H_j}
    \kappa(c_v, c_w)`, the Gram matrix of the exact
    :class:`~kong_pyg.KongVectorizer` map (:obj:`X @ X.T`) computed from node
    inner products (see the module doc): its cost grows with the square of
    the number :math:`U` of distinct node count vectors (every pair of them,
    sparse products over the columns they share), not with the monomials of
    the explicit map, whose cost grows with the nodes times the
    :math:`\binom{n_v + p - 1}{p}` monomials of each node's :math:`n_v`
    non-zero counts. So it is the faster route for :math:`p \geq 2` where
    node count vectors are dense (many counts each, large :math:`p`), and the
    slower one for many graphs with sparse ones (the explicit map is linear
    in the graphs): the evaluation harness picks per setting
    (:func:`~kong_pyg.evaluation.features.kong_route`).

    .. code-block:: python

        from sklearn.svm import SVC
        from kong_pyg import gram_matrix

        K = gram_matrix(train, kernel="cosine", degree=3, relabel=1)
        svm = SVC(kernel="precomputed").fit(K, y_train)
        svm.predict(gram_matrix(test, train, kernel="cosine", degree=3, relabel=1))

    All graphs (:obj:`graphs`, then :obj:`other`) go through the engine in
    one call, so their k-grams share one column space (as
    :class:`~kong_pyg.KongVectorizer` fitted on all of them).

    Args:
        graphs: The row graphs: a PyG dataset, a list of
            :class:`~torch_geometric.data.Data`, a
            :class:`~torch_geometric.data.Batch` or one
            :class:`~torch_geometric.data.Data`.
        other (optional): The column graphs (same types); :obj:`None` for
            :obj:`graphs` against themselves. (default: :obj:`None`)
        config (KongConfig, optional): All KONG options at once.
        edge_order_attr (str, optional): The attribute holding a per-edge
            sort key that defines the neighbor order, used when present.
            (default: :obj:`"edge_order"`)
        block_entries (int, optional): Entries of one dense block of node
            pairs (memory: a few arrays of this size, ``float64``, whatever
            the number of nodes and of columns). Below about the number of
            graphs a block holds one node map: the same matrix (up to the
            rounding of sums taken in another order, with :math:`p > 1` or
            the cosine kernel), far more slowly. (default: :obj:`2**24`)
        **options: KONG options (:class:`~kong_pyg.KongConfig`; the exact
            map only: :obj:`dim` must be :obj:`None`).

    Returns:
        :class:`numpy.ndarray` :obj:`[len(graphs), len(other)]` (``float64``).
        With :obj:`normalize=True`, :math:`K(G, H) / \sqrt{K(G, G) K(H, H)}`,
        computed even where the raw kernel overflows ``float64`` (but see
        Raises); a graph whose map is zero (no k-gram, with :obj:`const = 0`
        or the cosine kernel) gets 0 against every graph, itself included.

    Shapes:
        - **output:** :obj:`[num_graphs, num_other]`, or
          :obj:`[num_graphs, num_graphs]` without :obj:`other`.

    Raises:
        ValueError: Invalid options or graphs, or a matrix larger than the
            memory available (about 32 bytes an entry at its peak; refused
            before any work: compute it in blocks of rows,
            :obj:`gram_matrix(graphs[i:j], graphs)`); a kernel that overflows
            ``float64`` (with :obj:`normalize=True`: counts that overflow, or
            self-kernels more than about :math:`10^{290}` apart:
            :class:`GramRangeError`, a :class:`ValueError`).
    """
    cfg = resolve_config(config, options, option_defaults(), "gram_matrix", options)
    if cfg.dim is not None:
        raise ValueError(
            f"gram_matrix computes the exact kernel (dim=None), got dim={cfg.dim}; for a sketch use "
            "kernel_matrix(KongVectorizer(dim=...).fit_transform(graphs))"
        )
    check_int("block_entries", block_entries, 1)
    check_attr_name("edge_order_attr", edge_order_attr)
    graphs = as_graph_sequence(graphs)
    if other is not None:
        other = as_graph_sequence(other, "other")
    _check_size(len(graphs), len(graphs if other is None else other))
    with torch.no_grad():
        if other is None:
            return gram_of_maps(cfg, node_maps(cfg, graphs, edge_order_attr), block_entries=block_entries)
        try:
            maps = node_maps(cfg, _Chain(graphs, other), edge_order_attr)
        except (ValueError, TypeError) as err:  # ("graph i" counts both sequences: say which, and where)
            if err.args and isinstance(err.args[0], str) and _raised_here(err):
                err.args = (_which_sequence(err.args[0], len(graphs)),) + err.args[1:]
            raise
        left, right = _split(maps, len(graphs))
        return gram_of_maps(cfg, left, right, block_entries)


def _check_size(n: int, m: int, device: Any = None) -> None:
    """The memory check of an :obj:`[n, m]` kernel matrix.

    The host's (its NumPy copy), and :obj:`device`'s where it is computed elsewhere (p >= 2 on graphs on a
    GPU).
    """
    for where in ("cpu",) if device is None or torch.device(device).type == "cpu" else ("cpu", device):
        check_allocation(
            GRAM_BYTES * n * m, f"gram_matrix of {n:,} x {m:,} graphs ('graphs', 'other'): the kernel matrix",
            where, advice="compute it in blocks of rows (gram_matrix(graphs[i:j], graphs)), or train a "
                          "linear model on explicit features (KongVectorizer)",
        )


def gram_of_maps(cfg: KongConfig, left: NodeMaps, right: Optional[NodeMaps] = None,
                 block_entries: int = BLOCK_ENTRIES) -> np.ndarray:
    """:func:`gram_matrix` from node maps already computed (:func:`node_maps`).

    :obj:`right=None`: the graphs of :obj:`left` against themselves (an exactly symmetric matrix).
    """
    same, right = right is None, left if right is None else right
    _check_size(left.num_graphs, right.num_graphs, left.rows.val.device if cfg.degree > 1 else None)
    with torch.no_grad():
        K = _raw_gram(cfg, left, right, block_entries)
        if cfg.normalize:
            K = _normalized(cfg, K, left, None if same else right, block_entries)
        else:
            engine.check_finite(K, cfg, "kernel matrix")
        out = np.ascontiguousarray(K.cpu().numpy())
        if same and (cfg.degree == 1 or cfg.normalize):  # (there the two triangles round apart: products
            _mirror_upper(out, block_entries)  # summed in other orders, the scaling; pair_kernel's are equal)
    return out


def _raw_gram(cfg: KongConfig, left: NodeMaps, right: NodeMaps, block_entries: int) -> Tensor:
    """The kernel matrix of :obj:`left` against :obj:`right`, not normalized (it may overflow)."""
    if cfg.degree == 1:
        return torch.from_numpy(np.asarray((_graph_rows(left) @ _graph_rows(right).T).todense()))
    return pair_kernel(left, right, cfg.degree, block_entries)


def _normalized(cfg: KongConfig, K: Tensor, left: NodeMaps, right: Optional[NodeMaps],
                block_entries: int) -> Tensor:
    r""":math:`K(G, H) / \sqrt{K(G, G) K(H, H)}` (:obj:`right=None`: :obj:`left` against itself).

    The normalized kernel lies in :math:`[0, 1]` even where :math:`K` overflows ``float64``: then
    the matrix and the self-kernels are computed a second time, from the node maps scaled by one
    power of two (:func:`_scaled`: exact, every scaled entry of :math:`K` at most :math:`|G| |H|`),
    which :math:`K`'s homogeneity (:math:`\alpha^{2p}` for maps :math:`\alpha g`) cancels. Where
    that scaling would push a graph's own kernel below ``float64``'s full precision (self-kernels
    more than about :math:`10^{290}` apart), or the node maps themselves overflowed, a clear error
    instead.
    """
    def selves(lk: Tensor, lm: NodeMaps, rm: Optional[NodeMaps]) -> tuple:
        if rm is None:
            diag = lk.diagonal().clone()
            return diag, diag
        return self_kernels(lm, cfg.degree, block_entries), self_kernels(rm, cfg.degree, block_entries)

    lself, rself = selves(K, left, right)
    if not (engine.all_finite(K) and engine.all_finite(lself) and engine.all_finite(rself)):
        both = [left] if right is None else [left, right]
        norms = [row_norms(m.rows, m.num_unique) for m in both]
        tops = [float(n.max()) if n.numel() else 0.0 for n in norms]
        if not all(math.isfinite(t) for t in tops):  # (the counts themselves overflowed: no scale
            engine.check_finite(torch.tensor(tops), cfg, "node counts", cosine=False)  # back; NaN too)
        shift = math.frexp(max(tops))[1]  # (top * 2^-shift < 1: every scaled map inside the unit ball)
        left = _scaled(left, shift)
        right = None if right is None else _scaled(right, shift)
        K = _raw_gram(cfg, left, left if right is None else right, block_entries)
        lself, rself = selves(K, left, right)
        _check_precision(cfg, left, norms[0], lself, "" if right is None else " of 'graphs'")
        if right is not None:
            _check_precision(cfg, right, norms[1], rself, " of 'other'")
    return _normalize(K, lself, rself)


class GramRangeError(ValueError):
    """A normalized kernel matrix whose self-kernels span beyond ``float64`` (:func:`_check_precision`).

    The explicit map, which normalizes every row alone, may still hold it.
    """


#: Scaled self-kernels below this have lost precision (the smallest normal float64 times 2^53).
_FULL_PRECISION = math.ldexp(1.0, -969)


def _scaled(maps: NodeMaps, shift: int) -> NodeMaps:
    """The node maps times :math:`2^{-shift}` (exact: only the exponents change)."""
    rows = maps.rows
    return maps._replace(rows=Rows(rows.row, rows.col, rows.val * math.ldexp(1.0, -shift)))


def _check_precision(cfg: KongConfig, maps: NodeMaps, norms: Tensor, selves: Tensor, side: str) -> None:
    """Refuse scaled self-kernels that underflowed where a graph's map is not zero (:func:`_normalized`).

    :obj:`norms` are the maps' row norms (before the scaling: the same zeros).
    """
    nonzero = (norms > 0).index_select(0, maps.unique)
    held = torch.bincount(maps.graph[nonzero], minlength=maps.num_graphs) > 0
    low = held & (selves.to(held.device) < _FULL_PRECISION)
    if bool(low.any()):
        g = int(low.nonzero()[0])
        raise GramRangeError(
            f"the normalized KONG kernel matrix cannot be computed in float64: with hops={cfg.hops} and "
            f"degree={cfg.degree} the graphs' own kernels K(G, G) span more than float64's range (they "
            f"overflow it, and scaled down, the kernel of graph {g}{side} with itself underflows); use fewer "
            "hops, a smaller degree or kernel='cosine', or, where its values stay within float64, "
            "KongVectorizer(normalize=True) (its rows are normalized one by one)"
        )


def _mirror_upper(A: np.ndarray, block_entries: int) -> None:
    """Copy the upper triangle of the square :obj:`A` onto its lower one, in place.

    Rows go in blocks of about :obj:`block_entries` entries: no second matrix (the memory check's budget).
    """
    n = A.shape[0]
    step = max(1, block_entries // max(n, 1))
    for i in range(0, n, step):
        j = min(i + step, n)
        A[i:j, :i] = A[:i, i:j].T
        for r in range(i + 1, j):  # (the diagonal block row by row: no index arrays of its size)
            A[r, i:r] = A[i:r, r]


def kernel_matrix(X: Any, Y: Any = None) -> np.ndarray:
    r"""The linear kernel :math:`X Y^\top` of explicit features, as a dense array.

    For :class:`~kong_pyg.KongVectorizer` output (exact CSR or a dense
    sketch) this is the KONG kernel matrix (exactly, or its sketch estimate),
    ready for :class:`sklearn.svm.SVC` with :obj:`kernel="precomputed"`.

    Args:
        X: :obj:`[n, d]` features: a SciPy sparse matrix, a
            :class:`numpy.ndarray` or a :class:`torch.Tensor`.
        Y (optional): :obj:`[m, d]` features of the same kinds; :obj:`None`
            for :obj:`X` against itself. (default: :obj:`None`)

    Returns:
        :class:`numpy.ndarray` :obj:`[n, m]` (``float64``).

    Raises:
        TypeError: :obj:`X` or :obj:`Y` is not numeric features (for
            instance a list of graphs: vectorize them first).
        ValueError: Not 2-D, NaN or infinite values, different widths, or
            a matrix larger than the memory available (refused before it is
            computed; compute it in blocks of rows).
    """
    left = _as_matrix(X, "X")
    right = left if Y is None else _as_matrix(Y, "Y")
    if left.shape[1] != right.shape[1]:
        raise ValueError(f"'X' has {left.shape[1]} columns but 'Y' has {right.shape[1]}")
    n, m = left.shape[0], right.shape[0]
    check_allocation(
        (SPARSE_PRODUCT_BYTES if hasattr(left, "toarray") else DENSE_PRODUCT_BYTES) * n * m,
        f"kernel_matrix of {n:,} x {m:,} rows ('X', 'Y'): the kernel matrix",
        advice="compute it in blocks of rows (kernel_matrix(X[i:j], X)), or train a linear model on X",
    )
    with np.errstate(over="ignore", invalid="ignore"):
        out = left @ right.T
    out = np.asarray(out.toarray() if hasattr(out, "toarray") else out, dtype=np.float64)
    if not np.isfinite(out).all():
        raise ValueError("the kernel matrix overflows float64 (feature values too large): scale or "
                         "normalize the features")
    return out


def _holds_graphs(X: Any) -> bool:
    """Whether :obj:`X` is a graph, a PyG dataset, or a list, tuple or 1-D object array of graphs."""
    if "torch_geometric" not in sys.modules:  # (no graph exists then; nothing imported for it)
        return False
    from torch_geometric.data import Dataset
    from torch_geometric.data.data import BaseData

    if isinstance(X, (BaseData, Dataset)):
        return True
    items = X if isinstance(X, (list, tuple)) else (
        X if isinstance(X, np.ndarray) and X.dtype == object and X.ndim == 1 else ())
    return len(items) > 0 and isinstance(items[0], BaseData)


def _as_matrix(X: Any, name: str) -> Any:
    """A 2-D float64 SciPy CSR matrix or numpy array."""
    import scipy.sparse as sp

    if X is None or isinstance(X, (str, bytes, dict)) and not sp.issparse(X):  # (a dok_matrix is a dict)
        raise TypeError(f"'{name}' must be [n, d] numeric features (a SciPy sparse matrix, a NumPy array "
                        f"or a tensor, e.g. KongVectorizer output), not {type(X).__name__}")
    if _holds_graphs(X):
        raise TypeError(f"'{name}' holds graphs, not features: vectorize them first "
                        "(KongVectorizer().fit_transform(graphs)), or call gram_matrix(graphs)")
    if isinstance(X, Tensor):
        X = numpy_of(X, f"'{name}'")
    X = unmasked(X, f"'{name}'")
    if not (sp.issparse(X) or hasattr(X, "dtype")):  # (a list: its values' own type first)
        try:
            X = np.asarray(X)
        except (TypeError, ValueError):
            pass  # (the conversion below names it)
    kind = getattr(getattr(X, "dtype", None), "kind", "")
    if kind == "O" and any(isinstance(v, (str, bytes, np.datetime64, np.timedelta64, datetime.date,
                                          datetime.timedelta)) for v in np.asarray(X).flat):
        kind = "U"  # (an object array of text or dates: as an array of them)
        X = np.asarray(X).astype(str)  # (named as what it holds)
    if kind == "c":
        raise TypeError(f"'{name}' must hold real numbers (got {X.dtype})")
    if kind in ("U", "S", "M", "m", "V"):  # (text and dates convert to numbers: "1" was read as 1.0)
        raise TypeError(f"'{name}' must be [n, d] numeric features (got an array of {X.dtype})")
    try:
        out = sp.csr_matrix(X, dtype=np.float64) if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"'{name}' must be [n, d] numeric features (a SciPy sparse matrix, a NumPy array "
                        f"or a tensor, e.g. KongVectorizer output), not {type(X).__name__}") from None
    if out.ndim != 2:
        raise ValueError(f"'{name}' must be 2-D [n, d] (got {out.ndim}-D)")
    if not np.isfinite(out.data if sp.issparse(out) else out).all():
        raise ValueError(f"'{name}' holds NaN or infinite values")
    return out


__all__ = [
    "GramRangeError",
    "gram_matrix",
    "kernel_matrix",
    "node_maps",
    "pair_kernel",
    "self_kernels",
    "distinct_rows",
    "NodeMaps",
    "BLOCK_ENTRIES",
]
