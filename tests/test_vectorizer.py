import os
import random
import shutil

import numpy as np
import pytest
import torch
from helpers import random_graph, to_data
from sklearn.base import clone
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC
from torch_geometric.data import Data, InMemoryDataset

from kong_pyg import KongVectorizer

SHARED_TU = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "tu")


class ListDataset(InMemoryDataset):
    def __init__(self, root, graphs, transform=None):
        self._graphs = graphs
        super().__init__(root, transform)
        self.load(self.processed_paths[0])

    @property
    def processed_file_names(self):
        return ["data.pt"]

    def process(self):
        self.save(self._graphs, self.processed_paths[0])


def _graphs(seed, count=30, **kw):
    rng = random.Random(seed)
    out = []
    for i in range(count):
        d = to_data(random_graph(rng, edge_labels=True, **kw))
        d.edge_order = torch.randperm(d.edge_index.size(1), generator=torch.Generator().manual_seed(i))
        d.y = torch.tensor([i % 2])
        out.append(d)
    return out


@pytest.mark.parametrize("dim", [None, 64])
def test_in_memory_dataset_fast_path_equals_list_path(tmp_path, dim):
    graphs = _graphs(1)
    ds = ListDataset(str(tmp_path), graphs)
    vec = dict(k=2, hops=2, dim=dim, batch_size=7)
    for subset in (ds, ds[::3], ds[torch.randperm(len(ds), generator=torch.Generator().manual_seed(0))]):
        a = KongVectorizer(**vec).fit_transform(subset)
        b = KongVectorizer(**vec).fit_transform([subset[i] for i in range(len(subset))])
        if dim is None:
            a, b = a.toarray(), b.toarray()
        np.testing.assert_array_equal(a, b)
    # with a transform, the per-graph path runs (and applies it)
    t = ListDataset(str(tmp_path), graphs, transform=lambda d: d)
    dense = lambda X: X.toarray() if dim is None else X  # noqa: E731
    np.testing.assert_array_equal(
        dense(KongVectorizer(**vec).fit_transform(t)), dense(KongVectorizer(**vec).fit_transform(ds))
    )


def test_scikit_learn_pipeline_and_clone():
    graphs = _graphs(2, count=40)
    y = np.array([int(d.y) for d in graphs])
    pipe = make_pipeline(KongVectorizer(k=2, hops=1, normalize=True), LinearSVC(C=1.0))
    scores = cross_val_score(pipe, graphs, y, cv=2)
    assert scores.shape == (2,)
    c = clone(KongVectorizer(k=3, dim=128, traversal="wl"))
    assert c.get_params()["k"] == 3 and c.get_params()["dim"] == 128


def test_feature_names_and_shapes():
    graphs = _graphs(3, count=5)
    vec = KongVectorizer(k=2, hops=1, degree=2, const=1.0)
    X = vec.fit_transform(graphs)
    names = vec.get_feature_names_out()
    assert X.shape == (5, len(names)) == (5, vec.n_features_out_)
    assert any(n == "const*const" for n in names)
    assert any(n.startswith("L1:") for n in names)
    sk = KongVectorizer(dim=16).fit(graphs)
    assert sk.get_feature_names_out().shape == (16,)


def test_normalize_gives_unit_rows():
    graphs = _graphs(4, count=6)
    for dim in (None, 32):
        X = KongVectorizer(k=2, normalize=True, dim=dim).fit_transform(graphs)
        X = X.toarray() if dim is None else X
        norms = np.linalg.norm(X, axis=1)
        assert np.allclose(norms[norms > 0], 1.0)


def test_progress_bar(capsys):
    KongVectorizer(progress=True, batch_size=2).fit_transform(_graphs(5, count=5))
    assert "KONG features" in capsys.readouterr().err


@pytest.mark.skipif(not os.path.isdir(SHARED_TU), reason="shared TU data not present")
def test_mutag_from_raw_files(tmp_path):
    from torch_geometric.datasets import TUDataset

    shutil.copytree(os.path.join(SHARED_TU, "MUTAG"), tmp_path / "MUTAG")
    ds = TUDataset(str(tmp_path), "MUTAG")
    X = KongVectorizer(k=1, hops=2).fit_transform(ds)
    assert X.shape[0] == 188
    # node label counts at level 0: the total number of nodes
    vec = KongVectorizer(k=1, hops=0, edge_labels=False)
    assert vec.fit_transform(ds).sum() == ds._data.x.size(0)


