import random
from collections import Counter

import numpy as np
import pytest
from helpers import random_graph, to_data

from kong_pyg.baselines import walk_features, wl_features


def brute_walks(g, length):
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
def test_walk_features_match_brute_force(length):
    X = walk_features(DATA, length, node_norm=False, batch_size=5).toarray()
    Xn = walk_features(DATA, length, node_norm=True).toarray()
    per = [brute_walks(g, length) for g in GRAPHS]
    tot = [sum(p, Counter()) for p in per]
    for i in range(len(GRAPHS)):
        for j in range(len(GRAPHS)):
            assert np.isclose(X[i] @ X[j], dot(tot[i], tot[j]))
            cos = sum(dot(a, b) / np.sqrt(dot(a, a) * dot(b, b)) for a in per[i] for b in per[j])
            assert np.isclose(Xn[i] @ Xn[j], cos)


@pytest.mark.parametrize("hops", [0, 1, 2])
def test_wl_features_match_brute_force(hops):
    X = wl_features(DATA, hops, batch_size=4).toarray()
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
    with pytest.raises(ValueError, match="'hops'"):
        wl_features(DATA, -2)
