"""What a sequence of graphs may hold: one graph per entry, one order-key rule, sparse adjacencies (k = 1)."""
import random

import pytest
import torch
import torch_geometric.transforms as T
from helpers import random_graph, to_data
from torch_geometric.data import Batch, Data
from torch_geometric.loader import DataLoader

from kong_pyg import KongFeatures, KongSketch, KongVectorizer, gram_matrix, kernel_matrix


def _graphs(n=6, seed=0):
    rng = random.Random(seed)
    return [to_data(random_graph(rng, 5, 3)) for _ in range(n)]


@pytest.mark.parametrize("make", [
    lambda gs: list(DataLoader(gs, batch_size=2)),       # DataLoader batches: each read as one graph before
    lambda gs: [Batch.from_data_list(gs[:3]), gs[3]],
])
def test_a_batch_in_a_list_is_refused_not_summed(make):
    gs = _graphs()
    for run in (lambda: KongVectorizer(dim=16).fit_transform(make(gs)),
                lambda: KongFeatures(dim=16, level="graph").transform_dataset(make(gs)),
                lambda: gram_matrix(make(gs))):
        with pytest.raises(TypeError, match=r"graph 0 is a \w*Batch of [23] graphs, not one graph"):
            run()
    # a Batch itself is its graphs, as before; so is a list of one-graph batches (DataLoader, batch_size 1)
    whole = Batch.from_data_list(gs)
    assert (KongVectorizer(dim=16).fit_transform(whole) == KongVectorizer(dim=16).fit_transform(gs)).all()
    ones = list(DataLoader(gs, batch_size=1))
    assert (KongVectorizer(dim=16).fit_transform(ones) == KongVectorizer(dim=16).fit_transform(gs)).all()
    assert abs(KongVectorizer().fit_transform(ones) - KongVectorizer().fit_transform(gs)).max() == 0


def test_a_dataset_slice_in_a_list_is_refused(tmp_path):
    from kong_pyg.datasets import load_tu

    ds = load_tu("MUTAG", cache=tmp_path)
    with pytest.raises(TypeError, match=r"graph 1 is a \w+ of 3 graphs, not one graph"):
        KongVectorizer().fit_transform([ds[0], ds[0:3]])


@pytest.mark.parametrize("batch_size", [1, 2, 4096])
def test_the_order_key_rule_does_not_depend_on_batches(batch_size):
    keyed = Data(x=torch.tensor([0, 1, 2]), edge_index=torch.tensor([[1, 2], [0, 0]]),
                 edge_order=torch.tensor([5, 3]))
    plain = Data(x=torch.tensor([0, 1, 2]), edge_index=torch.tensor([[1, 2], [0, 0]]))
    edgeless = Data(x=torch.tensor([0]), edge_index=torch.zeros(2, 0, dtype=torch.long))
    for graphs, bad in (([keyed, plain], 1), ([plain, keyed], 0 if batch_size > 1 else 1),
                        ([edgeless, keyed, edgeless, plain], 3)):
        with pytest.raises(ValueError, match=rf"graph {bad} has (no|an) 'edge_order' but"):
            KongVectorizer(k=2, batch_size=batch_size).fit_transform(graphs)
    # graphs without edges need no key, in any batch
    X = KongVectorizer(k=2, batch_size=batch_size).fit_transform([edgeless, keyed, edgeless, keyed])
    assert X.shape[0] == 4


