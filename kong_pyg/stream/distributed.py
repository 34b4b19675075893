r"""One stream read by many processes: time shards, merged pass by pass, on :mod:`torch.distributed`.

Process :math:`r` of :math:`W` reads the lines of a StreamSpot file that
start in bytes :math:`[rS/W, (r+1)S/W)` (:class:`~kong_pyg.datasets.StreamSpotReader`
with ``byte_range``: consecutive time shards, every line in exactly one; the
size :math:`S` is checked to be the same in every process, and process
:math:`r` counts the lines before its range, for line numbers, by scanning
:math:`r/W` of the file every pass).
Per pass:

1. every process reads its shard into a stream: a fresh one in pass 1, one
   on the arrays of the *base* (the merged state after the previous pass,
   closed by :meth:`~kong_pyg.KongStream.end_pass`) in pass :math:`i \geq 2`;
2. the states are merged in time order by a tree of point-to-point
   messages (:math:`\lceil \log_2 W \rceil` rounds; process :math:`r`
   receives from :math:`r + 2^d` and merges into its own state,
   :func:`~kong_pyg.stream.merge.merge_into`),
   so process 0 ends with the state of the whole pass;
3. for :math:`i < h`, process 0 closes the pass (which checks its count and
   checksum against pass 1) and broadcasts the base of pass :math:`i + 1`.

The result equals one process reading the whole file (the merges are exact;
the tests check it). What crosses the network per pass: in the merge tree,
each process but 0 sends its state once (pass 1: the id tables and string
codes of the nodes its shard saw, plus node sketches where the kernel needs
them, plus graph rows; later passes: the pass's new node sketches, dense
over every node of the stream (rows of nodes the shard did not see are
zeros), the node graph and symbol columns, and the graph rows, but not the
base's string arrays, known to all), and in passes :math:`i \geq 2` process 0
broadcasts the base (all nodes: :math:`O(N (k + p b))` numbers; where node
sketches are kept, the previous pass's and their running sum ``acc``, two
:math:`N \times p b` arrays, and for the linear map at :math:`h = 2` the graph
rows and their zero pass rows, two :math:`G \times b` arrays). States
travel as :func:`torch.save` bytes in ``uint8`` tensors, read back with
``weights_only=True`` (never unpickled objects), except their large tensors
(node sketches), which are sent as themselves (no serialized copies). A
pass's new node sketches start as zeros and are not sent, and every process
reads its pass on the base's arrays themselves (``assign=True``; passes and
merges only read them): each process holds about one stream's state.

String ids are mapped to 63-bit keys by a hash of their bytes (the same in
every process; two different strings collide with probability about
:math:`n^2 / 2^{64}` for :math:`n` strings, and a collision joins their
nodes); integer ids are themselves.

Errors (a malformed line under ``strict``, a bad file) stop every process:
each step ends with an exchange of error messages, so no process waits
forever for one that failed.
"""
import hashlib
import io
import os
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import torch
import torch.distributed as dist

from ..warn import warn
from .core import KongStream
from .merge import NodeTypeConflict, merge_into

_BASE_ONLY = ("prev_len", "prev_pre", "prev_suf", "Yprev", "acc")
_TABLES = ("encoder", "graphs", "nodes", "symbols", "rows")


def token_key(token: str) -> int:
    """The negative 63-bit key of a string id (a hash of its bytes; integer ids stay non-negative)."""
    raw = token.encode("utf-8", errors="surrogateescape")
    return -1 - (int.from_bytes(hashlib.blake2b(raw, digest_size=8).digest(), "little") >> 1)


class _TokenKeys:
    """A reader's string tokens (negative keys ``-(1 + j)``) to :func:`token_key` keys."""

    def name(self, key: Any) -> Any:
        """The token of a key this reader made (the key itself otherwise)."""
        at = np.flatnonzero(self.keys == key) if isinstance(key, int) else np.zeros(0, dtype=np.int64)
        return self.reader.tokens[int(at[0])] if at.size else key

    def __init__(self, reader: Any) -> None:
        self.reader = reader
        self.keys = np.zeros(0, dtype=np.int64)
        self.graph_tokens: Dict[int, str] = {}

    def __call__(self, col: np.ndarray, graph: bool = False) -> np.ndarray:
        neg = col < 0
        if not neg.any():
            return col
        tokens = self.reader.tokens
        if self.keys.size < len(tokens):
            new = [token_key(t) for t in tokens[self.keys.size :]]
            self.keys = np.concatenate([self.keys, np.asarray(new, dtype=np.int64)])
        out = col.copy()
        out[neg] = self.keys[-col[neg] - 1]
        if graph:
            for j in np.unique(-col[neg] - 1).tolist():
                self.graph_tokens[int(self.keys[j])] = tokens[j]
        return out


