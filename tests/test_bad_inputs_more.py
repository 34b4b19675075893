"""Bad input found by the second adversarial pass, and one rule for every SVM C grid.

The same conventions as ``test_bad_inputs.py`` (whose helpers this file uses):
each case names the input, the exception class and a regex of the message.
"""
import warnings

import numpy as np
import pytest
import torch
from helpers import Collated
from test_bad_inputs import CommandFailed, _kong, cli, graph

from kong_pyg import KongSketch, KongStream, KongVectorizer, kong_strings


def _sketch_curve(**kw):
    def call(tmp):
        from kong_pyg import sketch_curve

        return sketch_curve([graph(y=torch.tensor([i % 2])) for i in range(8)], **{"params": {"k": 1}, **kw},
                            repeats=1, folds=2)

    return call


def _stream_fit(source, **kw):
    return lambda tmp: KongStream(k=2, hops=2, dim=16).fit(source, **kw)


def _evaluate(features, y):
    from kong_pyg import evaluate_features
    from kong_pyg.evaluation.splits import random_splits

    return evaluate_features(features, y, splits=random_splits(np.arange(20) % 2, 2), protocol="paper")


CASES = [
    ("sketch-curve-params-none", _sketch_curve(params=None), TypeError,
     "'params' must be a dict of KONG options, e.g. {'k': 2} \\(got NoneType\\)"),
    ("sketch-curve-sizes-twice", _sketch_curve(sizes=[4, 8, 4]), ValueError,
     "'sizes' must hold each sketch size once \\(got \\[4\\] more than once\\)"),
    ("sketch-curve-sizes-int", _sketch_curve(sizes=4), TypeError,
     "'sizes' must be a sequence of sketch sizes"),
    ("sketch-curve-exact-no", _sketch_curve(exact="no"), TypeError, "'exact' must be True or False"),
    ("sketch-curve-progress-no", _sketch_curve(progress="no"), TypeError, "'progress' must be True or False"),
    ("cross-validate-progress-no",
     lambda tmp: _kong("cross_validate")([np.eye(8)], [0, 1] * 4, repeats=1, folds=2, progress="no"),
     TypeError, "'progress' must be True or False \\(got 'no'\\)"),
    ("expand-grid-int", lambda tmp: _kong("expand_grid")("kong", 5), TypeError,
     "'grid' must be a preset's name, a dict of values or a list of dicts \\(one per setting; got int\\)"),
    ("expand-grid-list-of-int", lambda tmp: _kong("expand_grid")("kong", [{"k": 1}, 5]), TypeError,
     "got a list holding int"),
    ("replay-checksum-offset-str", lambda tmp: KongStream(k=2, dim=16).replay_checksum(
        [0], [1], [1], [1], [0], offset="a"), TypeError, "'offset' must be an integer \\(got str\\)"),
    ("replay-checksum-offset-negative", lambda tmp: KongStream(k=2, dim=16).replay_checksum(
        [0], [1], [1], [1], [0], offset=-1), ValueError, "'offset' must be >= 0 \\(got -1\\)"),
    ("stream-fit-callable-returns-none", _stream_fit(lambda: None), TypeError,
     "'source', a callable, must return a fresh iterable of chunks each time it is called \\(it returned "
     "NoneType\\)"),
    ("stream-fit-path", _stream_fit("/tmp/edges.tsv"), TypeError,
     "'source' must hold edges, not name a file .*read_streamspot"),
    ("stream-fit-dict-without-columns", _stream_fit({"a": [1]}), ValueError,
     "'source', a dict, is read as one chunk of columns and must hold"),
    ("stream-fit-chunk-str", _stream_fit(["abc"]), TypeError,
     "a chunk of edges must be a tuple .*\\(got str\\)"),
    ("stream-fit-progress-no", _stream_fit([], progress="no"), TypeError, "'progress' must be True or False"),
    ("kgram-counts-str", lambda tmp: __import__("kong_pyg").kgram_counts("abc", 2), TypeError,
     "'string' must be a node's string as kong_strings gives it.*\\(got str\\)"),
    ("kgram-counts-list-of-lists", lambda tmp: __import__("kong_pyg").kgram_counts([[1, 2]], 2), TypeError,
     "'string' as a list must hold one tuple of labels per BFS level"),
    ("compact-graphs-ints", lambda tmp: _kong("compact_graphs")([1, 2]), TypeError,
     "graph 0 is not a torch_geometric.data.Data \\(got int\\)"),
    ("cli-list-empty-item", cli("classify", "-q", "--C", "1,,2"), CommandFailed,
     "exit 2: .*--C: an empty item in the comma-separated list '1,,2'"),
    ("vectorizer-progress-yes", lambda tmp: KongVectorizer(k=2, progress="yes").fit_transform([graph()]),
     TypeError, "'progress' must be True or False \\(got 'yes'\\)"),
    ("cli-plot-sizes-twice", cli("classify", "-q", "--plot", "{tmp}/c.png", "--plot-sizes", "16,32,16"),
     CommandFailed,
     "exit 2: .*--plot-sizes: lists 16 twice \\(in '16,32,16'\\); give each value once"),
    ("cli-c-twice", cli("classify", "-q", "--C", "1,1.0"), CommandFailed,
     "exit 2: .*--C: lists one value twice, as 1 and 1.0 \\(in '1,1.0'\\); give each value once"),
    ("cli-kong-list-twice", cli("classify", "-q", "--k", "1,2,1"), CommandFailed,
     "exit 2: .*--k: lists 1 twice \\(in '1,2,1'\\)"),
    ("cli-kong-range-twice", cli("classify", "-q", "--hops", "1-3,2"), CommandFailed,
     "exit 2: .*--hops: lists 2 twice"),
    ("cli-table2-curve-one-split", cli("table2", "--ml-dir", "{tmp}", "--curve-splits", "1"), CommandFailed,
     "exit 2: .*--curve-splits: 0 \\(no curve\\) or at least 2"),
    ("cli-table2-fractions-without-curve",
     cli("table2", "--ml-dir", "{tmp}", "--curve-splits", "0", "--fractions", "0.5"), CommandFailed,
     "exit 2: .*--fractions: the curve's training fractions, but --curve-splits 0 draws no curve"),
    ("cli-table2-methods-twice", cli("table2", "--ml-dir", "{tmp}", "--methods", "K-1,K-1"), CommandFailed,
     "exit 2: .*--methods: lists K-1 twice"),
    ("transform-dataset-progress-no",
     lambda tmp: __import__("kong_pyg").KongFeatures(k=2, dim=8).transform_dataset([graph()], progress="no"),
     TypeError, "'progress' must be True or False \\(got 'no'\\)"),
    ("vectorizer-uint32-edge-index",
     lambda tmp: KongVectorizer(k=2).fit_transform([graph(edge_index=torch.tensor([[0, 1], [1, 2]]).to(
         torch.uint32))] * 2),
     TypeError, "graph 0: 'edge_index' must hold integer node indices \\(torch.long, or int32, int16, "
                "int8, uint8\\) \\(got torch.uint32\\)"),
    ("random-splits-test-size-too-small",
     lambda tmp: __import__("kong_pyg.evaluation.splits", fromlist=["random_splits"]).random_splits(
         np.array([0, 1] * 10), 2, test_size=0.01),
     ValueError, "'test_size' 0.01 gives 1 test and 19 training graphs of 20; a stratified split needs"),
    ("cli-classify-download-without-dataset", cli("classify", "-q", "--download"), CommandFailed,
     "exit 2: .*--download needs --dataset NAME"),
    ("order-test-test-size-too-small",
     lambda tmp: _kong("order_test")([graph(y=torch.tensor([i % 2])) for i in range(20)], test_size=0.01),
     ValueError, "'test_size' 0.01 gives 1 test and 19 training graphs of 20; a stratified split needs"),
    ("cli-classify-plot-empty", cli("classify", "-q", "--plot", ""), CommandFailed,
     "exit 2: .*--plot: the file name is empty"),
    ("cli-classify-plot-folder-name", cli("classify", "-q", "--plot", "new dir/"), CommandFailed,
     "exit 2: .*--plot: 'new dir/' is a folder, not a file"),
    ("cli-classify-plot-no-suffix", cli("classify", "-q", "--plot", "curve"), CommandFailed,
     "exit 2: .*--plot: 'curve' has no suffix; name the image with its format, such as curve.png"),
    ("gram-matrix-other-empty", lambda tmp: _kong("gram_matrix")([graph()], []), ValueError,
     "^'other' is empty$"),
    ("gram-matrix-empty-graph-of-other",
     lambda tmp: _kong("gram_matrix")([graph()], [graph(), graph(x=torch.zeros(0, dtype=torch.long),
                                                             edge_index=torch.zeros(2, 0).long())]),
     ValueError, "^graph 1 of 'other' is empty"),
    ("gram-matrix-non-graph-in-other", lambda tmp: _kong("gram_matrix")([graph()], [graph(), "x"]), TypeError,
     "^graph 1 of 'other' is a str"),
    ("kong-features-config-without-dim",
     lambda tmp: _kong("KongFeatures")(config=_kong("KongConfig")(k=2)), ValueError,
     "KongFeatures computes sketches: 'dim' must be a sketch size .*KongConfig\\(dim=1024"),
    ("provenance-negative-seed", lambda tmp: __import__("kong_pyg.datasets", fromlist=["x"]).ProvenanceGraphs(
        4, seed=-1), ValueError, "'seed' must be >= 0 \\(got -1\\)"),
    ("evaluate-features-list", lambda tmp: _evaluate([np.eye(20)], np.arange(20) % 2), TypeError,
     "'features' must be a mapping of names to features .*got list"),
    ("evaluate-features-2d-y", lambda tmp: _evaluate({"a": np.eye(20)}, np.stack([np.arange(20) % 2] * 2, 1)),
     ValueError, "'y' must be one class label per graph, a 1-D array \\(got shape \\(20, 2\\)\\)"),
    ("stream-big-endian-ids-beyond-int64", lambda tmp: KongStream(k=2, dim=16).update(
        [1, 2], [0, 1], [2, 1], [1, 0], [0, 0], np.array([2**63 + 1] * 2, dtype=">u8")), ValueError,
     "'graph' holds ids >= 2\\^63"),
    ("kong-strings-sparse-adjacency", lambda tmp: _kong("kong_strings")(
        torch.tensor([[0., 1], [1, 0]]).to_sparse(), [0, 1], hops=1), TypeError,
     "'edge_index' must be a dense \\[2, num_edges\\] tensor in edge order \\(got a sparse_coo tensor"),
    ("vectorizer-batch-after-subgraph", lambda tmp: KongVectorizer(k=2, dim=8).fit_transform(
        _two_graph_batch().subgraph(torch.tensor([True, True, False, True, True]))), ValueError,
     "'graphs' is a Batch whose recorded graph slices do not match its 'batch' vector"),
    ("gram-matrix-batch-with-edited-ptr", lambda tmp: _kong("gram_matrix")(_edited_ptr(), k=2), ValueError,
     "'graphs' is a Batch whose recorded graph slices do not match"),
    ("vectorizer-hand-built-batch", lambda tmp: KongVectorizer(k=2).fit_transform(__import__(
        "torch_geometric.data", fromlist=["Batch"]).Batch(x=torch.tensor([0, 1, 2]), edge_index=torch.tensor(
            [[1, 2], [0, 0]]), batch=torch.zeros(3, dtype=torch.long))), ValueError,
     "'graphs' is a Batch that PyG cannot split back into its graphs \\(Cannot reconstruct 'Data' object"),
    ("quantized-labels", lambda tmp: KongVectorizer(k=2).fit_transform([graph(x=torch.quantize_per_tensor(
        torch.tensor([0., 1., 2.]), 1.0, 0, torch.quint8))]), TypeError,
     "graph 0: 'x' is a quantized tensor \\(torch.quint8\\): pass its values"),
    # nested tensors are strided but have no shape: each entry point names the argument
    ("nested-x-vectorizer", lambda tmp: KongVectorizer(k=2).fit_transform(
        [graph(x=_nested([0, 1], [1, 0, 1]))]), TypeError,
     "graph 0: 'x' must be a regular tensor, not a nested tensor"),
    ("nested-x-sketch", lambda tmp: KongSketch(k=2, dim=16)(
        _nested([0, 1], [1, 0, 1]), torch.tensor([[0], [1]])), TypeError,
     "^'x' must be a regular tensor, not a nested tensor"),
    # (more nodes than parts: the edges were checked against size(0), the number of parts, first)
    ("nested-x-sketch-more-nodes", lambda tmp: KongSketch(k=2, dim=16)(
        _nested([0, 1], [1, 0]), torch.tensor([[0, 1, 2, 3], [1, 2, 3, 0]])), TypeError,
     "^'x' must be a regular tensor, not a nested tensor"),
    ("nested-x-readout-batch", lambda tmp: KongSketch(k=2, dim=16).readout(
        _nested([0, 1], [1, 0]), torch.tensor([[0, 1, 2, 3], [1, 2, 3, 0]]),
        batch=torch.tensor([0, 0, 1, 1])),
     TypeError, "^'x' must be a regular tensor, not a nested tensor"),
    ("nested-batch", lambda tmp: KongSketch(k=2, dim=16).readout(
        torch.tensor([0, 1, 2, 1]), torch.tensor([[0, 1, 2, 3], [1, 2, 3, 0]]),
        batch=_nested([0, 0], [1, 1])),
     TypeError, "^'batch' must be a regular tensor, not a nested tensor"),
    ("nested-labels-strings", lambda tmp: kong_strings(
        torch.tensor([[0, 1], [1, 0]]), _nested([0], [1]), hops=1),
     TypeError, "^'labels' must be a regular tensor, not a nested tensor"),
    ("neighbor-loader-graphs", lambda tmp: KongVectorizer(k=2).fit_transform(__import__(
        "torch_geometric.loader", fromlist=["NeighborLoader"]).NeighborLoader(
            graph(), num_neighbors=[2], batch_size=2)), TypeError,
     "\\(got NeighborLoader\\): a loader of sampled subgraphs .* on the whole graph \\(loader.data\\)"),
    ("nested-edge-index-sketch", lambda tmp: KongSketch(k=2, dim=16)(
        torch.tensor([0, 1]), _nested([0, 1], [1, 0])), TypeError,
     "^'edge_index' must be a regular tensor, not a nested tensor"),
    ("nested-edge-index-vectorizer", lambda tmp: KongVectorizer(k=2).fit_transform(
        [graph(), graph(x=torch.tensor([0, 1]), edge_index=_nested([0, 1], [1, 0]))]), TypeError,
     "graph 1: 'edge_index' must be a regular tensor, not a nested tensor"),
    ("nested-edge-attr-vectorizer", lambda tmp: KongVectorizer(k=2, edge_labels=True).fit_transform(
        [graph(edge_attr=torch.tensor([0, 1])), graph(edge_attr=_nested([0], [1]))]), TypeError,
     "graph 1: 'edge_attr' must be a regular tensor, not a nested tensor"),
    ("nested-edge-order-vectorizer", lambda tmp: KongVectorizer(k=2, edge_order_attr="t").fit_transform(
        [graph(t=torch.tensor([0, 1])), graph(t=_nested([0], [1]))]), TypeError,
     "graph 1: 't' must be a regular tensor, not a nested tensor"),
    # what to do next, in the refusal
    ("generator-graphs", lambda tmp: KongVectorizer(k=2).fit_transform(g for g in [graph()]), TypeError,
     "\\(got generator\\): pass list\\(...\\) of it$"),
    ("loader-graphs", lambda tmp: KongVectorizer(k=2).fit_transform(__import__(
        "torch_geometric.loader", fromlist=["DataLoader"]).DataLoader([graph(), graph()], batch_size=2)),
     TypeError, "\\(got DataLoader\\): pass the loader's dataset \\(loader.dataset\\)"),
    ("continuous-x", lambda tmp: KongVectorizer(k=2).fit_transform(
        [graph(x=torch.tensor([[0.5], [1.5], [2.]]))]), TypeError,
     "\\(row 0: non-zero values \\[0.5\\]\\); KONG needs discrete labels \\(integers or one-hot\\): "
     "discretize them first \\(.long\\(\\) where they are whole numbers"),
    ("zero-row-x", lambda tmp: KongVectorizer(k=2).fit_transform([graph(x=torch.zeros(3, 2))]), TypeError,
     "\\(row 0: all zeros\\)"),
    ("continuous-edge-attr", lambda tmp: KongVectorizer(k=2, edge_labels=True).fit_transform(
        [graph(edge_attr=torch.tensor([[0.5], [0.25]]))]), TypeError,
     "discretize them first .*, or read the graphs without edge labels \\(edge_labels=False\\)$"),
    ("nested-edge-index-strings", lambda tmp: kong_strings(
        _nested([0, 1], [1, 0]), [0, 1], hops=1), TypeError,
     "^'edge_index' must be a regular tensor, not a nested tensor"),
]


