"""Golden values: the hash tables, fingerprints and sketches of fixed seeds.

Saved checkpoints, cached features and every published number depend on these
values; a change to the hashing (or to the order in which the tables are drawn)
must fail here, not silently change results. A deliberate change is a new hash
scheme (:data:`kong_pyg.sketch.HASH_VERSION`), and state saved under the old one
keeps giving its features.
"""
import pytest
import torch
from helpers import figure1

from kong_pyg import KongSketch
from kong_pyg.hashing import row_fingerprint
from kong_pyg.sketch import SketchHashes


@pytest.mark.parametrize("version,buckets,signs,unigrams,const", [
    (2, [[782, 23], [970, 907], [338, 279], [599, 164]],
     [[-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0], [-1.0, 1.0]],
     [[777, 745], [515, 897], [400, 295], [375, 49]], ([333, 606], [1.0, -1.0])),
    # scheme 1 (before scrambled hashes): what state saved then loads as
    (1, [[402, 736], [793, 495], [246, 290], [924, 884]], [[-1.0, 1.0], [1.0, 1.0], [-1.0, 1.0], [1.0, 1.0]],
     [[2, 66], [812, 686], [907, 876], [79, 926]], ([707, 845], [1.0, -1.0])),
])
def test_sketch_hash_tables_of_a_fixed_seed(version, buckets, signs, unigrams, const):
    h = SketchHashes(1000, 2, 3, 3, seed=7, version=version)
    grams = torch.tensor([[0, 2, 4], [2, 0, 4], [1, 3, 2**59 + 6], [6, 6, 6]])
    bucket, sign = h.hash(grams)
    assert bucket.tolist() == buckets
    assert sign.tolist() == signs
    assert h.hash(grams[:, :1])[0].tolist() == unigrams
    cb, cs = h.const_token()
    assert (cb.tolist(), cs.tolist()) == const
    assert h.shift.tolist() == [[60, 540, 343], [239, 242, 609]]  # (no two levels drew one shift here)
    assert h.flip.tolist() == [[-1.0, 1.0, -1.0], [-1.0, -1.0, 1.0]]


def test_level_shifts_are_distinct_from_scheme_2():
    # seed 0 drew one shift for levels 0 and 2 at b = 64 and 128 (a whole level's grams in one bucket)
    for dim in (64, 128):
        assert SketchHashes(dim, 1, 3, 3, seed=0, version=1).shift[0, 0] == \
            SketchHashes(dim, 1, 3, 3, seed=0, version=1).shift[0, 2]
    for seed in range(200):
        for dim, levels in ((4, 4), (16, 3), (64, 3), (128, 5)):
            shift = SketchHashes(dim, 2, 2, levels, seed=seed).shift
            assert all(len(set(row)) == levels for row in shift.tolist()), (seed, dim)
    switched = SketchHashes(64, 1, 3, 3, seed=0)
    switched.version = 1  # (redraws the tables: scheme 1's, no mix of the two)
    assert all(torch.equal(getattr(switched, n), getattr(SketchHashes(64, 1, 3, 3, seed=0, version=1), n))
               for n in ("coef", "shift", "flip", "scheme"))
    more = SketchHashes(2, 1, 2, 5, seed=0).shift[0].tolist()  # more levels than buckets: rounds of distinct
    assert sorted(more[:2]) == [0, 1] and sorted(more[2:4]) == [0, 1]


def test_label_fingerprints_are_fixed():
    rows = torch.tensor([[1, 2, 3], [3, 2, 1], [0, 0, 0]])
    assert row_fingerprint(rows).tolist() == [209198077298406311, 8409981865288257, 40153606987956505]


GOLDEN = [  # hash scheme 2
    (0, dict(k=2, hops=2),
     [0, 0, 1, 0, -1, 0, -1, 0, 1, 0, 1, 0, 0, 0, 0, 0]),
    (0, dict(k=2, hops=2, traversal="wl", kernel="cosine", degree=2),
     [0.125, -0.125, -0.75, 0, 0, 0, 0, -0.625, -0.25, -1, 0.5, 0, 0.125, 0.125, 1.25, 0.625]),
    (0, dict(k=3, hops=1, degree=2, const=1.0),
     [0, 0, 0, 0, 0, 1, 0, -8, 0, 0, 1, -2, 0, 1, -1, 0]),
    (1, dict(k=2, hops=2),
     [0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, -1, 1, 0, 0]),
    (1, dict(k=2, hops=2, traversal="wl", kernel="cosine", degree=2),
     [0.5, -0.25, -1.25, 0.5, 0.125, -0.25, 0.25, -0.125, -0.625, -0.625, 1.125, 0.5, -0.25, -0.125, 0.375,
      0.125]),
    (1, dict(k=3, hops=1, degree=2, const=1.0),
     [0, 0, 1, 7, 0, 0, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0]),
]

