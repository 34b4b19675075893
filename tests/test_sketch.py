import random

import numpy as np
import pytest
import torch
from helpers import random_graph, to_data
from hypothesis import given, settings
from hypothesis import strategies as st
from torch_geometric.data import Batch
from torch_geometric.nn import global_add_pool

from kong_pyg import KongSketch, KongVectorizer

CONFIGS = [
    dict(k=2, hops=2, traversal="bfs"),
    dict(k=3, hops=2, traversal="wl", kernel="cosine"),
    dict(k=2, hops=1, traversal="bfs", degree=2, const=1.0),
    dict(k=2, hops=2, traversal="bfs", degree=3, kernel="cosine"),
    dict(k=1, hops=3, traversal="wl", degree=2, relabel=True),
]


def _graphs(seed, count=6, edge_labels=True):
    rng = random.Random(seed)
    return [to_data(random_graph(rng, max_nodes=7, max_edges=12, edge_labels=edge_labels))
            for _ in range(count)]


def _exact_gram(graphs, cfg):
    X = KongVectorizer(**cfg).fit_transform(graphs)
    return (X @ X.T).toarray()


@pytest.mark.parametrize("cfg", CONFIGS)
def test_sketch_is_unbiased(cfg):
    graphs = _graphs(3)
    K = _exact_gram(graphs, cfg)
    est = np.stack([
        (lambda X: X @ X.T)(KongVectorizer(dim=64, seed=s, **cfg).fit_transform(graphs))
        for s in range(200)
    ])
    mean, sem = est.mean(0), est.std(0) / np.sqrt(len(est))
    # every entry within 4.5 standard errors of the exact kernel value
    assert np.all(np.abs(mean - K) <= 4.5 * sem + 1e-9 * np.abs(K).max())


@pytest.mark.parametrize("cfg", CONFIGS[:3])
def test_error_shrinks_like_one_over_sqrt_b(cfg):
    graphs = _graphs(4, count=8)
    K = _exact_gram(graphs, cfg)
    errs = {}
    for b in (32, 512):
        e = []
        for s in range(40):
            X = KongVectorizer(dim=b, seed=s, **cfg).fit_transform(graphs)
            e.append(np.mean((X @ X.T - K) ** 2))
        errs[b] = np.sqrt(np.mean(e))
    # 16x more buckets: RMS error about 4x smaller; allow 2.5x..8x
    ratio = errs[32] / errs[512]
    assert 2.5 < ratio < 8, ratio


@pytest.mark.parametrize("cfg", CONFIGS)
def test_layer_readout_pool_and_vectorizer_agree(cfg):
    graphs = _graphs(5)
    batch = Batch.from_data_list(graphs)
    layer = KongSketch(dim=128, seed=11, dtype=torch.float64, **cfg)
    node = layer(batch.x, batch.edge_index, batch.edge_attr)
    assert node.shape == (batch.num_nodes, 128) and node.dtype == torch.float64
    pooled = global_add_pool(node, batch.batch)
    readout = layer.readout(batch.x, batch.edge_index, batch.batch, batch.edge_attr)
    vec = KongVectorizer(dim=128, seed=11, batch_size=4, **cfg).fit_transform(graphs)
    torch.testing.assert_close(pooled, readout, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(vec, readout.numpy(), rtol=1e-10, atol=1e-9)


@pytest.mark.parametrize("cfg", CONFIGS)
def test_dense_propagation_equals_sparse_rows(cfg, monkeypatch):
    """forward() propagates dense sketches with MessagePassing.propagate; readout() and
    engine.node_maps go through exact sparse rows, switching to dense propagation past a
    budget: all three give the same node maps."""
    from kong_pyg import engine

    if cfg.get("kernel") == "cosine":
        cfg = dict(cfg, norm="sketch")
    graphs = _graphs(6)
    batch = Batch.from_data_list(graphs)
    layer = KongSketch(dim=64, seed=2, dtype=torch.float64, **cfg)
    prep = layer.prepare(batch.x, batch.edge_index, batch.edge_attr)
    steps = layer.occurrences(prep)
    assert layer.node_counts(prep, steps).rows is not None
    sparse = engine.node_maps(layer.config, layer.hashes, prep, steps)
    propagated = layer(batch.x, batch.edge_index, batch.edge_attr)
    torch.testing.assert_close(propagated, sparse, rtol=1e-10, atol=1e-9)
    monkeypatch.setattr(KongSketch, "switch_ratio", 0.0)
    counts = layer.node_counts(prep, steps)
    if cfg["hops"] > 1:  # (k = 2, hops = 1: nothing to switch after step 0)
        assert counts.dense is not None
    readout = layer.readout(batch.x, batch.edge_index, batch.batch, batch.edge_attr)
    torch.testing.assert_close(readout, global_add_pool(sparse, batch.batch), rtol=1e-10, atol=1e-9)


def test_same_seed_same_output_other_seed_other_output():
    graphs = _graphs(7)
    b = Batch.from_data_list(graphs)
    a1 = KongSketch(k=2, dim=32, seed=1)(b.x, b.edge_index)
    a2 = KongSketch(k=2, dim=32, seed=1)(b.x, b.edge_index)
    a3 = KongSketch(k=2, dim=32, seed=2)(b.x, b.edge_index)
    assert torch.equal(a1, a2) and not torch.equal(a1, a3)
    layer = KongSketch(k=2, dim=32, seed=1)
    state = layer.state_dict()
    assert set(state) == {"hashes.coef", "hashes.shift", "hashes.flip", "hashes.scheme"}
    assert int(state["hashes.scheme"]) == 2  # the hash scheme
    layer.reset_parameters()
    assert all(torch.equal(state[k], v) for k, v in layer.state_dict().items())
    assert len(list(layer.parameters())) == 0


def test_poly_p1_counts_are_integers():
    graphs = _graphs(8)
    b = Batch.from_data_list(graphs)
    out = KongSketch(k=3, hops=2, dim=16, dtype=torch.float64)(b.x, b.edge_index, b.edge_attr)
    assert torch.equal(out, out.round())


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 10_000), st.sampled_from([1, 2, 3]),
       st.sampled_from(["bfs", "wl"]))
