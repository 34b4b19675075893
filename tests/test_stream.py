import io
import itertools
import os
import random
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
import torch
from torch_geometric.data import Batch

import kong_pyg.stream.passes as stream_passes
from kong_pyg import KongSketch, KongStream, merge_streams
from kong_pyg.cli import main as cli_main
from kong_pyg.datasets import (
    EdgeStream,
    read_streamspot,
    stream_to_graphs,
    synthetic_event_stream,
    write_streamspot,
)
from kong_pyg.hashing import BREAK
from kong_pyg.idmap import IdMap
from kong_pyg.kgrams import StringState, concat_pieces
from kong_pyg.sketch import SketchHashes, SymbolHashTable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))



def canonical(ks):
    """State arrays with symbol ids replaced by symbol codes (ids depend on lookup order)."""
    state = ks.state_dict()
    codes = state["symbols"]
    out = {}
    for name, t in state["arrays"].items():
        if name == "node_sym" or name.endswith(("_pre", "_suf")):
            t = torch.where(t >= 0, codes[t.clamp(min=0)], t)
        out[name] = t
    return out


def random_stream(seed, graphs=4, edges=60, types=3, edge_types=2, max_nodes=6):
    """A typed edge stream: raw per-graph node ids for KongStream, dense ones for EdgeStream.

    Multi-edges, self-loops and graphs of one node all occur.
    """
    rng = random.Random(seed)
    sizes = {g: rng.randint(1, max_nodes) for g in range(graphs)}
    ntype = {(g, v): rng.randrange(types) for g in range(graphs) for v in range(sizes[g])}
    rows = []
    for _ in range(edges):
        g = rng.randrange(graphs)
        s, d = rng.randrange(sizes[g]), rng.randrange(sizes[g])
        rows.append((s, ntype[g, s], d, ntype[g, d], rng.randrange(edge_types), g))
    t = torch.tensor(rows, dtype=torch.long).view(-1, 6)
    key = torch.stack([t[:, 5] * 1000 + t[:, 0], t[:, 5] * 1000 + t[:, 2]], dim=1)
    _, dense = torch.unique(key, return_inverse=True)
    es = EdgeStream(dense[:, 0], t[:, 1], dense[:, 1], t[:, 3], t[:, 4], t[:, 5], list(range(graphs)))
    raw = (t[:, 0], t[:, 1], t[:, 2], t[:, 3], t[:, 4], t[:, 5])
    return es, raw


def reference(es, undirected=True, edge_labels=True, **cfg):
    """KongSketch.readout on stream_to_graphs output (graphs in order of their first edge)."""
    graphs = stream_to_graphs(es, undirected=undirected)
    b = Batch.from_data_list(graphs)
    layer = KongSketch(norm="sketch", dtype=torch.float64, **cfg)
    return layer.readout(b.x, b.edge_index, b.batch, b.edge_attr if edge_labels else None)


def feed(ks, raw, chunk=7, lo=0, hi=None):
    hi = raw[0].numel() if hi is None else hi
    for a in range(lo, hi, chunk):
        ks.update(*(c[a : min(a + chunk, hi)] for c in raw))
    return ks


def run_all_passes(raw, chunk=7, **cfg):
    ks = KongStream(**cfg)
    for p in range(ks.num_passes):
        if p:
            ks.end_pass()
        feed(ks, raw, chunk)
    return ks


KERNELS = [dict(kernel="poly"), dict(kernel="poly", degree=2, const=1.0), dict(kernel="cosine"),
           dict(kernel="cosine", degree=2)]


@pytest.mark.parametrize("k,hops", list(itertools.product([1, 2, 3], [0, 1, 2])))
def test_equals_kongsketch_readout_on_stream_to_graphs(k, hops):
    es, raw = random_stream(k * 10 + hops)
    for traversal, kern, undirected in itertools.product(["bfs", "wl"], KERNELS, [True, False]):
        cfg = dict(k=k, hops=hops, traversal=traversal, dim=64, seed=3, **kern)
        ref = reference(es, undirected, **cfg)
        ks = run_all_passes(raw, undirected=undirected, **cfg)
        got = ks.sketches()
        assert ks.num_graphs == len(es.graph_ids)
        if kern == dict(kernel="poly"):  # integer counts in float64: bit-exact
            assert torch.equal(got, ref), cfg
        else:
            torch.testing.assert_close(got, ref, rtol=1e-9, atol=1e-9)


def test_linear_map_with_a_constant_equals_the_readout():
    """poly with const > 0 and degree 1 (the linear map) adds the constant coordinate with its hash sign: it
    once went in as +const * |V| whatever the sign, unseen where tests drew +1. Compared with the readout over
    several seeds, drawing both signs."""
    es, raw = random_stream(23)
    signs = set()
    for seed, (k, hops), traversal in itertools.product(range(4), [(1, 0), (2, 1), (3, 2)], ["bfs", "wl"]):
        cfg = dict(k=k, hops=hops, traversal=traversal, dim=32, seed=seed, kernel="poly", const=1.0)
        ks = run_all_passes(raw, **cfg)
        assert ks.degree == 1
        signs.add(float(ks.hashes.const_token()[1]))
        assert torch.equal(ks.sketches(), reference(es, **cfg)), cfg  # integers in float64: bit-exact
    assert signs == {-1.0, 1.0}


@pytest.mark.parametrize("edge_labels,blended", [(False, False), (False, True), (True, True)])
def test_equals_readout_without_edge_labels_and_blended(edge_labels, blended):
    es, raw = random_stream(7)
    for k, hops, traversal in itertools.product([2, 3], [1, 2], ["bfs", "wl"]):
        cfg = dict(k=k, hops=hops, traversal=traversal, dim=32, seed=1, blended=blended)
        ref = reference(es, edge_labels=edge_labels, **cfg)
        got = run_all_passes(raw, edge_labels=edge_labels, **cfg)
        assert torch.equal(got.sketches(), ref)


@pytest.mark.parametrize("traversal", ["bfs", "wl"])
def test_equals_readout_without_the_own_label(traversal):
    es, raw = random_stream(11)
    for k, hops, kern in itertools.product([1, 2, 3], [1, 2], KERNELS[:3]):
        cfg = dict(k=k, hops=hops, traversal=traversal, dim=32, seed=2, own_label=False, **kern)
        ref = reference(es, **cfg)
        ks = run_all_passes(raw, **cfg)
        torch.testing.assert_close(ks.sketches(), ref, rtol=1e-9, atol=1e-9)
        assert KongStream.from_state_dict(ks.state_dict()).cfg.own_label is False


@pytest.mark.parametrize("types", [200, 300])
def test_linear_two_hops_replays_pass_one_without_node_sketches(types):
    """The linear map at h = 2 keeps O(1) numbers per node (no sketches) and still equals the readout.

    200 types: gram codes tabulated but too many graphs to count them per graph; 300: not tabulated
    (every weighted path of the replayed grams).
    """
    es, raw = random_stream(5, graphs=120, edges=1500, types=types, edge_types=4, max_nodes=12)
    for k, traversal, undirected in itertools.product([1, 2, 3], ["bfs", "wl"], [True, False]):
        cfg = dict(k=k, hops=2, traversal=traversal, dim=64, seed=7)
        ks = KongStream(undirected=undirected, **cfg)
        feed(ks, raw, chunk=97)
        assert sorted(ks.state_dict()["arrays"]) == ["nbr_w", "node_graph", "node_sym", "seg_len", "seg_pre",
                                                     "seg_suf"]
        ks.end_pass()
        feed(ks, raw, chunk=97)
        assert not {"Y", "Yprev", "acc"} & set(ks.state_dict()["arrays"])
        assert torch.equal(ks.sketches(), reference(es, undirected, **cfg)), (k, traversal, undirected)


