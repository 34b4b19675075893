r"""Checkpoint files of a stream, and the checks a state passes before it is used.

**The file** (format 2): the 8 bytes ``KONGSTRM``, a format byte, the
32-byte BLAKE2b digest of the payload, then the payload: the state dict
written by :func:`torch.save`, read back with ``weights_only=True`` (plain
tensors and containers; never unpickled objects). A file whose digest does
not match (a flipped bit, a torn copy) is refused. Files of format 1 (the
bare :func:`torch.save` zip of a version-1 state, written before the digest
existed) still load, with a warning that no checksum guards them; their
contents pass the same checks. Whatever the format, a file whose tensors
would read as more than twice its size (entries repeating a few stored
values) is refused before anything is computed on them, and so is a name
that is not a regular file (a pipe, a device).

**Writing** is atomic: the file is written to a temporary file next to the
target (``.NAME.*.tmp``), flushed to disk and renamed over the target, so a
run killed at any moment leaves the old checkpoint or the new one; temporary
files left by a killed run are removed by the next save of that checkpoint.

**Memory:** the payload streams to and from the file (the digest is checked in chunks of 1 MiB),
so a save needs one copy of the node arrays' rows in use beside the stream, and a load the arrays
read from the file (they become the stream's own) plus a transient ``int32`` copy of the integer
ones, never the whole file in memory.

**The checks** (:func:`check_state`) make a damaged or foreign state a
:class:`ValueError` naming what is wrong, never a crash later or silently
wrong sketches: the entries and their types, the array shapes, the
ranges of every index (graph, node, symbol, string code), string codes that
match their lengths, and the neighbor counts (non-negative integers, one per
incidence read).
"""
import copy
import errno
import hashlib
import io
import os
import pickle
from typing import TYPE_CHECKING, Any, BinaryIO, Dict, NoReturn, Optional, Tuple, Union, cast

import torch
from torch import Tensor

from ..config import MAX_SEED
from ..files import atomic_file, regular_file
from ..sketch import HASH_VERSION, SketchHashes, SymbolHashTable
from ..warn import ignoring, warn
from .ids import _PLAIN, _RID_BITS, _RID_MASK, MAX_NODES, StreamIds
from .options import node_sketches, replays
from .replay import to_signed, to_unsigned
from .state import COUNT_DTYPE, NodeState

if TYPE_CHECKING:  # pragma: no cover
    from .core import KongStream

PathLike = Union[str, "os.PathLike[str]"]
MAGIC = b"KONGSTRM"
FORMAT = 2
_DIGEST = 32
_HEADER = len(MAGIC) + 1 + _DIGEST
_ZIP = b"PK\x03\x04"
_SLACK = 1 << 26  # (bytes of arrays a payload may add beyond twice its size: small stride-0 tensors)

# State versions. 4: the hash scheme ('hashes'; earlier states are scheme 1); 3: linear h = 2 without
# node sketches; 2: replay checksums, fingerprint; 1-3 still load, and go on with the hashes they began with
STATE_VERSION = 4
READS = (1, 2, 3, STATE_VERSION)
DTYPES = ("float64", "float32")


def stream_state(ks: "KongStream") -> Dict[str, Any]:
    """The content of :meth:`KongStream.state_dict` (of a settled stream)."""
    return {
        "version": STATE_VERSION,
        "hashes": ks.hashes.version,
        "config": ks._saved_config(),
        "pass_index": ks.pass_index,
        "position": ks.position,
        "num_edges": ks.num_edges,
        **ks._ids.state(),
        "symbols": torch.from_numpy(ks._table.keys.copy()),
        "arrays": ks._nodes.state(),
        "rows": ks._rows[: ks.num_graphs].clone(),
        "pass_rows": saved_pass_rows(ks),
        "replay": {"first": None if ks._first is None else to_signed(ks._first),
                   "current": None if ks._current is None else to_signed(ks._current)},
        "source": ks.source,
    }


