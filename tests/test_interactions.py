import random

import pytest
import torch
from torch_geometric.data import Data

from kong_pyg import KongVectorizer, kong_strings
from kong_pyg.datasets import InteractionGraphs, select_users


def build(user, item, time, ul, il, y=None, **kw):
    return InteractionGraphs(user, item, time, torch.tensor(ul), torch.tensor(il),
                             None if y is None else torch.tensor(y), **kw)


def edges(g):
    return [tuple(e) for e in g.edge_index.t().tolist()]


# a tiny log, rows deliberately not in time order
#   user 0 rates item 2 at t=30, item 0 at t=10; user 1 rates item 0 at t=5, item 1 at t=20;
#   user 2 rates item 0 at t=40 and item 2 at t=1
LOG = dict(user=[0, 1, 0, 1, 2, 2], item=[2, 0, 0, 1, 0, 2], time=[30, 5, 10, 20, 40, 1])
UL = [0, 1, 2]      # user labels (L_U = 3)
IL = [0, 1, 2]      # item labels -> x = 3 + label


def test_tiny_log_exact_layout_and_order():
    ds = build(**LOG, ul=UL, il=IL, y=[1, 0, 1])
    assert len(ds) == 3
    g = ds[0]
    # nodes: ego 0 (user 0), items by ego time: item 0 (t10), item 2 (t30); then users 1, 2
    assert g.n_id.tolist() == [0, 0, 2, 1, 2]
    assert g.node_type.tolist() == [0, 1, 1, 0, 0]
    assert g.x.tolist() == [0, 3, 5, 1, 2]
    # item -> ego in time order, then each item's audience in time order (ego included)
    assert edges(g) == [(1, 0), (2, 0),                # ego sees item 0 then item 2
                        (3, 1), (0, 1), (4, 1),        # item 0: user 1 (t5), user 0 (t10), user 2 (t40)
                        (4, 2), (0, 2)]                # item 2: user 2 (t1), user 0 (t30)
    assert g.edge_time.tolist() == [10, 30, 5, 10, 40, 1, 30]
    assert int(g.y) == 1 and int(g.user_id) == 0
    # the order survives into KONG's strings
    s = kong_strings(g.edge_index, g.x.tolist(), 1)
    assert s[0][1] == (3, 5)              # ego: item labels by time
    assert s[1][1] == (1, 0, 2)           # item 0: its users' labels by time
    assert s[2][1] == (2, 0)
    assert s[3][1] == () and s[4][1] == ()  # 2-hop users are leaves


def test_ties_keep_row_order_and_repeats_are_repeated_neighbors():
    # all at the same time: row order decides; user 0 rates item 1 twice
    ds = build([0, 0, 1, 0], [1, 0, 1, 1], [7, 7, 7, 7], ul=[0, 1], il=[0, 1], y=[0, 1])
    g = ds[0]
    assert g.n_id.tolist() == [0, 1, 0, 1]
    assert edges(g) == [(1, 0), (2, 0), (1, 0),           # item 1, item 0, item 1 again
                        (0, 1), (3, 1), (0, 1),           # item 1: user 0, user 1, user 0 (row order)
                        (0, 2)]
    s = kong_strings(g.edge_index, g.x.tolist(), 1)
    assert s[0][1] == (3, 2, 3)
    # a float time with ties behaves the same
    ds2 = build([0, 0, 1, 0], [1, 0, 1, 1], [0.5] * 4, ul=[0, 1], il=[0, 1], y=[0, 1])
    assert torch.equal(ds2[0].edge_index, g.edge_index)


def test_symmetric_and_edge_labels():
    ds = build(**LOG, ul=UL, il=IL, symmetric=True, edge_labels=True)
    g = ds[0]
    assert edges(g) == [(1, 0), (2, 0), (3, 1), (0, 1), (4, 1), (4, 2), (0, 2),
                        (1, 3),            # user 1 sees item 0 (its item 1 is 3 hops away)
                        (2, 4), (1, 4)]    # user 2: item 2 (t1) then item 0 (t40)
    total = 3 + 3
    x = g.x
    assert g.edge_attr.tolist() == [int(x[s]) * total + int(x[d]) for s, d in edges(g)]
    s = kong_strings(g.edge_index, g.x.tolist(), 1)
    assert s[4][1] == (5, 3)


