"""The KONG authors' feature vectors, written out by hand.

The authors' experiment code (``string_subtree_kernels.graph2map`` with h = 1,
k = 2 of github.com/kokiche/KONG) gives every node the string of its
neighbors' labels in neighbor order (not its own label), counts the 1-grams
and 2-grams of every node's string, sums the counts over the nodes of a graph,
and writes the raw sums and the L2-normalized sums (their "cosine" files).
In kong_pyg that is ``KongVectorizer(k=2, hops=1, own_label=False,
blended=True, normalize=True)``.

One quirk of their code is not reproduced: its n-gram loop runs over the
*character* positions of the comma-joined string, so a one-token string whose
label is a single character counts no 1-gram. In their MovieLens graphs the
one-token strings are 2-hop users' genre names (3+ characters), so the quirk
never fires there.
"""
import math

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from kong_pyg import KongVectorizer
from kong_pyg.datasets import InteractionGraphs

AUTHORS = dict(k=2, hops=1, own_label=False, blended=True)


def by_name(vec, X):
    """Each row as {gram: value}, grams written like the authors' keys ("a" or "a,b")."""
    names = [n.split(":", 1)[1] for n in vec.get_feature_names_out()]
    return [{n: float(v) for n, v in zip(names, row) if v != 0} for row in np.asarray(X)]


def normalized(counts):
    norm = math.sqrt(sum(v * v for v in counts.values()))
    return {g: v / norm for g, v in counts.items()}


# Graph A: node 0 <- 1, 2, 1 (in that order), node 1 <- 0, 3, node 2 <- 3, node 3: nothing.
# Labels 0: 7, 1: 8, 2: 9, 3: 8.
#   node 0: "8,9,8"  node 1: "7,8"  node 2: "8"  node 3: (no string)
GA = Data(x=torch.tensor([7, 8, 9, 8]), edge_index=torch.tensor([[1, 2, 1, 0, 3, 3], [0, 0, 0, 1, 1, 2]]))
COUNTS_A = {"7": 1, "8": 4, "9": 1,           # 1-grams: 8 twice in node 0, once in nodes 1 and 2
            "8,9": 1, "9,8": 1, "7,8": 1}     # 2-grams
# Graph B: the same edges as A with node 0's neighbors in another order (1, 1, 2):
#   node 0: "8,8,9" -> same 1-grams, 2-grams 8,8 and 8,9
GB = Data(x=GA.x, edge_index=torch.tensor([[1, 1, 2, 0, 3, 3], [0, 0, 0, 1, 1, 2]]))
COUNTS_B = {"7": 1, "8": 4, "9": 1, "8,8": 1, "8,9": 1, "7,8": 1}
# Graph C: a star read in both directions, node 0 <-> 1, 2, 3 (labels 5; 6, 6, 7), events
# in the order 1, 2, 3, each giving the edges (leaf -> 0) and (0 -> leaf):
#   node 0: "6,6,7"  nodes 1, 2, 3: "5" each
GC = Data(x=torch.tensor([5, 6, 6, 7]),
          edge_index=torch.tensor([[1, 0, 2, 0, 3, 0], [0, 1, 0, 2, 0, 3]]))
COUNTS_C = {"6": 2, "7": 1, "5": 3, "6,6": 1, "6,7": 1}


def test_raw_sums_of_one_and_two_gram_counts():
    vec = KongVectorizer(**AUTHORS)
    rows = by_name(vec, vec.fit_transform([GA, GB, GC]).toarray())
    assert rows == [COUNTS_A, COUNTS_B, COUNTS_C]


def test_normalized_graph_vectors():
    vec = KongVectorizer(**AUTHORS, normalize=True)
    rows = by_name(vec, vec.fit_transform([GA, GB, GC]).toarray())
    for row, counts in zip(rows, (COUNTS_A, COUNTS_B, COUNTS_C)):
        expected = normalized(counts)
        assert row.keys() == expected.keys()
        for g in expected:
            assert row[g] == pytest.approx(expected[g], rel=1e-12)
    assert rows[0]["8"] == pytest.approx(4 / math.sqrt(1 + 16 + 1 + 1 + 1 + 1))


def test_the_settings_that_differ_from_the_authors_give_other_vectors():
    # own label included: level-0 label counts and 2-grams starting with the node's label
    vec = KongVectorizer(k=2, hops=1, blended=True)
    names = set(vec.fit([GA]).get_feature_names_out())
    assert "L0:7" in names and "L1:7,8" in names
    # plain K-2 (no 1-grams)
    vec = KongVectorizer(k=2, hops=1, own_label=False)
    assert by_name(vec, vec.fit_transform([GA]).toarray()) == [{"8,9": 1, "9,8": 1, "7,8": 1}]


def test_authors_graph_and_features_end_to_end():
    """The authors' MovieLens construction on a tiny log, then their features, by hand.

    Ratings (user, movie, time): (0, 2, 30) (1, 0, 5) (0, 0, 10) (1, 1, 20) (2, 0, 40) (2, 2, 1);
    user labels 0, 1, 2; movie labels 3, 4, 5. Ego 0's graph in their layout: ego "3,3,5,5"
    (each movie twice), movie 0 "0,1,0,2" (the ego first, then raters 1, 0, 2 by time), movie 2
    "0,2,0", user 1 "3", user 2 "3,5" (the ego's movie order).
    """
    ds = InteractionGraphs([0, 1, 0, 1, 2, 2], [2, 0, 0, 1, 0, 2], [30, 5, 10, 20, 40, 1],
                           torch.tensor([0, 1, 2]), torch.tensor([0, 1, 2]), torch.tensor([1, 0, 1]),
                           layout="authors")
    counts = {"0": 4, "1": 1, "2": 2, "3": 4, "5": 3,
              "3,3": 1, "3,5": 2, "5,5": 1, "0,1": 1, "1,0": 1, "0,2": 2, "2,0": 1}
    vec = KongVectorizer(**AUTHORS)
    raw = by_name(vec, vec.fit_transform(ds).toarray())[0]
    assert raw == counts
    vec = KongVectorizer(**AUTHORS, normalize=True)
    row = by_name(vec, vec.fit_transform(ds).toarray())[0]
    assert sum(v * v for v in counts.values()) == 59
    assert row == pytest.approx({g: v / math.sqrt(59) for g, v in counts.items()}, rel=1e-12)


def test_without_own_label_wl_strings_at_depth_h_are_the_bfs_level_h_block():
    """own_label=False drops every node's own label at every depth (the docs said WL dropped only the leading
    l(v)): on Figure 1, A's WL string at h = 2 is EFHG, BFS's level-2 block, not BEFCHDGG."""
    from kong_pyg import kong_strings

    names = "ABCDEFGH"
    ei = [(names.index(a), names.index(b)) for a, b in ["AB", "AC", "AD", "AG", "BE", "BF", "CH", "DG"]]
    wl = kong_strings(ei, list(names), 2, "wl", flow="target_to_source", own_label=False)
    bfs = kong_strings(ei, list(names), 2, "bfs", flow="target_to_source", own_label=False)
    assert "".join(wl[0]) == "EFHG" == "".join(bfs[0][-1])
    one = kong_strings(ei, list(names), 1, "wl", flow="target_to_source", own_label=False)
    assert "".join(one[0]) == "BCDG"  # (h = 1: the neighbors' labels, as the authors' code)
