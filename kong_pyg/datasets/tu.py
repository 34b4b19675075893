r"""Graph-classification data sets in the TU format, read offline.

The `TU collection <https://chrsmrrs.github.io/datasets/>`_ stores a data set
``NAME`` as comma-separated text files ``NAME_A.txt`` (edges),
``NAME_graph_indicator.txt``, ``NAME_graph_labels.txt`` and optional
``NAME_node_labels.txt``, ``NAME_edge_labels.txt``, ...; PyG's
:class:`~torch_geometric.datasets.TUDataset` reads them from
``ROOT/NAME/raw`` and writes ``ROOT/NAME/processed``.

:func:`load_tu` never writes into the folder it reads from (it may be
read-only): raw files are copied into a cache folder of ours
(:func:`cache_dir`) and processed there. MUTAG (188 molecules, about 24 KB
compressed) ships inside the package, so :func:`load_tu` with no arguments
works offline.

.. note::
    :class:`~torch_geometric.datasets.TUDataset` removes self-loops and
    coalesces the edges (sorts every neighborhood by node id). TU graphs have
    no neighbor order to lose, so this is harmless for them; it is *not* a
    loader for ordered graphs.
"""
import difflib
import gzip
import hashlib
import os
import re
import shutil
import warnings
from pathlib import Path
from typing import List, Optional, Union

import torch

#: Data sets shipped inside the package.
BUNDLED = ("MUTAG",)

#: The environment variable that overrides the cache folder.
CACHE_ENV = "KONG_PYG_CACHE"

#: Files every TU data set needs.
REQUIRED = ("A", "graph_indicator", "graph_labels")

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-.]*$")


class NoNodeLabelsWarning(UserWarning):
    """A data set has no discrete node labels; node degrees are used instead."""


def cache_dir(path: Optional[Union[str, Path]] = None) -> Path:
    r"""The folder where kong_pyg keeps processed data sets.

    :obj:`path` if given, else the environment variable
    :obj:`KONG_PYG_CACHE`, else :obj:`$XDG_CACHE_HOME/kong_pyg`, else
    :obj:`~/.cache/kong_pyg`.
    """
    if path is not None:
        return Path(path).expanduser()
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "kong_pyg"


def bundled_names() -> List[str]:
    """The data sets shipped inside the package."""
    return list(BUNDLED)


def _check_name(name) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(
            f"'dataset' must be a TU data set name such as 'MUTAG' or 'NCI1' "
            f"(letters, digits, '_', '-', '.'), got {name!r}"
        )
    return name


def _write_if_changed(path: Path, content: bytes) -> bool:
    if path.is_file() and path.stat().st_size == len(content) and path.read_bytes() == content:
        return False
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_bytes(content)
    os.replace(tmp, path)
    return True


def _copy_if_changed(src: Path, dst: Path) -> bool:
    if dst.is_file():
        s, d = src.stat(), dst.stat()
        if s.st_size == d.st_size and int(s.st_mtime) == int(d.st_mtime):
            return False
    tmp = dst.with_name(dst.name + f".tmp{os.getpid()}")
    shutil.copy2(src, tmp)
    os.replace(tmp, dst)
    return True


def _prepare_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise OSError(
            f"cannot create the cache folder {folder} ({err.strerror}); choose a "
            f"writable one with the {CACHE_ENV} environment variable or "
            "'cache_dir' (--cache-dir)"
        ) from err


def _raw_files(raw: Path, name: str) -> List[Path]:
    return sorted(p for p in raw.glob(f"{name}_*.txt") if p.is_file())


def _missing(raw: Path, name: str) -> List[str]:
    return [f"{name}_{part}.txt" for part in REQUIRED if not (raw / f"{name}_{part}.txt").is_file()]


def _available(root: Path) -> List[str]:
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "raw").is_dir())


def _suggest(name: str, candidates: List[str]) -> str:
    lower = {c.lower(): c for c in candidates}
    if name.lower() in lower:
        return f" (did you mean '{lower[name.lower()]}'? names are case-sensitive)"
    close = difflib.get_close_matches(name, candidates, n=3, cutoff=0.6)
    return f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""


def _stage_bundled(name: str, cache: Path) -> Path:
    """Decompress a bundled data set's raw files into the cache; its root."""
    from importlib import resources

    root = cache / "bundled"
    raw = root / name / "raw"
    _prepare_folder(raw)
    source = resources.files("kong_pyg.datasets").joinpath("data", name)
    changed = False
    for entry in source.iterdir():
        if not entry.name.endswith(".gz"):
            continue
        content = gzip.decompress(entry.read_bytes())
        changed |= _write_if_changed(raw / entry.name[:-3], content)
    if changed:
        shutil.rmtree(root / name / "processed", ignore_errors=True)
    return root


def _stage_copy(name: str, src_raw: Path, cache: Path) -> Path:
    """Copy :obj:`src_raw` into the cache (never writing there); the root."""
    key = hashlib.sha1(str(src_raw.resolve()).encode()).hexdigest()[:12]
    root = cache / "tu" / key
    raw = root / name / "raw"
    _prepare_folder(raw)
    changed = False
    wanted = _raw_files(src_raw, name)
    for src in wanted:
        changed |= _copy_if_changed(src, raw / src.name)
    keep = {p.name for p in wanted}
    for old in _raw_files(raw, name):
        if old.name not in keep:
            old.unlink()
            changed = True
    if changed:
        shutil.rmtree(root / name / "processed", ignore_errors=True)
    return root