# -- bytes between processes ---------------------------------------------------------


def _to_bytes(obj: Any) -> torch.Tensor:
    buf = io.BytesIO()
    torch.save(obj, buf)
    # (a view of the buffer: getvalue() and a bytearray of it were two more copies of a whole state)
    return torch.frombuffer(buf.getbuffer(), dtype=torch.uint8)


def _from_bytes(t: torch.Tensor) -> Any:
    return torch.load(io.BytesIO(t.numpy().tobytes()), weights_only=True)


#: Contiguous tensors of at least this many entries travel as themselves, the rest as torch.save bytes
#: (no serialized copy, and none read back, of the largest arrays: node sketches).
_DIRECT = 1 << 10
_DIRECT_DTYPES = {str(d): d for d in (torch.float32, torch.float64, torch.int32, torch.int64, torch.uint8)}
_MARK = "kong_pyg.direct_tensor"


def _pack(obj: Any, parts: List[torch.Tensor]) -> Any:
    """:obj:`obj` with its large tensors replaced by their numbers in :obj:`parts` (appended there)."""
    if isinstance(obj, torch.Tensor):
        if obj.numel() >= _DIRECT and obj.is_contiguous() and str(obj.dtype) in _DIRECT_DTYPES:
            parts.append(obj)
            return {_MARK: len(parts) - 1}
        return obj
    if isinstance(obj, dict):
        return {k: _pack(v, parts) for k, v in obj.items()}
    if type(obj) in (list, tuple):  # (other sequences, named tuples say, travel as they are)
        return type(obj)(_pack(v, parts) for v in obj)
    return obj


def _unpack(obj: Any, parts: List[torch.Tensor]) -> Any:
    if isinstance(obj, dict):
        if set(obj) == {_MARK}:
            return parts[obj[_MARK]]
        return {k: _unpack(v, parts) for k, v in obj.items()}
    if type(obj) in (list, tuple):
        return type(obj)(_unpack(v, parts) for v in obj)
    return obj


def _nbytes(data: torch.Tensor, parts: List[torch.Tensor]) -> int:
    """The bytes a message takes: its header and its large tensors."""
    return data.numel() + sum(t.numel() * t.element_size() for t in parts)


def _header(obj: Any) -> Tuple[torch.Tensor, List[torch.Tensor]]:
    """The bytes of :obj:`obj` without its large tensors (with their shapes and dtypes), and those."""
    parts: List[torch.Tensor] = []
    packed = _pack(obj, parts)
    return _to_bytes({"obj": packed, "parts": [(list(t.shape), str(t.dtype)) for t in parts]}), parts


def _empty_parts(header: Dict[str, Any]) -> List[torch.Tensor]:
    """Room for the large tensors a header announces."""
    out = []
    for shape, dtype in header["parts"]:
        if dtype not in _DIRECT_DTYPES or not all(isinstance(s, int) and s >= 0 for s in shape):
            raise ValueError(f"a process sent a tensor of shape {shape} and dtype {dtype}")
        out.append(torch.empty(shape, dtype=_DIRECT_DTYPES[dtype]))
    return out


def _send(obj: Any, dst: int) -> int:
    data, parts = _header(obj)
    dist.send(torch.tensor([data.numel()], dtype=torch.long), dst)
    dist.send(data, dst)
    for t in parts:
        dist.send(t, dst)
    return _nbytes(data, parts)


def _recv(src: int) -> Any:
    size = torch.zeros(1, dtype=torch.long)
    dist.recv(size, src)
    data = torch.empty(int(size), dtype=torch.uint8)
    dist.recv(data, src)
    header = _from_bytes(data)
    parts = _empty_parts(header)
    for t in parts:
        dist.recv(t, src)
    return _unpack(header["obj"], parts)


