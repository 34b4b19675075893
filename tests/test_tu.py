import gzip
import os
import re
import stat
from pathlib import Path

import pytest
import torch
from tu_helpers import paths_and_stars, write_tu

import kong_pyg.datasets
from kong_pyg.datasets import NoNodeLabelsWarning, cache_dir, load_tu

SHARED = Path(os.environ.get("KONG_PYG_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def write_bundled_raw(raw: Path, name: str = "MUTAG") -> Path:
    """The bundled raw files, decompressed into raw/."""
    raw.mkdir(parents=True, exist_ok=True)
    src = Path(kong_pyg.datasets.__file__).parent / "data" / name
    for gz in src.glob("*.txt.gz"):
        (raw / gz.name[:-3]).write_bytes(gzip.decompress(gz.read_bytes()))
    return raw


def _listing(folder: Path):
    return sorted((str(p.relative_to(folder)), p.stat().st_size, p.stat().st_mtime_ns)
                  for p in folder.rglob("*"))


def test_bundled_mutag_offline(tmp_path):
    ds = load_tu(cache=tmp_path)
    assert ds.name == "MUTAG" and len(ds) == 188
    assert ds._data.x.shape == (3371, 7) and ds._data.edge_attr.shape[1] == 4
    assert sorted(torch.unique(ds._data.y).tolist()) == [0, 1]
    assert int((ds._data.y == 1).sum()) == 125
    # a second load reuses the processed cache
    again = load_tu("MUTAG", cache=tmp_path)
    assert torch.equal(again._data.edge_index, ds._data.edge_index)


def test_cache_dir_env(monkeypatch, tmp_path):
    monkeypatch.setenv("KONG_PYG_CACHE", str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c"
    assert cache_dir(tmp_path / "d") == tmp_path / "d"
    monkeypatch.delenv("KONG_PYG_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert cache_dir() == tmp_path / "x" / "kong_pyg"
    # a relative XDG_CACHE_HOME is ignored, as its specification says (it made ./relcache/kong_pyg)
    monkeypatch.setenv("XDG_CACHE_HOME", "relcache")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "kong_pyg"


def test_data_root_is_only_read(tmp_path):
    root = tmp_path / "root"
    bundled = load_tu(cache=tmp_path / "c1")
    write_bundled_raw(root / "MUTAG" / "raw")
    for p in [root, *root.rglob("*")]:
        p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    before = _listing(root)
    try:
        ds = load_tu("MUTAG", root, cache=tmp_path / "c2")
        assert len(ds) == 188 and torch.equal(ds._data.x, bundled._data.x)
        assert _listing(root) == before
    finally:
        for p in [root, *root.rglob("*")]:
            p.chmod(p.stat().st_mode | stat.S_IWUSR)


def test_unknown_names_and_missing_files(tmp_path):
    with pytest.raises(ValueError, match="unknown data set 'NOPE'.*only MUTAG is bundled"):
        load_tu("NOPE", cache=tmp_path)
    with pytest.raises(ValueError, match="did you mean 'MUTAG'"):
        load_tu("mutag", cache=tmp_path)
    with pytest.raises(ValueError, match="TU data set name"):
        load_tu("../etc", cache=tmp_path)
    graphs, classes = paths_and_stars()
    write_tu(tmp_path / "root", "SHAPES", graphs, classes)
    with pytest.raises(ValueError, match="unknown data set 'SHAPE'.*did you mean 'SHAPES'.*holds SHAPES"):
        load_tu("SHAPE", tmp_path / "root", cache=tmp_path / "c")
    with pytest.raises(FileNotFoundError, match="is not a folder"):
        load_tu("SHAPES", tmp_path / "nowhere", cache=tmp_path / "c")
    (tmp_path / "root" / "SHAPES" / "raw" / "SHAPES_graph_labels.txt").unlink()
    with pytest.raises(FileNotFoundError, match="SHAPES_graph_labels.txt"):
        load_tu("SHAPES", tmp_path / "root", cache=tmp_path / "c")


def test_degree_labels_when_no_node_labels(tmp_path):
    graphs, classes = paths_and_stars(4)
    write_tu(tmp_path / "root", "SHAPES", graphs, classes)
    with pytest.warns(NoNodeLabelsWarning, match="node degrees"):
        ds = load_tu("SHAPES", tmp_path / "root", cache=tmp_path / "c")
    # path of 4 nodes, star of 5, path of 6, star of 7
    assert ds[0].x.view(-1).tolist() == [1, 2, 2, 1]
    assert ds[1].x.view(-1).tolist() == [4, 1, 1, 1, 1]
    assert ds[3].x.view(-1).tolist() == [6] + [1] * 6
    assert [int(d.y) for d in ds] == classes


def test_labelled_tiny_dataset_and_refresh(tmp_path):
    graphs, classes = paths_and_stars(4)
    labels = [[i % 2] * n for i, (n, _) in enumerate(graphs)]
    write_tu(tmp_path / "root", "SHAPES", graphs, classes, node_labels=labels)
    ds = load_tu("SHAPES", tmp_path / "root", cache=tmp_path / "c")
    assert ds[1].x.argmax(dim=1).tolist() == [1] * 5
    # changed raw files are picked up (the cache is refreshed)
    classes2 = [1 - c for c in classes]
    write_tu(tmp_path / "root", "SHAPES", graphs, classes2, node_labels=labels)
    os.utime(tmp_path / "root" / "SHAPES" / "raw" / "SHAPES_graph_labels.txt", (1, 1))
    ds2 = load_tu("SHAPES", tmp_path / "root", cache=tmp_path / "c")
    assert [int(d.y) for d in ds2] == classes2


@pytest.mark.skipif(not (SHARED / "tu" / "PTC_MR" / "raw").is_dir(), reason="shared TU data absent")
def test_shared_read_only_folder(tmp_path):
    ds = load_tu("PTC_MR", SHARED / "tu", cache=tmp_path)
    assert len(ds) == 344


# ---------------------------------------------------------------------------
# Malformed raw files: a ValueError naming the file and the line
# ---------------------------------------------------------------------------

GOOD = {
    # 3 graphs: a triangle (nodes 1-3), a path (4-6), an edge (7-8)
    "A": "1, 2\n2, 3\n3, 1\n4, 5\n5, 6\n7, 8\n",
    "graph_indicator": "1\n1\n1\n2\n2\n2\n3\n3\n",
    "graph_labels": "1\n-1\n1\n",
    "node_labels": "0\n1\n2\n0\n1\n2\n0\n1\n",
    "edge_labels": "0\n1\n0\n1\n0\n1\n",
}


def _edit(**parts):
    files = dict(GOOD)
    files.update(parts)
    return {k: v for k, v in files.items() if v is not None}


MALFORMED = [
    ("edge-to-missing-node", _edit(A=GOOD["A"] + "8, 9\n"),
        "T_A.txt, line 7: edge 8, 9 names a node that does not exist \\(node ids are 1..8"),
    ("edge-to-node-0", _edit(A="0, 1\n" + GOOD["A"]), "T_A.txt, line 1: edge 0, 1 names a node"),
    ("negative-node", _edit(A=GOOD["A"].replace("5, 6", "5, -6")),
        "T_A.txt, line 5: edge 5, -6 names a node"),
    ("empty-A", _edit(A=""), "T_A.txt: is empty"),
    ("blank-A", _edit(A="\n\n"), "T_A.txt: is empty"),
    ("short-indicator", _edit(graph_indicator="1\n1\n1\n2\n2\n2\n3\n"),
        "T_A.txt, line 6: edge 7, 8 names a node that does not exist \\(node ids are 1..7"),
    ("long-indicator", _edit(graph_indicator=GOOD["graph_indicator"] + "4\n"),
        "T_graph_labels.txt: 3 line\\(s\\), but the data set has 4 graphs"),
    ("long-indicator-same-graph", _edit(graph_indicator=GOOD["graph_indicator"] + "3\n"),
        "T_node_labels.txt: 8 line\\(s\\), but the data set has 9 nodes"),
    ("empty-indicator", _edit(graph_indicator=""), "T_graph_indicator.txt: is empty"),
    ("indicator-from-0", _edit(graph_indicator="0\n0\n0\n1\n1\n1\n2\n2\n"),
        "T_graph_indicator.txt, line 1: the first graph id must be 1, got 0"),
    ("indicator-gap", _edit(graph_indicator="1\n1\n1\n3\n3\n3\n4\n4\n"),
        "T_graph_indicator.txt, line 4: graph id 3 follows 1; nodes must be listed graph by graph"),
    ("indicator-goes-back", _edit(graph_indicator="1\n1\n2\n1\n2\n2\n3\n3\n"),
        "T_graph_indicator.txt, line 4: graph id 1 follows 2"),
    ("indicator-two-columns", _edit(graph_indicator=GOOD["graph_indicator"].replace("\n", ",1\n")),
        "T_graph_indicator.txt, line 1: expected 1 comma-separated value\\(s\\) per line, got 2"),
    ("edge-across-graphs", _edit(A=GOOD["A"] + "3, 4\n"),
        "T_A.txt, line 7: edge 3, 4 joins graph 1 and graph 2"),
    ("non-number", _edit(A=GOOD["A"].replace("2, 3", "2, x")), "T_A.txt, line 2: 'x' is not a number"),
    ("non-number-label", _edit(node_labels=GOOD["node_labels"].replace("2\n", "C\n", 1)),
        "T_node_labels.txt, line 3: 'C' is not a number"),
    ("three-columns", _edit(A=GOOD["A"].replace("4, 5", "4, 5, 6")),
        "T_A.txt, line 4: 3 comma-separated value\\(s\\), but the lines above have 2"),
    ("three-columns-everywhere", _edit(A=GOOD["A"].replace("\n", ", 1\n")),
        "T_A.txt, line 1: expected 2 comma-separated value\\(s\\) per line, got 3"),
    ("one-column", _edit(A=GOOD["A"].replace("5, 6", "5")),
        "T_A.txt, line 5: 1 comma-separated value\\(s\\), but the lines above have 2"),
    ("tab-separated", _edit(A=GOOD["A"].replace(", ", "\t")), "T_A.txt, line 1: '1\\\\t2' is not a number"),
    ("trailing-comma", _edit(A=GOOD["A"].replace("\n", ",\n")), "T_A.txt, line 1: '' is not a number"),
    ("fraction", _edit(graph_labels="1\n0.5\n1\n"), "T_graph_labels.txt, line 2: 0.5 is not an integer"),
    ("nan", _edit(node_labels=GOOD["node_labels"].replace("1\n", "nan\n", 1)),
        "T_node_labels.txt, line 2: nan is not an integer"),
    ("inf-node", _edit(A=GOOD["A"].replace("7, 8", "7, inf")), "T_A.txt, line 6: inf is not an integer"),
    ("huge-node-id", _edit(A=GOOD["A"].replace("7, 8", "7, 99999999999999999999")),
        "T_A.txt, line 6: 1e\\+20 is not an integer \\(or is too large\\)"),
    ("huge-but-exact-id", _edit(A=GOOD["A"].replace("7, 8", "7, 9000000000000")),
        "T_A.txt, line 6: edge 7, 9000000000000 names a node that does not exist"),
    ("not-utf8", _edit(A=GOOD["A"] + "\xff\n"), "T_A.txt, line 7: not UTF-8 text"),
    ("not-utf8-lone-cr", _edit(A=GOOD["A"].replace("\n", "\r") + "\xff\r"),
        "T_A.txt, line 7: not UTF-8 text"),
    ("not-utf8-after-a-byte-order-mark", _edit(A="\ufeff" + GOOD["A"] + "\xff\n"),
        "T_A.txt, line 7: not UTF-8 text"),  # (line 2 was named: an offset after the mark)
    # Python's int() and float() take these, NumPy does not: the line is named all the same
    ("non-ascii-digit", _edit(graph_labels="1\n\u0661\n1\n"),
        "T_graph_labels.txt, line 2: '\u0661' is not a number"),
    ("underscore-digits", _edit(A=GOOD["A"].replace("7, 8", "7, 1_0")),
        "T_A.txt, line 6: '1_0' is not a number"),
    ("lone-cr-line-numbers", _edit(A=GOOD["A"].replace("\n", "\r").replace("2, 3", "2, x")),
        "T_A.txt, line 2: 'x' is not a number"),
    # written as floats, 2^53 + 1 and 2^53 are one float: two classes would merge
    ("float-at-2-53", _edit(graph_labels="9007199254740993\n9007199254740992.0\n1\n"),
        "T_graph_labels.txt, line 1: 9007199254740992.0 is not an integer \\(or is too large"),
    ("graph-labels-short", _edit(graph_labels="1\n-1\n"),
        "T_graph_labels.txt: 2 line\\(s\\), but the data set has 3 graphs \\(one line per graph\\)"),
    ("graph-labels-long", _edit(graph_labels="1\n-1\n1\n1\n"),
        "T_graph_labels.txt, line 4: 4 line\\(s\\), but the data set has 3 graphs"),
    ("graph-labels-empty", _edit(graph_labels=""),
        "T_graph_labels.txt: 0 line\\(s\\), but the data set has 3 graphs"),
    ("graph-labels-two-columns", _edit(graph_labels="1,0\n-1,0\n1,0\n"),
        "T_graph_labels.txt, line 1: expected 1 comma-separated value"),
    ("node-labels-short", _edit(node_labels="0\n1\n2\n0\n1\n2\n0\n"),
        "T_node_labels.txt: 7 line\\(s\\), but the data set has 8 nodes \\(one line per node\\)"),
    ("node-labels-long", _edit(node_labels=GOOD["node_labels"] + "5\n"),
        "T_node_labels.txt, line 9: 9 line\\(s\\), but the data set has 8 nodes"),
    ("edge-labels-short", _edit(edge_labels="0\n1\n"),
        "T_edge_labels.txt: 2 line\\(s\\), but the data set has 6 edges "
        "\\(one line per edge, as in .*T_A.txt\\)"),
    ("node-labels-huge-range", _edit(node_labels=GOOD["node_labels"].replace("2\n", "4000000000\n", 1)),
        "T_node_labels.txt: labels span \\[4000000001\\] values per column; their one-hot matrix would take"),
    # spans of 2^63 and more once wrapped in int64 and slipped past the size check
    ("node-labels-span-2-63",
        _edit(node_labels=GOOD["node_labels"].replace("2\n", "9223372036854775807\n", 1)),
        "T_node_labels.txt: labels span \\[9223372036854775808\\] values per column"),
    ("node-labels-span-past-int64",
        _edit(node_labels=GOOD["node_labels"].replace("0\n", "-9223372036854775808\n", 1)
              .replace("2\n", "5\n")),
        "T_node_labels.txt: labels span \\[9223372036854775814\\] values per column"),
]


@pytest.mark.parametrize("case,parts,message", MALFORMED, ids=[c[0] for c in MALFORMED])
def test_malformed_raw_files(tmp_path, case, parts, message):
    raw = tmp_path / "root" / "T" / "raw"
    raw.mkdir(parents=True)
    for part, text in parts.items():
        (raw / f"T_{part}.txt").write_bytes(text.encode("utf-8").replace(b"\xc3\xbf", b"\xff"))
    with pytest.raises(ValueError, match=message):
        load_tu("T", tmp_path / "root", cache=tmp_path / "c")
    assert not list((tmp_path / "c").rglob("*.npz"))  # nothing cached


def _write(raw: Path, parts) -> None:
    raw.mkdir(parents=True, exist_ok=True)
    for part, text in parts.items():
        (raw / f"T_{part}.txt").write_text(text)


def test_the_good_tiny_dataset_and_lenient_forms(tmp_path):
    _write(tmp_path / "a" / "T" / "raw", GOOD)
    ds = load_tu("T", tmp_path / "a", cache=tmp_path / "c")
    assert len(ds) == 3 and ds.num_node_labels == 3 and ds.num_edge_labels == 2
    assert [int(d.y) for d in ds] == [1, 0, 1]
    assert ds[1].edge_index.tolist() == [[0, 1], [1, 2]]  # local ids, coalesced
    assert ds[2].x.argmax(1).tolist() == [0, 1]
    # blank lines, spaces, CRLF, integral floats, '+' signs and a UTF-8 byte-order mark read the same
    lenient = {k: v.replace("\n", "\r\n") for k, v in GOOD.items()}
    lenient["A"] = "\n" + GOOD["A"].replace(", ", " ,  ") + "\n\n"
    lenient["graph_labels"] = "1.0\n \n-1.0\n\t\n+1\n  "  # (lines of whitespace are blank lines)
    lenient["node_labels"] = GOOD["node_labels"].replace("\n", "\r")  # (lone CR line ends, as PyG reads them)
    lenient["graph_indicator"] = "\ufeff" + lenient["graph_indicator"]  # (a byte-order mark: Windows editors)
    lenient["A"] = "\ufeff" + lenient["A"]
    _write(tmp_path / "b" / "T" / "raw", lenient)
    again = load_tu("T", tmp_path / "b", cache=tmp_path / "c")
    for k in ("x", "edge_index", "edge_attr", "y"):
        assert torch.equal(getattr(ds._data, k), getattr(again._data, k))


def test_a_required_file_that_is_a_folder(tmp_path):
    raw = tmp_path / "root" / "T" / "raw"
    _write(raw, _edit(A=None))
    (raw / "T_A.txt").mkdir()
    with pytest.raises(ValueError, match="T_A.txt is a folder, not a file"):
        load_tu("T", tmp_path / "root", cache=tmp_path / "c")


def test_an_optional_label_file_that_is_not_a_file_is_an_error_not_absent(tmp_path):
    """An edge label file that is a broken link (an unfetched git-annex file) was read as absent: the graphs
    lost their edge labels without a word; a node label file so gave only 'no node labels'."""
    for part in ("edge_labels", "node_labels"):
        raw = tmp_path / part / "T" / "raw"
        _write(raw, _edit(**{part: None}))
        (raw / f"T_{part}.txt").symlink_to(tmp_path / "nowhere" / "object")
        with pytest.raises(ValueError, match=f"T_{part}.txt is a broken link, not a file"):
            load_tu("T", tmp_path / part, cache=tmp_path / "c")


def test_node_and_edge_one_hot_labels_share_one_budget(tmp_path, monkeypatch):
    """MAX_ONE_HOT_BYTES held for each label file alone: both files at the limit built twice as much."""
    from kong_pyg.datasets import tu_raw

    _write(tmp_path / "a" / "T" / "raw", GOOD)
    ds = load_tu("T", tmp_path / "a", cache=tmp_path / "c")
    x_bytes, e_bytes = ds._data.x.numel() * 4, ds._data.edge_attr.numel() * 4
    monkeypatch.setattr(tu_raw, "MAX_ONE_HOT_BYTES", x_bytes + e_bytes)  # (both fit: loads)
    assert load_tu("T", tmp_path / "a", cache=tmp_path / "c2").num_edge_labels == 2
    monkeypatch.setattr(tu_raw, "MAX_ONE_HOT_BYTES", x_bytes + e_bytes - 1)  # (each alone would fit)
    with pytest.raises(ValueError, match="T_edge_labels.txt: labels span .* left of .* GiB for all labels"):
        load_tu("T", tmp_path / "a", cache=tmp_path / "c3")


def test_regression_data_sets_are_named(tmp_path):
    raw = tmp_path / "root" / "T" / "raw"
    _write(raw, _edit(graph_labels=None))
    (raw / "T_graph_attributes.txt").write_text("0.5\n1.5\n2.5\n")
    with pytest.raises(FileNotFoundError, match="T_graph_labels.txt.*a regression task, not classification"):
        load_tu("T", tmp_path / "root", cache=tmp_path / "c")


def test_same_tensors_as_pyg_tudataset(tmp_path):
    # oracle: PyG's own TUDataset on a fresh copy of the bundled raw files
    from torch_geometric.datasets import TUDataset

    write_bundled_raw(tmp_path / "pyg" / "MUTAG" / "raw")
    ref = TUDataset(str(tmp_path / "pyg"), "MUTAG")
    ours = load_tu(cache=tmp_path / "c")
    for k in ("x", "edge_index", "edge_attr", "y"):
        a, b = getattr(ref._data, k), getattr(ours._data, k)
        assert a.dtype == b.dtype and torch.equal(a, b), k
    for k in ("x", "edge_index", "edge_attr", "y"):
        assert torch.equal(ref.slices[k], ours.slices[k]), k
    assert (ref.num_node_labels, ref.num_edge_labels) == (ours.num_node_labels, ours.num_edge_labels)
    assert repr(ours) == repr(ref) == "MUTAG(188)"


def test_download_goes_into_the_cache_and_is_parsed_by_us(tmp_path, monkeypatch):
    import shutil as sh
    import urllib.error
    import zipfile

    import torch_geometric.data

    archive = tmp_path / "T.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for part, text in GOOD.items():
            z.writestr(f"T/T_{part}.txt", text)
    urls = []

    def fake_download(url, folder, log=True):
        urls.append(url)
        return sh.copy(archive, folder)

    monkeypatch.setattr(torch_geometric.data, "download_url", fake_download)
    ds = load_tu("T", download=True, cache=tmp_path / "c")
    assert urls == ["https://www.chrsmrrs.com/graphkerneldatasets/T.zip"]
    assert len(ds) == 3 and ds.raw_dir == str(tmp_path / "c" / "download" / "T" / "raw")
    assert sorted(p.name for p in Path(ds.raw_dir).iterdir()) == sorted(f"T_{p}.txt" for p in GOOD)
    load_tu("T", download=True, cache=tmp_path / "c")  # a complete folder is not fetched again
    assert len(urls) == 1

    def offline(url, folder, log=True):  # the connection drops: half an archive is left
        Path(folder, url.rsplit("/", 1)[1]).write_bytes(b"PK\x03\x04 half")
        raise urllib.error.URLError("no network")

    monkeypatch.setattr(torch_geometric.data, "download_url", offline)
    with pytest.raises(OSError, match="could not download the TU data set 'U' from .*U.zip: .*no network.*"
                                      "pass data_root=DIR"):
        load_tu("U", download=True, cache=tmp_path / "c")
    assert not (tmp_path / "c" / "download" / "U" / "raw" / "U.zip").exists()  # the next try fetches it

    def unknown(url, folder, log=True):
        raise urllib.error.HTTPError(url, 404, "Not Found", None, None)

    monkeypatch.setattr(torch_geometric.data, "download_url", unknown)
    with pytest.raises(ValueError, match="there is no TU data set named 'NOPE': .*NOPE.zip was not found"):
        load_tu("NOPE", download=True, cache=tmp_path / "c")


def test_several_node_label_columns_are_one_label_per_distinct_row(tmp_path):
    """A node_labels file with two columns: every distinct (a, b) row is one label, one-hot (PyG's multi-hot
    rows would be refused as labels), and KongVectorizer reads it as the combined label."""
    from kong_pyg import KongVectorizer

    graphs, classes = paths_and_stars(4)
    rows = [[(j % 2, j % 3) for j in range(n)] for n, _ in graphs]
    write_tu(tmp_path / "root", "PAIRS", graphs, classes, [[f"{a}, {b}" for a, b in r] for r in rows])
    ds = load_tu("PAIRS", tmp_path / "root", cache=tmp_path / "c")
    combos = sorted({p for r in rows for p in r})
    assert ds.num_node_labels == len(combos) == 6
    for d, r in zip(ds, rows):
        assert d.x.sum(1).tolist() == [1.0] * len(r)  # one-hot
        assert d.x.argmax(1).tolist() == [combos.index(p) for p in r]
    X = KongVectorizer(k=1, hops=0).fit_transform(ds)
    assert X.shape[1] == len(combos) and X.sum() == sum(len(r) for r in rows)


def test_one_hot_labels_are_built_in_place():
    # the one-hot matrix is filled in place (no int64 one_hot, no float copy: the result is the peak)
    import numpy as np

    from kong_pyg.datasets.tu_raw import _one_hot_columns

    table = np.array([[3], [-2], [0], [3]])
    out = _one_hot_columns({"node_labels": ("N.txt", b"")}, "node_labels", table)
    assert out.dtype == torch.float32
    assert torch.equal(out, torch.nn.functional.one_hot(torch.tensor([5, 0, 2, 5]), 6).float())
    before = torch.get_default_dtype()
    try:  # float32 whatever the default dtype, as PyG's TUDataset
        torch.set_default_dtype(torch.float64)
        assert _one_hot_columns({"node_labels": ("N.txt", b"")}, "node_labels", table).dtype == torch.float32
    finally:
        torch.set_default_dtype(before)


def test_a_name_with_a_trailing_newline_is_refused(tmp_path):
    with pytest.raises(ValueError, match="'dataset' must be a TU data set name .* got 'MUTAG\\\\n'"):
        load_tu("MUTAG\n", tmp_path, cache=tmp_path / "c")


def test_root_arguments_that_were_misread(tmp_path):
    """A bytes data_root was pathlib's TypeError; MUTAG under a root without it advised a download that
    returns the bundled copy."""
    from kong_pyg.datasets import load_tu

    with pytest.raises(TypeError, match="'data_root' must be a folder path"):
        load_tu("PTC_MR", 1.5)
    with pytest.raises(ValueError, match="unknown data set 'PTC_MR' in '" + re.escape(str(tmp_path))):
        load_tu("PTC_MR", bytes(tmp_path))
    with pytest.raises(ValueError, match="MUTAG is bundled: load it without data_root"):
        load_tu("MUTAG", tmp_path)
    raw = tmp_path / "PTC_MR" / "raw"  # (the raw folder itself: it advised a download)
    raw.mkdir(parents=True)
    with pytest.raises(ValueError, match="is PTC_MR's raw folder: pass the folder two levels up, '"
                       + re.escape(str(tmp_path))):
        load_tu("PTC_MR", raw)
    # a raw "folder" that is a file or a link loop: it said there was none
    other = tmp_path / "other"
    (other / "PTC_MR").mkdir(parents=True)
    (other / "PTC_MR" / "raw").write_text("")
    with pytest.raises(ValueError, match="PTC_MR/raw' is not a folder \\(a file or a broken link\\)"):
        load_tu("PTC_MR", other)
    (other / "PTC_MR" / "raw").unlink()
    (other / "PTC_MR" / "raw").symlink_to(other / "PTC_MR" / "raw")
    with pytest.raises(ValueError, match="PTC_MR/raw' is not a folder"):
        load_tu("PTC_MR", other)


def test_degree_labels_are_in_degrees_of_each_graph_without_self_loops(tmp_path):
    """Without node labels a TU set's nodes get their in-degree, after PyG's loader drops self-loops; and
    add_degree_labels sets in-degrees per graph of a collated storage. On the symmetric TU sets every test
    used, in- and out-degree agree and a self-loop-free file hides the removal: directed graphs with a
    self-loop pin all three (a mutation sweep found out-degree, no offset and kept loops all passing)."""
    from torch_geometric.data import Data, InMemoryDataset

    from kong_pyg.datasets import add_degree_labels
    from kong_pyg.datasets.tu_raw import parse_tu

    # 1 -> 2, a loop at 2, 2 -> 3; 4 -> 5, 4 -> 6
    files = {"A": ("T_A.txt", b"1, 2\n2, 2\n2, 3\n4, 5\n4, 6\n"),
             "graph_indicator": ("T_graph_indicator.txt", b"1\n1\n1\n2\n2\n2\n"),
             "graph_labels": ("T_graph_labels.txt", b"1\n2\n")}
    data, slices, sizes = parse_tu("T", files)
    assert data["edge_index"].tolist() == [[0, 1, 0, 0], [1, 2, 1, 2]]
    assert data["x"].view(-1).tolist() == [0, 1, 1, 0, 1, 1]

    class Collated(InMemoryDataset):
        def __init__(self, graphs):
            super().__init__(None)
            self.data, self.slices = self.collate(graphs)

    star = Data(edge_index=torch.tensor([[1, 1], [0, 2]]), num_nodes=3)  # 1 -> 0, 1 -> 2
    ds = Collated([Data(edge_index=torch.tensor([[0, 1], [1, 2]]), num_nodes=3), star])
    ds._data.x, ds.slices["x"] = torch.zeros(6, 1), torch.tensor([0, 3, 6])
    add_degree_labels(ds)
    assert [ds[i].x.view(-1).tolist() for i in range(2)] == [[0, 1, 1], [1, 0, 1]]