def restore(ks: "KongStream", state: Any, assign: bool) -> None:
    """:meth:`KongStream.load_state_dict`: check :obj:`state` for :obj:`ks`, then put it in it.

    A state refused by a check leaves :obj:`ks` as it was.
    """
    state, saved_seed = old_seed(state)
    try:
        pass_rows = check_state(ks, state, READS)
    except ValueError as err:
        if saved_seed is None:
            raise
        raise retold(err, f"{err} (the state's seed {saved_seed} draws as {saved_seed % 2**32}: kong_pyg "
                     "before seeds stopped at 2**32 - 1 took it)") from None
    scheme = hash_scheme(state)
    if scheme != ks.hashes.version:
        ks.hashes = SketchHashes(ks.dim, ks.degree, ks.k, ks.hops + 1, ks.seed, version=scheme)
    replay = state.get("replay", {"first": None, "current": None})
    ks.reset()
    ks.pass_index, ks.position = state["pass_index"], state["position"]
    ks.num_edges, ks.source = state["num_edges"], state.get("source")
    ks._first = None if replay["first"] is None else to_unsigned(replay["first"])
    ks._current = None if replay["current"] is None else to_unsigned(replay["current"])
    ks._ids = StreamIds.from_state(state)
    ks._set_table(SymbolHashTable(ks.hashes, ks.dtype, keys=state["symbols"].numpy()))
    ks._nodes = NodeState.from_state(ks.k, state["arrays"], len(ks._ids.nodes), assign)
    ks._replay = replay_layout(ks, state)
    if "nbr_w" in ks._nodes:  # (older states count in the sketches' dtype: float32 stops at 2^24)
        ks._nodes.put("nbr_w", ks._nodes["nbr_w"].to(COUNT_DTYPE))
    ks._rows = state["rows"].clone()
    ks._pass_rows = pass_rows.clone() if ks.pass_index > 1 else ks._pass_rows
    if saved_seed is not None:
        warn(f"this KongStream state was saved with seed={saved_seed} (kong_pyg before seeds stopped at "
             f"2**32 - 1), whose hash tables are those of seed {ks.seed}: it loaded as seed={ks.seed}")


def saved_pass_rows(ks: "KongStream") -> Tensor:
    """A stream's rows of the pass after the first, :obj:`[G, b]`; before pass 2 zeros that take no memory."""
    g = min(ks.num_graphs, ks._rows.size(0))  # (shaped like the saved rows: none for non-linear maps)
    if ks._pass_rows.size(0) >= g:
        return ks._pass_rows[:g].clone()
    return torch.zeros(1, ks.dim, dtype=ks.dtype).expand(g, ks.dim)  # (torch.save keeps the stride)


def save_checkpoint(state: Dict[str, Any], path: PathLike) -> None:
    """Write a state to :obj:`path` in the checkpoint format, atomically.

    The payload goes straight into the file, hashed as it is written (no copy of it in memory: a
    stream's state can be most of the memory there is).
    """
    with atomic_file(path) as f:
        f.write(MAGIC + bytes([FORMAT]) + bytes(_DIGEST))  # (the digest, once known, over the zeros)
        out = _Hashing(f)
        torch.save(state, cast(BinaryIO, out))  # (write and flush are all torch.save uses)
        f.seek(len(MAGIC) + 1)
        f.write(out.digest.digest())


class _Hashing:
    """A write-only file that hashes what goes through it."""

    def __init__(self, f: BinaryIO) -> None:
        self.f, self.digest = f, hashlib.blake2b(digest_size=_DIGEST)

    def write(self, data: Any) -> int:
        self.digest.update(data)
        return self.f.write(data)

    def flush(self) -> None:
        self.f.flush()


class _Window(io.RawIOBase):
    """The part of a binary file from :obj:`start` on, as a file of its own (a payload after a header)."""

    def __init__(self, f: io.BufferedReader, start: int) -> None:
        super().__init__()
        self.f, self.start = f, start
        f.seek(start)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        return self.f.readinto(buffer)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self.f.seek(self.start + offset if whence == io.SEEK_SET else offset, whence) - self.start

    def tell(self) -> int:
        return self.f.tell() - self.start


def _stamp(f: BinaryIO) -> Tuple[int, int, int]:
    """The size and times of an open file: what a write into it changes."""
    st = os.fstat(f.fileno())
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns


#: Bytes read at a time while a checkpoint's digest is checked.
_CHUNK = 1 << 20


