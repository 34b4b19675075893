"""Bad input found by the audit of every error message: each names the argument and what was expected.

Each case names the input, the exception class and a regex of the message (as ``test_bad_inputs.py``).
"""
import numpy as np
import pytest
import torch
from test_bad_inputs import graph

import kong_pyg as kp

EI = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])


def _graphs(n=20):
    return [graph(x=torch.tensor([0, 1, 0]), edge_index=EI, y=torch.tensor([i % 2])) for i in range(n)]


def _splits():
    from kong_pyg.evaluation.splits import make_splits

    return make_splits(np.arange(20) % 2, 1, 2, 2, 0)


def _log(**kw):
    n = 30
    cols = dict(user=np.arange(n) % 5, item=np.arange(n) % 7, time=np.arange(n, dtype=float),
                user_label=np.arange(n) % 2, item_label=np.arange(n) % 3)
    from kong_pyg.datasets import InteractionGraphs

    return InteractionGraphs(**{**cols, **kw})


SOURCE = {"src": [0], "src_type": ["a"], "dst": [1], "dst_type": ["b"], "edge_type": ["e"]}
NOT_A_TENSOR = ("'x' must be a tensor of node labels, \\[num_nodes\\] integers or \\[num_nodes, C\\] "
                "one-hot rows")

