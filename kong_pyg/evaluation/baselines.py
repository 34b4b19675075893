r"""Explicit graph feature maps the KONG paper compares with (its Table 1).

* :func:`wl_features`: Weisfeiler-Lehman subtree features from PyG's
  :class:`~torch_geometric.nn.conv.WLConv` colorings (Shervashidze et al.,
  JMLR 2011).
* :func:`walk_features`: k-walk features ("KW"), the counts of the label
  sequences of all walks with :math:`k` edges (the explicit map of the
  fixed-length walk kernel; Kriege, Neumann, Kersting and Mutzel, ICDM
  2014), or of all lengths up to :math:`k`, optionally normalized per node,
  with torch sparse products.
* :func:`sp_features`: labelled shortest-path features (the explicit map
  of GraKeL's shortest-path kernel, without GraKeL).
* :func:`grakel_gram`: the Gram matrix of GraKeL's shortest-path or
  Weisfeiler-Lehman kernel (``pip install kong-pyg[bench]``).

All read the node labels the way KONG does (:mod:`kong_pyg.inputs`: integer
labels or one-hot rows), follow PyG's default flow (node :math:`i` collects
from the sources of its incoming edges) and ignore edge labels and the
neighbor order (WL colors are multisets, walk counts add over a
neighborhood in any order), which is what makes them baselines for KONG's
ordered k-grams. They are transductive: compute the features of all
graphs, then split.
"""
from typing import List, NamedTuple, Optional, Tuple, Union

import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor

from ..config import check_int
from ..devices import cpu_by_default
from ..exact import dense_rank, ignore_sparse_notices
from ..graphs import as_graph_sequence, iter_graph_batches
from ..inputs import labels


class GraphUnion(NamedTuple):
    """All graphs of a data set as one disjoint union.

    Attributes:
        label (torch.Tensor): :obj:`[N]` node labels (``int64``).
        edge_index (torch.Tensor): :obj:`[2, m]` edges.
        batch (torch.Tensor): :obj:`[N]` graph of every node.
        num_graphs (int): The number of graphs.
    """

    label: Tensor
    edge_index: Tensor
    batch: Tensor
    num_graphs: int


def graph_union(graphs) -> GraphUnion:
    """Collect a sequence of graphs (or a PyG dataset) into one union.

    A graph with only a sparse :obj:`adj_t` gives its edges from it: these
    kernels do not read the neighbor order (PyG's ``ToSparseTensor`` merges
    parallel edges, as it does for KONG with :obj:`k = 1`).
    """
    graphs = as_graph_sequence(graphs)  # (an empty or unsized input: the error naming 'graphs')
    parts = list(iter_graph_batches(graphs, batch_size=len(graphs), edge_labels=False,
                                    edge_order_attr=None, sparse_flow="source_to_target"))
    gb = parts[0]  # (on the CPU: the counts end in SciPy matrices, whatever device the graphs are on)
    return GraphUnion(labels(gb.x.cpu(), "x", gb.x.size(0)), gb.edge_index.cpu(), gb.batch.cpu(),
                      gb.num_graphs)


def _count_matrix(graph: Tensor, column: Tensor, num_graphs: int, num_columns: int,
                  weight: Optional[Tensor] = None) -> sp.csr_matrix:
    """:obj:`[num_graphs, num_columns]` CSR of (graph, column) counts."""
    val = np.ones(graph.numel()) if weight is None else weight.double().numpy()
    out = sp.csr_matrix((val, (graph.numpy(), column.numpy())), shape=(num_graphs, num_columns))
    out.sum_duplicates()
    out.sort_indices()
    return out


def _normalize_rows(x: sp.csr_matrix) -> sp.csr_matrix:
    norm = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
    norm[norm == 0] = 1.0
    return sp.csr_matrix(sp.diags(1.0 / norm) @ x)


