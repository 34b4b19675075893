import random

import numpy as np
import pytest
import torch
from helpers import random_graph, to_data
from hypothesis import given, settings
from hypothesis import strategies as st

from kong_pyg import KongSketch, KongVectorizer, kong_strings
from kong_pyg.ordering import ordered_neighborhoods


def _reverse_neighborhoods(edge_index):
    """The same graph with every node's neighbor order reversed."""
    return edge_index.flip(1)


def _graph(seed, n=8, m=20):
    rng = random.Random(seed)
    g = random_graph(rng, max_nodes=n, max_edges=m, edge_labels=True)
    return to_data(g)


@pytest.mark.parametrize("traversal", ["bfs", "wl"])
@pytest.mark.parametrize("seed", range(5))
def test_k1_ignores_neighbor_order(traversal, seed):
    d = _graph(seed)
    layer = KongSketch(k=1, hops=3, traversal=traversal, dim=64, dtype=torch.float64)
    a = layer(d.x, d.edge_index, d.edge_attr)
    b = layer(d.x, _reverse_neighborhoods(d.edge_index), d.edge_attr.flip(0))
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    shuffled = KongSketch(k=1, hops=3, traversal=traversal, dim=64, order="random", seed=0,
                          dtype=torch.float64)(d.x, d.edge_index, d.edge_attr)
    torch.testing.assert_close(a, shuffled, rtol=0, atol=0)


@pytest.mark.parametrize("traversal", ["bfs", "wl"])
@pytest.mark.parametrize("k", [2, 3])
def test_k2_plus_sees_neighbor_order(traversal, k):
    # a star a <- b, a <- c, a <- d with distinct labels: "bcd" vs "dcb"
    x = torch.tensor([0, 1, 2, 3])
    ei = torch.tensor([[1, 2, 3], [0, 0, 0]])
    vec = dict(k=k, hops=1, traversal=traversal)
    from torch_geometric.data import Data

    g1, g2 = Data(x=x, edge_index=ei), Data(x=x, edge_index=ei.flip(1))
    X = KongVectorizer(**vec).fit_transform([g1, g2]).toarray()
    assert not np.array_equal(X[0], X[1])
    # and on random graphs with many multi-neighborhoods, exact features differ
    d = _graph(3, n=5, m=25)
    r = to_data((d.x.tolist(), [tuple(e) for e in _reverse_neighborhoods(d.edge_index).t().tolist()], None))
    d.edge_attr = None
    Y = KongVectorizer(k=2, hops=2, traversal=traversal).fit_transform([d, r]).toarray()
    assert not np.array_equal(Y[0], Y[1])


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([1, 2, 3]), st.sampled_from(["bfs", "wl"]),
       st.booleans())
def test_renumbering_nodes_changes_nothing(seed, k, traversal, relabel):
    d = _graph(seed)
    n = d.num_nodes
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed))  # new id of old node
    x = torch.empty_like(d.x)
    x[perm] = d.x
    ei = perm[d.edge_index]  # same edge order, so every neighborhood keeps its order
    for cfg in (dict(dim=None), dict(dim=32, seed=seed)):
        vec = dict(k=k, hops=2, traversal=traversal, relabel=relabel, **cfg)
        from torch_geometric.data import Data

        X = KongVectorizer(**vec).fit_transform([d, Data(x=x, edge_index=ei, edge_attr=d.edge_attr)])
        X = X.toarray() if hasattr(X, "toarray") else X
        np.testing.assert_allclose(X[0], X[1], rtol=1e-12)
    node = KongSketch(k=k, dim=32, traversal=traversal, relabel=relabel, dtype=torch.float64)
    a, b = node(d.x, d.edge_index, d.edge_attr), node(x, ei, d.edge_attr)
    torch.testing.assert_close(b[perm], a)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["label", "degree"]), st.sampled_from([2, 3]),
       st.integers(1, 3), st.sampled_from(["bfs", "wl"]), st.integers(0, 1), st.booleans())
