"""KongSketch as a building block of learned PyG models."""
import random
import re

import pytest
import torch
import torch.nn.functional as F
from helpers import random_graph, to_data
from torch_geometric.data import Batch, Data
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
    buffers = {"hashes.coef", "hashes.shift", "hashes.flip", "hashes.scheme"}
    assert {n for n, _ in layer.named_buffers()} == buffers
    b = batch_of(4)
    x = F.one_hot(b.x, NUM_LABELS).float().requires_grad_()  # one-hot rows are labels too
    out = layer(x, b.edge_index)
    assert not out.requires_grad and out.grad_fn is None
    assert torch.equal(out, layer(b.x, b.edge_index))
    # autograd of the model around it is untouched: x still gets its gradient
    (torch.cat([x, out], -1).sum() * 2).backward()
    assert torch.equal(x.grad, torch.full_like(x, 2.0))


def order_only_classes(n=40, seed=0):
    """Pairs of stars whose leaves hold the same labels; graph 2j sees them in ascending
    label order (class 0), graph 2j + 1 in descending order (class 1). Only the neighbor
    order tells the classes apart."""
    gen = torch.Generator().manual_seed(seed)
    graphs = []
    for _ in range(n // 2):
        leaves = torch.sort(torch.randint(0, NUM_LABELS, (6,), generator=gen)).values
        while bool((leaves == leaves[0]).all()):  # need two labels at least
            leaves = torch.sort(torch.randint(0, NUM_LABELS, (6,), generator=gen)).values
        for cls, order in enumerate((leaves, leaves.flip(0))):
            x = torch.cat([torch.tensor([0]), order])
            edge_index = torch.stack([torch.arange(1, 7), torch.zeros(6, dtype=torch.long)])
            graphs.append(Data(x=x, edge_index=edge_index, y=torch.tensor([cls])))
    return graphs


def test_gin_plus_kong_learns_order_only_classes_gin_alone_cannot():
    graphs = order_only_classes()
    b = Batch.from_data_list(graphs)
    torch.manual_seed(0)
    gin_only = GINWithKong(use_kong=False)
    # GIN aggregates a multiset: the two orders of the same leaves give the same output
    out = gin_only(b.x, b.edge_index, b.batch)
    assert all(torch.allclose(out[i], out[i + 1]) for i in range(0, len(graphs), 2))
    torch.manual_seed(0)
    model = GINWithKong()
    train(model, b, steps=150)
    pred = model(b.x, b.edge_index, b.batch).argmax(-1)
    assert float((pred == b.y).float().mean()) == 1.0
    assert all(not n.startswith("kong.") for n, _ in model.named_parameters())
    assert {"kong.hashes.coef", "kong.hashes.shift", "kong.hashes.flip"} <= set(model.state_dict())


def test_kong_features_separate_order_only_classes_with_k2_not_k1():
    from sklearn.svm import LinearSVC

    from kong_pyg import KongVectorizer

    graphs = order_only_classes(60, seed=1)
    b = Batch.from_data_list(graphs)
    y = b.y.numpy()
    k1 = KongSketch(k=1, hops=1, dim=64).readout(b.x, b.edge_index, b.batch)
    # k = 1 counts labels: a graph and its reversed twin have the same features
    assert all(torch.equal(k1[i], k1[i + 1]) for i in range(0, len(graphs), 2))
    k2 = KongSketch(k=2, hops=1, dim=64).readout(b.x, b.edge_index, b.batch)
    assert not any(torch.equal(k2[i], k2[i + 1]) for i in range(0, len(graphs), 2))
    # a linear classifier on exact k = 2 features generalizes; on k = 1 it cannot beat chance
    X2 = KongVectorizer(k=2, hops=1).fit_transform(graphs)
    assert LinearSVC(C=10.0).fit(X2[:40], y[:40]).score(X2[40:], y[40:]) == 1.0
    X1 = KongVectorizer(k=1, hops=1).fit_transform(graphs)
    # identical rows with both labels: any classifier is right on exactly one of each pair
    assert LinearSVC(C=10.0).fit(X1[:40], y[:40]).score(X1[40:], y[40:]) == 0.5


def test_forward_runs_through_propagate_with_its_hooks_and_flow():
    b = batch_of(5, seed=3)
    layer = KongSketch(k=2, hops=3, dim=16, dtype=torch.float64)
    calls = []
    layer.register_propagate_forward_hook(lambda module, inputs, output: calls.append(output.shape))
    out = layer(b.x, b.edge_index)
    assert len(calls) == 3 and all(c == (b.num_nodes, 16) for c in calls)  # one propagate per hop
    # flow="target_to_source" on reversed edges is the same computation
    rev = KongSketch(k=2, hops=3, dim=16, dtype=torch.float64, flow="target_to_source")
    torch.testing.assert_close(rev(b.x, b.edge_index.flip(0)), out, rtol=0, atol=0)
    torch.testing.assert_close(layer.readout(b.x, b.edge_index, b.batch),
                               global_add_pool(out, b.batch), rtol=1e-12, atol=1e-9)


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
    # tables of another degree, k or depth have other shapes: the options are named, not PyTorch's size error
    first = "degree=2, k-grams of up to 2 symbols (k), hops=2; this layer has degree=1"
    for opts, said in ((dict(degree=2), first), (dict(k=3), "up to 3 symbols"), (dict(hops=4), "hops=4")):
        saved = KongSketch(**{**dict(k=2, hops=2, dim=32, seed=9), **opts}).state_dict()
        with pytest.raises(ValueError, match=re.escape(said)):
            other.load_state_dict(saved)
        assert torch.equal(other(b.x, b.edge_index), own)


class ReadoutHead(torch.nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.kong = KongSketch(k=2, hops=2, dim=dim, kernel="cosine")
        self.head = torch.nn.Sequential(torch.nn.Linear(dim, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))

    def forward(self, x, edge_index, batch):
        return self.head(self.kong.readout(x, edge_index, batch) * 2.0)


class NodeMapsHead(ReadoutHead):
    def forward(self, x, edge_index, batch):
        from torch_geometric.utils import scatter

        return self.head(scatter(self.kong.node_maps(x, edge_index), batch, 0, reduce="sum") * 2.0)


def test_torch_compile_of_models_around_the_layer_matches_eager():
    # KongSketch's forward/readout/node_maps have data-dependent shapes; they are excluded from
    # compilation (torch.compiler.disable), and models around them compile and agree (node_maps was
    # compiled: the second size failed in an f-string of a symbolic node count)
    torch._dynamo.reset()
    b, b2 = batch_of(6, seed=4), batch_of(5, seed=5)
    for make in (GINWithKong, ReadoutHead, NodeMapsHead):
        torch.manual_seed(0)
        model = make()
        compiled = torch.compile(model, backend="aot_eager")
        for g in (b, b2):  # two batch shapes
            got = compiled(g.x, g.edge_index, g.batch)
            want = model(g.x, g.edge_index, g.batch)
            assert got.shape == want.shape
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
        # gradients flow through the compiled model around the (non-learned) layer
        loss = F.cross_entropy(compiled(b.x, b.edge_index, b.batch), b.y)
        loss.backward()
        assert all(p.grad is not None for p in model.parameters())
    torch._dynamo.reset()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_output_dtype(dtype):
    b = batch_of(3)
    assert KongSketch(dim=8, dtype=dtype)(b.x, b.edge_index).dtype == dtype


def test_pyg_assert_module_with_sparse_layouts_where_order_cannot_matter():
    from torch_geometric.testing import assert_module

    b = batch_of(4, seed=6)
    # PyG's sparse conversions drop repeated edges, so test on a simple graph
    edge_index = torch.unique(b.edge_index, dim=1)
    for cfg in (dict(k=1, hops=2), dict(k=1, hops=3, kernel="cosine", degree=2, relabel=True)):
        layer = KongSketch(dim=32, dtype=torch.float64, **cfg)
        out = assert_module(layer, b.x, edge_index, expected_size=(b.num_nodes, 32),
                            test_edge_permutation=True)
        torch.testing.assert_close(out, layer(b.x, edge_index))
    # a weighted sparse entry w is w parallel edges
    adj_t = torch.sparse_coo_tensor(torch.stack([b.edge_index[1], b.edge_index[0]]),
                                    torch.ones(b.edge_index.size(1)), (b.num_nodes, b.num_nodes)).coalesce()
    torch.testing.assert_close(KongSketch(dim=32)(b.x, adj_t), KongSketch(dim=32)(b.x, b.edge_index))
    # k >= 2 reads the neighbor order: sparse input is refused with a clear error
    from torch_geometric.utils import to_torch_csc_tensor

    adj_t = to_torch_csc_tensor(b.edge_index, size=(b.num_nodes, b.num_nodes)).t()
    with pytest.raises(TypeError, match="no neighbor order, which k=2 reads"):
        KongSketch(k=2, dim=8)(b.x, adj_t)
    with pytest.raises(ValueError, match="flow='source_to_target'"):
        KongSketch(k=1, dim=8, flow="target_to_source")(b.x, adj_t)


def test_torchscript_is_refused_clearly_and_torch_compile_runs_it():
    layer = KongSketch(k=2, hops=2, dim=16)
    x, ei = torch.tensor([0, 1, 2, 1]), torch.tensor([[0, 1, 2, 3], [1, 2, 3, 0]])

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.kong = layer

        def forward(self, x, edge_index):
            return self.kong(x, edge_index).sum()

    for compile_it in (lambda: torch.jit.script(layer), lambda: torch.jit.script(Model()),
                       lambda: torch.jit.trace(layer, (x, ei))):
        with pytest.raises(TypeError, match="KongSketch cannot be compiled to TorchScript"):
            compile_it()
    assert torch.equal(torch.compile(layer)(x, ei), layer(x, ei))


def test_flow_is_read_only_and_complex_dtypes_are_refused():
    """Setting layer.flow after construction changed MessagePassing's flow but not the k-gram engine's
    (features of neither flow); a complex dtype crashed inside scatter."""
    layer = KongSketch(k=2, dim=8)
    with pytest.raises(AttributeError, match=r"'flow' is read-only .*\(\.\.\., flow='target_to_source'\)"):
        layer.flow = "target_to_source"
    layer.flow = "source_to_target"  # (the same: allowed)
    other = KongSketch(k=2, dim=8, flow="target_to_source")
    assert other.flow == "target_to_source" == other.config.flow
    with pytest.raises(TypeError, match="real features: it cannot be moved to torch.complex64"):
        layer.to(torch.complex64)
    assert layer.hashes.flip.dtype == torch.float64 and layer.double().out_dtype == torch.float64


def test_module_type_keeps_the_integer_hash_tables():
    """Module.type(dtype) casts every tensor: .type(torch.int32) changed the features silently and a
    model's .type(torch.float64) made the hash tables float ('rshift_cpu' not implemented for 'Double')."""
    x = torch.tensor([0, 1, 2, 1, 0])
    ei = torch.tensor([[0, 1, 2, 3, 1, 4], [1, 2, 3, 0, 0, 0]])
    want = KongSketch(k=2, dim=16, dtype=torch.float64)(x, ei)
    for dtype in (torch.float64, "torch.DoubleTensor", torch.float32):
        layer = KongSketch(k=2, dim=16).type(dtype)
        assert layer.hashes.coef.dtype == layer.hashes.shift.dtype == torch.int64
        torch.testing.assert_close(layer(x, ei).double(), want)
    model = torch.nn.Sequential(KongSketch(k=2, dim=16), torch.nn.Linear(16, 2)).type(torch.float64)
    assert torch.equal(model[0](x, ei), want) and model[1].weight.dtype == torch.float64
    with pytest.raises(TypeError, match="floating-point features: it cannot be cast to torch.int32"):
        KongSketch(k=2, dim=16).type(torch.int32)
    # the tables stay where the layer is (as .type() keeps every tensor's device; they were sent to the CPU)
    meta = KongSketch(k=2, dim=16).to("meta").type(torch.float64)
    assert {b.device.type for b in meta.buffers()} == {"meta"} and meta.hashes.coef.dtype == torch.int64


def test_layer_built_under_a_default_device_draws_its_tables_on_the_cpu():
    """Under `with torch.device("meta")` (deferred initialisation) the tables were drawn on the default
    device with a CPU generator: 'Tensor.item() cannot be called on meta tensors'."""
    from kong_pyg.sketch import SketchHashes

    x = torch.tensor([0, 1, 2, 1, 0])
    ei = torch.tensor([[0, 1, 2, 3, 1, 4], [1, 2, 3, 0, 0, 0]])
    with torch.device("meta"):
        layer = KongSketch(k=2, dim=16)
        old = SketchHashes(16, 1, 2, 3, seed=5, version=1)
    assert layer.hashes.coef.is_meta
    layer = layer.to_empty(device="cpu")
    layer.reset_parameters()  # (the deferred-initialisation idiom: real tensors, then the tables drawn)
    assert torch.equal(layer(x, ei), KongSketch(k=2, dim=16)(x, ei))
    old = old.to_empty(device="cpu")
    old.reset_parameters()
    new = SketchHashes(16, 1, 2, 3, seed=5, version=1)
    assert all(torch.equal(a, b) for a, b in zip(old.buffers(), new.buffers()))


def test_explain_masks_leave_the_layer_out():
    """PyG's set_masks scaled the layer's messages: forward changed but matched no graph (with k = 2 not
    the graph without the edge), readout and node_maps ignored the mask; decomposed_layers=2 crashed."""
    from torch_geometric.explain.algorithm.utils import clear_masks, set_masks

    x = torch.tensor([0, 1, 2, 1, 0])
    ei = torch.tensor([[0, 1, 2, 3, 1, 4], [1, 2, 3, 0, 0, 0]])
    layer = KongSketch(k=2, dim=16, dtype=torch.float64)
    plain = layer(x, ei)
    set_masks(layer, torch.tensor([1.0, 1.0, 1.0, 0.0, 1.0, 1.0]), ei, apply_sigmoid=False)
    assert layer.explain is False and torch.equal(layer(x, ei), plain)
    clear_masks(layer)
    layer.explain = None  # (what clearing would set)
    with pytest.raises(ValueError, match="takes no edge masks"):
        layer.explain = True
    with pytest.raises(ValueError, match="'decomposed_layers' must be 1"):
        layer.decomposed_layers = 2
    assert torch.equal(layer(x, ei), plain)


def test_a_refused_load_with_assign_leaves_the_source_layer_alone():
    """load_state_dict(assign=True) makes the layer hold the state dict's own tensors: the refusal's redraw
    wrote this layer's seed-7 tables into them, so the other layer changed its features silently."""
    x = torch.tensor([0, 1, 2, 1, 0])
    ei = torch.tensor([[0, 1, 2, 3, 1, 4], [1, 2, 3, 0, 0, 0]])
    src, dst = KongSketch(k=2, dim=16), KongSketch(k=2, dim=16, seed=7)
    src_before, dst_before = src(x, ei), dst(x, ei)
    with pytest.raises(ValueError, match="not drawn with this layer's seed=7"):
        dst.load_state_dict(src.state_dict(), assign=True)
    assert torch.equal(src(x, ei), src_before) and torch.equal(dst(x, ei), dst_before)
    same = KongSketch(k=2, dim=16)
    same.load_state_dict(src.state_dict(), assign=True)  # (accepted: the same seed's tables)
    assert torch.equal(same(x, ei), src_before)


def test_cpu_work_under_a_meta_default_device():
    """Under `with torch.device("meta")` moving a CPU layer failed ('Cannot copy out of meta tensor'), as
    did KongFeatures built there and KongVectorizer's sketch tables (drawn on the default device)."""
    from kong_pyg import KongFeatures, KongVectorizer

    ei = torch.tensor([[0, 1, 2, 3, 1, 4], [1, 2, 3, 0, 0, 0]])
    g = Data(x=torch.tensor([0, 1, 2, 1, 0]), edge_index=ei)
    layer = KongSketch(k=2, dim=16)
    model = torch.nn.Sequential(KongSketch(k=2, dim=16), torch.nn.Linear(16, 2))
    ref = layer(g.x, g.edge_index)
    want_node = KongFeatures(k=2, dim=32)(g.clone()).kong_x
    want_vec = KongVectorizer(k=2, dim=32).fit_transform([g])
    saved, other_seed = KongSketch(k=2, dim=16).state_dict(), KongSketch(k=2, dim=16, seed=1).state_dict()
    with torch.device("meta"):
        assert layer.to("cpu") is layer and model.to("cpu") is model
        assert torch.equal(layer.double()(g.x, g.edge_index), ref.double())
        features = KongFeatures(k=2, dim=32)  # (its tables are meta: drawn again where the data is)
        got_vec = [KongVectorizer(k=2, dim=32, device=d).fit_transform([g]) for d in (None, "cpu")]
        layer.load_state_dict(saved)  # (its check drew tables on the default device: meta)
        with pytest.raises(ValueError, match="seed=0 and dim=16"):
            layer.load_state_dict(other_seed)
        meta_layer = KongSketch(k=2, dim=16)
    with pytest.warns(UserWarning, match="which is a no-op"):  # (PyTorch's warning; it crashed on .item())
        meta_layer.load_state_dict(saved)
    assert meta_layer.hashes.coef.is_meta and meta_layer.hashes.version == 2
    assert torch.equal(layer(g.x, g.edge_index), ref.double())
    assert torch.equal(features(g.clone()).kong_x, want_node)
    assert all((v == want_vec).all() for v in got_vec)


def test_symbolic_tracing_and_export_are_refused_clearly():
    """torch.fx gave "'batch' must hold integer graph indices (got Proxy)" for a call without batch, and
    torch.export PyTorch's data-dependent guard error."""
    import inspect

    from kong_pyg.nn.tooling import _EAGER

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.kong, self.lin = KongSketch(k=2, dim=16), torch.nn.Linear(16, 2)

        def forward(self, x, edge_index):
            return self.lin(self.kong(x, edge_index))

    x, ei = torch.tensor([0, 1, 2, 1]), torch.tensor([[0, 1, 2, 3], [1, 2, 3, 0]])
    model = Model()
    class EdgesOnly(torch.nn.Module):  # (x a constant: only edge_index is a proxy)
        def __init__(self):
            super().__init__()
            self.kong = KongSketch(k=2, dim=16)

        def forward(self, edge_index):
            return self.kong(torch.tensor([0, 1, 2, 1]), edge_index)

    for module, args in ((model.kong, (x, ei)), (model, (x, ei)), (EdgesOnly(), (ei,))):
        with pytest.raises(TypeError, match="KongSketch cannot be traced symbolically"):
            torch.fx.symbolic_trace(module)
        with pytest.raises(TypeError, match="KongSketch cannot be exported"):
            torch.export.export(module, args, strict=False)

    class Leaf(torch.fx.Tracer):  # (the workaround the message names)
        def is_leaf_module(self, m, name):
            return isinstance(m, KongSketch) or super().is_leaf_module(m, name)

    assert torch.equal(torch.fx.GraphModule(model, Leaf().trace(model))(x, ei), model(x, ei))
    if "reason" in inspect.signature(torch.compiler.disable).parameters:  # (PyTorch 2.6 and later)
        torch._dynamo.reset()
        with pytest.raises(Exception, match=re.escape(_EAGER)):
            torch.compile(model, fullgraph=True, backend="eager")(x, ei)
        torch._dynamo.reset()


def test_to_hetero_with_an_edge_type_between_two_node_types_is_refused_clearly():
    """PyG passes (x_src, x_dst) for such an edge type: "'x' must be a torch.Tensor ... (got tuple)"."""
    from torch_geometric.data import HeteroData
    from torch_geometric.nn import to_hetero

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.kong = KongSketch(k=1, hops=2, dim=16)

        def forward(self, x, edge_index):
            return self.kong(x, edge_index)

    h = HeteroData()
    h["a"].x, h["b"].x = torch.tensor([0, 1, 0]), torch.tensor([1, 2])
    h["a", "to", "b"].edge_index = torch.tensor([[0, 1, 2], [0, 1, 1]])
    h["b", "to", "a"].edge_index = torch.tensor([[0, 1], [2, 0]])
    hetero = to_hetero(Model(), h.metadata(), aggr="sum")
    with pytest.raises(TypeError, match="'x' is a pair of tensors \\(x_src, x_dst\\), as torch_geometric"):
        hetero(h.x_dict, h.edge_index_dict)