def brute_force(user, item, time, ul, il, egos, symmetric, lu):
    order = sorted(range(len(user)), key=lambda e: (time[e], e))
    out = []
    for u in egos:
        mine = [e for e in order if user[e] == u]
        items = list(dict.fromkeys(item[e] for e in mine))
        others = list(dict.fromkeys(user[e] for i in items for e in order if item[e] == i and user[e] != u))
        node = {("u", u): 0, **{("i", i): 1 + j for j, i in enumerate(items)},
                **{("u", w): 1 + len(items) + j for j, w in enumerate(others)}}
        es = [(node["i", item[e]], 0) for e in mine]
        es += [(node["u", user[e]], node["i", i]) for i in items for e in order if item[e] == i]
        if symmetric:
            es += [(node["i", item[e]], node["u", w]) for w in others for e in order
                   if user[e] == w and item[e] in items]
        out.append(([ul[u]] + [lu + il[i] for i in items] + [ul[w] for w in others], es))
    return out


def test_random_logs_match_brute_force():
    rng = random.Random(1)
    for _ in range(30):
        nu, ni, ne = rng.randint(2, 6), rng.randint(1, 6), rng.randint(2, 25)
        user = [rng.randrange(nu) for _ in range(ne)]
        item = [rng.randrange(ni) for _ in range(ne)]
        time = [rng.randrange(5) for _ in range(ne)]
        ul = [rng.randrange(3) for _ in range(nu)]
        il = [rng.randrange(4) for _ in range(ni)]
        sym = rng.random() < 0.5
        egos = sorted(set(user))
        ds = build(user, item, time, ul, il, symmetric=sym, num_user_labels=3, num_item_labels=4)
        graphs = [ds[i] for i in range(len(ds))]
        assert [int(g.user_id) for g in graphs] == egos
        for g, (x, es) in zip(graphs, brute_force(user, item, time, ul, il, egos, sym, 3)):
            assert g.x.tolist() == x
            assert edges(g) == es


def test_labels_are_disjoint_and_dataset_feeds_the_vectorizer():
    ds = build(**LOG, ul=UL, il=IL, y=[1, 0, 1])
    data = ds._data
    assert int(data.x[data.node_type == 0].max()) < 3 <= int(data.x[data.node_type == 1].min())
    X_store = KongVectorizer(k=2, hops=1).fit_transform(ds).toarray()
    X_list = KongVectorizer(k=2, hops=1).fit_transform([ds[i] for i in range(len(ds))]).toarray()
    assert (X_store == X_list).all()
    # order matters: sorting the ego's items by label instead of time changes the 2-grams
    X_label = KongVectorizer(k=2, hops=1, order="label").fit_transform(ds).toarray()
    assert X_label.shape != X_store.shape or not (X_label == X_store).all()


def test_select_users_cap_and_balance():
    y = torch.tensor([0] * 10 + [1] * 4)
    cand = torch.arange(14)
    bal = select_users(y, cand, balance=True, seed=3)
    assert torch.bincount(y[bal]).tolist() == [4, 4]
    assert torch.equal(bal, torch.sort(bal).values)
    assert torch.equal(bal, select_users(y, cand, balance=True, seed=3))
    assert not torch.equal(bal, select_users(y, cand, balance=True, seed=4))
    capped = select_users(y, cand, max_graphs=5, seed=0)
    assert capped.numel() == 5 and len(set(capped.tolist())) == 5
    both = select_users(y, cand, max_graphs=6, balance=True)
    assert torch.bincount(y[both]).tolist() == [3, 3]
    assert select_users(y, cand, max_graphs=50).numel() == 14
    ds = build(**LOG, ul=UL, il=IL, y=[1, 0, 1], balance=True)
    assert sorted(int(ds[i].y) for i in range(len(ds))) == [0, 1]
    assert len(build(**LOG, ul=UL, il=IL, min_interactions=2)) == 3
    with pytest.raises(ValueError, match="no user qualifies"):
        build(**LOG, ul=UL, il=IL, min_interactions=3)


