"""Random small graphs for the tests."""
import random
from typing import List, Optional, Tuple

import torch
from torch_geometric.data import Data, InMemoryDataset

Graph = Tuple[List[int], List[Tuple[int, int]], Optional[List[int]]]


def random_graph(rng: random.Random, max_nodes: int = 6, max_edges: int = 10,
                 num_labels: int = 3, edge_labels: bool = False) -> Graph:
    """Multi-edges, self-loops and isolated nodes all occur."""
    n = rng.randint(1, max_nodes)
    m = rng.randint(0, max_edges)
    labels = [rng.randrange(num_labels) for _ in range(n)]
    edges = [(rng.randrange(n), rng.randrange(n)) for _ in range(m)]
    elab = [rng.randrange(2) for _ in range(m)] if edge_labels else None
    return labels, edges, elab


def to_data(g: Graph) -> Data:
    labels, edges, elab = g
    d = Data(x=torch.tensor(labels, dtype=torch.long),
             edge_index=torch.tensor(edges, dtype=torch.long).t().reshape(2, -1))
    if elab is not None:
        d.edge_attr = torch.tensor(elab, dtype=torch.long)
    return d


FIG1_NAMES = "ABCDEFGH"
# the paper's Figure 1, edges listed out of alphabetical order on purpose
FIG1_EDGES = ["AB", "AC", "AD", "AG", "DG", "BF", "BE", "CH"]


def figure1():
    """(edge list, labels) of Figure 1: N_v = heads of v's out-edges."""
    ei = [(FIG1_NAMES.index(a), FIG1_NAMES.index(b)) for a, b in FIG1_EDGES]
    return ei, list(FIG1_NAMES)


def oracle_kernel(graphs, k, hops, traversal, kernel, degree, const=0.0, relabel=False,
                  blended=False, normalize=False, order="edge", own_label=True, orders=None, seed=0):
    """The brute-force KONG kernel matrix of (labels, edges, edge labels) triples (explicit strings)."""
    import numpy as np

    from kong_pyg import brute_force_kernel, kong_strings

    strings = [
        kong_strings(e, lab, hops, traversal, edge_labels=el, relabel=relabel, order=order,
                     own_label=own_label, seed=seed, edge_order=None if orders is None else orders[i])
        for i, (lab, e, el) in enumerate(graphs)
    ]
    return np.array(brute_force_kernel(strings, k, kernel, degree, const, blended, normalize))


def into_closed_pipe(command: List[str], cwd) -> List[Tuple[int, str]]:
    """(exit status, stderr) of :obj:`command` writing into a pipe without a reader (``| head`` gone).

    Run from this checkout, buffered and unbuffered (buffered: the output is written when the
    command ends, not as it is printed).
    """
    import os
    import subprocess
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = []
    for buffered in (True, False):
        env.pop("PYTHONUNBUFFERED", None)
        if not buffered:
            env["PYTHONUNBUFFERED"] = "1"
        read, write = os.pipe()
        os.close(read)  # (no reader at all: the first write fails, whatever the pipe's buffer)
        try:
            done = subprocess.run(command, stdout=write, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd,
                                  timeout=300)
        finally:
            os.close(write)
        out.append((done.returncode, done.stderr))
    return out


class Collated(InMemoryDataset):
    """Graphs in one collated storage: an in-memory PyG data set without files."""

    def __init__(self, graphs):
        super().__init__(None)
        self.data, self.slices = self.collate(graphs)
