import io
import re

import numpy as np
import pytest
import torch

from kong_pyg import KongVectorizer
from kong_pyg.datasets import (
    EdgeStream,
    StreamSpotGraphs,
    read_graph_labels,
    read_streamspot,
    stream_to_graphs,
    synthetic_event_stream,
    write_streamspot,
)


def test_dataset_matches_stream_to_graphs(tmp_path):
    stream, y = synthetic_event_stream(12, seed=5)
    path = tmp_path / "s.tsv"
    write_streamspot(stream, str(path))
    (tmp_path / "labels.txt").write_text("# id label\n" + "".join(f"{g} {int(v)}\n" for g, v in enumerate(y)))
    ds = StreamSpotGraphs(str(path), labels=str(tmp_path / "labels.txt"))
    by_id = {str(r.graph_id): r for r in stream_to_graphs(stream, y)}
    assert len(ds) == 12 and ds.num_malformed == 0
    ref = [by_id[g] for g in ds.graph_ids]  # the file lists graphs in order of first appearance
    for d, r in zip(ds, ref):
        assert torch.equal(d.edge_index, r.edge_index) and torch.equal(d.x, r.x) and int(d.y) == int(r.y)
    # the collated storage feeds the vectorizer the same graphs
    vec = KongVectorizer(k=2, hops=1)
    assert (vec.fit_transform(ds) != vec.fit_transform(ref)).nnz == 0
    same = StreamSpotGraphs(stream, labels={int(g): int(v) for g, v in enumerate(y)})
    assert same.graph_ids == list(range(12))
    assert all(torch.equal(a.edge_index, by_id[str(g)].edge_index) for a, g in zip(same, same.graph_ids))


def test_malformed_lines_and_label_errors():
    text = "p\t0\tf\t1\t3\tA\nbad line\np\t0\tg\t1\t4\tB\n"
    with pytest.warns(UserWarning, match=r"^1 malformed line skipped; line 2: .*'bad line' \(all in "):
        ds = StreamSpotGraphs(io.StringIO(text), labels=torch.tensor([0, 1]))  # (it was silent)
    assert len(ds) == 2 and ds.num_malformed == 1 and ds.graph_ids == ["A", "B"]
    with pytest.raises(ValueError, match="line 2"):
        StreamSpotGraphs(io.StringIO(text), strict=True)
    with pytest.raises(ValueError, match=r"no label for graph id\(s\) \['B'\]"):
        StreamSpotGraphs(io.StringIO(text), labels={"A": 1})
    with pytest.raises(ValueError, match=r"'labels' must hold one label per graph: 2 \(got 3\)"):
        StreamSpotGraphs(io.StringIO(text), labels=[0, 1, 0])
    with pytest.raises(ValueError, match="labels line 1"):
        read_graph_labels(io.StringIO("A one\n"))
    with pytest.raises(ValueError, match="no edges"):
        StreamSpotGraphs(io.StringIO(""))


def test_graph_ids_of_a_subset_or_a_shuffle_are_its_own():
    """ds[[5, 2]].graph_ids and ds.shuffle().graph_ids were the whole data set's, in its order: zipped with
    the rows, ids went with other graphs."""
    stream, _ = synthetic_event_stream(12, seed=5)
    ds = StreamSpotGraphs(stream)
    for part in (ds[[5, 2]], ds.shuffle(), ds[3:7], ds[torch.tensor([True, False] * 6)], ds[[5, 2]].copy(),
                 ds.shuffle().copy(), ds.copy([7, 1, 3]), ds[3:7][1:], ds[[4]], ds[[4]].copy()):
        assert part.graph_ids == [int(d.graph_id) for d in part] and len(part.graph_ids) == len(part)
        assert all(type(g) is int for g in part.graph_ids)  # (a one-graph copy gave [tensor([4])])
    assert ds.graph_ids == list(range(12)) and ds[[5, 2]].copy().graph_ids == [5, 2]
    one = StreamSpotGraphs(synthetic_event_stream(1, seed=5)[0])  # (PyG stores one graph as it is)
    assert one.graph_ids == [0]
    columns = [torch.tensor(c) for c in ([0, 2], [1, 1], [1, 3], [2, 2], [3, 3], [0, 1])]
    for ids in (["a", 5], [5, "a"]):  # (PyG's collate failed on an int first: "invalid data type 'str'")
        with pytest.raises(ValueError, match=r"graph ids are of several kinds \(\['int', 'str'\]\)"):
            StreamSpotGraphs(EdgeStream(*columns, ids))
    assert StreamSpotGraphs(EdgeStream(*columns, ["a", "5"]))[[1, 0]].copy().graph_ids == ["5", "a"]


