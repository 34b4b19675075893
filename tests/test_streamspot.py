import io
import random

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


@pytest.mark.parametrize("via", ["text", "bytes"])
def test_text_types_survive_a_write_and_read(via, tmp_path):
    """Text types become 57-bit digests; written out in decimal (as integer types are) they must read back
    as the same codes (they were hashed again: every round trip gave other features)."""
    from kong_pyg import KongStream
    from kong_pyg.hashing import type_code

    text = "a\tproc\tb\tfile\tread\tg1\nb\tfile\tc\tsock\twrite\tg1\nc\tsock\ta\tproc\t7\tg2\n"
    first = read_streamspot(io.StringIO(text))[0]
    assert int(first.src_type[0]) == type_code("proc") >= 2**56
    buf = io.StringIO()
    write_streamspot(first, buf)
    if via == "text":
        again = read_streamspot(io.StringIO(buf.getvalue()))[0]
    else:  # a file: the reader's bulk path
        (tmp_path / "s.tsv").write_text(buf.getvalue())
        again = read_streamspot(str(tmp_path / "s.tsv"))[0]
    for name in ("src_type", "dst_type", "edge_type"):
        assert torch.equal(getattr(first, name), getattr(again, name)), name
    sketch = lambda s: KongStream(k=2, dim=64).fit(s).sketches()  # noqa: E731
    assert torch.equal(sketch(first), sketch(again))
    # every integer type (below 2^58) is its decimal string: integer types of 2^57 and more, written out,
    # read back hashed (and a stream of strings differed from one of integers)
    assert type_code(str(2**58 - 1)) == 2**58 - 1 and type_code(str(2**57)) == 2**57
    assert type_code(str(2**58)) != 2**58 and 2**56 <= type_code(str(2**58)) < 2**57
    wide = first._replace(src_type=first.src_type.clone(), edge_type=first.edge_type.clone())
    wide.src_type[0] = wide.edge_type[1] = 2**58 - 1
    buf = io.StringIO()
    write_streamspot(wide, buf)
    assert torch.equal(sketch(read_streamspot(io.StringIO(buf.getvalue()))[0]), sketch(wide))


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


# -- the line rules, on bytes ------------------------------------------------------------------


def _reference_lines(data: bytes, max_line=None):
    """The line rules written out plainly: (edges as byte fields, [(line, reason)], blank count)."""
    from kong_pyg.datasets.streamspot.reader import MAX_LINE_BYTES

    max_line = max_line or MAX_LINE_BYTES
    lines = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    out, bad, blank = [], [], 0
    for no, raw in enumerate(lines, 1):
        too_long = len(raw) > max_line
        if raw.startswith(b"\xef\xbb\xbf"):  # (a BOM at any line's start: files joined with cat)
            raw = raw[3:]
        fields = raw.split(b"\t")
        if too_long:
            bad.append((no, f"line longer than {max_line} bytes"))
        elif not raw.strip():
            blank += 1
        elif b"\0" in raw:
            bad.append((no, "a NUL byte (binary data, or UTF-16/32 text?)"))
        elif len(fields) != 6:
            bad.append((no, f"expected 6 tab-separated fields, got {len(fields)}"))
        elif not all(f.strip() for f in fields):
            bad.append((no, "empty field"))
        else:
            out.append(tuple(f.strip() for f in fields))
    return out, bad, blank


def _id(raw: bytes):
    from kong_pyg.idmap import canonical_int

    value = canonical_int(raw)
    return value if value is not None else raw.decode("utf-8", errors="surrogateescape")


