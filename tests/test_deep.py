import time

import numpy as np
import torch
from torch_geometric.data import Data

from kong_pyg import KongSketch, KongVectorizer


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
