r"""Processed-data caches that never unpickle.

A cache folder may be shared (``~/.cache``, a team's ``--cache-dir``), so
anyone who can write it must not be able to run code in the process that
reads it. PyG's :class:`~torch_geometric.data.InMemoryDataset` loads
``processed/pre_transform.pt`` and ``pre_filter.pt`` with
``torch.load(weights_only=False)`` and falls back to it for its data file: a
planted pickle there runs its payload. Our caches instead are NumPy ``.npz``
archives of plain arrays read with ``allow_pickle=False`` (no pickle at
all), each holding a text *key* that names what it was built from (the
format, the data set, the options and a hash of the raw files' content). A
file that cannot be read, is not such an archive, or has another key is
ignored and rebuilt. The key is not a signature: anyone who can write the
folder and knows the raw files can write an archive with the right key and
other arrays, which is read as data (no code runs). A folder shared with
writers you do not trust can change your data, not your process.

:class:`SafeInMemoryDataset` is an :class:`~torch_geometric.data.InMemoryDataset`
with this cache in place of PyG's: it never reads (nor writes)
``pre_transform.pt``/``pre_filter.pt``, and its :meth:`load` reads only such
archives.
"""
import hashlib
import os
import os.path as osp
import zipfile
from pathlib import Path
from typing import Dict, Iterable, NamedTuple, Optional, Tuple, Type, Union

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Data, InMemoryDataset

from .. import __version__
from ..files import atomic_file

#: Version of the cache layout; part of every key.
FORMAT = "kong_pyg-cache-1"
#: How every key starts: the layout and the package's version (a cache of other code is rebuilt).
KEY_PREFIX = f"{FORMAT}|kong_pyg-{__version__}"

_KEY = "__key__"
_DATA = "data/"
_SLICES = "slices/"

_EXTRA = "extra/"


class Collated(NamedTuple):
    """A cached collated dataset: :obj:`Data.to_dict()`, slices, and extra tensors."""

    data: Dict[str, Tensor]
    slices: Dict[str, Tensor]
    extra: Dict[str, Tensor]


def content_digest(parts: Iterable[Tuple[str, bytes]]) -> str:
    """SHA-256 over named byte strings (names and contents both count)."""
    h = hashlib.sha256()
    for name, content in parts:
        h.update(name.encode("utf-8") + b"\0" + str(len(content)).encode() + b"\0")
        h.update(content)
    return h.hexdigest()


def file_digest(paths: Iterable[Union[str, Path]]) -> str:
    """:func:`content_digest` of files, named by their base names."""
    return content_digest((osp.basename(str(p)), Path(p).read_bytes()) for p in paths)


def save_collated(path: Union[str, Path], key: str, data: Dict[str, Tensor],
                  slices: Dict[str, Tensor], extra: Optional[Dict[str, Tensor]] = None) -> None:
    r"""Write a collated dataset (:obj:`Data.to_dict()` and slices) to :obj:`path`.

    The write is atomic (a temporary file renamed into place), so readers
    never see half a file.

    Raises:
        TypeError: A value is not a tensor (only tensors are stored).
    """
    arrays: Dict[str, np.ndarray] = {_KEY: np.array(key)}
    for prefix, part in ((_DATA, data), (_SLICES, slices), (_EXTRA, extra or {})):
        for name, value in part.items():
            if not isinstance(value, Tensor):
                raise TypeError(f"cannot cache {prefix}{name}: only tensors are stored "
                                f"(got {type(value).__name__})")
            arrays[prefix + name] = value.detach().cpu().numpy()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # (a fresh temporary name: a link planted in a shared folder is never written through; no cleanup of
    # other temporary files, which may be another process's write of the same file)
    with atomic_file(path, clean_stale=False) as f:
        np.savez(f, **arrays)  # type: ignore[arg-type]