def _nested(*rows):
    return torch.nested.nested_tensor([torch.tensor(r) for r in rows])


def _two_graph_batch():
    from torch_geometric.data import Batch, Data

    return Batch.from_data_list([Data(x=torch.tensor([0, 1, 2]), edge_index=torch.tensor([[1, 2], [0, 0]])),
                                 Data(x=torch.tensor([1, 1]), edge_index=torch.tensor([[1], [0]]))])


def _edited_ptr():
    b = _two_graph_batch()
    del b._num_graphs
    b.ptr = torch.tensor([0, 5])  # (one graph by ptr, two by 'batch': the split gave graph 0 alone)
    return b


@pytest.mark.parametrize("id, call, error, match", CASES, ids=[c[0] for c in CASES])
def test_bad_input(id, call, error, match, tmp_path):
    with pytest.raises(error, match=match):
        call(tmp_path)


def test_the_case_ids_are_unique():
    assert len({c[0] for c in CASES}) == len(CASES) >= 20


def test_a_dict_of_columns_is_one_chunk_of_a_stream():
    cols = {"src": [0, 1], "src_type": [1, 1], "dst": [1, 2], "dst_type": [1, 1], "edge_type": [0, 0]}
    a, b = KongStream(k=2, hops=2, dim=16, seed=3), KongStream(k=2, hops=2, dim=16, seed=3)
    a.fit(cols)
    b.fit([cols])
    assert torch.equal(a.sketches(), b.sketches()) and a.num_edges == 2 and a.sketches().abs().sum() > 0


