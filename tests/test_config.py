"""KongConfig: every option checked once, and every front-end takes it."""
import dataclasses

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from kong_pyg import KongConfig, KongFeatures, KongSketch, KongVectorizer
from kong_pyg.config import option_defaults, option_docs, option_names, resolve_config

X = torch.tensor([0, 1, 2, 1])
EI = torch.tensor([[1, 2, 3, 0, 2], [0, 0, 0, 1, 3]])


def test_defaults_docs_and_names_cover_every_field():
    names = [f.name for f in dataclasses.fields(KongConfig)]
    assert option_names() == names
    assert set(option_defaults()) == set(names) and set(option_docs()) == set(names)
    assert all(option_docs()[n] for n in names)
    assert KongConfig() == KongConfig(**option_defaults())


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(k=0), ValueError, "'k' must be >= 1"),
    (dict(k=2.0), TypeError, "'k' must be an integer"),
    (dict(hops=-1), ValueError, "'hops' must be >= 0"),
    (dict(dim=0), ValueError, "'dim' must be >= 1"),
    (dict(traversal="dfs"), ValueError, "'traversal' must be one of"),
    (dict(kernel="rbf"), ValueError, "'kernel' must be one of"),
    (dict(const=float("nan")), ValueError, "'const' must be >= 0"),
    (dict(const=float("inf")), ValueError, "finite"),
    (dict(const="1"), TypeError, "'const' must be a number"),
    (dict(relabel=-1), ValueError, "'relabel' must be >= 0"),
    (dict(relabel="yes"), TypeError, "'relabel' must be an integer"),
    (dict(blended=1), TypeError, "'blended' must be True or False"),
    (dict(normalize="no"), TypeError, "'normalize' must be True or False"),
    (dict(flow="both"), ValueError, "'flow' must be one of"),
])
def test_bad_options_name_the_option(kwargs, error, match):
    with pytest.raises(error, match=match):
        KongConfig(**kwargs)


def test_numpy_scalars_and_bools_are_accepted_and_normalized():
    c = KongConfig(k=np.int64(2), const=np.float32(0.5), relabel=True, blended=np.bool_(True))
    assert (c.k, c.const, c.relabel, c.blended) == (2, 0.5, 1, True)
    assert type(c.k) is int and type(c.relabel) is int


def test_canonical_and_short_names():
    c = KongConfig(kernel="cosine", const=2.0, norm="sketch")
    assert c.canonical() == KongConfig(kernel="cosine")  # exact map: sketch norms do not matter
    assert KongConfig(kernel="cosine", degree=2, relabel=1).short_name() == "cosine-rlb-2"
    assert KongConfig(k=2, dim=1024).short_name() == "poly-1 [k=2, b=1024]"
    assert KongConfig(relabel=2, normalize=True).short_name() == "poly-rlb-1 [rlb=2, gnorm]"
    assert KongConfig.from_dict(KongConfig(k=3).to_dict()) == KongConfig(k=3)
    with pytest.raises(ValueError, match="unknown KONG option"):
        KongConfig.from_dict({"kk": 1})


def test_choices_are_plain_strings():
    """A NumPy string was kept as given: KongConfig's repr said traversal=np.str_('wl'), and PyG's
    pre_transform check would see two equal KongFeatures as different."""
    cfg = KongConfig(traversal=np.str_("wl"))
    assert type(cfg.traversal) is str and repr(cfg) == repr(KongConfig(traversal="wl"))
    assert repr(KongFeatures(traversal=np.str_("wl"))) == repr(KongFeatures(traversal="wl"))
    import enum

    class Kernel(str, enum.Enum):
        cosine = "cosine"

    assert KongConfig(kernel=Kernel.cosine).kernel == "cosine"  # (str() of the member said 'Kernel.cosine')
    assert type(KongConfig(kernel=Kernel.cosine).kernel) is str


def test_canonical_folds_options_that_cannot_change_the_map():
    """Blended counts at k = 1, and the traversal and edge labels at depth 0, gave the same features under
    other names: --blended both doubled the paper grid with duplicate candidates."""
    import random

    from helpers import random_graph, to_data

    from kong_pyg.evaluation.grid import expand_grid

    assert KongConfig(k=1, blended=True).canonical() == KongConfig(k=1)
    assert KongConfig(k=2, blended=True).canonical() == KongConfig(k=2, blended=True)
    assert (KongConfig(k=2, hops=0, traversal="wl", edge_labels=False).canonical()
            == KongConfig(k=2, hops=0))
    sketched = KongConfig(k=1, hops=0, dim=16, traversal="wl", edge_labels=False).canonical()
    assert sketched == KongConfig(k=1, hops=0, dim=16, traversal="wl")  # (level 0 hashed apart: kept)
    assert KongConfig(hops=1, traversal="wl").canonical().traversal == "wl"
    assert len(expand_grid("kong", {"k": [1], "blended": [False, True]})) == 1
    assert len(expand_grid("kong", {"k": [1, 2], "blended": [False, True]})) == 3
    rng = random.Random(0)
    graphs = [to_data(random_graph(rng, 8, 20, 3, edge_labels=True)) for _ in range(20)]
    for dim in (None, 64):  # (the same features, exact and sketched; k = 1 at depth 0: counts to compare)
        for a in (dict(k=1, blended=True), dict(k=1, hops=0, traversal="wl", edge_labels=False, relabel=1),
                  dict(k=2, hops=0, blended=True, traversal="wl", edge_labels=False)):
            b = KongConfig(dim=dim, degree=2, **a).canonical().to_dict()
            a = {**a, "dim": dim, "degree": 2}
            b = {key: b[key] for key in a}
            X, Y = (KongVectorizer(**o).fit_transform(graphs) for o in (a, b))
            X, Y = (m.toarray() if hasattr(m, "toarray") else m for m in (X, Y))
            assert np.array_equal(X, Y) and np.abs(X).sum() > 0