def test_replay_with_a_traversal_that_puts_the_label_in_every_block(monkeypatch):
    """A traversal with the label in every string and every level a block (not one of ours, but one entry of
    TRAVERSAL_RULES away): the label's grams of s^1 count in level 1 once and in level 2 w_u times."""
    import kong_pyg.config as config
    from kong_pyg.traversals import TRAVERSAL_RULES, Traversal

    monkeypatch.setattr(config, "TRAVERSALS", config.TRAVERSALS + ("bfsl",))
    monkeypatch.setitem(TRAVERSAL_RULES, "bfsl", Traversal("bfsl", label_in_string=True, all_levels=True))
    es, raw = random_stream(8)
    for k, hops in itertools.product([1, 2, 3], [1, 2, 3]):
        cfg = dict(k=k, hops=hops, traversal="bfsl", dim=32, seed=2)
        assert torch.equal(run_all_passes(raw, **cfg).sketches(), reference(es, **cfg)), (k, hops)


def test_bad_neighbor_counts_are_refused():
    """Neighbor counts weigh the replayed grams: negative, fractional or miscounted ones are a ValueError."""
    es, raw = random_stream(3)
    for in_pass in (1, 2):
        ks = KongStream(k=2, hops=2, dim=16)
        if in_pass == 2:
            feed(ks, raw).end_pass()
        feed(ks, raw, hi=20)
        good = ks.state_dict()
        assert good["arrays"]["nbr_w"].dtype == torch.float64
        KongStream.from_state_dict(good)
        for change in (lambda w: w.__setitem__(0, -1.0), lambda w: w.__setitem__(0, w[0] + 0.5),
                       lambda w: w.__setitem__(0, w[0] + 1), lambda w: w.__setitem__(0, 1e30)):
            state = ks.state_dict()
            change(state["arrays"]["nbr_w"])
            with pytest.raises(ValueError, match="'nbr_w' must hold non-negative integer"):
                KongStream.from_state_dict(state)
        # counts saved in float32 (as states of float32 streams were before) count on in float64
        ks32 = KongStream(k=2, hops=2, dim=16, dtype=torch.float32)
        if in_pass == 2:
            feed(ks32, raw).end_pass()
        state = feed(ks32, raw, hi=20).state_dict()
        state["arrays"]["nbr_w"] = state["arrays"]["nbr_w"].float()
        assert KongStream.from_state_dict(state)._nodes["nbr_w"].dtype == torch.float64


def test_string_codes_must_match_their_lengths():
    """A saved string whose length says 2 symbols but whose codes hold none (or the reverse) is refused."""
    es, raw = random_stream(3)
    ks = feed(feed(KongStream(k=2, hops=2, dim=16), raw).end_pass(), raw, hi=20)
    for name in ("rep", "seg", "prev"):
        state = ks.state_dict()
        length = state["arrays"][name + "_len"]
        length[0] = 0 if int(length[0]) > 0 else 2  # node 0's codes now disagree with its length
        with pytest.raises(ValueError, match=f"'{name}_pre' does not match the string lengths"):
            KongStream.from_state_dict(state)


def test_synthetic_event_stream_deep_and_not_vacuous():
    stream, y = synthetic_event_stream(30, seed=2)
    for cfg in (dict(k=2, hops=1), dict(k=3, hops=3, traversal="wl"), dict(k=2, hops=2, degree=2)):
        ks = KongStream(dim=128, **cfg).fit(stream, chunk_size=50)
        ref = reference(stream, dim=128, **cfg)
        torch.testing.assert_close(ks.sketches(), ref, rtol=1e-9, atol=1e-9)
    # the order matters for k = 2 (and the test would see it), not for k = 1
    rev = EdgeStream(*(c.flip(0) for c in stream[:6]), stream.graph_ids)
    for k, same in ((1, True), (2, False)):
        a, b = KongStream(k=k, dim=128).fit(stream), KongStream(k=k, dim=128).fit(rev)
        xa = a.sketches()[torch.argsort(torch.tensor(a.graph_ids))]
        xb = b.sketches()[torch.argsort(torch.tensor(b.graph_ids))]
        assert torch.equal(xa, xb) == same


@pytest.mark.parametrize("dim", [100, 64])  # not a power of two, and one
def test_hash_tables_are_the_layers_hashes(dim):
    layer_hashes = KongSketch(k=3, dim=dim, degree=2, seed=5).hashes
    table = SymbolHashTable(layer_hashes)
    assert torch.equal(KongStream(k=3, dim=dim, degree=2, seed=5).hashes.coef, layer_hashes.coef)
    codes = np.array([0, 2, 4, 7, 2**57 + 1, 2 * 123456789], dtype=np.int64)
    ids = table.ids(codes)
    assert ids.tolist() == list(range(6)) and table.ids(codes[::-1].copy()).tolist() == list(range(5, -1, -1))
    grams = torch.tensor([[0, 1, 2], [5, 4, 3], [2, 2, 2], [1, 0, 5]])
    bucket, sign = table.hash(grams)
    eb, es = layer_hashes.hash(torch.from_numpy(codes)[ids[grams]])
    assert torch.equal(bucket, eb) and torch.equal(sign.double(), es)
    tb, ts = table.code_table(3, None)
    code = (grams[:, 0] * len(codes) + grams[:, 1]) * len(codes) + grams[:, 2]
    assert torch.equal(tb[code], eb) and torch.equal(ts[code], es) and ts[-1].abs().sum() == 0
    # a level block: buckets shifted, signs flipped, as SketchHashes.shift and flip say
    lb, ls = table.code_table(3, 1)
    assert torch.equal(lb[code], (eb + layer_hashes.shift[:, 1]) % dim)
    assert torch.equal(ls[code], es * layer_hashes.flip[:, 1])
    # scatter by code and gram by gram agree (and place_rows is the same shift for whole sketches)
    rows = torch.tensor([0, 1, 0, 1])
    a = torch.zeros(2, 2 * dim, dtype=torch.float64)
    table.scatter(a, rows, grams, 1)
    b = torch.zeros(2, 2 * dim, dtype=torch.float64)
    table.max_table = 0
    table.scatter(b, rows, grams, 1)
    c = torch.zeros(2, 2 * dim, dtype=torch.float64)
    table.scatter(c, rows, grams, None)
    assert torch.equal(a, b) and torch.equal(table.place_rows(c, 1), a)
    # weights: each gram counted that many times, through every path (counted, per gram, hashed)
    w = torch.tensor([3, 0, 1, 2])
    want = torch.zeros(2, 2 * dim, dtype=torch.float64)
    table.scatter(want, rows.repeat_interleave(w), grams.repeat_interleave(w, dim=0), 1)
    for max_table, max_agg in ((1 << 16, 1 << 22), (1 << 16, 0), (0, 1 << 22)):
        table.max_table, table.max_agg = max_table, max_agg
        got = torch.zeros(2, 2 * dim, dtype=torch.float64)
        table.scatter(got, rows, grams, 1, weight=w)
        assert torch.equal(got, want), (max_table, max_agg)


