"""Golden values: the hashes and stream sketches must never change.

Saved checkpoints and every sketch ever computed depend on the hash values,
so these literals (computed once, before the stream and hashing code were
restructured) pin them: any change to the hash-term formula, the tables, the
level shifts or the kernel assembly fails here.

The stream: two graphs (string and integer ids, integer types), k = 2,
b = 16, seeds 0 and 1, the linear poly map (p = 1, integer counts: exact)
and cosine with p = 2 (Tensor-Sketch, sketch-estimated norms), h = 1 and 2.
"""
import os

import pytest
import torch

from kong_pyg import KongStream
from kong_pyg.hashing import linear_hash
from kong_pyg.sketch import SketchHashes

ROWS = [  # src, src_type, dst, dst_type, edge_type, graph
    ("p1", 0, "f1", 1, 0, "A"),
    ("p1", 0, "s1", 2, 1, "A"),
    (7, 0, "f1", 1, 2, "B"),
    ("f1", 1, "p1", 0, 0, "A"),
    (7, 0, 8, 0, 3, "B"),
    (8, 0, "s2", 2, 1, "B"),
    ("p1", 0, "f2", 1, 0, "A"),
    ("s1", 2, "p1", 0, 2, "A"),
]
GRAMS = torch.tensor([[0, 2], [2**57 + 1, 5], [6, 6], [4, 2**59 - 1]])

GOLDEN = {
    (0, 'poly', 1): [
        [0, 0, -5, 0, 3, 0, -3, 0, -1, 0, 2, 0, -2, 0, 0, 0],
        [-1, 0, -4, 0, 0, 0, 1, 0, -1, 0, 1, 0, 0, 0, 0, 0],
    ],
    (0, 'poly', 2): [
        [9, 0, -5, 0, 3, 0, 6, 0, -24, 0, 17, 0, 6, 0, -10, 0],
        [2, 0, -4, 1, 2, 0, 7, 0, -1, 0, -1, 0, 4, 0, -2, 0],
    ],
    (0, 'cosine', 1): [
        [
            -0.05882352941176474, -0.7411764705882353, 0.11764705882352944, 0.11764705882352935,
            0.05882352941176472, 0.29411764705882365, -0.1176470588235294, 0.8470588235294118,
            -9.143013143971876e-18, -1.7999999999999998, -0.058823529411764726, 0.38823529411764696,
            -0.5176470588235293, -0.4588235294117646, 0.376470588235294, -0.11764705882352933,
        ],
        [
            0.3333333333333334, -0.9999999999999998, 0.3333333333333334, 9.251858538542975e-18,
            0.0, -0.6666666666666667, -1.8503717077085947e-17, 0.33333333333333337,
            0.3333333333333334, 0.33333333333333354, 0.0, -0.33333333333333337,
            -0.3333333333333334, -1.3333333333333335, 1.8503717077085947e-17, 0.0,
        ],
    ],
    (0, 'cosine', 2): [
        [
            0.17957632958398306, 0.5769194324222642, 0.2562442914501693, 0.2617760829914511,
            -0.6380315434348801, -0.03643323358614945, -0.8247345541850364, 0.010393275279238896,
            -1.7294574908228666, 0.28404790780422196, 0.2909096617959315, -0.14966002414341611,
            0.6727148559384899, 0.5608527907624798, 0.8895842409542087, -0.8796599848949459,
        ],
        [
            -0.7222222222222222, -0.6222222222222221, -0.14444444444444451, -0.15555555555555553,
            0.21111111111111122, 0.0, 0.06666666666666685, -0.48888888888888876,
            -0.9333333333333333, 0.06666666666666664, -0.577777777777778, -0.6555555555555556,
            -0.011111111111110999, -0.29999999999999993, 0.06666666666666674, 0.4222222222222223,
        ],
    ],
    (1, 'poly', 1): [
        [-3, 1, 0, 1, -1, 0, -1, 0, -1, 2, 1, -1, 1, 0, 1, 0],
        [0, 0, 1, -1, -1, 0, -1, 0, 0, -1, -1, 0, 0, 0, -2, 0],
    ],
    (1, 'poly', 2): [
        [4, 4, -8, 0, -4, 1, -4, 12, 5, -7, 2, 1, 3, 0, -6, 5],
        [3, -3, -1, -1, -1, 0, 1, -1, -2, 1, 1, 0, -3, 0, 0, 0],
    ],
    (1, 'cosine', 1): [
        [
            -0.22222222222222227, -0.05555555555555553, 0.0, 0.1111111111111111,
            0.22222222222222232, 0.11111111111111116, 0.34444444444444433, -0.188888888888889,
            -0.6666666666666667, 0.2222222222222222, 0.05555555555555558, 0.22222222222222224,
            -1.8555555555555556, -0.3444444444444444, -0.22222222222222238, -0.16666666666666677,
        ],
        [
            0.6666666666666667, -0.3333333333333334, -1.0, -0.3333333333333334,
            -0.33333333333333337, -5.551115123125783e-17, -0.6666666666666669, 0.3333333333333334,
            -0.3333333333333335, 1.0, 0.666666666666667, -2.4186030041997437e-17,
            -0.3333333333333334, 0.3333333333333334, 0.33333333333333354, 6.082195070318667e-17,
        ],
    ],
    (1, 'cosine', 2): [
        [
            -0.31359649122807026, -0.5342105263157896, -0.29122807017543867, -0.5558479532163743,
            0.07777777777777788, 0.9667397660818713, 0.5788742690058479, -0.16440058479532152,
            0.07097953216374268, 0.12397660818713443, 0.5839912280701756, -1.698391812865497,
            0.16966374269005854, 1.2806286549707604, 0.6709064327485379, -0.3471491228070175,
        ],
        [
            0.49999999999999994, -0.2583333333333335, 0.1333333333333333, 0.3250000000000002,
            -0.44999999999999996, 1.2083333333333335, -0.8250000000000001, -0.09166666666666687,
            0.6416666666666668, -0.966666666666667, 0.19166666666666687, -0.03333333333333316,
            -0.15833333333333344, 1.2333333333333334, -0.16666666666666666, -0.33333333333333337,
        ],
    ],
}
HASHES = {  # linear_hash of GRAMS, GRAMS[:, :1] and GRAMS[:, :0] (one row each: [F = 4] hashes)
    0: (
        [
            [575789269, 2089961752, 1362203521, 237262413],
            [887051596, 854336122, 657566589, 1524845589],
            [715544861, 1878712217, 1923437683, 1050106573],
            [355050312, 1864609104, 1602006948, 1151631942],
        ],
        [
            [2117942157, 737396207, 873718140, 442869730],
            [694576655, 418013457, 757905808, 2147113182],
            [660688526, 1031975963, 788396004, 379605160],
            [430611854, 933782711, 816836716, 400693350],
        ],
        [1237374186, 205657840, 708510908, 1086531412],
    ),
    1: (
        [
            [1395235874, 1150114113, 327584021, 932660408],
            [114100771, 1898595546, 1433338257, 672029557],
            [596222355, 1455794525, 1344734777, 1811388584],
            [541872993, 2117372017, 1937619075, 824145782],
        ],
        [
            [2057839633, 794313525, 14211457, 306964382],
            [1645124036, 270288466, 1135540764, 637625727],
            [985063024, 834974379, 336301092, 542426388],
            [1342655227, 821420761, 1660593645, 1179766935],
        ],
        [709841290, 571022716, 1122111277, 2901441],
    ),
}


