"""The docs' order rule, checked against the installed PyG (docs/guide.md).

Node 0 receives edges from 3, 1, 2 in that order (its neighbor order). PyG
operations that sort edges turn that into 1, 2, 3; the ones that do not keep it.
"""
import random

import pytest
import torch
import torch_geometric.transforms as T
from torch_geometric.data import Batch, Data
from torch_geometric.loader import DataLoader
from torch_geometric.utils import coalesce, sort_edge_index, to_undirected

from kong_pyg import KongSketch, KongVectorizer

ORDER = [3, 1, 2]


def graph():
    src = torch.tensor(ORDER + [0, 0, 0])
    dst = torch.tensor([0, 0, 0] + ORDER)
    return Data(x=torch.tensor([0, 1, 2, 3]), edge_index=torch.stack([src, dst]))


def order_of_node0(edge_index):
    return edge_index[0, edge_index[1] == 0].tolist()


@pytest.mark.parametrize("op", [
    lambda d: coalesce(d.edge_index),
    lambda d: to_undirected(d.edge_index),
    lambda d: sort_edge_index(d.edge_index),
    lambda d: T.ToUndirected()(d).edge_index,
    lambda d: T.RemoveDuplicatedEdges()(d).edge_index,
    lambda d: d.clone().coalesce().edge_index,
], ids=["coalesce", "to_undirected", "sort_edge_index", "ToUndirected", "RemoveDuplicatedEdges",
        "Data.coalesce"])
def test_these_sort_neighbors_by_id(op):
    assert order_of_node0(graph().edge_index) == ORDER
    assert order_of_node0(op(graph())) == [1, 2, 3]


def test_to_sparse_tensor_loses_the_order_and_kong_rejects_it():
    d = T.ToSparseTensor(layout=torch.sparse_csr)(graph())
    assert "edge_index" not in d
    with pytest.raises(TypeError, match="neighbor order"):
        KongSketch(k=2)(d.x, d.adj_t)
    with pytest.raises(TypeError, match="graph 0 has a sparse adjacency 'adj_t' and no 'edge_index'"):
        KongVectorizer(k=2).fit_transform([d])
    # with k = 1 the order cannot matter: read as its edges, on every route
    assert KongVectorizer(k=1).fit_transform([d]).sum() > 0


def test_edge_index_objects_are_read_in_tensor_order():
    """PyG's EdgeIndex: KONG reads the edges in the tensor's order, whatever its sort flag says."""
    from torch_geometric import EdgeIndex

    g = graph()
    flipped = g.edge_index.flip(1)  # another order of the same edges
    ei = EdgeIndex(flipped, sparse_size=(g.num_nodes, g.num_nodes), sort_order="col")  # a wrong claim
    layer = KongSketch(k=2, dim=64)
    assert torch.equal(layer(g.x, ei), layer(g.x, flipped))
    assert not torch.equal(layer(g.x, ei), layer(g.x, g.edge_index))


def test_tu_dataset_loader_sorts_edges(tmp_path):
    from torch_geometric.datasets import TUDataset

    raw = tmp_path / "T" / "raw"
    raw.mkdir(parents=True)
    # graph 1: node 1 (1-based) receives from 4, 2, 3 in file order, plus a self-loop; graph 2: one edge
    (raw / "T_A.txt").write_text("4, 1\n2, 1\n3, 1\n1, 4\n1, 2\n1, 3\n2, 2\n5, 6\n")
    (raw / "T_graph_indicator.txt").write_text("1\n1\n1\n1\n2\n2\n")
    (raw / "T_graph_labels.txt").write_text("0\n1\n")
    (raw / "T_node_labels.txt").write_text("0\n1\n2\n3\n0\n1\n")
    d = TUDataset(str(tmp_path), "T")[0]
    assert order_of_node0(d.edge_index) == [1, 2, 3]
    assert not bool((d.edge_index[0] == d.edge_index[1]).any())  # self-loops dropped too