def test_single_graph_and_users_without_interactions():
    ds = build([1], [0], [3], ul=[0, 1, 2], il=[0], y=[0, 1, 0])
    assert len(ds) == 1
    g = ds[0]
    assert isinstance(g, Data) and g.n_id.tolist() == [1, 0] and edges(g) == [(1, 0), (0, 1)]
    ds = build([1], [0], [3], ul=[0, 1, 2], il=[0], min_interactions=0)
    assert len(ds) == 3 and ds[0].num_nodes == 1 and ds[0].edge_index.size(1) == 0


def test_bad_input():
    with pytest.raises(ValueError, match="'item' has 2 entries"):
        build([0, 1, 0], [0, 1], [1, 2, 3], ul=[0, 0], il=[0, 0])
    with pytest.raises(ValueError, match="'user' holds id 5"):
        build([5], [0], [1], ul=[0, 0], il=[0])
    with pytest.raises(TypeError, match="'user' must hold integers"):
        build([0.5], [0], [1], ul=[0], il=[0])
    with pytest.raises(ValueError, match="'balance=True' needs class labels"):
        build([0], [0], [1], ul=[0], il=[0], balance=True)
    with pytest.raises(ValueError, match="'max_graphs'"):
        build([0], [0], [1], ul=[0], il=[0], max_graphs=0)
    with pytest.raises(ValueError, match="'time' holds NaN"):
        build([0], [0], [float("nan")], ul=[0], il=[0])
    with pytest.raises(ValueError, match="'y' must have shape"):
        build([0], [0], [1], ul=[0, 0], il=[0], y=[1])
    with pytest.raises(ValueError, match="'num_user_labels'"):
        build([0], [0], [1], ul=[0, 4], il=[0], num_user_labels=2)


def test_label_counts_are_integers_and_edge_labels_never_overflow():
    big = 2**32  # x_s * L + x_d with L ~ 2^33 overflowed int64: distinct label pairs could collide
    with pytest.raises(ValueError, match=r"edge_labels=True .* = 8589934594, which needs L \* L <= 2\^58"):
        build(**LOG, ul=[0, big, 1], il=[big, 5, 0], edge_labels=True)
    ds = build(**LOG, ul=[0, big, 1], il=[big, 5, 0])  # node labels alone fit
    assert ds[0].x.tolist() == [0, 2 * big + 1, big + 1, big, 1]  # ego, items 0 and 2, users 1 and 2
    with pytest.raises(ValueError, match=r"'num_user_labels' \+ 'num_item_labels' is 4611686018427387907, "
                                         r"but node labels must stay below 2\^58"):
        build(**LOG, ul=UL, il=IL, num_user_labels=2**62)
    with pytest.raises(ValueError, match=r"which needs L \* L <= 2\^58"):
        build(**LOG, ul=UL, il=IL, num_user_labels=2**29 - 2, edge_labels=True)
    with pytest.raises(TypeError, match="'num_user_labels' must be an integer \\(got float\\)"):
        build(**LOG, ul=UL, il=IL, num_user_labels=2.5)
    with pytest.raises(TypeError, match="'num_item_labels' must be an integer \\(got str\\)"):
        build(**LOG, ul=UL, il=IL, num_item_labels="3")
    # the largest allowed L = 2^29: every edge label below 2^58, exact
    ds = build(**LOG, ul=UL, il=IL, num_user_labels=2**29 - 3, edge_labels=True)
    g = ds[0]
    x, L = g.x.tolist(), 2**29
    assert g.edge_attr.tolist() == [x[s] * L + x[d] for s, d in edges(g)]
    assert int(g.edge_attr.max()) < 2**58
    import numpy as np

    ds = build(**LOG, ul=UL, il=IL, num_user_labels=np.int64(4))
    assert ds[0].x.tolist() == [0, 4, 6, 1, 2]