@pytest.mark.parametrize("order", ["edge", "reverse", "consistent"])
def test_order_keys_of_other_dtypes_give_each_graph_its_order_in_any_batch(order):
    """Graphs whose edge_order keys differed in dtype were refused once joined (the default batch size,
    gram_matrix, transform_dataset) but not one by one (batch_size=1): keys compare within a graph only,
    so integers now widen to int64 and a mix with floats to float64, both exact."""
    import numpy as np

    rng = random.Random(3)
    gs = []
    for i, dtype in enumerate([torch.int64, torch.int32, torch.float32, torch.int16, torch.float64,
                               torch.uint8, torch.float16] * 2):
        d = to_data(random_graph(rng, 6, 3))
        m = d.edge_index.size(1)
        keys = rng.sample(range(40), m) if i % 3 else [rng.randrange(5) for _ in range(m)]  # (ties too)
        d.edge_order = torch.tensor(keys).to(dtype)
        gs.append(d)
    for dim in (None, 64):
        v = dict(k=2, hops=2, order=order, dim=dim)
        X1 = KongVectorizer(**v, batch_size=1).fit(gs).transform(gs)
        X = KongVectorizer(**v).fit(gs).transform(gs)
        dense = (lambda a: a.toarray()) if dim is None else np.asarray
        assert np.array_equal(dense(X), dense(X1))
        if dim is None:
            assert np.allclose(gram_matrix(gs, k=2, hops=2, order=order), dense(X1) @ dense(X1).T)
    f = KongFeatures(k=2, dim=32, level="graph", order=order)
    assert torch.equal(torch.cat([t.kong_graph for t in f.transform_dataset([g.clone() for g in gs])]),
                       torch.cat([f(g.clone()).kong_graph for g in gs]))
    # integers that float64 cannot hold exactly, beside floats: refused, naming the graph
    ei = torch.tensor([[1, 2], [0, 0]])
    floats = Data(x=torch.tensor([0, 1, 2]), edge_index=ei, edge_order=torch.tensor([2.0, 1.0]))
    big = Data(x=torch.tensor([0, 1, 2]), edge_index=ei, edge_order=torch.tensor([2**53 + 2, 2**53 + 1]))
    with pytest.raises(TypeError, match=r"graph 1: 'edge_order' holds integers beyond 2\^53"):
        KongVectorizer(k=2).fit_transform([floats, big])
    def keyed(k):
        return Data(x=torch.tensor([0, 1, 2]), edge_index=ei, edge_order=k)

    for mix in ([torch.tensor([3, 1]), torch.tensor([3, 1], dtype=torch.uint16)],
                [torch.tensor([3, 1]), torch.tensor([3, 1], dtype=torch.uint64)],
                [torch.tensor([3.0, 1.0]), torch.tensor([3, 1]).to(torch.float8_e4m3fn)],
                [torch.tensor([3.0, 1.0]).to(torch.float8_e5m2),
                 torch.tensor([1, 3]).to(torch.float8_e4m3fn)]):
        pair = [keyed(k) for k in mix]
        alone = KongVectorizer(k=2, order=order, batch_size=1).fit(pair)
        assert np.array_equal(alone.transform(pair).toarray(),
                              KongVectorizer(k=2, order=order).fit(pair).transform(pair).toarray())
    none = torch.zeros(2, 0, dtype=torch.long)  # (keys of graphs without edges hold nothing)
    empty = [Data(x=torch.tensor([0]), edge_index=none, edge_order=torch.zeros(0)),
             Data(x=torch.tensor([1]), edge_index=none, edge_order=torch.zeros(0, dtype=torch.long))]
    assert KongVectorizer(k=2).fit_transform(empty).shape[0] == 2
    huge = keyed(torch.tensor([2**63 + 5, 1], dtype=torch.uint64))
    with pytest.raises(TypeError, match=r"graph 1: 'edge_order' holds integers beyond 2\^63"):
        KongVectorizer(k=2).fit_transform([keyed(torch.tensor([3, 1])), huge])
    flags = Data(x=torch.tensor([0, 1, 2]), edge_index=ei, edge_order=torch.tensor([True, False]))
    with pytest.raises(TypeError, match="graph 1: 'edge_order' is torch.bool, but graph 0 has torch.float32"):
        KongVectorizer(k=2).fit_transform([floats, flags])


@pytest.mark.parametrize("total, batch_size, sizes", [
    (4110, 4096, [2055, 2055]), (7, 3, [2, 2, 3]), (6, 3, [3, 3]), (5, 1, [1] * 5), (3, 10, [3])])