@pytest.mark.parametrize("options", [dict(k=2), dict(k=2, degree=2, normalize=True),
                                     dict(k=1, dim=64, relabel=True)])
def test_feature_map_is_the_vectorizer_without_scikit_learn(options):
    from kong_pyg import KongConfig
    from kong_pyg.featuremap import FeatureMap

    rng = random.Random(3)
    graphs = [to_data(random_graph(rng, 7, 12)) for _ in range(12)]
    vec = KongVectorizer(**options)
    fmap = FeatureMap(vec._config())
    for a, b in [(vec.fit_transform(graphs[:8]), fmap.fit_transform(graphs[:8])),
                 (vec.transform(graphs[8:]), fmap.transform(graphs[8:]))]:
        a = a.toarray() if hasattr(a, "toarray") else a
        b = b.toarray() if hasattr(b, "toarray") else b
        assert np.array_equal(a, b)
    assert fmap.n_features_out_ == vec.n_features_out_
    assert list(fmap._feature_names()) == list(vec.get_feature_names_out())
    with pytest.raises(TypeError, match="'config' must be a KongConfig"):
        FeatureMap(options)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="fit_transform first"):
        FeatureMap(KongConfig()).transform(graphs)


@pytest.mark.parametrize("options", [
    dict(k=1, hops=2), dict(k=2, hops=2), dict(k=3, hops=2, degree=2), dict(k=2, hops=1, degree=3, const=1.0),
    dict(k=2, hops=2, traversal="wl", degree=2), dict(k=2, hops=2, relabel=1, order="degree", normalize=True),
])
def test_exact_columns_do_not_depend_on_batch_size_or_graph_order(options):
    """A fit over several batches numbers its columns (and names them) as one batch does: by level, gram
    length and symbol codes, multisets by their grams. Rows, names and later transforms are identical."""
    graphs = _graphs(7, count=40, max_nodes=7, num_labels=4)
    one = KongVectorizer(**options)
    X = one.fit_transform(graphs)
    names = list(one.get_feature_names_out())
    perm = list(range(len(graphs)))
    random.Random(3).shuffle(perm)
    shuffled = [graphs[i] for i in perm]
    for batch_size in (1, 3, 16):
        many = KongVectorizer(batch_size=batch_size, **options)
        Y = many.fit_transform(shuffled)
        assert list(many.get_feature_names_out()) == names, batch_size
        assert (Y != X[perm]).nnz == 0 and (many.transform(graphs) != X).nnz == 0, batch_size
        assert (one.transform(shuffled) != Y).nnz == 0
    # names are in column order: a gram's level, then its length, then its symbols
    if options.get("degree", 1) == 1:
        def key(name):
            level, gram = name.split(":", 1) if ":" in name else ("L0", name)
            symbols = [2 * int(s) if s[0] != "e" else 2 * int(s[1:]) + 1 for s in gram.split(",")]
            return int(level[1:]), len(symbols), symbols
        assert names == sorted(names, key=key)


def test_graphs_whose_labels_differ_in_layout_give_their_own_rows_in_any_batch():
    """Integer labels in one graph and one-hot rows (of any width) in another are the same symbols, read
    graph by graph (a one-hot row is the index of its 1), so a mixed collection gives every graph the row it
    gives alone (the default batch refused it where batch_size=1 took it); an edgeless graph's empty float
    'edge_attr' holds no values (alone it was refused as floating-point labels, and without its graph)."""
    ei = torch.tensor([[1, 2, 0, 2, 0, 1], [0, 0, 1, 1, 2, 2]])
    a = Data(x=torch.tensor([0, 1, 2]), edge_index=ei)
    b = Data(x=torch.eye(3), edge_index=ei)
    c = Data(x=torch.eye(5)[[2, 0, 0]], edge_index=ei)  # (one-hot rows of another width, other labels)
    d = Data(x=torch.tensor([[0], [1], [2]]), edge_index=ei)  # (integer labels in a column)
    graphs = [a, b, c, d]
    for dim in (None, 32):
        vec = KongVectorizer(k=2, dim=dim).fit(graphs)
        dense = (lambda X: X.toarray()) if dim is None else (lambda X: X)
        alone = np.concatenate([dense(vec.transform([g])) for g in graphs])
        assert np.array_equal(alone[0], alone[1]) and np.array_equal(alone[0], alone[3])
        assert not np.array_equal(alone[0], alone[2]) and alone[0].any()
        for batch_size in (1, 2, 4):
            X = dense(KongVectorizer(k=2, dim=dim, batch_size=batch_size).fit(graphs).transform(graphs))
            assert np.array_equal(X, alone), (dim, batch_size)
    x = torch.tensor([0, 1, 1])
    graphs = [Data(x=x, edge_index=torch.tensor([[0, 1], [1, 2]]), edge_attr=torch.tensor([0, 1]))] * 2 + [
        Data(x=x, edge_index=torch.empty(2, 0, dtype=torch.long), edge_attr=torch.tensor([]))]
    joined = KongVectorizer(k=2).fit_transform(graphs)
    for batch_size in (1, 2):
        assert (KongVectorizer(k=2, batch_size=batch_size).fit_transform(graphs) != joined).nnz == 0


