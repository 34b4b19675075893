r"""Reading whole sources into a stream, with checkpoints (:meth:`KongStream.fit <kong_pyg.KongStream.fit>`).

A source is read once per pass, so :math:`h \geq 2` needs a re-iterable one:
an object with the six columns (an :class:`~kong_pyg.datasets.EdgeStream`,
read in slices), a list of chunks, one chunk (its columns as a dict, or a
tuple of tensors or arrays), or a callable returning a fresh iterable of
chunks. A checkpoint is written atomically
(:mod:`~kong_pyg.stream.checkpoint`), so a run killed at any moment resumes
from the last one, skipping the edges its pass had read after checking that
they are the edges the checkpoint read (:mod:`~kong_pyg.stream.replay`).
"""
import os
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, List, Optional, Tuple, Union

import numpy as np
from torch import Tensor

from ..config import check_bool, check_int, zero_dim
from ..files import check_path, existing_folder, remove_stale_temps
from ..idmap import canonical_int
from ..progress import Progress
from ..warn import warn

if TYPE_CHECKING:  # pragma: no cover
    from .core import KongStream

PathLike = Union[str, "os.PathLike[str]"]
Chunk = Tuple[Any, ...]
_MASK = (1 << 64) - 1
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
        for name, c in zip(_COLUMNS, chunk):
            if c is not None and not hasattr(c, "__len__"):
                raise TypeError(f"a chunk's columns are sequences (tensors, arrays or lists); its '{name}' "
                                f"is of type {type(c).__name__} (one edge is a chunk of length-1 columns)")
        return tuple(chunk) + (None,) * (6 - len(chunk))
    raise TypeError("a chunk of edges must be a tuple (src, src_type, dst, dst_type, edge_type[, graph]), "
                    "a dict of those columns or an object with them as attributes "
                    f"(got {type(chunk).__name__})")


def _graph_table(graph_ids: Any, graph: Any) -> Optional[np.ndarray]:
    """The graph ids of an :class:`~kong_pyg.datasets.EdgeStream`'s dense graph indices, or None.

    Its :obj:`graph` column numbers the graphs :obj:`0, 1, ...` in order of first appearance and
    :obj:`graph_ids` holds their ids (the file's tokens): the stream's rows are named by those, the
    canonical decimal ones as the integers they spell (as :class:`~kong_pyg.datasets.StreamSpotReader`
    and ``kong-pyg stream`` read them), others as the strings. (They were named by the indices: a file's
    graphs 500 and 200 came out as 0 and 1.) None where there is nothing to map: no ids, or ids that
    are already the indices.
    """
    if graph_ids is None or graph is None or not isinstance(graph_ids, (list, tuple)):
        return None
    ids = [canonical_int(g) if isinstance(g, (str, bytes)) else g for g in graph_ids]
    if all(isinstance(v, int) and not isinstance(v, bool) and -2**63 <= v < 2**63 for v in ids):
        if ids == list(range(len(ids))):
            return None
        return np.asarray(ids, dtype=np.int64)
    return np.asarray([g.decode("utf-8", "surrogateescape") if isinstance(g, bytes) else str(g)
                       for g in graph_ids], dtype=object)


def _index_of(table: np.ndarray, graph: Any) -> np.ndarray:
    """An EdgeStream's graph column as a NumPy index into its :obj:`table` of ids (checked)."""
    index = graph.cpu().numpy() if isinstance(graph, Tensor) else np.asarray(graph)
    if index.size and (int(index.min()) < 0 or int(index.max()) >= table.size):
        raise ValueError(f"the stream's 'graph' column must index its {table.size} graph_ids (got "
                         f"values from {int(index.min())} to {int(index.max())})")
    return index


def _ids_of(table: np.ndarray, index: np.ndarray) -> Any:
    """The graph ids of a part of an index column (int64 array, or a list of strings)."""
    ids = table[index]
    return ids if table.dtype != object else ids.tolist()


def _one_chunk(source: Union[list, tuple]) -> bool:
    """Whether :obj:`source` is the columns of one chunk: a tuple of 5 or 6 tensors or arrays (or None).

    A list is a list of chunks, and lists of ids are not taken as columns
    here: five or six one-edge rows would read as columns, transposed.
    """
    arrays = (Tensor, np.ndarray)
    return isinstance(source, tuple) and len(source) in (5, 6) and isinstance(source[0], arrays) \
        and all(c is None or isinstance(c, arrays) for c in source)


