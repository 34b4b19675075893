import random
import warnings

import numpy as np
import pytest
import torch
from helpers import random_graph, to_data
from torch_geometric.data import Batch, Data, HeteroData, InMemoryDataset
from torch_geometric.loader import DataLoader

from kong_pyg import KongFeatures, KongSketch, KongVectorizer

OPTIONS = [
    dict(k=1, hops=2),
    dict(k=2, hops=2, traversal="wl"),
    dict(k=3, hops=1, kernel="cosine"),
    dict(k=2, hops=2, kernel="cosine", degree=2, seed=5),
    dict(k=2, hops=1, degree=2, const=1.5, order="random", seed=3),
    dict(k=2, hops=2, relabel=True, blended=True, kernel="cosine", norm="sketch"),
]


def graphs(n=6, seed=0, edge_labels=True):
    rng = random.Random(seed)
    return [to_data(random_graph(rng, 7, 14, 3, edge_labels)) for _ in range(n)]


@pytest.mark.parametrize("opts", OPTIONS)
def test_same_numbers_as_kong_sketch(opts):
    layer = KongSketch(dim=64, **opts)
    t = KongFeatures(dim=64, level="both", **opts)
    for d in graphs():
        out = t(d)
        assert torch.equal(out.kong_x, layer(d.x, d.edge_index, d.edge_attr))
        assert torch.equal(out.kong_graph, layer.readout(d.x, d.edge_index, edge_attr=d.edge_attr))
        assert out.kong_x.dtype == torch.float32 and out.kong_graph.shape == (1, 64)


def test_normalized_graph_rows_equal_the_vectorizer():
    gs = graphs(8, seed=2)
    opts = dict(k=2, hops=2, dim=32, kernel="cosine", seed=1)
    X = KongVectorizer(normalize=True, **opts).fit_transform(gs)
    t = KongFeatures(level="graph", normalize=True, dtype=torch.float64, **opts)
    rows = torch.cat([t(d).kong_graph for d in gs])
    assert np.array_equal(rows.numpy(), X)
    norms = rows.norm(dim=1)
    assert torch.allclose(norms[norms > 0], torch.ones_like(norms[norms > 0]))


def test_input_is_not_mutated_and_edges_keep_their_order():
    d = graphs(1, seed=4)[0]
    d.edge_order = torch.arange(d.num_edges).flip(0)
    keys, ei = set(d.keys()), d.edge_index.clone()
    out = KongFeatures(k=2, dim=16, level="both")(d)
    assert set(d.keys()) == keys and "kong_x" not in d
    assert torch.equal(d.edge_index, ei)
    assert out.edge_index is d.edge_index and out.edge_order is d.edge_order
    assert set(out.keys()) == keys | {"kong_x", "kong_graph"}


def test_edge_order_attribute_and_edge_labels_flag():
    # node 0 sees 1, 2, 3 in edge order; a key reverses that order
    x = torch.tensor([0, 1, 2, 3])
    d = Data(x=x, edge_index=torch.tensor([[1, 2, 3], [0, 0, 0]]), edge_attr=torch.tensor([0, 1, 0]))
    rev = Data(x=x, edge_index=torch.tensor([[3, 2, 1], [0, 0, 0]]), edge_attr=torch.tensor([0, 1, 0]))
    layer = KongSketch(k=2, hops=1, dim=64)
    t = KongFeatures(k=2, hops=1, dim=64, level="graph", edge_labels=False)
    assert torch.equal(t(d).kong_graph, layer.readout(x, d.edge_index))
    assert not torch.equal(t(d).kong_graph, t(rev).kong_graph)
    d.when = torch.tensor([3.0, 2.0, 1.0])
    keyed = KongFeatures(k=2, hops=1, dim=64, level="graph", edge_labels=False, edge_order_attr="when")
    assert torch.equal(keyed(d).kong_graph, t(rev).kong_graph)
    # the default attribute name is "edge_order"; None ignores it
    d.edge_order = d.when
    assert torch.equal(t(d).kong_graph, t(rev).kong_graph)
    ignore = KongFeatures(k=2, hops=1, dim=64, level="graph", edge_labels=False, edge_order_attr=None)
    assert torch.equal(ignore(d).kong_graph, layer.readout(x, d.edge_index))
    # edge labels change the features when used
    with_labels = KongFeatures(k=2, hops=1, dim=64, level="graph")
    assert torch.equal(with_labels(rev).kong_graph, layer.readout(x, rev.edge_index, edge_attr=rev.edge_attr))


