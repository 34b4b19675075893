import time

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from kong_pyg import KongFeatures, KongSketch, KongVectorizer


def _complete(n, labels=3):
    src, dst = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
    keep = src != dst
    return torch.arange(n) % labels, torch.stack([src[keep], dst[keep]])


def test_deep_hops_on_dense_graph_saturate_and_stay_fast():
    # strings of node v at depth 25 have about 29^25 ~ 1e36 symbols
    x, ei = _complete(30)
    t = time.perf_counter()
    for traversal in ("bfs", "wl"):
        X = KongVectorizer(k=3, hops=25, traversal=traversal).fit_transform([Data(x=x, edge_index=ei)])
        assert np.isfinite(X.data).all() and X.data.max() > 1e35
        S = KongSketch(k=3, hops=25, traversal=traversal, dim=64, dtype=torch.float64)(x, ei)
        assert torch.isfinite(S).all()
        C = KongSketch(k=3, hops=25, traversal=traversal, dim=64, kernel="cosine", degree=2)(x, ei)
        assert torch.isfinite(C).all() and C.abs().max() < 10
    assert time.perf_counter() - t < 30


def test_dense_propagation_takes_over_when_rows_outgrow_sketches():
    # many labels: exact rows would hold thousands of distinct 2-grams per node
    n = 60
    x, ei = _complete(n, labels=n)
    layer = KongSketch(k=2, hops=3, dim=32, dtype=torch.float64)
    prep = layer.prepare(x, ei)
    counts = layer.node_counts(prep, layer.occurrences(prep))
    assert counts.dense is not None
    out = layer(x, ei)
    ro = layer.readout(x, ei)
    torch.testing.assert_close(out.sum(0, keepdim=True), ro, rtol=1e-9, atol=1e-6)


def test_overflow_is_a_clear_error_never_a_silent_inf():
    x, ei = _complete(50)
    # float32 output overflows long before float64 does
    with pytest.raises(ValueError, match="beyond the range of torch.float32.*dtype=torch.float64"):
        KongSketch(hops=30, dim=64)(x, ei)
    with pytest.raises(ValueError, match="beyond the range of torch.float32"):
        KongFeatures(hops=30, dim=64, level="graph")(Data(x=x, edge_index=ei))
    out = KongSketch(hops=30, dim=64, dtype=torch.float64).readout(x, ei)
    assert torch.isfinite(out).all() and out.abs().max() > 1e49
    # float64 itself: the counts of 49^200-long strings exceed 1e308
    for make in (lambda: KongSketch(hops=200, dim=64, dtype=torch.float64)(x, ei),
                 lambda: KongSketch(hops=200, dim=64, dtype=torch.float64).readout(x, ei),
                 lambda: KongVectorizer(hops=200).fit_transform([Data(x=x, edge_index=ei)])):
        with pytest.raises(ValueError, match="overflowed float64.*hops=200"):
            make()


def test_cosine_norms_of_huge_counts_stay_finite():
    # counts ~ 49^100 = 1e169: their squares overflow float64, the norms must not
    x, ei = _complete(50)
    X = KongVectorizer(hops=100, kernel="cosine").fit_transform([Data(x=x, edge_index=ei)])
    assert np.isfinite(X.data).all() and 0 < X.data.max() <= 50
    S = KongSketch(hops=100, kernel="cosine", dim=64, dtype=torch.float64)(x, ei)
    assert torch.isfinite(S).all()