def test_flags_must_be_bools_and_tie_key_must_not_be_nan():
    import numpy as np

    with pytest.raises(ValueError, match="'tie_key' holds NaN values"):
        build(**LOG, ul=UL, il=IL, tie_key=[float("nan"), 1.0, 2.0, 3.0, 4.0, 5.0])
    for flag in ("symmetric", "edge_labels", "balance"):
        with pytest.raises(TypeError, match=rf"'{flag}' must be True or False \(got 'no'\)"):
            build(**LOG, ul=UL, il=IL, y=[1, 0, 1], **{flag: "no"})
        with pytest.raises(TypeError, match=rf"'{flag}' must be True or False \(got 0\)"):
            build(**LOG, ul=UL, il=IL, y=[1, 0, 1], **{flag: 0})
    with pytest.raises(TypeError, match=r"'symmetric' must be True or False"):  # not the layout error
        build(**LOG, ul=UL, il=IL, layout="authors", symmetric="no")
    with pytest.raises(TypeError, match=r"'seed' must be an integer"):
        build(**LOG, ul=UL, il=IL, y=[1, 0, 1], max_graphs=2, seed=1.5)
    with pytest.raises(TypeError, match=r"'balance' must be True or False"):
        select_users(torch.tensor([0, 1]), torch.tensor([0, 1]), balance="yes")
    # NumPy bools are bools
    sym = build(**LOG, ul=UL, il=IL, symmetric=np.bool_(True))
    ref = build(**LOG, ul=UL, il=IL, symmetric=True)
    assert all(edges(sym[i]) == edges(ref[i]) for i in range(len(ref)))
    assert edges(build(**LOG, ul=UL, il=IL, symmetric=np.bool_(False))[0]) == edges(build(**LOG, ul=UL,
                                                                                            il=IL)[0])


def test_string_classes_and_numpy_counts():
    # string classes were "too many dimensions 'str'"; a NumPy integer count was refused
    import numpy as np

    from kong_pyg.datasets.interactions import build_ego_graphs

    log = dict(user=[0, 1, 0, 1], item=[0, 0, 1, 1], time=[1, 2, 3, 4], user_label=[0, 1], item_label=[0, 1])
    with pytest.raises(TypeError, match="'y' must hold one numeric class per user"):
        build_ego_graphs(**log, y=["a", "b"])
    data, _ = build_ego_graphs(**log, y=[0, 1], min_interactions=np.int64(1))
    assert data.y.tolist() == [0, 1]


def test_class_and_cap_arguments_are_named():
    """Non-integral classes were taken as classes; a cap below the number of classes with balance=True
    said that no user qualifies."""
    from kong_pyg.datasets import InteractionGraphs

    log = ([0, 1, 2], [1, 1, 0], [0, 1, 2], [0, 1, 0], [0, 1])
    with pytest.raises(ValueError, match=r"'y' must hold classes, integers .*got \[0.5, 1.5\]"):
        InteractionGraphs(*log, y=[0.5, 1.5, 1.0])
    assert float(InteractionGraphs(*log, y=[0.0, 1.0, 1.0])[0].y) == 0.0
    with pytest.raises(ValueError, match=r"'max_graphs' \(1\) is below the number of classes"):
        InteractionGraphs(*log, y=[0, 0, 1], balance=True, max_graphs=1)


def test_huge_counts_and_ids_are_named():
    """min_interactions=2**70 was an OverflowError; a uint64 label of 2^63 + 5 was called negative."""
    import numpy as np

    from kong_pyg.datasets import InteractionGraphs

    log = ([0, 1, 2], [1, 1, 0], [0, 1, 2], [0, 1, 0], [0, 1])
    with pytest.raises(ValueError, match="no user qualifies for a graph"):
        InteractionGraphs(*log, min_interactions=2**70)
    with pytest.raises(ValueError, match=r"'user_label' holds values >= 2\^63 \(9223372036854775813\)"):
        InteractionGraphs(log[0], log[1], log[2], np.array([0, 2**63 + 5, 0], dtype=np.uint64), log[4])


