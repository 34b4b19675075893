"""Fast paths give the same numbers as the general ones (issue 13/15)."""
import pickle
import warnings
from contextlib import contextmanager

import numpy as np
import pytest
import torch
from helpers import Collated
from torch_geometric.data import Data
from torch_geometric.loader import DataLoader

from kong_pyg import KongFeatures, KongSketch, KongVectorizer, compact_graphs
from kong_pyg.datasets import load_tu
from kong_pyg.graph_union import _cat
from kong_pyg.graphs import count_nodes, iter_graph_batches
from kong_pyg.inputs import labels
from kong_pyg.kgrams import flat_nonzero
from kong_pyg.threads import available_cores, torch_threads


@pytest.fixture(scope="module")
def mutag_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("tu")


@pytest.fixture(scope="module")
def mutag(mutag_cache):
    return load_tu(cache=mutag_cache)


def clones(graphs):
    return [Data(**{k: v.clone() for k, v in g.to_dict().items()}) for g in graphs]


def same_csr(a, b):
    return (a.shape == b.shape and np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
            and a.data.tobytes() == b.data.tobytes())


@pytest.mark.parametrize("opts", [dict(k=1), dict(k=2), dict(k=2, traversal="wl"), dict(k=3, hops=1)])
def test_dataset_list_of_views_and_list_of_copies_give_the_same_exact_map(mutag, opts):
    views = [mutag[i] for i in range(len(mutag))]
    ref = KongVectorizer(**opts).fit_transform(mutag)
    assert same_csr(KongVectorizer(**opts).fit_transform(views), ref)
    assert same_csr(KongVectorizer(**opts).fit_transform(clones(views)), ref)
    # other batches number the columns in another order: the same kernel matrix
    small = KongVectorizer(batch_size=7, **opts).fit_transform(views)
    assert np.array_equal((small @ small.T).toarray(), (ref @ ref.T).toarray())


def test_graphs_of_one_storage_are_joined_as_a_view(mutag):
    views = [mutag[i] for i in range(10)]
    edges = _cat([g.edge_index for g in views], 1)
    assert edges.data_ptr() == views[0].edge_index.data_ptr()
    assert torch.equal(edges, torch.cat([g.edge_index for g in views], 1))
    # rows: parts of 8 KiB and more on average are viewed, smaller ones copied (cheaper than the checks)
    joined = _cat([g.x for g in views], 0)
    assert joined.data_ptr() != views[0].x.data_ptr()
    assert torch.equal(joined, torch.cat([g.x for g in views]))
    wide = torch.randn(1000, 32, dtype=torch.float64)  # (100 rows of 256 bytes a part)
    parts = list(wide.split(100))
    assert _cat(parts, 0).data_ptr() == wide.data_ptr() and torch.equal(_cat(parts, 0), wide)
    assert _cat(parts[:5] + parts[6:], 0).data_ptr() != wide.data_ptr()  # (a gap: copied)
    # not side by side (a gap, another order): copied
    assert torch.equal(_cat([views[2].x, views[0].x], 0), torch.cat([views[2].x, views[0].x]))
    assert torch.equal(_cat([views[0].x, views[2].x], 0), torch.cat([views[0].x, views[2].x]))
    gb = next(iter_graph_batches(views, 100))
    ref = next(iter_graph_batches(mutag[:10], 100))
    assert all(torch.equal(a, b) for a, b in zip(gb[:5], ref[:5]) if a is not None)


def test_bad_edges_in_a_list_are_reported_per_graph(mutag):
    gs = clones([mutag[i] for i in range(3)])
    gs[1].edge_index = gs[1].edge_index.clone()
    gs[1].edge_index[0, 0] = gs[1].num_nodes
    with pytest.raises(ValueError, match="graph 1: 'edge_index' holds node indices outside"):
        KongVectorizer().fit(gs)


