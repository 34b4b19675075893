"""The same results whatever :func:`torch.set_default_device` says.

Work on the CPU made tensors without naming a device, so under another default device they landed there:
with "meta" (which holds no values) ``classify`` read uninitialised labels and refused MUTAG for a class of
one graph, and loading a TU data set, ``transform_dataset``, streams and data sets gave PyTorch's errors.
"meta" stands in for a GPU here (the same allocations; this machine may have none);
``KONG_TEST_DEFAULT_DEVICE=cuda`` runs the same checks under a GPU default device.
"""
import os
import tempfile
import warnings

import numpy as np
import pytest
import torch
from ml_fake import write_fake_ml100k

from kong_pyg import (
    KongFeatures,
    KongStream,
    KongVectorizer,
    classify,
    gram_matrix,
    merge_streams,
    order_test,
)
from kong_pyg.datasets import (
    InteractionGraphs,
    MovieLensOrdered,
    ProvenanceGraphs,
    StreamSpotGraphs,
    load_tu,
    synthetic_event_stream,
)

DEFAULT_DEVICE = os.environ.get("KONG_TEST_DEFAULT_DEVICE", "meta")


def _runs(ml_dir):
    stream = synthetic_event_stream(12, seed=1)[0]

    def streams():
        a, b = KongStream(k=2, dim=32), KongStream(k=2, dim=32)
        a.update(*(f[:40] for f in stream[:6]))
        b.update(*(f[40:80] for f in stream[:6]))
        both = merge_streams(a, b.copy())
        back = KongStream.from_state_dict(both.state_dict())
        return [KongStream(k=2, hops=2, dim=32).fit(stream).sketches(), both.sketches(), back.sketches()]

    def inter():
        ds = InteractionGraphs([0, 1, 0, 1, 2, 2], [2, 0, 0, 1, 0, 2], [30, 5, 10, 20, 40, 1],
                               torch.tensor([0, 1, 0], device="cpu"), torch.tensor([1, 0, 1], device="cpu"),
                               y=torch.tensor([0, 1, 0], device="cpu"))
        return [ds._data.x, ds._data.edge_index, ds._data.edge_order]

    def readers():
        from kong_pyg.datasets import add_degree_labels, build_ego_graphs, read_ml100k, stream_to_graphs

        t = read_ml100k(str(ml_dir))
        ds = load_tu("MUTAG", cache=tempfile.mkdtemp())
        add_degree_labels(ds)
        ego = build_ego_graphs([0, 1, 0, 1, 2, 2], [2, 0, 0, 1, 0, 2], [30, 5, 10, 20, 40, 1],
                               torch.tensor([0, 1, 0], device="cpu"), torch.tensor([1, 0, 1], device="cpu"))
        return [t.user, t.genres, stream_to_graphs(stream)[3].edge_index, ds._data.x, ego[0].edge_index]

    def harness():
        from kong_pyg.evaluation.cv import cross_validate, random_splits
        from kong_pyg.evaluation.harness import evaluate_features

        rng = np.random.default_rng(0)
        y = np.arange(40) % 2
        X = rng.normal(size=(40, 3)) + y[:, None]
        cv = cross_validate([X], y, repeats=2, folds=4, inner_folds=2)
        ev = evaluate_features({"X": X}, y, splits=random_splits(y, 2, test_size=0.5, inner_folds=2))["X"]
        return [torch.tensor(cv.outer, device="cpu"),
                torch.tensor(np.asarray(ev.scores["accuracy"], dtype=float), device="cpu")]

    return {
        "readers": readers,
        "harness": harness,
        "load_tu": lambda: [load_tu("MUTAG", cache=tempfile.mkdtemp())._data.x],
        "transform_dataset": lambda: [
            KongFeatures(k=2, dim=32, level="both").transform_dataset(load_tu("MUTAG"))._data.kong_graph,
            torch.cat([g.kong_x for g in KongFeatures(k=2, dim=32, level="both").transform_dataset(
                [load_tu("MUTAG")[i] for i in range(12)])])],
        "vectorizer and gram": lambda: [
            torch.from_numpy(KongVectorizer(k=2).fit_transform(load_tu("MUTAG")).toarray()),
            torch.from_numpy(gram_matrix(load_tu("MUTAG"), k=2))],
        # a subset view (its indices and node ranges), the Gram route's sparse blocks (p >= 2), the
        # self-kernels of normalize with 'other', the baselines' own tensors
        "views, Gram route, baselines": _views_gram_baselines,
        "streams": streams,
        "classify": lambda: [torch.tensor(r.repeat_accuracies, device="cpu") for r in classify(
            load_tu("MUTAG"), grid="quick", repeats=1, progress=False).results.values()],
        "order_test": lambda: [torch.tensor(order_test(ProvenanceGraphs(40, seed=1), splits=2, shuffles=1,
                                                       reverse=False).scores["accuracy"]["true"],
                                            device="cpu")],
        "data sets": lambda: inter() + [ProvenanceGraphs(20, seed=1)._data.edge_order,
                                        StreamSpotGraphs(stream)._data.edge_index,
                                        MovieLensOrdered(tempfile.mkdtemp(), ml_dir=str(ml_dir))._data.x],
    }


def _views_gram_baselines():
    from kong_pyg.evaluation.baselines import sp_features, walk_features, wl_features

    ds = load_tu("MUTAG")
    out = [KongVectorizer(k=2).fit_transform(ds[::3]).toarray(), gram_matrix(ds[[5, 1, 7, 3]], k=2),
           gram_matrix(ds[:30], k=1, degree=2), gram_matrix(ds[:7], ds[7:20], degree=2, normalize=True),
           gram_matrix(ds[:7], ds[7:20], k=2, normalize=True)]
    out += [f(ds[::2]).toarray() for f in (wl_features, walk_features, sp_features)]
    return [torch.from_numpy(np.asarray(a)) for a in out]


@pytest.fixture(scope="module")
def ml_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ml")
    write_fake_ml100k(folder)
    return folder


@pytest.mark.parametrize("name", list(_runs(None)))
def test_results_do_not_depend_on_the_default_device(name, ml_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _runs(ml_dir)[name]()
        torch.set_default_device(DEFAULT_DEVICE)
        try:
            got = _runs(ml_dir)[name]()
        finally:
            torch.set_default_device(None)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.device.type == "cpu" and torch.equal(g, w)