def load_collated(path: Union[str, Path], key: str,
                  data_cls: Optional[Type[Data]] = Data) -> Optional[Collated]:
    r"""Read what :func:`save_collated` wrote, or :obj:`None`.

    :obj:`None` when the file is missing, unreadable, not an archive of plain
    arrays, was written under another :obj:`key`, or its slices do not fit its
    data. Nothing is unpickled (``numpy.load(allow_pickle=False)``).

    Args:
        path (str or Path): The file.
        key (str): What the file must have been written under.
        data_cls (type, optional): The :class:`~torch_geometric.data.Data` class of the
            stored graphs: a slice must end at its tensor's size along the dimension PyG
            concatenates it on (with :class:`Data`'s own rule; a class with its own
            ``__cat_dim__``, or :obj:`None`, asks only that it end at one of its sizes).
            (default: :class:`Data`)
    """
    path = Path(path)
    if not path.is_file() or not _plain_archive(path, key):
        return None
    try:
        with np.load(path, allow_pickle=False) as archive:
            if _KEY not in archive.files or str(archive[_KEY]) != key:
                return None
            out = Collated({}, {}, {})
            for name in archive.files:
                for prefix, part in ((_DATA, out.data), (_SLICES, out.slices), (_EXTRA, out.extra)):
                    if name.startswith(prefix):
                        part[name[len(prefix):]] = torch.from_numpy(np.array(archive[name]))
    except Exception:  # a damaged or foreign file is simply rebuilt
        return None
    return out if _consistent(out, data_cls) else None


def _plain_archive(path: Path, key: str) -> bool:
    """Whether :obj:`path` is a zip of stored (uncompressed) members whose key member fits :obj:`key`.

    Checked on the zip directory before any member is read, so a small crafted file cannot make the
    reader inflate gigabytes (:func:`numpy.savez` stores its members uncompressed: what is read is at
    most the file's size).
    """
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
    except (OSError, zipfile.BadZipFile, ValueError):
        return False
    names = {info.filename: info for info in infos}
    key_info = names.get(_KEY + ".npy")
    # (one directory entry per member: entries repeating a member would have it read again and again,
    # minutes of reading from a file of a few MB)
    distinct = len(names) == len(infos) == len({info.header_offset for info in infos})
    return (key_info is not None and key_info.file_size <= 4 * len(key) + 1024 and distinct
            and sum(info.file_size for info in infos) <= path.stat().st_size
            and all(info.compress_type == zipfile.ZIP_STORED for info in infos))


def _consistent(out: Collated, data_cls: Optional[Type[Data]] = Data) -> bool:
    """Whether the slices and extra entries fit the data.

    Every data entry has a slice: a non-decreasing int64 pointer from 0 to
    its tensor's size along the dimension PyG concatenates it on (see
    :func:`load_collated`), as long as the others (one entry per graph, plus
    one); every extra entry is one number; an :obj:`edge_index` holds int64
    indices.
    """
    lengths = {ptr.numel() for ptr in out.slices.values()}
    if len(lengths) > 1 or any(v.dim() != 0 for v in out.extra.values()) or set(out.slices) != set(out.data):
        return False
    index = out.data.get("edge_index")
    if index is not None and index.dtype != torch.long:
        return False
    plain = Data() if data_cls is not None and data_cls.__cat_dim__ is Data.__cat_dim__ else None
    for name, ptr in out.slices.items():
        value = out.data[name]
        if ptr.dtype != torch.long or ptr.dim() != 1 or ptr.numel() == 0:
            return False
        if int(ptr[0]) != 0 or bool((ptr[1:] < ptr[:-1]).any()):
            return False
        if value.dim() and (int(ptr[-1]) not in value.shape if plain is None
                            else int(ptr[-1]) != value.size(plain.__cat_dim__(name, value))):
            return False
    return True