@cpu_by_default
def wl_features(graphs, hops: int = 2, normalize: bool = False) -> sp.csr_matrix:
    r"""Weisfeiler-Lehman subtree features of every graph.

    Colors :math:`c^0 = l`, :math:`c^i = \textrm{hash}(c^{i-1}_v,
    \{\!\{c^{i-1}_u : u \in N_v\}\!\})` computed by one
    :class:`~torch_geometric.nn.conv.WLConv` per iteration over the whole
    data set (so colors are shared across graphs); the feature vector of a
    graph is the concatenation of its color histograms for
    :math:`i = 0, \ldots, h`, so that the linear kernel is the WL subtree
    kernel with :math:`h` iterations.

    Args:
        graphs: A PyG dataset or a list of :class:`~torch_geometric.data.Data`
            with node labels :obj:`x`.
        hops (int, optional): The number of WL iterations :math:`h`.
            (default: :obj:`2`)
        normalize (bool, optional): L2-normalize each row (the cosine
            kernel of the histograms). (default: :obj:`False`)

    Returns:
        :class:`scipy.sparse.csr_matrix` of shape :obj:`[num_graphs, D]`.
    """
    from torch_geometric.nn.conv import WLConv

    check_int("hops", hops, 0)
    g = graph_union(graphs)
    names, color = dense_rank(g.label)
    columns, offset = [color], names.numel()
    for _ in range(hops):
        color = WLConv()(color, g.edge_index)
        width = int(color.max()) + 1 if color.numel() else 0
        columns.append(color + offset)
        offset += width
    graph = g.batch.repeat(hops + 1)
    out = _count_matrix(graph, torch.cat(columns), g.num_graphs, offset)
    return _normalize_rows(out) if normalize else out


class WalkFeatures(NamedTuple):
    """k-walk features and the label sequence of every column.

    Attributes:
        features (scipy.sparse.csr_matrix): :obj:`[num_graphs, S]` counts.
        sequences (torch.Tensor): :obj:`[S, k + 1]` the node-label sequence
            (original labels) of every column.
    """

    features: sp.csr_matrix
    sequences: Tensor