def test_dataloader_batches_graph_rows():
    gs = graphs(7, seed=1)
    t = KongFeatures(k=2, hops=2, dim=32, level="both")
    done = [t(d) for d in gs]
    loader = DataLoader(done, batch_size=3, shuffle=False)
    layer = KongSketch(k=2, hops=2, dim=32)
    seen = 0
    for batch in loader:
        assert batch.kong_graph.shape == (batch.num_graphs, 32)
        assert batch.kong_x.shape == (batch.num_nodes, 32)
        rows = torch.cat([d.kong_graph for d in done[seen:seen + batch.num_graphs]])
        assert torch.equal(batch.kong_graph, rows)
        # node features of a batch are those of its graphs: KONG never mixes graphs
        assert torch.equal(batch.kong_x, layer(batch.x, batch.edge_index, batch.edge_attr))
        pooled = layer.readout(batch.x, batch.edge_index, batch.batch, batch.edge_attr)
        assert torch.allclose(batch.kong_graph, pooled)
        seen += batch.num_graphs
    assert seen == len(gs)


def test_on_a_batch_graph_features_are_per_graph():
    gs = graphs(5, seed=3)
    t = KongFeatures(k=2, dim=32, level="graph", kernel="cosine")
    out = t(Batch.from_data_list(gs))
    assert out.kong_graph.shape == (5, 32)
    assert torch.allclose(out.kong_graph, torch.cat([t(d).kong_graph for d in gs]), atol=1e-6)


class Tiny(InMemoryDataset):
    def __init__(self, root, transform=None, pre_transform=None):
        super().__init__(root, transform, pre_transform)
        self.load(self.processed_paths[0])

    @property
    def raw_file_names(self):
        return []

    @property
    def processed_file_names(self):
        return ["data.pt"]

    def download(self):
        pass

    def process(self):
        data_list = graphs(6, seed=7)
        for i, d in enumerate(data_list):
            d.y = torch.tensor([i % 2])
        if self.pre_transform is not None:
            data_list = [self.pre_transform(d) for d in data_list]
        self.save(data_list, self.processed_paths[0])


