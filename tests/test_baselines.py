import random
from collections import Counter

import numpy as np
import pytest
import torch
from helpers import random_graph, to_data

from kong_pyg.datasets import load_tu
from kong_pyg.evaluation.baselines import grakel_gram, walk_features, wl_features


def brute_walks_per_node(g, length):
    labels, edges, _ = g
    n = len(labels)
    cur = [Counter({(labels[v],): 1}) for v in range(n)]
    per = [Counter({(0,) + k: c for k, c in cur[v].items()}) for v in range(n)]
    for j in range(1, length + 1):
        nxt = [Counter() for _ in range(n)]
        for a, b in edges:  # b collects from a
            for s, c in cur[a].items():
                nxt[b][s + (labels[b],)] += c
        cur = nxt
        for v in range(n):
            per[v].update({(j,) + k: c for k, c in cur[v].items()})
    return per


def brute_wl(g, hops):
    labels, edges, _ = g
    color = list(labels)
    out = Counter((0, c) for c in color)
    for it in range(1, hops + 1):
        color = [(color[v], tuple(sorted(color[a] for a, b in edges if b == v))) for v in range(len(labels))]
        out.update((it, c) for c in color)
    return out


def dot(a, b):
    return sum(a[k] * b[k] for k in a)


GRAPHS = [random_graph(random.Random(s)) for s in range(14)]
DATA = [to_data(g) for g in GRAPHS]


@pytest.mark.parametrize("length", [0, 1, 2])
def test_cumulative_walk_features_match_brute_force(length):
    X = walk_features(DATA, length, cumulative=True).toarray()
    Xn = walk_features(DATA, length, cumulative=True, node_norm=True).toarray()
    per = [brute_walks_per_node(g, length) for g in GRAPHS]
    tot = [sum(p, Counter()) for p in per]
    for i in range(len(GRAPHS)):
        for j in range(len(GRAPHS)):
            assert np.isclose(X[i] @ X[j], dot(tot[i], tot[j]))
            cos = sum(dot(a, b) / np.sqrt(dot(a, a) * dot(b, b)) for a in per[i] for b in per[j])
            assert np.isclose(Xn[i] @ Xn[j], cos)


@pytest.mark.parametrize("hops", [0, 1, 2])
def test_wl_features_match_brute_force(hops):
    X = wl_features(DATA, hops).toarray()
    ref = [brute_wl(g, hops) for g in GRAPHS]
    K = X @ X.T
    for i in range(len(GRAPHS)):
        for j in range(len(GRAPHS)):
            assert K[i, j] == dot(ref[i], ref[j])
    Xn = wl_features(DATA, hops, normalize=True).toarray()
    assert np.allclose(np.linalg.norm(Xn, axis=1), 1.0)


def test_baselines_ignore_order():
    d = DATA[3]
    flipped = d.clone()
    flipped.edge_index = d.edge_index.flip(1)
    for f in (lambda g: wl_features(g, 1), lambda g: walk_features(g, 2)):
        X = f([d, flipped]).toarray()
        assert np.allclose(X[0], X[1])


def test_bad_arguments():
    with pytest.raises(ValueError, match="'length'"):
        walk_features(DATA, -1)
    with pytest.raises(ValueError, match="'return_sequences'"):
        walk_features(DATA, 2, cumulative=True, return_sequences=True)
    with pytest.raises(ValueError, match="'hops'"):
        wl_features(DATA, -2)


def brute_walks(labels, edges, length):
    """Counter of label sequences of walks v0..vk with v_{i+1} -> v_i an edge."""
    nbrs = {v: [] for v in range(len(labels))}
    for u, v in edges:  # v collects from u
        nbrs[v].append(u)
    out = Counter()

    def go(v, seq, left):
        seq = seq + (labels[v],)
        if left == 0:
            out[seq] += 1
            return
        for u in nbrs[v]:
            go(u, seq, left - 1)

    for v in range(len(labels)):
        go(v, (), length)
    return out


@pytest.mark.parametrize("length", [0, 1, 2, 3])
def test_walk_counts_match_brute_force(length):
    rng = random.Random(length)
    graphs = [random_graph(rng, max_nodes=5, max_edges=8, num_labels=3) for _ in range(25)]
    feats = walk_features([to_data(g) for g in graphs], length=length, return_sequences=True)
    assert feats.sequences.shape[1] == length + 1
    seqs = [tuple(s) for s in feats.sequences.tolist()]
    assert len(set(seqs)) == len(seqs)
    X = feats.features.toarray()
    for i, (labels, edges, _) in enumerate(graphs):
        got = Counter({seqs[j]: X[i, j] for j in np.nonzero(X[i])[0]})
        assert got == brute_walks(labels, edges, length)