def test_order_keys_as_vectors_and_as_columns_mix_in_any_batch():
    """A per-edge key of shape [m] in one graph and [m, 1] in another is one key per edge in both: the
    default batch gives every graph the row it gives alone (it refused the mix where batch_size=1 took it);
    the key really orders (reversed keys give another row)."""
    ei = torch.tensor([[1, 2, 0, 2, 0, 1], [0, 0, 1, 1, 2, 2]])
    x = torch.tensor([0, 1, 2])
    key = torch.tensor([5, 3, 0, 2, 4, 1])
    graphs = [Data(x=x, edge_index=ei, edge_order=o) for o in (key, key.view(-1, 1), -key.view(-1, 1), -key)]
    for dim in (None, 32):
        dense = (lambda X: X.toarray()) if dim is None else (lambda X: X)
        vec = KongVectorizer(k=2, dim=dim, batch_size=1).fit(graphs)
        alone = np.concatenate([dense(vec.transform([g])) for g in graphs])
        assert np.array_equal(alone[0], alone[1]) and np.array_equal(alone[2], alone[3])
        assert not np.array_equal(alone[0], alone[2])
        for batch_size in (2, 4):
            X = dense(KongVectorizer(k=2, dim=dim, batch_size=batch_size).fit(graphs).transform(graphs))
            assert np.array_equal(X, alone), (dim, batch_size)


@pytest.mark.parametrize("dim", [None, 32])
def test_transform_refuses_graphs_without_the_edge_labels_of_fit(dim):
    """Columns learnt with edge labels give a graph without them only unseen k-grams (a silent row of zeros):
    fit and transform must agree on edge_attr, across batches too; edge_labels=False ignores it."""
    with_labels = _graphs(1, count=6)
    without = [d.clone() for d in with_labels]
    for d in without:
        del d.edge_attr
    fitted = KongVectorizer(k=2, dim=dim).fit(with_labels)
    with pytest.raises(ValueError, match=r"graph 0 has no 'edge_attr' .* the graphs of fit\(\) had one"):
        fitted.transform(without[:2])
    with pytest.raises(ValueError, match=r"graph 0 has an 'edge_attr' .* the graphs of fit\(\) had none"):
        KongVectorizer(k=2, dim=dim).fit(without).transform(with_labels[:1])
    with pytest.raises(ValueError, match="graph 3 has an .* the other graphs of the fit had none"):
        KongVectorizer(k=2, dim=dim, batch_size=3).fit(without[:3] + with_labels[3:])
    # a graph without edges has nothing to label: it may come without edge_attr, alone or beside others
    lone = Data(x=torch.tensor([1, 2]), edge_index=torch.zeros((2, 0), dtype=torch.long))
    lone_labelled = Data(x=lone.x, edge_index=lone.edge_index, edge_attr=torch.zeros(0, dtype=torch.long))
    for batch_size in (1, 16):
        v = KongVectorizer(k=1, dim=dim, batch_size=batch_size).fit([lone] + with_labels)
        assert v.edge_attr_ is True
        A, B = v.transform([lone, with_labels[0]]), v.transform([lone_labelled, with_labels[0]])
        assert np.array_equal(A.toarray() if dim is None else A, B.toarray() if dim is None else B)
        assert (A.toarray() if dim is None else A)[0].any()  # its labels count (k = 1)
    ignored = KongVectorizer(k=2, dim=dim, edge_labels=False).fit(with_labels)
    X, Y = ignored.transform(without), ignored.transform(with_labels)
    assert np.array_equal(X.toarray() if dim is None else X, Y.toarray() if dim is None else Y)