def test_batching_and_loading_keep_the_order():
    gs = [graph(), graph()]
    b = Batch.from_data_list(gs)
    assert order_of_node0(b.edge_index) == ORDER
    assert b.edge_index[0, b.edge_index[1] == 4].tolist() == [o + 4 for o in ORDER]
    loaded = next(iter(DataLoader(gs, batch_size=2)))
    assert torch.equal(loaded.edge_index, b.edge_index)
    assert order_of_node0(b.get_example(1).edge_index) == ORDER
    # AddSelfLoops appends (the loop becomes the last neighbor), it does not sort
    assert order_of_node0(T.AddSelfLoops()(graph()).edge_index) == ORDER + [0]


def test_sorting_changes_k2_features_not_k1():
    d = graph()
    s = coalesce(d.edge_index)
    for k, differ in ((1, False), (2, True)):
        layer = KongSketch(k=k, hops=1, dim=64)
        assert (not torch.equal(layer(d.x, d.edge_index), layer(d.x, s))) == differ


def test_to_undirected_adds_up_one_hot_edge_labels_of_graphs_stored_both_ways():
    """guide: ToUndirected's reduce='add' doubles a one-hot edge label stored in both directions (TU sets)."""
    d = graph()
    d.edge_attr = torch.eye(2)[torch.tensor([0, 1, 1, 0, 1, 1])]  # one-hot, both directions stored
    doubled = T.ToUndirected()(d.clone())
    assert doubled.edge_attr.max() == 2
    layer = KongSketch(k=1, hops=1, dim=16)
    with pytest.raises(TypeError, match=r"'edge_attr' .* not one-hot rows \(row 0: non-zero values "
                                        r"\[2.0\]\).*ToUndirected\(reduce='max'\)"):
        layer(doubled.x, doubled.edge_index, doubled.edge_attr)
    with pytest.raises(TypeError, match=r"values \[2.0\]\); KONG needs discrete labels") as info:
        layer(torch.eye(4)[d.x] * 2, d.edge_index)
    assert "ToUndirected" not in str(info.value)  # (x: ToUndirected never adds labels up there)
    kept = T.ToUndirected(reduce="max")(d.clone())
    assert torch.equal(layer.readout(kept.x, kept.edge_index, edge_attr=kept.edge_attr),
                       layer.readout(d.x, d.edge_index, edge_attr=d.edge_attr))  # (k = 1: sorting is fine)


def test_the_round_trip_through_heterogeneous_graphs_regroups_edges_by_type():
    d = graph()
    d.node_type = torch.tensor([0, 1, 0, 1])
    src_type, dst_type = d.node_type[d.edge_index[0]], d.node_type[d.edge_index[1]]
    d.edge_type = 2 * src_type + dst_type  # (node 0 hears from 3 (type 1), 1 (type 1), 2 (type 0))
    back = d.to_heterogeneous().to_homogeneous()
    ids = back.x  # (x holds each node's original id: 0, 1, 2, 3)
    heard = ids[back.edge_index[0, ids[back.edge_index[1]] == 0]].tolist()
    assert sorted(heard) == [1, 2, 3] and heard != ORDER and heard.index(3) < heard.index(1)


def test_random_link_split_shuffles_the_edges_it_keeps():
    torch.manual_seed(0)
    n = 40
    ei = torch.stack([torch.arange(n).repeat_interleave(5), torch.randint(0, n, (5 * n,))])
    d = Data(x=torch.zeros(n, dtype=torch.long), edge_index=ei, eid=torch.arange(ei.size(1)))
    for split in T.RandomLinkSplit(is_undirected=False, add_negative_train_samples=False)(d):
        e = split.edge_index
        assert not bool((split.eid.diff() > 0).all())  # (kept edges not in their original order)
        assert not bool((e[0].diff() >= 0).all())  # (nor sorted by source: shuffled, not sorted)


def test_the_neighbor_samplers_csc_copy_does_not_keep_each_nodes_order():
    from torch_geometric.sampler.utils import to_csc

    torch.manual_seed(0)
    ei = torch.randint(0, 50, (2, 300))
    _, _, perm = to_csc(Data(edge_index=ei, num_nodes=50))
    col = ei[1][perm]
    assert bool((col.diff() >= 0).all())  # (sorted by target)
    same = col[1:] == col[:-1]
    assert bool((perm[1:][same] < perm[:-1][same]).any())  # (some node's edges out of their order)