@pytest.mark.parametrize("opts", [
    dict(k=2), dict(k=1, traversal="wl", const=2.0), dict(k=2, kernel="cosine", degree=2),
    dict(k=3, hops=1, relabel=True, normalize=True),
])
def test_transform_dataset_equals_the_transform_graph_by_graph(mutag, mutag_cache, opts):
    ds = mutag[:40]
    t = KongFeatures(dim=64, level="both", **opts)
    ref = [t(ds[i]) for i in range(len(ds))]
    graphs = [ds[i] for i in range(len(ds))]
    out = t.transform_dataset(graphs, batch_size=16)
    assert "kong_x" not in graphs[0]  # the input is not modified
    stored = t.transform_dataset(load_tu(cache=mutag_cache)[:40], batch_size=16)
    for i in range(len(ds)):
        for got in (out[i], stored[i]):
            assert torch.equal(got.kong_x, ref[i].kong_x)
            assert torch.equal(got.kong_graph, ref[i].kong_graph)
            assert got.kong_x.dtype == torch.float32


def test_transform_dataset_fills_the_collated_storage(tmp_path):
    ds = load_tu(cache=tmp_path)
    ds[0]  # a cached graph must not hide the new attributes
    t = KongFeatures(k=2, dim=32, level="both")
    assert t.transform_dataset(ds, batch_size=50, progress=False) is ds
    assert ds._data.kong_x.shape == (ds._data.x.size(0), 32)
    assert ds[0].kong_x.shape == (ds[0].num_nodes, 32) and ds[0].kong_graph.shape == (1, 32)
    layer = KongSketch(k=2, dim=32)
    g = ds[5]
    assert torch.equal(g.kong_x, layer(g.x, g.edge_index, g.edge_attr))
    batch = next(iter(DataLoader(ds, batch_size=8)))
    assert batch.kong_graph.shape == (8, 32) and batch.kong_x.shape == (batch.num_nodes, 32)
    # a subset view writes into the shared storage, for every stored graph
    sub = load_tu(cache=tmp_path)[10:20]
    KongFeatures(k=1, dim=8, level="graph", attr_name="g1").transform_dataset(sub)
    assert sub[0].g1.shape == (1, 8) and sub._data.g1.shape == (188, 8)


def test_transform_dataset_of_a_view_drops_the_graphs_cached_by_its_parent(tmp_path):
    """PyG's cache of graphs is one list shared by a data set and its views: emptied for all of them."""
    ds = load_tu(cache=tmp_path)
    ds[1], ds[150]  # cached by the parent before the view is made (the view shares the list)
    KongFeatures(k=1, dim=8, level="graph").transform_dataset(ds[:100])
    for order in ([0, 1, 2], [1, 0, 2]):  # (a cached graph first used to drop the attribute silently)
        batch = next(iter(DataLoader(ds[order], batch_size=3)))
        assert batch.kong_graph.shape == (3, 8)
    assert ds[1].kong_graph.shape == ds[150].kong_graph.shape == (1, 8)
    later = ds[:5]  # views made after the call share the (now empty) cache too
    later[0]
    KongFeatures(k=1, dim=4, level="graph", attr_name="again").transform_dataset(ds)
    assert later[0].again.shape == (1, 4)


