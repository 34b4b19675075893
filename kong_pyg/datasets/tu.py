r"""Graph-classification data sets in the TU format, read offline.

The `TU collection <https://chrsmrrs.github.io/datasets/>`_ stores a data set
``NAME`` as comma-separated text files ``NAME_A.txt`` (edges),
``NAME_graph_indicator.txt``, ``NAME_graph_labels.txt`` and optional
``NAME_node_labels.txt``, ``NAME_edge_labels.txt``, ...; PyG's
:class:`~torch_geometric.datasets.TUDataset` reads them from
``ROOT/NAME/raw``.

:func:`load_tu` reads the same files with our own checked parser
(:mod:`kong_pyg.datasets.tu_raw`: a malformed file is a :class:`ValueError`
naming the file and line) and builds the same tensors as
:class:`~torch_geometric.datasets.TUDataset` (except for label files of
several columns: one label per distinct row, where PyG makes multi-hot rows). It never writes into the
folder it reads from (it may be read-only), and it never unpickles: the
processed tensors are cached in a folder of ours (:func:`cache_dir`) as
plain NumPy arrays keyed by a hash of the raw files (see
:mod:`kong_pyg.datasets.safe_cache`), where PyG's processed folder would
hold pickles that run code when loaded. MUTAG (188 molecules, about 24 KB
compressed) ships inside the package, so :func:`load_tu` with no arguments
works offline.

.. note::
    Like :class:`~torch_geometric.datasets.TUDataset`, :func:`load_tu`
    removes self-loops and coalesces the edges (sorts every neighborhood by
    node id). TU graphs have no neighbor order to lose, so this is harmless
    for them; it is *not* a loader for ordered graphs.
"""
import difflib
import gzip
import os
import re
import shutil
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple, Union

import torch
from torch import Tensor
from torch_geometric.data import Data, InMemoryDataset

