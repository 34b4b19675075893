r"""Reading a StreamSpot edge stream: one parser, by chunks or whole."""
import os
from typing import Any, Dict, Iterable, Iterator, List, Optional, TextIO, Tuple, Union

import numpy as np
import torch

from ...hashing import type_code
from ...idmap import MAX_ID_DIGITS, IdMap, canonical_int, first_appearance
from .records import EdgeChunk, EdgeStream, MalformedLine


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
            yield data.encode("utf-8") if isinstance(data, str) else data
        return
    for line in source:  # an iterable of lines
        raw = line.encode("utf-8") if isinstance(line, str) else line
        yield raw if raw.endswith(b"\n") else raw + b"\n"


class StreamSpotReader:
    r"""Read a StreamSpot edge stream in chunks, fast, in bounded memory.

    The one StreamSpot parser (:func:`read_streamspot` reads through it).
    Blank lines are skipped; a line without exactly six tab-separated
    non-empty fields is malformed: counted, skipped, the first :obj:`keep`
    kept with their line numbers, or with :obj:`strict` a
    :class:`ValueError` naming the line; fields are stripped. The file is
    read in blocks and the lines made only of printable ASCII and tabs (all
    of a normal file) are split and converted with vectorized NumPy code; any
    other line goes through the line-by-line rules.

    Iterating yields :class:`EdgeChunk` objects of at most :obj:`chunk_size`
    edges; every iteration reads the source from its start again (when it is
    a path), numbering string tokens the same way each time. Lines end at
    ``\n`` (a ``\r`` before it is dropped); unlike a file opened in text
    mode, a lone ``\r`` does not end a line (the line it is in is malformed
    or keeps it in a field, never splits in two).

    Args:
        source (str or file): A path, a binary or text file object, or an
            iterable of lines (each item is one line, its ``\n`` optional).
        chunk_size (int, optional): Edges per chunk. (default: :obj:`2**20`)
        strict (bool, optional): Fail on the first malformed line.
        keep (int, optional): How many malformed lines to keep.
    """

    def __init__(self, source: Any, chunk_size: int = 1 << 20, strict: bool = False, keep: int = 10) -> None:
        self.source = source
        self.chunk_size = int(chunk_size)
        self.strict = bool(strict)
        self.keep = int(keep)
        self._reset()

    def _reset(self) -> None:
        self.malformed: List[MalformedLine] = []
        self.num_malformed = 0
        self.num_lines = 0
        self.num_edges = 0
        #: String tokens of ids that are not canonical integers, by index.
        self.tokens: List[str] = []
        self._long_tokens: Dict[str, int] = {}
        self._short = IdMap()  # packed short token -> index in _short_code / _short_tok
        self._short_tok = np.zeros(0, dtype=np.int64)  # token index (ids) per packed key
        self._short_type = np.zeros(0, dtype=np.int64)  # type code per packed key
        self._type_cache: Dict[str, int] = {}

    def decode(self, key: int) -> Union[int, str]:
        """The id a key of an :class:`EdgeChunk` stands for."""
        return key if key >= 0 else self.tokens[-key - 1]

    def __iter__(self) -> Iterator[EdgeChunk]:
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

    def _blocks(self) -> Iterator[Tuple[np.ndarray, ...]]:
        carry = b""
        block = max(1 << 16, min(1 << 22, 64 * self.chunk_size))
        for data in _binary_blocks(self.source, block):
            data = carry + data
            cut = data.rfind(b"\n") + 1
            carry = data[cut:]
            if cut:
                yield self._parse(data[:cut])
        if carry:
            yield self._parse(carry + b"\n")

    # -- one block of whole lines --------------------------------------------

    def _bad(self, line_no: int, text: str, reason: str) -> None:
        if self.strict:
            raise ValueError(f"line {line_no}: {reason}: {text[:200]!r}")
        self.num_malformed += 1
        if len(self.malformed) < self.keep:
            self.malformed.append(MalformedLine(line_no, text[:200], reason))

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
        cr = (ends > starts) & (a[np.maximum(ends - 1, 0)] == 13)
        ends = ends - cr
        odd = special[(kind != 9) & (kind != 10)]
        if cr.any():
            odd = np.setdiff1d(odd, ends[cr], assume_unique=True)
        n_odd = np.bincount(np.searchsorted(nl, odd), minlength=n_lines)
        tabs = special[kind == 9]
        n_tab = np.bincount(np.searchsorted(nl, tabs), minlength=n_lines)
        fast = (n_tab == 5) & (n_odd == 0)
        tab_ptr = np.cumsum(n_tab) - n_tab
        fl = np.flatnonzero(fast)
        t = tabs[tab_ptr[fl, None] + np.arange(5)]
        f_start = np.concatenate([starts[fl, None], t + 1], axis=1)
        f_end = np.concatenate([t, ends[fl, None]], axis=1)
        empty = (f_end == f_start).any(axis=1)
        fast[fl[empty]] = False
        fl, f_start, f_end = fl[~empty], f_start[~empty], f_end[~empty]
        blank = ends == starts
        slow = np.flatnonzero(~fast & ~blank)
        good = np.zeros(n_lines, dtype=bool)
        good[fl] = True
        out = np.zeros((n_lines, 6), dtype=np.int64)
        if fl.size:
            out[fl] = self._convert(a, f_start, f_end)
        for i in slow.tolist():  # lines with other bytes, wrong field counts, empty fields
            text = buf[starts[i] : nl[i]].decode("utf-8", errors="replace").rstrip("\r\n")
            if not text.strip():
                continue
            fields = text.split("\t")
            if len(fields) != 6:
                self._bad(line0 + i + 1, text, f"expected 6 tab-separated fields, got {len(fields)}")
                continue
            if any(not f.strip() for f in fields):
                self._bad(line0 + i + 1, text, "empty field")
                continue
            good[i] = True
            out[i] = self._convert_tokens([f.strip() for f in fields])
        rows = out[good] if slow.size or fl.size != n_lines else out
        self.num_edges += rows.shape[0]
        return tuple(rows[:, c].copy() for c in range(6))

    def _id_token(self, tok: str) -> int:
        value = canonical_int(tok)
        if value is not None:
            return value
        j = self._long_tokens.get(tok)
        if j is None:
            packed = _pack(tok)
            if packed is not None:  # keep one numbering with the vectorized path
                return -1 - int(self._short_tokens(np.array([packed], dtype=np.int64))[0])
            j = self._long_tokens[tok] = len(self.tokens)
            self.tokens.append(tok)
        return -1 - j

    def _type_token(self, tok: str) -> int:
        code = self._type_cache.get(tok)
        if code is None:
            code = self._type_cache[tok] = type_code(tok)
        return code

    def _convert_tokens(self, fields: List[str]) -> List[int]:
        s, st, d, dt, et, g = fields
        return [self._id_token(s), self._type_token(st), self._id_token(d), self._type_token(dt),
                self._type_token(et), self._id_token(g)]

    def _short_lookup(self, packed: np.ndarray) -> np.ndarray:
        """Index of each packed short token in the short-token tables (grown)."""
        ids, first = self._short.lookup(packed)
        if first.size:
            toks = [_unpack(int(k)) for k in packed[first].tolist()]
            tok_ids, types = [], []
            for tok in toks:
                j = self._long_tokens.get(tok)
                if j is None:
                    j = self._long_tokens[tok] = len(self.tokens)
                    self.tokens.append(tok)
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
        ids_ok = ~is_type & ((length == 1) | (a[start] != 48))  # canonical ids: no leading zero
        cand = np.flatnonzero(num & (is_type | ids_ok))
        if cand.size:
            s, ln = start[cand], length[cand]
            value = np.zeros(cand.size, dtype=np.int64)
            for j in range(int(ln.max())):
                act = j < ln
                digit = a[np.where(act, s + j, 0)].astype(np.int64) - 48
                value = np.where(act, value * 10 + digit, value)
            keep = ~is_type[cand] | (value < 2**56)  # type_code: digits below 2^56 stand for themselves
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
            tok = a[start[i] : end[i]].tobytes().decode("ascii")
            out[i] = self._type_token(tok) if is_type[i] else self._id_token(tok)
        return out.reshape(n, 6)


