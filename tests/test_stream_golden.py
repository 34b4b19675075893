"""Golden values: the hashes and stream sketches must never change within a hash scheme.

Saved checkpoints and every sketch ever computed depend on the hash values,
so these literals pin them: any change to the hash-term formula, the tables,
the level shifts or the kernel assembly fails here. :data:`SCHEME_1` was
computed once, before the stream and hashing code were restructured, and holds
for states saved before hash scheme 2 (scrambled hashes, distinct level
shifts: :data:`kong_pyg.sketch.HASH_VERSION`); :data:`GOLDEN` is scheme 2's.

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

GOLDEN = {  # hash scheme 2 (kong_pyg.sketch.HASH_VERSION)
    (0, 'cosine', 1): [
        [-0.3461538461538461, 0.07692307692307705, 0.07692307692307683, -0.23076923076923084,
         1.0153846153846158, 0.4, 0.076923076923077, 0.3076923076923078, 0.46153846153846156,
         0.8076923076923078, 3.687125951074539e-17, 0.08461538461538476, 0.2307692307692309,
         0.15384615384615385, 1.8000000000000003, 0.07692307692307698],
        [-0.5, 4.163336342344337e-17, 1.3877787807814457e-17, -5.551115123125783e-17, 0.25,
         5.551115123125783e-17, 0.25000000000000006, -0.5, 5.551115123125783e-17, -0.25,
         1.3877787807814457e-17, 0.0, 5.551115123125783e-17, 0.5, -1.0, -9.71445146547012e-17],
    ],
    (0, 'cosine', 2): [
        [0.6104594330400782, 0.06405529953917055, 1.1576455802262255, 0.5778522552716102,
         0.17902527579946936, 0.8367267141460691, -0.13228599357631632, 0.24961597542242678,
         -0.07208490434296884, 0.6459433040078202, -0.6868733417120516, 2.1403854210305826,
         0.09500069822650475, 0.1408183214634828, 1.1236698785085883, 1.5406647116324539],
        [-0.33170426065162906, -0.6674185463659148, 0.2373433583959901, 0.3114035087719299,
         -0.09661654135338338, -0.20363408521303264, -0.30714285714285716, 0.18483709273182963,
         0.04210526315789459, 0.03333333333333323, 0.5377192982456139, -0.5526315789473687,
         -0.18045112781954892, 0.10714285714285707, 0.025563909774436205, 0.443107769423559],
    ],
    (0, 'poly', 1): [
        [1, -3, 1, 0, 1, -2, 0, 0, 0, -1, 0, -3, 0, 0, -2, 0],
        [2, 0, -1, 0, 0, -1, 0, 0, 0, -1, 0, 0, 0, 0, 1, 0],
    ],
    (0, 'poly', 2): [
        [1, 3, 11, 0, -5, 3, -1, 0, -3, 9, 0, -4, 0, 2, -2, 16],
        [3, 0, -2, 0, -3, -2, 5, 0, 0, 1, 0, 0, 0, 3, 1, 0],
    ],
    (1, 'cosine', 1): [
        [-0.20833333333333331, 0.3875, 0.3333333333333335, 0.31250000000000006, -0.5, -0.5875,
         0.5875, -0.45833333333333337, 0.9583333333333334, 0.2083333333333334, -1.925,
         0.12500000000000006, 0.33333333333333337, 0.5208333333333334, 0.12499999999999997,
         -0.5000000000000002],
        [-1.0, 3.041097535159333e-17, -0.3333333333333334, -1.0000000000000002,
         4.163336342344337e-17, 6.192185328734505e-17, 1.0000000000000002, 0.3333333333333334,
         -0.3333333333333335, 1.3333333333333335, -0.33333333333333337, -5.551115123125783e-17,
         -0.3333333333333333, 0.33333333333333326, 0.33333333333333337, 6.938893903907228e-17],
    ],
    (1, 'cosine', 2): [
        [-1.8485237483953791, 0.21961203822564543, 0.8900870061332194, -0.8051918413920985,
         0.39781771501925534, -0.3007131650263871, -0.22577378405363002, 1.6663386107545293,
         -0.6061189559264013, -0.8380116959064331, 0.1496790757381257, -1.2683782627299962,
         1.7804592782769937, 1.0533162173727002, -1.1809299671944091, 0.6203537298530882],
        [0.4040404040404041, 0.08585858585858586, -0.3484848484848485, -0.702020202020202,
         0.4444444444444446, 0.3080808080808082, 0.1818181818181818, -0.7020202020202022,
         -0.18686868686868696, -0.6464646464646466, -0.035353535353535304, 0.797979797979798,
         -0.09090909090909091, 0.1818181818181817, -0.25757575757575757, -0.8232323232323233],
    ],
    (1, 'poly', 1): [
        [-2, -1, 0, -1, 0, 0, -3, 0, 0, 1, 0, 1, 1, 0, 1, 1],
        [1, 0, 0, 0, -1, 0, 0, 0, -1, -1, 0, 0, 0, 0, 1, -1],
    ],
    (1, 'poly', 2): [
        [-4, -4, 0, 2, -14, 0, 3, 2, 0, 4, 4, -1, 4, 2, -4, -8],
        [-1, -1, -2, 0, 1, 0, -2, -3, 1, 1, 0, -2, 4, -3, 0, -1],
    ],
}

SCHEME_1 = {  # hash scheme 1: states saved before scheme 2 resume with these
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


@pytest.mark.parametrize("key", sorted(SCHEME_1))
def test_stream_sketches_of_hash_scheme_1(key):
    """A stream on scheme-1 tables (as a state saved before scheme 2 loads) gives scheme 1's sketches."""
    seed, kernel, hops = key
    options = dict(kernel="poly") if kernel == "poly" else dict(kernel="cosine", degree=2)
    ks = KongStream(k=2, hops=hops, dim=16, seed=seed, **options)
    ks.hashes = SketchHashes(16, ks.degree, 2, hops + 1, seed, version=1)
    ks.reset()
    with pytest.raises(ValueError, match="hash scheme 1 with one of scheme 2"):
        ks.merge(KongStream(k=2, hops=hops, dim=16, seed=seed, **options))
    ks.fit([tuple(list(c) for c in zip(*ROWS))])
    torch.testing.assert_close(ks.sketches(), torch.tensor(SCHEME_1[key], dtype=torch.float64), rtol=1e-12,
                               atol=1e-12)
    state = ks.state_dict()
    assert state["hashes"] == 1 and KongStream.from_state_dict(state).hashes.version == 1
    assert repr(ks).endswith(", [hash scheme 1])") and "scheme" not in repr(KongStream(k=2))


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
    with pytest.warns(UserWarning, match="begun under sketch hash scheme 1 .* goes on with those hashes"):
        ks = KongStream.load(path)
    assert ks.pass_index == 2 and ks.position == 5 and ks.hashes.version == 1
    ks.update(*(list(c)[5:] for c in zip(*ROWS)))
    want = torch.tensor(SCHEME_1[1, kernel, 2], dtype=torch.float64)
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
    assert torch.equal(ks.sketches(), torch.tensor(SCHEME_1[1, "poly", 2], dtype=torch.float64))