def test_a_second_transform_dataset_warns_about_graphs_cached_in_other_views(tmp_path):
    """The parent of a view caches graphs no call on the view can reach: they keep the old features, and a
    warning counts them; nothing a user holds is written into (a matrix taken before keeps its numbers)."""
    ds = load_tu(cache=tmp_path)
    train = ds[10:50]  # made before anything was read: a cache of its own
    KongFeatures(k=1, dim=16, level="both").transform_dataset(ds)
    first = ds.kong_graph  # (the storage's tensor itself)
    kept = first.clone()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (nothing held yet: no warning)
        KongFeatures(k=1, dim=16, seed=5, level="both").transform_dataset(ds)
    ds[12]  # cached by the parent
    stale = r"^1 graph\(s\) taken out .* hold rows of the 'kong_x' it replaces"
    with pytest.warns(UserWarning, match=stale) as w:
        KongFeatures(k=2, dim=16, level="both").transform_dataset(train)
    assert [r.filename for r in w] == [__file__]  # (the caller's line, not a wrapper's inside kong_pyg)
    want = KongFeatures(k=2, dim=16, level="both")(ds.get(12))
    assert torch.equal(first, kept)  # (never written into)
    assert torch.equal(ds.kong_graph[12:13], want.kong_graph)
    assert torch.equal(train[2].kong_graph, want.kong_graph)  # (from the data set passed)
    assert not torch.equal(ds[12].kong_graph, want.kong_graph)  # (the parent's cached graph: as warned)
    with pytest.warns(UserWarning, match="1 graph"):  # (train's cached graph 2, now)
        KongFeatures(k=2, dim=16, level="both").transform_dataset(ds)  # (the advice: the one they came from)
    assert torch.equal(ds[12].kong_x, want.kong_x) and torch.equal(ds[10:20][2].kong_graph, want.kong_graph)


def test_a_one_graph_copy_and_inference_mode_leave_the_data_set_alone(tmp_path):
    ds = load_tu(cache=tmp_path)
    with torch.inference_mode():
        KongFeatures(k=1, dim=16, level="both").transform_dataset(ds)
    before = ds._data.kong_graph.clone()
    one = ds[3:4].copy()  # (one graph: PyG stores it with slices None, its tensors views of ds's)
    KongFeatures(k=1, dim=16, seed=1, level="graph").transform_dataset(one)
    KongFeatures(k=2, dim=16, level="both").transform_dataset(ds)  # (after inference mode)
    assert not torch.equal(one[0].kong_graph, ds[3].kong_graph)
    assert torch.equal(KongFeatures(k=1, dim=16, level="both").transform_dataset(load_tu(cache=tmp_path))
                       .kong_graph, before)


def test_the_warning_counts_graphs_taken_out_not_the_storages_own_views(tmp_path):
    """PyG's TUDataset stores x as a view of a larger tensor: its base is not a graph taken out."""
    ds = load_tu(cache=tmp_path)
    n = ds._data.x.size(0)
    ds._data.x = torch.cat([ds._data.x, ds._data.x]).narrow(0, 0, n)  # (as TUDataset's processing leaves it)
    assert ds._data.x._base is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        KongFeatures(level="node", dim=8, attr_name="x").transform_dataset(ds)
    ds = load_tu(cache=tmp_path)
    g = ds[0]  # (held: its x rows are the old labels)
    with pytest.warns(UserWarning, match=r"^1 graph\(s\) taken out .* rows of the 'x' it replaces"):
        KongFeatures(level="node", dim=8, attr_name="x").transform_dataset(ds)
    assert g.x.shape[1] == 7 and ds[0].x.shape[1] == 8


def test_a_one_graph_storage_is_the_collated_data_object_and_every_view_sees_the_features():
    g = Data(x=torch.tensor([0, 1, 1]), edge_index=torch.tensor([[0, 1, 2], [1, 2, 0]]))
    ds = Collated([g])  # (PyG's collate gives g itself as the storage)
    view = ds[0:1]
    KongFeatures(level="both", dim=8).transform_dataset(view)
    for got in (ds[0], view[0], g):  # (the parent and the view share the storage, as with more graphs)
        assert got.kong_x.shape == (3, 8) and got.kong_graph.shape == (1, 8)


def test_transform_dataset_warns_when_the_data_sets_transform_writes_the_same_attribute(tmp_path):
    from torch_geometric.transforms import Compose, NormalizeFeatures

    ds = load_tu(cache=tmp_path)
    ds.transform = Compose([NormalizeFeatures(), KongFeatures(k=1, dim=8, level="graph")])
    with pytest.warns(UserWarning, match=r"transform .*writes \['kong_graph'\]: dataset\[i\] gives its"):
        KongFeatures(k=2, dim=8, level="graph").transform_dataset(ds)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        KongFeatures(k=2, dim=8, level="graph", attr_name="other").transform_dataset(ds)


