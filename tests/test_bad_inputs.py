"""Bad input at every public entry point: a clear error of a named class, never an opaque crash.

One table: each case names the input, the callable, the exact exception class
expected and a regex of the words the message must hold. Command lines run
in-process (``kong_pyg.cli.main``); a failing one must exit with status 2 and
print one line, no traceback (:class:`CommandFailed` carries that line).

An opaque error (``IndexError``, ``KeyError``, ``RuntimeError``,
``AttributeError``, a traceback) is a bug. Cases that still fail are marked
``xfail`` with the reason and the module responsible.
"""
import contextlib
import io
import warnings
from pathlib import Path
from typing import Any, Callable, List, NamedTuple, Optional

import numpy as np
import pytest
import torch
from helpers import Collated
from torch_geometric.data import Batch, Data, InMemoryDataset

from kong_pyg import KongConfig, KongFeatures, KongSketch, KongStream, KongVectorizer
from kong_pyg.cli import main as cli_main
from kong_pyg.datasets import read_streamspot, stream_to_graphs, synthetic_event_stream
from kong_pyg.evaluation.splits import class_labels


class CommandFailed(Exception):
    """A command line that exited non-zero; the message is ``exit N: <its stderr>``."""


class Case(NamedTuple):
    id: str
    call: Callable[[Path], Any]
    error: type
    match: str
    xfail: Optional[str] = None


CASES: List[Case] = []


def _on_a_star(run: Callable[[Path], Any]) -> Callable[[Path], Any]:
    """:obj:`run` after writing ``{tmp}/star.tsv``, a StreamSpot star of 199 edges."""
    def call(tmp: Path) -> Any:
        (tmp / "star.tsv").write_text("".join(f"0\ta\t{i}\tb\te\tg\n" for i in range(1, 200)))
        return run(tmp)

    return call


def case(id: str, call: Callable[[Path], Any], error: type, match: str, xfail: Optional[str] = None) -> None:
    CASES.append(Case(id, call, error, match, xfail))


# ---------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------

X3 = torch.tensor([0, 1, 2])
E3 = torch.tensor([[1, 2], [0, 0]])
#: The message for an edge_index dtype that cannot hold node indices (a regular expression).
EDGE_DTYPE = "'edge_index' must hold integer node indices \\(torch.long, or int32, int16, int8, uint8\\)"


def graph(**kw) -> Data:
    base = dict(x=X3.clone(), edge_index=E3.clone())
    base.update(kw)
    return Data(**{k: v for k, v in base.items() if v is not None})


def sparse_adj() -> torch.Tensor:
    return torch.sparse_coo_tensor(torch.tensor([[0, 0], [1, 2]]), torch.ones(2), (3, 3))


def complete(n: int):
    src, dst = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
    keep = src != dst
    return torch.arange(n) % 3, torch.stack([src[keep], dst[keep]])


def cli(*argv: Any) -> Callable[[Path], int]:
    """A command line; ``{tmp}`` in an argument is the test's temporary folder."""
    def run(tmp: Path) -> int:
        args = [str(a).format(tmp=tmp) for a in argv]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rc = cli_main(args)
        text = err.getvalue()
        if rc != 0:
            assert "Traceback" not in text, text
            assert text.count("\n") == 1, f"not one line: {text!r}"
            raise CommandFailed(f"exit {rc}: {text.strip()}")
        return rc

    return run