def load_checkpoint(path: PathLike) -> Dict[str, Any]:
    """The state in a checkpoint file (format 2, or a format-1 :func:`torch.save` zip).

    The file is read twice, never whole into memory: once in chunks for its digest, then by
    :func:`torch.load` from the file, tensor by tensor; a file written to in between is refused.

    Raises:
        FileNotFoundError, IsADirectoryError: As :func:`open`.
        ValueError: The file is empty, truncated, damaged or not a
            checkpoint (the message names the file).
    """
    name = os.fspath(path)
    if not os.path.isdir(path) and not regular_file(path, "give the path of a checkpoint file"):  # (a pipe
        # would hang the read, a device would fill the memory; a folder: open's IsADirectoryError)
        raise FileNotFoundError(errno.ENOENT, "No such checkpoint file", name)
    with open(path, "rb") as f:
        stamp = _stamp(f)
        size = stamp[0]
        head = f.read(_HEADER)
        if head.startswith(MAGIC):
            if len(head) < _HEADER:
                raise ValueError(f"{name}: truncated KongStream checkpoint ({len(head)} bytes)")
            if head[len(MAGIC)] != FORMAT:
                raise ValueError(f"{name}: KongStream checkpoint of unknown format {head[len(MAGIC)]} "
                                 f"(this version reads formats 1 and {FORMAT})")
            digest = hashlib.blake2b(digest_size=_DIGEST)
            for chunk in iter(lambda: f.read(_CHUNK), b""):
                digest.update(chunk)
            if digest.digest() != head[len(MAGIC) + 1 : _HEADER]:
                raise ValueError(f"{name}: damaged KongStream checkpoint (its checksum does not match: "
                                 "truncated or altered)")
            start = _HEADER
        elif head.startswith(_ZIP):  # format 1: a bare torch.save zip
            start = 0
        elif not head:
            raise ValueError(f"{name}: empty file, not a KongStream checkpoint")
        else:
            raise ValueError(f"{name}: not a KongStream checkpoint")
        state = load_state_file(_Window(f, start), size - start, name)
        if _stamp(f) != stamp:  # (the digest covers the bytes of the first read only)
            raise ValueError(f"{name}: the checkpoint changed while it was read (another process writing "
                             "it?); load it again once it is written")
    if not isinstance(state, dict):
        raise ValueError(f"{name}: not a KongStream checkpoint (it holds a {type(state).__name__}, "
                         "not a state dict)")
    if start == 0 and "version" not in state:
        raise ValueError(f"{name}: not a KongStream checkpoint (a torch.save file of a dict without a "
                         "KongStream state version)")
    if start == 0:  # (format 1, or a state the user saved with torch.save)
        warn(f"{name} is a bare torch.save file of a KongStream state (format 1, or saved by hand): no "
             "checksum guards it, so damage to it would go unnoticed; save it again with KongStream.save "
             "(KongStream.load(path).save(path)) to add one")
    return state


def _logical_bytes(obj: Any) -> int:
    """The bytes of the tensors in :obj:`obj` (dicts, lists, tuples of them) as read: entries x size."""
    if isinstance(obj, Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, dict):
        return sum(map(_logical_bytes, obj.values()))
    if isinstance(obj, (list, tuple)):
        return sum(map(_logical_bytes, obj))
    return 0


def load_state_file(f: Any, length: int, name: str) -> Any:
    """What :func:`torch.save` wrote into the binary file :obj:`f` (:obj:`length` bytes), read safely.

    Only tensors and containers are read. A payload that holds other objects, or whose tensors repeat
    stored values into more than twice its size (tensors of stride 0, as :func:`saved_pass_rows`
    writes, may double it), is a :class:`ValueError` naming :obj:`name`, before anything is computed
    on them.
    """
    try:
        with ignoring(UserWarning, "Detected pickle protocol"):  # (torch's note: the error below says it)
            state = torch.load(f, weights_only=True)
    except pickle.UnpicklingError:  # (weights_only refused a global: never loaded)
        raise ValueError(f"{name}: not a KongStream checkpoint: it holds objects other than tensors and "
                         "plain containers, which are never loaded (loading them could run code)") from None
    except Exception as err:  # torch raises many kinds on a bad zip or pickle
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ValueError(f"{name}: unreadable KongStream checkpoint ({type(err).__name__}: "
                         f"{reason[:200]})") from None
    size = _logical_bytes(state)
    if size > 2 * length + _SLACK:
        raise ValueError(f"{name}: not a KongStream checkpoint: its arrays would take {size:,} bytes from "
                         f"{length:,} bytes of file (entries repeating a few stored values)")
    return state