def test_batches_are_as_equal_as_possible_and_give_the_same_rows(total, batch_size, sizes):
    from kong_pyg.graphs import iter_graph_batches

    rng = random.Random(total)
    graphs = [to_data(random_graph(rng)) for _ in range(min(total, 100))]
    if total > 100:  # (the sizes only: a big list of small graphs, not their features)
        graphs = graphs[:1] * total
    got = [(gb.start, gb.num_graphs) for gb in iter_graph_batches(graphs, batch_size)]
    assert [n for _, n in got] == sizes  # (no tail batch of a few graphs: each batch has a fixed cost)
    assert [s for s, _ in got] == [sum(sizes[:i]) for i in range(len(sizes))]
    if total <= 100:
        X = KongVectorizer(k=2, hops=2, batch_size=batch_size).fit_transform(graphs)
        Y = KongVectorizer(k=2, hops=2, batch_size=total).fit_transform(graphs)
        assert (X != Y).nnz == 0


def test_sparse_adjacency_with_k_1_on_every_batched_route():
    from torch_geometric.utils import coalesce

    gs = [Data(x=g.x, edge_index=g.edge_index) for g in _graphs()]
    to_sparse = T.ToSparseTensor(layout=torch.sparse_csr)
    sparse = [to_sparse(g.clone()) for g in gs]
    plain = [Data(x=g.x, edge_index=coalesce(g.edge_index, num_nodes=g.num_nodes)) for g in gs]  # (as adj_t)
    f = KongFeatures(k=1, dim=32, level="graph", edge_labels=False)
    per_graph = torch.cat([f(s.clone()).kong_graph for s in sparse])
    fast = torch.cat([d.kong_graph for d in f.transform_dataset(sparse)])
    assert torch.allclose(per_graph, fast, atol=1e-12)
    assert torch.allclose(fast, torch.cat([d.kong_graph for d in f.transform_dataset(plain)]), atol=1e-12)
    X = KongVectorizer(k=1, edge_labels=False).fit_transform(sparse)
    Y = KongVectorizer(k=1, edge_labels=False).fit_transform(plain)
    assert abs(X - Y).max() == 0
    assert (gram_matrix(sparse, k=1, edge_labels=False) == gram_matrix(plain, k=1, edge_labels=False)).all()
    with pytest.raises(TypeError, match="'adj_t' is accepted with k=1"):
        KongVectorizer(k=2).fit_transform(sparse)
    keyed = to_sparse(gs[0].clone())
    keyed.edge_order = torch.arange(3)
    with pytest.raises(ValueError, match="graph 0: edge labels and edge order keys need 'edge_index'.*"
                                         "edge_labels=False"):
        KongVectorizer(k=1).fit_transform([keyed])


def test_batch_vector_rules_are_the_same_on_every_method():
    layer = KongSketch(k=1, dim=8)
    x, ei = torch.tensor([0, 1]), torch.tensor([[0], [1]])
    batch = torch.tensor([0, 1])
    for method in (layer, layer.node_maps, layer.readout):  # (forward accepted the edge between graphs)
        with pytest.raises(ValueError, match="an edge between nodes of different graphs of 'batch'"):
            method(x, ei, batch=batch)
    x, ei, b = torch.tensor([0, 1, 2, 0]), torch.tensor([[1, 0, 3], [0, 1, 3]]), torch.tensor([0, 0, 1, 1])
    assert torch.equal(layer.readout(x, ei, b.int()), layer.readout(x, ei, b))  # (int32, as edge_index)


def test_kernel_matrix_of_no_features_is_a_type_error():
    for bad in (None, "X", {"a": 1}):
        with pytest.raises(TypeError, match="'X' must be \\[n, d\\] numeric features"):
            kernel_matrix(bad)


