"""Write small data sets in the TU text format for the tests."""
from pathlib import Path
from typing import List, Optional, Sequence, Tuple


def write_tu(root: Path, name: str, graphs: Sequence[Tuple[int, List[Tuple[int, int]]]],
             classes: Sequence[int], node_labels: Optional[Sequence[Sequence[int]]] = None) -> Path:
    """Write root/name/raw/name_*.txt; graphs are (num_nodes, edges with local ids)."""
    raw = Path(root) / name / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    a, ind, nl = [], [], []
    offset = 0
    for g, (n, edges) in enumerate(graphs):
        ind += [g + 1] * n
        for u, v in edges:
            a.append(f"{u + offset + 1}, {v + offset + 1}")
        if node_labels is not None:
            nl += [str(t) for t in node_labels[g]]
        offset += n
    (raw / f"{name}_A.txt").write_text("\n".join(a) + "\n")
    (raw / f"{name}_graph_indicator.txt").write_text("\n".join(map(str, ind)) + "\n")
    (raw / f"{name}_graph_labels.txt").write_text("\n".join(map(str, classes)) + "\n")
    if node_labels is not None:
        (raw / f"{name}_node_labels.txt").write_text("\n".join(nl) + "\n")
    return raw


def paths_and_stars(count: int = 12):
    """Undirected paths (class 0) and stars (class 1) of 4..7 nodes, no node labels."""
    graphs, classes = [], []
    for i in range(count):
        n = 4 + i % 4
        if i % 2 == 0:
            edges = [(j, j + 1) for j in range(n - 1)]
        else:
            edges = [(0, j) for j in range(1, n)]
        edges = edges + [(v, u) for u, v in edges]
        graphs.append((n, edges))
        classes.append(i % 2)
    return graphs, classes