CASES = [
    # crashes before: AttributeError, "'int' object is not callable", IndexError
    ("transform-dataset-x-list", lambda: kp.KongFeatures(dim=16).transform_dataset(
        [graph(x=[0, 1, 0], edge_index=EI)]), TypeError,
     "graph 0: 'x' must be a tensor of node labels \\(got a list\\)"),
    ("transform-dataset-x-array", lambda: kp.KongFeatures(dim=16).transform_dataset(
        [graph(x=np.array([0, 1, 0]), edge_index=EI)]), TypeError,
     "graph 0: 'x' must be a tensor of node labels"),
    ("transform-dataset-x-scalar", lambda: kp.KongFeatures(dim=16).transform_dataset(
        [graph(x=torch.tensor(3), edge_index=EI, num_nodes=3)]), ValueError,
     f"graph 0: {NOT_A_TENSOR} \\(got a Tensor of shape \\[\\]\\)"),
    # options checked as the front-ends check them (a tensor: "Boolean value of Tensor ... is ambiguous")
    ("gram-edge-order-attr-tensor", lambda: kp.gram_matrix(_graphs(), edge_order_attr=torch.arange(3)),
     TypeError, "'edge_order_attr' must be a non-empty string or None"),
    ("gram-edge-order-attr-float", lambda: kp.gram_matrix(_graphs(), edge_order_attr=1.5), TypeError,
     "'edge_order_attr' must be a non-empty string or None \\(got 1.5\\)"),
    ("order-test-reverse-tensor", lambda: kp.order_test(_graphs(), reverse=torch.tensor([True, False])),
     TypeError, "'reverse' must be True or False"),
    ("order-test-edge-order-attr-float", lambda: kp.order_test(_graphs(), edge_order_attr=1.5), TypeError,
     "'edge_order_attr' must be a non-empty string or None \\(got 1.5\\)"),
    # a wrong answer before: "no" was true, and the counts were the blended ones
    ("kgram-counts-blended-str", lambda: kp.kgram_counts((1, 2, 3), 2, "no"), TypeError,
     "'blended' must be True or False \\(got 'no'\\)"),
    ("strings-3d-edge-index", lambda: kp.kong_strings(torch.zeros(2, 2, 2, dtype=torch.long), [0, 1, 2], 2),
     ValueError, "'edge_index' must have shape \\[2, num_edges\\] \\(got \\[2, 2, 2\\]\\)"),
    ("strings-empty-3d-edge-index", lambda: kp.kong_strings(torch.empty(0, 2, 3, dtype=torch.long), [0], 1),
     ValueError, "'edge_index' must have shape \\[2, num_edges\\] \\(got \\[0, 2, 3\\]\\)"),
    ("strings-meta-labels", lambda: kp.kong_strings(EI, torch.zeros(3, dtype=torch.long, device="meta"), 2),
     ValueError, "'labels' is on the meta device \\(shapes only, no values\\)"),
    ("strings-edge-labels-float", lambda: kp.kong_strings(EI, [0, 1, 2], 2, edge_labels=1.5), TypeError,
     "'edge_labels' must be a sequence with one label per edge \\(got float\\)"),
    # unknown keywords named for the function called, not KongConfig.__init__
    ("gram-unknown-keyword", lambda: kp.gram_matrix(_graphs(), batch_size=8), TypeError,
     "^gram_matrix\\(\\) got an unexpected keyword argument 'batch_size'; its KONG options are k, hops"),
    ("order-test-unknown-keyword", lambda: kp.order_test(_graphs(), bogus=1), TypeError,
     "^order_test\\(\\) got an unexpected keyword argument 'bogus'"),
    # paths: an int was read as a file descriptor (2**70: OverflowError; 0: stdin)
    ("stream-checkpoint-int", lambda: kp.KongStream(dim=16).fit(SOURCE, checkpoint=2**70), TypeError,
     "'checkpoint' must be a file path, str, bytes or os.PathLike \\(got int\\)"),
    ("stream-save-none", lambda: kp.KongStream(dim=16).save(None), TypeError,
     "'path' must be a file path, str, bytes or os.PathLike \\(got NoneType\\)"),
    ("stream-load-none", lambda: kp.KongStream.load(None), TypeError, "'path' must be a file path"),
    ("load-tu-cache-float", lambda: __import__("kong_pyg.datasets", fromlist=["x"]).load_tu(
        "MUTAG", cache=1.5), TypeError,
     "'cache' must be a folder path, str, bytes or os.PathLike \\(got float\\)"),
    # the cause named, not a consequence
    ("classify-float-with-data-root", lambda: kp.classify(1.5, data_root="/tmp"), TypeError,
     "'dataset' must be a TU data set's name, a PyG dataset or a list of Data \\(got float\\)"),
    ("sketch-curve-not-graphs", lambda: kp.sketch_curve([1, 2], {"k": 1}), TypeError,
     "graph 0 is a int, not a torch_geometric.data.Data"),
    ("order-test-not-graphs", lambda: kp.order_test([1, 2]), TypeError,
     "graph 0 is a int, not a torch_geometric.data.Data"),
    ("evaluate-short-y", lambda: kp.evaluate_features({"a": np.ones((20, 4))}, [0, 1], splits=_splits()),
     ValueError, "features 'a' have 20 rows, y has 2"),
    ("evaluate-metrics-none", lambda: kp.evaluate_features({"a": np.ones((20, 4))}, np.arange(20) % 2,
                                                           splits=_splits(), metrics=None),
     TypeError, "'metrics' must be a metric's name or a list of them"),
    # the kernel's entries overflow, not the counts (1e161 here, finite as features)
    ("gram-overflow-names-entries", lambda: kp.gram_matrix([graph(
        x=torch.zeros(11, dtype=torch.long), edge_index=(1 - torch.eye(11)).nonzero().t())], k=1, hops=160),
     ValueError, "kernel matrix overflowed float64: .* its entries, inner products of the k-gram counts,"),
    # wording
    ("interactions-item-label-count", lambda: _log(num_item_labels=2), ValueError,
     "'num_item_labels' is 2 but an item label is 2"),
    ("stream-merge-none", lambda: kp.KongStream(dim=16).merge(None), TypeError,
     "take KongStream objects \\(got NoneType\\)"),
    # InteractionGraphs: scalars and None named plainly, meta columns, the transform checked up front
    ("interactions-user-none", lambda: _log(user=None), TypeError,
     "^'user' must be a 1-D tensor or sequence of numbers \\(got NoneType\\)$"),
    ("interactions-user-meta", lambda: _log(user=torch.zeros(30, dtype=torch.long, device="meta")),
     ValueError, "'user' is on the meta device"),
    ("interactions-transform-str", lambda: _log(transform="abc"), TypeError,
     "'transform' must be callable or None \\(got str\\)"),
    # NumPy arrays in a choice: "The truth value of an array ... is ambiguous"
    ("stream-dtype-array", lambda: kp.KongStream(dtype=np.array([1, 2])), TypeError,
     "'dtype' must be torch.float64 or torch.float32"),
    ("interactions-layout-array", lambda: _log(layout=np.array(["ego", "ego"])), TypeError,
     "'layout' must be a string, one of \\['ego', 'authors'\\] \\(got ndarray\\)"),
    # 0-d tensors and arrays are iterable by their type: PyTorch's "iteration over a 0-d tensor", unnamed
    ("classify-grid-0d", lambda: kp.classify(_graphs(), grid=torch.tensor(1)), TypeError,
     "^'grid' must be a preset's name, a dict of values or a list of dicts .*got Tensor"),
    ("classify-dataset-0d", lambda: kp.classify(torch.tensor(1)), TypeError,
     "^'dataset' must be a TU data set's name, a PyG dataset or a list of Data \\(got Tensor\\)$"),
    ("sketch-curve-graphs-0d", lambda: kp.sketch_curve(np.array(1), {}), TypeError,
     "^'graphs' must be a TU data set's name, a PyG dataset or a list of Data \\(got ndarray\\)$"),
    ("stream-fit-source-0d", lambda: kp.KongStream().fit(torch.tensor(1)), TypeError,
     "^'source' must be an EdgeStream .*\\(got Tensor\\)$"),
    # any truthy value downloaded ("no" too)
    ("load-tu-download-str", lambda: _load_tu("MUTAG", download="no"), TypeError,
     "^'download' must be True or False \\(got 'no'\\)$"),
    ("classify-download-str", lambda: kp.classify("MUTAG", download="no"), TypeError,
     "^'download' must be True or False \\(got 'no'\\)$"),
]


