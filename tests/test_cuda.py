"""The same numbers on CUDA as on the CPU, for the same seed.

Without CUDA (or with KONG_TEST_DEVICE=cpu) the same tests run against the CPU
itself: a dry run that keeps them in step with the API on machines without a
GPU (CI), so only the device comparison itself needs a GPU.
"""
import os
import random

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from helpers import random_graph, to_data
from torch_geometric.data import Batch
from torch_geometric.nn import GIN, global_add_pool

from kong_pyg import KongFeatures, KongSketch, KongVectorizer

DEVICE = os.environ.get("KONG_TEST_DEVICE") or ("cuda" if torch.cuda.is_available() else "cpu")

# (options, bitwise): integer counts (poly, p = 1) must match bit for bit
CASES = [
    (dict(k=1, hops=2), True),
    (dict(k=2, hops=2), True),
    (dict(k=3, hops=2, traversal="wl"), True),
    (dict(k=2, hops=1, const=2.0, relabel=True), True),
    (dict(k=2, hops=2, order="random", seed=7), True),
    (dict(k=2, hops=2, blended=True), True),
    (dict(k=2, hops=4, dim=16), True),  # deep: exact rows give way to propagated sketches
    (dict(k=2, hops=2, kernel="cosine"), False),
    (dict(k=2, hops=2, kernel="cosine", norm="sketch"), False),
    (dict(k=2, hops=2, degree=2, const=1.0), False),
    (dict(k=2, hops=2, kernel="cosine", degree=3), False),
]


def graphs(n=10, seed=0, dense=False):
    rng = random.Random(seed)
    size = (8, 40) if dense else (7, 14)
    return [to_data(random_graph(rng, *size, 3, edge_labels=True)) for _ in range(n)]


def same(a, b, bitwise):
    assert a.device.type == torch.device(DEVICE).type
    a = a.cpu()
    if bitwise:
        assert torch.equal(a, b), (a - b).abs().max()
    else:
        assert torch.allclose(a, b, rtol=1e-5, atol=1e-5), (a - b).abs().max()


@pytest.mark.parametrize("opts,bitwise", CASES)
def test_kong_sketch_cpu_vs_device(opts, bitwise):
    deep = opts.get("hops") == 4
    b = Batch.from_data_list(graphs(dense=deep))
    layer = KongSketch(**{"dim": 128, **opts})
    if deep:
        prep = layer.prepare(b.x, b.edge_index, b.edge_attr)
        assert layer.node_counts(prep, layer.occurrences(prep)).dense is not None
    node = layer(b.x, b.edge_index, b.edge_attr)
    graph = layer.readout(b.x, b.edge_index, b.batch, b.edge_attr)
    layer.to(DEVICE)
    d = b.to(DEVICE)
    same(layer(d.x, d.edge_index, d.edge_attr), node, bitwise)
    same(layer.readout(d.x, d.edge_index, d.batch, d.edge_attr), graph, bitwise)


def test_edge_order_keys_on_device():
    b = Batch.from_data_list(graphs(seed=3))
    key = torch.randperm(b.num_edges, generator=torch.Generator().manual_seed(0)).double()
    layer = KongSketch(k=3, hops=2, dim=64)
    ref = layer.readout(b.x, b.edge_index, b.batch, edge_order=key)
    layer.to(DEVICE)
    d = b.to(DEVICE)
    same(layer.readout(d.x, d.edge_index, d.batch, edge_order=key.to(DEVICE)), ref, True)


@pytest.mark.parametrize("k,degree", [(1, 1), (2, 1), (3, 1), (2, 2)])
def test_vectorizer_exact_cpu_vs_device(k, degree):
    gs = graphs(12, seed=1)
    opts = dict(k=k, hops=2, degree=degree, batch_size=5)
    X = KongVectorizer(**opts).fit_transform(gs)
    Y = KongVectorizer(device=DEVICE, **opts).fit_transform(gs)
    assert X.shape == Y.shape
    assert np.array_equal(X.indptr, Y.indptr) and np.array_equal(X.indices, Y.indices)
    if degree == 1:
        assert np.array_equal(X.data, Y.data)  # integer counts: bit for bit
    else:
        assert np.allclose(X.data, Y.data, rtol=1e-12, atol=0)