def test_a_graphs_labels_are_read_alone_whatever_the_other_graphs_dtypes():
    """Joined, label tensors of one layout but several dtypes were promoted to one and read by its rule: a
    float [n, 1] one-hot column (label 0 alone) next to an integer column became label 1, so a graph's row
    depended on the others; uint16 or float8 labels next to int64 or float32 ones were a PyTorch promotion
    error. (Different layouts stay refused: one layout per collection.)"""
    import numpy as np

    ei = torch.tensor([[1, 2, 0], [0, 0, 1]])
    x = torch.tensor([0, 1, 2])
    cases = [
        [Data(x=torch.ones(3, 1), edge_index=ei), Data(x=torch.tensor([[0], [0], [0]]), edge_index=ei)],
        [Data(x=x, edge_index=ei), Data(x=x.to(torch.uint16), edge_index=ei)],
        [Data(x=torch.eye(3), edge_index=ei), Data(x=torch.eye(3).to(torch.float8_e4m3fn), edge_index=ei)],
        [Data(x=x, edge_index=ei, edge_attr=torch.tensor([[1], [1], [2]])),
         Data(x=x, edge_index=ei, edge_attr=torch.tensor([[1.0], [1.0], [1.0]])),
         Data(x=x, edge_index=ei, edge_attr=torch.tensor([[1], [1], [0]], dtype=torch.uint32))],
    ]
    for graphs in cases:
        v = KongVectorizer(k=2, dim=64)
        together = v.fit_transform(graphs)
        alone = np.concatenate([v.fit_transform([g]) for g in graphs])
        assert np.array_equal(together, alone)
    assert (gram_matrix(cases[0], k=2) == gram_matrix(cases[0][:1], k=2)[0, 0]).all()  # (one labelled graph)
    bad = [Data(x=x.view(-1, 1), edge_index=ei), Data(x=torch.tensor([[0.5], [1.0], [1.0]]), edge_index=ei)]
    with pytest.raises(TypeError, match="graph 1: 'x' holds floating-point values that are not one-hot"):
        KongVectorizer(k=2).fit_transform(bad)


def test_views_with_other_sign_bits_are_not_joined_as_one_view():
    """Graphs viewing one storage side by side join as one more view, which carried the first one's
    negative bit for all: a valid graph read with another's sign was refused (or an invalid one passed)."""
    import numpy as np

    oh = torch.nn.functional.one_hot(torch.tensor([0, 1, 2, 1, 0, 2]), 3).float()
    ei = torch.tensor([[1, 2], [0, 0]])
    for z, first, second in ((torch.complex(torch.zeros(6, 3), torch.cat([oh[:3], -oh[3:]])), False, True),
                             (torch.complex(torch.zeros(6, 3), torch.cat([-oh[:3], oh[3:]])), True, False)):
        parts = [(z.conj() if neg else z).imag[rows]
                 for neg, rows in ((first, slice(0, 3)), (second, slice(3, 6)))]
        assert [p.is_neg() for p in parts] == [first, second]
        graphs = [Data(x=p, edge_index=ei) for p in parts]
        v = KongVectorizer(k=2, dim=8)
        assert np.array_equal(v.fit_transform(graphs), np.concatenate([v.fit_transform([g]) for g in graphs]))


def test_a_failed_join_along_edges_is_not_blamed_on_edge_counts():
    """edge_index is joined along its edges (dim 1): when torch.cat failed for another reason (a forked
    process's CUDA error, out of memory), the layout check compared dimensions beyond the first and
    blamed graphs of different edge counts for 'not the same layout'. Only the other dimensions count."""
    from kong_pyg.graph_union import _same_layout

    _same_layout([torch.zeros(2, 2), torch.zeros(2, 3)], "edge_index", 0, False, dim=1)  # (fine: re-raised)
    with pytest.raises(ValueError, match="graph 1: 'edge_index' is a Tensor of shape \\[3, 3\\]"):
        _same_layout([torch.zeros(2, 2), torch.zeros(3, 3)], "edge_index", 0, False, dim=1)
    with pytest.raises(ValueError, match="graph 4: 'x' is a Tensor of shape \\[2, 4\\]"):
        _same_layout([torch.zeros(2, 3), torch.zeros(2, 4)], "x", 3, True)
