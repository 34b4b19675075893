"""The consistent shuffle looks random in order, not only in value.

An affine hash of consecutive keys x, x + 1, ... sorts them by c x mod P: a
fixed stride, so the "shuffled" order keeps much of the time order (at most
three distinct gaps between neighbors, by the three-gap theorem, and a
pair of events d apart keeps its order with a probability fixed by d). These
tests fail on such a key.
"""
import pytest
import torch

from kong_pyg.ordering import consistent_key, ordered_neighborhoods


@pytest.mark.parametrize("seed", range(5))
def test_consecutive_keys_get_a_random_looking_order(seed):
    perm = torch.sort(consistent_key(torch.arange(200), seed)).indices
    gaps = set((perm[1:] - perm[:-1]).tolist())
    assert len(gaps) > 50  # a uniform permutation of 200 has ~130; a stride has <= 3
    x = torch.arange(0, 300_000, 3)
    for d in (1, 2, 3, 10, 1000):
        kept = (consistent_key(x + d, seed) > consistent_key(x, seed)).double().mean().item()
        assert abs(kept - 0.5) < 0.01, (d, kept)
    a, b, c = (consistent_key(x + i, seed) for i in range(3))
    pattern = (a > b).long() * 4 + (b > c).long() * 2 + (a > c).long()
    share = torch.bincount(pattern, minlength=8).double() / x.numel()
    possible = share[[0, 2, 3, 4, 5, 7]]  # the six orders of three distinct values
    assert torch.all((possible - 1 / 6).abs() < 0.01), share
    assert share[1] == share[6] == 0


def test_a_neighborhood_of_consecutive_events_is_shuffled_uniformly():
    """Node 0 hears 4 events with keys t, t+1, t+2, t+3 (in time order); over many t the 24
    orders of the four neighbors come out about equally often."""
    counts = torch.zeros(24)
    orders = {}
    ei = torch.stack([torch.arange(1, 5), torch.zeros(4, dtype=torch.long)])
    for t in range(0, 12_000, 5):
        hood = ordered_neighborhoods(ei, 5, order="consistent", edge_order=torch.arange(t, t + 4), seed=7)
        key = tuple(hood.nbr.tolist())
        counts[orders.setdefault(key, len(orders))] += 1
    assert len(orders) == 24
    assert counts.max() / counts.min() < 1.5


def test_equal_keys_equal_values_and_float_keys():
    k = torch.tensor([5, 9, 5, 2])
    v = consistent_key(k, 3)
    assert v[0] == v[2] and len(set(v.tolist())) == 3
    f = consistent_key(k.double() / 7, 3)
    assert f[0] == f[2] and not torch.equal(f, v)
    assert not torch.equal(consistent_key(k, 4), v)
