"""Graph data sets and streams with ordered neighborhoods."""
from .interaction_log import temporal_log
from .interactions import InteractionGraphs, build_ego_graphs, select_users
from .movielens import MovieLensOrdered, read_ml100k
from .provenance import ProvenanceGraphs, ProvenanceStream, provenance_stream
from .streamspot import (
    EdgeChunk,
    EdgeStream,
    MalformedLine,
    StreamSpotGraphs,
    StreamSpotReader,
    format_malformed,
    read_graph_labels,
    read_streamspot,
    stream_to_graphs,
    synthetic_event_stream,
    write_streamspot,
)
from .tu import NoNodeLabelsWarning, TUGraphs, add_degree_labels, bundled_names, cache_dir, load_tu

__all__ = [
    "InteractionGraphs",
    "temporal_log",
    "build_ego_graphs",
    "select_users",
    "MovieLensOrdered",
    "read_ml100k",
    "ProvenanceGraphs",
    "ProvenanceStream",
    "provenance_stream",
    "EdgeChunk",
    "StreamSpotReader",
    "EdgeStream",
    "MalformedLine",
    "StreamSpotGraphs",
    "read_graph_labels",
    "read_streamspot",
    "write_streamspot",
    "stream_to_graphs",
    "synthetic_event_stream",
    "format_malformed",
    "load_tu",
    "TUGraphs",
    "cache_dir",
    "bundled_names",
    "add_degree_labels",
    "NoNodeLabelsWarning",
]