def test_symbol_hash_table_keys_round_trip():
    table = SymbolHashTable(SketchHashes(16, 1, 2, 2, 0))
    codes = np.array([9, 2**40, 3, 9], dtype=np.int64)
    table.ids(codes)
    back = SymbolHashTable(SketchHashes(16, 1, 2, 2, 0), keys=table.keys)
    assert len(back) == 3 and back.ids(codes).tolist() == [0, 1, 2, 0]


def test_chunking_and_sub_chunks_do_not_matter(monkeypatch):
    es, raw = random_stream(11, edges=90)
    cfg = dict(k=3, hops=2, traversal="bfs", dim=32, degree=2)
    states = []
    for chunk, sub, pipeline in ((1, 1 << 18, False), (90, 1 << 18, False), (90, 4, False), (13, 3, False),
                                 (90, 7, True)):  # ids of the next sub-chunk looked up in a thread
        monkeypatch.setattr(stream_passes, "_MAX_SUB", sub)
        monkeypatch.setattr(stream_passes, "_PIPELINE", pipeline)
        ks = run_all_passes(raw, chunk=chunk, **cfg)
        states.append((ks.sketches(), canonical(ks)))
    for x, st in states[1:]:
        assert torch.equal(x, states[0][0])
        for name, t in st.items():
            assert torch.equal(t, states[0][1][name]), name


def test_without_gram_code_tables(monkeypatch):
    """Many symbols (V^n too large to tabulate): grams are hashed one by one."""
    es, raw = random_stream(13, edges=70, types=5)
    for cfg in (dict(k=3, hops=1, blended=True), dict(k=2, hops=2, traversal="wl", degree=2)):
        want = run_all_passes(raw, dim=64, **cfg).sketches()
        monkeypatch.setattr(SymbolHashTable, "max_table", 1)
        got = run_all_passes(raw, dim=64, **cfg).sketches()
        monkeypatch.undo()
        torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cfg", [dict(k=2), dict(k=3, traversal="wl", kernel="cosine", degree=2)])