def test_label_and_degree_orders_do_not_depend_on_the_numbering(seed, order, k, hops, traversal, relabel,
                                                                  edge_labels):
    """order='label'/'degree' kept tied neighbors in edge order, which follows the node numbering: two
    numberings of one graph got other features (a path B-A-C and its renumbering had kernel 0 under
    cosine). Ties now go by the edge label and WL colours; renumber the nodes and shuffle the edges."""
    rng = random.Random(seed)
    labels, edges, elab = random_graph(rng, max_nodes=9, max_edges=24, num_labels=2, edge_labels=edge_labels)
    edges = edges + [(b, a) for a, b in edges]  # (undirected: ties of label and degree everywhere)
    elab = None if elab is None else elab + elab
    n = len(labels)
    new = list(range(n))
    rng.shuffle(new)  # new id of old node
    shuffled = list(range(len(edges)))
    rng.shuffle(shuffled)
    twin = ([0] * n, [(new[edges[e][0]], new[edges[e][1]]) for e in shuffled],
            None if elab is None else [elab[e] for e in shuffled])
    for v in range(n):
        twin[0][new[v]] = labels[v]
    cfg = dict(k=k, hops=hops, traversal=traversal, relabel=relabel, order=order)
    graphs = [to_data((labels, edges, elab)), to_data(twin)]
    X = KongVectorizer(**cfg).fit_transform(graphs).toarray()
    np.testing.assert_array_equal(X[0], X[1])
    node = KongSketch(dim=64, dtype=torch.float64, **cfg)
    a = node(graphs[0].x, graphs[0].edge_index, getattr(graphs[0], "edge_attr", None))
    b = node(graphs[1].x, graphs[1].edge_index, getattr(graphs[1], "edge_attr", None))
    torch.testing.assert_close(b[torch.tensor(new)], a, rtol=1e-12, atol=1e-12)
    strings = kong_strings(edges, labels, hops, traversal, elab, order=order, relabel=relabel)
    twins = kong_strings(twin[1], twin[0], hops, traversal, twin[2], order=order, relabel=relabel)
    assert [twins[new[v]] for v in range(n)] == strings  # (the oracle too)


def test_edge_order_key_equals_presorted_edges_and_ties_keep_edge_order():
    d = _graph(11, n=6, m=18)
    key = torch.randint(0, 4, (d.edge_index.size(1),), generator=torch.Generator().manual_seed(0))
    perm = torch.sort(key, stable=True).indices
    layer = KongSketch(k=3, hops=2, dim=64, dtype=torch.float64)
    a = layer(d.x, d.edge_index, d.edge_attr, edge_order=key)
    b = layer(d.x, d.edge_index[:, perm], d.edge_attr[perm])
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    # float keys (timestamps) work the same
    c = layer(d.x, d.edge_index, d.edge_attr, edge_order=key.double() / 7)
    torch.testing.assert_close(a, c, rtol=0, atol=0)
    # the vectorizer reads the key from the graph
    d.edge_order = key
    sorted_copy = to_data((d.x.tolist(), [tuple(e) for e in d.edge_index[:, perm].t().tolist()],
                           d.edge_attr[perm].tolist()))
    vec = KongVectorizer(k=3, hops=2).fit([d])
    assert (vec.transform([d]) != vec.transform([sorted_copy])).nnz == 0
    with pytest.raises(ValueError, match="graph 1 has no 'edge_order'"):
        vec.transform([d, sorted_copy])


def test_orders_match_the_brute_force_strings():
    rng = random.Random(5)
    labels, edges, _ = random_graph(rng, max_nodes=6, max_edges=14)
    ei = torch.tensor(edges, dtype=torch.long).t().reshape(2, -1)
    for order in ("edge", "label", "degree", "random"):
        for flow in ("source_to_target", "target_to_source"):
            strings = kong_strings(ei, labels, 2, "wl", flow=flow, order=order, seed=3)
            hood = ordered_neighborhoods(ei, len(labels), flow, order,
                                         node_label=torch.tensor(labels) * 2, seed=3)
            for v in range(len(labels)):
                nb = hood.nbr[hood.ptr[v]:hood.ptr[v + 1]].tolist()
                s1 = kong_strings(ei, labels, 1, "wl", flow=flow, order=order, seed=3)[v]
                assert list(s1) == [labels[v]] + [labels[u] for u in nb]
            assert len(strings) == len(labels)


def test_random_order_is_seeded():
    d = _graph(12, n=6, m=25)
    mk = lambda s: KongSketch(k=2, dim=64, order="random", seed=s)(d.x, d.edge_index)  # noqa: E731
    assert torch.equal(mk(1), mk(1))
    assert not torch.equal(mk(1), mk(2))


