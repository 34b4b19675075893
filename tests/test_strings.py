import pytest
import torch
from helpers import FIG1_EDGES, FIG1_NAMES, figure1

from kong_pyg import kgram_counts, kong_strings


def _levels(s):
    return ["".join(level) for level in s]


def test_figure1_bfs_and_wl_by_label_order():
    ei, labels = figure1()
    bfs = kong_strings(ei, labels, 2, "bfs", flow="target_to_source", order="label")
    wl = kong_strings(ei, labels, 2, "wl", flow="target_to_source", order="label")
    assert _levels(bfs[0]) == ["A", "BCDG", "EFHG"]
    assert "".join(wl[0]) == "ABEFCHDGG"
    assert _levels(bfs[1]) == ["B", "EF", ""]  # B's neighbors E, F have none
    wl1 = kong_strings(ei, labels, 1, "wl", flow="target_to_source", order="label")
    assert "".join(wl1[0]) == "ABCDG"


def test_figure1_edge_order_is_the_default_order():
    ei, labels = figure1()
    bfs = kong_strings(ei, labels, 2, "bfs", flow="target_to_source")
    # edges list B->F before B->E, so edge order puts F first
    assert _levels(bfs[0]) == ["A", "BCDG", "FEHG"]
    # the same graph in the default flow: reverse the edges
    rev = [(b, a) for a, b in ei]
    assert _levels(kong_strings(rev, labels, 2, "bfs")[0]) == ["A", "BCDG", "FEHG"]
    # an explicit key sorts each neighborhood
    key = [FIG1_NAMES.index(e[1]) for e in FIG1_EDGES]
    s = kong_strings(torch.tensor(ei).t(), labels, 2, "bfs", flow="target_to_source", edge_order=key)
    assert _levels(s[0]) == ["A", "BCDG", "EFHG"]


def test_edge_labels_precede_each_neighbor_piece():
    s = kong_strings([(1, 0), (2, 0)], ["a", "b", "c"], 1, "wl", edge_labels=["x", "y"])
    assert s[0] == ("a", ("edge", "x"), "b", ("edge", "y"), "c")


def test_kgram_counts_keeps_bfs_levels_apart():
    c = kgram_counts([("A",), ("B", "C"), ("B", "C")], 2)
    assert c == {(1, ("B", "C")): 1, (2, ("B", "C")): 1}
    assert kgram_counts(("A", "B", "A", "B"), 2) == {(0, ("A", "B")): 2, (0, ("B", "A")): 1}
    blended = kgram_counts(("A", "B"), 2, blended=True)
    assert blended == {(0, ("A",)): 1, (0, ("B",)): 1, (0, ("A", "B")): 1}


def test_relabel_is_one_wl_round():
    s = kong_strings([(1, 0), (2, 0)], [0, 1, 1], 0, "wl", relabel=True)
    assert s[0] == ((0, (1, 1)),) and s[1] == ((1, ()),)


def test_oracle_reads_labels_and_keys_as_the_library_does():
    # float and one-hot tensor labels were tensors (hashed by identity: equal labels, different symbols)
    import numpy as np
    import pytest
    import torch

    from kong_pyg.ordering import ordered_neighborhoods
    from kong_pyg.strings import brute_force_kernel, kong_strings

    ei = [(1, 0), (2, 0)]
    want = brute_force_kernel([kong_strings(ei, [0, 0, 1], 1)] * 2, 1)
    for labels in (torch.tensor([0.0, 0.0, 1.0]), torch.tensor([[1, 0], [1, 0], [0, 1]])):
        assert brute_force_kernel([kong_strings(ei, labels, 1)] * 2, 1) == want
    # [N, C] tensors read as the library reads them: an integer column, boolean one-hot, multi-hot rows
    from kong_pyg.inputs import labels as label_codes

    for x in (torch.tensor([[1], [0], [3]]), torch.tensor([[True, False], [False, True], [True, False]]),
              torch.tensor([[1, 0], [2, 0], [0, 1]])):
        codes = label_codes(x, "x", 3).tolist()
        assert list(kong_strings(ei, x, 1, order="label")[0]) == [(codes[0],), tuple(sorted(codes[1:]))]
    # NumPy one-hot matrices of any layout: reversed rows (negative strides), big-endian bytes
    want = kong_strings(ei, [2, 1, 0], 1)
    for x in (np.eye(3)[::-1], np.eye(3)[::-1].astype(">f8"), np.eye(3, dtype=">i4")[::-1, :]):
        assert kong_strings(ei, x, 1) == want
    # float keys stay float64 (float32 made timestamps 0.25 apart one key: no shuffle at all)
    ei = torch.tensor([[1, 2, 3, 4, 5], [0, 0, 0, 0, 0]])
    keys = [1.7e9 + 0.25 * i for i in range(5)][::-1]
    as_tensor = torch.tensor(keys, dtype=torch.float64)
    hood = ordered_neighborhoods(ei, 6, order="consistent", edge_order=as_tensor)
    assert kong_strings(ei, list(range(6)), 1, edge_order=keys, order="consistent", seed=0)[0][1] == \
        tuple(hood.nbr.tolist())
    # NumPy node indices are indices; a NaN in a tensor key is refused, as in the library
    assert kong_strings([(np.int64(1), 0)], [0, 1], 1) == kong_strings([(1, 0)], [0, 1], 1)
    with pytest.raises(ValueError, match="'edge_order' holds NaN"):
        kong_strings([(1, 0), (2, 0)], [0, 1, 2], 1, edge_order=torch.tensor([3.0, float("nan")]))