def test_transform_dataset_of_a_view_names_storage_graphs_and_refuses_an_empty_view():
    def g(n):
        edges = torch.tensor([[0], [0]]) if n else torch.empty(2, 0, dtype=torch.long)
        return Data(x=torch.ones(n, 1), edge_index=edges)

    ds = Collated([g(3), g(2), g(0), g(4)])
    with pytest.raises(ValueError, match=r"graph 2 is empty .*count the 4 graphs of the storage this view "
                                         r"of 3 shares.*dataset.copy\(\)"):
        KongFeatures(level="graph", dim=8).transform_dataset(ds[[0, 1, 3]])
    own = KongFeatures(level="graph", dim=8).transform_dataset(ds[[0, 1, 3]].copy())
    assert own.kong_graph.shape == (3, 8)
    with pytest.raises(ValueError, match="'dataset' is empty"):
        KongFeatures(level="graph", dim=8).transform_dataset(ds[torch.zeros(4, dtype=torch.bool)])
    assert "kong_graph" not in ds._data


def test_transform_dataset_arguments(mutag):
    with pytest.raises(ValueError, match="batch_size"):
        KongFeatures().transform_dataset(mutag, batch_size=0)
    with pytest.raises(ValueError, match="empty"):
        KongFeatures().transform_dataset([])


def test_compact_graphs_pickle_small_and_give_the_same_features(mutag):
    views = [mutag[i] for i in range(len(mutag))]
    small = compact_graphs(mutag)
    big_size, small_size = len(pickle.dumps(views)), len(pickle.dumps(small))
    assert small_size * 20 < big_size and small_size < 2_000_000
    assert all(torch.equal(a.x, b.x) and torch.equal(a.edge_index, b.edge_index)
               for a, b in zip(views, small))
    assert views[0].x.untyped_storage().nbytes() > views[0].x.nbytes  # the input still views its storage
    assert same_csr(KongVectorizer(k=2).fit_transform(small), KongVectorizer(k=2).fit_transform(mutag))
    assert count_nodes(small) == count_nodes(mutag) == mutag._data.x.size(0)


def test_compact_graphs_keeps_sparse_adjacencies(mutag):
    """Graphs with a sparse adj_t (ToSparseTensor; k = 1 reads it) crashed: sparse tensors lack storage."""
    import torch_geometric.transforms as T

    sparse = [T.ToSparseTensor()(mutag[i]) for i in range(5)]
    small = compact_graphs(sparse)
    assert all(b.adj_t is a.adj_t and torch.equal(b.x, a.x) for a, b in zip(sparse, small))
    assert small[0].x.untyped_storage().nbytes() == small[0].x.nbytes
    v = KongVectorizer(k=1, edge_labels=False)  # (edge labels need edge_index)
    assert same_csr(v.fit_transform(small), v.fit_transform(mutag[:5]))


def test_threads_are_capped_and_restored(mutag):
    before = torch.get_num_threads()
    seen = []
    with torch_threads(1):
        seen.append(torch.get_num_threads())
    with torch_threads(10_000):
        seen.append(torch.get_num_threads())
    with torch_threads(None):
        seen.append(torch.get_num_threads())
    with torch_threads(available_cores() + 1, cap=False):  # the stream's rule: exactly the count asked
        seen.append(torch.get_num_threads())
    assert seen == [1, min(10_000, available_cores()), before, available_cores() + 1]
    assert torch.get_num_threads() == before
    KongVectorizer(k=2, threads=1).fit_transform(mutag[:10])
    assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match="threads"):
        KongVectorizer(threads=0).fit(mutag[:3])


