"""Graph data sets and streams with ordered neighborhoods."""
from .streamspot import (
    EdgeChunk,
    EdgeStream,
    MalformedLine,
    StreamSpotReader,
    format_malformed,
    read_streamspot,
    stream_to_graphs,
    synthetic_event_stream,
    write_streamspot,
)

__all__ = [
    "EdgeChunk",
    "StreamSpotReader",
    "EdgeStream",
    "MalformedLine",
    "read_streamspot",
    "write_streamspot",
    "stream_to_graphs",
    "synthetic_event_stream",
    "format_malformed",
]
