import os
import shutil
import stat
from pathlib import Path

import pytest
import torch
from tu_helpers import paths_and_stars, write_tu

from kong_pyg.datasets import NoNodeLabelsWarning, cache_dir, load_tu

SHARED = Path(os.environ.get("KONG_PYG_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


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


def test_data_root_is_only_read(tmp_path):
    root = tmp_path / "root"
    bundled = load_tu(cache=tmp_path / "c1")
    shutil.copytree(Path(bundled.raw_dir), root / "MUTAG" / "raw")
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