def test_reader_matches_the_line_rules():
    from kong_pyg.datasets import StreamSpotReader
    from kong_pyg.datasets.streamspot.reader import type_code_bytes

    rng = random.Random(1)
    toks = [b"0", b"1", b"12", b"007", b"abc", b"a", b"x" * 9, b"123456789012345678", b"1234567890123456789",
            "\u00fc".encode(), b"p 1", b" q", b"99999999999999999999", b"-5", "\u00b2".encode(), b"\xff",
            b"\xfe", b"\xff\xfe", b"\x00", b"\xc3", b"\xa0z"]
    ends = [b"\n", b"\n", b"\n", b"\r\n", b"\r"]
    for _ in range(80):
        lines = []
        for _ in range(rng.randint(0, 40)):
            r = rng.random()
            if r < 0.05:
                lines.append(b"")
            elif r < 0.08:
                lines.append(b"  \t\x0b")
            elif r < 0.12:
                lines.append(b"\t".join(rng.choice(toks) for _ in range(rng.randint(1, 8))))
            elif r < 0.15:
                lines.append(b"1\t2\t\t4\t5\t6")
            else:
                lines.append(b"\t".join(rng.choice(toks) for _ in range(6)))
        data = b"".join(line + rng.choice(ends) for line in lines)
        if rng.random() < 0.3:
            data = data.rstrip(b"\r\n")
        if rng.random() < 0.3:
            data = b"\xef\xbb\xbf" + data
        if rng.random() < 0.3 and lines:  # (files joined with cat: a BOM starting a later line)
            data = data.replace(lines[-1], b"\xef\xbb\xbf" + lines[-1], 1)
        head = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
        if len(head) >= 10 and (not any(head[1:10:2]) or not any(head[0:10:2])):  # (text as UTF-16/32)
            with pytest.raises(ValueError, match="UTF-16 or UTF-32"):
                list(StreamSpotReader(io.BytesIO(data)))
            continue
        want, bad, blank = _reference_lines(data)
        for chunk in (1, 4, 1000):
            reader = StreamSpotReader(io.BytesIO(data), chunk_size=chunk, keep=100)
            got = []
            for c in reader:
                assert len(c.src) <= chunk
                for s, st, d, dt, et, g in zip(*(x.tolist() for x in c)):
                    got.append((reader.decode(s), st, reader.decode(d), dt, et, reader.decode(g)))
            code = type_code_bytes
            assert got == [(_id(s), code(st), _id(d), code(dt), code(et), _id(g))
                           for s, st, d, dt, et, g in want]
            assert [(b.line_no, b.reason) for b in reader.malformed] == bad
            assert reader.num_malformed == len(bad) and reader.num_blank == blank
            assert reader.num_lines == len(want) + len(bad) + blank
        if bad:
            with pytest.raises(ValueError, match=f"line {bad[0][0]}: "):
                list(StreamSpotReader(io.BytesIO(data), strict=True))


def test_bytes_bom_and_line_ends():
    from kong_pyg.datasets import StreamSpotReader
    from kong_pyg.datasets.streamspot.reader import type_code_bytes
    from kong_pyg.hashing import type_code

    # a BOM is not part of the first id; different non-UTF-8 type bytes are different types
    data = b"\xef\xbb\xbf7\t\xff\t8\t\xfe\tr\tg\n7\tt\t9\t\xfe\tr\tg\n"
    stream, bad, n_bad = read_streamspot(io.BytesIO(data))
    assert n_bad == 0 and stream.num_edges == 2 and stream.graph_ids == ["g"]
    assert stream.src_type[0] != stream.dst_type[0] and stream.dst_type[0] == stream.dst_type[1]
    assert int(stream.src[0]) == int(stream.src[1])  # "7" and "\ufeff7" would be two nodes
    assert type_code_bytes("\u00fc".encode()) == type_code("\u00fc") and type_code_bytes(b"12") == 12
    # canonical digits only: '05' and '005' are other tokens than '5', in the API and in files
    assert type_code("5") == 5 and type_code("0") == 0 and type_code_bytes(b"0") == 0
    assert len({type_code("5"), type_code("05"), type_code("005")}) == 3
    assert type_code_bytes(b"05") == type_code("05") != 5
    # one rule for every source: a lone \r ends a line, in binary, text mode or lines
    text = "1\ta\t2\tb\tc\tg\r3\ta\t4\tb\tc\tg\r\n5\ta\t6\tb\tc\tg"
    for source in (io.BytesIO(text.encode()), io.StringIO(text, newline=None), io.StringIO(text, newline=""),
                   [text]):
        stream, bad, n_bad = read_streamspot(source)
        assert stream.num_edges == 3 and n_bad == 0
    # whitespace-only lines are counted as blank; a line too long is malformed, never held whole
    reader = StreamSpotReader(io.BytesIO(b"  \n\t\n\n1\ta\t2\tb\tc\tg\n"))
    assert sum(len(c.src) for c in reader) == 1 and reader.num_blank == 3 and reader.num_lines == 4
    from kong_pyg.datasets.streamspot import reader as reader_module

    old = reader_module.MAX_LINE_BYTES
    try:
        reader_module.MAX_LINE_BYTES = 100
        edge = b"1\ta\t2\tb\tc\tg\n"
        for long in (5000, 300_000):  # inside one block, over several blocks
            data = edge + b"x" * long + b"\n" + b"1\ta\t2\tb\tc\t" + b"y" * 150 + b"\n" + edge[:-1]
            r = StreamSpotReader(io.BytesIO(data))
            assert sum(len(c.src) for c in r) == 2 and r.num_malformed == 2 and r.num_lines == 4
            assert [b.line_no for b in r.malformed] == [2, 3]
            assert all("longer than 100 bytes" in b.reason for b in r.malformed)
    finally:
        reader_module.MAX_LINE_BYTES = old


