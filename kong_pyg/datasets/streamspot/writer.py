"""Writing a StreamSpot edge stream."""
import os
import re
from typing import Dict, TextIO, Union

import torch

from ...files import atomic_write
from .records import EdgeStream

#: What a field of a line cannot hold (it would split the field or the line when read back, or make the
#: line malformed: a NUL byte).
_SEPARATORS = re.compile(r"[\t\n\r\x00]")
#: The ASCII whitespace the reader strips from the ends of every field.
_ASCII_SPACE = " \t\n\r\x0b\x0c"


def write_streamspot(stream: EdgeStream, target: Union[str, "os.PathLike[str]", TextIO]) -> None:
    """Write :obj:`stream` in the StreamSpot format (node ids as integers).

    Graph ids are written as UTF-8, read ids' ``surrogateescape`` escapes as
    the bytes they stand for (as :func:`read_streamspot` read them). A file is
    replaced only once the whole text is written (a failure leaves the old one).

    Args:
        stream (EdgeStream): The stream.
        target (str, os.PathLike or text file): Where to write.
    """
    if not isinstance(stream, EdgeStream):
        raise TypeError(f"'stream' must be an EdgeStream (got {type(stream).__name__})")
    ids = [str(g) for g in stream.graph_ids]
    bad = next((g for g in ids if not g or _SEPARATORS.search(g) or g.strip(_ASCII_SPACE) != g), None)
    if bad is not None:
        raise ValueError(f"graph id {bad!r} cannot be written: a StreamSpot field is not empty, holds no "
                         "tab, line end or NUL byte, and has no white space at its ends (it is stripped)")
    first: Dict[str, int] = {}
    for i, (g, text) in enumerate(zip(stream.graph_ids, ids)):
        j = first.setdefault(text, i)
        if j != i:
            other = stream.graph_ids[j]
            what = f"graph ids {other!r} and {g!r} are both written as {text!r}" if other is not g and \
                other != g else f"graph id {g!r} names graphs {j} and {i}"
            raise ValueError(f"{what}: read back, the two graphs would be one")
    rows = torch.stack(
        [stream.src, stream.src_type, stream.dst, stream.dst_type, stream.edge_type, stream.graph], dim=1
    ).tolist()
    text = "".join(f"{s}\t{st}\t{d}\t{dt}\t{et}\t{ids[g]}\n" for s, st, d, dt, et, g in rows)
    if isinstance(target, (str, os.PathLike)):
        atomic_write([text.encode("utf-8", errors="surrogateescape")], target)
        return
    try:
        target.write(text)
    except (TypeError, AttributeError):
        raise TypeError(f"'target' must be a path or a text file (got {type(target).__name__})") from None


__all__ = ["write_streamspot"]
