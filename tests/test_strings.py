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