def test_ids_are_exact_bytes_in_the_cli_output(tmp_path, capsys):
    from kong_pyg.cli import main as cli_main

    data = b"p\t0\tf\t1\t3\tg\xff\np\t0\tf\t1\t3\tg\xfe\np\t0\tf\t1\t3\t\xc3\xbc\n"
    (tmp_path / "s.tsv").write_bytes(data)
    argv = ["stream", str(tmp_path / "s.tsv"), "--out", str(tmp_path / "f"), "--dim", "16", "-q"]
    assert cli_main(argv) == 0
    capsys.readouterr()
    assert (tmp_path / "f.ids.txt").read_bytes() == b"g\xff\ng\xfe\n\xc3\xbc\n"
    assert np.load(tmp_path / "f.npy").shape == (3, 16)


def test_labels_of_graphs_not_in_the_stream_are_warned_about():
    stream, y = synthetic_event_stream(4, seed=3)
    import warnings

    labels = {d.graph_id: int(v) for d, v in zip(stream_to_graphs(stream, y), y)}

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stream_to_graphs(stream, labels)
    labels["not-there"] = 1  # (a typo, or another stream's labels file)
    with pytest.warns(UserWarning, match=r"'labels' names 1 graph\(s\) that are not in the stream, e.g. "
                                         r"\['not-there'\]"):
        graphs = stream_to_graphs(stream, labels)
    assert [int(d.y) for d in graphs] == [int(v) for v in y]


def test_write_streamspot_writes_back_what_was_read_and_never_half(tmp_path):
    """Ids read from bytes that are not UTF-8 (surrogate escapes) were an error, after the target was
    emptied; an id with a tab or a line end would read back as other fields or lines."""
    import io

    import torch

    from kong_pyg.datasets import EdgeStream, read_streamspot, write_streamspot

    src = tmp_path / "latin.tsv"
    src.write_bytes(b"a\tp\tb\tf\te\tg\xff1\nb\tf\tc\tp\te\t7\n")
    stream = read_streamspot(str(src))[0]
    keep = tmp_path / "keep.tsv"
    keep.write_text("old content\n")
    write_streamspot(stream, str(keep))
    assert keep.read_bytes().split(b"\n")[0].endswith(b"\tg\xff1")
    again = read_streamspot(str(keep))[0]
    assert again.graph_ids == stream.graph_ids and torch.equal(again.edge_type, stream.edge_type)
    T = torch.tensor
    bad = EdgeStream(T([0]), T([0]), T([1]), T([0]), T([0]), T([0]), ["a\tb"])
    keep.write_text("old content\n")
    with pytest.raises(ValueError, match="graph id 'a\\\\tb' cannot be written"):
        write_streamspot(bad, str(keep))
    assert keep.read_text() == "old content\n"
    with pytest.raises(TypeError, match="'target' must be a path or a text file \\(got BytesIO\\)"):
        write_streamspot(stream, io.BytesIO())
    with pytest.raises(TypeError, match="'stream' must be an EdgeStream"):
        write_streamspot((1, 2), str(keep))


