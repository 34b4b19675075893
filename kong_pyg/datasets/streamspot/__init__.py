r"""Typed edge streams in the StreamSpot format.

One edge per line, tab-separated, in arrival order::

    source-id  source-type  dest-id  dest-type  edge-type  graph-id

Ids are arbitrary tokens (integers or strings); types are tokens too
(StreamSpot uses single letters). Edges of many graphs may interleave in any
way; the arrival order is the neighbor order.

This package reads (:mod:`~kong_pyg.datasets.streamspot.reader`: one
parser, chunked or whole) and writes
(:mod:`~kong_pyg.datasets.streamspot.writer`) such streams, turns them into
one ordered PyG graph per graph id
(:mod:`~kong_pyg.datasets.streamspot.graphs`), and generates synthetic
streams whose classes differ *only in the order of events*
(:mod:`~kong_pyg.datasets.streamspot.synthetic`: a process that reads a file
before opening a socket versus one that does it the other way round), the
clearest case where k = 2 sees what k = 1 cannot.
"""
from ...hashing import type_code
from .graphs import StreamSpotGraphs, first_types, read_graph_labels, stream_to_graphs
from .reader import StreamSpotReader, read_streamspot
from .records import EdgeChunk, EdgeStream, MalformedLine, MalformedLineError, format_malformed
from .synthetic import synthetic_event_stream
from .writer import write_streamspot

__all__ = [
    "EdgeStream",
    "EdgeChunk",
    "MalformedLine",
    "MalformedLineError",
    "format_malformed",
    "type_code",
    "StreamSpotReader",
    "read_streamspot",
    "write_streamspot",
    "first_types",
    "stream_to_graphs",
    "read_graph_labels",
    "StreamSpotGraphs",
    "synthetic_event_stream",
]