def test_vocab_rebuilt_from_its_state_keeps_the_ids():
    import pytest
    import torch

    from kong_pyg.vocab import KeyVocab, TupleVocab

    v = KeyVocab()
    v.lookup(torch.tensor([5]), True)
    v.lookup(torch.tensor([3]), True)
    assert KeyVocab.from_keys(v.state()).lookup(torch.tensor([5, 3]), False).tolist() == [0, 1]
    with pytest.raises(ValueError, match="keys must be distinct"):
        KeyVocab.from_keys(torch.tensor([7, 3, 7]))
    t = TupleVocab()
    rows = torch.tensor([[9, 1, 4], [2, 7, 7], [9, 1, 5]])
    ids = t.lookup(rows, True)
    assert torch.equal(TupleVocab.from_state(t.state()).lookup(rows, False), ids)


def test_oracle_reads_edge_labels_as_given_in_data():
    # data.edge_attr as given: a tensor's entries were symbols by identity (equal labels counted apart:
    # K = 3 instead of 5 for two equal edge labels), one-hot rows were kept as whole tensors
    import torch
    from torch_geometric.data import Data

    from kong_pyg import KongVectorizer
    from kong_pyg.strings import brute_force_kernel, kong_strings

    ei, x = torch.tensor([[1, 2], [0, 0]]), torch.tensor([0, 1, 1])
    assert brute_force_kernel([kong_strings(ei, x, 1, edge_labels=torch.tensor([5, 5]))], 2) == [[5.0]]
    g = torch.Generator().manual_seed(4)
    graphs = []
    for n in (7, 9, 6):
        ei = torch.randint(0, n, (2, 3 * n), generator=g)
        graphs.append(Data(x=torch.randint(0, 3, (n,), generator=g), edge_index=ei,
                           edge_attr=torch.randint(0, 2, (ei.size(1),), generator=g)))
    X = KongVectorizer(k=2, hops=2).fit_transform(graphs)
    want = (X @ X.T).toarray()
    for form in (lambda a: a, lambda a: a.view(-1, 1), lambda a: torch.nn.functional.one_hot(a, 3).float()):
        strings = [kong_strings(d.edge_index, d.x, 2, edge_labels=form(d.edge_attr)) for d in graphs]
        assert brute_force_kernel(strings, 2) == want.tolist()


def test_the_oracle_takes_the_sort_keys_the_fast_code_takes():
    """kong_strings ignored a key under order='label' and sorted bools and two-column keys; the layer refuses
    all three, so the oracle did not describe what the layer does."""
    from kong_pyg import KongSketch

    edges, labels = [(1, 0), (2, 0)], [0, 1, 2]
    ei, x = torch.tensor(edges).t(), torch.tensor(labels)
    for key, order, err, msg in (([1, 0], "label", ValueError, "order='label' asks for another one"),
                                 ([True, False], "edge", TypeError, "real-valued sort key"),
                                 ([[1, 0], [0, 1]], "edge", TypeError, "real-valued sort key")):
        with pytest.raises(err, match=msg):
            kong_strings(edges, labels, 1, edge_order=key, order=order)
        with pytest.raises((ValueError, TypeError)):
            KongSketch(k=2, hops=1, dim=8, order=order).readout(x, ei, edge_order=torch.tensor(key))
    for key in ([[1], [0]], torch.tensor([[1.0], [0.0]])):  # (a column of keys, as the layer takes)
        expected = kong_strings(edges, labels, 1, edge_order=[1, 0])
        assert kong_strings(edges, labels, 1, edge_order=key) == expected


def test_the_oracles_cache_of_wl_labels_is_bounded():
    """A long-running process calling kong_strings on new graphs kept every WL label it ever saw."""
    import random as _random

    from kong_pyg.strings import _wl_code

    rng = _random.Random(0)
    maxsize = _wl_code.cache_info().maxsize
    assert maxsize is not None and maxsize <= 1 << 16
    for _ in range(5):
        edges = [(rng.randrange(30), rng.randrange(30)) for _ in range(60)]
        kong_strings(edges, [rng.randrange(10**6) for _ in range(30)], 2, relabel=2, order="label")
    assert _wl_code.cache_info().currsize <= maxsize