def _broadcast(obj: Any, rank: int) -> Tuple[Any, int]:
    """:obj:`obj` of process 0, in every process (and the bytes it took)."""
    data, parts = _header(obj) if rank == 0 else (torch.empty(0, dtype=torch.uint8), [])
    size = torch.tensor([data.numel()], dtype=torch.long)
    dist.broadcast(size, 0)
    if rank != 0:
        data = torch.empty(int(size), dtype=torch.uint8)
    dist.broadcast(data, 0)
    if rank != 0:
        header = _from_bytes(data)
        parts = _empty_parts(header)
    for t in parts:
        dist.broadcast(t, 0)
    return (obj if rank == 0 else _unpack(header["obj"], parts)), _nbytes(data, parts)


def _all_ok(error: Optional[BaseException]) -> None:
    """Exchange error messages; raise the first one in every process (a malformed line as such)."""
    from ..datasets.streamspot import MalformedLineError

    world = dist.get_world_size()
    kind = "malformed" if isinstance(error, MalformedLineError) else \
        "memory" if isinstance(error, MemoryError) else "error"
    text = "" if error is None else str(error) or type(error).__name__  # (MemoryError() has no message)
    msg = _to_bytes([kind, text])
    size = torch.tensor([msg.numel()], dtype=torch.long)
    sizes = [torch.zeros(1, dtype=torch.long) for _ in range(world)]
    dist.all_gather(sizes, size)
    top = max(int(s) for s in sizes)
    padded = torch.zeros(top, dtype=torch.uint8)
    padded[: msg.numel()] = msg
    parts = [torch.zeros(top, dtype=torch.uint8) for _ in range(world)]
    dist.all_gather(parts, padded)
    for r, (part, s) in enumerate(zip(parts, sizes)):
        kind, text = _from_bytes(part[: int(s)])
        if text:
            cls = {"malformed": MalformedLineError, "memory": MemoryError}.get(kind, ValueError)
            raise cls(text if r == dist.get_rank() else f"process {r}: {text}")


def _agreed_size(path: str) -> int:
    """The file's size, the same in every process (else a :class:`ValueError` in every process).

    Each process cuts its byte range from it: a file that grows while they start (a live log) would
    otherwise be cut at two sizes, and lines between the cuts skipped or read twice. Lines appended
    after it are read by none.
    """
    failed: Optional[OSError] = None
    try:
        mine = os.path.getsize(path)
    except OSError as err:
        mine, failed = -1, err
    sizes = [torch.zeros(1, dtype=torch.long) for _ in range(dist.get_world_size())]
    dist.all_gather(sizes, torch.tensor([mine], dtype=torch.long))
    if failed is not None:  # (every process raises: none waits for another)
        raise failed
    unread = [r for r, s in enumerate(sizes) if int(s) < 0]
    if unread:
        raise ValueError(f"{path}: process {unread[0]} cannot read it (every process reads the same file)")
    seen = sorted({int(s) for s in sizes})
    if len(seen) > 1:
        listed = ", ".join(f"{s:,}" for s in seen)
        raise ValueError(f"{path} has other sizes in different processes ({listed} bytes): it changed "
                         "while the shards were cut (or the processes see other copies); "
                         "run on a file that is no longer being written, the same in every process")
    return mine


# -- the passes ------------------------------------------------------------------------


def _without(state: Optional[Dict[str, Any]], names: Tuple[str, ...]) -> Optional[Dict[str, Any]]:
    """A state without some of its arrays."""
    if state is None:
        return None
    return dict(state, arrays={k: v for k, v in state["arrays"].items() if k not in names})


def _base_only(state: Dict[str, Any]) -> Tuple[str, ...]:
    """The arrays of a pass >= 2 state that only the base holds (and neighbor counts from pass 1)."""
    return _BASE_ONLY + (("nbr_w",) if "rep_len" in state["arrays"] else ())


def _strip(state: Dict[str, Any]) -> Dict[str, Any]:
    """A pass >= 2 shard's state without what every process has (the base's arrays and tables)."""
    out = {k: v for k, v in state.items() if k not in _TABLES}
    base_only = _base_only(state)
    out["arrays"] = {k: v for k, v in state["arrays"].items() if k not in base_only}
    return out


def _restore(state: Dict[str, Any], base: Dict[str, Any]) -> Dict[str, Any]:
    out = dict(state, **{k: base[k] for k in _TABLES})
    base_only = _base_only(base)
    out["arrays"] = dict(state["arrays"], **{k: v for k, v in base["arrays"].items() if k in base_only})
    return out