def test_one_hot_labels_by_dot_product():
    gen = torch.Generator().manual_seed(0)
    idx = torch.randint(0, 37, (500,), generator=gen)
    narrow = [getattr(torch, n) for n in ("uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2")
              if hasattr(torch, n)]  # (PyTorch counts or sums few of these: widened first)
    for dtype in [torch.float32, torch.float64, torch.float16, torch.long, torch.bool] + narrow:
        x = torch.nn.functional.one_hot(idx, 37).to(dtype)
        assert torch.equal(labels(x, "x", 500), idx), dtype
    counts = torch.tensor([[2, 0], [0, 1], [1, 1]])
    assert torch.equal(labels(counts.to(torch.uint32), "x", 3), labels(counts, "x", 3))
    with pytest.raises(ValueError, match="labels >= 2\\^63"):
        labels(torch.tensor([[2**63, 0]], dtype=torch.uint64), "x", 1)
    bad = torch.nn.functional.one_hot(idx, 37).float()
    bad[3, 0] = -1.0
    bad[3, 1] += 1.0
    with pytest.raises(TypeError, match="not one-hot"):
        labels(bad, "x", 500)
    with pytest.raises(TypeError, match="not one-hot"):
        labels(torch.full((2, 3), float("nan")), "x", 2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_one_hot_check_is_exact(dtype):
    idx = torch.tensor([0, 2, 1, 1, 0])
    x = torch.nn.functional.one_hot(idx, 3).to(dtype)
    x[1, 0] = -0.0  # a zero with the sign bit: still one-hot
    assert torch.equal(labels(x, "x", 5), idx)
    for tiny in (1e-30, -1e-30):  # a row sum of 1 after rounding, but two non-zeros
        x[1, 0] = tiny
        with pytest.raises(TypeError, match="not one-hot"):
            labels(x, "x", 5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_one_hot_check_sees_subnormals_under_flush_denormal(dtype):
    x = torch.nn.functional.one_hot(torch.tensor([0, 2, 1]), 3).to(dtype)
    x[1, 0] = torch.finfo(dtype).tiny / 4  # a subnormal, which flush-denormal arithmetic reads as 0
    assert x[1, 0].view(torch.int16 if x.element_size() == 2 else torch.int32 if x.element_size() == 4
                        else torch.int64).item() != 0
    if not torch.set_flush_denormal(True):
        pytest.skip("this CPU cannot flush subnormals")
    try:
        with pytest.raises(TypeError, match="not one-hot"):
            labels(x, "x", 3)
    finally:
        torch.set_flush_denormal(False)


def test_one_hot_labels_may_be_a_negative_view():
    x = torch._neg_view(-torch.nn.functional.one_hot(torch.tensor([0, 2, 1]), 3).double())
    assert x.is_neg() and torch.equal(labels(x, "x", 3), torch.tensor([0, 2, 1]))  # (a RuntimeError)


def test_sketched_maps_of_one_graph_and_of_a_batch_agree_bitwise(mutag):
    layer = KongSketch(k=2, dim=64, dtype=torch.float64)
    gb = next(iter_graph_batches(mutag[:12], 100))
    batched = layer.readout(gb.x, gb.edge_index, gb.batch, gb.edge_attr)
    for i in range(12):
        g = mutag[i]
        assert torch.equal(layer.readout(g.x, g.edge_index, edge_attr=g.edge_attr)[0], batched[i])
    dense = KongVectorizer(k=2, dim=64, batch_size=5).fit_transform(mutag[:12])
    assert np.array_equal(dense, batched.numpy())


@pytest.mark.parametrize("opts", [
    dict(k=2), dict(k=3, hops=3, traversal="wl"), dict(k=2, kernel="cosine", degree=2, const=1.0),
    dict(k=2, kernel="cosine", norm="sketch", blended=True), dict(k=1, hops=3, degree=3, const=2.0),
])
def test_node_maps_from_exact_rows_equal_forward(mutag, opts):
    layer = KongSketch(dim=64, dtype=torch.float64, **opts)
    gb = next(iter_graph_batches(mutag[:20], 100))
    ref = layer(gb.x, gb.edge_index, gb.edge_attr)
    assert torch.equal(layer.node_maps(gb.x, gb.edge_index, gb.edge_attr), ref)
    layer.switch_ratio = 0.0  # straight to dense propagation
    assert torch.equal(layer.node_maps(gb.x, gb.edge_index, gb.edge_attr), ref)


@pytest.mark.parametrize("seed", range(6))
def test_dense_row_ids_equals_unique_rows(seed):
    from kong_pyg.exact import dense_row_ids

    g = torch.Generator().manual_seed(seed)
    for width in (1, 2, 3):
        for low, high in ((0, 12), (-3, 40), (0, 2**40)):  # folded as they are; negative; dense ids first
            rows = torch.randint(low, high, (500, width), generator=g)
            ids, table = dense_row_ids(rows)
            uniq, inv = torch.unique(rows, dim=0, return_inverse=True)
            assert torch.equal(ids, inv) and torch.equal(table, uniq)


def test_vocabulary_numbers_keys_alike_empty_or_not():
    from kong_pyg.vocab import KeyVocab, TupleVocab

    keys = torch.tensor([9, 3, 9, 7, 3])
    fresh, grown = KeyVocab(), KeyVocab()
    grown.lookup(torch.tensor([5]), grow=True)
    assert fresh.lookup(keys, grow=True).tolist() == [2, 0, 2, 1, 0]
    assert grown.lookup(keys, grow=True).tolist() == [3, 1, 3, 2, 1]
    assert KeyVocab().lookup(keys, grow=False).tolist() == [-1] * 5
    rows = torch.tensor([[4, 1], [0, 2], [4, 0]])
    for vocab in (TupleVocab(), TupleVocab()):
        assert vocab.lookup(rows, grow=True, distinct=True).tolist() == [0, 1, 2]
        assert vocab.lookup(rows[[2, 0]], grow=False, distinct=True).tolist() == [2, 0]
        assert vocab.lookup_pairs(rows[:, 0], rows[:, 1], grow=False).tolist() == [0, 1, 2]
        assert [vocab.row(c) for c in range(3)] == rows.tolist()


@pytest.mark.parametrize("dtype", [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
                                   torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_flat_nonzero_equals_torch_nonzero(dtype):
    gen = torch.Generator().manual_seed(7)
    for n in (0, 1, 17, 5000):
        keep = torch.rand(2 * n, generator=gen) < 0.3
        t = (torch.randint(-2, 3, (2 * n,), generator=gen) * keep).to(dtype)
        if dtype.is_floating_point and n:
            t[0], t[1] = float("nan"), -0.0  # NaN counts as non-zero, -0.0 does not
        for view in (t, t[::2]):  # contiguous and strided
            got = flat_nonzero(view)
            assert got.dtype == torch.long and torch.equal(got, view.nonzero().view(-1))
    grad = torch.tensor([0.0, 2.0, 0.0, -1.0], requires_grad=True)  # (torch's own path)
    assert flat_nonzero(grad).tolist() == [1, 3]
    neg = torch.tensor([0j, 1j, 2 + 0j]).conj().imag  # (a view with its negative bit set: torch's path)
    assert neg.is_neg() and flat_nonzero(neg).tolist() == [1]
    with pytest.raises(RuntimeError):  # 2-D input: an error, as t.nonzero().view(-1) raised
        flat_nonzero(torch.eye(2))


def test_all_finite_by_the_sum_and_where_the_sum_overflows():
    from kong_pyg.outputs import all_finite

    big = torch.full((4,), 1e308, dtype=torch.float64)  # finite entries whose sum overflows
    assert all_finite(big) and all_finite(torch.cat([big, -big])) and all_finite(torch.zeros(0))
    for bad in (float("inf"), -float("inf"), float("nan")):
        for base in (torch.ones(5, dtype=torch.float64), big):
            t = base.clone()
            t[2] = bad
            assert not all_finite(t)
    assert not all_finite(torch.tensor([float("inf"), -float("inf")]))  # (a NaN sum)
    half = torch.full((4,), 60000.0, dtype=torch.float16)  # finite, the float16 sum overflows
    assert all_finite(half) and not all_finite(torch.cat([half, torch.tensor([float("inf")]).half()]))


@pytest.mark.parametrize("num_nodes", [1, 300, 2**16, 2**16 + 1])
def test_grouping_by_centre_is_torchs_stable_sort(num_nodes):
    from kong_pyg.ordering import stable_sort_ids

    gen = torch.Generator().manual_seed(num_nodes)
    for m in (0, 1, 5000):
        center = torch.randint(0, num_nodes, (m,), generator=gen)
        if m:  # both ends of the id range, the largest id first
            center[0], center[-1] = num_nodes - 1, 0
        values, order = stable_sort_ids(center, num_nodes)
        ref_values, ref_order = torch.sort(center, stable=True)
        assert torch.equal(order, ref_order) and torch.equal(values, ref_values)


def test_joining_a_list_of_graphs_compares_no_tensor(monkeypatch, mutag):
    """The join stays a few bulk calls: a Python-level tensor comparison per graph made MUTAG 3x slower."""
    from kong_pyg.graph_union import concat_graphs

    graphs_list = [mutag[i] for i in range(len(mutag))]
    graphs_list[3] = Data(x=graphs_list[3].x)  # (one graph without edge_index: the 'no edges' path too)

    def compared(self, other):
        raise AssertionError("a tensor was compared while joining graphs")

    monkeypatch.setattr(torch.Tensor, "__eq__", compared)
    monkeypatch.setattr(torch.Tensor, "__ne__", compared)
    batch = concat_graphs(graphs_list, 0, False, None)
    assert batch.num_graphs == len(graphs_list)


def _many_graphs():
    return [Data(x=torch.tensor([i % 3, 1]), edge_index=torch.tensor([[0], [1]])) for i in range(3000)]


@contextmanager
def _collections():
    """The generations of the garbage collections that start inside the block (after a full one)."""
    import gc

    runs = []

    def seen(phase, info):
        if phase == "start":
            runs.append(info["generation"])

    gc.collect()
    gc.callbacks.append(seen)
    try:
        yield runs
    finally:
        gc.callbacks.remove(seen)


def test_joining_many_graphs_starts_no_garbage_collection():
    """Thousands of shape tuples alive while joining a list used to start collections of every object."""
    import gc

    from kong_pyg.graphs import gc_paused

    many = _many_graphs()
    with _collections() as runs:
        union = next(iter_graph_batches(many, 4096))
    assert union.num_graphs == 3000 and runs == []
    assert union.edge_index[:, -1].tolist() == [5998, 5999]
    # the collector's state is restored: on stays on, off stays off, also after an error and nested
    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        try:
            with gc_paused():
                with gc_paused():
                    assert not gc.isenabled()
                assert not gc.isenabled()
            assert gc.isenabled() == enabled
            with pytest.raises(ValueError, match="graph 2"):
                next(iter_graph_batches(many[:2] + [Data(x=torch.zeros(0, dtype=torch.long))], 10))
            assert gc.isenabled() == enabled
        finally:
            gc.enable()


def test_features_attached_to_many_graphs_start_no_garbage_collection():
    """transform_dataset on a list makes a shallow copy of every graph: thousands of new Data objects, which
    started full collections (about 0.2 s on NCI1 now and then); the copies carry the right rows."""
    import gc

    many = _many_graphs()
    t = KongFeatures(k=1, dim=16, level="both")
    with _collections() as runs:
        out = t.transform_dataset(many)
    assert runs in ([], [0]) and gc.isenabled()  # (one young collection may run as the collector resumes)
    for i in (0, 1, 2, 2999):
        assert torch.equal(out[i].kong_graph, t(many[i]).kong_graph)
        assert torch.equal(out[i].kong_x, t(many[i]).kong_x)
