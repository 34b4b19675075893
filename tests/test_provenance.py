"""The provenance-like benchmark: classes that differ only in the order of events."""
import io
from collections import Counter

import numpy as np
import pytest
import torch
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.svm import LinearSVC

from kong_pyg import KongVectorizer
from kong_pyg.datasets import (
    ProvenanceGraphs,
    StreamSpotGraphs,
    provenance_stream,
    read_streamspot,
    write_streamspot,
)
from kong_pyg.datasets.provenance import ACTIONS, EDGE_TYPES, SCRIPTS


def pair_multisets(stream, g):
    """The multiset of (source, edge type, destination) of graph g, node ids relative to the graph."""
    mask = stream.graph == g
    src, dst, et = stream.src[mask], stream.dst[mask], stream.edge_type[mask]
    nodes = torch.unique(torch.cat([src, dst]))  # the graph's ids, in generation order
    rel = {int(n): i for i, n in enumerate(nodes)}
    return Counter((rel[int(s)], int(e), rel[int(d)]) for s, e, d in zip(src, et, dst))


def cv_accuracy(X, y, seed=0):
    cv = StratifiedKFold(5, shuffle=True, random_state=seed)
    return float(cross_val_score(LinearSVC(C=1.0), X, y, cv=cv).mean())


@pytest.mark.parametrize("strength", [0.0, 0.4, 1.0])
def test_the_graphs_of_a_pair_have_the_same_edge_multiset(strength):
    gen = provenance_stream(20, strength=strength, paired=True, seed=3)
    for j in range(10):
        a, b = pair_multisets(gen.stream, 2 * j), pair_multisets(gen.stream, 2 * j + 1)
        assert a == b and sum(a.values()) > 0
    assert gen.y.tolist() == [0, 1] * 10
    # the order differs within pairs except where the script cannot show
    ds = ProvenanceGraphs(20, strength=strength, paired=True, seed=3)
    differs = sum(not torch.equal(ds[2 * j].edge_attr, ds[2 * j + 1].edge_attr) for j in range(10))
    assert differs >= 8


@pytest.mark.parametrize("hops", [1, 2])
def test_k1_features_are_identical_within_every_pair(hops):
    ds = ProvenanceGraphs(40, strength=1.0, paired=True, seed=0)
    X = KongVectorizer(k=1, hops=hops).fit_transform(ds).toarray()
    assert np.array_equal(X[0::2], X[1::2])
    X2 = KongVectorizer(k=2, hops=hops).fit_transform(ds).toarray()
    assert not np.array_equal(X2[0::2], X2[1::2])


def test_the_scripts_change_only_the_order():
    """Unpaired runs: the same seed with other scripts gives the same edge multiset per graph,
    so the class-free stream (both classes on one script) has the class-dependent stream's
    order-free statistics, graph by graph."""
    base = provenance_stream(30, strength=0.8, seed=6)
    same = provenance_stream(30, strength=0.8, scripts=(SCRIPTS[0], SCRIPTS[0]), seed=6)
    assert not torch.equal(base.stream.edge_type, same.stream.edge_type)
    for g in range(30):
        assert pair_multisets(base.stream, g) == pair_multisets(same.stream, g)
    X = KongVectorizer(k=1, hops=2).fit_transform(ProvenanceGraphs(30, strength=0.8, seed=6)).toarray()
    Y = KongVectorizer(k=1, hops=2).fit(ProvenanceGraphs(30, strength=0.8, seed=6)).transform(
        ProvenanceGraphs(30, strength=0.8, scripts=(SCRIPTS[0], SCRIPTS[0]), seed=6)).toarray()
    assert np.array_equal(X, Y)


def test_at_strength_zero_the_stream_does_not_depend_on_the_scripts():
    """s = 0: class 0 and class 1 come from the same random process, exactly."""
    swapped = (SCRIPTS[1], SCRIPTS[0])
    same = (SCRIPTS[0], SCRIPTS[0])
    base = provenance_stream(30, strength=0.0, seed=5)
    for scripts in (swapped, same):
        other = provenance_stream(30, strength=0.0, scripts=scripts, seed=5)
        for a, b in zip(base.stream[:6], other.stream[:6]):
            assert torch.equal(a, b)
    # and at s = 1 the scripts are what orders the sessions
    assert not torch.equal(provenance_stream(30, 1.0, seed=5).stream.edge_type,
                           provenance_stream(30, 1.0, scripts=swapped, seed=5).stream.edge_type)


def test_strength_zero_no_features_separate_the_classes():
    ds = ProvenanceGraphs(600, strength=0.0, seed=1)
    y = ds._data.y.numpy()
    for k in (1, 2):
        X = KongVectorizer(k=k, hops=1, normalize=True).fit_transform(ds).toarray()
        assert 0.4 < cv_accuracy(X, y) < 0.6, k
        # class-conditional means agree within noise (z-scores of the mean differences)
        a, b = X[y == 0], X[y == 1]
        se = np.sqrt(a.var(0, ddof=1) / len(a) + b.var(0, ddof=1) / len(b))
        z = np.abs(a.mean(0) - b.mean(0))[se > 0] / se[se > 0]
        assert z.max() < 4.5, (k, z.max())


