"""Graph data sets and streams with ordered neighborhoods."""
from .streamspot import (
    EdgeStream,
    MalformedLine,
    format_malformed,
    read_streamspot,
    stream_to_graphs,
    synthetic_event_stream,
    write_streamspot,
)

__all__ = [
    "EdgeStream",
    "MalformedLine",
    "read_streamspot",
    "write_streamspot",
    "stream_to_graphs",
    "synthetic_event_stream",
    "format_malformed",
]