def test_norms_whose_squares_underflow_are_not_zero():
    from kong_pyg.outputs import normalize_rows, root_sum_squares

    x = torch.tensor([[1e-200, 1e-200], [0.0, 0.0], [3.0, 4.0], [1e200, 1e200], [5e-324, 0.0]],
                     dtype=torch.float64)
    expected = torch.tensor([2 ** 0.5 * 1e-200, 0.0, 5.0, 2 ** 0.5 * 1e200, 5e-324], dtype=torch.float64)
    torch.testing.assert_close(root_sum_squares(x, dim=1), expected, rtol=1e-12, atol=0)
    rows = normalize_rows(x)  # unit rows, a zero row stays zero (tiny ones gave zeros)
    torch.testing.assert_close(rows.norm(dim=1), torch.tensor([1.0, 0.0, 1.0, 1.0, 1.0], dtype=torch.float64))
    y = x[:2].unsqueeze(0)  # the mean over dim 1 first: sqrt((2e-400 + 0) / 2)
    torch.testing.assert_close(root_sum_squares(y, dim=-1, mean_dim=1),
                               torch.tensor([1e-200], dtype=torch.float64), rtol=1e-12, atol=0)


@pytest.mark.parametrize("degree", [1, 2, 3])
def test_cosine_maps_of_counts_past_1e154_are_unit_vectors_on_every_route(degree):
    """A clique's nodes are alike, so every node's cosine map is one unit vector (times the sketch's
    estimate) and the graph's is n times it, also where the counts' squares overflow float64 (they
    gave all-zero maps with sketch-estimated norms, and zeros from readout where the counts themselves
    overflowed, which is now the overflow error)."""
    n = 10
    x, ei = _complete(n, labels=1)
    batch = torch.zeros(n, dtype=torch.long)
    for norm in ("sketch", "exact"):
        layer = KongSketch(k=2, hops=170, dim=64, kernel="cosine", traversal="wl", norm=norm, degree=degree,
                           dtype=torch.float64)
        nodes, graph = layer(x, ei), layer.readout(x, ei, batch)
        assert torch.isfinite(graph).all() and graph.abs().max() > 0.1, norm
        torch.testing.assert_close(graph[0], nodes.sum(0), rtol=1e-9, atol=1e-12)
        if norm == "sketch" and degree == 1:  # the estimate is the sketch's own norm: unit rows
            torch.testing.assert_close(nodes.norm(dim=1), torch.ones(n, dtype=torch.float64))
        vec = KongVectorizer(k=2, hops=170, dim=64, kernel="cosine", traversal="wl", norm=norm, degree=degree)
        np.testing.assert_allclose(vec.fit_transform([Data(x=x, edge_index=ei)])[0], graph[0].numpy(),
                                   rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="node counts overflowed float64"):  # counts past 1e308
        KongSketch(k=2, hops=330, dim=64, kernel="cosine", traversal="wl").readout(x, ei, batch)
    # rows normalized after the map: the poly map's 1e200 entries give unit rows, not zeros (sketched
    # and exact)
    for dim in (64, None):
        X = KongVectorizer(k=2, hops=200, dim=dim, traversal="wl", normalize=True).fit_transform(
            [Data(x=x, edge_index=ei)])
        X = X if dim else X.toarray()
        np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)


def test_exact_maps_too_large_are_refused_before_memory_runs_out(monkeypatch):
    import resource

    import kong_pyg.exact as exact

    x, ei = _complete(50, labels=50)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t = time.perf_counter()
    msg = r"degree-3 map of graph 0 would hold about 2\.8\de\+10 .*use a sketch"
    with pytest.raises(ValueError, match=msg):
        KongVectorizer(degree=3, hops=30).fit_transform([Data(x=x, edge_index=ei)])
    assert time.perf_counter() - t < 10
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 500_000  # KiB
    # a batch over budget is split; the result equals graph-by-graph features
    graphs = [Data(x=torch.arange(6) % 3, edge_index=_complete(6)[1]) for _ in range(4)]
    whole = KongVectorizer(degree=3, hops=2).fit_transform(graphs).toarray()
    monkeypatch.setattr(exact, "EXACT_MAP_BYTES", 100_000)  # one graph fits, four do not
    split = KongVectorizer(degree=3, hops=2).fit_transform(graphs).toarray()
    np.testing.assert_array_equal(split, whole)