def test_a_sketched_fit_pickled_before_hash_schemes_keeps_its_features():
    """A fitted vectorizer pickled before the hash scheme was recorded has no ``hash_version_``: it goes on
    with scheme 1, the features its model was trained on (new fits use the current scheme)."""
    import pickle

    from kong_pyg import KongSketch
    from kong_pyg.sketch import HASH_VERSION, SketchHashes

    rng = random.Random(4)
    graphs = [to_data(random_graph(rng, 6, 8, 3)) for _ in range(5)]
    vec = KongVectorizer(k=2, hops=2, dim=32, edge_labels=False).fit(graphs)
    assert vec.hash_version_ == HASH_VERSION == 2
    old = pickle.loads(pickle.dumps(vec))
    del old.hash_version_  # as unpickled from before
    layer = KongSketch(k=2, hops=2, dim=32, dtype=torch.float64)
    layer.hashes = SketchHashes(32, 1, 2, 3, 0, version=1)
    want = torch.stack([layer.readout(g.x, g.edge_index)[0] for g in graphs]).numpy()
    np.testing.assert_allclose(old.transform(graphs), want, rtol=1e-12, atol=1e-12)
    assert not np.allclose(vec.transform(graphs), want)
    assert KongVectorizer(k=2, hops=2, dim=32, edge_labels=False).fit(graphs).hash_version_ == 2


def test_a_config_estimator_reports_and_searches_the_options_it_uses():
    """With config=, set_params(k=1) (the default value) was ignored: fit used the config's k = 2 while
    get_params said 1, and GridSearchCV scored k = 2 as 'k = 1' (and k = 2 failed as nan)."""
    import warnings

    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import Pipeline
    from sklearn.svm import LinearSVC

    from kong_pyg import KongConfig
    from kong_pyg.datasets import load_tu

    ds = load_tu("MUTAG")
    graphs, y = [ds[i] for i in range(60)], ds.y[:60].numpy()
    v = KongVectorizer(config=KongConfig(k=2, hops=1, dim=64)).set_params(k=1, hops=2, dim=None)
    assert (v.get_params()["k"], v.get_params()["hops"], v.get_params()["dim"]) == (1, 2, None)
    assert v.fit(graphs).config_ == KongConfig(k=1, hops=2)
    assert clone(v).fit(graphs).config_ == v.config_
    pipe = Pipeline([("kong", KongVectorizer(config=KongConfig(k=2, hops=1))), ("svm", LinearSVC())])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = GridSearchCV(pipe, {"kong__k": [1, 2]}, cv=3).fit(graphs, y)
    assert not np.isnan(search.cv_results_["mean_test_score"]).any()
    for k in (1, 2):
        alone = clone(pipe).set_params(kong__k=k)
        assert alone["kong"].fit(graphs).config_.k == k
    assert search.best_estimator_["kong"].config_.k == search.best_params_["kong__k"]
    with pytest.raises(ValueError, match="got both 'config' and the option"):  # (off the default and config)
        KongVectorizer(config=KongConfig(k=2), k=3).fit(graphs)
    assert KongVectorizer(config=KongConfig(k=2), k=2).fit(graphs).config_.k == 2  # (the same value: fine)


