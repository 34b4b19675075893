"""Writing files atomically: a temporary file next to the target, flushed to disk and renamed over it.

Readers never see half a file, and a run killed at any moment leaves the old
file or the new one. The temporary file is made with :func:`tempfile.mkstemp`
(a fresh name, opened exclusively), so a name planted in a shared folder (a
symbolic link to another file) is never written through.
"""
import codecs
import os
import tempfile
from contextlib import contextmanager
from typing import BinaryIO, Iterator, List, Sequence, Tuple, Union

PathLike = Union[str, "os.PathLike[str]"]


def _temp_prefix(path: str, kind: str = "") -> str:
    return "." + os.path.basename(path) + "." + kind


#: The random part of :func:`tempfile.mkstemp`'s names: so many characters of this alphabet.
_RANDOM_CHARS = 8
_RANDOM_ALPHABET = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")


def remove_stale_temps(path: PathLike, kind: str = "", suffix: str = ".tmp") -> None:
    """Remove the temporary files a killed write of :obj:`path` left behind.

    Those are :func:`temp_beside` names: ``.NAME.`` + :obj:`kind` + mkstemp's random part + :obj:`suffix`
    (by default those of :func:`atomic_files`).
    """
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    prefix = _temp_prefix(path, kind)
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        middle = name[len(prefix):-len(suffix)]  # (mkstemp's random part; not another file's name)
        if name.startswith(prefix) and name.endswith(suffix) and len(middle) == _RANDOM_CHARS and \
                set(middle) <= _RANDOM_ALPHABET:
            try:
                os.unlink(os.path.join(folder, name))
            except OSError:
                pass


def check_path(name: str, value: object, what: str = "file") -> str:
    """:obj:`value` as a path string, or a :class:`TypeError` naming the argument :obj:`name`.

    (An int is no path here: :func:`os.path.exists` and :func:`open` would read it as a file descriptor.)
    """
    if not isinstance(value, (str, bytes, os.PathLike)):
        raise TypeError(f"'{name}' must be a {what} path, str, bytes or os.PathLike (got "
                        f"{type(value).__name__})")
    return os.fsdecode(value)  # (bytes paths as the str the rest of the code handles)


def existing_folder(path: PathLike) -> str:
    """The folder :obj:`path` would be written in (a :class:`FileNotFoundError` naming both if it is not)."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"cannot write {os.fspath(path)!r}: no such folder {folder!r}")
    return folder


def temp_beside(path: PathLike, kind: str, suffix: str) -> Tuple[int, str]:
    """A fresh temporary file next to :obj:`path` (:func:`tempfile.mkstemp`: descriptor and name).

    Those of the same :obj:`kind` that a killed run left there are removed first
    (:func:`remove_stale_temps`).
    """
    path = os.fspath(path)
    remove_stale_temps(path, kind, suffix)
    return tempfile.mkstemp(prefix=_temp_prefix(path, kind), suffix=suffix,
                            dir=os.path.dirname(os.path.abspath(path)))


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextmanager
def atomic_files(paths: Sequence[PathLike], clean_stale: bool = True) -> Iterator[List[BinaryIO]]:
    """Binary files to write the new contents of :obj:`paths` into, renamed over them when the block ends.

    Every file is written and flushed to disk before the first rename, and the renames follow each
    other: a run stopped at any moment before them leaves every old file, never a mix of old and new
    (only a stop between two renames, microseconds apart, could).

    Args:
        paths (sequence of str or os.PathLike): The files to write.
        clean_stale (bool, optional): Remove earlier killed writes' temporary files of each path first
            (not in a folder that other processes may be writing the same file into, such as a shared
            cache). (default: :obj:`True`)
    """
    targets = [os.fspath(p) for p in paths]
    temps: List[str] = []
    files: List[BinaryIO] = []
    writing = False
    try:
        for path in targets:
            if os.path.isdir(path):
                raise IsADirectoryError(f"[Errno 21] Is a directory: {path!r}")
            folder = existing_folder(path)
            if clean_stale:
                remove_stale_temps(path)
            try:
                fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(path), suffix=".tmp", dir=folder)
            except OSError as err:  # (name the file asked for, not the temporary one)
                raise type(err)(err.errno, f"cannot write {path!r}: {err.strerror or err} (making a "
                                           f"temporary file in {folder!r})") from None
            temps.append(tmp)
            out: BinaryIO = os.fdopen(fd, "wb")
            files.append(out)
            if hasattr(os, "fchmod"):  # (Windows before Python 3.13 has none; its files keep no such bits)
                os.fchmod(fd, 0o666 & ~_umask())  # as open() would make it (mkstemp makes it private;
                # by descriptor: a name swapped for a link in a shared folder changes nothing else)
        writing = True
        yield files
        for done in files:
            done.flush()
            os.fsync(done.fileno())
            done.close()
        for tmp, path in zip(temps, targets):
            os.replace(tmp, path)
    except BaseException as err:
        for done in files:
            try:
                done.close()
            except OSError:  # (closing flushes: a full disk fails again)
                pass
        for tmp in temps:
            if os.path.exists(tmp):
                os.unlink(tmp)
        if writing and isinstance(err, OSError) and err.filename is None:
            # a write or flush that names no file ("[Errno 28] No space left on device", NumPy's "2048
            # requested and 992 written"): name the files asked for
            message = f"cannot write {' and '.join(map(repr, targets))}: {err.strerror or err}"
            if err.errno is None:  # (a short write, without the system's reason)
                raise type(err)(message + " (is the disk full?)") from None
            raise type(err)(err.errno, message) from None
        raise


@contextmanager
def atomic_file(path: PathLike, clean_stale: bool = True) -> Iterator[BinaryIO]:
    """A file (binary) for :obj:`path`'s new content, renamed over it at the end (:func:`atomic_files`)."""
    with atomic_files([path], clean_stale) as (f,):
        yield f