def test_graph_ids_that_would_not_read_back_as_themselves_are_not_written(tmp_path):
    """'a ' read back as 'a' (the reader strips fields), 1 and '1' as one graph; ' ' and NUL made a
    malformed line, its graph lost."""
    import torch

    from kong_pyg.datasets import EdgeStream, read_streamspot, write_streamspot

    T = torch.tensor
    path = tmp_path / "w.tsv"

    def two(ids):
        return EdgeStream(T([0, 2]), T([1, 1]), T([1, 3]), T([2, 2]), T([3, 3]), T([0, 1]), ids)

    for bad in ("a ", " a", " ", "x\x00y", "\x0bb"):
        with pytest.raises(ValueError, match="cannot be written: .*no white space at its ends"):
            write_streamspot(two(["a", bad]), str(path))
    with pytest.raises(ValueError, match="graph ids 1 and '1' are both written as '1'"):
        write_streamspot(two([1, "1"]), str(path))
    with pytest.raises(ValueError, match=r"graph id 'a' names graphs 0 and 1: read back, the two graphs"):
        write_streamspot(two(["a", "a"]), str(path))  # (equal ids: it was written, read back as one graph)
    for ids in (["a", "b c"], ["a", "b\x0bc"], [1, 2]):  # (inner spaces are kept)
        write_streamspot(two(ids), str(path))
        again, _, malformed = read_streamspot(str(path))
        assert again.graph_ids == [str(g) for g in ids] and again.num_edges == 2 and malformed == 0


def test_byte_range_must_be_a_pair_of_integers(tmp_path):
    """byte_range=(1.9, 2.5) was accepted and failed while reading; (0, 1, 2) gave 'too many values'."""
    from kong_pyg.datasets import StreamSpotReader

    path = tmp_path / "s.tsv"
    path.write_text("1\ta\t2\tb\tc\t0\n")
    for bad in ((1.9, 2.5), (0, 1, 2), (True, 3), 5):
        with pytest.raises(TypeError, match=r"'byte_range' must be a pair \(lo, hi\) of integers"):
            StreamSpotReader(str(path), byte_range=bad)
    assert len(list(StreamSpotReader(str(path), byte_range=[0, 100]))) == 1


def test_stream_to_graphs_refuses_a_node_index_shared_by_two_graphs():
    """An EdgeStream numbers (graph, node) pairs; a hand-built one reusing node 0 in two graphs gave graph b's
    node 0 the type of its first edge in graph a (KongStream, keying nodes by graph, gave other features)."""
    from kong_pyg.datasets import EdgeStream, stream_to_graphs

    def t(*v):
        return torch.tensor(v)

    shared = EdgeStream(t(0, 0), t(5, 7), t(1, 2), t(6, 6), t(1, 1), t(0, 1), ["a", "b"])
    with pytest.raises(ValueError, match=r"node index 0 in graphs 'a' and 'b'.*\(graph, node id\) pairs"):
        stream_to_graphs(shared)
    apart = EdgeStream(t(0, 3), t(5, 7), t(1, 2), t(6, 6), t(1, 1), t(0, 1), ["a", "b"])
    assert [g.x.tolist() for g in stream_to_graphs(apart)] == [[5, 6], [7, 6]]


def test_graph_ids_read_through_a_reader_decode_to_the_files_ids(tmp_path):
    """KongStream.graph_ids docs: ids read by a StreamSpotReader are its codes; reader.decode spells them."""
    from kong_pyg import KongStream
    from kong_pyg.datasets import StreamSpotReader, read_streamspot

    path = tmp_path / "ids.tsv"
    path.write_text("a\tp\tb\tf\tr\tgA\nc\tp\td\tf\tw\t17\ne\tp\tf\tf\tw\tgB\n")
    reader = StreamSpotReader(str(path))
    ks = KongStream(dim=8).fit(reader)
    assert ks.graph_ids != ["gA", 17, "gB"]  # (codes)
    assert [reader.decode(g) for g in ks.graph_ids] == ["gA", 17, "gB"]
    assert KongStream(dim=8).fit(read_streamspot(str(path))[0]).graph_ids == ["gA", 17, "gB"]


def test_graphs_without_edges_come_last_with_no_nodes_and_no_stream_row():
    """stream_to_graphs docs: a graph id without edges is a node-less graph, last; KongStream has no row."""
    from kong_pyg import KongStream
    from kong_pyg.datasets import EdgeStream, stream_to_graphs

    def t(*v):
        return torch.tensor(v)

    es = EdgeStream(t(0, 3), t(5, 7), t(1, 2), t(6, 6), t(1, 1), t(2, 0), ["a", "b", "c"])
    graphs = stream_to_graphs(es)
    assert [g.graph_id for g in graphs] == ["c", "a", "b"] and graphs[-1].num_nodes == 0
    assert KongStream(dim=8).fit(es).graph_ids == ["c", "a"]
    assert [g.graph_id for g in graphs if g.num_nodes] == ["c", "a"]