# -- checks of a state ---------------------------------------------------------------


class OptionsDiffer(ValueError):
    """A state made with other options than the stream's.

    :attr:`diff` maps each option that differs to :obj:`(saved, current)`.
    """

    def __init__(self, message: str, diff: Optional[Dict[str, Tuple[Any, Any]]] = None) -> None:
        super().__init__(message)
        self.diff: Dict[str, Tuple[Any, Any]] = dict(diff or {})


def options_diff(first: Dict[str, Any], second: Dict[str, Any]) -> Dict[str, Tuple[Any, Any]]:
    """The options of two :meth:`KongStream.config` dicts whose values differ: name -> (first's, second's)."""
    absent = {"own_label": True}  # (stored only when not the default)
    keys = list(second) + [k for k in first if k not in second]
    return {k: (first.get(k, absent.get(k)), second.get(k, absent.get(k))) for k in keys
            if first.get(k, absent.get(k)) != second.get(k, absent.get(k))}


def retold(err: ValueError, message: str) -> ValueError:
    """:obj:`err` with another message, of its class and with its attributes.

    (An :class:`OptionsDiffer` keeps its :attr:`~OptionsDiffer.diff`.)
    """
    out = copy.copy(err)
    out.args = (message,)
    return out


def _fail(what: str) -> NoReturn:
    raise ValueError(f"invalid KongStream state: {what}")


def _int(state: Dict[str, Any], key: str, low: int = 0) -> None:
    value = state.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        _fail(f"{key!r} must be an integer >= {low} (got {value!r})")


def _vector(value: Any, what: str) -> Tensor:
    if not isinstance(value, Tensor) or value.dtype != torch.long or value.dim() != 1:
        _fail(f"{what} must be a 1-D int64 tensor")
    return value


def _distinct(keys: Tensor, what: str) -> None:
    if keys.numel() and torch.unique(keys).numel() != keys.numel():
        _fail(f"{what} holds repeated keys")


def _in_range(t: Tensor, low: int, high: int, what: str) -> None:
    if t.numel() and (int(t.min()) < low or int(t.max()) >= high):
        _fail(f"{what} holds values outside [{low}, {high})")


def check_layout(state: Any) -> None:
    """The entries of a state and their types (before its options are known)."""
    if not isinstance(state, dict):
        _fail(f"expected a dict, got {type(state).__name__}")
    for key in ("pass_index", "position", "num_edges"):
        _int(state, key, 1 if key == "pass_index" else 0)
    enc = state.get("encoder")
    if not isinstance(enc, dict) or not isinstance(enc.get("strings"), list):
        _fail("'encoder' must be a dict with 'wide' and 'strings'")
    if not all(isinstance(s, str) for s in enc["strings"]):
        _fail("'encoder' strings must be strings")
    if len(set(enc["strings"])) != len(enc["strings"]):
        _fail("'encoder' holds repeated strings")
    arrays = state.get("arrays")
    entries = [enc.get("wide"), *(arrays.values() if isinstance(arrays, dict) else ())] + [
        state.get(k) for k in ("graphs", "nodes", "symbols", "rows", "pass_rows")]
    if any(isinstance(t, Tensor) and (t.device.type != "cpu" or t.layout != torch.strided) for t in entries):
        _fail("every tensor must be a dense CPU tensor")  # (first: a meta tensor fails any reduction)
    _distinct(_vector(enc.get("wide"), "'encoder' wide ids"), "'encoder' wide ids")
    for key in ("graphs", "nodes", "symbols"):
        _distinct(_vector(state.get(key), repr(key)), repr(key))
    if not isinstance(arrays, dict) or not all(isinstance(k, str) and isinstance(v, Tensor)
                                               for k, v in arrays.items()):
        _fail("'arrays' must be a dict of named tensors")
    rows = state.get("rows")
    if not isinstance(rows, Tensor) or rows.dim() != 2 or not rows.is_floating_point():
        _fail("'rows' must be a 2-D floating-point tensor")
    replay = state.get("replay", {"first": None, "current": None})
    if not isinstance(replay, dict) or set(replay) != {"first", "current"} or any(
            not (v is None or (isinstance(v, int) and -(1 << 63) <= v < 1 << 63))
            for v in (replay.get("first"), replay.get("current"))):
        _fail("'replay' must hold two 64-bit checksums (or None), 'first' and 'current'")
    if not isinstance(state.get("source"), (str, type(None))):
        _fail("'source' must be a string or None")