def test_h1_sketches_are_available_at_any_moment(cfg):
    es, raw = random_stream(5, edges=40)
    ks = KongStream(hops=1, dim=32, **cfg)
    for hi in range(5, 41, 5):
        ks.update(*(c[hi - 5 : hi] for c in raw))
        prefix = EdgeStream(*(c[:hi] for c in es[:6]), es.graph_ids)
        present = sorted(set(prefix.graph.tolist()))
        _, dense = torch.unique(torch.cat([prefix.src, prefix.dst]), return_inverse=True)
        prefix = EdgeStream(dense[:hi], prefix.src_type, dense[hi:], prefix.dst_type, prefix.edge_type,
                            torch.searchsorted(torch.tensor(present), prefix.graph), present)
        ref = reference(prefix, hops=1, dim=32, **cfg)  # graphs in order of first edge, as ks's rows
        torch.testing.assert_close(ks.sketches(), ref, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("cfg", [dict(k=2, hops=1), dict(k=3, hops=2, kernel="cosine", degree=2),
                                 dict(k=2, hops=2, traversal="wl")])
def test_float32_state(cfg):
    es, raw = random_stream(6)
    a = run_all_passes(raw, dim=64, **cfg).sketches()
    b = run_all_passes(raw, dim=64, dtype=torch.float32, **cfg).sketches()
    assert b.dtype == torch.float32
    torch.testing.assert_close(b.double(), a, rtol=1e-5, atol=1e-5)


def test_empty_chunks_and_streams():
    ks = KongStream(k=2, dim=16).update([], [], [], [], [])
    assert ks.sketches().shape == (0, 16) and ks.num_nodes == 0
    ks.update([1], [0], [2], [1], [3], ["g"]).update([], [], [], [], [], [])
    assert ks.graph_ids == ["g"] and ks.num_edges == 1


def test_ids_ints_strings_and_wide_ints_agree():
    es, raw = random_stream(3, edges=50)
    s, st, d, dt, et, g = raw
    a = KongStream(k=2, dim=64).update(*raw)
    as_str = [f"n{int(v)}" for v in s], [f"n{int(v)}" for v in d]
    b = KongStream(k=2, dim=64).update(as_str[0], [f"t{int(v)}" for v in st], as_str[1],
                                        [f"t{int(v)}" for v in dt], [f"e{int(v)}" for v in et],
                                        [f"graph-{int(v)}" for v in g])
    wide = lambda t: t * -7919 - 2**62  # noqa: E731
    c = KongStream(k=2, dim=64).update(wide(s), st, wide(d), dt, et, wide(g) + 2**63 - 1)
    # same structure: the same sketches up to the labels (types become other symbols)
    assert a.graph_ids == g.unique_consecutive().tolist()[:0] + sorted(set(g.tolist()), key=g.tolist().index)
    assert b.graph_ids == [f"graph-{i}" for i in a.graph_ids]
    assert c.graph_ids == [int(i) * -7919 - 2**62 + 2**63 - 1 for i in a.graph_ids]
    assert torch.equal(a.sketches(), c.sketches())
    assert a.num_nodes == b.num_nodes == c.num_nodes
    # decimal strings are the integers they spell
    d2 = KongStream(k=2, dim=64).update([str(int(v)) for v in s], st, [str(int(v)) for v in d], dt, et,
                                         [str(int(v)) for v in g])
    assert torch.equal(a.sketches(), d2.sketches()) and d2.graph_ids == a.graph_ids
    # numpy arrays and lists
    e = KongStream(k=2, dim=64).update(*(c_.numpy() for c_ in raw))
    assert torch.equal(a.sketches(), e.sketches())


def test_bad_input():
    ks = KongStream(k=2)
    with pytest.raises(ValueError, match="edge_type"):
        ks.update([1], [0], [2], [0])
    with pytest.raises(ValueError, match="'dst' has 2 entries"):
        ks.update([1], [0], [2, 3], [0, 0], [0])
    with pytest.raises(TypeError, match="'src'"):
        ks.update(torch.tensor([1.5]), [0], [2], [0], [0])
    with pytest.raises(ValueError, match="src_type"):
        ks.update([1], [-1], [2], [0], [0])
    with pytest.raises(TypeError, match="'graph'"):
        ks.update([1], [0], [2], [0], [0], [None])
    with pytest.raises(ValueError, match="'k' must be >= 1"):
        KongStream(k=0)
    deep = KongStream(k=2, hops=2, dim=16)
    deep.update([1, 2], [0, 1], [2, 3], [1, 0], [0, 0])
    with pytest.raises(ValueError, match="need 2 passes"):
        deep.sketches()
    deep.end_pass()
    with pytest.raises(ValueError, match="not seen in pass 1"):
        deep.update([9], [0], [2], [1], [0])
    with pytest.raises(ValueError, match="no next pass"):
        deep.end_pass()
    with pytest.raises(ValueError, match="re-iterable"):
        KongStream(hops=2).fit(iter([([1], [0], [2], [0], [0])]))


def test_repr_builds_the_same_stream():
    """The repr is a constructor call: evaluated, it gives a stream of the same options and sketches."""
    es, raw = random_stream(3, edges=40)
    for cfg in (dict(), dict(k=2, hops=2, dim=16, kernel="cosine", dtype=torch.float32, own_label=False),
                dict(k=3, traversal="wl", const=1.5, seed=7, blended=True, undirected=False, degree=2,
                     edge_labels=False, threads=2)):
        ks = KongStream(**cfg)
        again = eval(repr(ks), {"KongStream": KongStream, "torch": torch})
        assert repr(again) == repr(ks) and again.config() == ks.config()
        assert "threads" not in repr(ks)  # (how it runs, not what it computes)
        if ks.dim <= 64:
            a, b = run_all_passes(raw, **cfg), run_all_passes(raw, **again.config())
            assert torch.equal(a.sketches(), b.sketches())
    assert "dtype=torch.float32" in repr(KongStream(dtype=torch.float32))


def test_state_dict_save_load_and_options(tmp_path):
    es, raw = random_stream(4, edges=50)
    for cfg in (dict(k=2, hops=1), dict(k=3, hops=2, kernel="cosine", traversal="wl")):
        ks = KongStream(dim=32, **cfg)
        feed(ks, raw, hi=30)
        path = tmp_path / "s.pt"
        ks.save(path)
        back = KongStream.load(path)
        assert repr(back) == repr(ks) and back.position == 30
        feed(back, raw, lo=30)
        feed(ks, raw, lo=30)
        if ks.num_passes > 1:
            for s_ in (ks, back):
                s_.end_pass()
                feed(s_, raw)
        assert torch.equal(ks.sketches(), back.sketches())
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
    with pytest.raises(ValueError, match="other options"):
        KongStream(k=3, dim=32).load_state_dict(KongStream(k=2, dim=32).state_dict())
    from kong_pyg.stream.checkpoint import MAGIC, load_checkpoint

    assert path.read_bytes().startswith(MAGIC)
    state = load_checkpoint(path)  # plain tensors and containers only (weights_only)
    assert state["config"]["k"] == 3 and state["version"] == 4 and state["hashes"] == 2


@pytest.mark.parametrize("cfg", [dict(k=2), dict(k=3, traversal="wl", blended=True),
                                 dict(k=2, kernel="cosine", degree=2), dict(k=1),
                                 dict(k=3, undirected=False, edge_labels=False)])
def test_merge_of_consecutive_shards_is_the_whole_stream(cfg):
    es, raw = random_stream(8, edges=80)
    whole = feed(KongStream(dim=64, **cfg), raw)
    cuts = [0, 0, 13, 14, 40, 80]  # an empty shard and a one-edge shard too
    parts = [feed(KongStream(dim=64, **cfg), raw, lo=a, hi=b) for a, b in zip(cuts, cuts[1:])]
    left = parts[0]
    for p in parts[1:]:
        left = merge_streams(left, p)
    right = parts[-1]
    for p in reversed(parts[:-1]):
        right = p.merge(right)
    for m in (left, right):
        assert m.graph_ids == whole.graph_ids and m.num_edges == 80
        assert torch.equal(m.sketches(), whole.sketches())
        assert torch.equal(m.state_dict()["nodes"], whole.state_dict()["nodes"])
        a, b = canonical(m), canonical(whole)
        for name in b:
            assert torch.equal(a[name], b[name]), name
    # the inputs are unchanged
    assert torch.equal(parts[1].sketches(), feed(KongStream(dim=64, **cfg), raw, lo=0, hi=13).sketches())
    # the options that differ are named (two whole reprs were printed, to be compared by eye)
    with pytest.raises(ValueError, match=r"different options \(first, second\): \{'dim': \(64, 32\)\}$"):
        merge_streams(whole, KongStream(dim=32, **cfg))
    from kong_pyg.stream.merge import merge_into

    with pytest.raises(ValueError, match=r"different options \(first, second\): \{'dim': \(32, 64\)\}$"):
        merge_into(KongStream(dim=32, **cfg), whole)


def sharded(raw, cuts, **cfg):
    """Every pass read in time shards [cuts[j], cuts[j + 1]) by separate streams, merged pass by pass."""
    base = None
    for i in range(max(cfg.get("hops", 1), 1)):
        parts = [feed(KongStream(**cfg) if base is None else base.copy(), raw, lo=lo, hi=hi)
                 for lo, hi in zip(cuts, cuts[1:])]
        merged = parts[0]
        for p in parts[1:]:
            merged = merge_streams(merged, p)
        if i + 1 < merged.num_passes:
            base = merged.end_pass()
    return merged


@pytest.mark.parametrize("hops", [2, 3])
def test_merge_of_every_pass_is_the_whole_stream(hops):
    """An h-pass stream sharded by time pass by pass: the merged state is the one-process state."""
    es, raw = random_stream(12, edges=60)
    for cfg in (dict(k=3, kernel="cosine"), dict(k=2), dict(k=2, traversal="wl", degree=2, const=1.0),
                dict(k=3, blended=True, undirected=False), dict(k=1, edge_labels=False)):
        cfg = dict(cfg, hops=hops, dim=32)
        whole = run_all_passes(raw, **cfg)
        for cuts in ([0, 25, 60], [0, 0, 1, 30, 31, 60]):  # empty and one-edge shards too
            merged = sharded(raw, cuts, **cfg)
            assert merged.graph_ids == whole.graph_ids and merged.position == whole.position
            if cfg.get("kernel") == "cosine" or cfg.get("degree", 1) > 1:
                torch.testing.assert_close(merged.sketches(), whole.sketches(), rtol=1e-12, atol=1e-12)
            else:  # integer counts: bit for bit
                assert torch.equal(merged.sketches(), whole.sketches()), cfg
            a, b = canonical(merged), canonical(whole)
            assert set(a) == set(b)
            for name in b:
                torch.testing.assert_close(a[name], b[name], rtol=1e-12, atol=1e-12, msg=name)
            assert merged.state_dict()["replay"] == whole.state_dict()["replay"]


def test_merge_refuses_a_node_whose_first_type_differs_between_shards():
    """One stream labels a node by its first edge's type; a later shard that first saw it with another type
    cannot be merged into the one-stream result: a clear error naming the node, not other features."""
    src, st, dst, dt, et, g = [1, 2, 1], [0, 0, 0], [2, 1, 3], [0, 7, 1], [0, 0, 0], ["a", "a", "a"]

    def shard(lo, hi):
        return KongStream(k=2, hops=1, dim=16).update(src[lo:hi], st[lo:hi], dst[lo:hi], dt[lo:hi], et[lo:hi],
                                                      g[lo:hi])

    with pytest.raises(ValueError, match=r"node 1 of graph 'a' has type 0 in the earlier shard and 7 in"):
        merge_streams(shard(0, 1), shard(1, 3))
    same = [0, 0, 0]
    a = KongStream(k=2, hops=1, dim=16).update(src[:1], st[:1], dst[:1], same[:1], et[:1], g[:1])
    b = KongStream(k=2, hops=1, dim=16).update(src[1:], st[1:], dst[1:], [0, 1], et[1:], g[1:])
    assert torch.equal(merge_streams(a, b).sketches(),
                       KongStream(k=2, hops=1, dim=16).update(src, st, dst, [0, 0, 1], et, g).sketches())


def test_merge_of_later_passes_needs_one_base():
    es, raw = random_stream(12, edges=60)
    cfg = dict(k=2, hops=2, dim=16)
    base = feed(KongStream(**cfg), raw).end_pass()
    a, b = feed(base.copy(), raw, hi=30), feed(base.copy(), raw, lo=30)
    with pytest.raises(ValueError, match="more than pass 1"):
        merge_streams(merge_streams(a, b), b)
    other = feed(KongStream(**cfg), raw, hi=59).end_pass()  # another pass 1
    with pytest.raises(ValueError, match="same state after pass 1"):
        merge_streams(a, feed(other.copy(), raw, lo=30, hi=59))
    with pytest.raises(ValueError, match="pass 2 with one in pass 1"):
        merge_streams(a, feed(KongStream(**cfg), raw))
    # shards that miss edges (or repeat them) are caught at the end of the pass
    gap = merge_streams(feed(base.copy(), raw, hi=29), b)
    with pytest.raises(ValueError, match="pass 2 read 59 edges but pass 1 read 60"):
        gap.sketches()
    swapped = merge_streams(b, a)
    with pytest.raises(ValueError, match="other edges than pass 1"):
        swapped.sketches()


def test_merge_with_string_and_wide_ids():
    es, raw = random_stream(9, edges=40)
    names = lambda t: [f"id{int(v)}" for v in t]  # noqa: E731
    cols = (names(raw[0]), raw[1], [int(v) - 2**62 for v in raw[2]], raw[3], raw[4], names(raw[5]))
    whole = KongStream(k=3, dim=32).update(*cols)
    a = KongStream(k=3, dim=32).update(*(c[:25] for c in cols))
    b = KongStream(k=3, dim=32).update(*(c[25:] for c in cols))
    m = merge_streams(a, b)
    assert m.graph_ids == whole.graph_ids and torch.equal(m.sketches(), whole.sketches())


def test_fit_sources_and_resume_in_process(tmp_path):
    stream, _ = synthetic_event_stream(20, seed=1)
    ref = KongStream(k=2, hops=2, dim=32).fit(stream).sketches()
    cols = (stream.src, stream.src_type, stream.dst, stream.dst_type, stream.edge_type, stream.graph)
    chunks = [tuple(c[lo : lo + 17] for c in cols) for lo in range(0, stream.num_edges, 17)]
    dicts = [dict(zip(("src", "src_type", "dst", "dst_type", "edge_type", "graph"), c)) for c in chunks]
    # one chunk's columns as a tuple (of tensors or arrays) is one chunk, not six
    whole = [cols, tuple(c.numpy() for c in cols)]
    for source in [chunks, dicts, lambda: iter(chunks)] + whole:
        assert torch.equal(KongStream(k=2, hops=2, dim=32).fit(source).sketches(), ref)
    rows = [[v, 0, v + 1, 0, 0, 0] for v in range(1, 6)]
    with pytest.raises(TypeError, match="a chunk's columns are sequences"):  # rows, never read as columns
        KongStream(k=1, dim=8).fit(rows)
    one = KongStream(k=2, hops=1, dim=32).fit(iter(chunks)).sketches()
    assert torch.equal(one, KongStream(k=2, hops=1, dim=32).fit(stream).sketches())
    # a checkpoint taken mid-pass, resumed by fit (which skips what was read)
    ckpt = tmp_path / "c.pt"
    part = KongStream(k=2, hops=2, dim=32)
    feed(part, cols, chunk=17, hi=17 * 3 + 5)
    part.save(ckpt)
    assert torch.equal(KongStream(k=2, hops=2, dim=32).fit(chunks, checkpoint=ckpt).sketches(), ref)


def test_concat_pieces_against_brute_force():
    rng = random.Random(0)

    def state(s, k):
        keep = min(len(s), k - 1)
        pre, suf = [BREAK] * (k - 1), [BREAK] * (k - 1)
        pre[:keep] = s[:keep]
        suf[:keep] = s[len(s) - keep :] if keep else []
        return min(len(s), k), pre, suf

    def grams(s, n):
        return Counter(tuple(s[i : i + n]) for i in range(len(s) - n + 1))

    for _ in range(150):
        k = rng.randint(2, 4)
        owners, strs = [], []
        num = rng.randint(0, 5)
        for o in range(num):
            for _ in range(rng.randint(0, 5)):
                owners.append(o)
                strs.append([rng.randrange(3) for _ in range(rng.choice([0, 1, 2, 3, 5, 8]))])
        st = [state(s, k) for s in strs]
        pieces = StringState(torch.tensor([a for a, _, _ in st], dtype=torch.long),
                             torch.tensor([b for _, b, _ in st], dtype=torch.long).view(-1, k - 1),
                             torch.tensor([c for _, _, c in st], dtype=torch.long).view(-1, k - 1))
        lengths = list(range(2, k + 1))
        out, new = concat_pieces(torch.tensor(owners, dtype=torch.long), pieces, num, k, lengths)
        for o in range(num):
            ps = [s for ow, s in zip(owners, strs) if ow == o]
            full = sum(ps, [])
            for n in lengths:
                want = grams(full, n)
                for p in ps:
                    want -= grams(p, n)
                got = Counter(tuple(g) for node, g in zip(out[n].node.tolist(), out[n].grams.tolist())
                              if node == o) if n in out else Counter()
                assert got == want
            length, pre, suf = state(full, k)
            assert int(new.length[o]) == length and new.prefix[o].tolist() == pre
            assert new.suffix[o].tolist() == suf


def test_id_map():
    rng = np.random.default_rng(0)
    m, ref = IdMap(), {}
    for _ in range(30):
        q = np.concatenate([rng.integers(-2**63, 2**63 - 1, rng.integers(0, 300), dtype=np.int64),
                            rng.integers(0, 500, 200)])
        rng.shuffle(q)
        ids, first = m.lookup(q)
        want, new = [], []
        for i, x in enumerate(q.tolist()):
            if x not in ref:
                ref[x] = len(ref)
                new.append(i)
            want.append(ref[x])
        assert ids.tolist() == want and first.tolist() == new
    assert m.keys.tolist() == list(ref)
    back = IdMap.from_keys(m.keys)
    q = rng.integers(0, 1000, 1000)
    assert np.array_equal(back.lookup(q, insert=False)[0], m.lookup(q, insert=False)[0])
    assert (m.lookup(np.array([12345678901], dtype=np.int64), insert=False)[0] == -1).all()


def test_id_map_keys_sharing_a_home_slot():
    """Keys whose home slots collide are found by probing past the slot of id 0: a probe that stopped there
    once gave such a key a second id. Repeated lookups and a rebuilt map give every key its first id."""
    m = IdMap()
    cand = np.arange(200000, dtype=np.int64)
    home = m._home(cand)
    same = cand[home == home[12345]][:4]  # four keys with one home slot
    after = cand[home == ((home[12345] + 1) & m._mask)][:2]  # and two whose home is the next slot
    assert same.size == 4 and after.size == 2
    keys = np.concatenate([same, after])
    for order in ([0, 1, 2, 3, 4, 5], [4, 0, 5, 1, 2, 3]):
        m = IdMap()
        q = keys[order]
        ids, first = m.lookup(q)
        assert ids.tolist() == list(range(6)) and first.tolist() == list(range(6))
        for again in (q, q[::-1], np.repeat(q, 2)):
            assert m.lookup(again)[0].tolist() == [int(np.flatnonzero(q == x)[0]) for x in again]
        assert len(m) == 6 and m.keys.tolist() == q.tolist()
        back = IdMap.from_keys(m.keys)
        assert (back._home(same) == back._home(same[:1])).all()  # they collide there too
        assert back.lookup(q, insert=False)[0].tolist() == list(range(6)) and len(back) == 6
        one = IdMap()  # one key a call
        assert [int(one.lookup(q[i : i + 1])[0][0]) for i in range(6)] == list(range(6))
        assert one.lookup(q)[0].tolist() == list(range(6)) and len(one) == 6


# -- StreamSpot reader and CLI -----------------------------------------------------------


def test_cli_stream_file_stdin_malformed_and_strict(tmp_path, capsys, monkeypatch):
    pytest.importorskip("kong_pyg.cli.stream", reason="'kong-pyg stream' lives in kong_pyg/cli/stream.py")
    stream, _ = synthetic_event_stream(16, seed=4)
    path = tmp_path / "s.tsv"
    write_streamspot(stream, path)
    with open(path, "a") as f:
        f.write("broken line\n1\t2\t3\t4\t5\t\n")
    out = tmp_path / "feat"
    assert cli_main(["stream", str(path), "--out", str(out), "--dim", "64", "--hops", "2", "-q"]) == 0
    err = capsys.readouterr().err
    assert "2 malformed lines" in err and f"line {stream.num_edges + 1}" in err and "edges/s" in err
    x = np.load(str(out) + ".npy")
    ids = open(str(out) + ".ids.txt").read().split()
    s2, _, _ = read_streamspot(path)
    ks = KongStream(k=2, hops=2, dim=64).fit(s2)
    ref = ks.sketches().numpy().astype(np.float32)
    names = [s2.graph_ids[i] for i in ks.graph_ids]
    assert ids == names and np.array_equal(x, ref)
    # strict: fatal, names the line
    assert cli_main(["stream", str(path), "--out", str(out), "--strict", "-q"]) == 1
    assert f"line {stream.num_edges + 1}" in capsys.readouterr().err
    # stdin, hops = 2 (spooled), .pt output
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(path.read_bytes())))
    assert cli_main(["stream", "-", "--out", str(tmp_path / "f.pt"), "--dim", "64", "--hops", "2", "-q"]) == 0
    saved = torch.load(tmp_path / "f.pt", weights_only=True)
    assert saved["graph_ids"] == names and torch.equal(saved["x"], torch.from_numpy(x))
    assert cli_main(["stream", str(tmp_path / "missing.tsv"), "-q"]) == 2
    # checkpoints: a finished run's checkpoint resumes to the same output
    ckpt = str(tmp_path / "run.ckpt")
    args = ["stream", str(path), "--dim", "64", "--hops", "2", "-q", "--chunk-size", "50",
            "--checkpoint", ckpt, "--checkpoint-every", "2"]
    assert cli_main(args + ["--out", str(tmp_path / "c1")]) == 0 and os.path.exists(ckpt)
    assert cli_main(args + ["--out", str(tmp_path / "c2")]) == 0
    assert np.array_equal(np.load(tmp_path / "c1.npy"), x) and np.array_equal(np.load(tmp_path / "c2.npy"), x)