def load_tu(
    name: Optional[str] = None,
    data_root: Optional[Union[str, Path]] = None,
    *,
    cache: Optional[Union[str, Path]] = None,
    download: bool = False,
):
    r"""Load a TU graph-classification data set as a PyG :class:`~torch_geometric.datasets.TUDataset`.

    Where the raw files come from:

    * :obj:`data_root` given: :obj:`data_root/name/raw` (PyG's layout). The
      folder is only read: its files are copied into :func:`cache_dir` and
      processed there.
    * otherwise a data set bundled with the package (:obj:`"MUTAG"`; also
      the default :obj:`name`);
    * otherwise, with :obj:`download=True`, PyG downloads the data set into
      the cache (needs network).

    Node labels become the one-hot :obj:`x` (node attributes are dropped),
    edge labels the one-hot :obj:`edge_attr`. A data set without node labels
    gets each node's degree as its label, with a
    :class:`NoNodeLabelsWarning`.

    Args:
        name (str, optional): The data set, for instance :obj:`"NCI1"`.
            (default: :obj:`"MUTAG"`)
        data_root (str or Path, optional): A folder holding
            :obj:`name/raw/name_*.txt`. (default: :obj:`None`)
        cache (str or Path, optional): The cache folder (see
            :func:`cache_dir`). (default: :obj:`None`)
        download (bool, optional): Download a data set that is neither in
            :obj:`data_root` nor bundled. (default: :obj:`False`)

    Raises:
        ValueError: An unknown name, or a data set without graph labels.
        FileNotFoundError: :obj:`data_root` or required raw files missing.
    """
    from torch_geometric.datasets import TUDataset

    name = _check_name("MUTAG" if name is None else name)
    folder = cache_dir(cache)
    root: Optional[Path] = None
    if data_root is not None:
        base = Path(data_root).expanduser()
        if not base.is_dir():
            raise FileNotFoundError(f"'data_root' {str(base)!r} is not a folder")
        src_raw = base / name / "raw"
        if src_raw.is_dir():
            missing = _missing(src_raw, name)
            if missing:
                raise FileNotFoundError(
                    f"{src_raw} lacks the raw file(s) {', '.join(missing)} of the TU "
                    f"format (expected {name}_A.txt, {name}_graph_indicator.txt, "
                    f"{name}_graph_labels.txt and optional {name}_node_labels.txt, ...)"
                )
            root = _stage_copy(name, src_raw, folder)
        elif not download:
            found = _available(base)
            listing = f"it holds {', '.join(found)}" if found else "it holds no NAME/raw folders"
            raise ValueError(
                f"unknown data set {name!r} in {str(base)!r}: there is no "
                f"{src_raw}{_suggest(name, found)}; {listing}. Pass download=True "
                "(--download) to fetch it from the TU collection."
            )
    if root is None and name in BUNDLED:
        root = _stage_bundled(name, folder)
    if root is None:
        if not download:
            raise ValueError(
                f"unknown data set {name!r}{_suggest(name, list(BUNDLED))}: only "
                f"{', '.join(BUNDLED)} is bundled. Pass a data_root (--data-root DIR "
                f"holding DIR/{name}/raw/{name}_A.txt, ...) or download=True "
                "(--download) to fetch it from the TU collection."
            )
        root = folder / "download"
        _prepare_folder(root)
    try:
        dataset = TUDataset(str(root), name)
    except (OSError, RuntimeError) as err:
        if download and not (root / name / "raw" / f"{name}_A.txt").is_file():
            raise ValueError(
                f"could not download the TU data set {name!r} (unknown name, or "
                f"no network): {err}"
            ) from err
        raise
    _check_labels(dataset, name)
    return dataset


def _check_labels(dataset, name: str) -> None:
    data = dataset._data
    y = data.y
    if y is None:
        raise ValueError(f"data set {name!r} has no graph labels ({name}_graph_labels.txt)")
    if y.is_floating_point():
        raise ValueError(
            f"data set {name!r} has real-valued graph attributes (a regression task), "
            "not class labels"
        )
    x = data.x
    if x is None or x.dim() != 2 or x.size(1) == 0:
        warnings.warn(
            f"data set {name!r} has no node labels ({name}_node_labels.txt); using "
            "node degrees as labels",
            NoNodeLabelsWarning,
            stacklevel=3,
        )
        add_degree_labels(dataset)


def add_degree_labels(dataset) -> None:
    r"""Set :obj:`x` of every graph of an in-memory PyG dataset to its in-degree.

    One integer label per node, set in place and vectorized.

    Args:
        dataset (torch_geometric.data.InMemoryDataset): A collated dataset
            (for instance a :class:`~torch_geometric.datasets.TUDataset`).
    """
    data, slices = dataset._data, dataset.slices
    if "x" in slices:
        node_ptr = slices["x"]
    else:
        sizes = data._num_nodes if isinstance(data._num_nodes, list) else None
        if sizes is None:
            raise ValueError("cannot find the number of nodes of every graph of the dataset")
        node_ptr = torch.zeros(len(sizes) + 1, dtype=torch.long)
        node_ptr[1:] = torch.tensor(sizes, dtype=torch.long).cumsum(0)
    edge_ptr = slices["edge_index"]
    num_graphs = node_ptr.numel() - 1
    edge_graph = torch.repeat_interleave(torch.arange(num_graphs), edge_ptr[1:] - edge_ptr[:-1])
    target = data.edge_index[1] + node_ptr[:-1][edge_graph]
    degree = torch.bincount(target, minlength=int(node_ptr[-1]))
    data.x = degree.view(-1, 1)
    slices["x"] = node_ptr
    dataset._data_list = None


__all__ = [
    "load_tu",
    "cache_dir",
    "bundled_names",
    "add_degree_labels",
    "NoNodeLabelsWarning",
    "BUNDLED",
    "CACHE_ENV",
]
