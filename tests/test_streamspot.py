import io

import numpy as np
import pytest
import torch
from sklearn.model_selection import cross_val_score
from sklearn.svm import LinearSVC

from kong_pyg import KongVectorizer, kong_strings
from kong_pyg.datasets import (
    format_malformed,
    read_streamspot,
    stream_to_graphs,
    synthetic_event_stream,
    write_streamspot,
)


def test_read_write_round_trip_and_malformed_lines():
    stream, y = synthetic_event_stream(20, seed=3)
    buf = io.StringIO()
    write_streamspot(stream, buf)
    text = "\n" + buf.getvalue() + "oops\n1\t2\t3\t4\t5\t\n"
    got, bad, n_bad = read_streamspot(io.StringIO(text))
    assert got.num_edges == stream.num_edges and n_bad == 2
    assert [b.line_no for b in bad] == [stream.num_edges + 2, stream.num_edges + 3]
    assert "expected 6 tab-separated fields" in bad[0].reason and bad[1].reason == "empty field"
    assert "2 malformed lines skipped" in format_malformed(bad, n_bad)
    with pytest.raises(ValueError, match=f"line {stream.num_edges + 2}"):
        read_streamspot(io.StringIO(text), strict=True)
    # the graphs are the same, whatever the ids became
    labels = {str(i): int(v) for i, v in enumerate(y)}
    a = stream_to_graphs(stream, y)
    b = {d.graph_id: d for d in stream_to_graphs(got, labels)}
    for d in a:
        e = b[str(d.graph_id)]
        assert torch.equal(d.edge_index, e.edge_index) and torch.equal(d.y, e.y)


def test_string_tokens_and_arrival_order():
    text = "p1\tproc\tf9\tfile\tread\tG\nf9\tfile\tp1\tproc\twrite\tH\np1\tproc\ts3\tsock\tconnect\tG\n"
    stream, _, n_bad = read_streamspot(io.StringIO(text))
    assert n_bad == 0 and stream.graph_ids == ["G", "H"]
    g = stream_to_graphs(stream)[0]
    # process p1 (node 0) sees f9 then s3: arrival order
    s = kong_strings(g.edge_index, g.x.tolist(), 1, "bfs")
    assert s[0][1] == (int(g.x[1]), int(g.x[2]))


def test_synthetic_classes_differ_only_in_order():
    stream, y = synthetic_event_stream(120, seed=1)
    graphs = stream_to_graphs(stream, y)
    acc = {}
    for k in (1, 2):
        X = KongVectorizer(k=k, hops=1, normalize=True).fit_transform(graphs)
        acc[k] = cross_val_score(LinearSVC(), X, y.numpy(), cv=4).mean()
    assert acc[2] > 0.95 and acc[1] < 0.7, acc
    # and k = 1 features have the same distribution: same label multiset sizes
    assert np.isclose(float(y.float().mean()), 0.5)


def test_one_parser_for_whole_and_chunked_reading(tmp_path):
    """read_streamspot reads through StreamSpotReader: the same edges and malformed lines, any source."""
    from kong_pyg.datasets import StreamSpotReader

    stream, _ = synthetic_event_stream(30, seed=7)
    buf = io.StringIO()
    write_streamspot(stream, buf)
    lines = buf.getvalue().split("\n")
    # a lone \r (a line end, as in text mode), \r\n, a blank line, a malformed line, no final newline
    lines[3] = lines[3] + "\r" + lines[4]
    del lines[4]
    lines[5] = lines[5] + "\r"
    lines[8:8] = ["", "one\ttwo", " \t "]
    text = "\ufeff" + "\n".join(lines).rstrip("\n")
    path = tmp_path / "s.tsv"
    path.write_bytes(text.encode())
    reader = StreamSpotReader(str(path), chunk_size=17)
    chunks = list(reader)
    want_edges = sum(len(c.src) for c in chunks)
    want_bad = [(b.line_no, b.reason) for b in reader.malformed]
    assert reader.num_malformed == 1 and want_edges == stream.num_edges and reader.num_blank == 2
    assert reader.num_lines == want_edges + 3
    assert want_bad == [(11, "expected 6 tab-separated fields, got 2")]
    with open(path, encoding="utf-8") as text_mode, open(path, "rb") as binary:
        sources = (str(path), io.StringIO(text), io.BytesIO(text.encode()), text.split("\n"), text_mode,
                   binary)
        for source in sources:
            got, bad, n_bad = read_streamspot(source)
            assert got.num_edges == want_edges and [(b.line_no, b.reason) for b in bad] == want_bad
            assert n_bad == 1
            assert torch.equal(got.edge_type, torch.from_numpy(np.concatenate([c.edge_type for c in chunks])))
            assert got.graph_ids == [str(g) for g in dict.fromkeys(
                reader.decode(int(g)) for c in chunks for g in c.graph)]


def test_first_appearance_is_the_id_map_numbering():
    from kong_pyg.idmap import IdMap, first_appearance

    gen = torch.Generator().manual_seed(0)
    for n in (0, 1, 50, 5000):
        keys = torch.randint(-(2**62), 2**62, (n,), generator=gen) // (1 << 55)  # many repeats
        uniq, number = first_appearance(keys)
        ids, first = IdMap().lookup(keys.numpy())
        assert number.tolist() == ids.tolist() and uniq.tolist() == keys[first].tolist()