def test_virtual_node_keeps_the_order_and_adds_a_zero_label():
    d = T.VirtualNode()(graph())
    assert order_of_node0(d.edge_index) == ORDER + [4] and d.x.tolist() == [0, 1, 2, 3, 0]
    one_hot = graph()
    one_hot.x = torch.eye(4)[one_hot.x]
    one_hot.edge_attr = torch.eye(2)[torch.tensor([0, 1, 1, 0, 1, 1])]
    v = T.VirtualNode()(one_hot)
    assert v.edge_attr[6:].abs().sum() == 0  # (its edges' labels: zero rows)
    with pytest.raises(TypeError, match="'x' holds floating-point values that are not one-hot rows"):
        KongVectorizer(k=2).fit_transform([v])
    v.x = torch.eye(5)[torch.tensor([0, 1, 2, 3, 4])]
    with pytest.raises(TypeError, match="'edge_attr' holds floating-point values that are not one-hot rows"):
        KongVectorizer(k=2).fit_transform([v])
    assert KongVectorizer(k=2, edge_labels=False).fit_transform([v]).shape[0] == 1


def test_a_one_node_graphs_graph_row_is_taken_for_a_node_row_by_later_transforms():
    from kong_pyg import KongFeatures

    one = Data(x=torch.tensor([1]), edge_index=torch.empty(2, 0, dtype=torch.long))
    features = KongFeatures(k=2, dim=8, level="graph")
    assert T.Compose([features, T.RemoveIsolatedNodes()])(one).kong_graph.shape == (0, 8)
    assert T.Compose([features, T.VirtualNode()])(one).kong_graph.shape == (2, 8)
    assert features(one).subgraph(torch.tensor([], dtype=torch.long)).kong_graph.shape == (0, 8)
    one_edge = Data(x=torch.tensor([0, 1]), edge_index=torch.tensor([[0], [1]]))
    assert T.Compose([features, T.ToUndirected()])(one_edge).kong_graph.shape == (2, 8)
    # (as the guide says: apply such transforms before KongFeatures)


def test_to_undirected_adds_up_integer_categorical_edge_labels_silently():
    """guide: OGB-style integer rows are added up too, and read as other labels without an error."""
    d = Data(x=torch.tensor([[6, 0], [7, 1], [6, 0]]), edge_index=torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]]),
             edge_attr=torch.tensor([[1, 0, 0], [1, 0, 0], [0, 1, 1], [0, 1, 1]]))
    summed = T.ToUndirected()(d.clone())
    assert summed.edge_attr.tolist() == [[2, 0, 0], [2, 0, 0], [0, 2, 2], [0, 2, 2]]
    vec = KongVectorizer(k=1, hops=1).fit([d])
    assert (vec.transform([summed]) != vec.transform([d])).nnz > 0  # (no error: other labels)
    kept = T.ToUndirected(reduce="max")(d.clone())
    assert (vec.transform([kept]) != vec.transform([d])).nnz == 0


def test_to_sparse_tensor_moves_edge_weight_into_the_counts():
    """guide: with edge_weight the sparse entries are the (summed) weights, read as edge counts."""
    x, ei = torch.tensor([0, 1, 2]), torch.tensor([[1, 1, 2], [0, 0, 0]])  # node 0 hears 1 twice
    vec = KongVectorizer(k=1, hops=1).fit([Data(x=x, edge_index=ei)])
    plain = vec.transform([Data(x=x, edge_index=ei)]).toarray()
    for weight, twos in ((None, 1), (torch.ones(3), 2), (torch.tensor([3.0, 3.0, 1.0]), 6)):
        d = Data(x=x, edge_index=ei, edge_weight=weight)
        assert (vec.transform([d]).toarray() == plain).all()  # (edge_index: the weight is not read)
        sparse = vec.transform([T.ToSparseTensor()(d.clone())]).toarray()
        column = vec.get_feature_names_out().tolist().index("L1:1")
        assert sparse[0, column] == twos
    with pytest.raises(ValueError, match="ToSparseTensor puts a graph's 'edge_weight' into them"):
        vec.transform([T.ToSparseTensor()(Data(x=x, edge_index=ei, edge_weight=torch.full((3,), 0.5)))])