def test_search_over_configs_of_a_configured_vectorizer():
    """GridSearchCV over `config` of a vectorizer built with a config: the clone names every option at the
    first config's values, and setting the second config then clashed with them (every candidate failed)."""
    from sklearn.model_selection import GridSearchCV

    from kong_pyg import KongConfig

    rng = random.Random(0)
    graphs = [to_data(random_graph(rng, 6, 9, 3)) for _ in range(30)]
    y = np.arange(30) % 2
    a, b = KongConfig(k=2, hops=1), KongConfig(k=1, hops=2)
    v = clone(KongVectorizer(config=a)).set_params(config=b)
    assert v.get_params()["k"] == 1 and v.fit(graphs).config_ == b
    pipe = make_pipeline(KongVectorizer(config=a), LinearSVC())
    search = GridSearchCV(pipe, {"kongvectorizer__config": [a, b]}, cv=3, error_score="raise").fit(graphs, y)
    assert [p["kongvectorizer__config"] for p in search.cv_results_["params"]] == [a, b]
    assert search.best_estimator_[0].config_ == search.best_params_["kongvectorizer__config"]
    # the same from a vectorizer built without a config: a clone names every option at its default
    plain = GridSearchCV(make_pipeline(KongVectorizer(), LinearSVC()), {"kongvectorizer__config": [a, b]},
                         cv=3, error_score="raise").fit(graphs, y)
    assert plain.best_estimator_[0].config_ == plain.best_params_["kongvectorizer__config"]
    assert clone(KongVectorizer(k=2)).set_params(config=a).fit(graphs).config_ == a
    # config=None: the options that followed the config go back to their defaults, on a clone too (a grid
    # [a, None] fitted a twice from a clone)
    for v in (KongVectorizer(config=a), clone(KongVectorizer(config=a))):
        assert v.set_params(config=None).fit(graphs).config_ == KongConfig()
    # an option the user named off the config stays named: refused by fit, by a clone's fit, and after a
    # new config that it does not mirror (a reviewer found each of them silently using the config)
    for v in (KongVectorizer(k=1, config=b.replace(k=2)), clone(KongVectorizer(k=1, config=b.replace(k=2))),
              KongVectorizer(k=3).set_params(config=b)):
        with pytest.raises(ValueError, match=r"got both 'config' and the option\(s\) \['k'\]"):
            v.fit(graphs)


def test_set_params_with_a_config_round_trips_and_a_refused_value_changes_nothing():
    """set_params(**get_params()) replaced the config by an equal copy (scikit-learn's check_set_params wants
    the same objects back), and a refused option was already set when the config refused it."""
    import warnings

    from sklearn.utils.estimator_checks import check_set_params

    from kong_pyg import KongConfig

    cfg = KongConfig(k=2, hops=3)
    v = KongVectorizer(config=cfg)
    v.set_params(**v.get_params())
    assert v.config is cfg
    assert v.set_params(k=3).config == cfg.replace(k=3)  # a changed option still goes into the config
    before = v.get_params()
    with pytest.raises(TypeError, match="'k' must be an integer"):
        v.set_params(k=2.5, hops=1)
    assert v.get_params() == before and v.hops == 3
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_set_params("KongVectorizer", KongVectorizer(config=cfg))
    assert not [w for w in caught if "changed after set_params" in str(w.message)]


@pytest.mark.parametrize("options",
                         [dict(degree=2), dict(degree=3, const=0.5), dict(kernel="cosine", degree=2)])
def test_sketched_rows_do_not_depend_on_the_batch_to_the_last_bit(monkeypatch, options):
    """Node maps are pooled in chunks of nodes; a graph that straddled two chunks got its row as the sum of
    two partial sums, so its last bits depended on the graphs before it in the batch. Rows are now added up
    in node order into the output, whatever the chunks (and no [num_graphs, b] temporary per chunk)."""
    from kong_pyg import engine

    monkeypatch.setattr(engine, "CHUNK_ENTRIES", 7 * 64 * options["degree"])  # (7 nodes a chunk)
    rng = random.Random(5)
    graphs = [to_data(random_graph(rng, 9, 16, 4)) for _ in range(40)]
    together = KongVectorizer(k=2, hops=2, dim=64, **options).fit_transform(graphs)
    alone = np.concatenate([KongVectorizer(k=2, hops=2, dim=64, **options).fit_transform([g])
                            for g in graphs])
    assert np.array_equal(together, alone)
    shifted = KongVectorizer(k=2, hops=2, dim=64, **options).fit_transform(graphs[3:])
    assert np.array_equal(shifted, together[3:])


def test_a_fit_in_batches_without_columns_transforms_unseen_grams_to_empty_rows():
    # the fit's column ranking (set when it spans batches) was empty, and reading it for any later k-gram
    # gave IndexError; one batch gave the empty rows the docs promise ('k-grams first seen in transform
    # are dropped')
    import torch
    from torch_geometric.data import Data

    from kong_pyg import KongVectorizer

    path = Data(x=torch.tensor([0, 1, 2]), edge_index=torch.tensor([[0, 1], [1, 2]]))  # no 2-grams
    star = Data(x=torch.tensor([0, 1, 2]), edge_index=torch.tensor([[1, 2], [0, 0]]))
    for batch_size in (1, 4096):
        vec = KongVectorizer(k=2, hops=1, batch_size=batch_size)
        assert vec.fit_transform([path, path]).shape == (2, 0)
        assert vec.transform([star, path]).shape == (2, 0)