def atomic_write(data: Sequence[bytes], path: PathLike, clean_stale: bool = True) -> None:
    """Write the byte strings :obj:`data` to :obj:`path` atomically (see :func:`atomic_file`)."""
    with atomic_file(path, clean_stale) as f:
        for part in data:
            f.write(part)


def atomic_texts(texts: Sequence[Tuple[PathLike, str]]) -> None:
    """Write the texts (UTF-8) of ``(path, text)`` pairs together (:func:`atomic_files`).

    A report and its JSON are then both the new ones or both the old ones, never a cut file.
    """
    with atomic_files([path for path, _ in texts]) as files:
        for f, (_, text) in zip(files, texts):
            f.write(printable(text).encode("utf-8"))


def printable(text: str) -> str:
    r""":obj:`text` with what UTF-8 cannot hold written as escapes (``\udce4``).

    A file name whose bytes the file system's encoding could not decode holds lone surrogates (a
    Latin-1 ``ä`` in a UTF-8 locale): a report naming it failed to be written, after the whole run.
    """
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def regular_file(path: PathLike, advice: str = "fetch or fix it (or remove it)") -> bool:
    """Whether :obj:`path` is a regular file (links followed); False when nothing has that name.

    Raises:
        ValueError: Something else has that name: a broken link (an unfetched file of a
            git-annex or DataLad folder), a folder, a device or a pipe; read as absent, it
            would silently leave out what the file holds.
    """
    if os.path.isfile(path):
        return True
    if not os.path.lexists(path):
        return False
    what = "a broken link" if os.path.islink(path) and not os.path.exists(path) else \
        "a folder" if os.path.isdir(path) else "a device or a pipe"
    raise ValueError(f"{os.fspath(path)} is {what}, not a file: {advice}")


def file_text(content: bytes, encoding: str = "utf-8") -> str:
    r"""A file's bytes as text: a UTF-8 byte-order mark at the start dropped, ``\r\n`` and ``\r`` made ``\n``.

    (Editors on Windows write the mark, also before Latin-1 text.)

    Raises:
        UnicodeDecodeError: Not text in :obj:`encoding`; its ``start`` counts from the first byte of
            :obj:`content` (a mark included).
    """
    skip = len(codecs.BOM_UTF8) if content.startswith(codecs.BOM_UTF8) else 0
    try:
        text = bytes(memoryview(content)[skip:]).decode(encoding) if skip else content.decode(encoding)
    except UnicodeDecodeError as err:
        raise UnicodeDecodeError(encoding, content, err.start + skip, err.end + skip, err.reason) from None
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


__all__ = ["file_text", "printable", "regular_file", "atomic_file", "atomic_files", "atomic_write",
           "atomic_texts", "remove_stale_temps"]