def test_memory_checks_count_the_output_copy_in_its_dtype(monkeypatch):
    # the float64 sketches and the output's copy in a narrower dtype live at once: readout peaks at
    # 12 bytes per float32 entry, and its check counted 8 (a size between passed, then the process was
    # killed for memory instead of getting the check's error)
    import kong_pyg.nn.kong_sketch as layer

    seen = []
    monkeypatch.setattr(layer, "check_allocation", lambda nbytes, *a, **k: seen.append(nbytes))
    x, ei = _complete(5, labels=3)
    x, ei = torch.cat([x, x[:1], x[:1]]), ei  # (two more one-node graphs: every graph needs a node)
    batch = torch.tensor([0, 0, 0, 0, 0, 1, 2])
    for dtype, cast in ((torch.float32, 4), (torch.float64, 0), (torch.float16, 2)):
        L = KongSketch(k=2, dim=64, dtype=dtype)
        seen.clear()
        L.readout(x, ei, batch, num_graphs=3)
        assert seen == [3 * 64 * (8 + cast)]
        seen.clear()
        L.node_maps(x, ei)
        assert seen == [7 * 64 * (8 + cast)]
        seen.clear()
        L(x, ei)  # (BFS: four float64 sketches at once, message blocks, then an output of its own)
        m = ei.size(1)  # (and a block of messages with their sum: 16 bytes an edge and column)
        assert seen == [4 * 7 * 64 * 8 + 16 * m * 64 + 7 * 64 * dtype.itemsize]
    L = KongSketch(k=2, dim=64, degree=2, dtype=torch.float32)
    seen.clear()
    L.node_maps(x, ei)
    assert seen == [7 * 2 * 64 * 8 + 7 * 64 * 4]


def test_k_gram_work_beyond_memory_is_refused_before_it_is_allocated_and_batches_split(monkeypatch):
    """A star of 10^5 leaves with k = 1000 took 8.8 GB for a 64-float sketch (the pieces' k - 1 prefix and
    suffix codes, the windows' k symbols), with no check; a stream of such edges the same. Now the k-gram
    work is checked against the memory available first: a named refusal, on which a batch of graphs splits
    (sketched and exact alike; a reviewer found the first version refusing sketched batches a42669a ran)."""
    import torch
    from torch_geometric.data import Data

    from kong_pyg import KongStream, KongVectorizer, memory

    leaves = 2000
    ids, zero = torch.arange(1, leaves + 1), torch.zeros(leaves, dtype=torch.long)
    hood = torch.stack([ids, zero])  # (the centre's neighborhood: 2000 leaves; k = 50 work of about 3 MiB)
    stars = [Data(x=(torch.arange(leaves + 1) + s) % 5, edge_index=hood) for s in range(2)]
    want = {dim: KongVectorizer(k=50, hops=1, dim=dim).fit_transform(stars) for dim in (64, None)}
    monkeypatch.setattr(memory, "CHECK_FROM_BYTES", 0)
    monkeypatch.setattr(memory, "available_memory", lambda device=None: 4 << 20)  # (one star's work fits)
    for dim, rows in want.items():
        got = KongVectorizer(k=50, hops=1, dim=dim).fit_transform(stars)  # (the pair does not: split)
        assert np.array_equal(got.toarray() if dim is None else got, rows.toarray() if dim is None else rows)
    monkeypatch.setattr(memory, "available_memory", lambda device=None: 2 << 20)
    with pytest.raises(ValueError, match=r"k-gram work of one step \(50-symbol grams\) of graph 0 would take "
                                         r"about .* more than the 2.0 MiB available; a smaller k"):
        KongVectorizer(k=50, hops=1, dim=64).fit_transform(stars[:1])
    monkeypatch.setattr(memory, "available_memory", lambda device=None: 1 << 20)
    with pytest.raises(ValueError, match=r"k-gram work of one step .* a stream's smaller chunks"):
        KongStream(k=50, dim=64).update(ids, ids % 5, zero, zero, zero, zero)


