"""Golden values: the hash tables, fingerprints and sketches of fixed seeds.

Saved checkpoints, cached features and every published number depend on these
values; a change to the hashing (or to the order in which the tables are drawn)
must fail here, not silently change results.
"""
import pytest
import torch
from helpers import figure1

from kong_pyg import KongSketch
from kong_pyg.hashing import row_fingerprint
from kong_pyg.sketch import SketchHashes


def test_sketch_hash_tables_of_a_fixed_seed():
    h = SketchHashes(1000, 2, 3, 3, seed=7)
    grams = torch.tensor([[0, 2, 4], [2, 0, 4], [1, 3, 2**59 + 6], [6, 6, 6]])
    bucket, sign = h.hash(grams)
    assert bucket.tolist() == [[402, 736], [793, 495], [246, 290], [924, 884]]
    assert sign.tolist() == [[-1.0, 1.0], [1.0, 1.0], [-1.0, 1.0], [1.0, 1.0]]
    assert h.hash(grams[:, :1])[0].tolist() == [[2, 66], [812, 686], [907, 876], [79, 926]]
    cb, cs = h.const_token()
    assert cb.tolist() == [707, 845] and cs.tolist() == [1.0, -1.0]
    assert h.shift.tolist() == [[60, 540, 343], [239, 242, 609]]
    assert h.flip.tolist() == [[-1.0, 1.0, -1.0], [-1.0, -1.0, 1.0]]


def test_label_fingerprints_are_fixed():
    rows = torch.tensor([[1, 2, 3], [3, 2, 1], [0, 0, 0]])
    assert row_fingerprint(rows).tolist() == [209198077298406311, 8409981865288257, 40153606987956505]


GOLDEN = [
    (0, dict(k=2, hops=2),
     [0, -1, -1, 0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0]),
    (0, dict(k=2, hops=2, traversal="wl", kernel="cosine", degree=2),
     [0.5, 0.875, 0.125, 0.25, -0.5, 0, 0.125, 0.75, 0, -0.125, -0.375, 1.25, -0.25, -0.5, 0.125, 0.25]),
    (0, dict(k=3, hops=1, degree=2, const=1.0),
     [-1, 1, -1, 0, 0, 0, 0, -8, 1, -1, 0, -1, 1, 0, 0, 1]),
    (1, dict(k=2, hops=2),
     [1, 0, -1, 0, 0, 0, -1, 0, 0, 0, 0, 1, -1, 0, 0, 0]),
    (1, dict(k=2, hops=2, traversal="wl", kernel="cosine", degree=2),
     [-0.375, 0.25, -0.125, 0.125, -1, 0.5, 0.125, 0.25, 0, -1.25, -0.125, -0.125, -0.125, 0, -0.375, -0.75]),
    (1, dict(k=3, hops=1, degree=2, const=1.0),
     [-1, 0, 1, 0, 0, -1, -8, 0, 1, 0, -1, -1, 0, 1, 0, -1]),
]


@pytest.mark.parametrize("seed,cfg,expected", GOLDEN)
def test_figure1_readout_of_fixed_seeds(seed, cfg, expected):
    ei, names = figure1()
    x = torch.tensor([ord(c) - ord("A") for c in names])
    layer = KongSketch(dim=16, seed=seed, dtype=torch.float64, flow="target_to_source", **cfg)
    out = layer.readout(x, torch.tensor(ei).t())
    torch.testing.assert_close(out[0], torch.tensor(expected, dtype=torch.float64), rtol=0, atol=1e-12)
    # node features sum to the same vector
    torch.testing.assert_close(layer(x, torch.tensor(ei).t()).sum(0), out[0], rtol=0, atol=1e-12)