def test_labels_are_integers_never_truncated():
    text = "1\ta\t2\tb\te\tg1\n1\ta\t2\tb\te\tg2\n"
    with pytest.raises(ValueError, match=r"'labels' holds non-integer values \[0\.89.*, 1\.70.*\]; "
                                         r"graph labels must be integers"):
        StreamSpotGraphs(io.StringIO(text), labels=torch.tensor([0.9, 1.7]))  # used to become y = [0, 1]
    with pytest.raises(ValueError, match=r"non-integer values \[nan\]"):
        StreamSpotGraphs(io.StringIO(text), labels=[float("nan"), 1.0])
    with pytest.raises(ValueError, match=r"'labels' gives graph id 'g1' the label 0\.9; graph labels "
                                         r"must be integers"):
        StreamSpotGraphs(io.StringIO(text), labels={"g1": 0.9, "g2": 1})
    with pytest.raises(TypeError, match=r"'labels' gives graph id 'g2' the label \[1\]"):
        StreamSpotGraphs(io.StringIO(text), labels={"g1": 0, "g2": [1]})
    with pytest.raises(ValueError, match=r"'labels' gives graph id '1' two labels \(0 and 1; "
                                         r"keys are compared as strings\)"):
        StreamSpotGraphs(io.StringIO(text.replace("g1", "1")), labels={1: 0, "1": 1, "g2": 0})
    # integral floats (and the other integer forms) are labels
    assert StreamSpotGraphs(io.StringIO(text), labels=torch.tensor([1.0, 0.0]))._data.y.tolist() == [1, 0]
    assert StreamSpotGraphs(io.StringIO(text), labels={"g1": 1.0, "g2": "0"})._data.y.tolist() == [1, 0]
    ds = StreamSpotGraphs(io.StringIO(text), labels={"g1": torch.tensor(2), "g2": 1})
    assert ds._data.y.tolist() == [2, 1]


def test_labels_file_with_one_graph_twice(tmp_path):
    # the same label twice is fine; another label used to replace the first one silently
    assert read_graph_labels(io.StringIO("g1 0\n# note\ng1 0\ng2 1\n")) == {"g1": 0, "g2": 1}
    with pytest.raises(ValueError, match=r"^labels line 3: graph id 'g1' is labelled 1, "
                                         r"but line 1 labelled it 0$"):
        read_graph_labels(io.StringIO("g1 0\n\ng1 1\n"))
    path = tmp_path / "labels.txt"
    path.write_text("g1 0\ng2 1\ng2 0\n")
    message = re.escape(f"{path}: labels line 3: graph id 'g2' is labelled 0, but line 2 labelled it 1")
    message = f"^{message}$"
    with pytest.raises(ValueError, match=message):
        read_graph_labels(str(path))
    with open(path) as f, pytest.raises(ValueError, match=message):
        read_graph_labels(f)
    with pytest.raises(ValueError, match=r"labels\.txt: labels line 3: graph id 'g2'"):
        StreamSpotGraphs(io.StringIO("1\ta\t2\tb\te\tg1\n1\ta\t2\tb\te\tg2\n"), labels=str(path))