def test_networkx_conversions_keep_out_neighbor_order_only():
    """guide: from_networkx lists edges node by node (successors in insertion order); a round trip through
    to_networkx sorts each node's in-neighbors by node."""
    import networkx as nx
    from torch_geometric.utils import from_networkx, to_networkx

    def heard(edge_index, flow="source_to_target"):
        src, dst = edge_index if flow == "source_to_target" else edge_index.flip(0)
        return src[dst == 0].tolist()

    g = nx.DiGraph()
    g.add_nodes_from(range(4))
    g.add_edges_from([(3, 0), (1, 0), (2, 0), (0, 3), (0, 1), (0, 2)])
    ei = from_networkx(g).edge_index
    assert heard(ei) == [1, 2, 3] and heard(ei, "target_to_source") == [3, 1, 2]
    d = Data(x=torch.arange(4), edge_index=torch.tensor([[3, 1, 2], [0, 0, 0]]))
    assert heard(from_networkx(to_networkx(d, node_attrs=["x"])).edge_index) == [1, 2, 3]


@pytest.mark.parametrize("hops, k", [(1, 2), (2, 2), (3, 2), (2, 3)])
def test_time_reversal_permutes_bfs_features_without_edge_labels_at_any_depth(hops, k):
    """The guide's claim: with BFS strings and no edge labels, reversing every neighborhood reverses every
    string at every level, so the features are a permutation of the true ones (same Gram matrix, same
    sorted values per graph); with WL strings (own label first) or edge labels they are not."""
    import numpy as np
    from helpers import random_graph, to_data

    rng = random.Random(hops * 10 + k)
    gs = [to_data(random_graph(rng, 8, 14, edge_labels=True)) for _ in range(12)]

    def gram(order, **kw):
        X = KongVectorizer(k=k, hops=hops, order=order, **kw).fit_transform(gs).toarray()
        return X @ X.T, np.sort(X, axis=1)

    for same, kw in ((True, dict(edge_labels=False)), (False, dict(traversal="wl", edge_labels=False)),
                     (False, dict(edge_labels=True))):
        (g1, s1), (g2, s2) = gram("edge", **kw), gram("reverse", **kw)
        assert (np.array_equal(g1, g2) and np.array_equal(s1, s2)) == same, kw


@pytest.mark.parametrize("opts, extra", [(dict(), 0), (dict(relabel=1), 1), (dict(order="degree"), 1),
                                         (dict(relabel=2, order="degree"), 3), (dict(order="label"), 0),
                                         (dict(traversal="wl", kernel="cosine", degree=2), 0)])
def test_a_subgraph_holding_a_nodes_reach_gives_it_the_same_features(opts, extra):
    """The guide: a node's features read its hops-hop in-neighborhood, one hop more per relabel round and
    one for order="degree"; k_hop_subgraph of that reach (it keeps the edge order) gives the same row, and
    one hop less does not (for some node)."""
    from torch_geometric.utils import k_hop_subgraph

    gen = torch.Generator().manual_seed(3)
    n, m = 60, 150
    edge_index = torch.randint(0, n, (2, m), generator=gen)
    x = torch.randint(0, 3, (n,), generator=gen)
    layer = KongSketch(k=2, hops=2, dim=64, **opts)
    full = layer.node_maps(x, edge_index)
    short = False
    for v in range(0, n, 7):
        for reach, equal in ((2 + extra, True), (1 + extra, False)):
            nodes, sub, mapping, _ = k_hop_subgraph(v, reach, edge_index, relabel_nodes=True, num_nodes=n)
            row = layer.node_maps(x[nodes], sub)[mapping]
            if equal:
                torch.testing.assert_close(row[0], full[v], rtol=1e-12, atol=1e-12)
            else:
                short |= not torch.allclose(row[0], full[v])
    assert short  # (the reach is not larger than needed)