def check_arrays(state: Dict[str, Any], need: Dict[str, Optional[int]], optional: Dict[str, Optional[int]],
                 k: int, dtype: torch.dtype, num_graphs: int, num_symbols: int, linear: bool,
                 dim: int) -> None:
    """Shapes and index ranges of the per-node arrays and graph rows.

    Args:
        state (dict): The state (after :func:`check_layout`).
        need (dict): The arrays this pass must hold, with their row width
            (None: one value per node; 0: :math:`k - 1` string codes).
        optional (dict): Arrays it may hold, likewise.
        k (int): The k-gram length.
        dtype (torch.dtype): The dtype of sketches.
        num_graphs (int): The number of graphs.
        num_symbols (int): The number of symbols.
        linear (bool): Whether the kernel is the linear map (graph rows in use).
        dim (int): The sketch size.
    """
    arrays: Dict[str, Tensor] = state["arrays"]
    n = state["nodes"].numel()
    if n > MAX_NODES or num_symbols > MAX_NODES:  # node indices and symbol ids are int32 in memory
        _fail(f"{n:,} nodes and {num_symbols:,} symbols: at most {MAX_NODES:,} of each")
    if set(arrays) - set(need) - set(optional) or set(need) - set(arrays):
        _fail(f"this pass holds the arrays {sorted(need)}, the state {sorted(arrays)}")
    for name, t in arrays.items():
        width = need[name] if name in need else optional[name]
        shape = (n,) if width is None else (n, k - 1 if width == 0 else width)
        if tuple(t.shape) != shape:
            _fail(f"array {name!r} has shape {tuple(t.shape)}, expected {shape}")
        is_float = name in ("Y", "Yprev", "acc", "nbr_w")
        dtypes = (dtype, COUNT_DTYPE) if name == "nbr_w" else (dtype,) if is_float else (torch.long,)
        if t.dtype not in dtypes:
            _fail(f"array {name!r} has dtype {t.dtype}")
        if is_float and not bool(torch.isfinite(t).all()):
            _fail(f"array {name!r} holds values that are not finite")
    _in_range(arrays["node_graph"], 0, num_graphs, "'node_graph'")
    _in_range(arrays["node_sym"], 0, num_symbols, "'node_sym'")
    for prefix in ("seg", "prev", "rep"):
        if prefix + "_len" in arrays:
            _in_range(arrays[prefix + "_len"], 0, k + 1, f"'{prefix}_len'")
            # the first min(L, k - 1) codes are symbols, the rest BREAK (kgrams.StringState)
            filled = torch.arange(k - 1) < arrays[prefix + "_len"].clamp(max=k - 1).unsqueeze(1)
            for part in ("_pre", "_suf"):
                _in_range(arrays[prefix + part], -1, num_symbols, f"'{prefix}{part}'")
                if not torch.equal(arrays[prefix + part] >= 0, filled):
                    _fail(f"'{prefix}{part}' does not match the string lengths '{prefix}_len'")
    _in_range(state["nodes"] >> _RID_BITS, 0, num_graphs, "'nodes' (graph part)")
    if not torch.equal(arrays["node_graph"], state["nodes"] >> _RID_BITS):
        _fail("'node_graph' does not match the graph part of the node keys 'nodes'")
    enc = state["encoder"]
    if bool((state["graphs"] >> _RID_BITS).any()):
        _fail("'graphs' keys hold graph bits")
    for key, ids in (("graphs", state["graphs"]), ("nodes", state["nodes"] & _RID_MASK)):
        table = ids[ids >= _PLAIN] - _PLAIN  # encoded ids: 2i the wide integer i, 2i + 1 the string i
        wide, strings = table[table % 2 == 0] // 2, table[table % 2 == 1] // 2
        if bool((wide >= enc["wide"].numel()).any()) or bool((strings >= len(enc["strings"])).any()):
            _fail(f"{key!r} keys refer to ids missing from 'encoder'")
    rows = state["rows"]
    want = (num_graphs if linear else 0, dim)
    if tuple(rows.shape) != want or rows.dtype != dtype:
        _fail(f"'rows' must be {dtype} of shape {want} (got {rows.dtype} {tuple(rows.shape)})")
    if not bool(torch.isfinite(rows).all()):
        _fail("'rows' holds values that are not finite")


