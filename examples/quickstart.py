"""KONG features in ten lines: ordered neighborhoods matter for k >= 2.

Run: python examples/quickstart.py
"""
import torch
from torch_geometric.data import Batch, Data

from kong_pyg import KongSketch, KongVectorizer

# two graphs that differ only in the order of node 0's neighbors
x = torch.tensor([0, 1, 2, 3])
first = Data(x=x, edge_index=torch.tensor([[1, 2, 3], [0, 0, 0]]))
second = Data(x=x, edge_index=torch.tensor([[3, 2, 1], [0, 0, 0]]))

for k in (1, 2):
    X = KongVectorizer(k=k, hops=1).fit_transform([first, second])  # exact, sparse
    print(f"k={k}: exact features equal? {(X[0] != X[1]).nnz == 0}")

batch = Batch.from_data_list([first, second])
layer = KongSketch(k=2, hops=2, dim=256, kernel="cosine")
node_features = layer(batch.x, batch.edge_index)  # [num_nodes, 256]
graph_features = layer.readout(batch.x, batch.edge_index, batch.batch)  # [2, 256]
print("node features", tuple(node_features.shape), "graph features", tuple(graph_features.shape))
