import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from kong_pyg import KongSketch, KongVectorizer

X = torch.tensor([0, 1, 2])
EI = torch.tensor([[0, 1, 2], [1, 2, 0]])


@pytest.mark.parametrize("kwargs,match", [
    (dict(k=0), "'k' must be >= 1"),
    (dict(hops=-1), "'hops' must be >= 0"),
    (dict(dim=0), "'dim' must be >= 1"),
    (dict(degree=0), "'degree' must be >= 1"),
    (dict(const=-1.0), "'const' must be >= 0"),
    (dict(traversal="dfs"), "'traversal' must be one of"),
    (dict(kernel="rbf"), "'kernel' must be one of"),
    (dict(order="time"), "'order' must be one of"),
    (dict(norm="approx"), "'norm' must be one of"),
    (dict(flow="both"), "flow"),
])
def test_bad_arguments_raise_value_error(kwargs, match):
    with pytest.raises(ValueError, match=match):
        KongSketch(**kwargs)
    with pytest.raises(ValueError, match=match):
        KongVectorizer(**kwargs).fit([Data(x=X, edge_index=EI)])


@pytest.mark.parametrize("kwargs,match", [
    (dict(k=1.5), "'k' must be an integer"),
    (dict(k=True), "'k' must be an integer"),
    (dict(dim="8"), "'dim' must be an integer"),
    (dict(dtype=torch.long), "'dtype' must be a floating-point"),
])
def test_bad_argument_types_raise_type_error(kwargs, match):
    with pytest.raises(TypeError, match=match):
        KongSketch(**kwargs)


LAYER = KongSketch(k=2, dim=8)


@pytest.mark.parametrize("call,exc,match", [
    (lambda: LAYER(X, torch.tensor([[0, 3], [1, 2]])), ValueError, "node index 3 but there are only 3"),
    (lambda: LAYER(X, torch.tensor([[0, -1], [1, 2]])), ValueError, "negative node index"),
    (lambda: LAYER(X, EI.float()), TypeError, "torch.long"),
    (lambda: LAYER(X, EI[0]), ValueError, r"shape \[2, num_edges\]"),
    (lambda: LAYER(X, EI.to_sparse()), TypeError, "sparse"),
    (lambda: LAYER(X, [[0, 1], [1, 2]]), TypeError, "'edge_index' must be"),
    (lambda: LAYER(X.float() + 0.5, EI), TypeError, "floating-point"),
    (lambda: LAYER(torch.rand(3, 4), EI), TypeError, "not one-hot"),
    (lambda: LAYER(torch.tensor([0, -2, 1]), EI), ValueError, "negative labels"),
    (lambda: LAYER(torch.tensor([0, 2**60, 1]), EI), ValueError, "2\\^58"),
    (lambda: LAYER(X[:2], EI), ValueError, "node index 2 but there are only 2"),
    (lambda: LAYER(torch.zeros(0, dtype=torch.long), torch.zeros(2, 0, dtype=torch.long)),
     ValueError, "empty"),
    (lambda: LAYER(X, EI, edge_attr=torch.tensor([0, 1])), ValueError,
     "'edge_attr' has 2 rows, expected 3"),
    (lambda: LAYER(X, EI, edge_attr=torch.tensor([0.5, 1, 2])), TypeError, "edge_attr"),
    (lambda: LAYER(X, EI, edge_order=torch.tensor([1, 2])), ValueError,
     "'edge_order' must have shape \\[3\\]"),
    (lambda: LAYER(X, EI, edge_order=torch.tensor([1.0, float("nan"), 2])), ValueError, "NaN"),
    (lambda: KongSketch(order="label")(X, EI, edge_order=torch.tensor([1, 2, 3])), ValueError,
     "order='label'"),
    (lambda: LAYER.readout(X, EI, batch=torch.tensor([0, 0])), ValueError, "'batch' must have shape \\[3\\]"),
    (lambda: LAYER.readout(X, EI, batch=torch.tensor([0.0, 0, 1])), TypeError, "'batch'"),
    (lambda: LAYER.readout(X, EI, batch=torch.tensor([0, 0, -1])), ValueError, "negative"),
    (lambda: LAYER.readout(X, EI, batch=torch.tensor([1, 1, 1]), num_graphs=1), ValueError, "num_graphs"),
])
def test_bad_input_raises_clear_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_label_formats_give_the_same_symbols():
    onehot = torch.nn.functional.one_hot(X, 4)
    a = LAYER(X, EI)
    assert torch.equal(a, LAYER(onehot.float(), EI))
    assert torch.equal(a, LAYER(onehot, EI))
    assert torch.equal(a, LAYER(X.view(-1, 1), EI))
    assert torch.equal(a, LAYER(X.to(torch.int32), EI))
    # multi-column integer rows: equal rows are equal symbols
    multi = torch.tensor([[1, 5], [2, 5], [1, 5]])
    out = KongSketch(k=1, hops=0, dim=64, dtype=torch.float64)(multi, torch.zeros(2, 0, dtype=torch.long))
    assert torch.equal(out[0], out[2]) and not torch.equal(out[0], out[1])