def test_resolve_config_refuses_config_plus_options():
    cfg = KongConfig(k=2, dim=64)
    assert resolve_config(cfg, {"k": 1}, {"k": 1}, "X") is cfg
    with pytest.raises(ValueError, match=r"both 'config' and the option\(s\) \['k'\]"):
        resolve_config(cfg, {"k": 3}, {"k": 1}, "X")
    with pytest.raises(TypeError, match="must be a KongConfig"):
        resolve_config({"k": 2}, {}, {}, "X")


def test_every_front_end_takes_a_config_and_gives_the_same_numbers():
    cfg = KongConfig(k=2, hops=2, dim=64, kernel="cosine", degree=2, seed=3)
    kwargs = cfg.to_dict()
    g = Data(x=X, edge_index=EI)
    by_kwargs = KongSketch(**kwargs, dtype=torch.float64)
    by_config = KongSketch(config=cfg, dtype=torch.float64)
    assert by_config.config == cfg and by_config.k == 2 and by_config.seed == 3
    torch.testing.assert_close(by_config(X, EI), by_kwargs(X, EI), rtol=0, atol=0)
    rows = KongVectorizer(config=cfg).fit_transform([g, g])
    np.testing.assert_array_equal(rows[0], by_config.readout(X, EI)[0].numpy())
    t = KongFeatures(config=cfg, level="graph", dtype=torch.float64)(g)
    torch.testing.assert_close(t.kong_graph, by_config.readout(X, EI), rtol=0, atol=0)
    assert t.kong_graph.shape == (1, 64) and KongFeatures(config=cfg).config == cfg
    for front in (lambda: KongSketch(k=3, config=cfg), lambda: KongFeatures(dim=8, config=cfg),
                  lambda: KongVectorizer(k=3, config=cfg).fit([g])):
        with pytest.raises(ValueError, match="both 'config' and"):
            front()


def test_sketch_front_ends_need_a_sketch_size():
    with pytest.raises(ValueError, match="'dim' must be a sketch size"):
        KongSketch(config=KongConfig())  # dim=None: the exact map
    X_exact = KongVectorizer(config=KongConfig(k=2)).fit_transform([Data(x=X, edge_index=EI)])
    assert X_exact.shape[0] == 1


def test_layer_options_are_read_only_views_of_the_config():
    layer = KongSketch(k=2, relabel=True, dim=8)
    assert (layer.k, layer.relabel, layer.dim, layer.flow) == (2, 1, 8, "source_to_target")
    with pytest.raises(AttributeError):
        layer.k = 3
    assert "relabel=1" in repr(layer) and repr(layer).startswith("KongSketch(k=2")
    assert "dtype" not in repr(layer)
    assert repr(layer.double()).endswith(", dtype=torch.float64)")
    assert repr(KongSketch(dim=8, dtype=torch.float16)).endswith(", dtype=torch.float16)")


def test_import_is_light():
    import subprocess
    import sys

    code = ("import sys, kong_pyg; heavy = [m for m in ('sklearn', 'scipy', 'tqdm', 'matplotlib', "
            "'kong_pyg.stream', 'kong_pyg.evaluation', 'kong_pyg.evaluate') if m in sys.modules]; "
            "print(heavy); assert not heavy, heavy")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


@pytest.mark.parametrize("front_end",
                         ["KongSketch", "KongFeatures", "KongStream", "KongVectorizer", "gram_matrix"])