def test_sketch_is_linear(seed_a, seed_b, k, traversal):
    """The sketch of a disjoint union is the sum of the parts' sketches, and
    a graph counted twice (two copies in one graph) sketches to twice its own."""
    ga, gb = _graphs(seed_a, 1)[0], _graphs(seed_b, 1)[0]
    layer = KongSketch(k=k, hops=2, traversal=traversal, dim=64, seed=seed_a, dtype=torch.float64)
    ra = layer.readout(ga.x, ga.edge_index, edge_attr=ga.edge_attr)
    rb = layer.readout(gb.x, gb.edge_index, edge_attr=gb.edge_attr)
    union = Batch.from_data_list([ga, gb])
    ru = layer.readout(union.x, union.edge_index, edge_attr=union.edge_attr)
    torch.testing.assert_close(ru, ra + rb, rtol=0, atol=1e-9)
    two = Batch.from_data_list([ga, ga])
    r2 = layer.readout(two.x, two.edge_index, edge_attr=two.edge_attr)
    torch.testing.assert_close(r2, 2 * ra, rtol=0, atol=1e-9)


def test_cosine_empty_count_vector_gives_zero_not_nan():
    # k = 3 on a graph without edges: every string has one symbol, no 3-grams
    x = torch.tensor([0, 1, 2])
    ei = torch.zeros(2, 0, dtype=torch.long)
    for cfg in (dict(), dict(norm="sketch"), dict(degree=2)):
        out = KongSketch(k=3, hops=2, kernel="cosine", dim=8, **cfg)(x, ei)
        assert torch.equal(out, torch.zeros_like(out))
    X = KongVectorizer(k=3, kernel="cosine").fit_transform([to_data(([0, 1], [], None))])
    assert X.nnz == 0 and not np.isnan(X.toarray()).any()


def test_pyg_scatter_with_and_without_torch_scatter(monkeypatch):
    pytest.importorskip("torch_scatter")
    import torch_geometric.typing as tgt

    graphs = _graphs(9)
    b = Batch.from_data_list(graphs)
    outs = []
    for flag in (True, False):
        monkeypatch.setattr(tgt, "WITH_TORCH_SCATTER", flag)
        layer = KongSketch(k=2, dim=64, degree=2, kernel="cosine", dtype=torch.float64)
        outs.append((layer(b.x, b.edge_index, b.edge_attr),
                     layer.readout(b.x, b.edge_index, b.batch, b.edge_attr)))
        outs.append(KongVectorizer(k=2).fit_transform(graphs).toarray())
    assert torch.equal(outs[0][0], outs[2][0]) and torch.equal(outs[0][1], outs[2][1])
    assert np.array_equal(outs[1], outs[3])


