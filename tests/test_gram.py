"""kong_pyg.gram_matrix / kernel_matrix: the exact kernel without the explicit map, against oracles."""
import random

import numpy as np
import pytest
import torch
from helpers import oracle_kernel as _oracle
from helpers import random_graph, to_data

from kong_pyg import KongVectorizer


@pytest.mark.parametrize("seed", range(24))
def test_gram_matrix_equals_brute_force(seed):
    """p = 1..4, poly (with const) and cosine, relabel, blended, graph normalization, orders."""
    from kong_pyg import gram_matrix

    rng = random.Random(7000 + seed)
    cfg = dict(k=rng.randint(1, 3), hops=rng.randint(0, 2), traversal=rng.choice(["bfs", "wl"]),
               kernel=["poly", "cosine"][seed % 2], degree=1 + (seed // 2) % 4,
               relabel=rng.randint(0, 1), blended=rng.random() < 0.3, normalize=rng.random() < 0.3,
               order=rng.choice(["edge", "reverse", "consistent"]))
    if cfg["kernel"] == "poly":
        cfg["const"] = rng.choice([0.0, 1.0, 2.5])
    use_el = rng.random() < 0.5
    graphs = [random_graph(rng, max_nodes=6, max_edges=9, edge_labels=use_el) for _ in range(7)]
    orders = [[rng.randint(0, 4) for _ in g[1]] for g in graphs]
    data = [to_data(g) for g in graphs]
    for d, o in zip(data, orders):
        d.edge_order = torch.tensor(o, dtype=torch.long)
    K = _oracle(graphs, orders=orders, seed=2, **cfg)
    G = gram_matrix(data, seed=2, **cfg)
    assert G.dtype == np.float64 and G.shape == (7, 7)
    np.testing.assert_allclose(G, K, rtol=1e-9, atol=1e-9)
    # tiny blocks: the same numbers, block by block
    np.testing.assert_allclose(gram_matrix(data, seed=2, block_entries=5, **cfg), K, rtol=1e-9, atol=1e-9)
    # rows against other graphs: the same column space as all graphs together
    np.testing.assert_allclose(gram_matrix(data[:3], data[3:], seed=2, **cfg), K[:3, 3:], rtol=1e-9,
                               atol=1e-9)


@pytest.mark.parametrize("kernel,degree,relabel", [(k, p, r) for k in ("poly", "cosine")
                                                    for p in (2, 3, 4) for r in (0, 1)])
def test_gram_matrix_equals_explicit_map_on_mutag(kernel, degree, relabel):
    """The paper grid's p >= 2 settings on 40 MUTAG graphs: Gram route == X X^T of the explicit map."""
    from kong_pyg import gram_matrix, kernel_matrix
    from kong_pyg.datasets import load_tu

    graphs = load_tu("MUTAG")[:40]
    cfg = dict(k=1, hops=2, kernel=kernel, degree=degree, relabel=relabel)
    X = KongVectorizer(**cfg).fit_transform(graphs)
    ref = kernel_matrix(X)
    G = gram_matrix(graphs, **cfg)
    np.testing.assert_allclose(G, ref, rtol=1e-10, atol=0)
    assert np.array_equal(G, G.T)


def test_gram_matrix_normalized_against_other_graphs():
    from kong_pyg import gram_matrix
    from kong_pyg.datasets import load_tu

    graphs = load_tu("MUTAG")[:30]
    X = KongVectorizer(kernel="poly", degree=2, normalize=True).fit_transform(graphs)
    K = (X @ X.T).toarray()
    np.testing.assert_allclose(gram_matrix(graphs[:10], graphs[10:], kernel="poly", degree=2, normalize=True),
                               K[:10, 10:], rtol=1e-10)
    np.testing.assert_allclose(np.diag(gram_matrix(graphs, kernel="poly", degree=2, normalize=True)), 1.0)


def test_kernel_matrix_inputs():
    import scipy.sparse as sp

    from kong_pyg import kernel_matrix

    X = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(kernel_matrix(X), X @ X.T)
    np.testing.assert_array_equal(kernel_matrix(sp.csr_matrix(X), torch.ones(1, 2)), X @ np.ones((2, 1)))
    with pytest.raises(ValueError, match="'X' has 2 columns but 'Y' has 3"):
        kernel_matrix(X, np.ones((1, 3)))
    with pytest.raises(ValueError, match="'X' must be 2-D"):
        kernel_matrix(np.ones(3))
    with pytest.raises(TypeError, match="'X' must be \\[n, d\\] numeric features .*not list"):
        kernel_matrix([np.ones(2), np.ones(3)])  # e.g. a list of graphs
    with pytest.raises(TypeError, match="'Y' must be \\[n, d\\] numeric features .*not str"):
        kernel_matrix(X, "abc")
    with pytest.raises(ValueError, match="'X' holds NaN or infinite values"):
        kernel_matrix(np.array([[1.0, np.nan]]))
    with pytest.raises(ValueError, match="'Y' holds NaN or infinite values"):
        kernel_matrix(X, sp.csr_matrix(np.array([[np.inf, 0.0]])))
    for kind in (sp.dok_matrix, sp.lil_matrix, sp.coo_array):  # (a dok_matrix is a dict: it was refused)
        np.testing.assert_array_equal(kernel_matrix(kind(X)), X @ X.T)
    masked = np.ma.masked_array(X, mask=[[False, True], [False, False], [False, False]])
    with pytest.raises(ValueError, match="'X' is a masked array with masked entries"):  # (read unmasked)
        kernel_matrix(masked)
    np.testing.assert_array_equal(kernel_matrix(np.ma.masked_array(X)), X @ X.T)


def test_kernel_matrix_given_graphs_says_to_vectorize_them():
    """A list, tuple, dataset, single graph or object array of graphs was "not list" or "an array of
    <U988" (NumPy read each Data as its key/value pairs); the docstring promised "vectorize them first"."""
    from kong_pyg import kernel_matrix
    from kong_pyg.datasets import load_tu

    ds = load_tu("MUTAG")
    graphs = list(ds[:3])
    arr = np.empty(3, dtype=object)
    arr[:] = graphs
    advice = r"^'X' holds graphs, not features: vectorize them first \(KongVectorizer\(\).fit_transform"
    for X in (graphs, tuple(graphs), ds, graphs[0], arr):
        with pytest.raises(TypeError, match=advice + r"\(graphs\)\), or call gram_matrix\(graphs\)$"):
            kernel_matrix(X)


def test_gram_matrix_refuses_a_sketch():
    from kong_pyg import gram_matrix
    from kong_pyg.datasets import load_tu

    with pytest.raises(ValueError, match="dim=None"):
        gram_matrix(load_tu("MUTAG")[:3], dim=64)


def test_a_users_own_error_about_graph_i_is_left_as_it_was():
    """gram_matrix names graph i of 'graphs' or 'other' in kong_pyg's messages only: a user's data set
    that raises about "graph 1" itself keeps its message."""
    import torch
    from torch_geometric.data import Data

    from kong_pyg import gram_matrix

    g = Data(x=torch.tensor([0, 1]), edge_index=torch.tensor([[0, 1], [1, 0]]))

    class Failing(list):
        def __getitem__(self, i):
            if i == 1:
                raise ValueError("graph 1 failed its transform")
            return list.__getitem__(self, i)

    with pytest.raises(ValueError, match="^graph 1 failed its transform$"):
        gram_matrix([g], Failing([g, g]))



def test_kernel_matrices_too_big_for_memory_are_named_before_any_work(monkeypatch):
    import scipy.sparse as sp

    from kong_pyg import gram_matrix, kernel_matrix, memory

    graphs = [to_data(random_graph(random.Random(s), 5, 6, 2)) for s in range(4)] * 1000
    monkeypatch.setattr(memory, "available_memory", lambda device=None: 300 << 20)
    with pytest.raises(ValueError, match=r"gram_matrix of 4,000 x 4,000 .* 488.3 MiB.* blocks of rows"):
        gram_matrix(graphs, k=2)  # (32 bytes an entry: refused before the node maps of 4,000 graphs)
    K = gram_matrix(graphs, graphs[:8], k=2)
    assert K.shape == (4000, 8) and np.array_equal(K[4:8], K[:4])
    monkeypatch.setattr(memory, "CHECK_FROM_BYTES", 0)
    monkeypatch.setattr(memory, "available_memory", lambda device=None: 20 * 10 * 10 - 1)
    X = np.ones((10, 3))
    assert kernel_matrix(X).shape == (10, 10)  # dense: 9 bytes an entry
    with pytest.raises(ValueError, match=r"kernel_matrix of 10 x 10 rows \('X', 'Y'\).* blocks of rows"):
        kernel_matrix(sp.csr_matrix(X))  # sparse: 20
    assert kernel_matrix(sp.csr_matrix(X), sp.csr_matrix(X[:9])).shape == (10, 9)


SYMMETRY_CASES = [dict(kernel="cosine"), dict(normalize=True), dict(k=2, degree=2, normalize=True),
                  dict(k=2, degree=2, kernel="cosine"),  # (p >= 2 raw, below: pair_kernel's symmetry alone)
                  dict(k=2, degree=3, kernel="cosine"),
                  dict(degree=4, kernel="cosine", relabel=1, block_entries=256)]


@pytest.mark.parametrize("options", SYMMETRY_CASES)
def test_the_gram_matrix_of_one_sequence_is_exactly_symmetric(options):
    """Cosine rows' sparse products and the normalisation's scaling rounded K[i, j] and K[j, i] apart
    (up to 1e-13; thousands of entries), where the code meant it to be exactly symmetric."""
    from kong_pyg import gram_matrix
    from kong_pyg.datasets import load_tu

    graphs = list(load_tu("MUTAG"))[:60]
    K = gram_matrix(graphs, **options)
    assert np.array_equal(K, K.T)
    half = gram_matrix(graphs[:30], graphs, **options)  # (against the other sequence: rounding only)
    np.testing.assert_allclose(half, K[:30], rtol=1e-12, atol=1e-15)


def test_the_mirroring_works_in_place_in_blocks():
    """gram_matrix's memory check budgets 24 bytes an entry; mirroring with whole-matrix temporaries took
    about 34 (review): it now copies blocks of rows in place."""
    import tracemalloc

    from kong_pyg.gram import _mirror_upper

    rng = np.random.default_rng(0)
    for block in (30_000, 2**24):  # (the default: the whole matrix is one diagonal block; index arrays of
        A = rng.random((1500, 1500))  # its size took 1.5x the matrix: review)
        ref = np.triu(A) + np.triu(A, 1).T
        tracemalloc.start()
        try:
            _mirror_upper(A, block)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert np.array_equal(A, ref) and peak < A.nbytes / 20, (block, peak)


@pytest.mark.parametrize("relabel, degree, const", [(0, 2, 0), (1, 2, 0), (2, 3, 0), (2, 2, 1.0)])
def test_blocks_stay_within_block_entries_and_use_only_their_columns(relabel, degree, const, monkeypatch):
    """p >= 2 blocks were [step, step] with step = block_entries / max(graphs, width): one big graph made a
    [U, U] block (24,000 nodes: 9 GB for a 1 x 1 result), and after WL relabelling every block zero-filled a
    dense [width, step] operand (500 small graphs: 10 s where the explicit map takes 0.1 s). Blocks now
    hold at most block_entries entries, and a block's right side only the columns its rows use."""
    from kong_pyg import KongConfig, gram_matrix
    from kong_pyg import node_pairs as g
    from kong_pyg.datasets import load_tu
    from kong_pyg.gram import node_maps

    sizes = []
    products, rights, columns = g._block_products, g._right_block, g._dense_columns

    def block_products(a, lo, hi, rowptr_a, right, entries, work):
        out = products(a, lo, hi, rowptr_a, right, entries, work)
        sizes.append(out.numel())
        return out

    def right_block(b, lo, hi, rowptr_b):
        out = rights(b, lo, hi, rowptr_b)
        entries = b.rows.col[int(rowptr_b[lo]):int(rowptr_b[hi])]
        assert out.cols.numel() == entries.unique().numel()  # (only the columns its rows use)
        assert out.val.numel() == entries.numel()  # (their entries: a copy of part of the input)
        return out

    def dense_columns(right, c0, c1, work):
        out = columns(right, c0, c1, work)
        sizes.append(out.numel())
        return out

    monkeypatch.setattr(g, "_block_products", block_products)
    monkeypatch.setattr(g, "_right_block", right_block)
    monkeypatch.setattr(g, "_dense_columns", dense_columns)
    rng = random.Random(relabel)
    big = to_data(random_graph(rng, 1, 0))
    n = 300
    big.x = torch.tensor([rng.randrange(4) for _ in range(n)])
    big.edge_index = torch.tensor([[rng.randrange(n) for _ in range(3 * n)] for _ in range(2)])
    cases = [[big], [load_tu("MUTAG")[i] for i in range(60)]]
    for graphs in cases:
        opts = dict(k=2, hops=2, degree=degree, relabel=relabel, const=const)  # (const: dense products)
        X = KongVectorizer(**opts).fit_transform(graphs).toarray()
        sizes.clear()
        K = gram_matrix(graphs, block_entries=1024, **opts)
        np.testing.assert_allclose(K, X @ X.T, rtol=1e-12)
        assert sizes and max(sizes) <= 1024
        maps = node_maps(KongConfig(**opts), graphs)
        P = g.pair_kernel(maps, maps, degree, block_entries=1024)  # (half of each block, then A + A^T)
        assert torch.equal(P, P.t())
        np.testing.assert_allclose(P.numpy(), X @ X.T, rtol=1e-12)
        other = graphs[: max(1, len(graphs) // 3)]
        np.testing.assert_allclose(gram_matrix(graphs, other, block_entries=1024, **opts),
                                   X @ X[: len(other)].T, rtol=1e-12)


def _star(leaves: int):
    from torch_geometric.data import Data

    src = torch.arange(1, leaves + 1)
    hub = torch.zeros(leaves, dtype=torch.long)
    return Data(x=torch.zeros(leaves + 1, dtype=torch.long),
                edge_index=torch.stack([torch.cat([src, hub]), torch.cat([hub, src])]))


def _star_kernel(a: int, b: int, degree: int) -> int:
    """K(star a, star b) in integers: k = 1, hops = 1, one label; maps (1, deg): <c_v, c_w> = 1 + d_v d_w."""
    degrees = {n: [n] + [1] * n for n in (a, b)}
    counts = {n: {d: degrees[n].count(d) for d in set(degrees[n])} for n in (a, b)}
    return sum(ca * cb * (1 + da * db) ** degree
               for da, ca in counts[a].items() for db, cb in counts[b].items())


def test_the_normalized_kernel_where_the_raw_one_overflows():
    """normalize=True with 'other' divided by self-kernels that overflowed to inf and gave 0 (no error);
    the normalized kernel lies in [0, 1] and is computed again from maps scaled by a power of two."""
    from fractions import Fraction

    from torch_geometric.data import Data

    from kong_pyg import gram_matrix

    big, small = _star(10_000), _star(100)
    opts = dict(k=1, hops=1, degree=40, normalize=True)
    K_ab, K_aa, K_bb = (_star_kernel(10_000, 100, 40), _star_kernel(10_000, 10_000, 40),
                        _star_kernel(100, 100, 40))
    assert K_aa > 2**1024  # (beyond float64)
    want = float(Fraction(K_ab**2, K_aa * K_bb)) ** 0.5  # (0.998041...)
    assert gram_matrix([big], [small], **opts)[0, 0] == pytest.approx(want, rel=1e-12)
    assert gram_matrix([small], [big], **opts)[0, 0] == pytest.approx(want, rel=1e-12)
    K = gram_matrix([big, small], **opts)  # (this path raised the overflow error)
    np.testing.assert_allclose(K, [[1.0, want], [want, 1.0]], rtol=1e-12)
    X = KongVectorizer(**opts).fit_transform([big, small])
    np.testing.assert_allclose(K, (X @ X.T).toarray(), rtol=1e-12)
    # a constant beyond float64's square: every map (1, 1e75), the kernel of one node with n nodes is n
    # copies of (1 + 1e150)^2, normalized 1
    nodes = [Data(x=torch.zeros(n, dtype=torch.long), edge_index=torch.empty(2, 0, dtype=torch.long))
             for n in (20_000, 1)]
    for p in (1, 2):
        opts = dict(k=1, hops=0, degree=p, const=1e150, normalize=True)
        assert gram_matrix(nodes[:1], nodes[1:], **opts)[0, 0] == pytest.approx(1.0, rel=1e-12)
        np.testing.assert_allclose(gram_matrix(nodes, **opts), np.ones((2, 2)), rtol=1e-12)


def test_a_normalized_kernel_beyond_float64s_range_is_refused():
    """Self-kernels more than float64's range apart: scaled down, the small one would underflow (a
    wrong 0 or NaN); a clear error instead, naming the graph and the sequence."""
    from torch_geometric.data import Data

    from kong_pyg import gram_matrix

    lone = Data(x=torch.zeros(1, dtype=torch.long), edge_index=torch.empty(2, 0, dtype=torch.long))
    opts = dict(k=1, hops=1, degree=170, normalize=True)
    with pytest.raises(ValueError, match=r"cannot be computed in float64.*graph 1 with itself underflows"):
        gram_matrix([_star(10_000), lone], **opts)
    with pytest.raises(ValueError, match=r"graph 0 of 'other' with itself underflows"):
        gram_matrix([_star(10_000)], [lone], **opts)


@pytest.mark.parametrize("other", [False, True])
@pytest.mark.parametrize("options", [dict(degree=1), dict(degree=2), dict(degree=2, kernel="cosine")])
def test_a_normalized_kernel_of_counts_that_overflow_is_an_error_not_nan(options, other):
    """Counts beyond float64 (complete graphs, 250 hops): no scale brings their norms back, and the
    normalized matrix came out NaN (inf times a zero inverse norm); the overflow error instead."""
    from torch_geometric.data import Data

    from kong_pyg import gram_matrix

    def complete(n):
        s, t = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
        keep = s != t
        return Data(x=torch.zeros(n, dtype=torch.long), edge_index=torch.stack([s[keep], t[keep]]))

    a, b = complete(30), complete(5)
    for first, second in ((a, b), (b, a)):  # (a NaN norm in second place was dropped by max())
        with pytest.raises(ValueError, match="overflowed float64"):
            gram_matrix([first], [second], k=1, hops=250, normalize=True, **options) if other else \
                gram_matrix([first, second], k=1, hops=250, normalize=True, **options)