def test_sketched_node_maps_switch_to_sketches_where_the_exact_rows_would_not_fit(monkeypatch):
    """readout, node_maps, KongFeatures and KongVectorizer (degree >= 2, or cosine) refused a graph that
    forward computes, telling the user to "use a sketch (dim=...)" with dim given: the exact rows' budget
    was checked inside the step being built, before the switch to propagating the sketches."""
    import torch

    from kong_pyg import KongSketch, exact

    leaves = 300
    x = torch.arange(leaves + 1)  # (distinct labels: every leaf's step-2 row holds every label)
    e = torch.stack([torch.arange(1, leaves + 1), torch.zeros(leaves, dtype=torch.long)])
    ei = torch.cat([e, e.flip(0)], 1)
    layers = [KongSketch(k=1, hops=2, dim=256, degree=2), KongSketch(k=2, hops=3, dim=256, kernel="cosine",
                                                                      norm="sketch")]
    want = [(layer.node_maps(x, ei), layer.readout(x, ei), layer(x, ei)) for layer in layers]
    monkeypatch.setattr(exact, "EXACT_MAP_BYTES", 64 * 20_000)  # (a 300-leaf star's step 2 is 90,000 rows)
    for layer, (nodes, graph, fwd) in zip(layers, want):
        torch.testing.assert_close(layer.node_maps(x, ei), nodes, rtol=1e-5, atol=1e-4)
        torch.testing.assert_close(layer.readout(x, ei), graph, rtol=1e-5, atol=1e-3)
        torch.testing.assert_close(layer.node_maps(x, ei), fwd, rtol=1e-5, atol=1e-4)
    with pytest.raises(ValueError, match="exact cosine norms read the exact count rows; norm='sketch' does"):
        KongSketch(k=2, hops=3, dim=256, kernel="cosine", norm="exact").node_maps(x, ei)


def test_memory_checks_ask_the_device_the_work_runs_on(monkeypatch):
    """The k-gram work and degree-p map checks read the host's free memory for work on a GPU (no device was
    passed): a GPU batch too big passed the check, and a short host refused GPU work that fit."""
    import kong_pyg.engine as engine
    import kong_pyg.exact as exact
    from kong_pyg import KongVectorizer

    asked = []
    check = exact.check_memory_entries

    def recording(entries, what, advice, entry_bytes, device=None):
        asked.append((what.split(" ")[0], device))
        check(entries, what, advice, entry_bytes, device)

    monkeypatch.setattr(exact, "check_memory_entries", recording)  # (kgrams imports it at each call)
    monkeypatch.setattr(engine, "check_memory_entries", recording)
    x, ei = _complete(6, labels=3)
    KongVectorizer(k=3, hops=2, degree=2).fit_transform([Data(x=x, edge_index=ei)])
    assert {what for what, _ in asked} == {"k-gram", "degree-2"}
    assert all(d is not None and torch.device(d).type == "cpu" for _, d in asked), asked
    import kong_pyg.inputs as inputs

    seen = []
    monkeypatch.setattr(inputs, "check_allocation", lambda n, w, device=None, *_, **__: seen.append(device))
    adj = torch.sparse_coo_tensor(ei.flip(0), torch.full((ei.size(1),), 2.0), (6, 6))  # (a sparse adj_t)
    KongSketch(k=1, hops=1, dim=8)(x, adj)
    assert seen and all(d is not None and torch.device(d).type == "cpu" for d in seen), seen


def test_node_counts_switch_to_sketches_before_an_exact_step_outgrows_them():
    """The exact rows were propagated until, merged, they passed switch_ratio of the dense sketches; a step's
    rows before merging (about degree times more) were bounded only by the 2 GiB budget: node features of
    a dense 1,000-node graph at dim 4096 peaked at 1.3 GB for a 16 MB output (0.33 GB now)."""
    x, ei = _complete(30, labels=4)
    layer = KongSketch(k=2, hops=3, dim=16)
    layer.switch_ratio = 10.0  # (the merged rows never pass 10x the sketches)
    prep = layer.prepare(x, ei)
    counts = layer.node_counts(prep, layer.occurrences(prep))
    assert counts.dense is not None  # (each node gathers 29 rows: more entries than the 30 x 16 sketches)
    assert torch.equal(layer.node_maps(x, ei), layer(x, ei))  # (p = 1: integer sketches, either route)