def replay_layout(ks: "KongStream", state: Dict[str, Any]) -> bool:
    """Whether a state (after :func:`check_layout`) is laid out for a last pass that replays pass 1.

    That is how a new linear stream at :math:`h = 2` runs (see
    :mod:`kong_pyg.stream`); its states written by earlier versions
    hold node sketches in pass 1 (``Y``) and no replayed strings in pass 2
    (``rep_*``), and resume as they were written.
    """
    arrays = state["arrays"]
    return (replays(ks.linear, ks.hops) and "Y" not in arrays
            and (state["pass_index"] == 1 or "rep_len" in arrays))


def arrays_of_pass(ks: "KongStream", i: int,
                   replay: bool) -> Tuple[Dict[str, Optional[int]], Dict[str, Optional[int]]]:
    """The per-node arrays pass :obj:`i` of :obj:`ks` holds, and those it may hold, with their widths."""
    width = ks.degree * ks.dim
    need: Dict[str, Optional[int]] = dict(node_graph=None, node_sym=None, seg_len=None, seg_pre=0, seg_suf=0)
    if node_sketches(ks.linear, ks.hops, replay, i):
        need["Y"] = width
    optional: Dict[str, Optional[int]] = {} if ks.linear else {"acc": width}
    if replay:  # neighbor counts from pass 1 on; the replayed strings in the last pass
        need["nbr_w"] = None
        if i >= 2:
            need.update(prev_len=None, prev_pre=0, prev_suf=0, rep_len=None, rep_pre=0, rep_suf=0)
    elif i >= 2:
        need.update(prev_len=None, prev_pre=0, prev_suf=0, Yprev=width)
        if not node_sketches(ks.linear, ks.hops, replay, i):  # the linear map's last pass: Yprev for output
            need["nbr_w"] = None
            optional["Yprev"] = need.pop("Yprev")
    return need, optional


def _check_counts(w: Tensor, total: int) -> None:
    """Neighbor counts: non-negative integers, one per incidence read (else grams would weigh wrongly)."""
    w = w.double()
    if bool((w < 0).any()) or not bool((w == w.round()).all()) or float(w.sum()) != total:
        _fail(f"'nbr_w' must hold non-negative integer neighbor counts summing to {total:,} (one per "
              "incidence read)")


def _version(state: Any, versions: Tuple[int, ...]) -> int:
    """The version of a state: a dict of one of :obj:`versions` (else a TypeError or ValueError)."""
    if not isinstance(state, dict):
        raise TypeError(f"a KongStream state is the dict of state_dict() (got {type(state).__name__})")
    version = state.get("version")
    if version is None:
        raise ValueError("not a KongStream state: the dict has no 'version' (give the dict of "
                         "KongStream.state_dict(), or KongStream.load(path) for a checkpoint file)")
    if version not in versions:
        raise ValueError(f"unsupported KongStream state version {version!r} (this version reads "
                         f"{', '.join(map(str, versions))})")
    return int(version)


def old_seed(state: Any) -> Tuple[Any, Optional[int]]:
    """A state saved with a seed of 2**32 or more (older versions took 64 bits), as the seed it drew with.

    PyTorch's CPU generator keeps the low 32 bits of a seed, so such a state's tables are those of its
    seed mod 2**32: it is returned with that seed (a copy), and the seed it was saved with; any other
    state as it is, and None.
    """
    cfg = state.get("config") if isinstance(state, dict) else None
    if not isinstance(cfg, dict):
        return state, None
    seed = cfg.get("seed")
    if not isinstance(seed, int) or isinstance(seed, bool) or not MAX_SEED < seed < 2**64:
        return state, None
    return dict(state, config=dict(cfg, seed=seed % 2**32)), seed