def test_time_columns_that_float64_would_reorder_or_that_hold_dates_are_named():
    """[2**53 + 1, 2**53, 0.5] became float64 and the first two tied (row order decided); dates were refused
    as 'other values' with no hint."""
    import datetime

    import numpy as np

    from kong_pyg.datasets import InteractionGraphs

    user, item, ul, il = [0, 0, 0], [0, 1, 0], [0], [0, 1]
    for mixed in ([2**53 + 1, 2**53, 0.5], [np.int64(2**53 + 1), np.int64(2**53), 0.5]):
        with pytest.raises(ValueError, match=r"'time' mixes integers beyond 2\^53 with floats"):
            InteractionGraphs(user, item, mixed, ul, il)
    for dates in (np.array(["2020-01-02", "2020-01-01", "2020-01-03"], dtype="datetime64[D]"),
                  [datetime.datetime(2020, 1, d) for d in (2, 1, 3)], [1, datetime.date(2020, 1, 1), 2]):
        with pytest.raises(TypeError, match=r"'time' holds dates; pass numbers.*datetime64\[s\]"):
            InteractionGraphs(user, item, dates, ul, il)
    import collections

    class Column:  # (an array-like, as a pandas column)
        def __array__(self, dtype=None, copy=None):
            return np.array(["2020-01-02", "2020-01-01", "2020-01-03"], dtype="datetime64[D]")

    for dates in (Column(), collections.deque(datetime.datetime(2020, 1, d) for d in (2, 1, 3))):
        with pytest.raises(TypeError, match=r"'time' holds dates; pass numbers"):
            InteractionGraphs(user, item, dates, ul, il)
    durations = [datetime.timedelta(seconds=s) for s in (2, 1, 3)]
    with pytest.raises(TypeError, match=r"'time' holds durations; pass numbers.*timedelta64\[s\]"):
        InteractionGraphs(user, item, durations, ul, il)
    as_seconds = np.asarray(durations, dtype="timedelta64[s]").astype("int64")  # (the advice runs)
    assert as_seconds.tolist() == [2, 1, 3]
    exact = InteractionGraphs(user, item, [2**53 + 1, 2**53, 2**53 + 2], ul, il)[0]  # (integers stay exact)
    seconds = np.asarray(["2020-01-02", "2020-01-01", "2020-01-03"], dtype="datetime64[s]").astype("int64")
    assert torch.equal(InteractionGraphs(user, item, seconds, ul, il)[0].edge_index, exact.edge_index)


def test_a_list_of_integers_beyond_int64_is_ordered_as_integers():
    """NumPy made [2**63 + 5, 2**63 + 1, ...] float64, and the column was refused as mixing floats; it is
    now read as the uint64 array of the same values is. With a negative integer no dtype holds both."""
    import numpy as np

    from kong_pyg.datasets import InteractionGraphs

    user, item, ul, il = [0, 0, 0, 1, 1, 1], [0, 1, 2, 0, 1, 2], [0, 1], [0, 1, 0]
    big = [2**63 + 5, 2**63 + 1, 1, 2**64 - 1, 3, 2**63 + 2]
    listed = InteractionGraphs(user, item, big, ul, il)
    arrayed = InteractionGraphs(user, item, np.array(big, dtype=np.uint64), ul, il)
    assert [g.edge_order.tolist() for g in listed] == [g.edge_order.tolist() for g in arrayed]
    assert listed[0].edge_order.tolist() != sorted(listed[0].edge_order.tolist())  # (the order is the times')
    with pytest.raises(ValueError, match="'time' holds integers beyond int64 and negative ones"):
        InteractionGraphs(user, item, [-1] + big[1:], ul, il)


def test_bools_mixed_with_numbers_in_a_column_are_refused():
    """[0.5, True, 2.0] read True as 1.0 (and [0, True] as 1) without a word."""
    import numpy as np

    from kong_pyg.datasets import InteractionGraphs

    user, item, ul, il = [0, 0, 0], [0, 1, 0], [0], [0, 1]
    for name, args in (("time", (user, item, [0.5, True, 2.0])),
                       ("time", (user, item, [0, np.bool_(True), 2])),
                       ("item", (user, [0, True, 0], [0, 1, 2]))):
        with pytest.raises(TypeError, match=f"'{name}' mixes bools with numbers"):
            InteractionGraphs(*args, ul, il)
    assert InteractionGraphs(user, item, [0.5, 1.0, 2.0], ul, il)[0].num_edges > 0  # (numbers only: taken)