def test_text_as_utf16_without_a_bom_is_refused_and_joined_files_read_as_one():
    from kong_pyg.datasets import read_streamspot

    text = "1\tp\t2\tf\tread\tg1\n2\tf\t1\tp\twrite\tg1\n1\tp\t3\tf\tread\tg1\n"
    for encoding in ("utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"):  # (NULs became parts of ids)
        with pytest.raises(ValueError, match="UTF-16 or UTF-32"):
            read_streamspot(io.BytesIO(text.encode(encoding)))
    # per-graph files joined with cat, each with its BOM: the same stream as without the marks
    plain, _, _ = read_streamspot(io.BytesIO(text.encode()))
    lines = text.encode().splitlines(keepends=True)
    joined, bad, _ = read_streamspot(io.BytesIO(b"".join(b"\xef\xbb\xbf" + line for line in lines)))
    assert bad == [] and joined.graph_ids == plain.graph_ids
    for a, b in zip(plain[:6], joined[:6]):
        assert torch.equal(a, b)
    # a NUL byte inside a later line: that line is malformed, with its reason
    _, bad, n = read_streamspot(io.BytesIO(text.encode() + b"4\tp\t5\x00\tf\tread\tg1\n"))
    assert n == 1 and bad[0].line_no == 4 and "NUL byte" in bad[0].reason


def test_labels_beyond_64_bits_or_booleans_are_refused():
    text = "a\t1\tb\t1\t1\tg1\nc\t1\td\t1\t1\tg2\ne\t1\tf\t1\t1\tg3\n"
    with pytest.raises(ValueError, match="labels line 2: the label 9223372036854775808 does not fit 64 bits"):
        read_graph_labels(io.StringIO("g1 -1\ng2 9223372036854775808\ng3 9223372036854775809\n"))
    for bad in (2**63, 1e19, -(2**63) - 1):  # (all became float64 labels: distinct classes merged)
        with pytest.raises(ValueError, match="graph labels must be integers of 64 bits"):
            StreamSpotGraphs(io.StringIO(text), labels={"g1": 0, "g2": bad, "g3": 1})
    with pytest.raises(TypeError, match="not booleans"):
        StreamSpotGraphs(io.StringIO(text), labels={"g1": True, "g2": 1, "g3": 0})
    with pytest.raises(TypeError, match="'labels' must hold integers \\(got torch.bool\\)"):
        StreamSpotGraphs(io.StringIO(text), labels=[True, False, True])  # (a list: became 1, 0, 1)
    with pytest.raises(ValueError, match="'labels' must hold 64-bit integers"):
        StreamSpotGraphs(io.StringIO(text), labels=[2**63, 1, 0])
    with pytest.raises(ValueError, match="'labels' must hold 64-bit integers"):  # (wrapped to -2^63)
        StreamSpotGraphs(io.StringIO(text), labels=np.array([2**63, 1, 0], dtype=np.uint64))
    # stream_to_graphs reads labels as StreamSpotGraphs does (it took 0.5, True, and no string keys)
    stream = read_streamspot(io.StringIO(text))[0]
    with pytest.raises(ValueError, match="non-integer values"):
        stream_to_graphs(stream, [0.5, 1.5, 1])
    with pytest.raises(TypeError, match="must hold integers"):
        stream_to_graphs(stream, [True, False, True])
    by_str = stream_to_graphs(stream, {"g1": 1, "g2": 0, "g3": 1})
    assert [int(d.y) for d in by_str] == [1, 0, 1]
    y = StreamSpotGraphs(io.StringIO(text), labels={"g1": 2**63 - 1, "g2": -(2**63), "g3": 0})._data.y
    assert y.dtype == torch.long and y.tolist() == [2**63 - 1, -(2**63), 0]


def test_undirected_and_type_counts_are_checked():
    # undirected='no' ran as undirected (only KongStream checked it); a synthetic stream of 2^60 edge
    # types was built and then refused by every reader (types are labels below 2^58)
    import pytest

    from kong_pyg.datasets import StreamSpotGraphs, stream_to_graphs, synthetic_event_stream

    stream = synthetic_event_stream(4)[0]
    with pytest.raises(TypeError, match="'undirected' must be True or False \\(got 'no'\\)"):
        stream_to_graphs(stream, undirected="no")
    with pytest.raises(TypeError, match="'undirected' must be True or False \\(got 1\\)"):
        StreamSpotGraphs(stream, undirected=1)
    for name in ("num_edge_types", "num_object_types"):
        with pytest.raises(ValueError, match=f"'{name}' must be <= 288,230,376,151,711,744"):
            synthetic_event_stream(4, **{name: 2**60})