def saved_options(state: Any, versions: Tuple[int, ...], dtypes: Tuple[str, ...]) -> Dict[str, Any]:
    """The stream options of a state of one of :obj:`versions` (dtype one of :obj:`dtypes`, by name)."""
    _version(state, versions)
    cfg = state.get("config")
    if not isinstance(cfg, dict) or cfg.get("dtype") not in dtypes:
        raise ValueError("invalid KongStream state: 'config' must be a dict of options with a float dtype")
    return dict(cfg, dtype=getattr(torch, cfg["dtype"]))


def hash_scheme(state: Dict[str, Any]) -> int:
    """The sketch hash scheme of a state checked by :func:`check_state` (versions before 4: scheme 1)."""
    return state["hashes"] if state["version"] >= 4 else 1


def warn_old_scheme(ks: "KongStream", path: PathLike) -> None:
    """Warn where a checkpoint read from :obj:`path` goes on with an earlier sketch hash scheme."""
    if ks.hashes.version != HASH_VERSION:
        warn(f"{os.fspath(path)} was begun under sketch hash scheme {ks.hashes.version} (kong_pyg "
             f"before scheme {HASH_VERSION}): the stream goes on with those hashes, so its sketches "
             "continue that run's, and differ from those of a new KongStream or KongSketch (remove "
             "the checkpoint to start again under the current scheme)")


def check_state(ks: "KongStream", state: Any, versions: Tuple[int, ...]) -> Tensor:
    """Check a state for :obj:`ks` (its options, layout, arrays); returns its pass rows.

    Raises:
        ValueError: Another version, other options, or an invalid entry.
    """
    version = _version(state, versions)
    if version >= 4 and state.get("hashes") not in (1, HASH_VERSION):
        _fail(f"'hashes' must be the sketch hash scheme, 1 or {HASH_VERSION}")
    mine = ks._saved_config()
    saved = state.get("config")
    if saved != mine:
        if not isinstance(saved, dict):
            _fail("'config' must be a dict")
        diff = options_diff(saved, mine)
        raise OptionsDiffer(f"the state was made with other options (saved, current): {diff}", diff)
    check_layout(state)
    if state["pass_index"] > ks.num_passes:
        _fail(f"pass {state['pass_index']} of {ks.num_passes}")
    if state["pass_index"] > 1 and state["position"] > state["num_edges"]:
        _fail("the position is past the stream's end")
    replay = replay_layout(ks, state)
    need, optional = arrays_of_pass(ks, state["pass_index"], replay)
    check_arrays(state, need, optional, ks.k, ks.dtype, state["graphs"].numel(), state["symbols"].numel(),
                 ks.linear, ks.dim)
    if "nbr_w" in state["arrays"]:  # counted over pass 1 (replay layout), else over the last pass so far
        edges = state["num_edges"] if replay and state["pass_index"] >= 2 else state["position"]
        _check_counts(state["arrays"]["nbr_w"], edges * (2 if ks.undirected else 1))
    pass_rows = state.get("pass_rows", torch.zeros_like(state["rows"]))  # version 1: in 'rows'
    if not isinstance(pass_rows, Tensor) or pass_rows.shape != state["rows"].shape or \
            pass_rows.dtype != ks.dtype or not bool(torch.isfinite(pass_rows).all()):
        _fail("'pass_rows' must be finite, shaped like 'rows'")
    if state["pass_index"] == 1 and bool(pass_rows.any()):
        _fail("'pass_rows' must be zero in pass 1 (they hold the grams of later passes)")
    return pass_rows


__all__ = ["OptionsDiffer", "options_diff", "retold", "save_checkpoint", "load_checkpoint", "check_layout",
           "check_arrays", "check_state",
           "hash_scheme", "warn_old_scheme", "saved_options", "arrays_of_pass", "replay_layout", "MAGIC",
           "FORMAT"]