class SafeInMemoryDataset(InMemoryDataset):
    r"""An :class:`~torch_geometric.data.InMemoryDataset` whose processed files never unpickle.

    Subclasses keep PyG's contract (:obj:`raw_file_names`,
    :obj:`processed_file_names`, :meth:`download`, :meth:`process`), but
    :meth:`process` stores its result with :meth:`save_collated` and
    :meth:`load` reads it back; a processed file that cannot be read
    safely, or whose key differs, is rebuilt. The key covers the class, the
    processed file name (where subclasses encode their options) and the
    content of the raw files, and the versions of the package and of the
    subclass's building code (:attr:`cache_version`). :obj:`pre_transform` and :obj:`pre_filter`
    are not supported (their PyG bookkeeping files are pickles). Nothing is
    printed while processing (so command-line errors stay one line).
    """

    _checked: Optional[Tuple[str, Optional[Collated]]] = None  # (what :meth:`_cached` read, for :meth:`load`)

    #: The version of what :meth:`process` builds from the raw files: a subclass raises it whenever a
    #: change of its code would build other tensors from the same files (the key holds it and the
    #: package's version, so caches of older code are rebuilt, never read as the new code's).
    cache_version: int = 1

    #: The :class:`~torch_geometric.data.Data` class of the stored graphs, whose concatenation rule
    #: (``__cat_dim__``) the processed file's slices are checked against (:func:`load_collated`);
    #: :obj:`None` (a subclass whose class is not known here): each slice must end at one of its
    #: tensor's sizes, until :meth:`load` checks it with its ``data_cls`` (a file that fails then is
    #: refused, not rebuilt). Set it to the ``data_cls`` :meth:`load` is given.
    collated_cls: Optional[Type[Data]] = None

    def cache_key(self) -> str:
        """What the processed file was built from (see the class description)."""
        raw = [p for p in self.raw_paths if osp.isfile(p)]
        return "|".join([KEY_PREFIX, f"{type(self).__name__}-{self.cache_version}",
                         osp.basename(self.processed_paths[0]), file_digest(raw)])

    def _process(self) -> None:
        if self.pre_transform is not None or self.pre_filter is not None:
            raise ValueError(f"{type(self).__name__} does not take 'pre_transform' or 'pre_filter'")
        if osp.lexists(self.processed_dir) and not osp.isdir(self.processed_dir):
            raise ValueError(f"{self.processed_dir} must be a folder for the processed files of "
                             f"{type(self).__name__} (it is a file): remove it, or choose another root")
        if not self.force_reload and self._cached(self.processed_paths[0]):
            return
        os.makedirs(self.processed_dir, exist_ok=True)
        self.process()

    def _cached(self, path: str) -> bool:
        """Whether :obj:`path` is a processed file :meth:`load` reads (else it is rebuilt); kept for it."""
        self._checked = (path, load_collated(path, self.cache_key(), self.collated_cls))
        return self._checked[1] is not None

    def save_collated(self, data: Data, slices: Dict[str, Tensor], path: str) -> None:
        """Store a collated :obj:`data` and its :obj:`slices` at :obj:`path` (in :meth:`process`)."""
        save_collated(path, self.cache_key(), data.to_dict(), slices)

    def load(self, path: str, data_cls: Type[Data] = Data) -> None:
        """Load what :meth:`process` stored (never unpickling)."""
        checked, self._checked = self._checked, None
        out = checked[1] if checked is not None and checked[0] == path else None
        if out is not None and self.collated_cls is not data_cls and not _consistent(out, data_cls):
            out = None  # (checked with another class than the one it is read as: its own rule)
        out = out if out is not None else load_collated(path, self.cache_key(), data_cls)
        if out is None:
            raise ValueError(f"{path} is not a processed file of {type(self).__name__}; "
                             "delete it (or pass force_reload=True) to rebuild it")
        self.slices = out.slices
        self.data = data_cls.from_dict(out.data)


__all__ = ["SafeInMemoryDataset", "Collated", "save_collated", "load_collated", "content_digest",
           "file_digest", "FORMAT", "KEY_PREFIX"]
