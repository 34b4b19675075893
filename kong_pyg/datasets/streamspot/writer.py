"""Writing a StreamSpot edge stream."""
import os
from typing import TextIO, Union

import torch

from .records import EdgeStream


def write_streamspot(stream: EdgeStream, target: Union[str, "os.PathLike[str]", TextIO]) -> None:
    """Write :obj:`stream` in the StreamSpot format (node ids as integers)."""
    rows = torch.stack(
        [stream.src, stream.src_type, stream.dst, stream.dst_type, stream.edge_type, stream.graph], dim=1
    ).tolist()
    ids = stream.graph_ids
    text = "".join(f"{s}\t{st}\t{d}\t{dt}\t{et}\t{ids[g]}\n" for s, st, d, dt, et, g in rows)
    if isinstance(target, (str, os.PathLike)):
        with open(target, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        target.write(text)


__all__ = ["write_streamspot"]
