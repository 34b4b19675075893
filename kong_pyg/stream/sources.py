r"""Reading whole sources into a stream, with checkpoints (:meth:`KongStream.fit <kong_pyg.KongStream.fit>`).

A source is read once per pass, so :math:`h \geq 2` needs a re-iterable one:
an object with the six columns (an :class:`~kong_pyg.datasets.EdgeStream`,
read in slices), a list of chunks, or a callable returning a fresh iterable
of chunks. A checkpoint is written atomically (:func:`atomic_save`), so a run
killed at any moment resumes from the last one, skipping the edges its pass
had read.
"""
import os
import sys
import tempfile
from typing import TYPE_CHECKING, Any, Callable, Iterable, List, Optional, Tuple, Union

import torch

from ..config import check_int

if TYPE_CHECKING:  # pragma: no cover
    from .core import KongStream

PathLike = Union[str, "os.PathLike[str]"]
Chunk = Tuple[Any, ...]
_COLUMNS = ("src", "src_type", "dst", "dst_type", "edge_type", "graph")


def chunk_columns(chunk: Any) -> Chunk:
    """The six columns of a chunk (tuple, dict or object with attributes; missing ones None)."""
    if isinstance(chunk, dict):
        return tuple(chunk.get(c) for c in _COLUMNS)
    if all(hasattr(chunk, c) for c in _COLUMNS[:4]):  # EdgeStream, EdgeChunk, ...
        return tuple(getattr(chunk, c, None) for c in _COLUMNS)
    if isinstance(chunk, (tuple, list)):
        if len(chunk) not in (5, 6):
            raise ValueError("a chunk tuple must be (src, src_type, dst, dst_type, edge_type[, graph])")
        return tuple(chunk) + (None,) * (6 - len(chunk))
    raise TypeError(f"cannot read a chunk of edges from {type(chunk).__name__}")


def chunk_source(source: Any, chunk_size: int, passes: int) -> Callable[[], Iterable[Any]]:
    """A function returning a fresh iterable of chunks of :obj:`source`."""
    if all(hasattr(source, c) for c in _COLUMNS[:4]):
        cols = chunk_columns(source)
        total = len(cols[0])

        def slices() -> Iterable[Chunk]:
            for lo in range(0, total, chunk_size):
                yield tuple(None if c is None else c[lo : lo + chunk_size] for c in cols)

        return slices
    if callable(source):
        return source
    if isinstance(source, (list, tuple)):
        return lambda: source
    if isinstance(source, Iterable):
        if passes > 1:
            raise ValueError(f"hops={passes} reads the stream {passes} times: pass a re-iterable "
                             "source (a list of chunks, an EdgeStream or a callable returning a fresh "
                             "iterator), not a one-shot iterator")
        used: List[bool] = []

        def once() -> Iterable[Any]:
            if used:
                raise ValueError("a one-shot iterator cannot be read again")
            used.append(True)
            return source

        return once
    raise TypeError(f"cannot read edges from {type(source).__name__}")


def atomic_save(obj: Any, path: PathLike) -> None:
    """:func:`torch.save` to a temporary file in the same folder, flushed, then renamed over :obj:`path`.

    A run killed at any moment leaves the previous file or the new one,
    never a torn file.
    """
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".kong-stream-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(obj, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class _Progress:
    """A tqdm bar of edges on stderr, or nothing."""

    def __init__(self, enabled: bool, total: Optional[int]):
        self.bar: Any = None
        if enabled:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, unit="edge", unit_scale=True, file=sys.stderr, dynamic_ncols=True)

    def start(self, description: str) -> None:
        if self.bar is not None:
            self.bar.reset(total=self.bar.total)
            self.bar.set_description(description)

    def update(self, edges: int) -> None:
        if self.bar is not None:
            self.bar.update(edges)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _read_pass(ks: "KongStream", chunks: Iterable[Any], bar: _Progress, checkpoint: Optional[PathLike],
               checkpoint_every: int) -> None:
    """Read one pass's chunks, skipping the :attr:`KongStream.position` edges already read."""
    skip, done = ks.position, 0
    for chunk in chunks:
        cols = chunk_columns(chunk)
        e = len(cols[0])
        if skip >= e:
            skip -= e
            bar.update(e)
            continue
        if skip:
            cols = tuple(None if c is None else c[skip:] for c in cols)
            bar.update(skip)
            e -= skip
            skip = 0
        ks.update(*cols)
        bar.update(e)
        done += 1
        if checkpoint is not None and done % checkpoint_every == 0:
            ks.save(checkpoint)
    if skip:
        raise ValueError(f"the source has fewer edges than the checkpoint's position "
                         f"({ks.position}) in pass {ks.pass_index}")


def fit_source(ks: "KongStream", source: Any, chunk_size: int, checkpoint: Optional[PathLike],
               checkpoint_every: int, progress: bool) -> None:
    """Read every pass of :obj:`source` into :obj:`ks` (:meth:`KongStream.fit <kong_pyg.KongStream.fit>`)."""
    check_int("chunk_size", chunk_size, 1)
    check_int("checkpoint_every", checkpoint_every, 1)
    fresh = chunk_source(source, chunk_size, ks.num_passes)
    if checkpoint is not None and os.path.exists(checkpoint):
        ks.load_state_dict(torch.load(checkpoint, weights_only=True))
    bar = _Progress(progress, getattr(source, "num_edges", None))
    try:
        while True:
            bar.start(f"pass {ks.pass_index}/{ks.num_passes}")
            _read_pass(ks, fresh(), bar, checkpoint, checkpoint_every)
            if ks.pass_index == ks.num_passes:
                break
            ks.end_pass()
            if checkpoint is not None:
                ks.save(checkpoint)
        if checkpoint is not None:
            ks.save(checkpoint)
    finally:
        bar.close()