from ..config import check_bool
from ..devices import cpu_by_default
from ..files import check_path, regular_file
from ..warn import warn
from .safe_cache import KEY_PREFIX, content_digest, load_collated, save_collated
from .tu_raw import PARTS, SIZES, parse_tu

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
    :obj:`KONG_PYG_CACHE`, else :obj:`$XDG_CACHE_HOME/kong_pyg` (an absolute one), else
    :obj:`~/.cache/kong_pyg`.
    """
    if path is not None:
        return Path(check_path("cache", path, "folder")).expanduser()
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    xdg = Path(os.environ.get("XDG_CACHE_HOME") or ".").expanduser()
    base = xdg if xdg.is_absolute() else Path.home() / ".cache"  # (a relative one is ignored: the XDG spec)
    return base / "kong_pyg"


def bundled_names() -> List[str]:
    """The data sets shipped inside the package."""
    return list(BUNDLED)


def _check_name(name) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(
            f"'dataset' must be a TU data set name such as 'MUTAG' or 'NCI1' "
            f"(letters, digits, '_', '-', '.'), got {name!r}"
        )
    return name


def _prepare_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise OSError(
            f"cannot create the cache folder {folder} ({err.strerror}); choose a "
            f"writable one with the {CACHE_ENV} environment variable or "
            "'cache_dir' (--cache-dir)"
        ) from err


def _missing(raw: Path, name: str) -> List[str]:
    return [f"{name}_{part}.txt" for part in REQUIRED if not regular_file(raw / f"{name}_{part}.txt")]


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


def _read_folder(raw: Path, name: str) -> Dict[str, Tuple[str, bytes]]:
    """The raw files of :obj:`name` in :obj:`raw` (only read)."""
    missing = _missing(raw, name)
    if missing:
        extra = ""
        if (raw / f"{name}_graph_attributes.txt").is_file():
            extra = f" ({name}_graph_attributes.txt is there: a regression task, not classification)"
        raise FileNotFoundError(
            f"{raw} lacks the raw file(s) {', '.join(missing)} of the TU format (expected "
            f"{name}_A.txt, {name}_graph_indicator.txt, {name}_graph_labels.txt and optional "
            f"{name}_node_labels.txt, ...){extra}"
        )
    files = {}
    for part in PARTS:
        path = raw / f"{name}_{part}.txt"
        if regular_file(path):  # (an optional label file that is a broken link is an error, not absent)
            try:
                files[part] = (str(path), path.read_bytes())
            except OSError as err:
                raise OSError(f"cannot read {path} ({err.strerror})") from err
    return files


def _read_bundled(name: str) -> Dict[str, Tuple[str, bytes]]:
    from importlib import resources

    source = resources.files("kong_pyg.datasets").joinpath("data", name)
    files = {}
    for part in PARTS:
        entry = source.joinpath(f"{name}_{part}.txt.gz")
        if entry.is_file():
            files[part] = (f"{name}_{part}.txt (bundled)", gzip.decompress(entry.read_bytes()))
    return files


def _download(name: str, folder: Path) -> Path:
    """The raw folder of :obj:`name` in the cache, downloaded if incomplete."""
    import zipfile

    from torch_geometric.data import download_url, extract_zip
    from torch_geometric.datasets import TUDataset

    raw = folder / "download" / name / "raw"
    if raw.is_dir() and not _missing(raw, name):
        return raw
    _prepare_folder(raw)
    url = f"{TUDataset.url}/{name}.zip"
    try:
        path = download_url(url, str(raw), log=False)
        extract_zip(path, str(raw), log=False)
        os.remove(path)
    except (OSError, zipfile.BadZipFile) as err:
        (raw / f"{name}.zip").unlink(missing_ok=True)  # a partial archive would be taken as downloaded
        if getattr(err, "code", None) == 404:  # urllib's HTTPError
            raise ValueError(f"there is no TU data set named {name!r}: {url} was not found") from err
        raise OSError(f"could not download the TU data set {name!r} from {url}: {err}; or put its raw "
                      f"files into DIR/{name}/raw and pass data_root=DIR (--data-root DIR)") from err
    inner = raw / name
    if inner.is_dir():
        for p in inner.iterdir():
            os.replace(p, raw / p.name)
        shutil.rmtree(inner, ignore_errors=True)
    return raw


def _locate(name: str, data_root, folder: Path, download: bool) -> Tuple[Dict[str, Tuple[str, bytes]], str]:
    """The raw files of :obj:`name` and where they come from."""
    if data_root is not None:
        base = Path(check_path("data_root", data_root, "folder")).expanduser()
        if not base.is_dir():
            raise FileNotFoundError(f"'data_root' {str(base)!r} is not a folder")
        src_raw = base / name / "raw"
        if src_raw.is_dir():
            return _read_folder(src_raw, name), str(src_raw)
        if os.path.lexists(src_raw):  # (a file, a broken link or a link loop: not "no such folder")
            raise ValueError(f"{str(src_raw)!r} is not a folder (a file or a broken link); it must be the "
                             f"folder of {name}'s raw files ({name}_A.txt, ...)")
        if (base / "raw").is_dir() and base.name == name:
            raise ValueError(f"'data_root' is the folder that holds {name}/raw; {str(base)!r} is {name}'s "
                             f"own folder: pass its parent instead, {str(base.parent)!r}")
        if base.name == "raw" and base.parent.name == name:
            raise ValueError(f"'data_root' is the folder that holds {name}/raw; {str(base)!r} is {name}'s "
                             f"raw folder: pass the folder two levels up, {str(base.parent.parent)!r}")
        if not download:
            found = _available(base)
            listing = f"it holds {', '.join(found)}" if found else "it holds no NAME/raw folders"
            fetch = (f"{name} is bundled: load it without data_root (--data-root)" if name in BUNDLED
                     else "Pass download=True (the kong-pyg CLI's --download) to fetch it from the TU "
                     "collection")
            raise ValueError(
                f"unknown data set {name!r} in {str(base)!r}: there is no "
                f"{src_raw}{_suggest(name, found)}; {listing}. {fetch}."
            )
    if name in BUNDLED:
        from importlib import resources

        return _read_bundled(name), str(resources.files("kong_pyg.datasets").joinpath("data", name))
    if not download:
        raise ValueError(
            f"unknown data set {name!r}{_suggest(name, list(BUNDLED))}: only "
            f"{', '.join(BUNDLED)} is bundled. Pass a data_root (--data-root DIR "
            f"holding DIR/{name}/raw/{name}_A.txt, ...) or download=True "
            "(the kong-pyg CLI's --download) to fetch it from the TU collection."
        )
    raw = _download(name, folder)
    return _read_folder(raw, name), str(raw)


#: The version of the tensors built from raw files (in the cache key): 2 numbers multi-column labels as
#: one label per distinct row.
TU_LAYOUT = 2


class TUGraphs(InMemoryDataset):
    r"""A TU graph-classification data set in memory (what :func:`load_tu` returns).

    A PyG :class:`~torch_geometric.data.InMemoryDataset` with the tensors
    PyG's :class:`~torch_geometric.datasets.TUDataset` builds (one-hot
    :obj:`x` and :obj:`edge_attr`, :obj:`y` in :obj:`0..C-1`), without its
    processed folder.

    Args:
        name (str): The data set.
        data (dict): :obj:`Data.to_dict()` of the collated graphs.
        slices (dict): Their slices.
        sizes (dict): :obj:`num_node_labels` and :obj:`num_edge_labels`.
        raw_dir (str): Where the raw files were read.
        transform (callable, optional): A transform applied on access.
    """

    def __init__(self, name: str, data: Dict[str, Tensor], slices: Dict[str, Tensor],
                 sizes: Dict[str, int], raw_dir: str, transform: Optional[Callable] = None):
        self.name = name
        self.sizes = dict(sizes)
        self._raw = raw_dir
        super().__init__(None, transform, log=False)
        self.slices = slices
        self.data = Data.from_dict(data)

    @property
    def raw_dir(self) -> str:
        """The folder the raw files were read from."""
        return self._raw

    @property
    def num_node_labels(self) -> int:
        """Width of the one-hot node labels (0: :obj:`x` holds node degrees)."""
        return int(self.sizes.get("num_node_labels", 0))

    @property
    def num_edge_labels(self) -> int:
        """Width of the one-hot edge labels (0: no :obj:`edge_attr`)."""
        return int(self.sizes.get("num_edge_labels", 0))

    @property
    def num_node_attributes(self) -> int:
        """Always 0: node attributes are not loaded."""
        return 0

    @property
    def num_edge_attributes(self) -> int:
        """Always 0: edge attributes are not loaded."""
        return 0

    def __repr__(self) -> str:
        return f"{self.name}({len(self)})"


@cpu_by_default
def load_tu(
    name: Optional[str] = None,
    data_root: Optional[Union[str, Path]] = None,
    *,
    cache: Optional[Union[str, Path]] = None,
    download: bool = False,
) -> TUGraphs:
    r"""Load a TU graph-classification data set as a PyG in-memory dataset.

    Where the raw files come from:

    * :obj:`data_root` given: :obj:`data_root/name/raw` (PyG's layout). The
      folder is only read.
    * otherwise a data set bundled with the package (:obj:`"MUTAG"`; also
      the default :obj:`name`);
    * otherwise, with :obj:`download=True`, the TU collection (needs
      network; the raw files go into the cache).

    The graphs are what PyG's :class:`~torch_geometric.datasets.TUDataset`
    builds: node labels become the one-hot :obj:`x` (node attributes are
    dropped), edge labels the one-hot :obj:`edge_attr` (where a label file
    has several columns, every distinct row is one label, one-hot, where PyG
    would make multi-hot rows that KONG cannot read as labels), self-loops are
    removed and edges coalesced. A data set without node labels gets each
    node's in-degree as its label, with a :class:`NoNodeLabelsWarning`.

    The processed tensors are cached in :func:`cache_dir` as plain NumPy
    arrays (never a pickle), keyed by a hash of the raw files' content, so
    changed raw files are picked up and a file of another format or other
    raw files is ignored. The cache is not signed: whoever can write its
    folder can change the graphs it serves (never run code), so keep it
    private where the data must be trusted. An unwritable cache only costs
    the caching (with a warning).

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
        ValueError: An unknown name, or malformed raw files (the file and
            line are named).
        FileNotFoundError: :obj:`data_root` or required raw files missing.
        OSError: A download that failed (no network, a full disk); a
            partial archive is removed, so the next call fetches it again.
    """
    name = _check_name("MUTAG" if name is None else name)
    download = check_bool("download", download)  # ("no" is truthy: it would download)
    folder = cache_dir(cache)
    files, source = _locate(name, data_root, folder, download)
    digest = content_digest((part, content) for part, (_, content) in sorted(files.items()))
    key = f"{KEY_PREFIX}|tu-{TU_LAYOUT}|{name}|{digest}"
    path = folder / "tu" / f"{name}-{digest[:24]}.npz"
    cached = load_collated(path, key)
    if cached is not None and set(cached.extra) == set(SIZES):
        data, slices = cached.data, cached.slices
        sizes = {k: int(v) for k, v in cached.extra.items()}
    else:
        data, slices, sizes = parse_tu(name, files)
        try:
            save_collated(path, key, data, slices, {k: torch.tensor(v) for k, v in sizes.items()})
        except OSError as err:
            warn(f"could not write the cache file {path} ({err}); the raw files "
                 "will be parsed again next time")
    if sizes.get("num_node_labels", 0) == 0:
        warn(
            f"data set {name!r} has no node labels ({name}_node_labels.txt); using "
            "node degrees as labels",
            NoNodeLabelsWarning)
    return TUGraphs(name, data, slices, sizes, source)


@cpu_by_default
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
    dev = data.edge_index.device  # (a storage moved to a GPU: its slices stay on the CPU)
    edge_graph = torch.repeat_interleave(torch.arange(num_graphs), edge_ptr[1:] - edge_ptr[:-1])
    target = data.edge_index[1] + node_ptr[:-1][edge_graph].to(dev)
    degree = torch.bincount(target, minlength=int(node_ptr[-1]))
    data.x = degree.view(-1, 1)
    slices["x"] = node_ptr
    dataset._data_list = None


__all__ = [
    "load_tu",
    "TUGraphs",
    "cache_dir",
    "bundled_names",
    "add_degree_labels",
    "NoNodeLabelsWarning",
    "BUNDLED",
    "CACHE_ENV",
]