@pytest.mark.parametrize("block_entries", [2**24, 40])
@pytest.mark.parametrize("kernel,degree,relabel", [("poly", 1, 0), ("poly", 2, 0), ("poly", 3, 1),
                                                   ("cosine", 4, 1)])
def test_gram_matrix_cpu_vs_device(kernel, degree, relabel, block_entries):
    """The Gram route (sparse CSR products, the half-diagonal pass, A + A^T in strips) on graphs that
    live on the device: the CPU's matrix and the explicit map's X X^T, exactly symmetric; tiny blocks
    run every strip and block boundary."""
    from kong_pyg import gram_matrix

    gs = graphs(12, seed=2)
    opts = dict(k=1, hops=2, kernel=kernel, degree=degree, relabel=relabel)
    cpu = gram_matrix(gs, block_entries=block_entries, **opts)
    on = [g.clone().to(DEVICE) for g in gs]  # (Data.to moves the graph itself)
    dev = gram_matrix(on, block_entries=block_entries, **opts)
    assert np.array_equal(dev, dev.T)
    np.testing.assert_allclose(dev, cpu, rtol=1e-12, atol=0)
    X = KongVectorizer(**opts).fit_transform(gs)
    np.testing.assert_allclose(dev, (X @ X.T).toarray(), rtol=1e-10, atol=1e-12)
    # (p = 1: SciPy products; normalize with 'other': the self-kernels)
    cpu = gram_matrix(gs[:5], gs[5:], block_entries=block_entries, normalize=True, **opts)
    dev = gram_matrix(on[:5], on[5:], block_entries=block_entries, normalize=True, **opts)
    np.testing.assert_allclose(dev, cpu, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("kernel,normalize", [("poly", False), ("cosine", True)])
def test_vectorizer_sketched_cpu_vs_device(kernel, normalize):
    gs = graphs(12, seed=2)
    opts = dict(k=2, hops=2, dim=256, kernel=kernel, normalize=normalize, batch_size=5)
    X = KongVectorizer(**opts).fit_transform(gs)
    Y = KongVectorizer(device=DEVICE, **opts).fit_transform(gs)
    assert np.allclose(X, Y, rtol=1e-9, atol=1e-9)


def test_whole_collection_entry_points_read_graphs_on_the_device():
    """Graphs that already live on the device, no device= given: every entry point that joins them
    into one union (the vectorizer's exact and sketched maps, transform_dataset, the baselines) gives
    the CPU's numbers (the union's graph vector had stayed on the CPU: an index error)."""
    from kong_pyg.evaluation.baselines import sp_features, walk_features, wl_features

    gs = graphs(12, seed=3)
    on = [g.clone().to(DEVICE) for g in gs]  # (Data.to moves the graph itself)
    for opts in (dict(k=2, hops=2), dict(k=1, hops=2, degree=2, relabel=1),
                 dict(k=2, hops=2, dim=64, kernel="cosine")):
        X = KongVectorizer(batch_size=5, **opts).fit_transform(gs)
        Y = KongVectorizer(batch_size=5, **opts).fit_transform(on)
        X, Y = (M.toarray() if hasattr(M, "toarray") else M for M in (X, Y))
        np.testing.assert_allclose(Y, X, rtol=1e-12, atol=1e-12)
    t = KongFeatures(k=2, hops=2, dim=64, level="both")
    ref = t.transform_dataset([g.clone() for g in gs], batch_size=5)
    out = t.transform_dataset([g.clone() for g in on], batch_size=5)
    for a, b in zip(out, ref):
        same(a.kong_x, b.kong_x, True)
        same(a.kong_graph, b.kong_graph, True)
    for f in (wl_features, walk_features, sp_features):
        assert (f(on) != f(gs)).nnz == 0, f.__name__


def test_classify_on_device_graphs_with_processes():
    """classify(n_jobs=2) on graphs that live on the device (no device=): the settings' features ran in
    forked processes, where CUDA cannot be used; they now run in this one, with the CPU's results."""
    from kong_pyg import classify

    gs = graphs(40, seed=6)
    for i, g in enumerate(gs):
        g.y = torch.tensor([i % 2])
    cpu = classify(gs, grid="quick", repeats=1, folds=3)
    dev = classify([g.clone().to(DEVICE) for g in gs], grid="quick", repeats=1, folds=3, n_jobs=2)
    assert dev.results["paper"].accuracy_mean == pytest.approx(cpu.results["paper"].accuracy_mean, abs=1e-12)


def test_data_preparation_reads_device_tensors():
    """add_degree_labels on a storage moved to the device (its slices stay on the CPU), and an EdgeStream
    whose columns are on the device (stream_to_graphs, KongStream.fit): the CPU's results."""
    from kong_pyg import KongStream
    from kong_pyg.datasets import add_degree_labels, load_tu, stream_to_graphs, synthetic_event_stream

    ref, ds = load_tu("MUTAG"), load_tu("MUTAG")
    ds._data = ds._data.clone().to(DEVICE)
    add_degree_labels(ref)
    add_degree_labels(ds)
    assert torch.equal(ds._data.x.cpu(), ref._data.x)
    stream = synthetic_event_stream(6, seed=1)[0]
    moved = type(stream)(*[t.to(DEVICE) if isinstance(t, torch.Tensor) else t for t in stream])
    for a, b in zip(stream_to_graphs(moved), stream_to_graphs(stream)):
        assert torch.equal(a.edge_index, b.edge_index) and torch.equal(a.x, b.x)
    assert torch.equal(KongStream(k=2, dim=32).fit(moved).sketches().cpu(),
                       KongStream(k=2, dim=32).fit(stream).sketches())


def test_transform_on_device_data():
    t = KongFeatures(k=2, hops=2, dim=64, level="both")
    for data in graphs(4, seed=4):
        ref = t(data)
        out = t(data.to(DEVICE))  # the transform's hash tables follow the data
        same(out.kong_x, ref.kong_x, True)
        same(out.kong_graph, ref.kong_graph, True)
        assert out.edge_index.device.type == torch.device(DEVICE).type


def test_to_moves_buffers_and_mismatch_is_an_error():
    layer = KongSketch(k=2, dim=32).to(DEVICE)
    assert all(buf.device.type == torch.device(DEVICE).type for buf in layer.buffers())
    d = graphs(1)[0]
    if DEVICE != "cpu":
        with pytest.raises(ValueError, match=r"\.to\(\)"):
            layer(d.x, d.edge_index)
    state = {k: v.cpu() for k, v in layer.state_dict().items()}
    fresh = KongSketch(k=2, dim=32)  # a device layer's state loads into a CPU layer of the same options
    fresh.load_state_dict(state)
    assert torch.equal(fresh(d.x, d.edge_index), KongSketch(k=2, dim=32)(d.x, d.edge_index))
    with pytest.raises(ValueError, match="seed=11"):  # ... and is refused by one of another seed
        KongSketch(k=2, dim=32, seed=11).load_state_dict(state)


def test_gin_with_kong_trains_on_device():
    torch.manual_seed(0)
    b = Batch.from_data_list(graphs(8, seed=5))
    b.y = torch.arange(8) % 2
    kong = KongSketch(k=2, hops=2, dim=32, kernel="cosine")
    gin = GIN(3 + 32, 16, num_layers=2)
    head = torch.nn.Linear(16, 2)
    model = torch.nn.ModuleDict(dict(kong=kong, gin=gin, head=head)).to(DEVICE)
    d = b.to(DEVICE)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for _ in range(20):
        opt.zero_grad()
        h = torch.cat([F.one_hot(d.x, 3).float(), model["kong"](d.x, d.edge_index)], -1)
        loss = F.cross_entropy(model["head"](global_add_pool(model["gin"](h, d.edge_index), d.batch)), d.y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    assert all(p.grad is not None for p in model["gin"].parameters())


@pytest.mark.parametrize("setting", ["poly-1", "cosine-rlb-2", "poly-2", "poly-4"])
def test_svm_fits_on_device_reach_the_cpu_optimum(setting):
    """fit_many on the device solves the same problems: the CPU's predictions (well-conditioned
    settings) and the CPU's objective on every problem (raw poly-4, Gram entries up to 4e11, climbs
    from lower C: to 1e-6; the others to 1e-9)."""
    from kong_pyg.datasets import load_tu
    from kong_pyg.evaluation import svm
    from kong_pyg.evaluation.classify import graph_targets
    from kong_pyg.evaluation.features import design_of, setting_features
    from kong_pyg.evaluation.grid import expand_grid, paper_grid
    from kong_pyg.evaluation.splits import make_splits, plan_jobs

    graphs = load_tu("MUTAG")
    y = graph_targets(graphs)
    s = next(s for s in expand_grid("kong", paper_grid("kong")) if s.name == setting)
    D, _ = design_of(setting_features(s, graphs))
    jobs = plan_jobs(make_splits(y, 1, 5, 3, 0), y.size)
    Cs = [0.1, 1.0, 10.0]
    cpu = svm.fit_many(D, y, jobs.train, Cs, parent=jobs.parent)
    dev = svm.fit_many(D, y, jobs.train, Cs, parent=jobs.parent, device=DEVICE)
    assert D.Z.device.type == "cpu"  # the caller's design stays where it was
    assert cpu.converged.all() and dev.converged.all()
    rtol = 1e-6 if setting == "poly-4" else 1e-9
    if setting != "poly-4":
        assert np.array_equal(cpu.predict(), dev.predict())
    ypm = np.where(y == cpu.classes[1], 1.0, -1.0)
    Zinv = np.linalg.pinv(D.Z.numpy())
    for j in range(len(jobs.keys)):
        for c, C in enumerate(Cs):
            f1 = svm.objective(D, ypm, jobs.train[j], C, Zinv @ cpu.scores[j, c])
            f2 = svm.objective(D, ypm, jobs.train[j], C, Zinv @ dev.scores[j, c])
            assert abs(f1 - f2) <= rtol * max(f1, f2), (j, C, f1, f2)


def test_classify_on_device_gives_the_cpu_result():
    """classify(device=...) on the quick grid: the CPU's accuracies under both protocols."""
    from kong_pyg import classify

    cpu = classify("MUTAG", grid="quick", repeats=1, inner_folds=3)
    dev = classify("MUTAG", grid="quick", repeats=1, inner_folds=3, device=DEVICE)
    for p in ("paper", "nested"):
        assert dev.results[p].accuracy_mean == pytest.approx(cpu.results[p].accuracy_mean, abs=1e-12)
    np.testing.assert_array_equal(dev.cv.outer, cpu.cv.outer)


@pytest.mark.skipif(DEVICE == "cpu", reason="the guard is for GPU memory")
def test_svm_design_too_large_for_the_device_is_refused(monkeypatch):
    """Off the CPU every design gets the exact solver: one whose Gram matrix cannot fit is a clear
    ValueError before anything is copied (simulated: the device reports 1 MiB free)."""
    from kong_pyg import memory
    from kong_pyg.evaluation import svm

    n = 300
    X = np.random.RandomState(0).randn(n, 2 * n)
    y = np.arange(n) % 2
    monkeypatch.setattr(memory, "available_memory", lambda device=None: 1 << 20)
    monkeypatch.setattr(memory, "CHECK_FROM_BYTES", 0)
    with pytest.raises(ValueError, match="the SVM design of 300 graphs .* solve on the CPU"):
        svm.fit_many(svm.design(X), y, np.ones((2, n), bool), [1.0], device=DEVICE)


@pytest.mark.skipif(DEVICE == "cpu", reason="the guard is for GPU memory")
def test_outputs_too_large_for_the_device_are_refused(monkeypatch):
    """transform_dataset's outputs and a p >= 2 Gram matrix are made where the graphs are: a device that
    cannot hold them is a clear ValueError naming them (simulated: the device reports 1 MiB free, the host
    plenty), not CUDA's out-of-memory error after the work."""
    from kong_pyg import gram_matrix, memory

    on = [g.to(DEVICE) for g in graphs(300, seed=5)]
    real = memory.available_memory

    def available(device=None):
        return 1 << 20 if device is not None and torch.device(device).type != "cpu" else real(device)

    monkeypatch.setattr(memory, "available_memory", available)
    monkeypatch.setattr(memory, "CHECK_FROM_BYTES", 0)
    # (sizes where these checks are the first over 1 MiB: one graph a batch; 300 x 300 x 32 bytes)
    with pytest.raises(ValueError, match="the features of .* nodes and graphs"):
        KongFeatures(k=2, dim=1024, level="both").transform_dataset(on[:120], batch_size=1)
    with pytest.raises(ValueError, match="gram_matrix of 300 x 300 graphs"):
        gram_matrix(on, k=1, degree=2)


def test_table2_harness_on_device_gives_the_cpu_result():
    """evaluate_features(device=...), the harness of Table 2 and the order test: the CPU's scores."""
    from kong_pyg.datasets import load_tu
    from kong_pyg.evaluation.classify import graph_targets
    from kong_pyg.evaluation.cv import random_splits
    from kong_pyg.evaluation.harness import evaluate_features

    gs = load_tu("MUTAG")
    X, y = KongVectorizer(k=2, kernel="cosine").fit_transform(gs), graph_targets(gs)
    sp = random_splits(y, 4, test_size=0.2, inner_folds=3, seed=1)
    cpu = evaluate_features({"K": X}, y, splits=sp, Cs=[0.1, 1.0, 10.0])["K"]
    dev = evaluate_features({"K": X}, y, splits=sp, Cs=[0.1, 1.0, 10.0], device=DEVICE)["K"]
    assert dev.C == cpu.C
    np.testing.assert_allclose(dev.scores["accuracy"], cpu.scores["accuracy"], atol=1e-12)
    np.testing.assert_allclose(dev.scores["auc"], cpu.scores["auc"], atol=1e-9)


def test_order_test_on_device_gives_the_cpu_result():
    """order_test(device=...): the CPU's scores and the same recorded device."""
    from kong_pyg import order_test
    from kong_pyg.datasets import ProvenanceGraphs

    ds = ProvenanceGraphs(40, strength=1.0, seed=0)
    fast = dict(splits=3, shuffles=1, C=(1.0, 100.0), inner_folds=2, reverse=False)
    cpu, dev = order_test(ds, **fast), order_test(ds, **fast, device=DEVICE)
    assert dev.info["svm_device"] == DEVICE and cpu.info["svm_device"] == "cpu"
    assert ("(SVMs on " in dev.to_markdown("t")) == (DEVICE != "cpu")
    for metric in cpu.scores:
        for s in cpu.settings:
            np.testing.assert_allclose(dev.scores[metric][s], cpu.scores[metric][s], atol=1e-9)


@pytest.fixture
def deterministic():
    torch.use_deterministic_algorithms(True)
    yield
    torch.use_deterministic_algorithms(False)


def test_deterministic_algorithms_on_device(deterministic):
    """Under torch.use_deterministic_algorithms, CUDA refuses a weighted bincount (exact rows' duplicate sums)
    and a float cumsum (the SVM's line search): the device gave a RuntimeError where the CPU ran."""
    from kong_pyg import classify

    gs = graphs(12, seed=5)
    for opts in (dict(k=2, hops=2), dict(k=2, hops=2, dim=64, kernel="cosine", normalize=True)):
        X = KongVectorizer(**opts).fit_transform(gs)
        Y = KongVectorizer(device=DEVICE, **opts).fit_transform(gs)
        X, Y = (np.asarray(Z.todense()) if hasattr(Z, "todense") else Z for Z in (X, Y))
        assert np.allclose(X, Y, rtol=1e-9, atol=1e-9)
    b = Batch.from_data_list(gs)
    layer = KongSketch(k=2, hops=2, dim=64, degree=2)
    ref = layer.readout(b.x, b.edge_index, b.batch, b.edge_attr)
    d = b.to(DEVICE)
    same(layer.to(DEVICE).readout(d.x, d.edge_index, d.batch, d.edge_attr), ref, False)
    cpu = classify("MUTAG", grid="quick", repeats=1, inner_folds=3)
    dev = classify("MUTAG", grid="quick", repeats=1, inner_folds=3, device=DEVICE)
    nested = cpu.results["nested"].accuracy_mean
    assert dev.results["nested"].accuracy_mean == pytest.approx(nested, abs=1e-12)
