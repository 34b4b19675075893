r"""Reading a StreamSpot edge stream: one parser, by chunks or whole.

**The line rules** (every source, every reader): the input is bytes (a text
source is encoded as UTF-8 first); a UTF-8 byte-order mark at the start of
a line is dropped (the file's, and each one's of files joined with
``cat``); text that starts as UTF-16 or UTF-32 is refused; lines end at
``\n``, ``\r\n`` or a lone ``\r`` (Python's universal newlines, so a file
read in binary and the same file opened in text mode give the same lines);
a line that is empty or holds only ASCII whitespace is *blank*; any other
line must hold exactly six tab-separated fields that are not empty once
stripped of ASCII whitespace and no NUL byte, else it is *malformed*; a
line longer than :data:`MAX_LINE_BYTES` is malformed too (skipped without
being held in memory). Every line is counted:
:attr:`StreamSpotReader.num_lines` is the sum of edges, blank and malformed
lines.

**Tokens are exact bytes.** A node or graph id that is a canonical decimal
integer of at most 18 digits is that integer; any other id is its bytes
(shown as a string decoded from UTF-8, undecodable bytes as
``surrogateescape`` escapes, which encode back to the same bytes). A type is
:func:`~kong_pyg.hashing.type_code` of its bytes: equal bytes give equal
codes, different bytes different codes (valid UTF-8 tokens get the code of
their string).
"""
import os
from typing import Any, Dict, Iterable, Iterator, List, Optional, TextIO, Tuple, Union

import numpy as np
import torch

from ...devices import cpu_by_default
from ...hashing import TYPE_LITERALS, type_code
from ...idmap import MAX_ID_DIGITS, IdMap, canonical_int, first_appearance
from ...warn import warn
from .records import EdgeChunk, EdgeStream, MalformedLine, MalformedLineError

#: Lines longer than this many bytes are malformed (and never held whole in memory).
MAX_LINE_BYTES = 1 << 20
_BOM = b"\xef\xbb\xbf"


def type_code_bytes(token: bytes) -> int:
    """:func:`~kong_pyg.hashing.type_code` of a token given as bytes (its UTF-8 string's code when valid).

    Undecodable bytes become surrogate escapes, which :func:`~kong_pyg.hashing.type_code` encodes back
    to the same bytes: one rule for both.
    """
    return type_code(token.decode("utf-8", errors="surrogateescape"))


def show_token(token: bytes) -> str:
    """A token as a string: UTF-8, undecodable bytes as ``surrogateescape`` escapes (reversible)."""
    return token.decode("utf-8", errors="surrogateescape")


def _binary_blocks(source: Any, block_size: int) -> Iterator[bytes]:
    """Blocks of bytes of a path, a (text or binary) file, or an iterable of lines (each ends a line)."""
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as f:
            yield from _binary_blocks(f, block_size)
        return
    if hasattr(source, "read"):
        while True:
            data = source.read(block_size)
            if not data:
                return
            yield data.encode("utf-8", errors="surrogateescape") if isinstance(data, str) else data
        return
    if isinstance(source, (bytes, bytearray)):
        raise TypeError("'source' must be a path, a file object or an iterable of lines, not bytes "
                        "(wrap them in io.BytesIO)")
    for line in source:  # an iterable of lines
        if not isinstance(line, (str, bytes, bytearray)):
            raise TypeError(f"'source' must yield lines (str or bytes), got {type(line).__name__}")
        raw = line.encode("utf-8", errors="surrogateescape") if isinstance(line, str) else bytes(line)
        yield raw if raw.endswith((b"\n", b"\r")) else raw + b"\n"


def line_start(f: Any, x: int, size: int) -> int:
    r"""The first position :math:`\geq x` where a line starts in the binary file :obj:`f` of that size."""
    if x <= 0:
        return 0
    if x >= size:
        return size
    f.seek(x - 1)
    prev = f.read(1)
    if prev == b"\n":
        return x
    if prev == b"\r":
        return x + 1 if f.read(1) == b"\n" else x
    pos = x
    while pos < size:
        block = f.read(1 << 16)
        ends = [i for i in (block.find(b"\n"), block.find(b"\r")) if i >= 0]
        if not ends:
            pos += len(block)
            continue
        at = pos + min(ends)
        if block[min(ends) : min(ends) + 1] == b"\n":
            return at + 1
        f.seek(at + 1)
        return at + 2 if f.read(1) == b"\n" else at + 1
    return size