def test_vectorizer_input_errors():
    vec = KongVectorizer()
    with pytest.raises(ValueError, match="empty"):
        vec.fit([])
    with pytest.raises(ValueError, match="graph 1 is empty"):
        empty = Data(x=torch.zeros(0, dtype=torch.long), edge_index=torch.zeros(2, 0, dtype=torch.long))
        vec.fit([Data(x=X, edge_index=EI), empty])
    with pytest.raises(ValueError, match="graph 0 has no 'x'"):
        vec.fit([Data(edge_index=EI, num_nodes=3)])
    with pytest.raises(ValueError, match="graph 0: 'edge_index' holds node indices outside"):
        vec.fit([Data(x=X, edge_index=EI + 1)])
    with pytest.raises(TypeError, match="sequence"):
        vec.fit(iter([Data(x=X, edge_index=EI)]))
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        KongVectorizer().transform([Data(x=X, edge_index=EI)])


def test_module_and_input_on_different_devices():
    meta = KongSketch()
    meta.hashes.coef = meta.hashes.coef.to("meta")
    with pytest.raises(ValueError, match="move one with .to"):
        meta(X, EI)


def test_pyg_edge_index_and_index_subclasses_are_plain_edges():
    """PyG's EdgeIndex (and Index labels) give the same features as plain tensors on every front-end."""
    from torch_geometric import EdgeIndex, Index
    from torch_geometric.data import InMemoryDataset

    from kong_pyg import KongFeatures

    raw = torch.tensor([[0, 1, 1, 2, 2, 0, 3], [1, 0, 2, 1, 0, 2, 2]])
    x = torch.tensor([0, 1, 0, 2])
    sub = Data(x=Index(x, dim_size=3), edge_index=EdgeIndex(raw, sparse_size=(4, 4)))
    plain = Data(x=x, edge_index=raw)
    for k, dim in ((1, None), (2, None), (2, 16)):
        want = KongVectorizer(k=k, dim=dim).fit_transform([plain, plain])
        got = KongVectorizer(k=k, dim=dim).fit_transform([sub, sub])
        if dim is None:
            want, got = want.toarray(), got.toarray()
        assert (got == want).all(), (k, dim)

        class Stored(InMemoryDataset):  # EdgeIndex kept in the collated storage
            def __init__(self):
                super().__init__(None)
                self.data, self.slices = self.collate([sub, sub])

        got = KongVectorizer(k=k, dim=dim).fit_transform(Stored())
        assert ((got.toarray() if dim is None else got) == want).all(), (k, dim)
        f = KongFeatures(k=k, dim=dim or 32)
        assert torch.equal(f(sub.clone()).kong_x, f(plain.clone()).kong_x)
        layer = KongSketch(k=k, dim=16)
        assert torch.equal(layer(sub.x, sub.edge_index), layer(x, raw))


def test_one_hot_rows_of_a_single_class_are_labels():
    """A TU data set with one node (or edge) label gives [N, 1] float ones: one-hot rows of class 0 (they were
    flattened into floating-point labels and refused); other single-column floats are still refused."""
    from kong_pyg import KongSketch
    from kong_pyg.inputs import labels

    assert labels(torch.ones(3, 1), "x", 3).tolist() == [0, 0, 0]
    assert labels(torch.ones(3, 1, dtype=torch.long), "x", 3).tolist() == [1, 1, 1]  # integers: the values
    for bad in (torch.full((3, 1), 2.0), torch.tensor([[1.0], [0.0], [1.0]])):
        with pytest.raises(TypeError, match="not one-hot rows"):
            labels(bad, "x", 3)
    ei = torch.tensor([[1, 2], [0, 0]])
    assert torch.equal(KongSketch(k=2, dim=16)(torch.ones(3, 1), ei, edge_attr=torch.ones(2, 1)),
                       KongSketch(k=2, dim=16)(torch.zeros(3, dtype=torch.long), ei,
                                               edge_attr=torch.zeros(2, dtype=torch.long)))


def test_a_graph_without_edges_may_hold_an_empty_edge_attr_of_any_layout():
    from torch_geometric.data import Data

    from kong_pyg import KongVectorizer

    g1 = Data(x=torch.tensor([0, 1]), edge_index=torch.tensor([[0, 1], [1, 0]]),
              edge_attr=torch.tensor([2, 3]))
    bare = Data(x=torch.tensor([0]), edge_index=torch.empty(2, 0, dtype=torch.long))
    want = KongVectorizer(k=1).fit_transform([g1, bare, g1]).toarray()
    for empty in (torch.tensor([]), torch.zeros(0, 4), torch.zeros(0, dtype=torch.long)):
        other = Data(x=torch.tensor([0]), edge_index=torch.empty(2, 0, dtype=torch.long), edge_attr=empty)
        np.testing.assert_array_equal(KongVectorizer(k=1).fit_transform([g1, other, g1]).toarray(), want)