@pytest.mark.parametrize("dim", [1000, 1024])
def test_linear_hash_and_buckets_equal_the_formula_in_python_integers(dim):
    """Extreme codes (below 2^60) and coefficients (up to P - 1): no int64 overflow, the exact value."""
    from kong_pyg.hashing import P, linear_hash
    from kong_pyg.sketch import SketchHashes

    rng = random.Random(3)
    top = (1 << 60) - 1
    codes = [0, 1, top, top - 1, (1 << 30) - 1, 1 << 30] + [rng.randrange(1 << 60) for _ in range(40)]
    grams = torch.tensor([[codes[i], codes[-1 - i], codes[(7 * i) % len(codes)]] for i in range(len(codes))])
    coef = torch.tensor([[P - 1] * 8, [rng.randrange(1, P) for _ in range(8)]])
    for n in (0, 1, 2, 3):
        got = linear_hash(grams[:, :n], coef).tolist()
        for row, gram in zip(got, grams[:, :n].tolist()):
            for f, c in enumerate(coef.tolist()):
                want = c[0] + n * c[1] + sum(c[2 + 2 * j] * (t >> 30) + c[3 + 2 * j] * (t & ((1 << 30) - 1))
                                             for j, t in enumerate(gram))
                assert row[f] == want % P
    def scrambled(v):  # kong_pyg.hashing.scramble in Python integers
        mask = (1 << 31) - 1
        v ^= v >> 16
        v = (v * 0x7FEB352D) & mask
        v ^= v >> 15
        v = (v * 0x046CA68B) & mask
        return v ^ (v >> 16)

    for version in (1, 2):
        hashes = SketchHashes(dim, 2, 3, 3, seed=5, version=version)
        bucket, sign = hashes.hash(grams[:, :2])
        h = linear_hash(grams[:, :2], hashes.coef)
        if version == 2:
            h = torch.tensor([[scrambled(v) for v in row] for row in h.tolist()])
        assert torch.equal(bucket, h[:, :2] % dim) and torch.equal(sign, 1.0 - 2.0 * (h[:, 2:] % 2).double())


def test_scramble_is_a_bijection_of_31_bit_values():
    from kong_pyg.hashing import scramble

    rand = torch.randint(0, 1 << 31, (1 << 20,), generator=torch.Generator().manual_seed(0))
    v = torch.cat([torch.arange(1 << 20), torch.arange((1 << 31) - (1 << 20), 1 << 31), rand]).unique()
    out = scramble(v)
    assert out.min() >= 0 and out.max() < (1 << 31) and out.unique().numel() == v.numel()
    # consecutive even inputs (node codes differ by 2) spread over the low bits
    assert scramble(torch.arange(0, 2 * 4096, 2)).bitwise_and(255).unique().numel() == 256


def test_linear_sketch_constant_holds_sqrt_const_per_node():
    """g(c) = c + sqrt(const) in its own coordinate (kernels.py), so a graph's p = 1 sketch gains
    +-sqrt(const) * |V| in one bucket: the difference from const = 0 is that entry alone. The linear
    route's constant once dropped the node count, and no golden (all at degree 2) noticed."""
    from torch_geometric.data import Data

    g = Data(x=torch.tensor([0, 1, 0, 2]), edge_index=torch.tensor([[0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 3, 2]]))
    h = Data(x=torch.tensor([1, 1]), edge_index=torch.tensor([[0, 1], [1, 0]]))
    opts = dict(k=2, hops=1, dim=4096, seed=0)
    with_const = KongVectorizer(const=4.0, **opts).fit_transform([g, h])
    diff = with_const - KongVectorizer(**opts).fit_transform([g, h])
    for row, n in zip(diff, (4, 2)):
        nz = np.flatnonzero(row)
        assert nz.size == 1 and abs(row[nz[0]]) == 2.0 * n  # (sqrt(4) per node)
    sketch = KongSketch(const=4.0, **opts)
    assert torch.equal(sketch.readout(g.x, g.edge_index).double().view(-1),
                       torch.from_numpy(KongVectorizer(const=4.0, **opts).fit_transform([g])[0]))


def test_dense_propagation_of_a_directed_graph_equals_the_exact_rows(monkeypatch):
    """The vectorizer's dense propagation (the default aggregator, taken when exact rows grow past the
    sketches) multiplies by A, not A^T: on a directed graph the two differ. Every switch test ran on
    undirected graphs or through KongSketch's own propagate."""
    from torch_geometric.data import Data

    from kong_pyg import engine

    g = Data(x=torch.tensor([0, 1, 2, 1]), edge_index=torch.tensor([[0, 1, 2, 0], [1, 2, 3, 2]]))
    opts = dict(k=2, hops=3, dim=32, degree=2, seed=0)
    rows = KongVectorizer(**opts).fit_transform([g])
    monkeypatch.setattr(engine, "SWITCH_RATIO", 0.0)  # (straight to dense propagation)
    dense = KongVectorizer(**opts).fit_transform([g])
    np.testing.assert_allclose(dense, rows, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dim", [63, 64])
def test_tensor_sketch_of_an_odd_size(dim):
    """Tensor-Sketch (p >= 2) multiplies in the Fourier domain: the inverse FFT must be told the sketch
    size, or an odd one loses a column (irfft's default length is even)."""
    g = to_data(random_graph(random.Random(0), 6, 10, 3))
    X = KongVectorizer(k=2, hops=1, dim=dim, degree=2, seed=0).fit_transform([g, g])
    assert X.shape == (2, dim) and np.array_equal(X[0], X[1])
    assert torch.equal(KongSketch(k=2, hops=1, dim=dim, degree=2, seed=0, dtype=torch.float64).readout(
        g.x, g.edge_index, edge_attr=g.edge_attr).view(-1), torch.from_numpy(X[0]))