def test_as_pre_transform_and_transform(tmp_path):
    pre = KongFeatures(k=2, hops=2, dim=16, level="graph")
    ds = Tiny(str(tmp_path / "a"), pre_transform=pre)
    ref = graphs(6, seed=7)
    layer = KongSketch(k=2, hops=2, dim=16)
    for i, d in enumerate(ref):
        assert torch.equal(ds[i].kong_graph, layer.readout(d.x, d.edge_index, edge_attr=d.edge_attr))
        assert torch.equal(ds[i].edge_index, d.edge_index)
    batch = next(iter(DataLoader(ds, batch_size=6)))
    assert batch.kong_graph.shape == (6, 16)
    # the same dataset with another pre_transform: PyG compares repr() and warns
    with pytest.warns(UserWarning, match="pre_transform"):
        Tiny(str(tmp_path / "a"), pre_transform=KongFeatures(k=3, hops=2, dim=16, level="graph"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Tiny(str(tmp_path / "a"), pre_transform=KongFeatures(k=2, hops=2, dim=16, level="graph"))
    # as a transform, on every access
    ds2 = Tiny(str(tmp_path / "b"), transform=KongFeatures(k=2, hops=2, dim=16))
    for i, d in enumerate(ref):
        assert torch.equal(ds2[i].kong_x, layer(d.x, d.edge_index, d.edge_attr))
    assert "kong_x" not in ds2._data


def test_repr_lists_every_option():
    t = KongFeatures(k=2, dim=8, level="both", attr_name=("a", "b"), seed=4, dtype=torch.float64)
    text = repr(t)
    for part in ["k=2", "hops=2", "traversal='bfs'", "dim=8", "kernel='poly'", "degree=1", "const=0.0",
                 "seed=4", "order='edge'", "relabel=0", "blended=False", "norm='exact'",
                 "flow='source_to_target'", "level='both'", "attr_name=('a', 'b')", "normalize=False",
                 "edge_labels=True", "edge_order_attr='edge_order'", "dtype=torch.float64"]:
        assert part in text, part
    again = eval(text, {"KongFeatures": KongFeatures, "torch": torch})
    assert repr(again) == text
    changes = [dict(k=3), dict(hops=1), dict(dim=9), dict(seed=1), dict(order="random"), dict(relabel=True),
               dict(kernel="cosine"), dict(level="graph"), dict(edge_labels=False), dict(dtype=torch.float16)]
    base = repr(KongFeatures(k=2, dim=8))
    assert len({repr(KongFeatures(**{"k": 2, "dim": 8, **c})) for c in changes} | {base}) == len(changes) + 1


def test_attribute_names():
    d = graphs(1)[0]
    assert "kong_graph" in KongFeatures(level="graph", dim=4)(d)
    assert "feat" in KongFeatures(level="node", dim=4, attr_name="feat")(d)
    out = KongFeatures(level="both", dim=4, attr_name=("n", "g"))(d)
    assert out.n.shape == (d.num_nodes, 4) and out.g.shape == (1, 4)


def test_bad_arguments_and_inputs():
    with pytest.raises(ValueError, match="'level'"):
        KongFeatures(level="edge")
    with pytest.raises(ValueError, match="pair"):
        KongFeatures(level="both", attr_name="x")
    with pytest.raises(ValueError, match="same name"):
        KongFeatures(level="both", attr_name=("a", "a"))
    with pytest.raises(ValueError, match="index"):
        KongFeatures(attr_name="kong_index")
    with pytest.raises(ValueError, match="index"):
        KongFeatures(level="graph", attr_name="batch_feat")
    with pytest.raises(TypeError, match="attr_name"):
        KongFeatures(attr_name=3)
    with pytest.raises(ValueError, match="normalize"):
        KongFeatures(level="node", normalize=True)
    with pytest.raises(TypeError, match="dtype"):
        KongFeatures(dtype=torch.long)
    with pytest.raises(TypeError, match="edge_order_attr"):
        KongFeatures(edge_order_attr="")
    with pytest.raises(ValueError, match="'k'"):
        KongFeatures(k=0)
    t = KongFeatures(dim=4)
    with pytest.raises(ValueError, match="no 'x'"):
        t(Data(edge_index=torch.tensor([[0], [1]]), num_nodes=2))
    with pytest.raises(TypeError, match="Data"):
        t(HeteroData())
    # one HeteroData as a collection (it has __getitem__ and __len__): a TypeError from inside PyG before
    h = HeteroData()
    h["a"].x, h["a", "r", "a"].edge_index = torch.tensor([0, 1]), torch.tensor([[0], [1]])
    said = "is a HeteroData, not a torch_geometric.data.Data: KONG reads homogeneous graphs"
    with pytest.raises(TypeError, match="'dataset' " + said):
        t.transform_dataset(h)
    with pytest.raises(TypeError, match="'graphs' " + said):
        KongVectorizer(dim=4).fit_transform(h)
    with pytest.raises(TypeError, match="floating-point"):
        t(Data(x=torch.rand(3, 2), edge_index=torch.tensor([[0], [1]])))
    # a graph without edges is fine
    out = KongFeatures(dim=4, level="both")(Data(x=torch.tensor([1, 2])))
    assert out.kong_x.shape == (2, 4) and out.kong_graph.shape == (1, 4)


def test_edges_in_adj_t_are_read_where_order_cannot_matter():
    from torch_geometric.transforms import ToSparseTensor

    d = Data(x=torch.tensor([0, 1, 2, 1]), edge_index=torch.tensor([[1, 2, 3, 0], [0, 0, 1, 2]]))
    sparse = ToSparseTensor()(d.clone()) if _has_torch_sparse() else None
    adj = torch.sparse_coo_tensor(d.edge_index.flip(0), torch.ones(4), (4, 4)).coalesce()
    via_adj = Data(x=d.x, adj_t=adj)
    want = KongFeatures(k=1, dim=16, level="graph")(d).kong_graph
    assert torch.equal(KongFeatures(k=1, dim=16, level="graph")(via_adj).kong_graph, want)
    assert want.abs().sum() > 0
    if sparse is not None:
        assert torch.equal(KongFeatures(k=1, dim=16, level="graph")(sparse).kong_graph, want)
    with pytest.raises(TypeError, match="no neighbor order, which k=2 reads"):
        KongFeatures(k=2, dim=16)(via_adj)


def _has_torch_sparse():
    try:
        import torch_sparse  # noqa: F401
    except ImportError:
        return False
    return True


def test_features_of_a_batch_split_back_per_graph():
    """KongFeatures on a Batch: to_data_list() and get_example() hand each graph its own rows."""
    import torch
    from torch_geometric.data import Batch, Data

    from kong_pyg import KongFeatures

    graphs = [Data(x=torch.tensor([0, 1, 0]), edge_index=torch.tensor([[0, 1, 2, 1], [1, 0, 1, 2]])),
              Data(x=torch.tensor([1, 1]), edge_index=torch.tensor([[0, 1], [1, 0]])),
              Data(x=torch.tensor([2]), edge_index=torch.zeros(2, 0, dtype=torch.long))]
    f = KongFeatures(k=2, dim=32, level="both")
    out = f(Batch.from_data_list(graphs))
    for i, (part, g) in enumerate(zip(out.to_data_list(), graphs)):
        want = f(g.clone())
        for got in (part, out.get_example(i)):
            assert torch.equal(got.kong_x, want.kong_x) and torch.equal(got.kong_graph, want.kong_graph)
    # the input batch is not modified (its slice tables were shared with the output's shallow copy:
    # it gained the new names, and a second transform of it under the same name re-sliced the first
    # output, which then handed graph 1 another graph's row)
    batch = Batch.from_data_list(graphs)
    slices, incs = dict(batch._slice_dict), dict(batch._inc_dict)
    first = KongFeatures(dim=4, level="graph", attr_name="kong")(batch)
    KongFeatures(dim=4, level="node", attr_name="kong")(batch)
    assert batch._slice_dict == slices and batch._inc_dict == incs
    alone = KongFeatures(dim=4, level="graph", attr_name="kong")
    for i, g in enumerate(graphs):
        assert torch.equal(first.get_example(i).kong, alone(g).kong)


def test_an_empty_graph_in_a_batch_is_refused_as_alone():
    """A graph without nodes is refused alone and in a list; in a Batch it got an all-zero row."""
    from torch_geometric.data import Batch

    g = Data(x=torch.tensor([0, 1]), edge_index=torch.tensor([[0], [1]]))
    e = Data(x=torch.zeros(0, dtype=torch.long), edge_index=torch.zeros(2, 0, dtype=torch.long))
    for level in ("graph", "node"):
        with pytest.raises(ValueError, match="graph 1 of the Batch is empty"):
            KongFeatures(k=2, dim=8, level=level)(Batch.from_data_list([g, e]))
    assert KongFeatures(k=2, dim=8, level="graph")(Batch.from_data_list([g, g])).kong_graph.shape == (2, 8)
    # the layer's readout too (it gave a row of zeros, or, without num_graphs, one row for two graphs)
    layer = KongSketch(k=1, hops=1, dim=4)
    for graphs, first_empty in (([g, e], 1), ([e, g], 0)):
        b = Batch.from_data_list(graphs)
        with pytest.raises(ValueError, match=f"graph {first_empty} of 'batch' is empty"):
            layer.readout(b.x, b.edge_index, b.batch, num_graphs=b.num_graphs)
    with pytest.raises(ValueError, match="graph 0 of 'batch' is empty"):
        layer.readout(b.x, b.edge_index, b.batch)  # (graph 0 holds no node)
    with pytest.raises(ValueError, match="graph 1 of 'batch' is empty"):
        layer.readout(g.x, g.edge_index, num_graphs=2)
    both = Batch.from_data_list([g, g])
    assert torch.equal(layer.readout(both.x, both.edge_index, both.batch, num_graphs=2),
                       layer.readout(g.x, g.edge_index).repeat(2, 1))


def test_transform_dataset_reads_each_graph_of_a_changing_dataset_once():
    """A dataset whose graphs change on each access (on disk, with a random transform) was read three times:
    to count nodes, to compute, and to attach; the node features of one reading were sliced by another's
    node counts, so a graph got rows of other graphs (or a shape error)."""
    from torch_geometric.data import Dataset

    rng = random.Random(0)
    versions = [[to_data(random_graph(rng, 8, 12, 3)) for _ in range(4)] for _ in range(3)]

    class Changing(Dataset):
        def __init__(self):
            super().__init__()
            self.reads = 0

        def len(self):
            return 4

        def get(self, i):
            self.reads += 1
            return versions[(self.reads - 1) // 4 % 3][i].clone()

    f = KongFeatures(k=2, dim=16, level="both", edge_labels=False)
    out = f.transform_dataset(Changing())
    for d in out:
        alone = f(Data(x=d.x, edge_index=d.edge_index))
        assert torch.equal(d.kong_x, alone.kong_x) and torch.equal(d.kong_graph, alone.kong_graph)