def test_distributed_example_runs():
    script = os.path.join(ROOT, "examples", "stream_distributed.py")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        done = subprocess.run([sys.executable, script, "--world-size", "2", "--graphs", "12"],
                              capture_output=True, text=True, env=env, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.skip("spawning processes timed out on this machine")
    assert done.returncode == 0, done.stderr
    assert "merged == single process: True" in done.stdout


def test_config_object_and_unsupported_options():
    from kong_pyg import KongConfig

    es, raw = random_stream(2, edges=40)
    cfg = KongConfig(k=2, hops=2, dim=32, kernel="cosine", degree=2, norm="sketch", traversal="wl", seed=4)
    a = run_all_passes(raw, config=cfg)
    b = run_all_passes(raw, k=2, hops=2, dim=32, kernel="cosine", degree=2, traversal="wl", seed=4)
    assert a.config() == b.config() and torch.equal(a.sketches(), b.sketches())
    assert KongStream(config=cfg, undirected=False, dtype=torch.float32).config()["undirected"] is False
    # poly ignores norm; the stream's defaults are hops=1, dim=1024
    assert KongStream(config=KongConfig(k=2, dim=16)).cfg == KongConfig(k=2, dim=16)
    assert KongStream().cfg.replace(norm="exact") == KongConfig(hops=1, dim=1024)
    with pytest.raises(ValueError, match="both 'config' and the option"):
        KongStream(k=3, config=cfg)
    with pytest.raises(ValueError, match="'dim' must be a sketch size, not None"):
        KongStream(config=KongConfig(k=2))
    with pytest.raises(ValueError, match="order='edge'.*order='label'"):
        KongStream(config=KongConfig(dim=16, order="label"))
    with pytest.raises(ValueError, match="relabel=0.*relabel=1"):
        KongStream(config=KongConfig(dim=16, relabel=1))
    with pytest.raises(ValueError, match=r"norm='sketch'.*norm='exact' .*config.replace\(norm='sketch'\)"):
        KongStream(config=KongConfig(dim=16, kernel="cosine"))
    with pytest.raises(ValueError, match="flow"):
        KongStream(config=KongConfig(dim=16, flow="target_to_source"))
    with pytest.raises(ValueError, match="normalize"):
        KongStream(config=KongConfig(dim=16, normalize=True))
    with pytest.raises(TypeError, match="'config' must be a KongConfig"):
        KongStream(config={"k": 2})


def test_rows_in_the_order_of_stream_to_graphs():
    """KongStream rows and stream_to_graphs graphs: both in order of each graph's first edge (issue 13)."""
    for seed in range(4):
        es, raw = random_stream(30 + seed, graphs=6, edges=50)
        graphs = stream_to_graphs(es)
        first = list(dict.fromkeys(es.graph.tolist()))
        assert [d.graph_id for d in graphs][: len(first)] == first
        ks = KongStream(k=2, dim=32).fit([raw])
        assert ks.graph_ids == first  # the raw graph ids are the indices here
        b = Batch.from_data_list(graphs[: len(first)])
        ref = KongSketch(k=2, hops=1, dim=32, norm="sketch", dtype=torch.float64).readout(
            b.x, b.edge_index, b.batch, b.edge_attr)
        assert torch.equal(ks.sketches(), ref)
    assert first != sorted(first)  # the test would see another order
    # graphs of graph_ids without any edge come last, in index order
    es = EdgeStream(*(c[:3] for c in es[:6]), list(range(8)))
    order = [d.graph_id for d in stream_to_graphs(es)]
    seen = list(dict.fromkeys(es.graph.tolist()))
    assert order == seen + [g for g in range(8) if g not in seen]
    # the generator numbers graphs by first edge: labels, graphs and rows line up
    stream, y = synthetic_event_stream(20, seed=3)
    graphs = stream_to_graphs(stream, y)
    assert [d.graph_id for d in graphs] == list(range(20)) == KongStream(k=2, dim=8).fit(stream).graph_ids
    assert all(int(d.y) == int(v) for d, v in zip(graphs, y))


@pytest.mark.parametrize("cfg", [dict(k=2, hops=2), dict(k=2, hops=3, traversal="wl", degree=2),
                                 dict(k=2, hops=2, undirected=False, edge_labels=False),
                                 dict(k=2, hops=2, kernel="cosine", blended=True)])
def test_fast_paths_equal_the_general_ones(cfg, monkeypatch):
    """k = 2 shortcuts (first and later passes), gram counting and the id caches change no state."""
    import kong_pyg.stream.counts as counts
    import kong_pyg.stream.ids as ids

    es, raw = random_stream(17, edges=90, types=4)
    fast = run_all_passes(raw, chunk=11, dim=32, **cfg)
    monkeypatch.setattr(SymbolHashTable, "max_table", 1)  # no code tables: the general paths
    monkeypatch.setattr(counts.GramCounts, "_counts", lambda self, buf, n, level: None)  # hash every gram
    monkeypatch.setattr(ids.DirectNodes, "budget", 0)  # every id through the hash table
    slow = run_all_passes(raw, chunk=11, dim=32, **cfg)
    torch.testing.assert_close(fast.sketches(), slow.sketches(), rtol=1e-12, atol=1e-12)
    a, b = canonical(fast), canonical(slow)
    for name in b:
        torch.testing.assert_close(a[name], b[name], rtol=1e-12, atol=1e-12, msg=name)


def test_mixed_ids_in_one_chunk():
    """Small, wide and string ids in the same chunks (the id caches and the hash table together)."""
    es, raw = random_stream(19, edges=120, max_nodes=9)
    s, st, d, dt, et, g = (c.tolist() for c in raw)
    mix = lambda v: v if v % 3 == 0 else (v * 2**45 + 7 if v % 3 == 1 else f"n{v}")  # noqa: E731
    cols = ([mix(v) for v in s], st, [mix(v) for v in d], dt, et, [f"g{v}" if v % 2 else v for v in g])
    names = ([f"n{v}" for v in s], st, [f"n{v}" for v in d], dt, et, [f"g{v}" for v in g])
    for hops in (1, 2):
        a = KongStream(k=3, hops=hops, dim=32)
        b = KongStream(k=3, hops=hops, dim=32)
        for p in range(a.num_passes):
            if p:
                a.end_pass()
                b.end_pass()
            for lo in range(0, 120, 17):
                a.update(*(c[lo : lo + 17] for c in cols))
                b.update(*(c[lo : lo + 17] for c in names))
        assert torch.equal(a.sketches(), b.sketches()) and a.num_nodes == b.num_nodes
        assert [str(x).lstrip("g") for x in a.graph_ids] == [x[1:] for x in b.graph_ids]


def _typed(rows):
    """Update columns of (graph, src, dst) rows; types by node id."""
    kind = lambda v: f"t{v % 3}" if 0 <= v < 2**40 - 1 else f"w{v}"  # noqa: E731
    g, s, d = (list(c) for c in zip(*rows))
    return s, [kind(v) for v in s], d, [kind(v) for v in d], ["e"] * len(rows), g


@pytest.mark.parametrize("hops", [1, 2])
def test_direct_node_cache_built_after_huge_ids(hops, monkeypatch):
    """Huge node ids first (the direct node cache too large to build: nodes go to the map only), small ids
    later (the cache built from the known nodes): node `width` of graph g was once cached as node 0 of graph
    g + 1, two nodes made one. The node count is that of distinct (graph, node) pairs; the stream equals one
    without the cache."""
    import kong_pyg.stream.ids as ids

    chunks = [[(0, 16, 2**30), (0, 5, 32), (1, 16, 64), (1, 2**35, 1), (2, 64, 3)],  # no cache: too wide
              [(1, 0, 1), (2, 0, 2), (1, 2, 0), (3, 0, 3)],  # ids < 16: the cache is built, width 16
              [(2, 0, 17), (3, 40, 0), (0, 0, 1), (3, 1, 2)]]  # ids < 64: rebuilt, width 64
    pairs = {(g, v) for chunk in chunks for g, s, d in chunk for v in (s, d)}

    def run():
        ks = KongStream(k=2, hops=hops, dim=32, seed=1)
        widths = []
        for p in range(ks.num_passes):
            if p:
                ks.end_pass()
            for chunk in chunks:
                ks.update(*_typed(chunk))
                widths.append(ks._ids.direct.width)
        return ks, widths

    cached, widths = run()
    assert widths[:3] == [0, 16, 64]  # the cache: none, then built from nodes known, then rebuilt
    monkeypatch.setattr(ids.DirectNodes, "budget", 0)  # (and 8 per node: never enough here)
    plain, plain_widths = run()
    assert set(plain_widths) == {0}
    assert cached.num_nodes == plain.num_nodes == len(pairs)
    assert cached.graph_ids == plain.graph_ids == [0, 1, 2, 3]
    assert torch.equal(cached.sketches(), plain.sketches())
    a, b = canonical(cached), canonical(plain)
    assert a.keys() == b.keys() and all(torch.equal(a[name], b[name]) for name in a)


@pytest.mark.parametrize("order", ["one chunk", "negative first", "negative last"])
def test_ids_around_two_to_the_40(order):
    """Node and graph ids 2^40 - 1 (the largest own key), 2^40 (the first table id) and -1 (a table id) are
    three ids: 2^40 once took the key of the first table id, merging two graphs (or failing to decode), in one
    chunk or two. The graph ids, node count and rows equal those of the same stream with small ids."""
    big = [(2**40 - 1, 2**40 - 1, 2**40), (2**40, 2**40, 2**40 - 1), (2**40, 0, 2**40), (2**40 - 1, 2**40, 3)]
    neg = [(-1, -1, 0), (-1, 1, -1), (0, -1, 2**40), (0, 2**40 - 1, -1)]
    small = {2**40 - 1: 101, 2**40: 102, -1: 103}
    rows = {"one chunk": [big[0], neg[0], big[1], neg[1], big[2], neg[2], big[3], neg[3]],
            "negative first": neg + big, "negative last": big + neg}[order]
    cut = {"one chunk": len(rows)}.get(order, 4)
    firsts = list(dict.fromkeys(g for g, _, _ in rows))
    pairs = {(g, v) for g, s, d in rows for v in (s, d)}
    for hops in (1, 2):
        ks, ref = KongStream(k=2, hops=hops, dim=32), KongStream(k=2, hops=hops, dim=32)
        for p in range(ks.num_passes):
            if p:
                ks.end_pass()
                ref.end_pass()
            for lo, hi in ((0, cut), (cut, len(rows))):
                if hi > lo:
                    s, st, d, dt, et, g = _typed(rows[lo:hi])
                    ks.update(s, st, d, dt, et, g)
                    ref.update(*([small.get(v, v) for v in c] for c in (s, st, d, dt, et, g)))  # same types
        assert ks.num_graphs == len(firsts) == 4 and ks.graph_ids == firsts
        assert ref.graph_ids == [small.get(g, g) for g in firsts]
        assert ks.num_nodes == ref.num_nodes == len(pairs)
        assert torch.equal(ks.sketches(), ref.sketches())


def test_pass_rows_take_no_memory_before_pass_2(tmp_path):
    """The linear map's rows of later passes exist from pass 2 on; checkpoints keep their layout."""
    es, raw = random_stream(12, graphs=9, edges=60)
    one = feed(KongStream(k=2, hops=1, dim=32), raw)
    assert one._pass_rows.numel() == 0  # (one pass: before, a second [G, b] array of zeros)
    two = feed(KongStream(k=2, hops=2, dim=32), raw, hi=40)
    assert two._pass_rows.numel() == 0
    state = two.state_dict()
    assert state["pass_rows"].shape == state["rows"].shape and not state["pass_rows"].any()
    two.save(tmp_path / "c.pt")
    resumed = KongStream.load(tmp_path / "c.pt")
    assert resumed._pass_rows.numel() == 0
    for ks in (two, resumed):
        feed(ks, raw, lo=40).end_pass()
        assert ks._pass_rows.size(0) >= ks.num_graphs
        feed(ks, raw)
    whole = run_all_passes(raw, k=2, hops=2, dim=32)
    assert torch.equal(two.sketches(), whole.sketches()) and torch.equal(resumed.sketches(), whole.sketches())
    bad = dict(state, pass_rows=torch.ones_like(state["rows"]))
    with pytest.raises(ValueError, match="'pass_rows' must be zero in pass 1"):
        KongStream(k=2, hops=2, dim=32).load_state_dict(bad)


_SPARE_CAPACITY = """
import resource, sys
import numpy as np, torch
from kong_pyg import KongStream
torch.set_num_threads(1)
r = np.random.default_rng(0); E, G, N = 60_000, 100, 3000
g, s, d = r.integers(0, G, E), r.integers(0, N, E), r.integers(0, N, E)
nt, et = r.integers(0, 3, (G, N)), r.integers(0, 4, E)
s[-1], d[-1] = N, N + 1  # the last edge: two new nodes, which double the node arrays' capacity
cols = (s, nt[g, s % N], d, nt[g, d % N], et, g)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
ks = KongStream(k=2, hops=2, dim=128, degree=2)
for p in range(2):
    ks.update(*(c[:-1] for c in cols)); ks.update(*(c[-1:] for c in cols))
    if p == 0:
        ks.end_pass()
ks.sketches()
assert ks._nodes.cap > 1.9 * ks.num_nodes
sets = ks.num_nodes * ks.degree * ks.dim * 8 / 1024  # KiB
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / sets)
"""


def test_node_sketch_capacity_takes_no_memory_until_used():
    """The node arrays double their capacity as nodes arrive; that capacity, and a new pass's node sketches,
    were written (zeros) at once, so a stream whose nodes just passed a doubling held twice the documented
    three sets of node sketches (7.2-7.3 sets at the peak here, with the process's other memory; 4.1-4.5 with
    the spare rows left unwritten)."""
    out = subprocess.run([sys.executable, "-c", _SPARE_CAPACITY], capture_output=True, text=True, check=True)
    assert float(out.stdout) < 5.5, out.stdout


def test_an_edge_streams_rows_are_named_by_its_graph_ids(tmp_path):
    """KongStream.fit on an EdgeStream read from a file names its rows by the file's graph ids (decimal ones
    as the integers they spell, as the reader and ``kong-pyg stream`` do), not by the dense indices of the
    EdgeStream's graph column: a file's graphs 500, 200 and g7 came out as 0, 1 and 2."""
    from kong_pyg.datasets import read_streamspot
    from kong_pyg.datasets.streamspot import StreamSpotReader

    path = tmp_path / "s.tsv"
    path.write_text("1\ta\t2\tb\tx\t500\n3\ta\t4\tb\tx\t200\n2\tb\t5\tc\ty\t500\n6\ta\t7\tb\tx\tg7\n")
    stream = read_streamspot(str(path))[0]
    assert stream.graph.tolist() == [0, 1, 0, 2] and stream.graph_ids == ["500", "200", "g7"]
    ks = KongStream(k=2, hops=2, dim=16).fit(stream)
    reader = StreamSpotReader(str(path))
    ref = KongStream(k=2, hops=2, dim=16).fit(reader)
    assert ks.graph_ids == [500, 200, "g7"] == [reader.decode(g) for g in ref.graph_ids]
    assert torch.equal(ks.sketches(), ref.sketches())


def test_an_edge_streams_graph_column_outside_its_ids_is_refused():
    """A graph column that does not index the EdgeStream's graph_ids is an error naming both (it was NumPy's
    IndexError, or a negative index silently took the last id); rows map chunk by chunk."""
    from kong_pyg.datasets import EdgeStream

    t = torch.tensor
    ok = EdgeStream(t([0, 1, 2]), t([1, 1, 1]), t([1, 2, 0]), t([2, 2, 2]), t([0, 0, 0]), t([0, 1, 0]),
                    ["7", "x"])
    assert KongStream(k=1, dim=8).fit(ok, chunk_size=1).graph_ids == [7, "x"]
    bad = ok._replace(graph=t([0, -1, 0]))
    with pytest.raises(ValueError, match="'graph' column must index its 2 graph_ids \\(got values from -1"):
        KongStream(k=1, dim=8).fit(bad)


def test_cli_stream_summary_counts_in_the_singular(tmp_path, capsys):
    """The summary says "1 edge, 1 graph, 2 nodes" (it said "1 edges, 1 graphs"), and plurals above one."""
    path = tmp_path / "one.tsv"
    path.write_text("0\ta\t1\tb\te\t7\n")
    assert cli_main(["stream", str(path), "--k", "1", "-q", "--out", str(tmp_path / "f")]) == 0
    assert ": 1 edge, 1 graph, 2 nodes; 1 pass in " in capsys.readouterr().err
    path.write_text("0\ta\t1\tb\te\t7\n1\tb\t2\ta\te\t8\n")
    assert cli_main(["stream", str(path), "--k", "1", "-q", "--out", str(tmp_path / "f")]) == 0
    assert ": 2 edges, 2 graphs, 4 nodes; 1 pass in " in capsys.readouterr().err


def test_edge_stream_chunks_name_rows_by_their_ids_and_two_are_refused():
    # an EdgeStream inside a list of chunks named its rows by the dense indices ([0] for a file's graph
    # 500), and two separately read EdgeStreams were joined on those indices: other graphs and nodes merged
    import io

    from kong_pyg.datasets import read_streamspot

    first, _, _ = read_streamspot(io.StringIO("1\tp\t2\tf\tread\t500\n1\tp\t3\tf\twrite\t200\n"))
    second, _, _ = read_streamspot(io.StringIO("9\tp\t8\tf\tread\t500\n1\tq\t9\tf\tread\t500\n"))
    whole = KongStream(k=2, hops=2, dim=64).fit(first)
    for source in ([first], lambda: [first]):
        part = KongStream(k=2, hops=2, dim=64).fit(source)
        assert part.graph_ids == whole.graph_ids == [500, 200]
        assert torch.equal(part.sketches(), whole.sketches())
    with pytest.raises(ValueError, match="two EdgeStreams among the chunks of one stream"):
        KongStream(k=2, dim=64).fit([first, second])
    # slices of one EdgeStream share its numbering (and its graph_ids): they read as the whole
    cols = ("src", "src_type", "dst", "dst_type", "edge_type", "graph")
    halves = [first._replace(**{c: getattr(first, c)[lo : lo + 1] for c in cols}) for lo in (0, 1)]
    sliced = KongStream(k=2, hops=2, dim=64).fit(halves)
    assert sliced.graph_ids == [500, 200] and torch.equal(sliced.sketches(), whole.sketches())