def test_a_label_column_of_the_log_is_named_and_ids_must_be_codes():
    """A label column taken from the log (one value per interaction) where a table of one label per id
    belongs is read per id: a silent mix-up of labels unless it is named (here item 1 would get row 1's
    category, 5, not its own, 7)."""
    import numpy as np

    # every user (0..2) buys every item (0..3): 12 rows, 8 of them repeating an item, 9 a user
    user, item, time = np.repeat(np.arange(3), 4), np.tile(np.arange(4), 3), np.arange(12)
    category = np.array([5, 7, 7, 9])[item]  # (the log's column: item 1 is category 7)
    with pytest.warns(UserWarning, match="'item_label' is as long as the log \\(12 interactions\\), "
                                         "longer than the 4 item ids need, and read row by row it gives "
                                         "every item one label: it looks like a column of the log") as caught:
        InteractionGraphs(user, item, time, np.zeros(3, int), category, y=np.array([0, 1, 1]))
    advice = str(caught[0].message).split("e.g. ")[1]  # (it runs as written on the log's numpy columns)
    exec(advice, {"numpy": np, "item": item, "column": category}, ns := {})
    assert ns["table"].tolist() == [5, 7, 7, 9]
    with pytest.warns(UserWarning, match="'user_label' is as long as the log"):
        InteractionGraphs(user, item, time, user % 2, np.array([5, 7, 7, 9]), y=np.zeros(12, int))
    import warnings

    per_id = [(np.zeros(3, int), np.array([5, 7, 7, 9]), np.array([0, 1, 1])),  # (one label per id)
              (np.zeros(4, int), np.array([5, 7, 7, 9, 2]), np.array([0, 1, 1, 0])),  # (longer, not the log)
              (np.arange(12) % 5, np.array([5, 7, 7, 9]), np.zeros(12, int)),  # (the log's length, per id:
              (np.zeros(12, int), np.array([5, 7, 7, 9]), np.zeros(12, int))]  # row by row no, or constant)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for user_label, item_label, y in per_id:
            InteractionGraphs(user, item, time, user_label, item_label, y=y)
        InteractionGraphs([0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 0, 1], np.arange(6), [0, 1, 2, 0, 1, 2], [0, 1])
        InteractionGraphs([0, 1, 2, 3], [0, 0, 1, 1], np.arange(4), [3, 4, 3, 4], [5, 7])  # (too few repeats)
    item, time = np.array([0, 0, 1, 1]), np.arange(4)
    with pytest.raises(ValueError, match="'user' holds id 30, but 'user_label' has only 2 rows; ids are "
                                         "0-based integer codes .*numpy.unique\\(user_ids"):
        InteractionGraphs(np.array([0, 30, 0, 30]), item, time, np.zeros(2, int), np.array([5, 7]))
    with pytest.raises(TypeError, match="sequence of numbers .*; ids are 0-based integer codes .*item_ids"):
        InteractionGraphs(user, np.array(["a", "a", "b", "b"]), time, np.zeros(2, int), np.array([5, 7]))


def test_a_pyg_temporal_data_is_an_interaction_log():
    """TemporalData (src -> dst at t, as PyG's JODIE sets: items numbered after the users) gives the same
    ego graphs as the log written by hand with users and items numbered 0..n-1 in id order."""
    import numpy as np
    from torch_geometric.data import TemporalData

    from kong_pyg.datasets import temporal_log

    src = torch.tensor([2, 0, 2, 5, 0, 5, 2])
    dst = torch.tensor([11, 11, 13, 13, 12, 11, 12])
    t = torch.tensor([5.0, 1.0, 2.0, 3.0, 4.0, 0.5, 2.0])
    data = TemporalData(src=src, dst=dst, t=t, msg=torch.zeros(7, 3), y=torch.tensor([0, 0, 1, 0, 0, 0, 0]))
    user_label = torch.tensor([1, 9, 2, 9, 9, 3])  # (by id: users 0, 2, 5)
    item_label = torch.arange(14) % 4  # (items 11, 12, 13: labels 3, 0, 1)
    y = torch.zeros(6, dtype=torch.long).scatter_reduce(0, data.src, data.y.long(), "amax")  # (as documented)
    log = temporal_log(data, user_label, item_label, y)
    assert log["user"].tolist() == [1, 0, 1, 2, 0, 2, 1] and log["item"].tolist() == [0, 0, 2, 2, 1, 0, 1]
    assert log["user_label"].tolist() == [1, 2, 3] and log["item_label"].tolist() == [3, 0, 1]
    assert log["y"].tolist() == [0, 1, 0]
    by_hand = InteractionGraphs([1, 0, 1, 2, 0, 2, 1], [0, 0, 2, 2, 1, 0, 1], t, [1, 2, 3], [3, 0, 1],
                                y=[0, 1, 0])
    got = InteractionGraphs(**log)
    assert len(got) == 3
    for a, b in zip(got, by_hand):
        assert torch.equal(a.x, b.x) and torch.equal(a.edge_index, b.edge_index) and torch.equal(a.y, b.y)
    default = temporal_log(data)
    assert default["y"] is None and default["user_label"].tolist() == [0, 0, 0]
    assert default["item_label"].tolist() == [11, 12, 13]  # (every item its own label, its id: the same
    later = temporal_log(TemporalData(src=src[4:], dst=dst[4:], t=t[4:]))  # in every call, as here for a
    assert later["item_label"].tolist() == [11, 12]  # later period without item 13)
    with pytest.warns(UserWarning, match="'y' has one entry per event \\(7\\): it is read as one class per "
                                         "user id .*reduce them per user first"):
        temporal_log(data, y=data.y)  # (TemporalData's y: one label per event)
    with pytest.raises(TypeError, match="'data' must be a TemporalData with 'src', 'dst' and 't'"):
        temporal_log({"src": src})
    with pytest.raises(ValueError, match="'user_label' has 3 entries, but 'data.src' holds id 5 \\(one entry "
                                         "per src id, indexed by it\\)"):
        temporal_log(data, user_label=np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="'data' holds no events"):
        temporal_log(TemporalData(src=src[:0], dst=dst[:0], t=t[:0]))


