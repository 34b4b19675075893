"""Caches never run code: a pickle planted in any cache file is ignored (and the data rebuilt)."""
import os
import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from ml_fake import write_fake_ml100k

from kong_pyg.datasets import MovieLensOrdered, load_tu
from kong_pyg.datasets.safe_cache import FORMAT, load_collated, save_collated


class Payload:
    """Unpickling this writes a marker file (what an attacker's code would do)."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').write('ran')",))


def plant(path: Path, marker: Path, how: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if how == "torch":  # what PyG's data.pt / pre_transform.pt would hold
        torch.save((Payload(marker), {}, {}, dict), path)
    elif how == "pickle":
        path.write_bytes(pickle.dumps(Payload(marker)))
    elif how == "npz-object":  # an .npz whose array needs pickle
        with open(path, "wb") as f:
            np.savez(f, __key__=np.array("x"), **{"data/x": np.array([Payload(marker)], dtype=object)})
    else:
        raise AssertionError(how)


def test_the_payload_is_real(tmp_path):
    # control: PyG's fallback (weights_only=False) runs it, so the tests below can fail
    marker = tmp_path / "ran"
    plant(tmp_path / "data.pt", marker, "torch")
    torch.load(tmp_path / "data.pt", weights_only=False)
    assert marker.read_text() == "ran"


def same_graphs(a, b) -> bool:
    return all(torch.equal(getattr(a._data, k), getattr(b._data, k)) for k in ("x", "edge_index", "y"))


@pytest.mark.parametrize("how", ["torch", "pickle", "npz-object"])
def test_tu_cache_with_planted_pickles_runs_nothing(tmp_path, how):
    cache = tmp_path / "cache"
    marker = tmp_path / "ran"
    first = load_tu("MUTAG", cache=cache)
    ours = sorted(cache.rglob("*.npz"))
    assert ours, "load_tu wrote no cache file"
    # every file of ours, and every file PyG's TUDataset would read, in the old and new layouts
    targets = ours + [cache / sub / "MUTAG" / "processed" / f
                      for sub in ("bundled", "download", "tu/0123456789ab")
                      for f in ("data.pt", "pre_transform.pt", "pre_filter.pt")]
    for path in targets:
        plant(path, marker, how)
    again = load_tu("MUTAG", cache=cache)
    assert not marker.exists()
    assert same_graphs(first, again)
    # the planted file of ours was replaced by a good one
    assert load_collated(ours[0], "nothing") is None
    third = load_tu("MUTAG", cache=cache)
    assert same_graphs(first, third) and not marker.exists()


def test_tu_cache_key_is_the_raw_content(tmp_path):
    from test_tu import write_bundled_raw

    raw = write_bundled_raw(tmp_path / "root" / "MUTAG" / "raw")
    cache = tmp_path / "cache"
    load_tu("MUTAG", tmp_path / "root", cache=cache)
    files = sorted(cache.rglob("*.npz"))
    assert len(files) == 1
    stamp = files[0].stat().st_mtime_ns
    # the bundled copy has the same content: the same cache file, not rewritten
    load_tu("MUTAG", cache=cache)
    assert sorted(cache.rglob("*.npz")) == files and files[0].stat().st_mtime_ns == stamp
    # one changed byte of content (same size, same mtime) is a new key
    labels = raw / "MUTAG_graph_labels.txt"
    st = labels.stat()
    text = labels.read_text()
    labels.write_text(text.replace("-1", "-2", 1))
    import os

    os.utime(labels, ns=(st.st_atime_ns, st.st_mtime_ns))
    ds = load_tu("MUTAG", tmp_path / "root", cache=cache)
    assert len(sorted(cache.rglob("*.npz"))) == 2
    assert ds._data.y.max() == 2  # three classes now


def test_tu_cache_foreign_or_damaged_files_are_rebuilt(tmp_path):
    cache = tmp_path / "cache"
    first = load_tu("MUTAG", cache=cache)
    (path,) = cache.rglob("*.npz")
    key = None
    for content in (b"", b"PK\x03\x04 truncated", path.read_bytes()[:100]):
        path.write_bytes(content)
        assert same_graphs(first, load_tu("MUTAG", cache=cache))
    # a well-formed archive with the right key but inconsistent slices is rebuilt too
    with np.load(path) as z:
        key = str(z["__key__"])
    data = {k: v.clone() for k, v in first._data.to_dict().items()}
    slices = {k: v.clone() for k, v in first.slices.items()}
    slices["x"][-1] = 10 ** 9
    save_collated(path, key, data, slices)
    assert load_collated(path, key) is None
    assert same_graphs(first, load_tu("MUTAG", cache=cache))
    assert key.startswith(FORMAT)
    # slices of another length (graphs dropped), an end short of the data, an extra entry not a number
    sizes = {"num_node_labels": torch.tensor(7)}
    for broken, extra in ((dict(slices, x=first.slices["x"][:100]), sizes),
                          (dict(slices, x=first.slices["x"] // 2), sizes),
                          (dict(first.slices), {"num_node_labels": torch.tensor([7, 7])})):
        save_collated(path, key, data, broken, extra)
        assert load_collated(path, key) is None
        assert same_graphs(first, load_tu("MUTAG", cache=cache))


def test_tu_unwritable_cache_still_loads(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.warns(UserWarning, match="could not write the cache file"):
        ds = load_tu("MUTAG", cache=blocker)
    assert len(ds) == 188


@pytest.mark.parametrize("how", ["torch", "pickle", "npz-object"])
def test_movielens_cache_with_planted_pickles_runs_nothing(tmp_path, monkeypatch, how):
    def no_network(self):
        raise AssertionError("the network was touched")

    monkeypatch.setattr(MovieLensOrdered, "download", no_network)
    write_fake_ml100k(tmp_path / "ml")
    root = tmp_path / "root"
    marker = tmp_path / "ran"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = MovieLensOrdered(str(root), ml_dir=str(tmp_path / "ml"))
    processed = root / "processed"
    files = sorted(processed.iterdir())
    assert [p.suffix for p in files] == [".npz"]  # no pre_transform.pt / pre_filter.pt
    for path in files + [processed / f for f in ("pre_transform.pt", "pre_filter.pt", "data.pt")]:
        plant(path, marker, how)
    again = MovieLensOrdered(str(root))
    assert not marker.exists()
    assert torch.equal(first._data.edge_index, again._data.edge_index)
    assert torch.equal(first._data.y, again._data.y)


def test_movielens_cache_follows_raw_content(tmp_path, monkeypatch):
    monkeypatch.setattr(MovieLensOrdered, "download", lambda self: None)
    ratings, users, _ = write_fake_ml100k(tmp_path / "ml")
    root = tmp_path / "root"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = MovieLensOrdered(str(root), ml_dir=str(tmp_path / "ml"), genre="first")
        # flip every gender in raw/u.user: the processed file must not be reused
        user = root / "raw" / "u.user"
        flipped = user.read_text().replace("|F|", "|T|").replace("|M|", "|F|").replace("|T|", "|M|")
        user.write_text(flipped)
        again = MovieLensOrdered(str(root), genre="first")
    assert torch.equal(again._data.y, 1 - first._data.y)


def test_cache_write_never_follows_a_planted_link(tmp_path, monkeypatch):
    # a shared cache: another user plants links at every name a write could use; the victim's file survives
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    target = tmp_path / "shared" / "tu" / "X.npz"
    target.parent.mkdir(parents=True)
    for name in (f"X.npz.tmp{os.getpid()}", ".X.npz.tmp", f".X.npz.{os.getpid()}.tmp"):
        (target.parent / name).symlink_to(victim)
    data = {"x": torch.arange(4.0).view(4, 1)}
    save_collated(target, "k", data, {"x": torch.tensor([0, 2, 4])})
    assert victim.read_text() == "precious\n"
    assert torch.equal(load_collated(target, "k").data["x"], data["x"])
    # a link at the target itself is replaced (rename), not written through
    target.unlink()
    target.symlink_to(victim)
    save_collated(target, "k", data, {"x": torch.tensor([0, 2, 4])})
    assert victim.read_text() == "precious\n" and not target.is_symlink()


def test_cache_refuses_compressed_or_oversized_members_before_reading(tmp_path, monkeypatch):
    path = tmp_path / "b.npz"
    reads = []
    real = np.load
    monkeypatch.setattr(np, "load", lambda *a, **k: reads.append(a) or real(*a, **k))
    np.savez_compressed(path, __key__=np.zeros(1_000_000))  # (a 1000x deflate bomb of its kind)
    assert load_collated(path, "k") is None and reads == []
    np.savez(path, __key__=np.zeros(10_000))  # a stored key far longer than any key
    assert load_collated(path, "k") is None and reads == []
    # the same data written by save_collated is read (and a compressed copy of it is not)
    save_collated(path, "k", {"x": torch.ones(3, 1)}, {"x": torch.tensor([0, 3])})
    assert load_collated(path, "k") is not None
    with np.load(path) as z:
        members = {name: z[name] for name in z.files}
    np.savez_compressed(path, **members)
    assert load_collated(path, "k") is None


def test_movielens_damaged_processed_file_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setattr(MovieLensOrdered, "download", lambda self: None)
    write_fake_ml100k(tmp_path / "ml")
    root = tmp_path / "root"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = MovieLensOrdered(str(root), ml_dir=str(tmp_path / "ml"))
    (path,) = (root / "processed").glob("*.npz")
    raw = bytearray(path.read_bytes())
    at = raw.index(b"data/x.npy") + 200  # a byte inside a member: its CRC fails, its key still reads
    raw[at] ^= 0xFF
    path.write_bytes(bytes(raw))
    again = MovieLensOrdered(str(root))
    assert torch.equal(first._data.x, again._data.x)
    assert torch.equal(first._data.edge_index, again._data.edge_index)


def test_atomic_write_permissions_are_set_on_the_descriptor(tmp_path, monkeypatch):
    # (by path, a name swapped for a link between mkstemp and chmod would change another file's mode)
    from kong_pyg import files

    def no_chmod_by_path(*args, **kwargs):
        raise AssertionError("chmod by path")

    monkeypatch.setattr(os, "chmod", no_chmod_by_path)
    files.atomic_write([b"x"], tmp_path / "f")
    mask = os.umask(0o022)
    os.umask(mask)
    assert (tmp_path / "f").stat().st_mode & 0o777 == 0o666 & ~mask


def test_cache_refuses_repeated_members_before_reading(tmp_path, monkeypatch):
    """A zip directory that lists one stored member many times had it read once per entry (a cache of
    3 MB read 37 GB); such archives, and members adding up to more than the file, are refused unread."""
    import zipfile

    path = tmp_path / "c.npz"
    save_collated(path, "k", {"x": torch.ones(3, 1)}, {"x": torch.tensor([0, 3])})
    assert load_collated(path, "k") is not None
    with zipfile.ZipFile(path, "a") as archive, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ("Duplicate name")
        for _ in range(3):
            archive.writestr("data/pad.npy", _npy(np.zeros(1000)))
    reads = []
    real = np.load
    monkeypatch.setattr(np, "load", lambda *a, **k: reads.append(a) or real(*a, **k))
    assert load_collated(path, "k") is None and reads == []
    # the same directory entry three times: members "larger" than the file
    path2 = tmp_path / "d.npz"
    save_collated(path2, "k", {"x": torch.ones(3, 1)}, {"x": torch.tensor([0, 3])})
    blob = bytearray(path2.read_bytes())
    end = blob.rfind(b"PK\x05\x06")
    start = int.from_bytes(blob[end + 16:end + 20], "little")
    size = int.from_bytes(blob[end + 12:end + 16], "little")
    entries = blob[start:start + size]
    count = int.from_bytes(blob[end + 10:end + 12], "little")
    tail = bytearray(blob[end:])
    tail[8:10] = tail[10:12] = (count * 3).to_bytes(2, "little")
    tail[12:16] = (size * 3).to_bytes(4, "little")
    path2.write_bytes(bytes(blob[:start]) + bytes(entries) * 3 + bytes(tail))
    assert load_collated(path2, "k") is None and reads == []


def _npy(array: np.ndarray) -> bytes:
    import io

    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def test_cache_entries_must_fit_how_pyg_slices_them(tmp_path):
    """A forged cache with the right key: data without a slice was served as an attribute, a slice
    could end at another dimension of its tensor, and edge_index could hold floats. Slices that go
    back (a graph of -3 nodes, read as an empty one) or do not start at 0 are refused too."""
    path = tmp_path / "e.npz"
    x, ei = torch.ones(5, 2), torch.tensor([[0, 1, 2, 3], [1, 0, 3, 2]])
    data = {"x": x, "edge_index": ei}
    slices = {"x": torch.tensor([0, 2, 5]), "edge_index": torch.tensor([0, 2, 4])}
    save_collated(path, "k", data, slices)
    assert load_collated(path, "k") is not None
    grows = dict(slices, x=torch.tensor([0, 4, 5]), edge_index=torch.tensor([0, 3, 4]))
    save_collated(path, "k", data, grows)
    assert load_collated(path, "k") is not None  # (other sizes that grow: a good file)
    for bad_data, bad_slices in (
        (dict(data, pad=torch.zeros(3)), slices),  # data without a slice
        (data, dict(slices, x=torch.tensor([0, 1, 2]))),  # x's slice ends at its 2 columns, not 5 rows
        (data, dict(slices, edge_index=torch.tensor([0, 1, 2]))),  # ends at edge_index's 2 rows
        (dict(data, edge_index=ei.float()), slices),
        (data, dict(slices, x=torch.tensor([0, 5, 2, 5]), edge_index=torch.tensor([0, 2, 4, 4]))),  # back
        (data, dict(slices, x=torch.tensor([1, 2, 5]))),  # does not start at 0
    ):
        save_collated(path, "k", bad_data, bad_slices)
        assert load_collated(path, "k") is None


def test_tu_cache_without_its_sizes_is_rebuilt(tmp_path):
    """A TU cache lacking its label counts gave 'no node labels' (and degree labels were assumed)."""
    cache = tmp_path / "cache"
    first = load_tu("MUTAG", cache=cache)
    (path,) = cache.rglob("*.npz")
    with np.load(path) as z:
        key = str(z["__key__"])
    save_collated(path, key, first._data.to_dict(), dict(first.slices))  # (no extra entries)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = load_tu("MUTAG", cache=cache)
    assert same_graphs(first, again) and again.num_node_labels == first.num_node_labels == 7


def _stored(graphs, data_cls):
    """A SafeInMemoryDataset class whose process() stores :obj:`graphs`, loaded as :obj:`data_cls`."""
    from kong_pyg.datasets.safe_cache import SafeInMemoryDataset

    class Stored(SafeInMemoryDataset):
        raw_file_names: list = []
        processed_file_names = ["stored.npz"]

        def download(self):
            pass

        def process(self):
            self.save_collated(*self.collate(graphs), self.processed_paths[0])

        def __init__(self, root):
            super().__init__(root)
            self.load(self.processed_paths[0], data_cls)

    return Stored


def test_a_data_class_with_its_own_cat_dim_still_loads(tmp_path):
    """The slices are checked along PyG's concatenation rule; a subclass collating a Data class with its own
    __cat_dim__ (PyG's PairData pattern) was refused on every load by the plain-Data rule (review)."""
    from torch_geometric.data import Data

    class PairData(Data):
        def __cat_dim__(self, key, value, *args, **kwargs):
            return 1 if key == "feat" else super().__cat_dim__(key, value, *args, **kwargs)

    ei = torch.tensor([[0, 1], [1, 2]])
    graphs = [PairData(x=torch.ones(3, 2), edge_index=ei, feat=torch.ones(4, 2 + i)) for i in range(3)]
    Pairs = _stored(graphs, PairData)
    for _ in range(2):  # (built, then read from the file)
        ds = Pairs(str(tmp_path / "pairs"))
        assert ds[1].feat.shape == (4, 3) and ds[2].x.shape == (3, 2)


def test_a_plain_data_subclass_checks_its_slices_when_it_loads(tmp_path):
    """A subclass that does not name its Data class is checked leniently before processing (any class may
    be loaded), then strictly by load() with the class it is given: a forged slice is refused (review)."""
    from torch_geometric.data import Data

    ei = torch.tensor([[0, 1], [1, 2]])
    Plain = _stored([Data(x=torch.ones(3 + i, 2), edge_index=ei) for i in range(2)], Data)
    first = Plain(str(tmp_path / "p"))
    path = first.processed_paths[0]
    slices = dict(first.slices, x=torch.tensor([0, 1, 2]))  # (ends at x's 2 columns, not its 7 rows)
    save_collated(path, first.cache_key(), first._data.to_dict(), slices)
    with pytest.raises(ValueError, match="is not a processed file of Stored"):
        Plain(str(tmp_path / "p"))