def files(tmp: Path) -> dict:
    """Files and folders the cases read (made fresh in every test's folder)."""
    from kong_pyg.datasets import synthetic_event_stream, write_streamspot

    a_file = tmp / "a.txt"
    a_file.write_text("not a folder\n")
    stream, _ = synthetic_event_stream(4, seed=1)
    write_streamspot(stream, tmp / "s.tsv")
    (tmp / "garbage.ckpt").write_bytes(bytes((i * 37 + 11) % 256 for i in range(256)))
    (tmp / "text.ckpt").write_text("hello\n")
    good = KongStream(k=2, dim=16)
    good.save(tmp / "k2.ckpt")
    blob = (tmp / "k2.ckpt").read_bytes()
    (tmp / "truncated.ckpt").write_bytes(blob[: len(blob) // 2])
    torch.save({"x": torch.zeros(2)}, tmp / "foreign.ckpt")
    torch.save([1, 2, 3], tmp / "list.ckpt")
    (tmp / "empty.ckpt").write_bytes(b"")
    (tmp / "adir").mkdir()
    write_streamspot(stream, tmp / "adir" / "order_test.md")
    return {"stream": stream}


def stream_of(tmp: Path):
    from kong_pyg.datasets import synthetic_event_stream

    return synthetic_event_stream(4, seed=1)[0]


def tu_folder(tmp: Path, **parts: Optional[str]) -> Path:
    """A tiny TU data set T under tmp/tu (two triangles), with parts replaced."""
    raw = tmp / "tu" / "T" / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    base = {"A": "1,2\n2,3\n3,1\n4,5\n5,6\n6,4\n", "graph_indicator": "1\n1\n1\n2\n2\n2\n",
            "graph_labels": "0\n1\n", "node_labels": "0\n1\n2\n0\n1\n2\n"}
    base.update(parts)
    for part, text in base.items():
        if text is not None:
            (raw / f"T_{part}.txt").write_text(text)
    return tmp / "tu"


def ml_folder(tmp: Path, extra_lines=()) -> Path:
    from ml_fake import write_fake_ml100k

    write_fake_ml100k(tmp / "ml", extra_lines=extra_lines)
    return tmp / "ml"


# ---------------------------------------------------------------------------
# KongConfig (the options of every front-end)
# ---------------------------------------------------------------------------

for name, value, error, match in [
    ("k", 0, ValueError, "'k' must be >= 1 \\(got 0\\)"),
    ("k", -3, ValueError, "'k' must be >= 1"),
    ("k", 1.5, TypeError, "'k' must be an integer \\(got float\\)"),
    ("k", "2", TypeError, "'k' must be an integer \\(got str\\)"),
    ("k", True, TypeError, "'k' must be an integer \\(got bool\\)"),
    ("k", None, TypeError, "'k' must be an integer \\(got NoneType\\)"),
    ("k", torch.tensor(2), TypeError, "'k' must be an integer \\(got Tensor\\)"),
    ("hops", -1, ValueError, "'hops' must be >= 0"),
    ("hops", 2.0, TypeError, "'hops' must be an integer"),
    ("traversal", "dfs", ValueError, "'traversal' must be one of \\['bfs', 'wl'\\] \\(got 'dfs'\\)"),
    ("traversal", None, TypeError, "'traversal' must be a string, one of \\['bfs', 'wl'\\] \\(got None"),
    ("kernel", 1, TypeError, "'kernel' must be a string, one of \\['poly', 'cosine'\\] \\(got int\\)"),
    ("dim", 0, ValueError, "'dim' must be >= 1"),
    ("dim", 64.0, TypeError, "'dim' must be an integer"),
    ("dim", "exact", TypeError, "'dim' must be an integer \\(got str\\)"),
    ("kernel", "rbf", ValueError, "'kernel' must be one of \\['poly', 'cosine'\\]"),
    ("degree", 0, ValueError, "'degree' must be >= 1"),
    ("const", -1.0, ValueError, "'const' must be >= 0.0 and finite \\(got -1.0\\)"),
    ("const", float("nan"), ValueError, "'const' must be >= 0.0 and finite \\(got nan\\)"),
    ("const", float("inf"), ValueError, "'const' must be >= 0.0 and finite \\(got inf\\)"),
    ("const", "1", TypeError, "'const' must be a number \\(got str\\)"),
    ("seed", -1, ValueError, "'seed' must be >= 0"),
    ("seed", 0.5, TypeError, "'seed' must be an integer"),
    ("order", "time", ValueError, "'order' must be one of \\['edge', 'reverse'"),
    ("relabel", -1, ValueError, "'relabel' must be >= 0"),
    ("relabel", "yes", TypeError, "'relabel' must be an integer"),
    ("blended", "yes", TypeError, "'blended' must be True or False \\(got 'yes'\\)"),
    ("blended", 1, TypeError, "'blended' must be True or False \\(got 1\\)"),
    ("norm", "l2", ValueError, "'norm' must be one of \\['exact', 'sketch'\\]"),
    ("flow", "up", ValueError, "'flow' must be one of \\['source_to_target', 'target_to_source'\\]"),
    ("normalize", None, TypeError, "'normalize' must be True or False"),
    ("edge_labels", "no", TypeError, "'edge_labels' must be True or False"),
    ("own_label", 0, TypeError, "'own_label' must be True or False"),
]:
    case(f"config-{name}-{value!r}", lambda tmp, n=name, v=value: KongConfig(**{n: v}), error, match)

case("config-own-label-without-hops", lambda tmp: KongConfig(own_label=False, hops=0), ValueError,
     "own_label=False leaves no string at hops=0")
case("config-from-dict-unknown", lambda tmp: KongConfig.from_dict({"k": 2, "kk": 3}), ValueError,
     "unknown KONG option\\(s\\) \\['kk'\\]")
case("config-replace-checks", lambda tmp: KongConfig().replace(dim=-5), ValueError, "'dim' must be >= 1")
case("config-unknown-keyword", lambda tmp: KongConfig(depth=2), TypeError,
    "unexpected keyword argument 'depth'")

# ---------------------------------------------------------------------------
# KongSketch: constructor, forward, readout
# ---------------------------------------------------------------------------

case("sketch-dim-none", lambda tmp: KongSketch(dim=None), ValueError, "KongSketch computes sketches: 'dim'")
case("sketch-dtype-int", lambda tmp: KongSketch(dtype=torch.long), TypeError,
     "'dtype' must be a floating-point torch.dtype")
case("sketch-dtype-string", lambda tmp: KongSketch(dtype="float32"), TypeError,
     "'dtype' must be a floating-point torch.dtype")
case("sketch-config-not-config", lambda tmp: KongSketch(config={"k": 2}), TypeError,
     "'config' must be a KongConfig \\(got dict\\)")
case("sketch-config-and-options", lambda tmp: KongSketch(k=3, config=KongConfig(dim=8)), ValueError,
     "KongSketch got both 'config' and the option\\(s\\) \\['k'\\]")
case("sketch-k-zero", lambda tmp: KongSketch(k=0), ValueError, "'k' must be >= 1")
case("sketch-huge-dim", lambda tmp: KongSketch(dim=2 ** 39)(X3, E3), ValueError,
     "'dim' = 549,755,813,888: the node sketches .* needs .* GiB, only .* GiB are available")
case("sketch-too-huge-dim", lambda tmp: KongSketch(dim=2 ** 62), ValueError,
     "'dim' must be <= 1,099,511,627,776 \\(got 4,611,686,018,427,387,904\\)")
case("sketch-node-maps-huge-dim", lambda tmp: KongSketch(dim=2 ** 40, degree=2).node_maps(X3, E3),
     ValueError, "'dim' = 1,099,511,627,776: the node sketches")
case("sketch-readout-huge-dim", lambda tmp: KongSketch(dim=2 ** 40).readout(X3, E3), ValueError,
     "the graph features \\[1, 1,099,511,627,776\\] \\('batch' refers to graph 0, "
     "'dim' = 1,099,511,627,776\\)")

S = KongSketch(k=2, hops=1, dim=16)
S1 = KongSketch(k=1, hops=1, dim=16)

for id, args, error, match, *why in [
    ("x-list", ([0, 1, 2], E3), TypeError, "'x' must be a torch.Tensor of node labels \\(got list\\)"),
    ("x-numpy", (np.array([0, 1, 2]), E3), TypeError, "'x' must be a torch.Tensor"),
    ("x-none", (None, E3), TypeError, "'x' must be a torch.Tensor"),
    ("x-empty", (torch.zeros(0, dtype=torch.long), torch.zeros(2, 0, dtype=torch.long)), ValueError,
     "the graph is empty: 'x' has no rows"),
    ("x-scalar", (torch.tensor(1), E3), ValueError, r"'x' must have shape \[num_nodes\] .*got a scalar"),
    ("x-float-features", (torch.rand(3, 4), E3), TypeError,
     "'x' holds floating-point values that are not one-hot"),
    ("x-float-vector", (torch.tensor([0.0, 1.0, 2.0]), E3), TypeError,
     "'x' holds floating-point values \\(torch.float32\\); KONG needs discrete labels"),
    ("x-nan", (torch.tensor([[1.0, 0.0], [float("nan"), 0.0], [0.0, 1.0]]), E3), TypeError,
     "not one-hot rows"),
    ("x-inf", (torch.tensor([[1.0, 0.0], [float("inf"), 0.0], [0.0, 1.0]]), E3), TypeError,
     "not one-hot rows"),
    ("x-negative-one-hot", (torch.tensor([[2.0, -1.0], [1.0, 0.0], [0.0, 1.0]]), E3), TypeError,
     "not one-hot rows"),
    ("x-3d", (torch.zeros(3, 2, 2, dtype=torch.long), E3), ValueError,
     "'x' must have shape \\[3\\] or \\[3, C\\]"),
    ("x-negative", (torch.tensor([0, -1, 2]), E3), ValueError, "'x' holds negative labels \\(-1\\)"),
    ("x-negative-rows", (torch.tensor([[0, 1], [-1, 3], [2, 2]]), E3), ValueError,
     "'x' holds negative labels"),
    ("x-negative-in-batch", (torch.tensor([0, 1, 2, 0, -3, 1]), torch.tensor([[0, 1, 3, 4], [1, 2, 4, 5]]),
                             None, None, torch.tensor([0, 0, 0, 1, 1, 1])), ValueError,
     r"graph 1: 'x' holds negative labels \(-3\)"),
    ("x-huge", (torch.tensor([0, 2 ** 60, 2]), E3), ValueError, "'x' holds labels >= 2\\^58"),
    ("x-complex", (torch.tensor([0, 1, 2], dtype=torch.complex64), E3), TypeError,
     "'x' must hold integer labels"),
    ("x-zero-columns", (torch.zeros(3, 0), E3), ValueError, "'x' has zero columns"),
    ("x-sparse", (torch.eye(3).to_sparse(), E3), TypeError, "'x' must be a dense tensor"),
    ("edge-index-float", (X3, E3.float()), TypeError, EDGE_DTYPE + " \\(got torch.float32\\)"),
    ("edge-index-uint32", (X3, E3.to(torch.uint32)), TypeError, EDGE_DTYPE + " \\(got torch.uint32\\)"),
    ("edge-index-list", (X3, [[1, 2], [0, 0]]), TypeError,
     "'edge_index' must be a \\[2, num_edges\\] torch.LongTensor"),
    ("edge-index-3-rows", (X3, torch.zeros(3, 2, dtype=torch.long)), ValueError,
     "'edge_index' must have shape \\[2, num_edges\\] \\(got \\[3, 2\\]\\)"),
    ("edge-index-1d", (X3, torch.tensor([0, 1])), ValueError,
     "'edge_index' must have shape \\[2, num_edges\\]"),
    ("edge-index-negative", (X3, torch.tensor([[-1, 2], [0, 0]])), ValueError,
     "'edge_index' holds a negative node index \\(-1\\)"),
    ("edge-index-out-of-range", (X3, torch.tensor([[1, 5], [0, 0]])), ValueError,
     "'edge_index' holds node index 5 but there are only 3 nodes"),
    ("edge-index-huge", (X3, torch.tensor([[1, 2 ** 62], [0, 0]])), ValueError, "holds node index"),
    ("sparse-adjacency-k2", (X3, sparse_adj()), TypeError,
     "a sparse adjacency .* has no neighbor order, which k=2 reads"),
    ("edge-attr-rows", (X3, E3, torch.tensor([1])), ValueError, "'edge_attr' has 1 rows, expected 2"),
    ("edge-attr-float", (X3, E3, torch.tensor([0.5, 0.1])), TypeError,
     "'edge_attr' holds floating-point values"),
    ("edge-attr-list", (X3, E3, [0, 1]), TypeError, "'edge_attr' must be a torch.Tensor \\(got list\\)"),
    ("edge-order-nan", (X3, E3, None, torch.tensor([0.0, float("nan")])), ValueError,
     "'edge_order' holds NaN"),
    ("edge-order-length", (X3, E3, None, torch.tensor([1, 2, 3])), ValueError,
     "'edge_order' must have shape \\[2\\] \\(one key per edge\\)"),
    ("edge-order-bool", (X3, E3, None, torch.tensor([True, False])), TypeError,
     "'edge_order' must be a real-valued sort key"),
    ("edge-order-list", (X3, E3, None, [1, 2]), TypeError, "'edge_order' must be a torch.Tensor"),
    ("edge-index-other-device", (X3, E3.to("meta")), ValueError, "'x' is on cpu but 'edge_index' is on meta"),
]:
    case(f"sketch-forward-{id}", lambda tmp, a=args: S(*a), error, match, why[0] if why else None)

case("sketch-sparse-k1-wrong-shape",
     lambda tmp: S1(X3, torch.sparse_coo_tensor(torch.tensor([[0], [1]]), torch.ones(1), (4, 4))), ValueError,
     "the sparse adjacency must be \\[3, 3\\] \\(got \\[4, 4\\]\\)")
case("sketch-sparse-k1-fractional",
     lambda tmp: S1(X3, torch.sparse_coo_tensor(torch.tensor([[0], [1]]), torch.tensor([0.5]), (3, 3))),
     ValueError, "the sparse adjacency holds non-integer values")
case("sketch-sparse-k1-negative",
     lambda tmp: S1(X3, torch.sparse_coo_tensor(torch.tensor([[0], [1]]), torch.tensor([-1.0]), (3, 3))),
     ValueError, "the sparse adjacency holds negative values")
case("sketch-sparse-k1-target-to-source",
     lambda tmp: KongSketch(k=1, dim=8, flow="target_to_source")(X3, sparse_adj()), ValueError,
     "a sparse adjacency \\('adj_t'\\) needs flow='source_to_target'")
case("sketch-edge-order-with-order-label",
     lambda tmp: KongSketch(k=2, dim=8, order="label")(X3, E3, None, torch.tensor([2, 1])), ValueError,
     "'edge_order' defines the neighbor order, but order='label'")
case("sketch-overflow-float32", lambda tmp: KongSketch(hops=30, dim=16)(*complete(50)), ValueError,
     "beyond the range of torch.float32.*dtype=torch.float64")
case("sketch-overflow-float64",
     lambda tmp: KongSketch(hops=200, dim=16, dtype=torch.float64).readout(*complete(50)), ValueError,
     "overflowed float64.*hops=200")

for id, kwargs, error, match in [
    ("batch-float", dict(batch=torch.zeros(3)), TypeError, "'batch' must hold integer graph indices"),
    ("batch-list", dict(batch=[0, 0, 0]), TypeError, "'batch' must hold integer graph indices"),
    ("batch-length", dict(batch=torch.zeros(2, dtype=torch.long)), ValueError,
     "'batch' must have shape \\[3\\] \\(one graph index per node\\), got \\[2\\]"),
    ("batch-2d", dict(batch=torch.zeros(3, 1, dtype=torch.long)), ValueError,
     "'batch' must have shape \\[3\\]"),
    ("batch-negative", dict(batch=torch.tensor([0, -1, 0])), ValueError,
     "'batch' holds negative graph indices"),
    ("num-graphs-too-small", dict(batch=torch.tensor([2, 2, 2]), num_graphs=2), ValueError,
     "'num_graphs' is 2 but 'batch' refers to graph 2"),
    ("num-graphs-zero", dict(num_graphs=0), ValueError, "'num_graphs' is 0 but 'batch' refers to graph 0"),
    ("num-graphs-float", dict(num_graphs=2.5), TypeError, "'num_graphs' must be an integer",
     ),
    ("num-graphs-huge", dict(num_graphs=2 ** 50), ValueError,
     "the graph features \\[1,125,899,906,842,624, 16\\] \\('num_graphs' = 1,125,899,906,842,624, "
     "'dim' = 16\\) in float64 and their copy in torch.float32 needs 201,326,592.0 GiB"),
    ("batch-huge-index", dict(batch=torch.full((3,), 2 ** 50)), ValueError,
     "\\('batch' refers to graph 1,125,899,906,842,624, 'dim' = 16\\)"),
]:
    case(f"sketch-readout-{id}", lambda tmp, kw=kwargs: S.readout(X3, E3, **kw), error, match)

# ---------------------------------------------------------------------------
# KongVectorizer
# ---------------------------------------------------------------------------

V = KongVectorizer(k=2, hops=1)
for id, graphs, error, match in [
    ("string", "graphs", TypeError,
     "'graphs' must be a sequence of Data objects, a Batch or a PyG dataset \\(got str\\)"),
    ("int", 42, TypeError, "'graphs' must be a sequence of Data objects"),
    ("dict", {"x": X3}, TypeError, "'graphs' must be a sequence of Data objects"),
    ("tensor", X3, TypeError, "graph 0 is a Tensor, not a torch_geometric.data.Data"),
    ("none", None, TypeError, "'graphs' must be a sequence of Data objects"),
    ("empty-list", [], ValueError, "'graphs' is empty"),
    ("list-of-strings", ["a", "b"], TypeError, "graph 0 is a str, not a torch_geometric.data.Data"),
    ("list-with-none", [graph(), None], TypeError, "graph 1 is a NoneType, not a torch_geometric.data.Data"),
    ("no-x", [graph(x=None)], ValueError, "graph 0 has no 'x': KONG needs node labels"),
    ("empty-graph", [graph(), Data(x=torch.zeros(0, dtype=torch.long), edge_index=torch.zeros(2, 0,
        dtype=torch.long))],
     ValueError, "graph 1 is empty"),
    ("float-x", [graph(x=torch.rand(3, 2))], TypeError,
     "'x' holds floating-point values that are not one-hot"),
    ("negative-x", [graph(x=torch.tensor([0, -1, 2]))], ValueError, "'x' holds negative labels"),
    ("edge-index-float", [graph(edge_index=E3.float())], TypeError, EDGE_DTYPE),
    ("edge-into-other-graph", [graph(edge_index=torch.tensor([[1, 4], [0, 0]])), graph()], ValueError,
     "graph 0: 'edge_index' holds node indices outside \\[0, 3\\)"),
    ("edge-negative", [graph(edge_index=torch.tensor([[-1, 2], [0, 0]]))], ValueError,
     "graph 0: 'edge_index' holds node indices outside \\[0, 3\\)"),
    ("edge-attr-rows", [graph(edge_attr=torch.tensor([1, 2, 3]))], ValueError,
     "'edge_attr' has 3 rows, expected 2"),
    ("edge-order-nan", [graph(edge_order=torch.tensor([0.0, float("nan")]))], ValueError,
     "'edge_order' holds NaN"),
    ("edge-order-length", [graph(edge_order=torch.tensor([0.0]))], ValueError,
     "graph 0: 'edge_order' has 1 rows, expected 2"),
    # rows too many in one graph and too few in the next: the joined rows match, the graphs do not
    ("edge-attr-rows-shifted", [graph(edge_attr=torch.tensor([0, 1, 2])), graph(edge_attr=torch.tensor([3]))],
     ValueError, "graph 0: 'edge_attr' has 3 rows, expected 2 \\(one per edge of the graph\\)"),
    ("edge-order-rows-shifted",
     [graph(edge_order=torch.tensor([1, 0, 5])), graph(edge_order=torch.tensor([7]))], ValueError,
     "graph 0: 'edge_order' has 3 rows, expected 2"),
    ("edge-order-list", [graph(edge_order=[0, 1])], TypeError, "graph 0: 'edge_order' must be a tensor"),
    # float rows that are not one-hot beside integer rows: refused as alone, naming the graph
    ("x-float-not-one-hot-beside-int", [graph(x=torch.tensor([[0.5, 0.5], [0, 1], [1, 0]])),
                                        graph(x=torch.tensor([[2, 0], [0, 1], [1, 1]]))], TypeError,
     "graph 0: 'x' holds floating-point values that are not one-hot rows"),
    ("sparse-adj-t", [Data(x=X3, adj_t=sparse_adj())], TypeError,
     "graph 0 has a sparse adjacency 'adj_t' and no 'edge_index'"),
    ("mixed-edge-attr", [graph(edge_attr=torch.tensor([0, 1])), graph()], ValueError,
     "graph 1 has no 'edge_attr' but others have one"),
    # a label error in a batch names the graph (found by halving: not the first one, nor the last)
    ("negative-x-in-graph-5",
     [graph() for _ in range(5)] + [graph(x=torch.tensor([0, 1, -2]))] + [graph()] * 3,
     ValueError, r"graph 5: 'x' holds negative labels \(-2\)"),
    ("edge-attr-not-one-hot-in-graph-2",
     [graph(edge_attr=torch.eye(2)) for _ in range(2)]
     + [graph(edge_attr=torch.tensor([[1.0, 0], [0.5, 0.5]])), graph(edge_attr=torch.eye(2))], TypeError,
     "graph 2: 'edge_attr' holds floating-point values that are not one-hot rows"),
]:
    case(f"vectorizer-fit-{id}", lambda tmp, g=graphs: KongVectorizer(k=2, hops=1).fit(g), error, match)

for id, kwargs, error, match in [
    ("batch-size-zero", dict(batch_size=0), ValueError, "'batch_size' must be >= 1"),
    ("batch-size-float", dict(batch_size=2.5), TypeError, "'batch_size' must be an integer"),
    ("k-zero", dict(k=0), ValueError, "'k' must be >= 1"),
    ("dim-zero", dict(dim=0), ValueError, "'dim' must be >= 1"),
    ("kernel", dict(kernel="rbf"), ValueError, "'kernel' must be one of"),
    ("config-dict", dict(config={"k": 2}), TypeError, "'config' must be a KongConfig"),
    ("config-and-options", dict(k=3, config=KongConfig()), ValueError, "KongVectorizer got both 'config'"),
    ("device-nonsense", dict(device="gpu7"), ValueError,
     "'device' must be a device string such as 'cpu' or 'cuda:0' \\(got 'gpu7'\\)"),
    ("device-int-list", dict(device=[0]), TypeError, "'device' must be a torch.device, a device string"),
    ("edge-order-attr-int", dict(edge_order_attr=5), TypeError,
     "'edge_order_attr' must be a non-empty string or None"),
    ("normalize-string", dict(normalize="yes"), TypeError, "'normalize' must be True or False"),
]:
    case(f"vectorizer-options-{id}", lambda tmp, kw=kwargs: KongVectorizer(**kw).fit([graph()]), error,
        match)


def _transform_unfitted(tmp):
    return KongVectorizer().transform([graph()])


from sklearn.exceptions import NotFittedError  # noqa: E402

case("vectorizer-transform-unfitted", _transform_unfitted, NotFittedError, "not fitted yet")
case("vectorizer-transform-bad-graph",
     lambda tmp: KongVectorizer(k=2).fit([graph()]).transform([graph(x=torch.rand(3, 2))]),
     TypeError, "'x' holds floating-point values")
case("vectorizer-transform-empty", lambda tmp: KongVectorizer(k=2).fit([graph()]).transform([]), ValueError,
     "'graphs' is empty")
DENSE = Data(x=complete(50)[0], edge_index=complete(50)[1])
DENSE_50_LABELS = Data(x=torch.arange(50), edge_index=complete(50)[1])
EMPTY = Data(x=torch.zeros(0, dtype=torch.long), edge_index=torch.zeros(2, 0, dtype=torch.long))

case("vectorizer-exact-too-large",
     lambda tmp: KongVectorizer(degree=3, hops=30).fit_transform([DENSE_50_LABELS]), ValueError,
     "would hold about .*use a sketch")
case("vectorizer-overflow", lambda tmp: KongVectorizer(hops=200).fit_transform([DENSE]),
     ValueError, "overflowed float64.*hops=200")
case("vectorizer-batch-with-an-empty-graph",
     lambda tmp: KongVectorizer().fit(Batch.from_data_list([graph(), EMPTY])), ValueError, "graph 1 is empty")

# ---------------------------------------------------------------------------
# KongFeatures (a transform)
# ---------------------------------------------------------------------------

for id, kwargs, error, match in [
    ("level", dict(level="edge"), ValueError, "'level' must be one of \\['node', 'graph', 'both'\\]"),
    ("attr-name-empty", dict(attr_name=""), TypeError,
     "'attr_name' must be a non-empty string for the node features"),
    ("attr-name-int", dict(attr_name=3), TypeError,
     "'attr_name' must be a non-empty string for the node features"),
    ("attr-name-both-single", dict(level="both", attr_name="z"), ValueError,
     "level='both' needs 'attr_name' as a pair"),
    ("attr-name-both-same", dict(level="both", attr_name=("z", "z")), ValueError,
     "'attr_name' gives node and graph features the same name 'z'"),
    ("normalize-node-level", dict(normalize=True), ValueError, "'normalize' L2-normalizes graph features"),
    ("edge-order-attr-empty", dict(edge_order_attr=""), TypeError,
     "'edge_order_attr' must be a non-empty string or None"),
    ("dtype-int", dict(dtype=torch.int32), TypeError, "'dtype' must be a floating-point torch.dtype"),
    ("dim-none", dict(dim=None), ValueError, "computes sketches"),
    ("k-float", dict(k=2.0), TypeError, "'k' must be an integer"),
]:
    case(f"features-options-{id}", lambda tmp, kw=kwargs: KongFeatures(**kw), error, match)

F = KongFeatures(k=2, hops=1, dim=8)
for id, data, error, match in [
    ("not-data", {"x": X3}, TypeError,
     "KongFeatures expects a torch_geometric.data.Data object \\(got dict\\)"),
    ("tensor", X3, TypeError, "KongFeatures expects a torch_geometric.data.Data object \\(got Tensor\\)"),
    ("no-x", Data(edge_index=E3, num_nodes=3), ValueError, "the graph has no 'x': KONG needs node labels"),
    ("float-x", graph(x=torch.rand(3, 5)), TypeError, "'x' holds floating-point values that are not one-hot"),
    ("edge-out-of-range", graph(edge_index=torch.tensor([[1, 7], [0, 0]])), ValueError,
     "'edge_index' holds node index 7 but there are only 3 nodes"),
    ("edge-order-nan", graph(edge_order=torch.tensor([float("nan"), 1.0])), ValueError,
     "'edge_order' holds NaN"),
    ("empty", Data(x=torch.zeros(0, dtype=torch.long), edge_index=torch.zeros(2, 0, dtype=torch.long)),
     ValueError, "the graph is empty"),
]:
    case(f"features-call-{id}", lambda tmp, d=data: F(d), error, match)

case("features-call-sparse-adj-t",
     lambda tmp: KongFeatures(k=2, dim=8, level="graph")(Data(x=X3, adj_t=sparse_adj())), TypeError,
     "sparse adjacency \\('adj_t'.*no neighbor order, which k=2 reads")
case("features-overflow-float32", lambda tmp: KongFeatures(hops=30, dim=16, level="graph")(DENSE),
     ValueError, "beyond the range of torch.float32")

# ---------------------------------------------------------------------------
# KongStream (constructor, update, fit, save/load, merge)
# ---------------------------------------------------------------------------


for id, kwargs, error, match in [
    ("k-zero", dict(k=0), ValueError, "'k' must be >= 1"),
    ("dim-zero", dict(dim=0), ValueError, "'dim' must be >= 1"),
    ("dim-none", dict(dim=None), ValueError, "KongStream always sketches: 'dim' must be a sketch size"),
    ("kernel", dict(kernel="rbf"), ValueError, "'kernel' must be one of"),
    ("traversal", dict(traversal="dfs"), ValueError, "'traversal' must be one of"),
    ("const-nan", dict(const=float("nan")), ValueError, "'const' must be >= 0.0 and finite"),
    ("dtype-int", dict(dtype=torch.int64), TypeError, "'dtype' must be torch.float64 or torch.float32"),
    ("blended-string", dict(blended="no"), TypeError, "'blended' must be True or False"),
    ("undirected-string", dict(undirected="no"), TypeError, "'undirected' must be True or False"),
]:
    case(f"stream-init-{id}", lambda tmp, kw=kwargs: KongStream(**kw), error, match)

KS_ARGS = dict(src=[0, 1], src_type=[0, 1], dst=[1, 2], dst_type=[1, 2], edge_type=[0, 0], graph=[0, 0])


def stream_update(**changes):
    def run(tmp):
        args = dict(KS_ARGS)
        args.update(changes)
        return KongStream(k=2, dim=8).update(**args)

    return run


for id, changes, error, match in [
    ("dst-length", dict(dst=[1]), ValueError, "'dst' has 1 entries but 'src' has 2"),
    ("graph-length", dict(graph=[0, 0, 0]), ValueError, "'graph' has 3 entries but 'src' has 2"),
    ("types-length", dict(src_type=[0]), ValueError, "'src_type' and 'dst_type' must have 2 entries"),
    ("edge-type-missing", dict(edge_type=None), ValueError, "'edge_type' is needed when edge_labels=True"),
    ("edge-type-length", dict(edge_type=[0]), ValueError, "'edge_type' has 1 entries but 'src' has 2"),
    ("type-negative", dict(src_type=[0, -1]), ValueError, "src_type"),
    ("type-float", dict(src_type=np.array([0.5, 1.0])), TypeError, "src_type"),
    ("type-nan", dict(dst_type=np.array([np.nan, 1.0])), TypeError, "dst_type"),
    ("type-huge", dict(src_type=[0, 2 ** 60]), ValueError, "src_type"),
    ("src-2d", dict(src=np.zeros((2, 2), dtype=np.int64)), ValueError, "'src'"),
    ("src-float", dict(src=np.array([0.5, 1.0])), TypeError, "'src'"),
    ("src-none", dict(src=None), TypeError, "'src'"),
    ("src-int", dict(src=5), TypeError, "'src'"),
]:
    case(f"stream-update-{id}", stream_update(**changes), error, match)


def stream_fit(source_fn, k=2, **kwargs):
    def run(tmp):
        files(tmp)
        src = source_fn(tmp)
        kw = {k: (str(v).format(tmp=tmp) if isinstance(v, str) else v) for k, v in kwargs.items()}
        return KongStream(k=k, dim=16).fit(src, **kw)

    return run


for id, source, kwargs, error, match, xfail in [
    ("chunk-size-zero", stream_of, dict(chunk_size=0), ValueError, "'chunk_size' must be >= 1", None),
    ("checkpoint-every-zero", stream_of, dict(checkpoint_every=0), ValueError,
     "'checkpoint_every' must be >= 1", None),
    ("source-int", lambda tmp: 42, {}, TypeError, "'source' must be an EdgeStream .*\\(got int\\)", None),
    ("source-string", lambda tmp: "s.tsv", {}, TypeError, "'source' must hold edges, not name a file", None),
    ("source-read-streamspot-whole", lambda tmp: (stream_of(tmp), [], 0), {}, TypeError,
     "'source' is what read_streamspot returns.*read_streamspot\\(path\\)\\[0\\]", None),
    ("checkpoint-garbage", stream_of, dict(checkpoint="{tmp}/garbage.ckpt"), ValueError, "garbage.ckpt",
     None),
    ("checkpoint-text", stream_of, dict(checkpoint="{tmp}/text.ckpt"), ValueError, "text.ckpt", None),
    ("checkpoint-truncated", stream_of, dict(checkpoint="{tmp}/truncated.ckpt"), ValueError, "truncated.ckpt",
     None),
    ("checkpoint-empty", stream_of, dict(checkpoint="{tmp}/empty.ckpt"), ValueError, "empty.ckpt", None),
    ("checkpoint-foreign", stream_of, dict(checkpoint="{tmp}/foreign.ckpt"), ValueError,
     "foreign.ckpt: not a KongStream checkpoint .a torch.save file of a dict without", None),
    ("checkpoint-list", stream_of, dict(checkpoint="{tmp}/list.ckpt"), ValueError, "state|checkpoint", None),
    ("checkpoint-folder", stream_of, dict(checkpoint="{tmp}/adir"), IsADirectoryError,
     "Is a directory: .*adir", None),
]:
    case(f"stream-fit-{id}", stream_fit(source, **kwargs), error, match, xfail)
case("stream-fit-checkpoint-other-config", stream_fit(stream_of, k=3, checkpoint="{tmp}/k2.ckpt"), ValueError,
     "the state was made with other options \\(saved, current\\): \\{'k': \\(2, 3\\)\\}")


def stream_load(name):
    def run(tmp):
        files(tmp)
        return KongStream.load(tmp / name)

    return run


for id, name, error, match, xfail in [
    ("missing", "missing.ckpt", FileNotFoundError, "missing.ckpt", None),
    ("folder", "adir", IsADirectoryError, "Is a directory: .*adir", None),
    ("garbage", "garbage.ckpt", ValueError, "garbage.ckpt",
     None),
    ("truncated", "truncated.ckpt", ValueError, "truncated.ckpt",
     None),
    ("empty", "empty.ckpt", ValueError, "empty.ckpt", None),
    ("foreign", "foreign.ckpt", ValueError, "state|checkpoint", None),
]:
    case(f"stream-load-{id}", stream_load(name), error, match, xfail)

case("stream-load-state-dict-empty", lambda tmp: KongStream().load_state_dict({}), ValueError,
     "not a KongStream state: the dict has no .version.")
case("stream-merge-different-config", lambda tmp: KongStream(k=2, dim=8).merge(KongStream(k=3, dim=8)),
    ValueError,
     "k|config|option")
for id, vals, shape, idx, error, match in [
    ("huge-count", torch.tensor([1e12, 1.0]), (3, 3), [[0, 0], [1, 2]], ValueError,
     "edges of the sparse adjacency \\(an entry of value w is w parallel edges\\) needs"),
    ("three-dims", torch.ones(2), (3, 3, 3), [[0, 0], [1, 2], [0, 0]], ValueError,
     "the sparse adjacency must be \\[3, 3\\] \\(got \\[3, 3, 3\\]\\)"),
    ("complex", torch.tensor([1 + 0j, 1 + 0j]), (3, 3), [[0, 0], [1, 2]], TypeError,
     "the sparse adjacency must hold one real count per entry"),
]:
    case(f"sketch-sparse-adjacency-{id}",
         lambda tmp, v=vals, s=shape, i=idx: KongSketch(k=1, dim=4)(
             X3, torch.sparse_coo_tensor(torch.tensor(i), v, s)), error, match)
case("stream-save-where-no-file-can-be-made", lambda tmp: KongStream(dim=4).save("/proc/kong.ckpt"), OSError,
     "cannot write '/proc/kong.ckpt': .* \\(making a temporary file in '/proc'\\)")
for id, kw, error, match in [  # (empty ranges once left some labels uninitialised memory)
    ("no-events", dict(events=(0, 0)), ValueError, "'events\\[0\\]' must be >= 1"),
    ("no-processes", dict(processes=(0, 2)), ValueError, "'processes\\[0\\]' must be >= 1"),
    ("events-reversed", dict(events=(5, 1)), ValueError, "'events' must be a range .* with low <= high"),
    ("negative-graphs", dict(num_graphs=-1), ValueError, "'num_graphs' must be >= 0"),
    ("no-object-types", dict(num_object_types=0), ValueError, "'num_object_types' must be >= 1"),
    ("noise-above-1", dict(noise=2.0), ValueError, "'noise' is a probability"),
    # (random.Random(-7) is random.Random(7): seed -7 repeated seed 7's stream)
    ("negative-seed", dict(seed=-7), ValueError, "'seed' must be >= 0 \\(got -7\\)"),
    # (a hang growing without bound, or a bare MemoryError after minutes)
    ("huge-count", dict(num_graphs=2**70), ValueError, "the stream's events \\(at most .*'num_graphs' "),
    ("huge-sessions", dict(num_graphs=4, events=(10**12, 10**12)), ValueError,
     "the stream's events .*'events' up to 1,000,000,000,000\\) needs"),
]:
    case(f"synthetic-event-stream-{id}",
         lambda tmp, kw=kw: synthetic_event_stream(**kw),
         error, match)
for id, lab, error, match in [  # (KeyError, IndexError, AttributeError or silent truncation before)
    ("dict-missing", lambda es: {es.graph_ids[0]: 1}, ValueError, r"'labels' has no label for graph id\(s\)"),
    ("short", lambda es: torch.tensor([0, 1]), ValueError, "'labels' must hold one label per graph: 4"),
    ("long", lambda es: [0, 1, 0, 1, 1], ValueError, "'labels' must hold one label per graph: 4"),
    ("string", lambda es: "x", TypeError, "'labels' must be a tensor, an array, a sequence or a dict"),
]:
    case(f"stream-to-graphs-labels-{id}",
         lambda tmp, lab=lab: (lambda es: stream_to_graphs(es, lab(es)))(synthetic_event_stream(4)[0]),
         error, match)
case("stream-to-graphs-not-a-stream", lambda tmp: stream_to_graphs("x"), TypeError,
     "'stream' must be an EdgeStream")
def _utf16_stream(tmp: Path) -> Path:
    path = tmp / "u16.tsv"
    path.write_bytes("0\ta\t1\tb\te\tg\n2\ta\t3\tb\te\tg\n".encode("utf-16"))  # (with its BOM)
    return path


case("read-streamspot-utf16", lambda tmp: read_streamspot(_utf16_stream(tmp)), ValueError,
     "the stream is UTF-16 or UTF-32 text")  # (garbage ids with NULs before)
case("cli-stream-utf16",
     lambda tmp: (_utf16_stream(tmp), cli("stream", "{tmp}/u16.tsv", "-q", "-o", "{tmp}/f")(tmp)),
     CommandFailed, "exit 2: .*UTF-16 or UTF-32 text .* convert it first")
for id, y in [("list", [1, "1", 0, "0"]), ("tuple", ("a", 2)), ("objects", np.array([1, "1"], dtype=object))]:
    case(f"class-labels-mixed-{id}", lambda tmp, y=y: class_labels(y), ValueError,
         "strings mixed with other values")  # (a list merged 1 and '1' into one class)
case("class-labels-bools-and-numbers", lambda tmp: class_labels([1, 1.0, True, 0, False, 0.0]), ValueError,
     "booleans mixed with other values")  # (True and 1 were one class)
case("stream-fit-chunk-of-scalars", lambda tmp: KongStream(dim=4).fit([[1, 0, 2, 0, 0, 0]]), TypeError,
     "a chunk's columns are sequences .*'src' is of type int")
case("stream-merge-not-a-stream", lambda tmp: KongStream().merge("x"), TypeError,
     "merge_streams\\(\\) and KongStream.merge\\(\\) take KongStream objects \\(got ")

# ---------------------------------------------------------------------------
# data sets
# ---------------------------------------------------------------------------


def tu(name="T", **parts):
    def run(tmp):
        from kong_pyg.datasets import load_tu

        return load_tu(name, tu_folder(tmp, **parts), cache=tmp / "cache")

    return run


def load_tu_call(*args, **kwargs):
    def run(tmp):
        from kong_pyg.datasets import load_tu

        files(tmp)
        a = [str(x).format(tmp=tmp) if isinstance(x, str) else x for x in args]
        return load_tu(*a, cache=tmp / "cache", **kwargs)

    return run


for id, call, error, match in [
    ("name-int", load_tu_call(5), ValueError, "'dataset' must be a TU data set name"),
    ("name-path", load_tu_call("../etc"), ValueError, "'dataset' must be a TU data set name"),
    ("name-unknown", load_tu_call("NOPE"), ValueError, "unknown data set 'NOPE'.*only MUTAG is bundled"),
    ("name-case", load_tu_call("mutag"), ValueError, "did you mean 'MUTAG'\\? names are case-sensitive"),
    ("data-root-missing", load_tu_call("T", "{tmp}/nowhere"), FileNotFoundError,
     "'data_root' .*nowhere' is not a folder"),
    ("data-root-file", load_tu_call("T", "{tmp}/a.txt"), FileNotFoundError, "is not a folder"),
    ("data-root-without-name", load_tu_call("T", "{tmp}/adir"), ValueError,
     "unknown data set 'T' in .*holds no NAME/raw folders"),
    ("edge-to-missing-node", tu(A="1,2\n2,9\n"), ValueError,
     "T_A.txt, line 2: edge 2, 9 names a node that does not exist"),
    ("empty-A", tu(A=""), ValueError, "T_A.txt: is empty"),
    ("short-indicator", tu(graph_indicator="1\n1\n1\n2\n2\n"), ValueError,
     "T_A.txt, line 5: edge 5, 6 names a node"),
    ("non-number", tu(A="1,2\n2,x\n"), ValueError, "T_A.txt, line 2: 'x' is not a number"),
    ("wrong-columns", tu(A="1,2\n2,3,1\n"), ValueError, "T_A.txt, line 2: 3 comma-separated value"),
    ("labels-rows", tu(node_labels="0\n1\n"), ValueError,
     "T_node_labels.txt: 2 line\\(s\\), but the data set has 6 nodes"),
    ("graph-labels-missing", tu(graph_labels=None), FileNotFoundError,
     "lacks the raw file\\(s\\) T_graph_labels.txt"),
    ("graph-ids-gap", tu(graph_indicator="1\n1\n1\n3\n3\n3\n"), ValueError,
     "T_graph_indicator.txt, line 4: graph id 3 follows 1"),
    ("edge-across-graphs", tu(A="1,2\n3,4\n"), ValueError,
     "T_A.txt, line 2: edge 3, 4 joins graph 1 and graph 2"),
    # coalescing summed the two one-hot labels into a row of 2s: "'edge_attr' holds ... not one-hot rows"
    ("edge-repeated-with-labels",
     tu(A="1,2\n2,3\n3,1\n4,5\n5,6\n6,4\n2,3\n", edge_labels="0\n1\n0\n0\n1\n0\n1\n"), ValueError,
     "T_A.txt, line 7: edge 2, 3 is listed again \\(first on line 2\\); with edge labels .*remove one"),
]:
    case(f"load-tu-{id}", call, error, match)


def movielens(**kwargs):
    def run(tmp):
        from kong_pyg.datasets import MovieLensOrdered

        kw = {k: (str(v).format(tmp=tmp) if isinstance(v, str) else v) for k, v in kwargs.items()}
        if kw.pop("fake", False):
            kw["ml_dir"] = str(ml_folder(tmp, kw.pop("extra_lines", ())))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return MovieLensOrdered(kw.pop("root", str(tmp / "root")), **kw)

    return run


for id, kwargs, error, match, xfail in [
    ("genre", dict(genre="all"), ValueError, "'genre' must be one of \\['single', 'first'\\]", None),
    ("root-none", dict(root=None), ValueError, "'root' is required", None),
    ("ml-dir-missing-files", dict(ml_dir="{tmp}"), FileNotFoundError, "lacks the MovieLens-100k file\\(s\\)",
        None),
    ("ml-dir-nonexistent", dict(ml_dir="{tmp}/nowhere"), FileNotFoundError, "nowhere", None),
    ("malformed-u-data", dict(fake=True, extra_lines=["1\t2\tthree\t4\n"]), ValueError,
     "u.data, line 121: expected integers", None),
    ("short-u-data-line", dict(fake=True, extra_lines=["1\t2\n"]), ValueError,
     "u.data, line 121: expected 4 tab-separated fields", None),
    ("max-graphs-zero", dict(fake=True, max_graphs=0), ValueError, "'max_graphs' must be a positive integer",
        None),
    ("max-graphs-float", dict(fake=True, max_graphs=2.5), ValueError,
     "'max_graphs' must be a positive integer", None),
    ("seed-string", dict(fake=True, seed="x"), TypeError, "'seed' must be an integer", None),
    ("seed-float", dict(fake=True, seed=1.5), TypeError, "'seed' must be an integer", None),
]:
    case(f"movielens-{id}", movielens(**kwargs), error, match, xfail)


def interactions(**changes):
    def run(tmp):
        from kong_pyg.datasets import InteractionGraphs

        args = dict(user=torch.tensor([0, 1, 0]), item=torch.tensor([0, 0, 1]), time=torch.tensor([5, 3, 9]),
                    user_label=torch.tensor([0, 1]), item_label=torch.tensor([0, 1]), y=torch.tensor([0, 1]))
        args.update(changes)
        return InteractionGraphs(**args)

    return run


for id, changes, error, match in [
    ("user-float", dict(user=torch.tensor([0.0, 1.0, 0.0])), TypeError, "'user' must hold integers"),
    ("user-bool", dict(user=[True, False, True]), TypeError, r"'user' must hold integers \(got torch.bool\)"),
    ("item-bool", dict(item=np.array([True, False, True])), TypeError, "'item' must hold integers"),
    ("user-2d", dict(user=torch.zeros(3, 1, dtype=torch.long)), ValueError, "'user' must be a 1-D tensor"),
    ("user-negative", dict(user=torch.tensor([0, -1, 0])), ValueError, "'user' holds negative values"),
    ("user-out-of-range", dict(user=torch.tensor([0, 5, 0])), ValueError,
     "'user' holds id 5, but 'user_label' has only 2 rows"),
    ("item-out-of-range", dict(item=torch.tensor([0, 0, 9])), ValueError,
     "'item' holds id 9, but 'item_label' has only 2 rows"),
    ("item-length", dict(item=torch.tensor([0, 0])), ValueError, "'item' has 2 entries, 'user' has 3"),
    ("time-nan", dict(time=torch.tensor([1.0, float("nan"), 2.0])), ValueError, "'time' holds NaN values"),
    ("time-bool", dict(time=torch.tensor([True, False, True])), TypeError,
     "'time' must be a real-valued tensor"),
    ("time-length", dict(time=torch.tensor([1, 2])), ValueError, "'time' has 2 entries, 'user' has 3"),
    ("rating-length", dict(rating=torch.tensor([1])), ValueError,
     "'rating' must be a 1-D tensor with 3 entries"),
    ("y-length", dict(y=torch.tensor([0])), ValueError, "'y' must have shape \\[2\\]"),
    ("user-label-negative", dict(user_label=torch.tensor([0, -1])), ValueError, "user_label"),
    ("item-label-float", dict(item_label=torch.tensor([0.5, 1.0])), TypeError, "item_label"),
    ("max-graphs-zero", dict(max_graphs=0), ValueError, "'max_graphs' must be a positive integer or None"),
    ("balance-without-y", dict(y=None, balance=True), ValueError, "'balance=True' needs class labels 'y'"),
]:
    case(f"interactions-{id}", interactions(**changes), error, match)


def streamspot_graphs(source, **kwargs):
    def run(tmp):
        from kong_pyg.datasets import StreamSpotGraphs

        files(tmp)
        src = source(tmp) if callable(source) else source
        kw = {k: (v(tmp) if callable(v) else v) for k, v in kwargs.items()}
        return StreamSpotGraphs(src, **kw)

    return run


for id, source, kwargs, error, match, xfail in [
    ("empty", [], {}, ValueError, "the stream has no edges", None),
    ("only-malformed", ["a\tb\n"], {}, ValueError, "the stream has no edges", None),
    ("strict-malformed", ["1\ta\t2\tb\tc\t0\n", "bad line\n"], dict(strict=True), ValueError, "line 2", None),
    ("labels-missing", lambda tmp: str(tmp / "s.tsv"), dict(labels={"0": 1}), ValueError,
     "'labels' has no label for graph id\\(s\\)", None),
    ("labels-length", lambda tmp: str(tmp / "s.tsv"), dict(labels=torch.tensor([0, 1])), ValueError,
     "'labels' must hold one label per graph: 4 \\(got 2\\)", None),
    ("missing-file", lambda tmp: str(tmp / "missing.tsv"), {}, FileNotFoundError, "missing.tsv", None),
    ("folder", lambda tmp: str(tmp / "adir"), {}, IsADirectoryError, "adir", None),
    ("labels-file-malformed", lambda tmp: str(tmp / "s.tsv"), dict(labels=lambda tmp: str(tmp / "a.txt")),
     ValueError, "labels line 1: expected 'graph-id label'", None),
    ("labels-file-missing", lambda tmp: str(tmp / "s.tsv"), dict(labels=lambda tmp: str(tmp / "nope.txt")),
     FileNotFoundError, "nope.txt", None),
]:
    case(f"streamspot-graphs-{id}", streamspot_graphs(source, **kwargs), error, match, xfail)


def read_ss(source, **kwargs):
    def run(tmp):
        from kong_pyg.datasets import read_streamspot

        files(tmp)
        return read_streamspot(source(tmp) if callable(source) else source, **kwargs)

    return run


case("read-streamspot-strict", read_ss(["1\ta\t2\tb\tc\n"], strict=True), ValueError, "line 1")
case("read-streamspot-missing", read_ss(lambda tmp: str(tmp / "missing.tsv")), FileNotFoundError,
    "missing.tsv")
case("read-streamspot-folder", read_ss(lambda tmp: str(tmp / "adir")), IsADirectoryError, "adir")
case("read-graph-labels-bad", lambda tmp: __import__("kong_pyg.datasets",
    fromlist=["x"]).read_graph_labels(["g1 x\n"]),
     ValueError, "labels line 1: expected 'graph-id label' \\(integer label\\)")

# ---------------------------------------------------------------------------
# evaluation and the string oracle (public names of kong_pyg)
# ---------------------------------------------------------------------------

Y12 = np.array([0, 1] * 6)


def _cv(features, y=Y12):
    from kong_pyg import cross_validate

    return lambda tmp: cross_validate(features, y, folds=2, repeats=1, inner_folds=2)


def _splits():
    from kong_pyg.evaluation import splits

    return splits


def _kong(name):
    import kong_pyg

    return getattr(kong_pyg, name)


for id, call, error, match, xfail in [
    ("classify-method", lambda tmp: _kong("classify")("MUTAG", method="gin"), ValueError,
     "'method' must be one of \\['kong', 'kong-mean', 'wl', 'wl-grakel', 'sp', 'kw'\\] \\(got 'gin'\\)",
     None),
    ("classify-protocol", lambda tmp: _kong("classify")("MUTAG", protocol="best"), ValueError,
     "'protocol' must be one of \\['paper', 'nested', 'both'\\]", None),
    ("classify-repeats-zero", lambda tmp: _kong("classify")("MUTAG", repeats=0), ValueError,
     "'repeats' must be >= 1", None),
    ("classify-folds-one", lambda tmp: _kong("classify")("MUTAG", folds=1), ValueError,
        "'folds' must be >= 2", None),
    ("classify-C-negative", lambda tmp: _kong("classify")("MUTAG", C=[-1]), ValueError,
     "'C' must be positive numbers", None),
    ("classify-C-empty", lambda tmp: _kong("classify")("MUTAG", C=[]), ValueError,
        "'C' must be positive numbers",
     None),
    ("classify-n-jobs-zero", lambda tmp: _kong("classify")("MUTAG", n_jobs=0), ValueError,
        "'n_jobs' must be >= 1",
     None),
    ("classify-unknown-grid-option", lambda tmp: _kong("classify")("MUTAG", grid={"kk": [1]}), ValueError,
     "unknown setting 'kk' for method 'kong'", None),
    ("classify-one-class", lambda tmp: _kong("classify")([graph(y=torch.tensor([0]))] * 3), ValueError,
     "the graphs have a single class; classification needs at least two", None),
    ("classify-data-root-with-graphs", lambda tmp: _kong("classify")([graph()], data_root="x"), ValueError,
     "'data_root' only applies when 'dataset' is a name", None),
    ("classify-empty-list", lambda tmp: _kong("classify")([]), ValueError,
     "'dataset' is empty: no graphs to classify", None),
    ("expand-grid-method", lambda tmp: _kong("expand_grid")("gin"), ValueError, "'method' must be one of",
        None),
    ("expand-grid-bad-value", lambda tmp: _kong("expand_grid")("kong", {"k": [0]}), ValueError,
        "'k' must be >= 1",
     None),
    ("paper-grid-method", lambda tmp: _kong("paper_grid")("gin"), ValueError, "'method' must be one of",
        None),
    ("sketch-curve-size-zero", lambda tmp: _kong("sketch_curve")("MUTAG", {"k": 1}, sizes=[0], repeats=1),
     ValueError, "'sizes' must be >= 1 \\(got 0\\)", None),
    ("cross-validate-empty", lambda tmp: _kong("cross_validate")([], Y12), ValueError, "'features' is empty",
        None),
    ("cross-validate-rows", _cv([np.zeros((10, 2))]), ValueError,
        "features of setting 0 have 10 rows, y has 12",
     None),
    ("cross-validate-nan", _cv([np.where(np.eye(12, 2) > 0, np.nan, 1.0)]), ValueError,
     "the features contain NaN", None),
    ("cross-validate-inf", _cv([np.where(np.eye(12, 2) > 0, np.inf, 1.0)]), ValueError,
     "the features contain infinity", None),
    ("design-matrix-project-unknown",
     lambda tmp: __import__("kong_pyg.evaluation.features").evaluation.features.design_matrix(np.eye(3),
                                                                                             "yes"),
     ValueError, "'project' must be True, False or 'auto' \\(got 'yes'\\)", None),
    ("cross-validate-continuous-y", _cv([np.zeros((12, 2))], Y12 + 0.5), ValueError,
     "'y' must be class labels .*supported target types are: \\('binary', 'multiclass'\\)", None),
    ("cross-validate-2d-y", _cv([np.zeros((12, 2))], np.stack([Y12, Y12], 1)), ValueError,
     "'y' must be one class label per graph, a 1-D array", None),
    ("cross-validate-object-float-y", _cv([np.zeros((12, 2))], np.array(list(Y12 + 0.5), dtype=object)),
     ValueError, "'y' must be class labels .*not continuous values", None),
    ("cross-validate-complex-y", _cv([np.zeros((12, 2))], Y12 + 0j), ValueError,
     "'y' must be class labels .*not continuous values", None),
    ("cross-validate-huge-float-y", _cv([np.zeros((12, 2))], Y12 * 1e20), ValueError,
     "'y' holds floating-point labels of 2\\^53 or more \\(label 1 is 1e\\+20\\)", None),
    ("cross-validate-half-y", _cv([np.zeros((12, 2))], np.where(np.arange(12) == 4, 0.5, Y12)), ValueError,
     "not continuous values \\(label 4 is 0.5\\)", None),
    ("cross-validate-nan-y", _cv([np.zeros((12, 2))], np.where(Y12 > 0, np.nan, 0.0)), ValueError,
     "'y' contains NaN \\(label 1\\)", None),
    ("cross-validate-mixed-y", _cv([np.zeros((12, 2))], np.array([0, "a"] * 6, dtype=object)), ValueError,
     "'y' must be class labels of one kind", None),
    ("cross-validate-seed-float", lambda tmp: _kong("cross_validate")(
        [np.zeros((12, 2))], Y12, folds=2, repeats=1, inner_folds=2, seed=0.5), TypeError,
     "'seed' must be an integer", None),
    ("stratified-folds-too-many", lambda tmp: _splits().stratified_folds(Y12, 13, 0), ValueError,
     "'folds' \\(13\\) is more than the 12 graphs", None),
    ("stratified-folds-one", lambda tmp: _splits().stratified_folds(Y12, 1, 0), ValueError,
     "'folds' must be >= 2", None),
    ("stratified-folds-seed", lambda tmp: _splits().stratified_folds(Y12, 2, 2**32), ValueError,
     "'seed' must be in \\[0, 2\\*\\*32\\)", None),
    ("kong-strings-labels-short", lambda tmp: _kong("kong_strings")(E3, [0, 1], 1), ValueError,
     "'edge_index' must hold node indices in \\[0, 2\\) \\(one entry of 'labels' per node", None),
    ("kong-strings-hops-negative", lambda tmp: _kong("kong_strings")(E3, [0, 1, 2], -1), ValueError,
     "'hops' must be >= 0", None),
    ("kgram-counts-k-zero", lambda tmp: _kong("kgram_counts")(("a", "b"), 0), ValueError,
     "'k' must be >= 1", None),
]:
    case(f"api-{id}", call, error, match, xfail)


# ---------------------------------------------------------------------------
# command lines (in-process; exit 2 and one line)
# ---------------------------------------------------------------------------


def cli_with_files(*argv, setup=None):
    run = cli(*argv)

    def call(tmp):
        files(tmp)
        if setup is not None:
            setup(tmp)
        return run(tmp)

    return call


F_ = CommandFailed
for id, argv, match, setup, xfail in [
    # classify
    ("classify-unknown-data-set", ["classify", "--dataset", "NOPE", "--cache-dir", "{tmp}/c"],
     "exit 2: kong-pyg classify: error: unknown data set 'NOPE'", None, None),
    ("classify-data-root-missing", ["classify", "--dataset", "T", "--data-root", "{tmp}/nowhere"],
     "exit 2: .*no such folder", None, None),
    ("classify-data-root-file", ["classify", "--dataset", "T", "--data-root", "{tmp}/a.txt"],
     "exit 2: .*is a file, not a folder", None, None),
    ("classify-malformed-tu", ["classify", "--dataset", "T", "--data-root", "{tmp}/tu", "--cache-dir",
     "{tmp}/c",
                               "--repeats", "1", "-q"],
     "exit 2: kong-pyg classify: error: .*T_A.txt, line 2: edge 2, 9 names a node",
     lambda tmp: tu_folder(tmp, A="1,2\n2,9\n"), None),
    ("classify-empty-A", ["classify", "--dataset", "T", "--data-root", "{tmp}/tu", "--cache-dir", "{tmp}/c",
     "-q"],
     "exit 2: .*T_A.txt: is empty", lambda tmp: tu_folder(tmp, A=""), None),
    ("classify-k-zero", ["classify", "--k", "0"], "exit 2: .*'k' must be >= 1", None, None),
    ("classify-k-word", ["classify", "--k", "two"], "exit 2: .*argument --k: expects an integer", None, None),
    ("classify-dim-negative", ["classify", "--dim", "-4"], "exit 2: .*'dim' must be >= 1", None, None),
    ("classify-kernel", ["classify", "--kernel", "rbf"], "exit 2: .*'kernel' must be one of", None, None),
    ("classify-const-nan", ["classify", "--const", "nan"], "exit 2: .*'const' must be >= 0.0 and finite",
        None, None),
    ("classify-C-zero", ["classify", "--C", "0"], "exit 2: .*argument --C: must be > 0", None, None),
    ("classify-C-inf", ["classify", "--C", "1,inf"],
     "exit 2: .*argument --C: must be > 0 and finite \\(got inf\\)", None, None),
    ("classify-repeats-zero", ["classify", "--repeats", "0"], "exit 2: .*argument --repeats: must be >= 1",
        None, None),
    ("classify-folds-one", ["classify", "--folds", "1"], "exit 2: .*argument --folds: must be >= 2", None,
        None),
    ("classify-method", ["classify", "--method", "gin"], "exit 2: .*argument --method: invalid choice", None,
        None),
    ("classify-cache-file", ["classify", "--cache-dir", "{tmp}/a.txt"], "exit 2: .*is a file, not a folder",
        None, None),
    ("classify-plot-folder", ["classify", "--plot", "{tmp}/adir"], "exit 2: .*--plot: ", None, None),
    ("classify-plot-unwritable", ["classify", "--plot", "{tmp}/a.txt/x.png"],
     "exit 2: .*cannot create a folder under",
     None, None),

    ("classify-unknown-flag", ["classify", "--nope"], "exit 2: .*unrecognized arguments: --nope", None, None),
    # table2
    ("table2-no-data", ["table2"], "exit 2: .*give --ml-dir", None, None),
    ("table2-resume-empty", ["table2", "--ml-dir", "{tmp}/adir", "--resume", ""],
     "exit 2: .*--resume needs a file name \\(got an empty one\\)", None, None),
    ("table2-splits-huge", ["table2", "--ml-dir", "{tmp}/adir", "--splits", "100000000000"],
     "exit 2: .*argument --splits: must be <= 10,000", None, None),
    ("table2-ml-dir-missing", ["table2", "--ml-dir", "{tmp}/nowhere"], "exit 2: .*no such folder", None,
        None),
    ("table2-ml-dir-file", ["table2", "--ml-dir", "{tmp}/a.txt"], "exit 2: .*is a file, not a folder", None,
        None),
    ("table2-ml-dir-without-files", ["table2", "--ml-dir", "{tmp}/adir", "--out", "{tmp}/o", "-q"],
     "exit 2: .*lacks the MovieLens-100k file\\(s\\)", None, None),
    ("table2-malformed-u-data", ["table2", "--ml-dir", "{tmp}/ml", "--out", "{tmp}/o", "-q", "--splits", "2"],
     "exit 2: .*u.data, line 121: expected integers", lambda tmp: ml_folder(tmp, ["1\t2\tthree\t4\n"]), None),
    ("table2-out-file", ["table2", "--ml-dir", "{tmp}/adir", "--out", "{tmp}/a.txt"],
     "exit 2: .*is a file, not a folder",
     None, None),
    ("table2-out-unwritable", ["table2", "--ml-dir", "{tmp}/adir", "--out", "{tmp}/a.txt/o"],
     "exit 2: .*cannot create a folder under", None, None),
    # the notes file in --out was read after the whole run, and its error named no file
    ("table2-notes-not-utf8", ["table2", "--ml-dir", "{tmp}/ml", "--out", "{tmp}/o", "-q"],
     "exit 2: .*o/table2_notes.md: not UTF-8 text \\(byte 6",
     lambda tmp: (ml_folder(tmp), (tmp / "o").mkdir(),
                  (tmp / "o" / "table2_notes.md").write_bytes(b"notes \xff")), None),
    ("table2-notes-not-utf8-after-a-mark", ["table2", "--ml-dir", "{tmp}/ml", "--out", "{tmp}/o", "-q"],
     "exit 2: .*o/table2_notes.md: not UTF-8 text \\(byte 9",
     lambda tmp: (ml_folder(tmp), (tmp / "o").mkdir(),
                  (tmp / "o" / "table2_notes.md").write_bytes(b"\xef\xbb\xbfnotes \xff")), None),
    ("table2-notes-folder", ["table2", "--ml-dir", "{tmp}/ml", "--out", "{tmp}/o", "-q"],
     "exit 2: .*o/table2_notes.md: a folder",
     lambda tmp: (ml_folder(tmp), (tmp / "o" / "table2_notes.md").mkdir(parents=True)), None),
    ("table2-root-file", ["table2", "--ml-dir", "{tmp}/adir", "--root", "{tmp}/a.txt"],
     "exit 2: .*is a file, not a folder",
     None, None),
    ("table2-methods", ["table2", "--methods", "K-1,K-9"], "exit 2: .*unknown value 'K-9'", None, None),
    ("table2-test-size", ["table2", "--test-size", "0"], "exit 2: .*must be in \\(0, 1\\)", None, None),
    ("table2-splits-one", ["table2", "--splits", "1"], "exit 2: .*must be >= 2", None, None),
    ("table2-fractions", ["table2", "--fractions", "0.5,2"], "exit 2: .*must be in \\(0, 1\\)", None, None),
    ("table2-ties", ["table2", "--ties", "row,time"], "exit 2: .*unknown value 'time'", None, None),
    # a curve fraction too small for the data: before the main table's fits (after them before)
    ("table2-fractions-too-small",
     ["table2", "--ml-dir", "{tmp}/ml", "--out", "{tmp}/o", "-q", "--splits", "2", "--methods", "K-1",
      "--ties", "row", "--curve-splits", "2", "--fractions", "0.01"],
     "exit 2: .*--fractions 0.01 does not fit 20 graphs", ml_folder, None),
    ("table2-C-normalized", ["table2", "--C-normalized", "1,-1"], "exit 2: .*--C-normalized: must be > 0",
        None, None),
    ("table2-resume-folder", ["table2", "--ml-dir", "{tmp}/adir", "--resume", "{tmp}/adir", "--ties", "row"],
     "exit 2: .*--resume: ", lambda tmp: (tmp / "adir-row.json").mkdir(), None),
    ("table2-resume-other-run", ["table2", "--ml-dir", "{tmp}/ml", "--out", "{tmp}/o", "-q", "--splits", "2",
                                 "--ties", "row", "--resume", "{tmp}/r.json", "--curve-splits", "0"],
     "exit 2: .*belongs to another run", lambda tmp: (ml_folder(tmp), (tmp / "r-row.json").write_text(
         '{"protocol": {"n_splits": 99}, "scores": {}, "features": {}}')), None),
    # order-test
    ("order-test-two-inputs", ["order-test", "--provenance", "1", "--dataset", "MUTAG"],
     "exit 2: .*give one input, not --dataset and --provenance", None, None),
    ("order-test-strength", ["order-test", "--provenance", "1.5"], "exit 2: .*must be in \\[0, 1\\]", None,
        None),
    ("order-test-k-one", ["order-test", "--k", "1"], "exit 2: .*argument --k: must be >= 2", None, None),
    ("order-test-splits-one", ["order-test", "--splits", "1"], "exit 2: .*must be >= 2", None, None),
    ("order-test-data-root-alone", ["order-test", "--data-root", "{tmp}/adir"],
     "exit 2: .*--data-root needs --dataset", None, None),
    ("order-test-streamspot-without-labels", ["order-test", "--streamspot", "{tmp}/s.tsv"],
     "exit 2: .*--streamspot FILE and --labels FILE go together", None, None),
    ("order-test-streamspot-missing", ["order-test", "--streamspot", "{tmp}/nope.tsv"],
     "exit 2: .*no such file", None, None),
    ("order-test-ml-dir-file", ["order-test", "--ml-dir", "{tmp}/a.txt"], "exit 2: .*is a file, not a folder",
        None, None),
    ("order-test-ml-dir-without-files", ["order-test", "--ml-dir", "{tmp}/adir", "-q"],
     "exit 2: .*lacks the MovieLens-100k file\\(s\\)", None, None),
    ("order-test-ties-without-ml", ["order-test", "--provenance", "1", "--ties", "authors"],
     "exit 2: .*--ties only apply to --ml-dir", None, None),
    ("order-test-authors-and-own-label", ["order-test", "--authors", "--own-label", "yes"],
     "exit 2: .*--authors means --own-label no", None, None),
    ("order-test-own-label-word", ["order-test", "--own-label", "maybe"], "exit 2: .*expects yes or no", None,
        None),
    # an output over an input: written over, the input is lost
    ("order-test-out-over-input", ["order-test", "--streamspot", "{tmp}/adir/order_test.md", "--labels",
                                   "{tmp}/a.txt", "--out", "{tmp}/adir"],
     "exit 2: .*--streamspot '.*order_test.md' and --out '.*order_test.md' are one file", None, None),
    ("order-test-out-file", ["order-test", "--provenance", "1", "--out", "{tmp}/a.txt"],
     "exit 2: .*is a file, not a folder", None, None),
    ("order-test-out-unwritable", ["order-test", "--provenance", "1", "--out", "{tmp}/a.txt/o"],
     "exit 2: .*cannot create a folder under", None, None),
    ("order-test-unknown-data-set", ["order-test", "--dataset", "NOPE", "--data-root", "{tmp}/adir", "-q"],
     "exit 2: kong-pyg order-test: error: .*NOPE", None, None),
    ("order-test-C-zero", ["order-test", "--C", "0"], "exit 2: .*argument --C: must be > 0", None, None),
    # huge counts: one line naming the option (memory grew without bound, a traceback, or --seed was blamed)
    ("order-test-shuffles-huge", ["order-test", "--shuffles", "99999999999"],
     "exit 2: .*argument --shuffles: must be <= 10,000 \\(got 99,999,999,999\\)", None, None),
    ("order-test-num-graphs-huge", ["order-test", "--num-graphs", "99999999999"],
     "exit 2: .*argument --num-graphs: must be <= 10,000,000", None, None),
    ("order-test-threads-huge", ["order-test", "--threads", "99999999999"],
     "exit 2: .*argument --threads: must be <= 256", None, None),
    ("order-test-splits-huge", ["order-test", "-q", "--splits", "99999999999"],
     "exit 2: .*argument --splits: must be <= 10,000 \\(got 99,999,999,999\\)", None, None),
    ("table2-seed-huge", ["table2", "--seed", "99999999999999999999999"],
     "exit 2: .*argument --seed: must be <= 4,294,967,295", None, None),
    ("stream-workers-huge", ["stream", "{tmp}/s.tsv", "--workers", "99999999999"],
     "exit 2: .*argument --workers: must be <= 1,024", None, None),
    ("classify-repeats-huge", ["classify", "-q", "--repeats", "99999999999"],
     "exit 2: .*--repeats must be <= 1,000", None, None),
    ("order-test-download-alone", ["order-test", "--download", "-q"],
     "exit 2: .*--download needs --dataset NAME", None, None),
    ("classify-data-root-is-the-data-set", ["classify", "--data-root", "{tmp}/tu/T", "--dataset", "T", "-q"],
     "exit 2: .*--data-root is the folder that holds T/raw; .*pass its parent", tu_folder, None),
    # stream
    ("stream-missing-file", ["stream", "{tmp}/missing.tsv"], "exit 2: .*no such file", None, None),
    ("stream-folder", ["stream", "{tmp}/adir"], "exit 2: .*is a folder, not a file", None, None),
    ("stream-k-zero", ["stream", "{tmp}/s.tsv", "--k", "0"], "exit 2: .*'k' must be >= 1", None, None),
    ("stream-dim-exact", ["stream", "{tmp}/s.tsv", "--dim", "exact"],
     "exit 2: .*--dim exact: a stream keeps sketches",
     None, None),
    ("stream-chunk-size-zero", ["stream", "{tmp}/s.tsv", "--chunk-size", "0"], "exit 2: .*must be >= 1",
        None, None),
    ("stream-out-folder", ["stream", "{tmp}/s.tsv", "--out", "{tmp}/adir.npy"],
     "exit 2: .*--out is a file prefix .*not a folder",
     lambda tmp: (tmp / "adir.npy").mkdir(), None),
    ("stream-out-unwritable", ["stream", "{tmp}/s.tsv", "--out", "{tmp}/a.txt/feat"],
     "exit 2: .*cannot create a folder under",
     None, None),
    ("stream-checkpoint-folder", ["stream", "{tmp}/s.tsv", "--checkpoint", "{tmp}/adir", "-q"],
     "exit 2: .*--checkpoint: ",
     None, None),
    # one file named twice: the features were written over the checkpoint (or the input)
    ("stream-checkpoint-is-the-out-file", ["stream", "{tmp}/s.tsv", "--out", "{tmp}/c", "--checkpoint",
                                           "{tmp}/c.npy", "-q"],
     "exit 2: .*--out '.*c.npy' and --checkpoint '.*c.npy' are one file", None, None),
    ("stream-checkpoint-is-the-ids-file", ["stream", "{tmp}/s.tsv", "--out", "{tmp}/c", "--checkpoint",
                                           "{tmp}/./c.ids.txt", "-q"],
     "exit 2: .*--out '.*c.ids.txt' and --checkpoint '.*c.ids.txt' are one file", None, None),
    ("stream-checkpoint-differs-from-the-out-file-in-case", ["stream", "{tmp}/s.tsv", "--out", "{tmp}/Feats",
                                                            "--checkpoint", "{tmp}/feats.npy", "-q"],
     "exit 2: .*--out '.*Feats.npy' and --checkpoint '.*feats.npy' differ only in letter case: one file on a "
     "case-insensitive disk", None, None),
    ("stream-out-is-the-input", ["stream", "{tmp}/s.npy", "--out", "{tmp}/s", "-q"],
     "exit 2: .*the input '.*s.npy' and --out '.*s.npy' are one file",
     lambda tmp: (tmp / "s.npy").write_bytes((tmp / "s.tsv").read_bytes()), None),
    ("stream-checkpoint-is-the-input", ["stream", "{tmp}/s.tsv", "--checkpoint", "{tmp}/link.tsv", "-q"],
     "exit 2: .*the input '.*s.tsv' and --checkpoint '.*link.tsv' are one file",
     lambda tmp: (tmp / "link.tsv").hardlink_to(tmp / "s.tsv"), None),
    ("stream-checkpoint-garbage", ["stream", "{tmp}/s.tsv", "--checkpoint", "{tmp}/garbage.ckpt", "-q",
     "--dim", "16"],
     "exit 2: kong-pyg stream: error: .*garbage.ckpt", None, None),
    ("stream-checkpoint-truncated", ["stream", "{tmp}/s.tsv", "--checkpoint", "{tmp}/truncated.ckpt", "-q",
     "--dim", "16"],
     "exit 2: kong-pyg stream: error: .*truncated.ckpt", None, None),
    ("stream-checkpoint-other-config", ["stream", "{tmp}/s.tsv", "--checkpoint", "{tmp}/k2.ckpt", "-q",
     "--dim", "32"],
     "exit 2: kong-pyg stream: error: --checkpoint .*k2.ckpt was made with other options: --dim 16 \\(this "
     "run: --dim 32\\); resume with the checkpoint's, or remove it",
     None, None),
    ("stream-strict-malformed", ["stream", "{tmp}/bad.tsv", "--strict", "-q", "--out", "{tmp}/f"],
     "exit 1: kong-pyg stream: error: .*line 1", lambda tmp: (tmp / "bad.tsv").write_text("a\tb\n"), None),
    ("stream-out-is-a-folder", ["stream", "{tmp}/s.tsv", "--out", "{tmp}/adir", "-q"],
     "exit 2: .*--out is a file prefix .*not a folder", None, None),
    ("stream-out-ends-with-slash", ["stream", "{tmp}/s.tsv", "--out", "{tmp}/newdir/", "-q"],
     "exit 2: .*--out is a file prefix .*not a folder", None, None),
    ("stream-out-dot", ["stream", "{tmp}/s.tsv", "--out", "{tmp}/newdir/.", "-q"],
     "exit 2: .*--out is a file prefix .*not a folder", None, None),
    ("stream-out-empty", ["stream", "{tmp}/s.tsv", "--out", "", "-q"],
     "exit 2: .*--out is a file prefix .*not a folder", None, None),
    ("stream-only-malformed", ["stream", "{tmp}/bad.tsv", "-q", "--out", "{tmp}/f"],
     "exit 2: kong-pyg stream: error: no edges in .*bad.tsv.* \\(1 malformed and 0 blank lines\\): "
     "no features written; .*line 1", lambda tmp: (tmp / "bad.tsv").write_text("a\tb\n"), None),
    ("stream-empty", ["stream", "{tmp}/empty.tsv", "-q", "--out", "{tmp}/f"],
     "exit 2: kong-pyg stream: error: no edges in .*empty.tsv",
     lambda tmp: (tmp / "empty.tsv").write_text(""), None),
    ("top-level-unknown-command", ["nope"], "exit 2: kong-pyg: error: argument COMMAND: invalid choice",
        None, None),
]:
    case(f"cli-{id}", cli_with_files(*argv, setup=setup), F_, match, xfail)


# ---------------------------------------------------------------------------
# found by an adversarial pass (2026-11-27): silent wrong answers before
# ---------------------------------------------------------------------------

BOOL_EI = torch.tensor([[True, False], [False, False]])  # a mask, not node indices


def _fit_many(**kw):
    from kong_pyg.evaluation.svm import design, fit_many

    def call(tmp):
        X = np.random.default_rng(0).normal(size=(12, 3))
        y = kw.pop("y", np.array([0, 1] * 6))
        train = np.ones((2, 12), bool)
        train[0, :4] = False
        return fit_many(design(X), y, train, kw.pop("Cs", [1.0]), **kw)

    return call


def _classify_float_labels(tmp):
    from kong_pyg import classify

    graphs = [graph(y=torch.tensor([[0.1, 0.9, 1.1][i % 3]])) for i in range(12)]
    return classify(graphs, repeats=1, folds=2, inner_folds=2, grid="quick")


for id, call, error, match in [
    ("vectorizer-bool-edge-index", lambda tmp: KongVectorizer(k=2).fit_transform([graph(edge_index=BOOL_EI)]),
     TypeError, EDGE_DTYPE + " \\(got torch.bool"),
    ("vectorizer-float-edge-index",
     lambda tmp: KongVectorizer(k=2).fit_transform([graph(edge_index=E3.double())]),
     TypeError, EDGE_DTYPE + " \\(got torch.float64"),
    ("transform-dataset-bool-edge-index",
     lambda tmp: KongFeatures(k=2, dim=8).transform_dataset([graph(edge_index=BOOL_EI)]),
     TypeError, EDGE_DTYPE),
    ("readout-edge-across-graphs",
     lambda tmp: KongSketch(k=2, dim=8).readout(X3, E3, torch.tensor([0, 1, 1])),
     ValueError, "an edge between nodes of different graphs of 'batch'"),
    ("features-attr-name-y", lambda tmp: KongFeatures(k=2, dim=8, level="graph", attr_name="y"),
     ValueError, "'attr_name' 'y' would overwrite the graph's own 'y'"),
    ("features-attr-name-x-for-graphs", lambda tmp: KongFeatures(k=2, dim=8, level="graph", attr_name="x"),
     ValueError, "would overwrite the graph's own 'x'"),
    ("features-attr-name-num-edges",
     lambda tmp: KongFeatures(k=2, dim=8, level="graph", attr_name="num_edges"),
     ValueError, "'attr_name' 'num_edges' is a property or method of PyG's Data or Batch"),
    ("features-attr-name-data-method",
     lambda tmp: KongFeatures(k=2, dim=8, level="both", attr_name=("kong_x", "keys")),
     ValueError, "'attr_name' 'keys' is a property or method of PyG's Data or Batch"),
    ("features-attr-name-private", lambda tmp: KongFeatures(k=2, dim=8, level="graph", attr_name="_store"),
     ValueError, "'attr_name' '_store' starts with '_'"),
    ("features-attr-name-batch-property",
     lambda tmp: KongFeatures(k=2, dim=8, level="graph", attr_name="num_graphs"),
     ValueError, "'attr_name' 'num_graphs' is a property or method of PyG's Data or Batch"),
    ("features-attr-name-edge-order", lambda tmp: KongFeatures(k=2, dim=8, attr_name="edge_order"),
     ValueError, "would overwrite the per-edge key 'edge_order_attr'"),
    ("stream-uint64-ids-beyond-int64",
     lambda tmp: KongStream(k=2, dim=16).update([0, 0], [0, 0], [1, 2], [1, 1], [0, 0],
                                                torch.tensor([2**63 + 1] * 2, dtype=torch.uint64)),
     ValueError, "'graph' holds ids >= 2\\^63"),
    ("classify-float-labels", _classify_float_labels, ValueError,
     "'y' must be class labels .*not continuous"),
    ("fit-many-C-zero", _fit_many(Cs=[0.0]), ValueError, "'Cs' must be positive numbers"),
    ("fit-many-C-negative", _fit_many(Cs=[-1.0]), ValueError, "'Cs' must be positive numbers"),
    ("fit-many-C-nan", _fit_many(Cs=[float("nan")]), ValueError, "'Cs' must be positive numbers"),
    ("fit-many-y-nan", _fit_many(y=np.array([0.0, 1.0] * 5 + [np.nan, 1.0])), ValueError, "'y' contains NaN"),
    ("fit-many-y-continuous", _fit_many(y=np.array([0.5, 1.5] * 6)), ValueError, "not continuous"),
    ("fit-many-max-iter-zero", _fit_many(max_iter=0), ValueError, "'max_iter' must be >= 1"),
    ("fit-many-n-jobs-zero", _fit_many(n_jobs=0), ValueError, "'n_jobs' must be >= 1"),
    ("fit-many-tol-one", _fit_many(tol=1.0), ValueError, "'tol' must be below 1: it is the solver's margin"),
    ("fit-many-y-short", _fit_many(y=np.array([0, 1] * 5 + [0])), ValueError,
     "'y' has 11 labels for the design's 12 rows"),
    ("fit-many-parent-float", _fit_many(parent=[-1, 0.5]), TypeError, "'parent' must hold integers"),
    ("design-nothing", lambda tmp: __import__("kong_pyg.evaluation.svm").evaluation.svm.design(None),
     TypeError, "design needs 'features' or 'gram'"),
    ("design-nan", lambda tmp: __import__("kong_pyg.evaluation.svm").evaluation.svm.design(
        np.array([[1.0, np.nan], [0.0, 1.0]])), ValueError, "the features contain NaN"),
    ("design-overflow", lambda tmp: __import__("kong_pyg.evaluation.svm").evaluation.svm.design(
        np.eye(3) * 1e200), ValueError, "whose products overflow float64"),
    ("cross-validate-splits-test-in-train", lambda tmp: __import__("kong_pyg").cross_validate(
        [np.eye(12, 2)], Y12, nested=False, splits=__import__("kong_pyg.evaluation.splits").evaluation.splits
        .Splits([[(np.arange(12), np.arange(3))]], None)), ValueError,
     "'splits' split \\(0, 0, None\\) has graph 0 in both its training and its test part"),
    ("cross-validate-splits-inner-beyond-outer", lambda tmp: __import__("kong_pyg").cross_validate(
        [np.eye(12, 2)], Y12, splits=__import__("kong_pyg.evaluation.splits").evaluation.splits
        .Splits([[(np.arange(4, 12), np.arange(4))]], [[[(np.arange(6), np.arange(6, 12))]]])), ValueError,
     "inner split \\(0, 0, 0\\) reads graph 0, a test graph of its outer split \\(0, 0, None\\)"),
    ("evaluate-features-no-metrics", lambda tmp: __import__("kong_pyg").evaluate_features(
        {"a": np.eye(12, 2)}, Y12, metrics=[], splits=__import__("kong_pyg.evaluation.splits").evaluation
        .splits.make_splits(Y12, 1, 2, None, 0), protocol="paper"), ValueError, "'metrics' is empty"),
    ("cross-validate-nested-string",
     lambda tmp: __import__("kong_pyg").cross_validate([np.eye(12, 2)], Y12, folds=2, repeats=1, nested="no"),
     TypeError, "'nested' must be True or False"),
    ("fit-many-tol-nan", _fit_many(tol=float("nan")), ValueError, "'tol' must be .*finite"),
    ("fit-many-parent-below-minus-one", _fit_many(parent=[-5, 0]), ValueError, "'parent' must give"),
    ("cli-range-too-long", cli("classify", "-q", "--k", "1-100000000000"), CommandFailed,
     "exit 2: .*--k: the range '1-100000000000' holds 100,000,000,000 values \\(at most 1,000\\)"),
    ("cli-range-empty", cli("classify", "-q", "--k", "3-1"), CommandFailed,
     "exit 2: .*--k: the range '3-1' is empty"),
]:
    case(id, call, error, match)


def _cv(features):
    from kong_pyg import cross_validate

    def call(tmp):
        y = np.array([0, 1] * 10)
        return cross_validate(features, y, repeats=1, folds=2, nested=False)

    return call


X20 = np.random.default_rng(0).normal(size=(20, 3))


def _one_graph_y(y):
    return lambda tmp: __import__("kong_pyg").classify([graph(y=y)] * 4, repeats=1, folds=2, grid={"k": [1]})


def _interactions_time(time):
    def call(tmp):
        from kong_pyg.datasets import InteractionGraphs

        return InteractionGraphs(user=[0, 1], item=[0, 1], time=time, user_label=torch.tensor([0, 1]),
                                 item_label=torch.tensor([0, 1]), y=torch.tensor([0, 1]))

    return call


for id, call, error, match in [
    ("cv-features-not-a-list", _cv(X20), TypeError, "'features' must be a list with one entry per setting"),
    ("cv-features-list-of-lists", _cv([X20.tolist()]), TypeError,
     "features of setting 0 must be a NumPy array, a SciPy sparse matrix or a Gram \\(got list\\)"),
    ("cv-features-callable-int", _cv([lambda: 5]), TypeError, "features of setting 0 .*\\(got int\\)"),
    ("cv-features-complex", _cv([X20 + 1j]), TypeError, "features of setting 0 must hold real numbers"),
    ("cv-features-huge", _cv([X20 * 1e200]), ValueError, "values up to .*overflow float64"),
    ("cv-features-3d", _cv([X20[:, :, None]]), ValueError, "must be a 2-D matrix"),
    ("classify-dataset-dict", lambda tmp: __import__("kong_pyg").classify({"a": 1}), TypeError,
     "'dataset' must be a TU data set's name, a PyG dataset or a list of Data \\(got dict\\)"),
    ("classify-dataset-int", lambda tmp: __import__("kong_pyg").classify(5), TypeError, "'dataset' must be"),
    ("classify-y-string", _one_graph_y("a"), TypeError, "graph 0: 'y' must be a tensor of one class label"),
    ("vectorizer-device-meta", lambda tmp: KongVectorizer(device="meta").fit_transform([graph()]), ValueError,
     "'device' is 'meta', a device that holds no values"),
    ("sketch-x-on-meta", lambda tmp: KongSketch(k=2, dim=8)(X3.to("meta"), E3.to("meta")), ValueError,
     "'x' is on the 'meta' device"),
    ("sketch-edge-order-other-device",
     lambda tmp: KongSketch(k=2, dim=8)(X3, E3, None, torch.tensor([1, 2], device="meta")), ValueError,
     "'x' is on cpu but 'edge_order' is on meta"),
    ("sketch-readout-batch-other-device",
     lambda tmp: KongSketch(k=2, dim=8).readout(X3, E3, torch.zeros(3, dtype=torch.long, device="meta")),
     ValueError, "'x' is on cpu but 'batch' is on meta"),
    ("vectorizer-x-list", lambda tmp: KongVectorizer(k=2).fit_transform([Data(x=[0, 1, 2], edge_index=E3)]),
     TypeError, "graph 0: 'x' must be a tensor of node labels"),
    # (graphs whose labels differ in layout, integers and one-hot rows: tests/test_vectorizer.py)
    ("vectorizer-edge-attr-3d-beside-1d",
     lambda tmp: KongVectorizer(k=2).fit_transform([graph(edge_attr=torch.zeros(2, dtype=torch.long)),
                                                    graph(edge_attr=torch.zeros(2, 2, 2))]),
     ValueError, "graph 1: 'edge_attr' is a Tensor of shape \\[2, 2, 2\\]: labels are \\[rows\\] integers or "
     "\\[rows, C\\] one-hot rows"),
    ("config-seed-beyond-64-bits", lambda tmp: KongSketch(dim=8, seed=2**64), ValueError,
     "'seed' must be <= 4,294,967,295"),
    ("config-k-huge", lambda tmp: KongSketch(k=2**62, dim=8), ValueError, "'k' must be <= 1,000"),
    ("config-k-and-degree-10000", lambda tmp: KongSketch(k=10_000, degree=10_000, dim=8), ValueError,
     "'k' must be <= 1,000"),  # (once accepted: 3.3 GB of hashes and 12 s to build)
    ("config-hops-10000", lambda tmp: KongSketch(k=2, hops=10_000, dim=8), ValueError,
     "'hops' must be <= 1,000"),
    ("stream-python-id-beyond-int64",
     lambda tmp: KongStream(k=2, dim=8).update([2**63], [0], [1], [0], [0], [0]), ValueError,
     "'src' holds id 9223372036854775808, outside the 64-bit integers"),
    ("interactions-time-none", _interactions_time([None, 1]), TypeError,
     "'time' must be a 1-D tensor or sequence of numbers"),
    ("sketch-x-uint64-beyond-int64",
     lambda tmp: KongSketch(k=2, dim=8)(torch.tensor([0, 1, 2**63 + 5], dtype=torch.uint64), E3), ValueError,
     "'x' holds labels >= 2\\^63"),
    ("features-both-attr-name-int", lambda tmp: KongFeatures(k=2, dim=8, level="both", attr_name=5),
     ValueError, "level='both' needs 'attr_name' as a pair"),
    ("stream-save-missing-folder", lambda tmp: KongStream(k=2, dim=8).save(tmp / "nowhere" / "a.ckpt"),
     FileNotFoundError, "cannot write .*a.ckpt.*: no such folder"),
    ("transform-dataset-threads-zero",
     lambda tmp: KongFeatures(k=2, dim=8).transform_dataset([graph()], threads=0), ValueError,
     "'threads' must be >= 1"),
    ("vectorizer-bool-edge-index-after-a-good-graph",
     lambda tmp: KongVectorizer(k=2, dim=16).fit_transform([graph(), graph(edge_index=BOOL_EI)]), TypeError,
     "graph 1: " + EDGE_DTYPE + " \\(got torch.bool\\)"),
    ("vectorizer-edge-order-dtypes-differ",  # (integers and floats join as float64; a bool key does not)
     lambda tmp: KongVectorizer(k=2).fit_transform([graph(edge_order=torch.tensor([5, 6])),
                                                   graph(edge_order=torch.tensor([True, False]))]), TypeError,
     "graph 1: 'edge_order' is torch.bool, but graph 0 has torch.int64"),
    ("stream-python-type-beyond-labels",
     lambda tmp: KongStream(k=2, dim=8).update([0], [2**63], [1], [2], [0], [0]), ValueError,
     "'src_type' must hold types in \\[0, 2\\^58\\)"),
    ("stream-uint64-types-beyond-int64",
     lambda tmp: KongStream(k=2, dim=8).update([0], torch.tensor([2**63], dtype=torch.uint64), [1], [2], [0],
                                               [0]), ValueError, "'src_type' holds types >= 2\\^63"),
    ("cli-stream-seed-range", cli_with_files("stream", "{tmp}/s.tsv", "--seed", "1-3", "-q"), CommandFailed,
     "exit 2: .*--seed: expects an integer \\(got '1-3'\\)"),
]:
    case(id, call, error, match)


def test_node_features_may_replace_x_and_torch_features_are_taken():
    """attr_name='x' at node level is PyG's usual pattern (features into x); torch feature matrices of any
    float dtype or layout are scored as their NumPy arrays."""
    from kong_pyg import cross_validate

    out = KongFeatures(k=2, dim=8, attr_name="x")(graph())
    assert torch.equal(out.x, KongFeatures(k=2, dim=8)(graph()).kong_x)
    y = np.array([0, 1] * 10)
    X = torch.from_numpy(X20).float()
    ref = cross_validate([X], y, repeats=1, folds=2, nested=False).protocol("paper").accuracy_mean
    for t in (X.to_sparse(), X.double()):
        assert cross_validate([t], y, repeats=1, folds=2, nested=False).protocol("paper").accuracy_mean == ref
    assert cross_validate([X.bfloat16()], y, repeats=1, folds=2, nested=False).fits > 0


from kong_pyg import brute_force_kernel, kernel_matrix, kong_strings  # noqa: E402


def _vectorizer_batch_size_set_after_fit(tmp):
    v = KongVectorizer(k=2, dim=16).fit([graph()])
    v.set_params(batch_size=-1)
    return v.transform([graph()])


for id, call, error, match in [
    ("vectorizer-batch-size-set-after-fit", _vectorizer_batch_size_set_after_fit, ValueError,
     "'batch_size' must be >= 1 \\(got -1\\)"),
    ("brute-force-kernel-unknown-kernel",
     lambda tmp: brute_force_kernel([[("A",)]], 1, kernel="linear"), ValueError,
     "'kernel' must be one of"),
    ("brute-force-kernel-normalize-word",
     lambda tmp: brute_force_kernel([[("A",)]], 1, normalize="no"), TypeError,
     "'normalize' must be True or False"),
    ("brute-force-kernel-degree-zero",
     lambda tmp: brute_force_kernel([[("A",)]], 1, degree=0), ValueError,
     "'degree' must be >= 1"),
    ("kernel-matrix-overflow", lambda tmp: kernel_matrix(np.full((1, 2), 1e200)),
     ValueError, "the kernel matrix overflows float64"),
    ("kernel-matrix-complex", lambda tmp: kernel_matrix(np.ones((2, 2)) * 1j), TypeError,
     "'X' must hold real numbers"),
    # text and dates convert to numbers ("1" was read as 1.0)
    ("kernel-matrix-text", lambda tmp: kernel_matrix(np.array([["1", "2"]])), TypeError,
     "'X' must be \\[n, d\\] numeric features \\(got an array of <U1\\)"),
    ("kernel-matrix-dates", lambda tmp: kernel_matrix(np.array([[np.datetime64("2020-01-01")]])), TypeError,
     "got an array of datetime64"),
    ("kernel-matrix-text-objects", lambda tmp: kernel_matrix(np.array([["1", "2"]], dtype=object)), TypeError,
     "got an array of <U1"),
    ("kernel-matrix-text-list", lambda tmp: kernel_matrix([[b"1", b"2"]]), TypeError,
     "got an array of \\|S1"),
    ("kernel-matrix-meta", lambda tmp: kernel_matrix(torch.ones(2, 2, device="meta")), ValueError,
     "'X' is on the meta device"),
    ("kong-strings-edge-order-nan",
     lambda tmp: kong_strings([(1, 0), (2, 0)], [0, 1, 2], 1, edge_order=[float("nan"), 1.0]),
     ValueError, "'edge_order' holds NaN"),
    ("kong-strings-short-edge-labels",
     lambda tmp: kong_strings([(1, 0), (2, 0)], [0, 1, 2], 1, edge_labels=[1]), ValueError,
     "'edge_labels' must have one entry per edge \\(2; got 1\\)"),
    ("kong-strings-relabel-negative", lambda tmp: kong_strings([(1, 0)], [0, 1], 1, relabel=-1),
     ValueError, "'relabel' must be >= 0"),
    ("kong-strings-labels-none", lambda tmp: kong_strings([(1, 0)], None, 1), TypeError,
     "'labels' must be a sequence"),
    ("kong-strings-float-indices", lambda tmp: kong_strings(torch.tensor([[0.0], [1.0]]), [0, 1], 1),
     TypeError,
     "'edge_index' must hold integer node indices \\(got 0.0 of type float\\)"),
    ("kong-strings-bool-index", lambda tmp: kong_strings([(True, 0)], [0, 1], 1), TypeError,
     "'edge_index' must hold integer node indices \\(got True of type bool\\)"),
    # the oracle: labels that are no symbols (equal tensors of shape [1] were two symbols: a wrong kernel),
    # and arguments of the wrong kind named
    ("kong-strings-tensor-labels",
     lambda tmp: kong_strings([(0, 1)], [torch.tensor([0]), torch.tensor([0])], 0), TypeError,
     "'labels' entry 0 is a Tensor of shape \\[1\\], not one label"),
    ("kong-strings-3d-labels", lambda tmp: kong_strings([(0, 1)], torch.zeros(2, 1, 1, dtype=torch.long), 0),
     TypeError, "'labels' entry 0 is a Tensor of shape \\[1, 1\\], not one label"),
    ("kong-strings-list-labels", lambda tmp: kong_strings([(0, 1)], [[0], [1]], 0), TypeError,
     "'labels' entry 0 is a list, which is no symbol"),
    ("kong-strings-edge-index-none", lambda tmp: kong_strings(None, [0, 1], 1), TypeError,
     "'edge_index' must be \\(source, target\\) pairs or a \\[2, num_edges\\] tensor \\(got NoneType\\)"),
    ("kong-strings-edge-index-int", lambda tmp: kong_strings(5, [0, 1], 1), TypeError,
     "'edge_index' must be .* \\(got int\\)"),
    ("kong-strings-edge-order-mixed",
     lambda tmp: kong_strings([(0, 1), (1, 0)], [0, 1], 1, edge_order=["a", 1]), TypeError,
     "'edge_order' must be a real-valued sort key, one number per edge \\(got 'a'\\)"),
    ("brute-force-kernel-graph-int", lambda tmp: brute_force_kernel([1, 2], 1), TypeError,
     "'graphs' entry 0 must be a kong_strings\\(\\) output, a list of node strings \\(got int\\)"),
    ("brute-force-kernel-graphs-int", lambda tmp: brute_force_kernel(3, 1), TypeError,
     "'graphs' must be a sequence of kong_strings\\(\\) outputs \\(got int\\)"),
    # sparse tensors and tensors without values in a graph: named, not a PyTorch error from deep inside
    ("vectorizer-x-sparse-coo",
     lambda tmp: KongVectorizer(k=2).fit_transform([graph(x=torch.eye(3).to_sparse())]), TypeError,
     "graph 0: 'x' must be a dense tensor \\(got sparse_coo\\): use .to_dense\\(\\)"),
    ("vectorizer-x-sparse-csr",
     lambda tmp: KongVectorizer(k=2).fit_transform([graph(x=torch.eye(3).to_sparse_csr())]),
     TypeError, "graph 0: 'x' must be a dense tensor \\(got sparse_csr\\)"),
    ("vectorizer-edge-index-sparse",
     lambda tmp: KongVectorizer(k=2).fit_transform([Data(x=torch.arange(3), edge_index=E3.to_sparse())]),
     TypeError, "graph 0: 'edge_index' must be a dense tensor \\(got sparse_coo\\)"),
    ("vectorizer-edge-attr-sparse",
     lambda tmp: KongVectorizer(k=2).fit_transform([Data(x=torch.arange(3), edge_index=E3,
                                                         edge_attr=torch.zeros(E3.size(1), dtype=torch.long)
                                                         .to_sparse())]),
     TypeError, "graph 0: 'edge_attr' must be a dense tensor \\(got sparse_coo\\)"),
    ("vectorizer-edge-order-sparse",
     lambda tmp: KongVectorizer(k=2).fit_transform([Data(x=torch.arange(3), edge_index=E3,
                                                         edge_order=torch.arange(E3.size(1)).to_sparse())]),
     TypeError, "graph 0: 'edge_order' must be a dense tensor \\(got sparse_coo\\)"),
    ("sketch-edge-order-sparse",
     lambda tmp: KongSketch(k=2, dim=8)(torch.arange(3), E3, edge_order=torch.arange(E3.size(1)).to_sparse()),
     TypeError, "'edge_order' must be a dense tensor \\(got sparse_coo\\)"),
    ("sketch-x-sparse-csr", lambda tmp: KongSketch(k=2, dim=8)(torch.eye(3).to_sparse_csr(), E3), TypeError,
     "'x' must be a dense tensor \\(got sparse_csr\\)"),
    ("vectorizer-edge-index-meta",
     lambda tmp: KongVectorizer(k=2).fit_transform([Data(x=torch.tensor([0, 1]),
                                                         edge_index=torch.zeros(2, 1, dtype=torch.long,
                                                                                device="meta"))]),
     ValueError, "graph 0: 'edge_index' is on the meta device \\(a shape without values\\)"),
    ("vectorizer-x-sparse-in-graph-1",
     lambda tmp: KongVectorizer(k=2).fit_transform([graph(x=torch.eye(3)),
                                                    graph(x=torch.eye(3).to_sparse())]),
     TypeError, "graph 1: 'x' must be a dense tensor \\(got sparse_coo\\)"),
    ("vectorizer-x-meta",
     lambda tmp: KongVectorizer(k=2).fit_transform([graph(), graph(x=torch.zeros(3, dtype=torch.long,
                                                                                device="meta"))]),
     ValueError, "graph 1: 'x' is on the meta device"),
    ("vectorizer-edge-order-two-columns-beside-vector",  # (a sort key, not labels: not read as labels)
     lambda tmp: KongVectorizer(k=2).fit_transform([graph(edge_order=torch.tensor([0, 1])),
                                                    graph(edge_order=torch.tensor([[0, 1], [1, 0]]))]),
     ValueError, "graph 1: 'edge_order' is a Tensor of shape \\[2, 2\\], but graph 0 has a Tensor of shape "
     "\\[2\\]: every graph needs the same layout"),
    ("features-hash-scheme-7", lambda tmp: KongFeatures(dim=8, hash_scheme=7), ValueError,
     "'hash_scheme' must be 1 or 2 \\(got 7\\)"),
    ("features-hash-scheme-float", lambda tmp: KongFeatures(dim=8, hash_scheme=2.0), TypeError,
     "'hash_scheme' must be an integer, 1 or 2 \\(got float 2.0\\)"),
    ("wl-features-empty", lambda tmp: __import__("kong_pyg.evaluation.baselines").evaluation.baselines
     .wl_features([]), ValueError, "'graphs' is empty"),
    ("walk-features-empty", lambda tmp: __import__("kong_pyg.evaluation.baselines").evaluation.baselines
     .walk_features([]), ValueError, "'graphs' is empty"),
    ("sp-features-empty", lambda tmp: __import__("kong_pyg.evaluation.baselines").evaluation.baselines
     .sp_features([]), ValueError, "'graphs' is empty"),
    ("cli-stream-dev-null", cli("stream", "/dev/null", "-q"), CommandFailed,
     "exit 2: .*'/dev/null' is not a regular file"),
    # sketches that overflow: an error, never inf or NaN
    ("stream-sketches-overflow-const",
     lambda tmp: _star_stream(KongStream(k=1, dim=4, degree=3, const=1e300)),
     ValueError, "overflowed float64.*const=1e\\+300.*a smaller const"),
    ("stream-sketches-overflow-float32",
     lambda tmp: _star_stream(KongStream(k=1, hops=2, dim=4, degree=30, dtype=torch.float32), 299),
     ValueError, "beyond the range of torch.float32"),
    ("cli-stream-overflow-float32", _on_a_star(cli("stream", "{tmp}/star.tsv", "--k", "1", "--hops", "3",
                                                   "--degree", "9", "--dim", "4", "-q", "-o", "{tmp}/f")),
     CommandFailed, "exit 2: .*beyond float32: pass --float64"),
    ("cli-stream-overflow-float64", _on_a_star(cli("stream", "{tmp}/star.tsv", "--k", "1", "--hops", "3",
                                                   "--degree", "200", "--dim", "4", "--float64", "-q", "-o",
                                                   "{tmp}/f")),
     CommandFailed, "exit 2: .*overflowed float64"),
]:
    case(id, call, error, match)


def _star_stream(ks, leaves=1):
    """A star of :obj:`leaves` edges read in every pass; returns the sketches."""
    cols = ([0] * leaves, [0] * leaves, list(range(1, leaves + 1)), [1] * leaves, [0] * leaves, [0] * leaves)
    for i in range(ks.num_passes):
        if i:
            ks.end_pass()
        ks.update(*cols)
    return ks.sketches()


def test_a_failed_refit_keeps_the_fitted_vocabulary():
    """A refit that fails (a bad graph) leaves the vectorizer as it was: same columns, same features."""
    v = KongVectorizer(k=1)
    good = Data(x=torch.tensor([0, 1, 2]), edge_index=torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]]))
    ref = v.fit_transform([good]).toarray()
    names = list(v.get_feature_names_out())
    with pytest.raises(ValueError, match="outside"):
        v.fit([good, Data(x=torch.tensor([0, 1]), edge_index=torch.tensor([[0], [5]]))])
    assert np.array_equal(v.transform([good]).toarray(), ref) and list(v.get_feature_names_out()) == names