SCHEME_1 = [  # hash scheme 1: what a layer saved then gives, loaded now
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


@pytest.mark.parametrize("seed,cfg,expected", SCHEME_1)
def test_a_state_dict_saved_before_hash_schemes_gives_its_features(seed, cfg, expected):
    """A state dict without the scheme (saved before scheme 2) loads as scheme 1: the features it was saved
    with, scheme 1's golden values; the layer's own next state dict records scheme 1."""
    ei, names = figure1()
    x, edge_index = torch.tensor([ord(c) - ord("A") for c in names]), torch.tensor(ei).t()
    saved = KongSketch(dim=16, seed=seed, dtype=torch.float64, flow="target_to_source", **cfg)
    saved.hashes.version = 1
    saved.hashes.reset_parameters()
    old = {k: v for k, v in saved.state_dict().items() if k != "hashes.scheme"}
    layer = KongSketch(dim=16, seed=seed, dtype=torch.float64, flow="target_to_source", **cfg)
    assert layer.hashes.version == 2
    with pytest.warns(UserWarning, match="no 'scheme': its hash tables were saved before hash scheme 2, and "
                                         "they load as scheme 1"):
        layer.load_state_dict(old)
    assert layer.hashes.version == 1 and int(layer.state_dict()["hashes.scheme"]) == 1
    torch.testing.assert_close(layer.readout(x, edge_index)[0], torch.tensor(expected, dtype=torch.float64),
                               rtol=0, atol=1e-12)
    fresh = KongSketch(dim=16, seed=seed, dtype=torch.float64, flow="target_to_source", **cfg)
    assert not torch.allclose(fresh.readout(x, edge_index)[0], layer.readout(x, edge_index)[0])
    fresh.load_state_dict(layer.state_dict())  # the scheme travels with the state
    assert fresh.hashes.version == 1


def test_a_layer_and_a_vectorizer_pickled_by_kong_pyg_0_1_keep_their_features():
    """tests/data/pickled_v0_1.pkl holds a KongSketch and a fitted sketching KongVectorizer pickled by the
    code before hash scheme 2 (commit 4f68140), with their outputs on Figure 1: unpickled now, they are
    scheme 1 and give those outputs; new ones use scheme 2."""
    import os
    import pickle

    from torch_geometric.data import Data

    from kong_pyg import KongVectorizer

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "pickled_v0_1.pkl")
    with open(path, "rb") as f:
        saved = pickle.load(f)  # (our own test data)
    ei, names = figure1()
    x, edge_index = torch.tensor([ord(c) - ord("A") for c in names]), torch.tensor(ei).t()
    layer, vec = pickle.loads(saved["layer"]), pickle.loads(saved["vectorizer"])
    assert layer.hashes.version == 1 and int(layer.state_dict()["hashes.scheme"]) == 1
    assert layer.readout(x, edge_index)[0].tolist() == saved["layer_out"] == SCHEME_1[0][2]
    graph = [Data(x=x, edge_index=edge_index)]
    assert vec.transform(graph)[0].tolist() == saved["vectorizer_out"]
    fresh = KongVectorizer(k=2, hops=2, dim=16, seed=0, edge_labels=False).fit(graph)
    assert fresh.transform(graph)[0].tolist() != saved["vectorizer_out"]


def test_scheme_compatibility_edges():
    """A refused load keeps the scheme even without KongSketch's pre-hook; tables pickled by the first
    version of scheme 2 (the scheme in the buffer and Module._version) unpickle as scheme 2; a KongFeatures
    repr (PyG's pre_transform check) names scheme 2; a stream whose scheme is set by hand follows it while
    empty and refuses it after reading edges."""
    import pickle

    from kong_pyg import KongFeatures, KongStream

    layer = KongSketch(k=2, hops=2, dim=64, seed=27)
    layer.hashes.version = 1
    layer._load_state_dict_pre_hooks.clear()  # (as a layer pickled before the hook)
    before = layer.hashes.shift.clone()
    with pytest.raises(ValueError, match="not drawn with this layer's seed=27"):
        layer.load_state_dict(KongSketch(k=2, hops=2, dim=64, seed=5).state_dict())
    assert layer.hashes.version == 1 and torch.equal(layer.hashes.shift, before)
    h = SketchHashes(64, 1, 2, 3, seed=0)
    state = dict(h.__dict__)
    state.pop("_scheme")
    state["_version"] = 2
    back = SketchHashes.__new__(SketchHashes)
    back.__setstate__(state)
    assert back.version == 2 and int(back.scheme) == 2 and "_version" not in back.__dict__
    assert repr(KongFeatures(k=2, dim=16)).endswith(", hash_scheme=2)")
    old = pickle.loads(pickle.dumps(KongFeatures(k=2, dim=16)))
    old.sketch.hashes.version = 1  # (as one pickled before scheme 2)
    assert repr(old).endswith(", hash_scheme=1)")
    again = eval(repr(old), {"KongFeatures": KongFeatures, "torch": torch})
    assert again.sketch.hashes.version == 1
    assert torch.equal(again.sketch.hashes.shift, old.sketch.hashes.shift)
    ks = KongStream(k=2, dim=16)
    ks.hashes.version = 1
    ks.update([1], [0], [2], [1], [0])
    fresh = KongStream(k=2, dim=16)
    fresh.hashes = SketchHashes(16, 1, 2, 2, 0, version=1)
    fresh.reset().update([1], [0], [2], [1], [0])
    assert torch.equal(ks.sketches(), fresh.sketches())
    ks.hashes.version = 2
    with pytest.raises(RuntimeError, match="hash scheme was changed after it read edges"):
        ks.update([1], [0], [2], [1], [0])