def chunk_source(source: Any, chunk_size: int, passes: int) -> Callable[[], Iterable[Any]]:
    """A function returning a fresh iterable of chunks of :obj:`source`."""
    if isinstance(source, (str, bytes, os.PathLike)):
        raise TypeError(f"'source' must hold edges, not name a file (got {source!r}): read a StreamSpot file "
                        "with kong_pyg.datasets.read_streamspot(path)[0] (the first of its three results), "
                        "or run 'kong-pyg stream FILE'")
    if isinstance(source, dict):  # the columns of one chunk
        if not all(source.get(c) is not None for c in _COLUMNS[:4]):
            raise ValueError(f"'source', a dict, is read as one chunk of columns and must hold "
                             f"{list(_COLUMNS[:4])} (got keys {list(source)})")
        return lambda: [source]
    if all(hasattr(source, c) for c in _COLUMNS[:4]):
        cols = chunk_columns(source)
        total = len(cols[0])
        table = _graph_table(getattr(source, "graph_ids", None), cols[5])
        if table is not None:  # (an EdgeStream's graph column is a dense index into its graph_ids)
            index = _index_of(table, cols[5])

        def slices() -> Iterable[Chunk]:
            for lo in range(0, total, chunk_size):
                part = tuple(None if c is None else c[lo : lo + chunk_size] for c in cols)
                if table is not None:  # (each chunk's ids mapped as it is read)
                    part = part[:5] + (_ids_of(table, index[lo : lo + chunk_size]),)
                yield part

        return slices
    if callable(source):
        def fresh() -> Iterable[Any]:
            chunks = source()
            if isinstance(chunks, (str, bytes, dict)) or not isinstance(chunks, Iterable):
                raise TypeError("'source', a callable, must return a fresh iterable of chunks each time it "
                                f"is called (it returned {type(chunks).__name__})")
            return chunks

        return fresh
    if isinstance(source, (list, tuple)):
        if isinstance(source, tuple) and len(source) == 3 and all(hasattr(source[0], c) for c in _COLUMNS) \
                and isinstance(source[2], int):
            raise TypeError("'source' is what read_streamspot returns, (stream, malformed lines, their "
                            "count): pass its first result, read_streamspot(path)[0]")
        if _one_chunk(source):  # (src, src_type, dst, dst_type, edge_type[, graph]): columns, not chunks
            return lambda: [source]
        return lambda: source
    one_shot = isinstance(source, Iterator) or getattr(source, "reiterable", True) is False
    iterable = isinstance(source, Iterable) and not zero_dim(source)  # (a 0-d tensor: by its type only)
    if iterable and not one_shot:
        return lambda: source  # (a re-iterable such as a StreamSpotReader of a path: each pass iterates
        # it again, and the replay checks refuse a pass that reads other edges)
    if iterable:
        if passes > 1:
            what = "a StreamSpotReader of a file object or of an iterator of lines" \
                if hasattr(source, "reiterable") else "a one-shot iterator"
            raise ValueError(f"hops={passes} reads the stream {passes} times: pass a re-iterable "
                             "source (a list of chunks, an EdgeStream, a StreamSpotReader of a path or a "
                             f"callable returning a fresh iterator), not {what}")
        used: List[bool] = []

        def once() -> Iterable[Any]:
            if used:
                raise ValueError("a one-shot iterator cannot be read again")
            used.append(True)
            return source

        return once
    raise TypeError("'source' must be an EdgeStream (or an object with the columns as attributes), a list of "
                    f"chunks or a callable returning an iterable of them (got {type(source).__name__})")


def _skipped(ks: "KongStream", cols: Chunk, take: int, at: int) -> int:
    """The checksum term (at position :obj:`at`) of the first :obj:`take` edges of a chunk, read before."""
    head = cols if take == len(cols[0]) else tuple(None if c is None else c[:take] for c in cols)
    src, src_type, dst, dst_type, edge_type, graph = head
    return ks.replay_checksum(src, src_type, dst, dst_type, edge_type, graph, offset=at)


