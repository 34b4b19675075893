"""KONG features in ten lines: ordered neighborhoods matter for k >= 2.

Two graphs that differ only in the order of node 0's neighbors get the same
exact features with k = 1 (label counts) and different ones with k = 2; then a
KongSketch layer gives node and graph features of both.

Run: python examples/quickstart.py   (about 1 s after imports)
"""
import sys
from pathlib import Path

import torch
from torch_geometric.data import Batch, Data

sys.path.insert(0, str(Path(__file__).resolve().parent))
from example_data import make_parser, run, start  # noqa: E402

from kong_pyg import KongSketch, KongVectorizer  # noqa: E402


def main(argv=None):
    args = make_parser(__doc__).parse_args(argv)
    start(args)
    x = torch.tensor([0, 1, 2, 3])
    first = Data(x=x, edge_index=torch.tensor([[1, 2, 3], [0, 0, 0]]))
    second = Data(x=x, edge_index=torch.tensor([[3, 2, 1], [0, 0, 0]]))

    equal = {}
    for k in (1, 2):
        X = KongVectorizer(k=k, hops=1).fit_transform([first, second])  # exact, sparse
        equal[k] = (X[0] != X[1]).nnz == 0
        print(f"k={k}: exact features equal? {equal[k]}")

    batch = Batch.from_data_list([first, second])
    layer = KongSketch(k=2, hops=2, dim=256, kernel="cosine")
    node_features = layer(batch.x, batch.edge_index)  # [num_nodes, 256]
    graph_features = layer.readout(batch.x, batch.edge_index, batch.batch)  # [2, 256]
    print("node features", tuple(node_features.shape), "graph features", tuple(graph_features.shape))
    return equal


if __name__ == "__main__":
    run(main)