def count_lines(f: Any, end: int) -> int:
    r"""The number of line ends (``\n``, ``\r\n``, ``\r``) in the first :obj:`end` bytes of :obj:`f`."""
    f.seek(0)
    count, done, last = 0, 0, b""
    while done < end:
        block = f.read(min(1 << 24, end - done))
        if not block:
            break
        count += block.count(b"\n") + block.count(b"\r") - block.count(b"\r\n")
        if last == b"\r" and block[:1] == b"\n":
            count -= 1
        done, last = done + len(block), block[-1:]
    return count


def _range_blocks(path: Any, lo: int, hi: int, block_size: int) -> Iterator[bytes]:
    """Blocks of bytes of the file :obj:`path` from :obj:`lo` to :obj:`hi`."""
    with open(path, "rb") as f:
        f.seek(lo)
        left = hi - lo
        while left > 0:
            data = f.read(min(block_size, left))
            if not data:
                return
            left -= len(data)
            yield data


#: Bytes read before the first block is passed on (a BOM, and whether the text is UTF-16 or UTF-32).
_HEAD = 10


def _wide_text(head: bytes) -> bool:
    """Whether a stream's first bytes are UTF-16/32 text: a byte-order mark or not, NULs between characters.

    (Ids are compared as bytes, so a first id that merely starts with those bytes stays an id.)
    """
    if head.startswith(b"\xff\xfe"):
        return all(head[i] == 0 for i in (3, 5, 7, 9))
    if head.startswith(b"\xfe\xff"):
        return all(head[i] == 0 for i in (2, 4, 6, 8))
    # without a byte-order mark: ASCII characters as UTF-16 (every other byte NUL) or UTF-32
    return len(head) >= _HEAD and (not any(head[1:_HEAD:2]) or not any(head[0:_HEAD:2]))


def _without_bom(head: bytes) -> bytes:
    """A stream's first bytes without a UTF-8 byte-order mark."""
    return head[len(_BOM):] if head.startswith(_BOM) else head


def _normalized(blocks: Iterable[bytes], bom: bool = True) -> Iterator[bytes]:
    r"""The blocks without a leading BOM, every line end (``\r\n``, ``\r``) turned into ``\n``."""
    head: Optional[bytes] = b"" if bom else None
    cr = False
    for block in blocks:
        if head is not None:  # the first bytes: drop a BOM
            head += block
            if len(head) < _HEAD:
                continue
            if _wide_text(head):  # (read as bytes: ids full of NULs, silently)
                raise ValueError("the stream is UTF-16 or UTF-32 text (NUL bytes between the characters); "
                                 "StreamSpot files are UTF-8 or ASCII: convert it first, e.g. "
                                 "'iconv -f UTF-16 -t UTF-8'")
            block, head = _without_bom(head), None
        if cr:
            block = b"\r" + block
        cr = block.endswith(b"\r")  # may be the first half of \r\n: decide with the next block
        if cr:
            block = block[:-1]
        yield block.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if head:  # (a stream shorter than the head: its BOM dropped too)
        yield _without_bom(head).replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if cr:
        yield b"\n"