def _check_overflow(ks: KongStream) -> None:
    """The one-process error where this process's sketches overflowed.

    (Its state would be refused, not explained, where it is merged or broadcast: 'rows' holds values
    that are not finite.)
    """
    from ..outputs import check_finite

    nodes = ks._nodes  # (the live rows in use: state_dict() would copy them all)
    for t in [ks._rows[: ks.num_graphs], *(a[: nodes.n] for a in nodes.arrays.values())]:
        if t.is_floating_point():
            check_finite(t, ks.cfg, "stream's sketches" if ks.linear else "sketch", ks.dtype, cosine=False)


def _tree_merge(ks: KongStream, rank: int, world: int, base: Optional[Dict[str, Any]],
                name: Callable[[Any], Any]) -> Tuple[Any, int, Optional[BaseException]]:
    """Merge the shards' states into process 0's, in time order.

    Returns it there (None elsewhere), the bytes sent, and the error of a merge that failed here
    (the exchanges go on, so that every process reaches the check of errors that follows).
    """
    step, sent = 1, 0
    error: Optional[BaseException] = None
    while step < world:
        if rank % (2 * step) == step:  # send to the partner on the left and stop
            state = ks.state_dict()
            sent += _send(state if base is None else _strip(state), rank - step)
            return None, sent, error
        if rank % (2 * step) == 0 and rank + step < world:
            other = _recv(rank + step)
            other = other if base is None else _restore(other, base)
            if error is None:
                try:  # (assign: its arrays are this message's or the base's, which merges only read)
                    ks = merge_into(ks, KongStream.from_state_dict(other, assign=True))
                except NodeTypeConflict as err:  # the ids as the file gives them (those this process read)
                    error = ValueError(err.message(name))
                except Exception as err:  # (any failure: reported in the exchange that follows)
                    error = err
        step *= 2
    return ks, sent, error