def test_a_streamspot_header_line_is_read_as_an_edge_with_a_warning(tmp_path, capsys):
    from kong_pyg.datasets import read_streamspot

    body = "1\ta\t2\tb\tc\t0\n2\tb\t3\ta\tc\t0\n"
    (tmp_path / "h.tsv").write_text("src\tsrc_type\tdst\tdst_type\tedge_type\tgraph_id\n" + body)
    with pytest.warns(UserWarning, match="the first line looks like a header: its graph id 'graph_id'"):
        stream, _, _ = read_streamspot(str(tmp_path / "h.tsv"))
    assert stream.graph_ids == ["graph_id", "0"]
    from kong_pyg.cli import main

    assert main(["stream", str(tmp_path / "h.tsv"), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    assert "warning: the first line looks like a header" in capsys.readouterr().err
    (tmp_path / "ok.tsv").write_text(body)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_streamspot(str(tmp_path / "ok.tsv"))[0].graph_ids == ["0"]
    # ids that are not numbers: the header's id is the only one not of the others' form
    named_body = "p1\tproc\tf1\tfile\tread\ttrace12\np2\tproc\tf2\tfile\tread\ttrace7\n"
    (tmp_path / "h2.tsv").write_text("src\tsrc_type\tdst\tdst_type\tedge_type\tgraph_id\n" + named_body)
    with pytest.warns(UserWarning, match="its graph id 'graph_id' is the only one that is not of the others' "
                                         "form \\(such as 'trace12'\\)"):
        read_streamspot(str(tmp_path / "h2.tsv"))
    (tmp_path / "ok2.tsv").write_text(named_body + "p3\tproc\tf3\tfile\tread\trun3\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no header: no id stands alone, or the ids have several forms)
        read_streamspot(str(tmp_path / "ok2.tsv"))
        (tmp_path / "ok3.tsv").write_text("p0\tproc\tf0\tfile\tread\trun3\n" + named_body)
        read_streamspot(str(tmp_path / "ok3.tsv"))
    from kong_pyg.datasets.streamspot.reader import header_note

    assert header_note(["benign", "attack"], 1) is None  # (two named graphs: no form to compare)
    assert header_note(["x0", "trace1", "trace2"], 1) is None  # (the first id holds a number too)
    assert header_note(["gid", "trace1", "trace2"], 1) is not None and header_note(["gid", "1", "2"], 1)
    # a first graph of several edges is no header: the command said it was, advising to remove an edge
    (tmp_path / "named.tsv").write_text("1\ta\t2\tb\tc\tA\n2\tb\t3\tc\td\tA\n" + body)
    assert main(["stream", str(tmp_path / "named.tsv"), "--out", str(tmp_path / "named"), "--quiet"]) == 0
    assert "looks like a header" not in capsys.readouterr().err
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert read_streamspot(str(tmp_path / "named.tsv"))[0].graph_ids == ["A", "0"]


# ---------------------------------------------------------------------------
# one rule for every C grid (config.check_c_grid)
# ---------------------------------------------------------------------------


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the graphs have no per-edge key: a warning, not the point here
        return fn(*args, **kwargs)


def _c_grid_entry_points():
    """Per function taking a C grid: (its argument's name, a call returning comparable scores)."""
    from kong_pyg import cross_validate, order_test
    from kong_pyg.evaluation.harness import evaluate_features
    from kong_pyg.evaluation.splits import make_splits
    from kong_pyg.evaluation.svm import design, fit_many
    from kong_pyg.experiments.table2 import method_grids

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(12, 3)), np.array([0, 1] * 6)
    splits = make_splits(y, repeats=1, folds=2, inner_folds=2, seed=0)
    train = np.ones((1, 12), bool)
    train[0, :4] = False
    ordered = [graph(y=torch.tensor([i % 2]), edge_index=torch.tensor([[0, 1, 2], [1, 2, 0]]) if i % 2
                     else torch.tensor([[2, 1, 0], [1, 0, 2]])) for i in range(10)]
    return {
        "cross_validate": ("C", lambda C: cross_validate([X], y, repeats=1, folds=2, inner_folds=2,
                                                         C=C).outer),
        "evaluate_features": ("Cs", lambda C: evaluate_features({"X": X}, y, splits=splits,
                                                                Cs=C)["X"].scores),
        "order_test": ("C", lambda C: _quiet(order_test, ordered, splits=2, shuffles=1, inner_folds=2,
                                             reverse=False, C=C).scores),
        "fit_many": ("Cs", lambda C: fit_many(design(X), y, train, C).scores),
        "run_table2": ("C_grid", lambda C: method_grids(["K-1"], C_grid=C)),
    }


BAD_GRIDS = {"empty": [], "zero": [0.0], "negative": [-1], "inf": [float("inf")], "nan": [float("nan")],
             "bool": [True], "str": ["1"], "complex": [1j], "overflow": [10**400]}


@pytest.mark.parametrize("bad", list(BAD_GRIDS.values()), ids=list(BAD_GRIDS))
def test_every_c_grid_refuses_the_same_values_with_the_same_message(bad):
    for where, (name, call) in _c_grid_entry_points().items():
        with pytest.raises(ValueError, match=f"^'{name}' must be positive numbers, finite and at least one"):
            call(bad)


def test_every_c_grid_takes_the_same_forms_and_refuses_the_same_types():
    from fractions import Fraction

    for where, (name, call) in _c_grid_entry_points().items():
        for bad in ("1", {1: 2}, {0.5, 2.0}, np.ones((2, 2)), True):  # (None: the default grid)
            with pytest.raises(TypeError, match=f"^'{name}' must be a positive number or a sequence of them"):
                call(bad)
        ref = call([0.5, 2.0])
        for same in (np.array([0.5, 2.0]), torch.tensor([0.5, 2.0], dtype=torch.float64), (Fraction(1, 2), 2),
                     (c for c in [0.5, 2.0]), [np.float64(0.5), torch.tensor(2)]):
            got = call(same)
            assert str(got) == str(ref) if isinstance(ref, dict) else np.array_equal(np.asarray(got),
                                                                                      np.asarray(ref)), where
        one = call(2.0)  # a single number is a one-value grid
        assert str(one) == str(call([2.0])) if isinstance(one, dict) else np.array_equal(
            np.asarray(one), np.asarray(call([2.0]))), where


def test_a_bad_progress_flag_leaves_a_checkpointed_stream_as_it_was(tmp_path):
    cols = {"src": [0, 1], "src_type": [1, 1], "dst": [1, 2], "dst_type": [1, 1], "edge_type": [0, 0]}
    done = KongStream(k=2, hops=1, dim=16)
    done.fit(cols)
    done.save(tmp_path / "ck.pt")
    fresh = KongStream(k=2, hops=1, dim=16)
    with pytest.raises(TypeError, match="'progress' must be True or False"):
        fresh.fit(cols, checkpoint=tmp_path / "ck.pt", progress="no")
    assert fresh.num_edges == 0


def test_half_precision_torch_gram_matrices_are_checked_at_their_own_rounding():
    # a torch float16 or bfloat16 X X^T (autocast's) is a kernel matrix: its rounding is no negative
    # eigenvalue. NumPy holds neither as given (bfloat16 not at all): they were read as float64 and
    # refused as not positive semi-definite; kernel_map gave PyTorch's 'unsupported ScalarType'
    import numpy as np
    import torch

    from kong_pyg import cross_validate
    from kong_pyg.evaluation.features import Gram, kernel_map
    from kong_pyg.evaluation.svm import design

    X = torch.randn(60, 6, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    y = np.arange(60) % 2
    for dtype in (torch.float16, torch.bfloat16):
        K = (X @ X.T).to(dtype)
        res = cross_validate([Gram(K)], y, repeats=1, folds=3, nested=False)
        assert res.outer.size and np.isfinite(res.outer).all()
        psi, top = kernel_map(K, given=True), float(K.double().abs().max())
        # (its positive part: the rounding's small negative eigenvalues are dropped)
        assert np.abs(psi @ psi.T - K.double().numpy()).max() <= 1e3 * torch.finfo(dtype).eps * top
        # a clearly indefinite matrix still is refused
        with pytest.raises(ValueError, match="not positive semi-definite"):
            cross_validate([Gram((X @ X.T - 30 * torch.eye(60, dtype=torch.float64)).to(dtype))], y,
                           repeats=1, folds=3, nested=False)
    # the precision as given travels with the Gram (design and design_matrix read it); a Gram stays a
    # pair (K, source) and pickles with it
    import pickle

    from kong_pyg.evaluation.features import checked_features, design_matrix

    widened = checked_features(Gram((X @ X.T).to(torch.bfloat16), "bf16"), 60, "x")
    assert widened.K.dtype == np.float64 and widened.eps == torch.finfo(torch.bfloat16).eps
    assert pickle.loads(pickle.dumps(widened)).eps == widened.eps
    design_matrix(widened)
    K, source = widened
    assert source == "bf16" and Gram(K).eps is None
    with pytest.raises(ValueError, match="not positive semi-definite"):
        design(None, np.diag([5.0, 1.0, -0.01, -0.01]))
    design(None, np.diag([5.0, 1.0, -0.01, -0.01]), eps=float(torch.finfo(torch.bfloat16).eps))


def test_cross_validate_names_a_single_gram_matrix():
    # a Gram is a named tuple: it was read as a list of two settings ('setting 1 ... got str')
    import numpy as np

    from kong_pyg import cross_validate
    from kong_pyg.evaluation.features import Gram

    with pytest.raises(TypeError, match=r"one entry per setting .*got Gram\): wrap one matrix as \[X\]"):
        cross_validate(Gram(np.eye(6)), np.arange(6) % 2, repeats=1, folds=2)


def test_big_endian_columns_and_lazily_negated_tensors_read_as_the_plain_ones():
    """NumPy arrays in the other byte order and tensors with PyTorch's negative bit hold the same numbers."""
    from kong_pyg import KongSketch, kernel_matrix
    from kong_pyg.datasets import InteractionGraphs

    u, i, t = np.array([0, 1, 0, 1]), np.array([0, 0, 1, 1]), np.array([1.0, 2.0, 3.0, 4.0])
    plain = InteractionGraphs(u, i, t, [0, 1], [0, 1], [0, 1])
    big = InteractionGraphs(u.astype(">i8"), i.astype(">u4"), t.astype(">f8"), np.array([0, 1], dtype=">i8"),
                            [0, 1], np.array([0, 1], dtype=">i4"))
    for a, b in zip(plain, big):
        assert all(torch.equal(a[key], b[key]) for key in ("x", "edge_index", "y"))
    edges = torch.tensor([[1, 2], [0, 0]])
    negated = torch._neg_view(-edges)  # (the same values, read through the negative bit)
    x, batch = torch.tensor([0, 1, 2]), torch.zeros(3, dtype=torch.long)
    layer = KongSketch(k=2, dim=8)
    assert torch.equal(layer.readout(x, negated, batch), layer.readout(x, edges, batch))
    cols = ([0, 1], torch.tensor([2, 1]), [1, 0], [0, 0], [0, 0])
    sources = torch.tensor([1, 2])
    assert torch.equal(KongStream(k=2, dim=8).update(torch._neg_view(-sources), *cols).sketches(),
                       KongStream(k=2, dim=8).update(sources, *cols).sketches())
    features = torch.tensor([[1.0, 2.0], [3.0, 5.0]])
    assert np.array_equal(kernel_matrix(torch._neg_view(-features)), kernel_matrix(features))


def test_a_batch_of_graphs_with_more_nodes_than_label_rows_reads_as_the_list():
    """PyG builds a Batch's 'batch' and 'ptr' from num_nodes, its x slices from x's rows: both can differ."""
    from torch_geometric.data import Batch, Data

    d = Data(x=torch.zeros(3, dtype=torch.long), edge_index=torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]]),
             num_nodes=4)
    listed = KongVectorizer(k=2).fit_transform([d, d])
    assert (KongVectorizer(k=2).fit_transform(Batch.from_data_list([d, d])) != listed).nnz == 0


def test_the_storage_note_goes_only_on_refusals_that_number_a_graph():
    from torch_geometric.data import Data

    from kong_pyg import KongFeatures

    def path(bad=False):
        return Data(x=torch.tensor([0, 1, 2]), edge_index=torch.tensor([[0, 1], [1, 2]]),
                    edge_order=torch.tensor([1.0, float("nan") if bad else 2.0]))

    ds = Collated([path(), path(), path(), path(True), path()])
    with pytest.raises(ValueError) as err:
        KongFeatures(dim=8, level="graph").transform_dataset(ds[[0, 1]])
    assert "NaN" in str(err.value) and "graph numbers count" not in str(err.value)