class StreamSpotReader:
    r"""Read a StreamSpot edge stream in chunks, fast, in bounded memory.

    The one StreamSpot parser (:func:`read_streamspot` reads through it),
    with the line rules of :mod:`~kong_pyg.datasets.streamspot.reader`:
    blank lines are skipped and counted (:attr:`num_blank`); a malformed
    line is counted, skipped and the first :obj:`keep` kept with their line
    numbers, or with :obj:`strict` a :class:`MalformedLineError` (a
    :class:`ValueError`) names the line. The file is read in blocks and the
    lines made only of printable ASCII and tabs (all of a normal file) are
    split and converted with vectorized NumPy code; any other line goes
    through the same rules line by line, on its bytes.

    Iterating yields :class:`EdgeChunk` objects of at most :obj:`chunk_size`
    edges; every iteration reads the source from its start again (when it is
    a path), numbering string tokens the same way each time.

    With :obj:`byte_range` :obj:`(lo, hi)` (a path only) it reads the lines
    that *start* in bytes :obj:`lo` to :obj:`hi` of the file: the ranges
    :math:`[0, b_1), [b_1, b_2), \ldots, [b_{n-1}, size)` split the file into
    consecutive time shards, every line in exactly one, whatever the cut
    points; line numbers stay those of the whole file.

    Args:
        source (str or file): A path, a binary or text file object, or an
            iterable of lines (each item is one line, its line end optional).
        chunk_size (int, optional): Edges per chunk. (default: :obj:`2**20`)
        strict (bool, optional): Fail on the first malformed line.
        keep (int, optional): How many malformed lines to keep.
        byte_range (tuple, optional): Read only the lines starting in this
            range of bytes of the file :obj:`source`. (default: :obj:`None`)
    """

    def __init__(self, source: Any, chunk_size: int = 1 << 20, strict: bool = False, keep: int = 10,
                 byte_range: Optional[Tuple[int, int]] = None) -> None:
        if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
            raise ValueError(f"'chunk_size' must be an integer >= 1 (got {chunk_size!r})")
        if isinstance(keep, bool) or not isinstance(keep, (int, np.integer)) or keep < 0:
            raise ValueError(f"'keep' must be an integer >= 0 (got {keep!r})")
        if byte_range is not None:
            if not isinstance(source, (str, os.PathLike)):
                raise TypeError("'byte_range' needs 'source' to be a path")
            try:
                pair = tuple(byte_range)
            except TypeError:
                pair = ()
            if len(pair) != 2 or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                                         for v in pair):
                raise TypeError(f"'byte_range' must be a pair (lo, hi) of integers (got {byte_range!r})")
            lo, hi = (int(v) for v in pair)
            if not 0 <= lo <= hi:
                raise ValueError(f"'byte_range' must be (lo, hi) with 0 <= lo <= hi (got {byte_range!r})")
            byte_range = (lo, hi)
        self.byte_range = byte_range
        self.source = source
        self.chunk_size = int(chunk_size)
        self.strict = bool(strict)
        self.keep = int(keep)
        self._read = False  # (a one-shot source was iterated)
        self._reset()

    def _reset(self) -> None:
        self.malformed: List[MalformedLine] = []
        #: Malformed lines skipped.
        self.num_malformed = 0
        #: Blank lines (empty or ASCII whitespace only) skipped.
        self.num_blank = 0
        #: Lines read (edges + blank + malformed).
        self.num_lines = 0
        #: Edges read.
        self.num_edges = 0
        #: Edges of the first graph read (that of the first edge): a header line read as an edge makes one.
        self.first_graph_edges = 0
        self._first_graph: Optional[int] = None
        self._line0 = 0  # lines before the first one read (a byte range)
        #: String tokens of ids that are not canonical integers, by index (see :func:`show_token`).
        self.tokens: List[str] = []
        self._long_tokens: Dict[bytes, int] = {}
        self._short = IdMap()  # packed short token -> index in _short_tok / _short_type
        self._short_tok = np.zeros(0, dtype=np.int64)  # token index (ids) per packed key
        self._short_type = np.zeros(0, dtype=np.int64)  # type code per packed key
        self._type_cache: Dict[bytes, int] = {}

    def decode(self, key: int) -> Union[int, str]:
        """The id a key of an :class:`EdgeChunk` stands for."""
        return key if key >= 0 else self.tokens[-key - 1]

    @property
    def reiterable(self) -> bool:
        """Whether every iteration reads the edges from the start.

        False for a file object or an iterator of lines (read once); True for a path or any other
        iterable of lines (a list, a deque: each iteration reads it again).
        """
        return not (hasattr(self.source, "read") or isinstance(self.source, Iterator))

    def __iter__(self) -> Iterator[EdgeChunk]:
        if not self.reiterable:
            if self._read:
                raise ValueError("this StreamSpotReader reads a file object or an iterator of lines, which "
                                 "can be read once: give it a path (or a list of lines) to read it again")
            self._read = True
        self._reset()
        parts, size = [], 0
        for cols in self._blocks():
            parts.append(cols)
            size += cols[0].size
            while size >= self.chunk_size:
                cat = [np.concatenate(c) for c in zip(*parts)]
                yield EdgeChunk(*(c[: self.chunk_size] for c in cat))
                parts = [tuple(c[self.chunk_size :] for c in cat)]
                size -= self.chunk_size
        if size:
            yield EdgeChunk(*(np.concatenate(c) for c in zip(*parts)))

    def _raw_blocks(self, block: int) -> Iterator[bytes]:
        if self.byte_range is None:
            yield from _normalized(_binary_blocks(self.source, block))
            return
        with open(self.source, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            lo, hi = (line_start(f, min(v, size), size) for v in self.byte_range)
            self._line0 = count_lines(f, lo)
        yield from _normalized(_range_blocks(self.source, lo, hi, block), bom=lo == 0)

    def _blocks(self) -> Iterator[Tuple[np.ndarray, ...]]:
        carry, skipping = b"", False
        block = max(1 << 16, min(1 << 22, 64 * self.chunk_size))
        for data in self._raw_blocks(block):
            if skipping:  # inside a line too long to keep: drop bytes up to its end
                end = data.find(b"\n")
                if end < 0:
                    continue
                data, skipping = data[end + 1 :], False
                self.num_lines += 1
            data = carry + data
            cut = data.rfind(b"\n") + 1
            carry = data[cut:]
            if cut:
                yield self._parse(data[:cut])
            if len(carry) > MAX_LINE_BYTES:
                self._bad(self.num_lines + 1, carry[:200], f"line longer than {MAX_LINE_BYTES} bytes")
                carry, skipping = b"", True
        if skipping:
            self.num_lines += 1
        elif carry:
            yield self._parse(carry + b"\n")

    # -- one block of whole lines --------------------------------------------

    def _bad(self, line_no: int, raw: bytes, reason: str) -> None:
        line_no += self._line0
        text = show_token(raw[:200])
        if self.strict:
            raise MalformedLineError(f"line {line_no}: {reason}: {text!r}")
        self.num_malformed += 1
        if len(self.malformed) < self.keep:
            self.malformed.append(MalformedLine(line_no, text, reason))

    def _parse(self, buf: bytes) -> Tuple[np.ndarray, ...]:
        a = np.frombuffer(buf, dtype=np.uint8)
        # one pass finds every byte outside printable ASCII: tabs, newlines, others
        special = np.flatnonzero((a - np.uint8(0x21)) > np.uint8(0x5D))
        kind = a[special]
        nl = special[kind == 10]
        n_lines = nl.size
        line0 = self.num_lines
        self.num_lines += n_lines
        starts = np.empty(n_lines, dtype=np.int64)
        starts[:1] = 0
        starts[1:] = nl[:-1] + 1
        ends = nl.astype(np.int64)
        odd = special[(kind != 9) & (kind != 10)]
        n_odd = np.bincount(np.searchsorted(nl, odd), minlength=n_lines)
        tabs = special[kind == 9]
        n_tab = np.bincount(np.searchsorted(nl, tabs), minlength=n_lines)
        too_long = (ends - starts) > MAX_LINE_BYTES
        fast = (n_tab == 5) & (n_odd == 0) & ~too_long
        tab_ptr = np.cumsum(n_tab) - n_tab
        fl = np.flatnonzero(fast)
        t = tabs[tab_ptr[fl, None] + np.arange(5)]
        f_start = np.concatenate([starts[fl, None], t + 1], axis=1)
        f_end = np.concatenate([t, ends[fl, None]], axis=1)
        empty = (f_end == f_start).any(axis=1)
        fast[fl[empty]] = False
        fl, f_start, f_end = fl[~empty], f_start[~empty], f_end[~empty]
        blank = ends == starts
        self.num_blank += int(blank.sum())
        slow = np.flatnonzero(~fast & ~blank)
        good = np.zeros(n_lines, dtype=bool)
        good[fl] = True
        out = np.zeros((n_lines, 6), dtype=np.int64)
        if fl.size:
            out[fl] = self._convert(a, f_start, f_end)
        for i in slow.tolist():  # lines with other bytes, wrong field counts, empty fields
            codes = self._slow_line(line0 + i + 1, buf[starts[i] : ends[i]])
            if codes is not None:
                good[i] = True
                out[i] = codes
        rows = out[good] if slow.size or fl.size != n_lines else out
        self.num_edges += rows.shape[0]
        if self._first_graph is None and rows.shape[0]:
            self._first_graph = int(rows[0, 5])
        if self._first_graph is not None:
            self.first_graph_edges += int(np.count_nonzero(rows[:, 5] == self._first_graph))
        return tuple(rows[:, c].copy() for c in range(6))

    def _slow_line(self, line_no: int, raw: bytes) -> Optional[List[int]]:
        """The codes of one line by the line rules (None: blank or malformed, counted)."""
        if len(raw) > MAX_LINE_BYTES:
            self._bad(line_no, raw, f"line longer than {MAX_LINE_BYTES} bytes")
            return None
        if raw.startswith(_BOM):  # (files joined with cat: each one's byte-order mark starts a line)
            raw = raw[len(_BOM):]
        if not raw.strip():
            self.num_blank += 1
            return None
        if b"\0" in raw:
            self._bad(line_no, raw, "a NUL byte (binary data, or UTF-16/32 text?)")
            return None
        fields = raw.split(b"\t")
        if len(fields) != 6:
            self._bad(line_no, raw, f"expected 6 tab-separated fields, got {len(fields)}")
            return None
        fields = [f.strip() for f in fields]
        if not all(fields):
            self._bad(line_no, raw, "empty field")
            return None
        s, st, d, dt, et, g = fields
        return [self._id_token(s), self._type_token(st), self._id_token(d), self._type_token(dt),
                self._type_token(et), self._id_token(g)]

    def _id_token(self, tok: bytes) -> int:
        value = canonical_int(tok)
        if value is not None:
            return value
        j = self._long_tokens.get(tok)
        if j is None:
            packed = _pack(tok)
            if packed is not None:  # keep one numbering with the vectorized path
                return -1 - int(self._short_tokens(np.array([packed], dtype=np.int64))[0])
            j = self._long_tokens[tok] = len(self.tokens)
            self.tokens.append(show_token(tok))
        return -1 - j

    def _type_token(self, tok: bytes) -> int:
        code = self._type_cache.get(tok)
        if code is None:
            code = self._type_cache[tok] = type_code_bytes(tok)
        return code

    def _short_lookup(self, packed: np.ndarray) -> np.ndarray:
        """Index of each packed short token in the short-token tables (grown)."""
        ids, first = self._short.lookup(packed)
        if first.size:
            tok_ids, types = [], []
            for key in packed[first].tolist():
                tok = _unpack(int(key))
                j = self._long_tokens.get(tok)
                if j is None:
                    j = self._long_tokens[tok] = len(self.tokens)
                    self.tokens.append(show_token(tok))
                tok_ids.append(j)
                types.append(self._type_token(tok))
            self._short_tok = np.concatenate([self._short_tok, np.asarray(tok_ids, dtype=np.int64)])
            self._short_type = np.concatenate([self._short_type, np.asarray(types, dtype=np.int64)])
        return ids

    def _short_tokens(self, packed: np.ndarray) -> np.ndarray:
        idx = self._short_lookup(packed)  # grows the table: index it afterwards
        return self._short_tok[idx]

    def _convert(self, a: np.ndarray, f_start: np.ndarray, f_end: np.ndarray) -> np.ndarray:
        """Fields of clean lines (printable ASCII, six non-empty fields) to codes."""
        n = f_start.shape[0]
        start, end = f_start.ravel(), f_end.ravel()
        length = end - start
        type_cols = np.zeros((n, 6), dtype=bool)
        type_cols[:, [1, 3, 4]] = True
        is_type = type_cols.ravel()
        out = np.zeros(n * 6, dtype=np.int64)
        # digit-only fields (a non-digit byte count of zero)
        nondigit = np.zeros(a.size + 1, dtype=np.int32)
        np.cumsum((a - np.uint8(48)) > np.uint8(9), out=nondigit[1:])
        num = ((nondigit[end] - nondigit[start]) == 0) & (length <= MAX_ID_DIGITS)
        canonical = (length == 1) | (a[start] != 48)  # ids and types: no leading zero
        cand = np.flatnonzero(num & canonical)
        if cand.size:
            s, ln = start[cand], length[cand]
            value = np.zeros(cand.size, dtype=np.int64)
            for j in range(int(ln.max())):
                act = j < ln
                digit = a[np.where(act, s + j, 0)].astype(np.int64) - 48
                value = np.where(act, value * 10 + digit, value)
            keep = ~is_type[cand] | (value < TYPE_LITERALS)  # type_code: such digits stand for themselves
            out[cand[keep]] = value[keep]
            done = np.zeros(n * 6, dtype=bool)
            done[cand[keep]] = True
            rest = np.flatnonzero(~done)
        else:
            rest = np.arange(n * 6)
        # other tokens: those of at most 8 bytes packed into an exact int64 key
        short = rest[length[rest] <= 8]
        if short.size:
            s, ln = start[short], length[short]
            packed = np.zeros(short.size, dtype=np.uint64)
            for j in range(int(ln.max())):
                act = j < ln
                byte = a[np.where(act, s + j, 0)].astype(np.uint64) << np.uint64(8 * j)
                packed |= np.where(act, byte, np.uint64(0))
            idx = self._short_lookup(packed.view(np.int64))
            typ = is_type[short]
            out[short] = np.where(typ, self._short_type[idx], -1 - self._short_tok[idx])
        for i in rest[length[rest] > 8].tolist():
            tok = a[start[i] : end[i]].tobytes()
            out[i] = self._type_token(tok) if is_type[i] else self._id_token(tok)
        return out.reshape(n, 6)


def _pack(tok: bytes) -> Optional[int]:
    """The ``int64`` key of a printable-ASCII token of at most 8 bytes."""
    if len(tok) > 8 or not all(0x21 <= ch <= 0x7E for ch in tok):
        return None
    return int(np.frombuffer(tok.ljust(8, b"\0"), dtype=np.int64)[0])


def _unpack(key: int) -> bytes:
    return np.array([key], dtype=np.int64).tobytes().rstrip(b"\0")


@cpu_by_default
def read_streamspot(
    source: Union[str, "os.PathLike[str]", TextIO, Iterable[str]],
    strict: bool = False,
    keep: int = 10,
) -> Tuple[EdgeStream, List[MalformedLine], int]:
    r"""Read a whole StreamSpot edge stream.

    The rules are :class:`StreamSpotReader`'s (it does the reading; see
    :mod:`~kong_pyg.datasets.streamspot.reader`): a BOM at a line's start is dropped, lines
    end at ``\n``, ``\r\n`` or ``\r``, blank lines are skipped; a line
    without exactly six tab-separated, non-empty fields is malformed: it is
    counted and skipped (its number, text and reason kept for the first
    :obj:`keep` of them), or with :obj:`strict` a
    :class:`~kong_pyg.datasets.streamspot.MalformedLineError` (a
    :class:`ValueError`) names it.

    Nodes are numbered by (graph id, node id) and graphs by id, both in order
    of first appearance; :attr:`EdgeStream.graph_ids` holds the graph id
    tokens (strings).

    Args:
        source (str or file): A path, an open (text or binary) file or lines.
        strict (bool, optional): Fail on the first malformed line.
            (default: :obj:`False`)
        keep (int, optional): How many malformed lines to return.
            (default: :obj:`10`)

    Returns:
        (EdgeStream, list, int): The edges, the first malformed lines and
        the number of malformed lines.
    """
    reader = StreamSpotReader(source, strict=strict, keep=keep)
    chunks = list(reader)
    cols = [torch.from_numpy(np.concatenate([c[i] for c in chunks])) if chunks
            else torch.zeros(0, dtype=torch.long) for i in range(6)]
    src, src_type, dst, dst_type, edge_type, graph_key = cols
    keys, graph = first_appearance(graph_key)
    ends, node = first_appearance(torch.stack([src, dst], dim=1).view(-1))
    _, node = first_appearance(graph.repeat_interleave(2) * max(ends.numel(), 1) + node)
    graph_ids = [str(reader.decode(k)) for k in keys.tolist()]
    note = header_note(graph_ids, reader.first_graph_edges or None)
    if note is not None:
        warn(note)
    stream = EdgeStream(node[0::2], src_type, node[1::2], dst_type, edge_type, graph, graph_ids)
    return stream, reader.malformed, reader.num_malformed


def header_note(graph_ids: List[str], first_edges: Optional[int] = None) -> Optional[str]:
    """A warning when the first line looks like a column header read as an edge, else :obj:`None`.

    It looks like one when every other graph id has one form (digits read as any number: ``12`` and
    ``7`` are numbers, ``trace12`` and ``trace7`` one form) and the first graph's id is not a number
    where the others are, or holds no digit where the others are of another form (and, where
    :obj:`first_edges` is known, that graph has one edge).
    """
    import re

    def form(g: str) -> str:
        return re.sub(r"\d+", "0", g)

    first = graph_ids[0] if graph_ids else ""
    forms = {form(g) for g in graph_ids[1:]}
    if len(graph_ids) < 2 or len(forms) != 1 or form(first) in forms or first_edges not in (None, 1) \
            or (forms != {"0"} and (re.search(r"\d", first) or not re.search(r"\d", graph_ids[1]))):
        return None  # (named ids: the others' form holds a number, the first id none)
    other = "a number" if forms == {"0"} else f"of the others' form (such as {graph_ids[1]!r})"
    return (f"the first line looks like a header: its graph id {first!r} is the only one that is not "
            f"{other}. StreamSpot files have no header line; it was read as an edge of a graph of its own "
            "(remove the line to drop it)")


__all__ = ["StreamSpotReader", "read_streamspot", "header_note", "type_code_bytes", "show_token",
           "MAX_LINE_BYTES"]