def read_shards(ks: KongStream, path: str, chunk_size: int = 1 << 20, strict: bool = False, keep: int = 10,
                progress: Any = None) -> Tuple[Optional[KongStream], Dict[str, Any]]:
    """Read a StreamSpot file, all passes, in time shards over the processes of the default group.

    Every process calls it with the same options (:obj:`ks` a fresh stream
    of those options) after :func:`torch.distributed.init_process_group`.

    Args:
        ks (KongStream): A fresh stream with the options.
        path (str): The StreamSpot file (every process reads its byte range).
        chunk_size (int, optional): Edges per chunk.
        strict (bool, optional): A malformed line stops every process.
        keep (int, optional): Malformed lines kept per process.
        progress (callable, optional): Called with a one-line message after
            every pass (on process 0).

    Returns:
        (KongStream or None, dict): The state of the whole stream on process
        0 (None elsewhere), and on process 0 the run's counts: lines, edges,
        blank and malformed lines (the first ones kept), bytes sent per pass,
        the string graph ids (key to token), the edges of the first graph in
        process 0's shard (``first_graph_edges``), and every process's CPU seconds
        per pass reading its shard (``cpu_read``) and merging (``cpu_merge``).
    """
    from ..datasets.streamspot import MalformedLine, StreamSpotReader
    from ..datasets.streamspot.reader import header_note

    if ks.num_edges or ks.pass_index != 1 or ks.num_graphs:  # (each process would count them once)
        raise ValueError(f"'ks' must be a fresh stream (it is in pass {ks.pass_index} with {ks.num_edges:,} "
                         f"edges of {ks.num_graphs:,} graphs): read_shards reads the whole file, every pass")
    rank, world = dist.get_rank(), dist.get_world_size()
    size = _agreed_size(path)
    byte_range = (size * rank // world, size * (rank + 1) // world)
    stats: Dict[str, Any] = {"bytes_sent": [], "bytes_broadcast": []}
    cpu: Dict[str, List[float]] = {"read": [], "merge": []}  # this process's CPU seconds per pass
    base: Optional[Dict[str, Any]] = None
    full: Optional[Dict[str, Any]] = None
    local: Optional[KongStream] = None
    reader, keys = None, None
    for i in range(1, ks.num_passes + 1):
        error: Optional[BaseException] = None
        clock = time.process_time()
        try:
            # (pass 1 on a copy of the fresh stream, which this process then drops; later passes on the
            # base's arrays themselves: the passes and merges only read the base's own arrays (_BASE_ONLY),
            # the new node sketches 'Y' start as this process's zeros; process 0's end_pass adds into
            # 'acc' in place, after the last read of this base, which the next broadcast replaces)
            local = ks.copy() if base is None else KongStream.from_state_dict(base, assign=True)
            reader = StreamSpotReader(path, chunk_size, strict=strict, keep=keep, byte_range=byte_range)
            keys = _TokenKeys(reader)
            for c in reader:
                local.update(keys(c.src), c.src_type, keys(c.dst), c.dst_type, c.edge_type,
                             keys(c.graph, graph=True))
            _check_overflow(local)
        except Exception as err:  # (any failure: every process stops with its message, none waits for it)
            error = err
        cpu["read"].append(time.process_time() - clock)
        _all_ok(error)
        clock = time.process_time()
        assert local is not None
        merged, sent, error = _tree_merge(local, rank, world, base, keys.name if keys is not None else str)
        local = None
        stats["bytes_sent"].append(_sum_over(sent))
        if error is None and rank == 0 and i < ks.num_passes:
            assert merged is not None
            try:
                merged.end_pass()
                _check_overflow(merged)
            except Exception as err:
                error = err
        _all_ok(error)
        cpu["merge"].append(time.process_time() - clock)
        if i < ks.num_passes:
            sketches = ks._needs_node_sketch(i + 1)
            if rank == 0 and sketches and "Y" in merged._nodes:
                merged._nodes.drop("Y")  # (the zeros end_pass made: not copied, not sent)
            full = merged.state_dict() if rank == 0 else None
            merged = None  # (the next pass starts from the broadcast state: no more copies held)
            # the linear map's last pass reads no sketches: they stay in process 0; a pass's new node
            # sketches start as zeros: made where they are used, not sent
            base, sent = _broadcast(full if sketches else _without(full, ("Yprev", "acc")), rank)
            if sketches and "Yprev" in base["arrays"]:  # (end_pass: Y = zeros shaped as Yprev)
                base["arrays"]["Y"] = torch.zeros_like(base["arrays"]["Yprev"])
            full = full if full is not None and not sketches else None  # (kept for the sketches kept back)
            stats["bytes_broadcast"].append(sent * (world - 1))
        if progress is not None and rank == 0:
            progress(f"pass {i}/{ks.num_passes} read and merged")
    if rank == 0 and full is not None and "Yprev" in full["arrays"] and "Yprev" not in merged._nodes:
        # the sketches kept back
        merged = KongStream.from_state_dict(_restore(merged.state_dict(), full), assign=True)
    assert reader is not None and keys is not None
    counts = torch.tensor([reader.num_lines, reader.num_edges, reader.num_blank, reader.num_malformed])
    dist.all_reduce(counts)
    found = [(b.line_no, b.text, b.reason) for b in reader.malformed]
    gathered = _gather_small({"malformed": found, "graphs": keys.graph_tokens, "cpu": cpu}, rank, world)
    if rank != 0:
        return None, stats
    stats.update(zip(("num_lines", "num_edges", "num_blank", "num_malformed"), counts.tolist()))
    stats["malformed"] = [MalformedLine(*m) for g in gathered for m in g["malformed"]][:keep]
    stats["graph_tokens"] = {k: v for g in gathered for k, v in g["graphs"].items()}
    stats["cpu_read"] = [g["cpu"]["read"] for g in gathered]  # per process, per pass
    stats["cpu_merge"] = [g["cpu"]["merge"] for g in gathered]
    tokens = stats["graph_tokens"]
    # (process 0 read the first edge: its count of the first graph's edges is a lower bound, enough to
    # rule out a header line when it passes one)
    stats["first_graph_edges"] = reader.first_graph_edges
    note = header_note([str(tokens.get(g, g)) for g in merged.graph_ids], reader.first_graph_edges or None)
    if note is not None:  # as read_streamspot warns
        warn(note)
    return merged, stats


def _sum_over(value: int) -> int:
    t = torch.tensor([value], dtype=torch.long)
    dist.all_reduce(t)
    return int(t)


def _gather_small(obj: Any, rank: int, world: int) -> List[Any]:
    """:obj:`obj` of every process, on process 0 (a list in rank order; empty elsewhere)."""
    if rank != 0:
        _send(obj, 0)
        return []
    return [obj] + [_recv(r) for r in range(1, world)]


__all__ = ["read_shards", "token_key"]