def test_strength_one_k2_separates_and_k1_cannot():
    ds = ProvenanceGraphs(200, strength=1.0, seed=2)
    y = ds._data.y.numpy()
    X1 = KongVectorizer(k=1, hops=1, normalize=True).fit_transform(ds).toarray()
    X2 = KongVectorizer(k=2, hops=1, normalize=True).fit_transform(ds).toarray()
    assert cv_accuracy(X2, y) > 0.95
    assert cv_accuracy(X1, y) < 0.65
    # the per-graph shuffle destroys the signal
    Xr = KongVectorizer(k=2, hops=1, normalize=True, order="random").fit_transform(ds).toarray()
    assert cv_accuracy(Xr, y) < 0.7


def test_intermediate_strength_is_in_between():
    accs = []
    for s in (0.0, 0.3, 1.0):
        ds = ProvenanceGraphs(200, strength=s, seed=4)
        X = KongVectorizer(k=2, hops=1, normalize=True).fit_transform(ds).toarray()
        accs.append(cv_accuracy(X, ds._data.y.numpy()))
    assert accs[0] < accs[1] < accs[2], accs


def test_edge_order_timestamps_and_streamspot_round_trip():
    gen = provenance_stream(10, strength=0.7, seed=9)
    ds = ProvenanceGraphs(10, strength=0.7, seed=9)
    keys = torch.cat([ds[i].edge_order for i in range(len(ds))])
    assert keys[0::2].unique().numel() == gen.stream.num_edges  # one timestamp per event
    for i in range(len(ds)):
        assert bool((ds[i].edge_order[1:] >= ds[i].edge_order[:-1]).all())  # arrival order
        assert torch.equal(ds[i].edge_order[0::2], ds[i].edge_order[1::2])  # both directions
    # the stream written as a StreamSpot file reads back as the same graphs
    buf = io.StringIO()
    write_streamspot(gen.stream, buf)
    stream, bad, n_bad = read_streamspot(io.StringIO(buf.getvalue()))
    assert n_bad == 0
    back = StreamSpotGraphs(stream, labels={str(g): int(gen.y[g]) for g in range(10)})
    assert sorted(int(g) for g in back.graph_ids) == list(range(10))  # in order of first arrival
    for i, gid in enumerate(back.graph_ids):
        for attr in ("x", "edge_index", "edge_attr", "y"):
            assert torch.equal(back[i][attr], ds[int(gid)][attr]), (gid, attr)
    # node and edge types are StreamSpot-like codes
    assert set(gen.stream.edge_type.tolist()) <= set(range(len(EDGE_TYPES)))
    assert set(gen.stream.dst_type.tolist()) <= {0, 1, 2} and set(gen.stream.src_type.tolist()) == {0}
    assert len(ACTIONS) == 6


def test_bad_arguments():
    with pytest.raises(ValueError, match="'num_graphs' must be even with paired=True"):
        provenance_stream(7, paired=True)
    with pytest.raises(ValueError, match="'num_graphs' must be an integer >= 2"):
        provenance_stream(1)
    for bad in (1.5, float("nan"), True, np.bool_(False), "0.5", np.float32(2)):
        with pytest.raises(ValueError, match="'strength' must be a number in"):
            provenance_stream(10, strength=bad)
    # NumPy numbers are numbers: the same stream as the Python float
    same = provenance_stream(10, strength=np.float32(0.5), seed=2).stream
    assert torch.equal(same.src, provenance_stream(10, strength=0.5, seed=2).stream.src)
    with pytest.raises(ValueError, match="'events' must satisfy"):
        provenance_stream(10, events=(5, 2))
    with pytest.raises(TypeError, match="'files' must be a pair"):
        provenance_stream(10, files=3)
    with pytest.raises(ValueError, match=r"'scripts'\[1\] must be an order"):
        provenance_stream(10, scripts=(SCRIPTS[0], ("read",)))
    # numbers allocated in NumPy arrays: a message naming the allocator's 74.5 GiB, not the argument
    for kw in (dict(num_graphs=10**10), dict(num_graphs=100, events=(1, 10**12)),
               dict(num_graphs=100, processes=(10**9, 10**9)), dict(num_graphs=2**70)):
        with pytest.raises(ValueError, match=r"the stream's events \(at most .* runs x 'processes' up to "):
            provenance_stream(**kw)
    for bad in ("no", 1, None):  # ('no' was taken as paired=True)
        with pytest.raises(TypeError, match="'paired' must be True or False"):
            provenance_stream(10, paired=bad)


def test_a_views_stream_is_the_whole_stream_and_graph_ids_select_its_edges():
    ds = ProvenanceGraphs(10, seed=1)
    view = ds[[3, 7]]
    assert view.stream is ds.stream  # (as the docstring says: every graph's events)
    for g in view:
        events = int((ds.stream.graph == int(g.graph_id)).sum())
        assert g.edge_index.size(1) == 2 * events  # (undirected: each event both ways)
