"""The event key ``edge_order`` of interaction graphs, the tie rules and the authors' layout."""
import random

import numpy as np
import pytest
import torch

from kong_pyg import KongVectorizer, kong_strings
from kong_pyg.datasets import InteractionGraphs
from kong_pyg.datasets.interactions import tie_share, time_order

# user 0 rates item 2 at t=30, item 0 at t=10; user 1 rates item 0 at t=5, item 1 at t=20;
# user 2 rates item 0 at t=40 and item 2 at t=1 (rows deliberately not in time order)
LOG = dict(user=[0, 1, 0, 1, 2, 2], item=[2, 0, 0, 1, 0, 2], time=[30, 5, 10, 20, 40, 1])
# global time ranks of the six rows: t=1 -> 0, t=5 -> 1, t=10 -> 2, t=20 -> 3, t=30 -> 4, t=40 -> 5
RANK = [4, 1, 2, 3, 5, 0]


def build(user, item, time, ul=(0, 1, 2), il=(0, 1, 2), y=None, **kw):
    return InteractionGraphs(user, item, time, torch.tensor(ul), torch.tensor(il),
                             None if y is None else torch.tensor(y), **kw)


def edges(g):
    return [tuple(e) for e in g.edge_index.t().tolist()]


def graphs(ds):
    return [ds[i] for i in range(len(ds))]


def test_edge_order_is_the_global_time_rank_of_each_edges_rating():
    g = build(**LOG)[0]
    # edges (see test_interactions): item 0 -> ego (row 2), item 2 -> ego (row 0),
    # item 0's raters: rows 1, 2, 4; item 2's raters: rows 5, 0
    rows = [2, 0, 1, 2, 4, 5, 0]
    assert g.edge_order.tolist() == [RANK[r] for r in rows] == [2, 4, 1, 2, 5, 0, 4]
    sym = build(**LOG, symmetric=True)[0]
    assert sym.edge_order.tolist()[7:] == [RANK[1], RANK[5], RANK[4]]  # 2-hop users: own time order


@pytest.mark.parametrize("layout", ["ego", "authors"])
def test_sorting_by_the_key_gives_back_the_edge_order(layout):
    """Each neighborhood sorted by edge_order (stable) is the edge_index order, on random logs."""
    rng = random.Random(7)
    for _ in range(25):
        nu, ni, ne = rng.randint(2, 6), rng.randint(1, 6), rng.randint(2, 30)
        pairs = rng.sample([(u, i) for u in range(nu) for i in range(ni)], min(ne, nu * ni))
        user, item = [p[0] for p in pairs], [p[1] for p in pairs]
        time = [rng.randrange(6) for _ in pairs]
        ds = build(user, item, time, ul=[rng.randrange(3) for _ in range(nu)],
                   il=[rng.randrange(3) for _ in range(ni)], layout=layout,
                   symmetric=layout == "ego" and rng.random() < 0.5)
        for g in graphs(ds):
            center = g.edge_index[1]
            by_key = torch.sort(g.edge_order, stable=True).indices
            regrouped = by_key[torch.sort(center[by_key], stable=True).indices]
            plain = torch.sort(center, stable=True).indices
            assert torch.equal(regrouped, plain)


def test_the_same_rating_has_the_same_key_in_every_graph():
    rng = random.Random(3)
    nu, ni = 8, 6
    pairs = rng.sample([(u, i) for u in range(nu) for i in range(ni)], 30)
    user, item = [p[0] for p in pairs], [p[1] for p in pairs]
    time = [rng.randrange(4) for _ in pairs]
    ds = build(user, item, time, ul=[0] * nu, il=[0] * ni)
    seen = {}
    for g in graphs(ds):
        for (s, d), key, t in zip(edges(g), g.edge_order.tolist(), g.edge_time.tolist()):
            types = (int(g.node_type[s]), int(g.node_type[d]))
            u, i = (g.n_id[s], g.n_id[d]) if types == (0, 1) else (g.n_id[d], g.n_id[s])
            assert seen.setdefault(key, (int(u), int(i), t)) == (int(u), int(i), t)
    assert sorted(seen) == list(range(len(seen)))  # ranks of the ratings that occur
    assert len(seen) == 30