def test_random_order_is_each_graphs_own_whatever_the_batch():
    """A graph's shuffle depends on its own edges and the seed only: not on the batch size, its place in the
    batch or the other graphs (it used to be one permutation of all the edges of a call)."""
    from torch_geometric.data import Batch

    from kong_pyg import KongFeatures

    gs = [_graph(s, n=7, m=18) for s in range(12)]
    o = dict(k=2, hops=2, order="random", seed=3)
    f = KongFeatures(dim=64, level="both", **o)
    alone, together = [f(g) for g in gs], f.transform_dataset(gs, batch_size=5)
    for a, b in zip(alone, together):
        assert torch.equal(a.kong_x, b.kong_x) and torch.equal(a.kong_graph, b.kong_graph)
    X = torch.as_tensor(KongVectorizer(dim=64, **o).fit_transform(gs))
    assert torch.equal(X, torch.as_tensor(KongVectorizer(dim=64, batch_size=4, **o).fit_transform(gs)))
    assert torch.equal(X, torch.as_tensor(KongVectorizer(dim=64, **o).fit_transform(gs[::-1])).flip(0))
    E = KongVectorizer(**o).fit_transform(gs).toarray()  # exact: the same kernel in any batch
    E2 = KongVectorizer(batch_size=3, **o).fit_transform(gs[::-1]).toarray()[::-1]
    np.testing.assert_array_equal(E @ E.T, E2 @ E2.T)
    layer, batch = KongSketch(dim=64, **o), Batch.from_data_list(gs[:4])
    assert torch.equal(layer(batch.x, batch.edge_index, batch=batch.batch),
                       torch.cat([layer(g.x, g.edge_index) for g in gs[:4]]))
    assert torch.equal(layer.readout(batch.x, batch.edge_index, batch.batch),
                       torch.cat([layer.readout(g.x, g.edge_index) for g in gs[:4]]))
    # a shuffle: a hub's neighbors leave edge order, and two hubs of one degree in one graph are shuffled
    # differently; as two graphs (the same edges at the same places), alike
    n = 9
    hub = torch.stack([torch.arange(1, n), torch.zeros(n - 1, dtype=torch.long)])
    ei = torch.cat([hub, hub + n], 1)

    def hubs(seed, batch=None):
        hood = ordered_neighborhoods(ei, 2 * n, order="random", seed=seed, batch=batch)
        return hood.nbr[hood.center == 0].tolist(), (hood.nbr[hood.center == n] - n).tolist()

    first, second = hubs(0)
    assert sorted(first) == list(range(1, n)) and first != list(range(1, n)) and first != second
    assert hubs(1)[0] != first  # another seed
    apart = hubs(0, torch.arange(2 * n) // n)  # two graphs, the same edges at the same places: alike,
    alone = ordered_neighborhoods(hub, n, order="random", seed=0)  # and as either graph alone
    assert apart[0] == apart[1] == alone.nbr.tolist()
    # ego graphs (the ego's edges first, at the same places in every graph) of other content: other shuffles
    rng = torch.Generator().manual_seed(0)
    orders = set()
    for g in range(40):
        labels = torch.randint(0, 3, (n,), generator=rng)
        hood = ordered_neighborhoods(hub, n, order="random", seed=0, node_label=labels)
        orders.add(tuple(hood.nbr.tolist()))
    assert len(orders) > 30  # (of 8! = 40320 orders; one fixed order per degree is what must not happen)


def test_consistent_shuffle_is_the_same_permutation_in_every_graph():
    """A node seen in several graphs (its incoming events keyed by timestamps) gets the same
    shuffled neighbor order in each of them, whatever the batch and the edge positions;
    the per-graph shuffle (order='random') does not."""
    times = torch.tensor([5, 9, 2, 7, 3, 8])  # six events into node 0
    labels = torch.tensor([0, 1, 2, 3, 4, 5, 6])
    a = torch.stack([torch.arange(1, 7), torch.zeros(6, dtype=torch.long)])
    perm = torch.tensor([3, 0, 5, 1, 4, 2])  # graph B lists the same events in another order,
    b = a[:, perm] + torch.tensor([[1], [1]])  # with node 0 renumbered to 1 and one more node
    xb = torch.cat([torch.tensor([6]), labels])
    seqs = {}
    for seed in (0, 1):
        for name, (x, ei, t) in {"A": (labels, a, times), "B": (xb, b, times[perm])}.items():
            hood = ordered_neighborhoods(ei, x.numel(), order="consistent", edge_order=t, seed=seed)
            center = int(ei[1].min())
            nb = hood.nbr[hood.center == center]
            seqs[seed, name] = x[nb].tolist()
        assert seqs[seed, "A"] == seqs[seed, "B"]
        assert sorted(seqs[seed, "A"]) == [1, 2, 3, 4, 5, 6]
    assert seqs[0, "A"] != seqs[1, "A"]  # another seed, another order
    assert seqs[0, "A"] != [x for _, x in sorted(zip(times.tolist(), range(1, 7)))]  # not the time order
    # KONG features of the shared node agree too
    layer = KongSketch(k=2, hops=1, dim=64, order="consistent", seed=0, dtype=torch.float64)
    fa = layer(labels, a, edge_order=times)[0]
    fb = layer(xb, b, edge_order=times[perm])[1]
    torch.testing.assert_close(fa, fb, rtol=0, atol=0)


def test_reverse_is_time_reversal():
    t = torch.tensor([3, 1, 2, 2])
    ei = torch.tensor([[1, 2, 3, 4], [0, 0, 0, 0]])
    fwd = ordered_neighborhoods(ei, 5, edge_order=t).nbr.tolist()
    rev = ordered_neighborhoods(ei, 5, order="reverse", edge_order=t).nbr.tolist()
    assert fwd == [2, 3, 4, 1] and rev == fwd[::-1]
    assert ordered_neighborhoods(ei, 5, order="reverse").nbr.tolist() == [4, 3, 2, 1]
    with pytest.raises(ValueError, match="order='consistent' .* pass 'edge_order'"):
        ordered_neighborhoods(ei, 5, order="consistent")


def test_consistent_key_is_the_same_for_equal_values_of_any_dtype():
    """An event key stored as int64 in one call and float in another (training vs inference) keeps its key."""
    from kong_pyg.ordering import consistent_key

    ints = torch.tensor([5, 7, 1000, -3, 0, 2**40])
    for dtype in (torch.float64, torch.float32):
        assert torch.equal(consistent_key(ints.to(dtype), 4), consistent_key(ints, 4))
    assert torch.equal(consistent_key(ints[:5].int(), 4), consistent_key(ints[:5], 4))
    halves = torch.tensor([0.5, 1.5, 2.5, 5.0, -0.0, float("inf")], dtype=torch.float64)
    keys = consistent_key(halves, 4)
    assert keys.unique().numel() == 6 and int(keys[3]) == int(consistent_key(torch.tensor([5]), 4)[0])
    assert int(keys[4]) == int(consistent_key(torch.tensor([0]), 4)[0])


def test_the_string_oracle_shuffles_integer_labels_of_any_kind_alike():
    """order='random' reads the label codes: a list, a NumPy array and a tensor of the same labels agree."""
    labels = [1, 2, 0, 1, 2, 0]
    edges = [(1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (0, 1), (2, 1), (3, 1), (4, 1)]
    ref = kong_strings(edges, labels, 1, "wl", order="random", seed=1)
    for same in (np.array(labels), torch.tensor(labels), [np.int32(v) for v in labels]):
        got = kong_strings(edges, same, 1, "wl", order="random", seed=1)
        assert [[int(v) for v in s] for s in got] == [[int(v) for v in s] for s in ref]
    x, ei = torch.tensor(labels), torch.tensor(edges).t()
    hood = ordered_neighborhoods(ei, 6, order="random", node_label=x * 2, seed=1)
    assert [int(v) for v in ref[0][1:]] == [labels[u] for u in hood.nbr[hood.center == 0].tolist()]
    # equal labels are equal symbols whatever their kind (tensors hash by identity), in every order
    from kong_pyg import brute_force_kernel

    for order in ("edge", "label", "random"):
        want = brute_force_kernel([kong_strings(edges, labels, 1, "wl", order=order, seed=1)], 2, "poly", 1)
        for same in (torch.tensor(labels), np.array(labels), list(torch.tensor(labels))):
            got = brute_force_kernel([kong_strings(edges, same, 1, "wl", order=order, seed=1)], 2, "poly", 1)
            assert got == want, (order, type(same))
    bools = [True, False, True, True, False, False]
    for order in ("label", "random"):
        want = kong_strings(edges, [int(b) for b in bools], 1, "wl", order=order, seed=1)
        assert kong_strings(edges, np.array(bools), 1, "wl", order=order, seed=1) == want


def test_float8_sort_keys_order_as_their_float32_values():
    """float8 labels were accepted but a float8 edge_order failed inside torch.sort (no kernel)."""
    from torch_geometric.data import Data

    x, ei = torch.tensor([0, 1, 2, 3]), torch.tensor([[1, 2, 3], [0, 0, 0]])
    key = torch.tensor([2.0, 0.5, 1.0])
    layer = KongSketch(k=2, dim=8)
    for dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
        assert torch.equal(layer(x, ei, None, key.to(dtype)), layer(x, ei, None, key))
        for order in ("edge", "reverse", "consistent"):
            a, b = (KongVectorizer(k=2, order=order).fit_transform([Data(x=x, edge_index=ei, edge_order=k)])
                    for k in (key.to(dtype), key))
            assert (a != b).nnz == 0
    if hasattr(torch, "float4_e2m1fn_x2"):
        packed = torch.zeros(3, dtype=torch.uint8).view(torch.float4_e2m1fn_x2)
        with pytest.raises(TypeError, match="'edge_order' is torch.float4_e2m1fn_x2, which PyTorch cannot"):
            layer(x, ei, None, packed)
