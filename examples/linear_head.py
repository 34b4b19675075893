"""KONG graph features -> a linear classifier trained with Adam.

KongFeatures runs once per graph as the data set's pre_transform and stores
the graph's KONG sketch under ``kong_graph`` ([1, dim]); PyG's DataLoader
batches those into [batch_size, dim] rows that feed a torch.nn.Linear.

Run (offline, MUTAG bundled with the package; about 5 s):   python examples/linear_head.py
On a TU data set (raw files):   python examples/linear_head.py --data-root DIR --dataset NCI1
"""
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from sklearn.model_selection import train_test_split
from torch_geometric.loader import DataLoader

sys.path.insert(0, str(Path(__file__).resolve().parent))
from example_data import (  # noqa: E402
    add_data_args,
    check_split,
    int_at_least,
    labels_of,
    load_graphs,
    make_parser,
    number_in,
    parse_args,
    preset_help,
    run,
    start,
    usable_device,
)

from kong_pyg import KongFeatures  # noqa: E402


def accuracy(model, loader, device):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for batch in loader:
            batch = batch.to(device)
            correct += int((model(batch.kong_graph).argmax(-1) == batch.y).sum())
            total += batch.num_graphs
    return correct / max(total, 1)


#: The defaults --quick sets (options given explicitly win).
QUICK = dict(num_graphs=40, epochs=3, dim=64)


def main(argv=None):
    parser = make_parser(__doc__)
    add_data_args(parser)
    parser.add_argument("--k", type=int_at_least(1), default=2, metavar="N", help="k-gram length")
    parser.add_argument("--hops", type=int_at_least(0), default=2, metavar="N", help="depth of the strings")
    parser.add_argument("--dim", type=int_at_least(1), default=1024, metavar="B", help="sketch size")
    parser.add_argument("--kernel", default="cosine", choices=["poly", "cosine"], help="base kernel")
    parser.add_argument("--epochs", type=int_at_least(1), default=50, metavar="N", help="training epochs")
    parser.add_argument("--lr", type=number_in(0.0), default=0.05, metavar="X", help="Adam learning rate")
    parser.add_argument("--batch-size", type=int_at_least(1), default=32, metavar="N",
                        help="graphs per batch")
    parser.add_argument("--test-size", type=number_in(0.0, 1.0), default=0.2, metavar="X",
                        help="test fraction")
    parser.add_argument("--seed", type=int_at_least(0), default=0, metavar="N",
                        help="seed of the split and the model")
    parser.add_argument("--device", type=usable_device, default="cpu", help="cpu, cuda, ...")
    parser.add_argument("--quick", action="store_true", help=preset_help("tiny run (smoke test)", QUICK))
    args = parse_args(parser, argv, {"quick": QUICK})
    start(args)
    torch.manual_seed(args.seed)
    device = torch.device(args.device)

    t = time.perf_counter()
    kong = KongFeatures(k=args.k, hops=args.hops, dim=args.dim, kernel=args.kernel, seed=args.seed,
                        level="graph", normalize=True)
    graphs, name = load_graphs(args, pre_transform=kong)
    y = labels_of(graphs)
    check_split(y, args.test_size)  # before any training: 2 or more classes, each on both sides
    num_classes = int(y.max()) + 1
    print(f"data: {name}, {len(graphs)} graphs, {num_classes} classes")
    print(f"features: {kong} ({time.perf_counter() - t:.2f} s with loading)")

    train_idx, test_idx = train_test_split(
        torch.arange(len(graphs)).numpy(), test_size=args.test_size, stratify=y.numpy(),
        random_state=args.seed,
    )
    gen = torch.Generator().manual_seed(args.seed)
    train_loader = DataLoader([graphs[i] for i in train_idx], batch_size=args.batch_size, shuffle=True,
                              generator=gen)
    test_loader = DataLoader([graphs[i] for i in test_idx], batch_size=args.batch_size)

    model = torch.nn.Linear(args.dim, num_classes).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(1, args.epochs + 1):
        model.train()
        total = 0.0
        for batch in train_loader:
            batch = batch.to(device)
            opt.zero_grad()
            loss = F.cross_entropy(model(batch.kong_graph), batch.y)
            loss.backward()
            opt.step()
            total += loss.item() * batch.num_graphs
        print(f"epoch {epoch:3d}  loss {total / len(train_idx):.4f}  "
              f"train acc {accuracy(model, train_loader, device):.3f}  "
              f"test acc {accuracy(model, test_loader, device):.3f}")
    acc = accuracy(model, test_loader, device)
    print(f"final test accuracy: {acc:.3f} ({len(test_idx)} test graphs)")
    return acc


if __name__ == "__main__":
    run(main)