@cpu_by_default
def walk_features(
    graphs,
    length: int = 5,
    cumulative: bool = False,
    node_norm: bool = False,
    normalize: bool = False,
    return_sequences: bool = False,
) -> Union[sp.csr_matrix, WalkFeatures]:
    r"""k-walk features ("KW"): label sequences of walks with :obj:`length` edges.

    A walk :math:`v_0 v_1 \cdots v_k` follows edges :math:`v_{i+1} \in
    N_{v_i}` (node :obj:`edge_index[1]` reaches :obj:`edge_index[0]`, the
    direction in which KONG collects). Let :math:`w^{(j)}_v` count the walks
    with :math:`j` edges from :math:`v` by label sequence
    :math:`(l_0, \ldots, l_j)`, computed with sparse products
    :math:`W^{(j)} = L (A W^{(j-1)})` (:math:`L` prepends the label of
    :math:`v`; only sequences that occur are stored). With
    :math:`w_v = w^{(k)}_v`, or with :obj:`cumulative=True` the
    concatenation :math:`w_v = w^{(0)}_v \oplus \cdots \oplus w^{(k)}_v`,

    .. math::
        \phi(G) = \sum_{v \in G} w_v \quad \textrm{or, with node\_norm,}
        \quad \phi(G) = \sum_{v \in G} w_v / \|w_v\|,

    the second being the cosine base kernel :math:`p = 1` used for KONG
    (:mod:`kong_pyg.kernels`), applied to walk counts.

    Args:
        graphs: A PyG dataset or a list of :class:`~torch_geometric.data.Data`.
        length (int, optional): The walk length :math:`k` (edges).
            (default: :obj:`5`)
        cumulative (bool, optional): All lengths :math:`0, \ldots, k`, each
            its own block of columns. (default: :obj:`False`)
        node_norm (bool, optional): Normalize each node's walk vector.
            (default: :obj:`False`)
        normalize (bool, optional): L2-normalize each graph row.
            (default: :obj:`False`)
        return_sequences (bool, optional): Also return the label sequence of
            every column, as :class:`WalkFeatures` (not with
            :obj:`cumulative`). (default: :obj:`False`)

    Returns:
        :class:`scipy.sparse.csr_matrix` :obj:`[num_graphs, S]`, or
        :class:`WalkFeatures` when :obj:`return_sequences`.
    """
    check_int("length", length, 0)
    if return_sequences and cumulative:
        raise ValueError("'return_sequences' needs 'cumulative=False' (blocks of several lengths)")
    g = graph_union(graphs)
    n = g.label.numel()
    names, label = dense_rank(g.label)
    src, dst = g.edge_index
    ignore_sparse_notices()  # (before the first tensor is made: PyTorch 2.11 gives its notice there)
    adj = torch.sparse_coo_tensor(
        torch.stack([dst, src]), torch.ones(src.numel(), dtype=torch.float64), (n, n), check_invariants=False
    ).coalesce()
    # W^(0): one walk per node, sequence id = its label id
    width = names.numel()
    walk = torch.sparse_coo_tensor(
        torch.stack([torch.arange(n), label]), torch.ones(n, dtype=torch.float64), (n, width),
        check_invariants=False,
    ).coalesce()
    blocks: List[Tuple[Tensor, Tensor, Tensor]] = []  # (node, column, count) of kept lengths
    offset = 0
    history: List[Tuple[Tensor, Tensor]] = []  # per step: (label id, previous sequence id)
    for step in range(length + 1):
        if step:
            moved = torch.sparse.mm(adj, walk).coalesce()
            node, seq = moved.indices()
            pair = label[node] * max(width, 1) + seq
            uniq, new_seq = torch.unique(pair, return_inverse=True)
            history.append((uniq // max(width, 1), uniq % max(width, 1)))
            width = uniq.numel()
            walk = torch.sparse_coo_tensor(
                torch.stack([node, new_seq]), moved.values(), (n, width), check_invariants=False
            ).coalesce()
        if cumulative or step == length:
            node, seq = walk.indices()
            blocks.append((node, seq + offset, walk.values()))
            offset += width
    node, col, val = (torch.cat(part) for part in zip(*blocks))
    if node_norm:
        sq = torch.zeros(n, dtype=torch.float64).index_add_(0, node, val * val)
        val = val / sq.sqrt()[node]
    feats = _count_matrix(g.batch[node], col, g.num_graphs, offset, val)
    if normalize:
        feats = _normalize_rows(feats)
    if return_sequences:
        return WalkFeatures(feats, _decode(history, width, names))
    return feats


def _decode(history: List[Tuple[Tensor, Tensor]], width: int, names: Tensor) -> Tensor:
    """The label sequences (first node first) of the final sequence ids."""
    seq = torch.arange(width)
    out = []
    for first, prev in reversed(history):  # the last step prepended the first node's label
        out.append(first[seq])
        seq = prev[seq]
    out.append(seq)  # a step-0 id is the label id of the walk's last node
    return names[torch.stack(out, dim=1)]


@cpu_by_default
def sp_features(graphs, normalize: bool = False) -> sp.csr_matrix:
    r"""Labelled shortest-path features ("SP", Borgwardt and Kriegel, ICDM 2005).

    The explicit map of the labelled shortest-path kernel with a Dirac
    kernel on (start label, end label, length): every ordered pair of
    distinct nodes :math:`(u, v)` with a path from :math:`u` to :math:`v`
    (along :obj:`edge_index[1] -> edge_index[0]`, as GraKeL reads the
    matrices of :func:`grakel_graphs`) counts once in the column
    :math:`(l(u), l(v), d(u, v))`, :math:`d` the number of edges of a
    shortest path. Its linear kernel is GraKeL's
    :class:`~grakel.ShortestPath` (:obj:`with_labels=True`) on the same
    graphs, which the tests check; this map needs no GraKeL. Distances come
    from SciPy's breadth-first shortest paths, one graph at a time.

    Args:
        graphs: A PyG dataset or a list of :class:`~torch_geometric.data.Data`.
        normalize (bool, optional): L2-normalize each row (the normalised
            kernel :math:`K(G, H) / \sqrt{K(G, G) K(H, H)}`). (default: :obj:`False`)

    Returns:
        :class:`scipy.sparse.csr_matrix` of shape :obj:`[num_graphs, D]`.
    """
    from scipy.sparse.csgraph import shortest_path

    g = graph_union(graphs)
    names, label = dense_rank(g.label)
    L = max(names.numel(), 1)
    sizes = torch.bincount(g.batch, minlength=g.num_graphs).tolist()
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    src, dst = g.edge_index.numpy()
    n_all = g.label.numel()
    adj = sp.csr_matrix((np.ones(src.size), (dst, src)), shape=(n_all, n_all))
    lab = label.numpy().astype(np.int64)
    keys, owners = [], []
    for i in range(g.num_graphs):  # one C call per graph (the pairs of a graph are dense anyway)
        lo, hi = int(starts[i]), int(starts[i + 1])
        if hi - lo < 2:
            continue
        dist = shortest_path(adj[lo:hi, lo:hi], method="D", unweighted=True)
        u, v = np.nonzero(np.isfinite(dist) & (dist > 0))
        d = dist[u, v].astype(np.int64)
        keys.append((d * L + lab[lo + u]) * L + lab[lo + v])
        owners.append(np.full(u.size, i, dtype=np.int64))
    if not keys:
        return sp.csr_matrix((g.num_graphs, 1))
    uniq, col = np.unique(np.concatenate(keys), return_inverse=True)
    out = _count_matrix(torch.from_numpy(np.concatenate(owners)), torch.from_numpy(col.reshape(-1)),
                        g.num_graphs, uniq.size)
    return _normalize_rows(out) if normalize else out


def grakel_graphs(graphs) -> list:
    """GraKeL input of every graph: [adjacency matrix, {node: label}].

    Node ids are local; dense matrices keep isolated nodes, which GraKeL's
    edge-dictionary format drops. Entries are 0/1: GraKeL reads an entry as
    an edge's length (ShortestPath), so parallel edges are one edge here;
    GraKeL's WL sees each neighbor once, where PyG's (``wl``) counts parallel
    edges, so the two WL rows agree on simple graphs only.
    """
    g = graph_union(graphs)
    sizes = torch.bincount(g.batch, minlength=g.num_graphs)
    starts = torch.cat([torch.zeros(1, dtype=torch.long), sizes.cumsum(0)])
    src, dst = g.edge_index
    owner = g.batch[dst]
    order = torch.argsort(owner, stable=True)
    local_src = (src - starts[g.batch[src]])[order].numpy()
    local_dst = (dst - starts[owner])[order].numpy()
    e_ptr = torch.cat([torch.zeros(1, dtype=torch.long),
                       torch.bincount(owner, minlength=g.num_graphs).cumsum(0)])
    lab = g.label.numpy()
    out = []
    for i in range(g.num_graphs):
        n, lo, hi = int(sizes[i]), int(e_ptr[i]), int(e_ptr[i + 1])
        adj = np.zeros((n, n))
        adj[local_dst[lo:hi], local_src[lo:hi]] = 1.0  # (0/1: an entry is an edge length to GraKeL)
        first = int(starts[i])
        out.append([adj, {v: int(lab[first + v]) for v in range(n)}])
    return out


def grakel_gram(graphs, kernel: str = "sp", hops: int = 2) -> np.ndarray:
    r"""The Gram matrix of a GraKeL kernel on all graphs.

    Args:
        graphs: A PyG dataset or a list of :class:`~torch_geometric.data.Data`.
        kernel (str, optional): :obj:`"sp"` (labeled shortest-path kernel,
            Borgwardt and Kriegel 2005) or :obj:`"wl"` (Weisfeiler-Lehman
            subtree kernel with :obj:`hops` iterations). (default: :obj:`"sp"`)
        hops (int, optional): WL iterations. (default: :obj:`2`)

    Returns:
        :class:`numpy.ndarray` :obj:`[num_graphs, num_graphs]`.
    """
    try:
        import grakel
    except ImportError as err:
        raise ImportError(
            f"grakel_gram (kernel={kernel!r}; the 'wl-grakel' baseline) needs GraKeL: pip install "
            "'kong-pyg[bench]'"
        ) from err
    if kernel == "sp":
        model = grakel.ShortestPath(with_labels=True, normalize=False)
    elif kernel == "wl":
        check_int("hops", hops, 0)
        model = grakel.WeisfeilerLehman(n_iter=hops, normalize=False,
                                        base_graph_kernel=grakel.VertexHistogram)
    else:
        raise ValueError(f"'kernel' must be 'sp' or 'wl' (got {kernel!r})")
    return np.asarray(model.fit_transform(grakel_graphs(graphs)), dtype=np.float64)


__all__ = [
    "wl_features",
    "walk_features",
    "sp_features",
    "WalkFeatures",
    "grakel_gram",
    "grakel_graphs",
    "graph_union",
    "GraphUnion",
]
