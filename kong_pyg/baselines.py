r"""Two classic unordered baselines as explicit sparse feature maps.

* :func:`wl_features`: the Weisfeiler-Lehman subtree map
  (`Shervashidze et al., JMLR 2011
  <https://www.jmlr.org/papers/v12/shervashidze11a.html>`_): per graph, the
  histogram of node colors of every WL iteration :math:`0, \ldots, h`.
* :func:`walk_features`: a walk kernel ("KW"): per graph, the counts of the
  label sequences :math:`(l(v_0), \ldots, l(v_j))` of the walks
  :math:`v_0 \to \cdots \to v_j` along the edges, :math:`j = 0, \ldots,
  \ell`, each length its own block.

Both ignore the neighbor order (WL colors are multisets, walks counts add
over the neighborhood in any order), which is what makes them baselines for
KONG's ordered k-grams. Both run on a whole list of graphs at once with
vectorized torch ops, read graphs like :class:`~kong_pyg.KongVectorizer`
(node labels :obj:`x`; the direction rule of PyG's default flow: node
:math:`i` collects from the sources of its incoming edges) and number the
columns in order of first appearance over the graphs given (they are
transductive: compute the features of all graphs, then split).
"""
from typing import Tuple

import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor

from .exact import KeyVocab
from .hashing import row_fingerprint
from .inputs import check_int, labels, wl_relabel
from .ordering import ordered_neighborhoods
from .vectorizer import iter_graph_batches