def test_order_test_takes_a_temporal_log_as_it_is():
    """Users 1, 3, ... buy items 0..4 in that order, the others in a random order: the order test finds it
    from the TemporalData's log (with the 'y' the log carries)."""
    from torch_geometric.data import TemporalData

    import kong_pyg
    from kong_pyg.datasets import temporal_log

    gen = torch.Generator().manual_seed(0)
    src, dst, t = [], [], []
    for u in range(60):
        items = torch.arange(5) if u % 2 else torch.randperm(5, generator=gen)
        src += [u] * 5
        dst += (100 + items).tolist()
        t += [10 * u + j for j in range(5)]
    data = TemporalData(src=torch.tensor(src), dst=torch.tensor(dst), t=torch.tensor(t))
    fast = dict(splits=5, shuffles=1, C=(1.0, 100.0), inner_folds=2)
    for labels in ({}, {"item_label": torch.arange(105) % 5}):  # (the default: every item its own label)
        res = kong_pyg.order_test(temporal_log(data, y=torch.arange(60) % 2, **labels), **fast)
        assert res.answer().startswith("Yes: the true order beats the consistent shuffle")
        assert not res.info["order_blind"]
    # one label for every item: the strings are runs of one symbol, the features cannot see the order
    with pytest.warns(UserWarning, match="the true order's features equal those of the consistent shuffle on "
                                         "every graph: they do not depend on the order"):
        blind = kong_pyg.order_test(temporal_log(data, item_label=torch.zeros(105, dtype=torch.long),
                                                 y=torch.arange(60) % 2), **fast)
    assert blind.info["order_blind"] and blind.answer().startswith(
        "No order effect can be seen: the true order's features equal those of the consistent shuffle on")
    assert "more or larger splits" not in blind.answer()
    # sketched features (dim) with several shuffles: the blind check reads the controls drawn with the true
    # order's seed (the others have other hash tables)
    with pytest.warns(UserWarning, match="the true order's features equal those of the consistent shuffle"):
        one_label = temporal_log(data, item_label=torch.zeros(105, dtype=torch.long), y=torch.arange(60) % 2)
        sketched = kong_pyg.order_test(one_label, dim=64, **{**fast, "shuffles": 2})
    assert sketched.info["order_blind"]
    # float32 times of large values are rounded into ties: said
    with pytest.warns(UserWarning, match="'time' is torch.float32 and reaches 1.7e\\+09, where its values "
                                         "are 128 apart"):
        temporal_log_data = TemporalData(src=data.src, dst=data.dst, t=1.7e9 + 30 * data.t.float())
        InteractionGraphs(**temporal_log(temporal_log_data, y=torch.arange(60) % 2))
    # a per-event column as a label table: warned about (as InteractionGraphs does), naming data.dst
    with pytest.warns(UserWarning, match="'item_label' is as long as the log .*\\[numpy.asarray\\(data.dst"):
        temporal_log(data, item_label=torch.tensor(dst) % 5)