def test_transform_dataset_stores_features_in_a_one_graph_dataset(tmp_path):
    """PyG collates one graph with slices=None: the features still go into the dataset's storage."""
    class One(InMemoryDataset):
        def __init__(self):
            super().__init__(str(tmp_path))
            self.data, self.slices = self.collate([graph()])

    ds = One()
    out = KongFeatures(k=2, dim=8, level="graph", attr_name="kg").transform_dataset(ds)
    assert out is ds and ds.slices is None
    assert torch.allclose(ds[0].kg, KongFeatures(k=2, dim=8, level="graph", attr_name="kg")(graph()).kg)


def test_examples_refuse_an_unusable_device_in_one_line():
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    for script in ("linear_head.py", "gnn_with_kong.py"):
        p = subprocess.run([sys.executable, str(root / "examples" / script), "--device", "meta"],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
        assert "'--device' is 'meta', a device that holds no values" in p.stderr


def test_linear_head_refuses_a_split_it_cannot_make_in_one_line():
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    p = subprocess.run([sys.executable, str(root / "examples" / "linear_head.py"), "--num-graphs", "3"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert "error: 3 graphs hold only 1 graph of a class" in p.stderr and "a larger --num-graphs" in p.stderr
    sys.path.insert(0, str(root / "examples"))
    try:
        from example_data import DataError, check_split
    finally:
        sys.path.remove(str(root / "examples"))
    y = torch.tensor([0, 1] * 20)
    with pytest.raises(DataError, match="--test-size 0.01: 1 test and 39 training graphs of 40"):
        check_split(y, 0.01)
    with pytest.raises(DataError, match="--test-size 0.99: 40 test and 0 training"):
        check_split(y, 0.99)
    check_split(y, 0.05)  # 2 test graphs: one per class is possible


def test_type_codes_of_surrogates_match_the_file_bytes():
    """A string type with surrogate escapes (what the file reader shows for undecodable bytes) gets the
    code of those bytes; any other lone surrogate still gets a code (no UnicodeEncodeError)."""
    from kong_pyg.datasets.streamspot.reader import show_token, type_code_bytes
    from kong_pyg.hashing import type_code

    assert type_code(show_token(b"\x80ab")) == type_code_bytes(b"\x80ab")
    assert type_code("\ud800") != type_code("\ud801")


def test_a_transform_given_meta_data_is_not_left_on_meta():
    """One call with data on a device PyTorch cannot compute on is a clear error, and the transform
    keeps working on the CPU afterwards (it moved its tables there for good before)."""
    f = KongFeatures(k=2, dim=8)
    before = f(graph()).kong_x
    with pytest.raises(ValueError, match="'data.x.device' is 'meta', a device that holds no values"):
        f(Data(x=X3.to("meta"), edge_index=E3.to("meta")))
    assert torch.equal(f(graph()).kong_x, before)


def test_list_labels_are_checked_and_integral_floats_and_bools_become_integers():
    from kong_pyg.evaluation.classify import graph_targets

    assert graph_targets([graph(y=torch.tensor([v])) for v in (1.0, 0.0, 2.0)]).tolist() == [1, 0, 2]
    assert graph_targets([graph(y=torch.tensor([v])) for v in (True, False)]).tolist() == [1, 0]
    assert graph_targets([graph(y=torch.tensor([v])) for v in (3, 5)]).dtype.kind == "i"


# ---------------------------------------------------------------------------
# the runner
# ---------------------------------------------------------------------------

OPAQUE = (IndexError, KeyError, AttributeError, RuntimeError, AssertionError, ZeroDivisionError)


def _params():
    out = []
    for c in CASES:
        marks = [pytest.mark.xfail(reason=c.xfail, strict=False)] if c.xfail else []
        out.append(pytest.param(c, id=c.id, marks=marks))
    return out


@pytest.mark.parametrize("c", _params())
def test_bad_input(c: Case, tmp_path):
    with pytest.raises(c.error, match=c.match) as info:
        c.call(tmp_path)
    # the expected class itself, not an opaque one that happens to subclass it
    assert not isinstance(info.value, OPAQUE) or issubclass(c.error, OPAQUE), type(info.value)


def test_the_table_is_large_and_ids_unique():
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)), [i for i in ids if ids.count(i) > 1]
    assert len(ids) >= 150


# ---------------------------------------------------------------------------
# inputs that once failed and are now accepted (issue 12): the right answer
# ---------------------------------------------------------------------------


def test_vectorizer_takes_a_single_data_and_a_batch():
    g, h = graph(), graph(x=torch.tensor([2, 1, 0]))
    rows = KongVectorizer(k=2, hops=1, dim=32).fit_transform([g, h])
    one = KongVectorizer(k=2, hops=1, dim=32).fit_transform(g)
    assert one.shape == (1, 32) and np.array_equal(one[0], rows[0])
    both = KongVectorizer(k=2, hops=1, dim=32).fit_transform(Batch.from_data_list([g, h]))
    assert np.array_equal(both, rows)
    exact = KongVectorizer(k=2, hops=1).fit([g, h])
    assert (exact.transform(g) != exact.transform([g])).nnz == 0


def test_vectorizer_rejects_edges_into_another_graph_of_a_collated_dataset(tmp_path):
    bad = Collated([graph(edge_index=torch.tensor([[1, 3], [0, 0]])), graph()])  # node 3 is graph 1's node 0
    with pytest.raises(ValueError, match="graph 0: 'edge_index' holds node indices outside \\[0, 3\\)"):
        KongVectorizer(k=2, hops=1).fit(bad)


def test_storage_rows_of_edge_attributes_are_checked_per_graph():
    ds = Collated([graph(edge_attr=torch.tensor([0, 1])), graph(edge_attr=torch.tensor([3, 4]))])
    good = KongVectorizer(k=2, hops=1).fit_transform(ds)
    assert good.shape[0] == 2
    ds.slices["edge_attr"] = torch.tensor([0, 3, 4])  # 3 rows for graph 0, 1 for graph 1: 4 in all, as edges
    with pytest.raises(ValueError, match="graph 0: 'edge_attr' is rows 0:3 of the data set's storage, its "
                                         "edges 0:2"):
        KongVectorizer(k=2, hops=1).fit_transform(ds)
    ds.slices["edge_attr"] = torch.tensor([0, 4])
    with pytest.raises(ValueError, match="slices 'edge_attr' for 1 graphs and 'edge_index' for 2"):
        KongVectorizer(k=2, hops=1).fit_transform(ds)


@pytest.mark.parametrize("kernel", ["poly", "cosine"])
def test_exact_maps_of_degree_above_20_match_the_kernel(kernel):
    from kong_pyg import gram_matrix

    g = [graph(), graph(x=torch.tensor([2, 1, 1]))]
    for p in (21, 25):  # p! > 2^63: it once overflowed int64 in the monomial weights
        X = KongVectorizer(k=1, degree=p, kernel=kernel).fit_transform(g)
        K = gram_matrix(g, k=1, degree=p, kernel=kernel)
        np.testing.assert_allclose((X @ X.T).toarray(), np.asarray(K), rtol=1e-12)
    with pytest.raises(ValueError, match="the exact map supports degree <= 170"):
        KongVectorizer(k=1, degree=171, kernel=kernel).fit_transform(g)


def test_exact_map_too_large_states_the_size_it_checked():
    from kong_pyg.exact import ExactMapTooLarge, check_entries

    with pytest.raises(ExactMapTooLarge, match="about 1e\\+07 sparse entries \\(~2.1 GiB, over the 2 GiB"):
        check_entries(1e7, "degree-20 map", "use a sketch", 64 + 8 * 20)  # (once: ~0.6 GiB, "over" 2)
    with pytest.raises(ExactMapTooLarge, match="\\(~5.96e\\+16 GiB, over"):
        check_entries(1e24, "degree-20 map", "use a sketch")


def test_a_graph_without_edge_index_has_no_edges_in_every_front_end():
    bare, empty = Data(x=X3.clone()), graph(edge_index=torch.empty(2, 0, dtype=torch.long))
    for kw in (dict(k=2), dict(k=2, dim=16)):  # (the vectorizer refused it; KongFeatures took it as edgeless)
        a = KongVectorizer(**kw).fit_transform([bare, graph()])
        b = KongVectorizer(**kw).fit_transform([empty, graph()])
        a, b = (m.toarray() if hasattr(m, "toarray") else m for m in (a, b))
        assert np.array_equal(a, b)
    rows = KongVectorizer(k=2, dim=16).fit_transform([bare])
    assert np.allclose(KongFeatures(k=2, dim=16, level="graph")(bare.clone()).kong_graph.numpy(), rows)


def test_exact_map_too_large_from_the_vectorizer_states_the_checked_size():
    out = torch.stack([torch.zeros(49, dtype=torch.long), torch.arange(1, 50)])  # a star of 50 nodes
    star = Data(x=torch.arange(50), edge_index=torch.cat([out, out.flip(0)], 1))
    with pytest.raises(ValueError, match="degree-6 map of graph 0 would hold about 2.9e\\+07 sparse entries "
                                         "\\(~3.0 GiB, over the 2 GiB"):  # (the re-raise once said ~1.7 GiB)
        KongVectorizer(k=1, hops=1, degree=6).fit_transform([star])


def test_float_and_integer_x_across_graphs_give_the_rows_of_each_graph_alone():
    count_rows = graph(x=torch.tensor([[2, 0], [0, 1], [1, 1]]))  # integer rows, not one-hot
    for other in (graph(x=torch.eye(2)[[1, 1, 0]]), graph(x=torch.eye(2, dtype=torch.float64)[[0, 1, 0]]),
                  graph(x=torch.eye(2, dtype=torch.bool)[[0, 1, 0]])):
        for kw in (dict(k=2, hops=1), dict(k=2, hops=1, dim=16)):
            joined = KongVectorizer(batch_size=8, **kw).fit_transform([other, count_rows])
            alone = KongVectorizer(batch_size=1, **kw).fit_transform([other, count_rows])
            joined, alone = (m.toarray() if hasattr(m, "toarray") else m for m in (joined, alone))
            assert np.array_equal(joined, alone)


def test_graph_targets_of_a_collated_data_set_need_one_label_per_graph():
    from kong_pyg.evaluation.classify import graph_targets

    two_each = [graph(y=torch.tensor([[i % 2, 7]])) for i in range(6)]  # one row of two per graph
    with pytest.raises(ValueError, match="graph 0 needs one class label in 'y'"):  # (once 12 labels)
        graph_targets(Collated(two_each))
    one_each = Collated([graph(y=torch.tensor([[i % 2]])) for i in range(6)])
    assert graph_targets(one_each).tolist() == [0, 1, 0, 1, 0, 1]
    assert graph_targets(one_each[torch.tensor([5, 0, 1])]).tolist() == [1, 0, 1]


def test_a_gram_matrix_must_be_symmetric_and_positive_semi_definite():
    from kong_pyg import cross_validate
    from kong_pyg.evaluation.features import Gram

    rng = np.random.default_rng(0)
    y = np.array([0, 1] * 20)
    A = rng.normal(size=(40, 40))
    run = lambda K: cross_validate([Gram(K)], y, repeats=1, folds=3, nested=False)  # noqa: E731
    with pytest.raises(ValueError, match="the Gram matrix is not symmetric"):  # (fit on (K + K^T) / 2 before)
        run(A)
    for K in (-np.eye(40), (A + A.T) / 2):  # (fit on the PSD part before: another kernel)
        with pytest.raises(ValueError, match="the Gram matrix is not positive semi-definite"):
            run(K)
    with pytest.raises(ValueError, match="must be a square 2-D matrix"):
        run(A[:, :30])
    X = rng.normal(size=(40, 5))
    run(X @ X.T)  # (rounding in a real kernel matrix is no reason to refuse it)


def test_cross_validation_refuses_splits_and_settings_that_do_not_fit():
    from kong_pyg import cross_validate
    from kong_pyg.evaluation.cv import Setting
    from kong_pyg.evaluation.splits import Splits, make_splits

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 5)), np.array([0, 1] * 20)
    # (each was an IndexError or AttributeError from deep inside)
    with pytest.raises(ValueError, match="'splits' split \\(0, 0, None\\) holds indices outside \\[0, 20\\)"):
        cross_validate([X[:20]], y[:20], splits=make_splits(y, 2, 3, None, 0), nested=False)
    with pytest.raises(ValueError, match=r"'splits' split \(0, 0, None\) tests no graph"):  # (NaN accuracy)
        no_test = Splits([[(np.arange(40), np.array([], dtype=int))]], None)
        cross_validate([X], y, splits=no_test, nested=False)
    with pytest.raises(ValueError, match="'splits' holds no split"):
        cross_validate([X], y, splits=make_splits(y, 0, 3, None, 0), nested=False)
    for settings in ([Setting("a", ())], ["a"]):
        with pytest.raises(ValueError, match="'settings' must hold one Setting per entry of 'features'"):
            cross_validate([X, X][: 2 if len(settings) == 1 and isinstance(settings[0], Setting) else 1], y,
                           settings=settings, repeats=1, folds=3, nested=False)