def test_version_3_checkpoint_resumes():
    """A state of version 3 (the linear map at h = 2 replays pass 1: neighbor counts and replayed strings, no
    node sketches), saved after five edges of pass 2, resumes to the golden sketches."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "stream_v3_poly.pt")
    ks = KongStream.load(path)
    arrays = ks.state_dict()["arrays"]
    assert ks.pass_index == 2 and ks.position == 5 and "rep_len" in arrays and "Yprev" not in arrays
    ks.update(*(list(c)[5:] for c in zip(*ROWS)))
    assert torch.equal(ks.sketches(), torch.tensor(SCHEME_1[1, "poly", 2], dtype=torch.float64))


def test_fit_resuming_a_scheme_1_checkpoint_warns_and_continues_it(tmp_path):
    import shutil
    import warnings

    path = tmp_path / "run.ckpt"
    shutil.copy(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "stream_v3_poly.pt"), path)
    rows = [tuple(list(c) for c in zip(*ROWS))]
    with pytest.warns(UserWarning, match=r"run\.ckpt was begun under sketch hash scheme 1"):
        ks = KongStream(k=2, hops=2, dim=16, seed=1).fit(rows, checkpoint=path)
    assert torch.equal(ks.sketches(), torch.tensor(SCHEME_1[1, "poly", 2], dtype=torch.float64))
    path.unlink()  # a new run: the current scheme, no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fresh = KongStream(k=2, hops=2, dim=16, seed=1).fit(rows, checkpoint=path)
    assert torch.equal(fresh.sketches(), torch.tensor(GOLDEN[1, "poly", 2], dtype=torch.float64))


def test_a_bare_torch_save_file_of_a_state_loads_with_a_warning(tmp_path):
    """A state saved with torch.save (no checksum: damage would go unnoticed) loads, with a warning that says
    so; so do format-1 files (KongStream.save wrote that format for version-1 states, before the digest)."""
    ks = KongStream(k=2, dim=16).update(*(list(c) for c in zip(*ROWS)))
    torch.save(ks.state_dict(), tmp_path / "bare.pt")
    with pytest.warns(UserWarning, match="bare.pt is a bare torch.save file .*: no checksum"):
        back = KongStream.load(tmp_path / "bare.pt")
    assert torch.equal(back.sketches(), ks.sketches())