def test_forward_counts_the_messages_a_graph_has_not_a_fixed_block(monkeypatch):
    """forward's check added a full 256 MiB message block to every call: a 5-node graph was refused when
    less than that was free. Switched or not, cosine p = 2 node maps are the same numbers."""
    from kong_pyg import memory

    x, ei = torch.tensor([0, 1, 2, 1, 0]), torch.tensor([[0, 1, 1, 2, 2, 3, 3, 4], [1, 0, 2, 1, 3, 2, 4, 3]])
    monkeypatch.setattr(memory, "available_memory", lambda device=None: 200 << 20)
    assert KongSketch(k=2, hops=2, dim=64)(x, ei).shape == (5, 64)
    monkeypatch.undo()
    import kong_pyg.engine as engine

    x, ei = _complete(30, labels=4)
    layer = KongSketch(k=2, hops=3, dim=16, kernel="cosine", degree=2, norm="sketch")
    prep = layer.prepare(x, ei)
    assert layer.node_counts(prep, layer.occurrences(prep)).dense is not None  # (switched)
    switched = layer.node_maps(x, ei)
    monkeypatch.setattr(engine, "dense_step_bytes", lambda *a: 1 << 62)  # (a limit never reached)
    layer.switch_ratio = 1e9
    assert layer.node_counts(prep, layer.occurrences(prep)).dense is None  # (exact rows all the way)
    assert torch.equal(layer.node_maps(x, ei), switched)


def test_node_counts_keep_exact_rows_where_they_take_less_memory_than_a_dense_step():
    """The first criterion (a step's rows outnumber the dense sketches' entries) switched 64 graphs of 100
    nodes at mean degree 20 (dim 64, p = 2) in node_maps, where the exact rows took half the memory of a dense
    step passing messages; with the default sparse product (no messages) the dense step is the cheaper one."""
    from torch_geometric.data import Batch

    from kong_pyg.propagation import dense_step_bytes

    g = torch.Generator().manual_seed(0)
    graphs = []
    for _ in range(64):
        adj = torch.rand(100, 100, generator=g) < 0.2
        adj = (adj | adj.t()) & ~torch.eye(100, dtype=torch.bool)
        graphs.append(Data(x=torch.randint(0, 5, (100,), generator=g), edge_index=adj.nonzero().t()))
    b = Batch.from_data_list(graphs)
    layer = KongSketch(k=2, hops=2, dim=64, degree=2)
    import kong_pyg.engine as engine
    from kong_pyg.exact import index_grams

    prep = layer.prepare(b.x, b.edge_index)
    grams = index_grams(layer.occurrences(prep))
    gh = engine.gram_hashes(layer.hashes, grams)
    passing = engine.node_counts(layer.config, layer.hashes, prep, grams, gh, layer._lazy_aggregator(prep))
    assert passing.dense is None  # (node_maps' aggregation passes messages: a dense step is dearer)
    product = engine.node_counts(layer.config, layer.hashes, prep, grams, gh)  # (a sparse product: none)
    assert product.dense is not None
    assert dense_step_bytes(layer.config, 6400, b.num_edges, 128) // 40 > 6400 * 128  # (the old limit: less)
    assert dense_step_bytes(layer.config, 10, 2**25, 1) == 4 * 10 * 8 + 16 * 2**25  # (a block: one column)


def _two_loops():
    """Two nodes (labels 0, 1), each with three self-loops: level-h counts 3^h, finite up to h = 646."""
    return Data(x=torch.tensor([0, 1]), edge_index=torch.tensor([[0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 1, 1]]))