def _load_tu(*args, **kw):
    from kong_pyg.datasets import load_tu

    return load_tu(*args, **kw)


@pytest.mark.parametrize("id, call, error, match", CASES, ids=[c[0] for c in CASES])
def test_bad_input(id, call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_a_checkpoint_path_object_still_works(tmp_path):
    """The path check keeps os.PathLike paths (a pathlib.Path checkpoint) working."""
    path = tmp_path / "state.kong"
    ks = kp.KongStream(dim=16)
    ks.fit(SOURCE, checkpoint=path)
    ks.save(path)
    assert ks.sketches().abs().sum() > 0 and torch.equal(kp.KongStream.load(path).sketches(), ks.sketches())


def test_a_loader_given_to_the_transform_points_to_transform_dataset():
    from torch_geometric.loader import DataLoader

    with pytest.raises(TypeError, match="got DataLoader\\); for a loader's graphs, "
                                        "transform_dataset\\(loader.dataset\\)"):
        kp.KongFeatures(k=2, dim=16)(DataLoader(_graphs(4), batch_size=2))


def test_inputs_the_checks_keep():
    """Review: a bytes path and an empty edge tensor (no edges) worked before the new checks."""
    assert kp.kong_strings(torch.tensor([]), [0, 1], 1) == [[(0,), ()], [(1,), ()]]
    from kong_pyg.files import check_path

    assert check_path("path", b"/tmp/x.kong") == "/tmp/x.kong"


def test_the_same_bad_x_is_the_same_error_everywhere():
    """A 0-d x: transform_dataset raised TypeError where the other front-ends raise ValueError; review."""
    g = graph(x=torch.tensor(3), edge_index=EI, num_nodes=3)
    for call in (lambda: kp.KongFeatures(dim=16).transform_dataset([g]),
                 lambda: kp.KongVectorizer(dim=16).fit_transform([g]), lambda: kp.gram_matrix([g])):
        with pytest.raises(ValueError, match=f"graph 0: {NOT_A_TENSOR} \\(got a Tensor of shape \\[\\]\\)"):
            call()


def test_unknown_keywords_name_the_first_given_and_the_options_taken():
    """order_test listed 'order' and 'seed', which it refuses; the first unknown was the alphabetical one."""
    with pytest.raises(TypeError, match="unexpected keyword argument 'zz'; its KONG options are") as info:
        kp.order_test(_graphs(), zz=3, aa=1)
    listed = str(info.value).split("are ")[1].split(", ")
    assert "k" in listed and "order" not in listed and "seed" not in listed


@pytest.mark.parametrize("call, match", [
    (lambda: kp.KongStream(dim=16).update(torch.zeros(2, dtype=torch.long, device="meta"), ["a", "b"], [1, 2],
                                          ["b", "c"], ["e", "f"]), "'src' is on the meta device"),
    (lambda: kp.evaluate_features({"a": torch.zeros(20, 4, device="meta")}, np.arange(20) % 2,
                                  splits=_splits()), "on the meta device"),
    (lambda: kp.evaluate_features({"a": np.ones((20, 4))}, torch.zeros(20, device="meta"), splits=_splits()),
     "'y' is on the meta device"),
    (lambda: kp.order_test(_graphs(), y=torch.zeros(20, device="meta")), "'y' is on the meta device"),
])
def test_meta_tensors_as_data_are_named(call, match):
    """They gave PyTorch's 'Cannot copy out of meta tensor' or 'Tensor.item() cannot be called'."""
    with pytest.raises(ValueError, match=match):
        call()