def test_a_column_of_float_sort_keys_is_a_key_per_edge():
    from kong_pyg import KongSketch

    x, ei = torch.tensor([0, 1, 2, 0]), torch.tensor([[1, 2, 3], [0, 0, 0]])
    key = torch.tensor([0.3, 0.1, 0.2])
    layer = KongSketch(k=2, dim=32)
    assert torch.equal(layer(x, ei, edge_order=key.view(-1, 1)), layer(x, ei, edge_order=key))


def test_graphs_declaring_more_nodes_or_edges_than_memory_are_named_before_any_copy():
    """Expanded tensors (stride 0) declare 10^12 nodes or edges in a few bytes (a 2 KB torch.save file): the
    first copy failed in the allocator ("you tried to allocate 8000000000000 bytes")."""
    from torch_geometric.data import Data

    from kong_pyg import KongFeatures, KongSketch, KongVectorizer

    big = 10**12
    pair = torch.tensor([[0, 1], [1, 0]])
    many_nodes = Data(x=torch.zeros(1, dtype=torch.long).expand(big), edge_index=pair)
    many_edges = Data(x=torch.zeros(3, dtype=torch.long), edge_index=torch.tensor([[0], [1]]).expand(2, big))
    for g, size in ((many_nodes, "1,000,000,000,000 nodes, 2 edges"), (many_edges, "3 nodes, 1,000,000,000")):
        with pytest.raises(ValueError, match=rf"graph 0 \({size}.* needs .* GiB"):
            KongVectorizer(k=2, dim=64).fit_transform([g])
        with pytest.raises(ValueError, match=rf"the graph \({size}.* needs .* GiB"):
            KongSketch(k=2, dim=64)(g.x, g.edge_index)
        with pytest.raises(ValueError, match=rf"\({size}.* needs .* GiB"):
            KongFeatures(k=2, dim=64)(g)


def test_row_fingerprint_is_the_sequence_fingerprint_of_each_row():
    """row_fingerprint computes its powers of z once per column (it took one per entry): the values must
    stay those of sequence_fingerprint (multi-column labels and relabelling codes depend on them)."""
    import torch

    from kong_pyg.hashing import row_fingerprint, sequence_fingerprint, sequence_powers

    gen = torch.Generator().manual_seed(3)
    for n, c in ((1, 1), (7, 2), (30, 5), (4, 300)):
        rows = torch.randint(0, 2**59, (n, c), generator=gen)
        owner = torch.arange(n).repeat_interleave(c)
        position = torch.arange(1, c + 1).repeat(n)
        head, length = torch.full((n,), c), torch.full((n,), c)
        want = sequence_fingerprint(head, rows.reshape(-1), owner, position, length)
        assert torch.equal(row_fingerprint(rows), want)
        powers = sequence_powers(position, length)
        given = sequence_fingerprint(head, rows.reshape(-1), owner, position, length, powers)
        assert torch.equal(given, want)


def test_integer_labels_without_torch_uint64(monkeypatch):
    """PyTorch before 2.3 has no torch.uint64: every integer label tensor failed with an AttributeError in
    the check for ids at or above 2^63 (the package declares torch>=2.1)."""
    from torch_geometric.data import Data

    from kong_pyg import KongVectorizer

    g = Data(x=torch.tensor([0, 1, 2]), edge_index=torch.tensor([[1, 2], [0, 0]]))
    want = KongVectorizer(k=2, hops=2).fit_transform([g, g]).toarray()
    monkeypatch.delattr(torch, "uint64")
    assert (KongVectorizer(k=2, hops=2).fit_transform([g, g]).toarray() == want).all()


def test_integer_rows_that_are_not_one_hot_are_one_label_per_distinct_row():
    """guide section 4: OGB-style categorical rows; a one-hot row is its column index."""
    from kong_pyg.inputs import labels

    rows = torch.tensor([[1, 0, 0], [0, 1, 0], [6, 5, 1], [6, 5, 1], [6, 1, 0], [7, 5, 1]])
    got = labels(rows, "x", 6).tolist()
    assert got[:2] == [0, 1] and got[2] == got[3]
    assert len(set(got[2:])) == 3 and all(0 <= v < 2**58 for v in got)
    # binary multi-hot rows hold a 1 too: only the row sum tells them from one-hot rows (a check that could
    # be dropped without any other test noticing: [1, 1, 0] then read as label 0)
    multi = labels(torch.tensor([[1, 0, 0], [1, 1, 0], [1, 0, 1], [0, 1, 1]]), "x", 4).tolist()
    assert multi[0] == 0 and len(set(multi)) == 4 and all(v >= 3 for v in multi[1:])
