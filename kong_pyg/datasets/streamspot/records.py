"""The records of a StreamSpot edge stream: whole streams, chunks, malformed lines."""
import io
from typing import List, NamedTuple

import numpy as np
from torch import Tensor


class EdgeStream(NamedTuple):
    """A typed edge stream, all tensors :obj:`[E]` in arrival order.

    Attributes:
        src (torch.Tensor): Source node, a dense index over (graph, node id).
        src_type (torch.Tensor): Source node type code.
        dst (torch.Tensor): Destination node, dense like :obj:`src`.
        dst_type (torch.Tensor): Destination node type code.
        edge_type (torch.Tensor): Edge type code.
        graph (torch.Tensor): Dense graph index.
        graph_ids (list): The original id of every dense graph index.
    """

    src: Tensor
    src_type: Tensor
    dst: Tensor
    dst_type: Tensor
    edge_type: Tensor
    graph: Tensor
    graph_ids: list

    @property
    def num_edges(self) -> int:
        """The number of edges."""
        return self.src.numel()


class EdgeChunk(NamedTuple):
    """One chunk of a StreamSpot stream, columns as ``int64`` NumPy arrays.

    Node and graph ids are the integers their tokens spell (canonical decimal
    tokens of at most 18 digits) or, for any other token, :math:`-(1 + j)`
    with :math:`j` the token's index in :attr:`StreamSpotReader.tokens`.
    Types are :func:`~kong_pyg.hashing.type_code` values.
    """

    src: np.ndarray
    src_type: np.ndarray
    dst: np.ndarray
    dst_type: np.ndarray
    edge_type: np.ndarray
    graph: np.ndarray


class MalformedLineError(ValueError):
    """A malformed line of a StreamSpot stream read with ``strict=True`` (the message names the line)."""


class MalformedLine(NamedTuple):
    """A line that could not be read: its 1-based number, text and why."""

    line_no: int
    text: str
    reason: str


def format_malformed(bad: List[MalformedLine], total: int) -> str:
    """A short human-readable report of malformed lines."""
    if total == 0:
        return "no malformed lines"
    out = io.StringIO()
    out.write(f"{total} malformed line{'s' if total != 1 else ''} skipped")
    for b in bad:
        out.write(f"\n  line {b.line_no}: {b.reason}: {b.text!r}")
    if total > len(bad):
        out.write(f"\n  ... and {total - len(bad)} more")
    return out.getvalue()


__all__ = ["EdgeStream", "EdgeChunk", "MalformedLine", "MalformedLineError", "format_malformed"]