def test_a_sketched_fit_refuses_a_batch_too_large_for_memory_by_name(monkeypatch):
    """fit() in sketch mode computes a batch's sketches too (and drops them), but skipped the memory check
    transform makes: PyTorch's raw allocator error (or the OOM killer) instead of the clear refusal. The
    check is of one batch, so a fit on many graphs in small batches still passes."""
    import kong_pyg.memory as memory

    monkeypatch.setattr(memory, "available_memory", lambda device=None: 1 << 30)
    graphs = [to_data(random_graph(random.Random(i), 5, 6, 3)) for i in range(6)]
    refusal = r"the sketched features \[6, 268,435,456\] .* needs 12.0 GiB.*a smaller 'dim' or 'batch_size'"
    with pytest.raises(ValueError, match=refusal):
        KongVectorizer(dim=2**28).fit(graphs)
    assert KongVectorizer(dim=2**20, batch_size=2).fit(graphs).n_features_out_ == 2**20


def test_hash_scheme_option_and_old_pickles_keep_their_scheme():
    """A sketched KongVectorizer had no hash_scheme option (KongFeatures has one), and fitting an unpickled
    scheme-1 vectorizer again switched it to scheme 2 without a word (its columns moved): the option now
    reproduces scheme 1, survives clone(), and a vectorizer pickled before it keeps its fitted scheme."""
    import pickle

    from kong_pyg import KongFeatures
    from kong_pyg.datasets import load_tu

    gs = [load_tu("MUTAG")[i] for i in range(40)]
    one = KongVectorizer(k=2, dim=64, hash_scheme=1).fit_transform(gs)
    two = KongVectorizer(k=2, dim=64).fit_transform(gs)
    f = KongFeatures(k=2, dim=64, level="graph", hash_scheme=1)
    assert np.array_equal(one, torch.cat([f(g.clone()).kong_graph for g in gs]).double().numpy())
    assert not np.array_equal(one, two)
    assert clone(KongVectorizer(k=2, dim=64, hash_scheme=1)).hash_scheme == 1
    for drop in (["hash_scheme"], ["hash_scheme", "hash_version_"]):  # (pickled before the option; both)
        state = KongVectorizer(k=2, dim=64, hash_scheme=1).fit(gs).__getstate__()
        for name in drop:
            del state[name]
        old = pickle.loads(pickle.dumps(state))
        v = KongVectorizer.__new__(KongVectorizer)
        v.__setstate__(old)
        assert v.hash_scheme == 1 and np.array_equal(v.transform(gs), one)
        assert np.array_equal(v.fit_transform(gs), one) and np.array_equal(clone(v).fit_transform(gs), one)
    fresh = KongVectorizer(k=2, dim=64).__getstate__()
    del fresh["hash_scheme"]
    v = KongVectorizer.__new__(KongVectorizer)
    v.__setstate__(fresh)
    assert v.hash_scheme == 2 and np.array_equal(v.fit_transform(gs), two)
    with pytest.raises(ValueError, match=r"'hash_scheme' must be 1 or 2 \(got 3\)"):
        KongVectorizer(dim=8, hash_scheme=3).fit(gs)


@pytest.mark.parametrize("k,degree", [(1, 2), (2, 1), (2, 3)])
def test_unseen_symbols_at_transform_keep_the_exact_kernel(k, degree):
    """Graphs transformed after the fit hold k-grams (p = 1) or multisets of k-grams (p >= 2) the fit
    never saw: they have no column, and every seen one is where the fit put it, so X_new . X_fit is the
    exact kernel (gram_matrix of both together). A multiset with one unseen member, a gram with one unseen
    symbol, or an unsorted multiset must not land on a seen column; a mutation sweep found that no test
    gave the transform such graphs."""
    from kong_pyg import gram_matrix

    rng = random.Random(k * 10 + degree)
    fit = [to_data(random_graph(rng, 5, 9, 2)) for _ in range(4)]
    new = [to_data(random_graph(rng, 5, 9, 4)) for _ in range(4)]  # (labels 2 and 3: never in the fit)
    opts = dict(k=k, hops=1, degree=degree, edge_labels=False)
    v = KongVectorizer(**opts).fit(fit)
    cross = (v.transform(new) @ v.transform(fit).T).toarray()
    K = gram_matrix(new + fit, **opts)[: len(new), len(new):]
    np.testing.assert_allclose(cross, K, rtol=1e-12)