def _read_pass(ks: "KongStream", chunks: Iterable[Any], bar: Progress, checkpoint: Optional[PathLike],
               checkpoint_every: int, origin: str = "the checkpoint") -> None:
    """Read one pass's chunks, skipping (and checking) the :attr:`KongStream.position` edges already read.

    :obj:`origin` names what read them, for messages.
    """
    skip, done, at, seen = ks.position, 0, 0, 0
    expected = ks._current  # the checksum of the edges the checkpoint read in this pass (None: unknown)
    if skip and expected is None:  # (a state of the first layout records neither checksum nor source)
        warn(f"{origin} records no checksum of the {skip:,} edges of pass {ks.pass_index} it read (a state "
             "of an older kong_pyg): they are skipped unchecked, so if this source is not the one it read, "
             f"the sketches are wrong; {'remove it' if origin == 'the checkpoint' else 'reset() it'} to "
             "start again if in doubt")
    numbered: Any = None  # (the graph_ids of the EdgeStream among the chunks: its indices are its own)
    table = None  # (the graph ids of its dense graph indices: made once per pass)
    for chunk in chunks:
        cols = chunk_columns(chunk)
        ids = getattr(chunk, "graph_ids", None)
        if isinstance(ids, (list, tuple)):  # (an EdgeStream: slices of one share its ids)
            if numbered is None:
                numbered, table = ids, _graph_table(ids, cols[5])
            elif ids is not numbered:
                raise ValueError("two EdgeStreams among the chunks of one stream: each numbers its nodes "
                                 "(and graphs) on its own, so a node of one would be read as another node of "
                                 "the other; read the edges as one EdgeStream, or as EdgeChunk chunks (a "
                                 "StreamSpotReader: ids as read from the file, spelled by its decode())")
            if table is not None:  # (its rows are named by those ids, as a whole EdgeStream's)
                cols = cols[:5] + (_ids_of(table, _index_of(table, cols[5])),)
        e = len(cols[0])
        if skip:
            take = min(skip, e)
            term = _skipped(ks, cols, take, at)
            seen, at, skip = (seen + term) & _MASK, at + take, skip - take
            bar.update(take)
            if skip == 0 and expected is not None and seen != expected:
                raise ValueError(
                    f"the source is not the one {origin} "
                    f"{'was made from' if origin == 'the checkpoint' else 'read before fit()'}: its first "
                    f"{at} edges of pass {ks.pass_index} differ from those {origin} read (another checksum, "
                    "which reads the ids as given: the same edges under other ids, such as an EdgeStream's "
                    "'graph' codes instead of its graph ids, are another source); fit() reads a whole "
                    "source and skips the edges already read: pass the whole stream, or give only the rest "
                    "to update()"
                )
            if take == e:
                continue
            cols = tuple(None if c is None else c[take:] for c in cols)
            e -= take
        ks.update(*cols)
        bar.update(e)
        done += 1
        if checkpoint is not None and done % checkpoint_every == 0:
            ks.save(checkpoint)
    if skip:
        raise ValueError(f"the source has fewer edges than {origin} read ({ks.position}) in pass "
                         f"{ks.pass_index}")


def _resume(ks: "KongStream", checkpoint: PathLike, fingerprint: Optional[str]) -> None:
    """Load the checkpoint file, if there is one, and check the source's fingerprint."""
    existing_folder(checkpoint)  # (before any reading, not at the first save: as that save would say)
    remove_stale_temps(checkpoint)
    if os.path.exists(checkpoint):
        ks.load(checkpoint)  # (on the stream: into it, other options refused, the file named in errors)
        if fingerprint is not None and ks.source is not None and ks.source != fingerprint:
            raise ValueError(f"{os.fspath(checkpoint)}: the checkpoint was made from another source "
                             f"(fingerprint {ks.source!r}, this source {fingerprint!r}); remove the "
                             "checkpoint to start again")


def fit_source(ks: "KongStream", source: Any, chunk_size: int, checkpoint: Optional[PathLike],
               checkpoint_every: int, progress: bool, fingerprint: Optional[str] = None) -> None:
    """Read every pass of :obj:`source` into :obj:`ks` (:meth:`KongStream.fit <kong_pyg.KongStream.fit>`)."""
    check_int("chunk_size", chunk_size, 1)
    check_int("checkpoint_every", checkpoint_every, 1)
    check_bool("progress", progress)  # before a checkpoint is loaded into the stream
    if fingerprint is not None and not isinstance(fingerprint, str):
        raise TypeError(f"'fingerprint' must be a string or None (got {type(fingerprint).__name__})")
    if checkpoint is not None:
        checkpoint = check_path("checkpoint", checkpoint)
    fresh = chunk_source(source, chunk_size, ks.num_passes)
    origin = "this stream" if ks.position or ks.pass_index > 1 else "the checkpoint"
    if checkpoint is not None and os.path.exists(checkpoint):
        origin = "the checkpoint"
    if checkpoint is not None:
        _resume(ks, checkpoint, fingerprint)
    if fingerprint is not None and ks.source is not None and ks.source != fingerprint:  # (a loaded state's)
        raise ValueError(f"this stream was read from another source (fingerprint {ks.source!r}, this source "
                         f"{fingerprint!r}); read this source with a new KongStream")
    ks.resumed_from = (ks.pass_index, ks.position)
    if fingerprint is not None:
        ks.source = fingerprint
    bar = Progress(getattr(source, "num_edges", None), f"pass {ks.pass_index}/{ks.num_passes}", unit="edge",
                   enabled=progress, unit_scale=True)
    try:
        while True:
            _read_pass(ks, fresh(), bar, checkpoint, checkpoint_every, origin)
            if ks.pass_index == ks.num_passes:
                break
            ks.end_pass()
            bar.restart(f"pass {ks.pass_index}/{ks.num_passes}")
            if checkpoint is not None:
                ks.save(checkpoint)
        ks.check_replay()
        if checkpoint is not None:
            ks.save(checkpoint)
    finally:
        bar.close()