def test_an_option_named_at_its_default_clashes_with_another_config_value(front_end):
    """`KongSketch(k=1, config=KongConfig(k=2))` used k = 2 without a word: k = 1 is the default, which the
    value alone cannot tell from an absent k. The call's names now tell it, for every front-end."""
    import copy
    import pickle

    from kong_pyg import KongStream, gram_matrix

    g = [Data(x=X, edge_index=EI)] * 2
    cfg = KongConfig(k=2, dim=None if front_end in ("KongVectorizer", "gram_matrix") else 16)
    make = {"KongSketch": KongSketch, "KongFeatures": KongFeatures, "KongStream": KongStream,
            "KongVectorizer": lambda *a, **kw: KongVectorizer(*a, **kw).fit(g),
            "gram_matrix": lambda *a, **kw: gram_matrix(g, **kw)}[front_end]
    with pytest.raises(ValueError, match=rf"{front_end} got both 'config' and the option\(s\) \['k'\]"):
        make(k=1, config=cfg)
    if front_end != "gram_matrix":
        with pytest.raises(ValueError, match=r"the option\(s\) \['k'\]"):
            make(1, config=cfg)  # (named by position)
    make(k=2, config=cfg)  # (the config's value: no clash)
    made = make(config=cfg)
    if front_end not in ("KongVectorizer", "gram_matrix"):
        again = [copy.deepcopy(made), pickle.loads(pickle.dumps(made))]
        assert all("_given_options" not in vars(m) for m in [made, *again])


def test_subclasses_are_judged_by_the_arguments_the_front_end_gets():
    """A subclass's constructor takes its own arguments: its `dim` is not KongFeatures' `dim` (a false
    clash), and what it passes on to the front-end cannot be noted; a subclass without a constructor is the
    front-end."""
    class Wrapped(KongFeatures):
        def __init__(self, dim, config=None):
            super().__init__(config=config)

    class Same(KongFeatures):
        pass

    assert Wrapped(5, config=KongConfig(k=2, dim=16)).config.k == 2
    with pytest.raises(ValueError, match=r"Same got both 'config' and the option\(s\) \['k'\]|"
                                         r"KongFeatures got both 'config' and the option\(s\) \['k'\]"):
        Same(k=1, config=KongConfig(k=2, dim=16))


def test_dim_and_threads_have_upper_bounds_named_in_their_errors():
    """dim >= 2**63 failed with "Overflow when unpacking long long" (no name); KongStream(threads=10000)
    started thousands of OS threads (MemoryError) and the command line's --threads 1024 a libgomp failure."""
    from kong_pyg import KongStream, KongVectorizer
    from kong_pyg.cli import main

    for make in (lambda: KongConfig(dim=2**63), lambda: KongVectorizer(dim=2**63).fit([])):
        with pytest.raises(ValueError, match=r"'dim' must be <= 1,099,511,627,776"):
            make()
    with pytest.raises(ValueError, match=r"'threads' must be <= 256"):  # (the batch front-ends cap it)
        KongStream(threads=10_000)
    assert main(["stream", __file__, "--threads", "1024"]) == 2


def test_seeds_stop_below_2_to_the_32_where_the_generator_would_repeat_them():
    """PyTorch's CPU generator keeps 32 bits of a seed: seed 2**32 drew seed 0's tables and shuffles."""
    import numpy as np
    import torch
    from torch_geometric.data import Data

    from kong_pyg import KongFeatures, KongSketch, KongStream, KongVectorizer
    from kong_pyg.cli import main

    g = Data(x=torch.arange(8),
             edge_index=torch.stack([torch.arange(1, 8), torch.zeros(7, dtype=torch.long)]))
    for make in (lambda: KongConfig(seed=2**32), lambda: KongVectorizer(dim=8, seed=2**32).fit([g]),
                 lambda: KongSketch(dim=8, seed=2**32), lambda: KongFeatures(dim=8, seed=2**32),
                 lambda: KongStream(dim=8, seed=2**32)):
        with pytest.raises(ValueError, match=r"'seed' must be <= 4,294,967,295"):
            make()
    assert main(["stream", __file__, "--seed", str(2**32)]) == 2
    from kong_pyg.datasets import InteractionGraphs

    with pytest.raises(ValueError, match=r"'seed' must be <= 4,294,967,295"):  # (its subset's generator)
        InteractionGraphs([0, 1], [0, 0], [0, 1], [0, 0], [0], max_graphs=1, seed=2**32)
    maps = [KongVectorizer(k=2, hops=1, dim=32, seed=s).fit_transform([g]) for s in (0, 1, 2**32 - 1)]
    assert not np.array_equal(maps[0], maps[1]) and not np.array_equal(maps[0], maps[2])


def test_a_float_option_given_an_integer_beyond_float64_is_a_value_error():
    """KongConfig(const=10**400) raised Python's OverflowError ('int too large to convert to float')."""
    from kong_pyg import KongConfig
    from kong_pyg.config import check_float

    with pytest.raises(ValueError, match=r"'const' must be >= 0.0 and finite \(got an integer beyond "
                                         "float64, of 1,329 bits"):
        KongConfig(const=10**400)
    with pytest.raises(ValueError, match="beyond float64"):  # (past Python's 4,300-digit str() limit too)
        KongConfig(const=10**5000)
    with pytest.raises(ValueError, match="'tol' must be >= 0.0 and finite"):
        check_float("tol", -(10**400), 0.0)
