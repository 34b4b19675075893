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
from .tu import NoNodeLabelsWarning, add_degree_labels, bundled_names, cache_dir, load_tu

__all__ = [
    "EdgeStream",
    "MalformedLine",
    "read_streamspot",
    "write_streamspot",
    "stream_to_graphs",
    "synthetic_event_stream",
    "format_malformed",
    "load_tu",
    "cache_dir",
    "bundled_names",
    "add_degree_labels",
    "NoNodeLabelsWarning",
]