def _pack(tok: str) -> Optional[int]:
    """The ``int64`` key of a printable-ASCII token of at most 8 bytes."""
    raw = tok.encode("utf-8")
    if len(raw) > 8 or not all(0x21 <= ch <= 0x7E for ch in raw):
        return None
    return int(np.frombuffer(raw.ljust(8, b"\0"), dtype=np.int64)[0])


def _unpack(key: int) -> str:
    return np.array([key], dtype=np.int64).tobytes().rstrip(b"\0").decode("ascii")


def read_streamspot(
    source: Union[str, "os.PathLike[str]", TextIO, Iterable[str]],
    strict: bool = False,
    keep: int = 10,
) -> Tuple[EdgeStream, List[MalformedLine], int]:
    r"""Read a whole StreamSpot edge stream.

    The rules are :class:`StreamSpotReader`'s (it does the reading): blank
    lines are skipped; a line without exactly six tab-separated, non-empty
    fields is malformed: it is counted and skipped (its number, text and
    reason kept for the first :obj:`keep` of them), or with :obj:`strict` a
    :class:`ValueError` names it. Lines end at ``\n`` only.

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
    stream = EdgeStream(node[0::2], src_type, node[1::2], dst_type, edge_type, graph, graph_ids)
    return stream, reader.malformed, reader.num_malformed


__all__ = ["StreamSpotReader", "read_streamspot"]