def test_what_the_input_checks_still_accept():
    """Inputs that a first version of the checks above refused (found in review)."""
    from kong_pyg import cross_validate
    from kong_pyg.evaluation.features import Gram, design_matrix
    from kong_pyg.evaluation.splits import Splits
    from kong_pyg.evaluation.svm import design

    rng = np.random.default_rng(0)
    y = np.array([0, 1] * 20)
    # float32 features wider than the data: their own X X^T is not a user's Gram matrix (float32
    # rounding made it look not positive semi-definite)
    low_rank = (rng.normal(size=(40, 10)) @ rng.normal(size=(10, 300))).astype(np.float32) * 1e4
    cross_validate([low_rank], y, repeats=1, folds=3, nested=False)
    # boolean masks as splits
    mask = np.zeros(40, bool)
    mask[::3] = True
    cross_validate([low_rank], y, splits=Splits([[(~mask, mask)]], None), nested=False)
    with pytest.raises(TypeError, match="must hold integer indices or a boolean mask"):
        cross_validate([low_rank], y, splits=Splits([[(np.array([3.0]), np.array([5]))]], None), nested=False)
    # [G, 1] and NumPy labels for stream_to_graphs
    es, labels = synthetic_event_stream(6)
    want = [int(v) for v in labels]
    for form in (labels.view(6, 1), labels.numpy()):
        assert [int(d.y) for d in stream_to_graphs(es, form)] == want
    # a user's Gram matrix on the route for many graphs is checked as on the other
    with pytest.raises(ValueError, match="not positive semi-definite"):
        design_matrix(Gram(-np.eye(5)))
    # a float32 X X^T (NumPy or torch) is a kernel matrix: its rounding is not negative eigenvalues; the
    # same fits as the features themselves; a clearly indefinite float32 matrix is still refused
    X = torch.randn(100, 10, generator=torch.Generator().manual_seed(110))
    y = np.random.default_rng(1).integers(0, 2, 100)
    want = cross_validate([X.double().numpy()], y, repeats=1, folds=3, nested=False).outer
    for K in (X @ X.T, (X @ X.T).numpy()):
        assert np.array_equal(cross_validate([Gram(K)], y, repeats=1, folds=3, nested=False).outer, want)
        design_matrix(Gram(K))
    with pytest.raises(ValueError, match="not positive semi-definite: an eigenvalue of -1"):
        design_matrix(Gram(torch.diag(torch.tensor([5.0, 1.0, -1.0]))))
    with pytest.raises(ValueError, match="not positive semi-definite"):  # (float16: a capped tolerance)
        design_matrix(Gram(np.array([[1, 2, 0], [2, 1, 0], [0, 0, 1]], dtype=np.float16)))
    # a fixed validation set (graphs in neither outer part) chooses C without seeing the test graphs
    from kong_pyg.evaluation.splits import plan_jobs

    tr, va, te = np.arange(40), np.arange(40, 50), np.arange(50, 60)
    assert plan_jobs(Splits([[(tr, te)]], [[[(tr, va)]]]), 60).parent.tolist() == [-1, 0]
    # labels in a tensor that requires grad (features in one were read already)
    assert np.array_equal(cross_validate([X.double().numpy()], torch.tensor(y, dtype=torch.float32,
                                                                           requires_grad=True),
                                         repeats=1, folds=3, nested=False).outer, want)
    # SciPy's dok and lil formats (no flat array of values) as any other sparse matrix
    import scipy.sparse as sp

    want = cross_validate([X.double().numpy()], y, repeats=1, folds=3).outer
    for form in (sp.dok_matrix, sp.lil_matrix, sp.dok_array, sp.lil_array):
        assert np.array_equal(cross_validate([form(X.double().numpy())], y, repeats=1, folds=3).outer, want)
        design(form(X.double().numpy()))  # (the solver's own entry point reads them too)
    # infinity in a Gram matrix: the one error, without NumPy's warning from the symmetry check
    K = (X @ X.T).double().numpy()
    K[0, 1] = np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="the Gram matrix contains infinity"):
            cross_validate([Gram(K)], y, repeats=1, folds=3)