@pytest.mark.parametrize("key", sorted(GOLDEN))
def test_stream_sketches_golden(key):
    seed, kernel, hops = key
    options = dict(kernel="poly") if kernel == "poly" else dict(kernel="cosine", degree=2)
    ks = KongStream(k=2, hops=hops, dim=16, seed=seed, **options)
    ks.fit([tuple(list(c) for c in zip(*ROWS))])
    assert ks.graph_ids == ["A", "B"]
    want = torch.tensor(GOLDEN[key], dtype=torch.float64)
    if kernel == "poly":  # integer counts in float64
        assert torch.equal(ks.sketches(), want)
    else:
        torch.testing.assert_close(ks.sketches(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_linear_hash_golden(seed):
    coef = SketchHashes(16, 2, 2, 3, seed).coef
    two, one, empty = HASHES[seed]
    assert linear_hash(GRAMS, coef).tolist() == two
    assert linear_hash(GRAMS[:, :1], coef).tolist() == one
    assert linear_hash(GRAMS[:, :0], coef).tolist() == [empty] * len(GRAMS)


@pytest.mark.parametrize("kernel", ["poly", "cosine"])
def test_version_1_checkpoint_loads_and_resumes(kernel):
    """Checkpoints written before the restructuring (state version 1) resume to the same sketches.

    Saved mid-way through pass 2 of a seed-1, h = 2 run over :data:`ROWS` (the
    first five edges of pass 2 read).
    """
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", f"stream_v1_{kernel}.pt")
    ks = KongStream.load(path)
    assert ks.pass_index == 2 and ks.position == 5
    ks.update(*(list(c)[5:] for c in zip(*ROWS)))
    want = torch.tensor(GOLDEN[1, kernel, 2], dtype=torch.float64)
    torch.testing.assert_close(ks.sketches(), want, rtol=1e-12, atol=1e-12)


def test_checkpoint_with_node_sketches_in_pass_1_resumes():
    """A linear h = 2 state written while pass 1 still built node sketches (before the last pass replayed
    pass 1) resumes in that layout to the golden sketches; it does not merge with the new layout."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "stream_v2_poly_pass1.pt")
    ks = KongStream.load(path)
    assert ks.pass_index == 1 and ks.position == 5 and "Y" in ks.state_dict()["arrays"]
    rows = [list(c) for c in zip(*ROWS)]
    fresh = KongStream(k=2, hops=2, dim=16, seed=1).update(*(c[5:] for c in rows))
    with pytest.raises(ValueError, match="earlier version"):
        ks.merge(fresh)
    ks.update(*(c[5:] for c in rows)).end_pass()
    assert "Yprev" in ks.state_dict()["arrays"]
    ks.update(*rows)
    assert torch.equal(ks.sketches(), torch.tensor(GOLDEN[1, "poly", 2], dtype=torch.float64))


def test_version_3_checkpoint_resumes():
    """A state of version 3 (the linear map at h = 2 replays pass 1: neighbor counts and replayed strings, no
    node sketches), saved after five edges of pass 2, resumes to the golden sketches."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "stream_v3_poly.pt")
    ks = KongStream.load(path)
    arrays = ks.state_dict()["arrays"]
    assert ks.pass_index == 2 and ks.position == 5 and "rep_len" in arrays and "Yprev" not in arrays
    ks.update(*(list(c)[5:] for c in zip(*ROWS)))
    assert torch.equal(ks.sketches(), torch.tensor(GOLDEN[1, "poly", 2], dtype=torch.float64))
