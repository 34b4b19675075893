"""Writing a StreamSpot edge stream."""
import os
import re
from typing import TextIO, Union

import torch

from ...files import atomic_write
from .records import EdgeStream

#: What a field of a line cannot hold (it would split the field or the line when read back).
_SEPARATORS = re.compile(r"[\t\n\r]")


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
    bad = next((g for g in ids if not g or _SEPARATORS.search(g)), None)
    if bad is not None:
        raise ValueError(f"graph id {bad!r} cannot be written: a StreamSpot field is not empty and holds no "
                         "tab or line end")
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