def test_narrow_integer_edge_indices_are_widened_everywhere():
    """int32 (PyG's EdgeIndex allows it), int16, int8 and uint8 indices: the int64 result on every route."""
    from kong_pyg import KongFeatures, KongSketch, KongVectorizer

    x, ei = torch.tensor([0, 1, 2, 1]), torch.tensor([[0, 1, 2, 3, 1], [1, 2, 3, 0, 0]])
    layer, feats = KongSketch(k=2, dim=16), KongFeatures(k=2, dim=16, level="both")
    ref = feats(Data(x=x, edge_index=ei))
    ref_vec = KongVectorizer(k=2).fit_transform([Data(x=x, edge_index=ei)]).toarray()
    for dtype in (torch.int32, torch.int16, torch.int8, torch.uint8):
        narrow = ei.to(dtype)
        assert torch.equal(layer(x, narrow), layer(x, ei))
        assert torch.equal(layer.readout(x, narrow), layer.readout(x, ei))
        out = feats(Data(x=x, edge_index=narrow))
        assert torch.equal(out.kong_x, ref.kong_x) and torch.equal(out.kong_graph, ref.kong_graph)
        assert (KongVectorizer(k=2).fit_transform([Data(x=x, edge_index=narrow)]).toarray() == ref_vec).all()