def test_norms_beyond_float64_of_finite_counts_are_an_error_not_a_zero_row():
    """Counts just below float64's maximum (3^646 = 1.66e308) whose norm is above it: the inverse norm
    read as 0, and normalized rows and cosine maps came out as zero vectors without an error. The
    Gram route's rescaled normalized kernel stays right (1)."""
    from kong_pyg import gram_matrix

    g = _two_loops()
    X = KongVectorizer(hops=646).fit_transform([g])
    assert np.isfinite(X.data).all() and X.data.max() > 1.6e308  # (the counts themselves are finite)
    with pytest.raises(ValueError, match="norms of KONG's k-gram count vectors overflowed float64"):
        KongVectorizer(hops=646, normalize=True).fit_transform([g])
    with pytest.raises(ValueError, match="norms of KONG's k-gram count vectors overflowed float64"):
        KongVectorizer(hops=646, dim=64, normalize=True).fit_transform([g])
    with pytest.raises(ValueError, match="norms of KONG's k-gram count vectors overflowed float64"):
        KongSketch(hops=646, dim=64, normalize=True, dtype=torch.float64).readout(g.x, g.edge_index)
    with pytest.raises(ValueError, match="norms of KONG's k-gram count vectors overflowed float64"):
        KongFeatures(hops=646, dim=64, normalize=True, level="graph", dtype=torch.float64)(g)
    np.testing.assert_allclose(gram_matrix([g], hops=646, normalize=True), [[1.0]], rtol=1e-12)
    x, ei = _complete(8, labels=2)  # (node counts 0.8 x float64's maximum at hops 365, norms 1.14 x)
    c = Data(x=x, edge_index=ei)
    np.testing.assert_allclose(gram_matrix([c], hops=364, kernel="cosine"), [[64.0]], rtol=1e-12)
    for run in (lambda: gram_matrix([c], hops=365, kernel="cosine"),
                lambda: KongVectorizer(hops=365, kernel="cosine").fit_transform([c]),
                lambda: KongSketch(hops=365, kernel="cosine", norm="sketch", dim=64,
                                   dtype=torch.float64).readout(x, ei)):
        with pytest.raises(ValueError, match="overflowed float64"):
            run()


def test_a_cosine_stream_whose_norms_overflow_is_an_error():
    """The stream's estimated norms overflowed while its sketches did not: every node map read as 0."""
    from kong_pyg import KongStream

    i, j = torch.triu_indices(60, 60, 1)  # (K_60, each pair once, undirected)
    z = torch.zeros(i.numel(), dtype=torch.long)
    ks = KongStream(hops=174, kernel="cosine", dim=256)
    for p in range(174):
        ks.update(i, z, j, z, z, z)
        if p < 173:
            ks.end_pass()
    with pytest.raises(ValueError, match="norms of KONG's k-gram count vectors overflowed float64"):
        ks.sketches()


def test_counts_that_overflow_are_named_before_their_norms():
    """Where the counts themselves overflow (1000 self-loops, 103 hops), the error names the counts, the
    hops and the fix, for normalized rows and cosine maps too, not only the norms that follow from them."""
    from kong_pyg import gram_matrix

    g = Data(x=torch.zeros(1, dtype=torch.long), edge_index=torch.zeros(2, 1000, dtype=torch.long))
    for run, message in (
        (lambda: KongSketch(hops=103, dim=16, normalize=True).readout(g.x, g.edge_index),
         "KONG sketch overflowed"),
        (lambda: KongVectorizer(hops=103, kernel="cosine").fit_transform([g]), "KONG node counts overflowed"),
        (lambda: gram_matrix([g], hops=103, kernel="cosine"), "KONG node counts overflowed"),
        (lambda: KongSketch(hops=103, dim=16, kernel="cosine", degree=2)(g.x, g.edge_index),
         "KONG node counts overflowed"),
    ):
        with pytest.raises(ValueError, match=f"{message} float64: with hops=103"):
            run()