def test_features_with_and_without_the_key_agree_and_random_order_ignores_it():
    ds = build(**LOG, y=[1, 0, 1], symmetric=True)
    for order in ("edge", "reverse"):
        with_key = KongVectorizer(k=2, hops=2, order=order).fit_transform(ds).toarray()
        plain = KongVectorizer(k=2, hops=2, order=order, edge_order_attr=None).fit_transform(ds).toarray()
        assert np.array_equal(with_key, plain)
    # reverse is time reversal: the ego of graph 0 sees item 2 then item 0
    s = kong_strings(ds[0].edge_index.flip(1), ds[0].x.tolist(), 1)
    assert s[0][1] == (5, 3)
    # orders that read no key ignore the stored one (no error) on every route, and consistent needs it
    from kong_pyg import KongFeatures, gram_matrix

    for order in ("random", "label"):
        X = KongVectorizer(k=2, order=order).fit_transform(ds).toarray()
        np.testing.assert_allclose(gram_matrix(graphs(ds), k=2, order=order), X @ X.T)
        feats = KongFeatures(k=2, dim=32, order=order, level="graph")
        alone = torch.cat([feats(g).kong_graph for g in graphs(ds)])
        assert torch.equal(torch.cat([g.kong_graph for g in feats.transform_dataset(graphs(ds))]), alone)
    KongVectorizer(k=2, order="consistent").fit_transform(ds)
    with pytest.raises(ValueError, match="order='consistent'"):
        KongVectorizer(k=2, order="consistent", edge_order_attr=None).fit_transform(ds)


def test_tie_key_breaks_ties_before_row_order():
    # user 0 rates items 1, 0, 2 in the same second; tie key says 2, 0, 1 (item 1 last)
    user, item, time = [0, 0, 0, 1], [1, 0, 2, 0], [7, 7, 7, 3]
    g = build(user, item, time, ul=[0, 1], il=[0, 1, 2])[0]
    assert g.n_id.tolist()[:4] == [0, 1, 0, 2]  # row order: items 1, 0, 2
    t = build(user, item, time, ul=[0, 1], il=[0, 1, 2], tie_key=torch.tensor([2, 1, 0, 5]))[0]
    assert t.n_id.tolist()[:4] == [0, 2, 0, 1]  # by tie key: items 2, 0, 1
    assert t.edge_order.tolist()[:3] == [1, 2, 3]  # the rating at t=3 is rank 0
    # a partial tie key: equal keys keep row order
    p = build(user, item, time, ul=[0, 1], il=[0, 1, 2], tie_key=torch.tensor([1, 1, 0, 0]))[0]
    assert p.n_id.tolist()[:4] == [0, 2, 1, 0]
    assert time_order(torch.tensor(time), torch.tensor([1, 1, 0, 0])).tolist() == [3, 2, 0, 1]
    with pytest.raises(ValueError, match="'tie_key' must be a 1-D tensor with 4 entries"):
        build(user, item, time, ul=[0, 1], il=[0, 1, 2], tie_key=torch.tensor([1, 2]))


def test_tie_share():
    assert tie_share(torch.tensor([3, 1, 3, 2, 3])) == pytest.approx(2 / 4)
    assert tie_share(torch.tensor([1.0])) == 0.0


def authors_brute_force(user, item, time, ul, il, ego, lu):
    """The authors' construction in words: for every item of the ego (time order) the line
    (ego, item), then (item, w) for every rater w of the item (time order); every line read
    as an undirected edge, appended to both endpoints' neighbor lists. Returns node labels
    (ego, items, other users by first appearance) and each node's neighbor-label string."""
    order = sorted(range(len(user)), key=lambda e: (time[e], e))
    items = list(dict.fromkeys(item[e] for e in order if user[e] == ego))
    lines = []
    for i in items:
        lines.append((("u", ego), ("i", i)))
        lines += [(("i", i), ("u", user[e])) for e in order if item[e] == i]
    nbrs = {}
    for a, b in lines:
        nbrs.setdefault(a, []).append(b)
        nbrs.setdefault(b, []).append(a)
    others = list(dict.fromkeys(b[1] for _, b in lines if b[0] == "u" and b[1] != ego))
    nodes = [("u", ego)] + [("i", i) for i in items] + [("u", w) for w in others]
    label = {("u", u): ul[u] for u in range(len(ul))}
    label.update({("i", i): lu + il[i] for i in range(len(il))})
    return [label[v] for v in nodes], [tuple(label[w] for w in nbrs[v]) for v in nodes]