def _graph_rows(batch: Tensor, keys: Tensor, vals: Tensor, vocab: KeyVocab, num_graphs: int):
    """Sum :obj:`vals` per (graph, column of key)."""
    col = vocab.lookup(keys, grow=True)
    width = max(len(vocab), 1)
    pair, inv = torch.unique(batch * width + col, return_inverse=True)
    tot = torch.zeros(pair.numel(), dtype=torch.float64).index_add_(0, inv, vals)
    return (pair // width).numpy(), (pair % width).numpy(), tot.numpy()


def _stack(parts, num_graphs: int, width: int) -> sp.csr_matrix:
    mats = [sp.csr_matrix((v, (r, c)), shape=(n, width)) for r, c, v, n in parts]
    out = sp.vstack(mats, format="csr") if mats else sp.csr_matrix((0, width))
    out.sort_indices()
    return out


def _normalize_rows(x: sp.csr_matrix) -> sp.csr_matrix:
    norm = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
    norm[norm == 0] = 1.0
    return sp.diags(1.0 / norm) @ x


def wl_features(graphs, hops: int = 1, normalize: bool = False, batch_size: int = 1024) -> sp.csr_matrix:
    r"""Weisfeiler-Lehman subtree features, :obj:`[n_graphs, D]` (CSR).

    .. math::
        \phi(G) = \bigoplus_{i=0}^{h} \big(|\{v \in G : c_i(v) = \sigma\}|
        \big)_{\sigma}, \qquad c_0 = l, \quad
        c_i(v) = \mathrm{hash}(c_{i-1}(v), \{\!\{c_{i-1}(u) : u \in N_v\}\!\})

    Colors are content-addressed fingerprints (:func:`kong_pyg.inputs.wl_relabel`),
    so equal colors agree across graphs and batches.

    Args:
        graphs (sequence of Data or a PyG dataset): Graphs with node labels
            :obj:`x`.
        hops (int, optional): WL iterations :math:`h`. (default: :obj:`1`)
        normalize (bool, optional): L2-normalize each row (the cosine
            kernel of the histograms). (default: :obj:`False`)
        batch_size (int, optional): Graphs per batch. (default: :obj:`1024`)
    """
    check_int("hops", hops, 0)
    check_int("batch_size", batch_size, 1)
    vocab, parts = KeyVocab(), []
    for gb in iter_graph_batches(graphs, batch_size, edge_labels=False, edge_order_attr=None):
        n = gb.x.size(0)
        color = labels(gb.x, "x", n)
        hood = ordered_neighborhoods(gb.edge_index, n)
        keys, rows = [], []
        for i in range(hops + 1):
            if i:
                color = wl_relabel(color, hood)
            level = torch.full_like(color, i)
            keys.append(row_fingerprint(torch.stack([level, color], dim=1)))
            rows.append(gb.batch)
        ones = torch.ones(n * (hops + 1), dtype=torch.float64)
        r, c, v = _graph_rows(torch.cat(rows), torch.cat(keys), ones, vocab, gb.num_graphs)
        parts.append((r, c, v, gb.num_graphs))
    out = _stack(parts, len(graphs), len(vocab))
    return _normalize_rows(out) if normalize else out


def _walk_step(node: Tensor, code: Tensor, val: Tensor, hood, node_label: Tensor, num_nodes: int
               ) -> Tuple[Tensor, Tensor, Tensor]:
    """Extend every walk ending at a node by one edge (sparse, vectorized)."""
    order = torch.sort(node, stable=True).indices
    node, code, val = node[order], code[order], val[order]
    count = torch.bincount(node, minlength=num_nodes)
    start = torch.zeros_like(count)
    start[1:] = torch.cumsum(count, 0)[:-1]
    # every (edge u -> v) times every entry of u
    reps = count[hood.nbr]
    edge = torch.repeat_interleave(torch.arange(hood.nbr.numel()), reps)
    offset = torch.arange(edge.numel()) - torch.repeat_interleave(torch.cumsum(reps, 0) - reps, reps)
    src_entry = start[hood.nbr[edge]] + offset
    dst = hood.center[edge]
    new_code = row_fingerprint(torch.stack([code[src_entry], node_label[dst]], dim=1))
    key = torch.stack([dst, new_code], dim=1)
    uniq, inv = torch.unique(key, dim=0, return_inverse=True)
    tot = torch.zeros(uniq.size(0), dtype=val.dtype).index_add_(0, inv, val[src_entry])
    return uniq[:, 0], uniq[:, 1], tot


def walk_features(
    graphs,
    length: int = 1,
    node_norm: bool = True,
    normalize: bool = False,
    batch_size: int = 1024,
) -> sp.csr_matrix:
    r"""Walk-kernel features ("KW"), :obj:`[n_graphs, D]` (CSR).

    For node :math:`v`, :math:`w_v` counts the label sequences of the walks
    of length :math:`j = 0, \ldots, \ell` that *end* at :math:`v` (along
    edges :math:`u \to v`), each :math:`j` its own block; the graph map is

    .. math::
        \phi(G) = \sum_{v \in G} w_v / \|w_v\| \quad (\textrm{node\_norm}),
        \qquad \phi(G) = \sum_{v \in G} w_v \quad \textrm{otherwise},

    the second being the classic count of all labelled walks of length
    :math:`\le \ell`; :obj:`node_norm` is the cosine base kernel
    :math:`p = 1` used for KONG (SPEC 3), applied to walk counts.
    Walks are computed as sparse (node, sequence) counts propagated edge by
    edge with vectorized joins; sequences are 58-bit fingerprints.

    Args:
        graphs (sequence of Data or a PyG dataset): Graphs with node labels.
        length (int, optional): The longest walk :math:`\ell` (in edges).
            (default: :obj:`1`)
        node_norm (bool, optional): Normalize each node's walk vector.
            (default: :obj:`True`)
        normalize (bool, optional): L2-normalize each graph row.
            (default: :obj:`False`)
        batch_size (int, optional): Graphs per batch. (default: :obj:`1024`)
    """
    check_int("length", length, 0)
    check_int("batch_size", batch_size, 1)
    vocab, parts = KeyVocab(), []
    for gb in iter_graph_batches(graphs, batch_size, edge_labels=False, edge_order_attr=None):
        n = gb.x.size(0)
        lab = labels(gb.x, "x", n)
        hood = ordered_neighborhoods(gb.edge_index, n)
        node = torch.arange(n)
        code = row_fingerprint(lab.view(-1, 1))
        val = torch.ones(n, dtype=torch.float64)
        levels = [(node, code, val)]
        for _ in range(length):
            node, code, val = _walk_step(node, code, val, hood, lab, n)
            levels.append((node, code, val))
        nodes = torch.cat([lv[0] for lv in levels])
        codes = torch.cat([lv[1] for lv in levels])
        vals = torch.cat([lv[2] for lv in levels])
        if node_norm:
            sq = torch.zeros(n, dtype=torch.float64).index_add_(0, nodes, vals * vals)
            vals = vals / sq.sqrt()[nodes]
        r, c, v = _graph_rows(gb.batch[nodes], codes, vals, vocab, gb.num_graphs)
        parts.append((r, c, v, gb.num_graphs))
    out = _stack(parts, len(graphs), len(vocab))
    return _normalize_rows(out) if normalize else out


__all__ = ["wl_features", "walk_features"]