def test_walk_features_directed_and_onehot_labels():
    # 0 collects from 1 and 2; 1 collects from 2: walks follow incoming edges
    x = torch.eye(3)[[2, 0, 1]]  # one-hot labels 2, 0, 1
    g = to_data(([2, 0, 1], [(1, 0), (2, 0), (2, 1)], None))
    g.x = x
    feats = walk_features([g], length=2, return_sequences=True)
    rows = {tuple(s): v for s, v in zip(feats.sequences.tolist(), feats.features.toarray()[0])}
    assert rows == {(2, 0, 1): 1.0}  # the only 2-walk: 0 -> 1 -> 2


def test_wl_features_counts_and_invariance():
    labels = [0, 1, 1, 2]
    edges = [(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2)]
    g = to_data((labels, edges, None))
    perm = [2, 0, 3, 1]  # node i becomes perm[i]
    h = to_data(([labels[perm.index(j)] for j in range(4)], [(perm[u], perm[v]) for u, v in edges], None))
    X = wl_features([g, h], hops=2).toarray()
    assert np.array_equal(X[0], X[1])
    assert X.sum(axis=1).tolist() == [12.0, 12.0]  # 4 nodes x 3 iterations
    X0 = wl_features([g, h], hops=0).toarray()
    assert X0[0].tolist() == [1.0, 2.0, 1.0]


def test_wl_matches_grakel_on_mutag(tmp_path):
    pytest.importorskip("grakel")
    ds = load_tu(cache=tmp_path)[:30]
    for hops in (1, 2):
        X = wl_features(ds, hops=hops)
        K = grakel_gram(ds, "wl", hops=hops)
        assert np.allclose((X @ X.T).toarray(), K)


def test_grakel_sp_gram_is_a_kernel(tmp_path):
    pytest.importorskip("grakel")
    ds = load_tu(cache=tmp_path)[:20]
    K = grakel_gram(ds, "sp")
    assert K.shape == (20, 20) and np.allclose(K, K.T)
    assert np.linalg.eigvalsh(K).min() > -1e-6 * np.abs(K).max()
    # the path 0-1-2 labelled 0,1,0: ordered pairs (label u, label v, distance) are
    # (0,1,1) x2, (1,0,1) x2, (0,0,2) x2, so K = 3 * 2^2
    g = to_data(([0, 1, 0], [(0, 1), (1, 0), (1, 2), (2, 1)], None))
    assert grakel_gram([g], "sp")[0, 0] == pytest.approx(12.0)


def test_grakel_missing_message(monkeypatch):
    import builtins

    real = builtins.__import__

    def fake(name, *args, **kwargs):
        if name == "grakel":
            raise ImportError("no grakel")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake)
    with pytest.raises(ImportError, match=r"kong-pyg\[bench\]"):
        grakel_gram([to_data(([0], [], None))], "sp")


def test_parallel_edges_and_grakel_wl_without_iterations():
    """GraKeL read a doubled edge as an edge of length 2 (its SP kernel differed from sp_features), and
    wl-grakel with hops 0 failed inside GraKeL during the CV."""
    import torch
    from torch_geometric.data import Data

    import kong_pyg
    from kong_pyg.evaluation.baselines import grakel_gram, sp_features

    with pytest.raises(ValueError, match="'hops' must be >= 1"):
        kong_pyg.classify("MUTAG", method="wl-grakel", grid={"hops": [0, 1]}, repeats=1, folds=3)
    pytest.importorskip("grakel")
    x = torch.tensor([0, 0])
    double = Data(x=x, edge_index=torch.tensor([[0, 0, 1, 1], [1, 1, 0, 0]]))
    single = Data(x=x, edge_index=torch.tensor([[0, 1], [1, 0]]))
    X = sp_features([double, single])
    K = (X @ X.T).toarray() if hasattr(X, "toarray") else X @ X.T
    assert np.array_equal(grakel_gram([double, single], "sp"), K)


def test_baselines_read_a_sparse_adjacency_as_its_edges():
    """WL, SP and k-walk features do not read the neighbor order, so a graph with only `adj_t`
    (ToSparseTensor) gives the features of its (merged) edges; it was refused with advice about k."""
    import torch_geometric.transforms as T
    from torch_geometric.data import Data
    from torch_geometric.utils import coalesce

    from kong_pyg.evaluation.baselines import sp_features

    rng = random.Random(3)
    gs = [to_data(random_graph(rng, 7, 12, 3)) for _ in range(6)]
    plain = [Data(x=g.x, edge_index=coalesce(g.edge_index, num_nodes=g.num_nodes)) for g in gs]
    sparse = [T.ToSparseTensor(layout=torch.sparse_csr)(d.clone()) for d in plain]
    assert all(getattr(d, "edge_index", None) is None for d in sparse)
    for features in (lambda g: wl_features(g, hops=2), sp_features, lambda g: walk_features(g, 3)):
        assert abs(features(sparse) - features(plain)).max() == 0