def test_authors_layout_tiny_log_by_hand():
    ds = build(**LOG, y=[1, 0, 1], layout="authors")
    g = ds[0]
    # ego 0 sees item 0 (t10) and item 2 (t30), each twice; item 0 sees the ego first, then
    # users 1 (t5), 0 (t10), 2 (t40); item 2: ego, users 2 (t1), 0 (t30); user 1 sees item 0;
    # user 2 sees item 0 then item 2 (the ego's order, although it rated item 2 first)
    assert g.x.tolist() == [0, 3, 5, 1, 2]
    s = kong_strings(g.edge_index, g.x.tolist(), 1)
    assert [v[1] for v in s] == [(3, 3, 5, 5), (0, 1, 0, 2), (0, 2, 0), (3,), (3, 5)]
    assert g.edge_order.tolist() == [2, 2, 4, 4, -3, -5, 1, 2, 5, 0, 4, 2, 2, 4]
    with pytest.raises(ValueError, match="leave 'symmetric' False"):
        build(**LOG, layout="authors", symmetric=True)
    with pytest.raises(ValueError, match="'layout' must be one of"):
        build(**LOG, layout="undirected")


def test_authors_layout_matches_the_brute_force_on_random_logs():
    rng = random.Random(11)
    for _ in range(30):
        nu, ni = rng.randint(2, 6), rng.randint(1, 6)
        pairs = rng.sample([(u, i) for u in range(nu) for i in range(ni)], rng.randint(1, nu * ni))
        user, item = [p[0] for p in pairs], [p[1] for p in pairs]
        time = [rng.randrange(5) for _ in pairs]
        ul = [rng.randrange(3) for _ in range(nu)]
        il = [rng.randrange(4) for _ in range(ni)]
        ds = build(user, item, time, ul=ul, il=il, layout="authors", num_user_labels=3, num_item_labels=4)
        for g in graphs(ds):
            x, strings = authors_brute_force(user, item, time, ul, il, int(g.user_id), 3)
            assert g.x.tolist() == x
            assert [v[1] for v in kong_strings(g.edge_index, g.x.tolist(), 1)] == strings


def test_an_item_gets_the_same_order_in_every_ego_graph_under_the_consistent_shuffle():
    """The mechanism behind the bias of the per-graph shuffle: an item seen from several ego
    graphs has one audience order (true or consistently shuffled) in all of them; the per-graph
    shuffle gives it a different order in each graph."""
    from kong_pyg import KongSketch

    rng = random.Random(5)
    pairs = rng.sample([(u, i) for u in range(12) for i in range(3)], 30)
    user, item = [p[0] for p in pairs], [p[1] for p in pairs]
    ds = build(user, item, [rng.randrange(1000) for _ in pairs], ul=list(range(12)), il=[0, 1, 2])
    rows = {}
    for order in ("edge", "consistent", "random"):
        layer = KongSketch(k=2, hops=1, dim=256, order=order, seed=1, dtype=torch.float64)
        for g in graphs(ds):
            node = layer(g.x, g.edge_index, edge_order=None if order == "random" else g.edge_order)
            for v in range(1, 1 + int((g.node_type == 1).sum())):  # the ego's items
                rows.setdefault((order, int(g.n_id[v])), []).append(node[v])
    same = {order: all(all(torch.equal(r[0], x) for x in r) for (o, _), r in rows.items() if o == order)
            for order in ("edge", "consistent", "random")}
    assert same == {"edge": True, "consistent": True, "random": False}
    assert min(len(r) for r in rows.values()) >= 5  # every item is seen from several graphs


def test_python_float_timestamps_keep_their_precision():
    """Unix timestamps given as Python floats are ordered as float64 (torch.as_tensor would make them
    float32, where times one second apart tie); a list of ints, a float64 tensor and a list of floats
    agree."""
    times = [1_700_000_001.0, 1_700_000_000.0, 1_700_000_000.5]

    def order(t):
        return build([0, 0, 0], [0, 1, 2], t, ul=(0,), y=[0])[0].x.view(-1).tolist()

    expected = order([int(2 * v) for v in times])
    assert order(times) == order(torch.tensor(times, dtype=torch.float64)) == expected
    assert order(torch.tensor(times, dtype=torch.float32)) != expected  # what float32 would give
