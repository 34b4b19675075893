"""KongSketch as a building block of learned PyG models."""
import random

import pytest
import torch
import torch.nn.functional as F
from helpers import random_graph, to_data
from torch_geometric.data import Batch
from torch_geometric.nn import GIN, global_add_pool

from kong_pyg import KongSketch

NUM_LABELS = 3



def batch_of(n=12, seed=0):
    rng = random.Random(seed)
    gs = [to_data(random_graph(rng, 8, 16, NUM_LABELS)) for _ in range(n)]
    for i, d in enumerate(gs):
        d.y = torch.tensor([i % 2])
    return Batch.from_data_list(gs)


class GINWithKong(torch.nn.Module):
    def __init__(self, dim=32, use_kong=True):
        super().__init__()
        self.kong = KongSketch(k=2, hops=2, dim=dim, kernel="cosine") if use_kong else None
        width = NUM_LABELS + (dim if use_kong else 0)
        self.gin = GIN(width, 16, num_layers=2)
        self.head = torch.nn.Linear(16, 2)

    def forward(self, x, edge_index, batch):
        h = F.one_hot(x, NUM_LABELS).float()
        if self.kong is not None:
            h = torch.cat([h, self.kong(x, edge_index)], dim=-1)
        return self.head(global_add_pool(self.gin(h, edge_index), batch))


def train(model, b, steps=30):
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(b.x, b.edge_index, b.batch), b.y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_kong_has_no_parameters_and_its_output_no_grad():
    layer = KongSketch(k=2, dim=16)
    assert list(layer.parameters()) == []
    assert {n for n, _ in layer.named_buffers()} == {"hashes.coef", "hashes.shift", "hashes.flip"}
    b = batch_of(4)
    x = F.one_hot(b.x, NUM_LABELS).float().requires_grad_()  # one-hot rows are labels too
    out = layer(x, b.edge_index)
    assert not out.requires_grad and out.grad_fn is None
    assert torch.equal(out, layer(b.x, b.edge_index))
    # autograd of the model around it is untouched: x still gets its gradient
    (torch.cat([x, out], -1).sum() * 2).backward()
    assert torch.equal(x.grad, torch.full_like(x, 2.0))


def test_gin_on_x_and_kong_node_features_trains():
    torch.manual_seed(0)
    b = batch_of()
    model = GINWithKong()
    losses = train(model, b)
    assert losses[-1] < 0.5 * losses[0], losses
    for name, p in model.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, name
    assert all(not n.startswith("kong.") for n, _ in model.named_parameters())
    assert {"kong.hashes.coef", "kong.hashes.shift", "kong.hashes.flip"} <= set(model.state_dict())


def test_kong_readout_feeding_a_linear_head_trains():
    torch.manual_seed(0)
    b = batch_of(16, seed=1)
    kong = KongSketch(k=2, hops=2, dim=64, kernel="cosine")
    head = torch.nn.Linear(64, 2)
    z = kong.readout(b.x, b.edge_index, b.batch)
    assert z.shape == (16, 64) and not z.requires_grad
    opt = torch.optim.Adam(head.parameters(), lr=0.05)
    first = None
    for _ in range(100):
        opt.zero_grad()
        loss = F.cross_entropy(head(z), b.y)
        loss.backward()
        opt.step()
        first = loss.item() if first is None else first
    assert loss.item() < 0.5 * first


def test_buffers_move_and_round_trip():
    b = batch_of(4, seed=2)
    layer = KongSketch(k=2, hops=2, dim=32, seed=3)
    ref = layer(b.x, b.edge_index)
    assert layer.to(torch.device("cpu")) is layer
    assert torch.equal(layer(b.x, b.edge_index), ref)
    # a dtype change of the model keeps the (+-1) sign tables exact
    layer.to(torch.float16)
    assert torch.equal(layer(b.x, b.edge_index), ref)
    layer.double()
    assert torch.equal(layer(b.x, b.edge_index), ref)
    # the hash tables live in the state dict and round-trip
    same = KongSketch(k=2, hops=2, dim=32, seed=3)
    same.load_state_dict(layer.state_dict())
    assert torch.equal(same(b.x, b.edge_index), ref)
    # tables of another seed or sketch size are refused (they would make .seed and the repr lie)
    other = KongSketch(k=2, hops=2, dim=32, seed=9)
    own = other(b.x, b.edge_index)
    assert not torch.equal(own, ref)
    for foreign in (KongSketch(k=2, hops=2, dim=32, seed=3), KongSketch(k=2, hops=2, dim=31, seed=9)):
        with pytest.raises(ValueError, match="seed=9 and dim=32"):
            other.load_state_dict(foreign.state_dict())
        assert torch.equal(other(b.x, b.edge_index), own)  # its own tables are kept
    other.reset_parameters()  # redraws from its own seed
    assert torch.equal(other(b.x, b.edge_index), own)


def test_torch_compile_runs_kong_eagerly_inside_a_compiled_model():
    # KongSketch's forward has data-dependent shapes; it is excluded from
    # compilation (torch.compiler.disable) so compiled models around it work.
    torch._dynamo.reset()
    b, b2 = batch_of(6, seed=4), batch_of(5, seed=5)
    layer = KongSketch(k=2, hops=2, dim=32)
    compiled_layer = torch.compile(layer, backend="aot_eager")
    for g in (b, b2):
        assert torch.equal(compiled_layer(g.x, g.edge_index), layer(g.x, g.edge_index))
        got = compiled_layer.readout(g.x, g.edge_index, g.batch)
        assert torch.equal(got, layer.readout(g.x, g.edge_index, g.batch))
    torch.manual_seed(0)
    model = GINWithKong()
    compiled = torch.compile(model, backend="aot_eager")
    for g in (b, b2):
        got = compiled(g.x, g.edge_index, g.batch)
        assert torch.allclose(got, model(g.x, g.edge_index, g.batch), atol=1e-5)
    losses = train(compiled, b, steps=5)
    assert losses[-1] < losses[0]
    torch._dynamo.reset()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_output_dtype(dtype):
    b = batch_of(3)
    assert KongSketch(dim=8, dtype=dtype)(b.x, b.edge_index).dtype == dtype
