r"""Grids of settings: which feature map, with which options.

A :class:`Setting` is one point of a grid: a method (:obj:`"kong"` or a
baseline) and all its parameters. :func:`expand_grid` turns a dict of lists
(their product) or a list of dicts into settings, fills in the defaults and
checks them. KONG settings take every :class:`~kong_pyg.KongConfig` option
but the seed (the evaluation's seed seeds the sketches and the splits), with
:class:`~kong_pyg.KongConfig`'s defaults, and are checked by it.
"""
import itertools
import math
from dataclasses import fields
from typing import Any, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Set, Tuple, Union

from ..config import KongConfig, check_bool, check_choice, check_int, option_defaults, option_docs, zero_dim

#: The feature maps: KONG, the mean of a KONG grid's normalised kernels (:obj:`"kong-mean"`, see
#: :func:`~kong_pyg.evaluation.depths.grid_mean_features`) and the baselines of the paper's Table 1.
METHODS: Tuple[str, ...] = ("kong", "kong-mean", "wl", "wl-grakel", "sp", "kw")

#: The KONG options a grid may set, with their defaults: every
#: :class:`~kong_pyg.KongConfig` option but :obj:`seed`.
KONG_DEFAULTS: Dict[str, Any] = {name: value for name, value in option_defaults().items() if name != "seed"}

#: How a KONG setting combines the depths :math:`0..h` (an evaluation option,
#: not a :class:`~kong_pyg.KongConfig` one): :obj:`"joint"` is the map of the
#: config as it is; :obj:`"sum"` is the sum over :math:`j = 0..h` of the
#: kernels of depth :math:`j` alone (see :mod:`kong_pyg.evaluation.depths`).
DEPTHS: Tuple[str, ...] = ("joint", "sum")

#: The settings of each method and their defaults.
METHOD_DEFAULTS: Dict[str, Dict[str, Any]] = {
    "kong": {**KONG_DEFAULTS, "depths": "joint"},
    "kong-mean": {"grid": "paper"},
    "wl": {"hops": 2, "normalize": False},
    "wl-grakel": {"hops": 2},
    "sp": {"normalize": False},
    "kw": {"length": 5},
}

#: A grid: a dict of values or lists of values, or a list of dicts.
Grid = Union[Mapping[str, Any], Sequence[Mapping[str, Any]]]

# The evaluation's defaults (here, with the grid, so that the command line's parsers read them without
# importing NumPy or SciPy; :mod:`~kong_pyg.evaluation.cv` and :mod:`~kong_pyg.evaluation.classify`
# re-export them).
#: The default :math:`C` grid.
DEFAULT_C: Tuple[float, ...] = (0.1, 1.0, 10.0)
#: The solver's default cap on Newton steps per problem.
MAX_ITER = 100
#: The default repeats R of the stratified k-fold CV, its outer folds, and the nested protocol's inner folds.
REPEATS, FOLDS, INNER_FOLDS = 10, 10, 5
#: The protocols :func:`~kong_pyg.classify` reports.
PROTOCOLS: Tuple[str, ...] = ("paper", "nested", "both")
#: Sketch sizes of the accuracy-against-b curve (the paper's Figure 3).
PLOT_SIZES: Tuple[int, ...] = (64, 128, 256, 512, 1024, 2048, 4096, 8192)


def paper_grid(method: str = "kong") -> Dict[str, List[Any]]:
    r"""The grid of the KONG paper's Table 1 for :obj:`method`.

    KONG: :math:`h = 2`, :math:`k = 1`, BFS traversal, exact explicit map,
    polynomial and cosine kernels of degree :math:`p = 1, \ldots, 4`, with
    and without one WL relabelling round ("rlb"): 16 settings. WL:
    :math:`h \in \{1, 2\}`; k-walk: :math:`k \in \{5, 6\}`; shortest path:
    one setting. :obj:`"kong-mean"` (not in the paper): the means over the
    paper's grid and over :func:`extended_grid`, two settings.

    Args:
        method (str, optional): One of :obj:`METHODS`. (default: :obj:`"kong"`)

    Returns:
        A dict of lists (the grid is their product).
    """
    check_choice("method", method, METHODS)
    grids: Dict[str, Dict[str, List[Any]]] = {
        "kong": {
            "k": [1], "hops": [2], "traversal": ["bfs"], "kernel": ["poly", "cosine"],
            "degree": [1, 2, 3, 4], "relabel": [0, 1],
        },
        "kong-mean": {"grid": ["paper", "extended"]},
        "wl": {"hops": [1, 2]},
        "wl-grakel": {"hops": [1, 2]},
        "sp": {},
        "kw": {"length": [5, 6]},
    }
    return grids[method]


#: The strings of :func:`extended_grid`: label counts (:math:`k = 1`, no order)
#: and pairs of neighbors in the two orders an unordered graph has.
EXTENDED_STRINGS: Tuple[Dict[str, Any], ...] = (
    {"k": 1}, {"k": 2, "order": "label"}, {"k": 2, "order": "degree"},
)
#: The kernels of :func:`extended_grid`, both of degree 2: node normalisation
#: (cosine) and graph normalisation (polynomial, :obj:`normalize=True`).
EXTENDED_KERNELS: Tuple[Dict[str, Any], ...] = (
    {"kernel": "cosine", "degree": 2},
    {"kernel": "poly", "degree": 2, "normalize": True},
)
#: Depths :math:`h` and WL relabelling rounds of :func:`extended_grid`.
EXTENDED_HOPS: Tuple[int, ...] = (1, 2, 3)
EXTENDED_RELABEL: Tuple[int, ...] = (0, 1, 2)


def extended_grid() -> List[Dict[str, Any]]:
    r"""A larger KONG grid than the paper's, fixed for every data set.

    Every setting is the BFS traversal with the sum over depths
    :math:`j = 0..h` as one kernel (:obj:`depths="sum"`, as the WL subtree
    kernel sums its iterations; see :mod:`kong_pyg.evaluation.depths`), and
    the product of:

    * strings (:data:`EXTENDED_STRINGS`): :math:`k = 1` (label counts; the
      neighbor order plays no part, so it is not multiplied by orders) and
      :math:`k = 2` with the neighbors ordered by label or by degree, the
      two orders that mean something in a graph without one;
    * depths :math:`h \in \{1, 2, 3\}` (:data:`EXTENDED_HOPS`);
    * :math:`0, 1, 2` WL relabelling rounds (:data:`EXTENDED_RELABEL`);
    * node against graph normalisation (:data:`EXTENDED_KERNELS`): the
      cosine base kernel, or the polynomial one with every graph vector
      L2-normalised; both of degree :math:`p = 2`, the lowest that lets
      features interact (the paper's grid has :math:`p = 1..4`; here the
      degree is fixed to keep the grid at 54 settings, and :math:`p = 4`
      costs too much: on NCI1 the heaviest setting's exact :math:`p = 4`
      kernel took 236 s of CPU against 12 s for :math:`p = 2`).

    No sketched maps: with :math:`p = 2` the exact maps (or Gram matrices)
    are cheap enough on the TU sets (at most about 12 s of CPU per setting on
    NCI1) that a sketch would only add noise (a :math:`b = 1024` sketch per
    depth of the same setting at :math:`p = 4` took 34 s). Sketches remain a
    grid option (:obj:`dim`) for graphs where the exact map does not fit.

    The axes were chosen for what each adds in principle (longer and
    relabelled strings see larger neighborhoods, :math:`k = 2` sees the
    order, normalisation decides how node and graph sizes weigh), not by
    scores on any data set; the same list is used everywhere. The paper's
    grid (:func:`paper_grid`) stays the default.

    Returns:
        A list of dicts (one per setting; see :func:`expand_grid`).
    """
    out = []
    for strings, hops, relabel, kern in itertools.product(
            EXTENDED_STRINGS, EXTENDED_HOPS, EXTENDED_RELABEL, EXTENDED_KERNELS):
        out.append({"traversal": "bfs", "depths": "sum", "hops": hops, "relabel": relabel,
                    **strings, **kern})
    return out


#: Named KONG grids (``kong-pyg classify --grid``, ``classify(grid=NAME)``).
GRID_PRESETS: Dict[str, Grid] = {
    "paper": paper_grid("kong"),
    "quick": {"k": [1], "hops": [2], "traversal": ["bfs"], "kernel": ["poly", "cosine"], "degree": [1],
              "relabel": [0, 1]},
    "extended": extended_grid(),
}


class Setting(NamedTuple):
    """One point of a grid: a method and all its parameters."""

    method: str
    params: Tuple[Tuple[str, Any], ...]

    @property
    def config(self) -> Dict[str, Any]:
        """The parameters as a dict."""
        return dict(self.params)

    def kong_config(self, seed: int = 0) -> KongConfig:
        """The :class:`~kong_pyg.KongConfig` of a KONG setting, with :obj:`seed`.

        Evaluation options that are not KONG options (:obj:`depths`) are
        left out.
        """
        if self.method != "kong":
            raise ValueError(f"a {self.method!r} setting has no KONG options")
        return KongConfig(seed=seed, **{k: v for k, v in self.params if k in KONG_DEFAULTS})

    @property
    def name(self) -> str:
        """A short name in the paper's style (``cosine-rlb-2``, ``wl-h2``, ``kw-5``).

        A depth-sum setting adds the tag ``depth-sum``, an L2-normalised
        baseline the suffix ``-l2``.
        """
        p = self.config
        if self.method == "kong":
            name = self.kong_config().short_name()
            if p.get("depths", "joint") == "sum":
                name = name[:-1] + ", depth-sum]" if name.endswith("]") else name + " [depth-sum]"
            return name
        l2 = "-l2" if p.get("normalize") else ""
        if self.method in ("wl", "wl-grakel"):
            return f"{self.method}-h{p['hops']}{l2}"
        if self.method == "kw":
            return f"kw-{p['length']}"
        if self.method == "features":
            return f"features-{p['index']}"
        if self.method == "kong-mean":
            return f"kong-mean-{p['grid']}"
        return self.method + l2


def as_list(value: Any) -> List[Any]:
    """The values of a list, tuple, range or 1-D NumPy array (as Python numbers), else :obj:`[value]`."""
    if type(value).__module__ == "numpy" and getattr(value, "ndim", 0) == 1:  # (NumPy not imported here)
        return list(value.tolist())
    if isinstance(value, (list, tuple, range)):
        return list(value)
    return [value]


def _check_keys(method: str, keys: Sequence[str]) -> None:
    defaults = METHOD_DEFAULTS[method]
    for key in keys:
        if key not in defaults:
            raise ValueError(
                f"unknown setting {key!r} for method {method!r}; expected one of {sorted(defaults)}"
            )


def _kind(grid: Any) -> str:
    """The type of :obj:`grid`, and of its entries when it is a list or tuple."""
    if isinstance(grid, list):
        inner = sorted({type(point).__name__ for point in grid if not isinstance(point, Mapping)})
        return f"a list holding {', '.join(inner)}" if inner else "list"
    return type(grid).__name__


#: The most settings a grid may have (each is a feature map and its cross-validated fits).
MAX_SETTINGS = 10_000


def _grid_points(method: str, grid: Grid) -> List[Dict[str, Any]]:
    """The points of a grid (a dict of lists: their product; a list of dicts: itself)."""
    if isinstance(grid, Mapping):
        keys = list(grid)
        _check_keys(method, keys)
        values = [as_list(grid[key]) for key in keys]
        for key, vals in zip(keys, values):
            if not vals:
                raise ValueError(f"grid entry {key!r} is empty")
        size = math.prod(map(len, values))
        if size > MAX_SETTINGS:  # (before a list of them is built: --k 1-1000 --hops 1-1000 is 10^6)
            counts = " x ".join(str(len(v)) for v in values)
            raise ValueError(f"the grid has {size:,} settings ({counts} values of {', '.join(keys)}), more "
                             f"than {MAX_SETTINGS:,}: give fewer values")
        return [dict(zip(keys, combo)) for combo in itertools.product(*values)]
    listed = isinstance(grid, Iterable) and not isinstance(grid, (str, bytes)) and not zero_dim(grid)
    given: Any = list(grid) if listed else grid
    if not isinstance(given, list) or any(not isinstance(point, Mapping) for point in given):
        raise TypeError("'grid' must be a preset's name, a dict of values or a list of dicts (one per "
                        f"setting; got {_kind(given)})")
    points = [dict(p) for p in given]
    if not points:
        raise ValueError("'grid' is an empty list of settings")
    if len(points) > MAX_SETTINGS:
        raise ValueError(f"the grid has {len(points):,} settings, more than {MAX_SETTINGS:,}")
    for point in points:
        _check_keys(method, list(point))
    return points


def make_setting(method: str, params: Mapping[str, Any]) -> Setting:
    """A checked :class:`Setting`: missing parameters take their defaults.

    KONG parameters are checked by :class:`~kong_pyg.KongConfig` and put in
    its canonical form (the cosine kernel has no constant; :obj:`norm` only
    matters for a sketched cosine map), so settings that give the same
    features are equal.

    Args:
        method (str): One of :obj:`METHODS`.
        params (dict): Some of the method's parameters.

    Returns:
        :class:`Setting`
    """
    check_choice("method", method, METHODS)
    _check_keys(method, list(params))
    defaults = METHOD_DEFAULTS[method]
    full = {**defaults, **params}
    if method == "kong":
        depths = check_choice("depths", full.pop("depths"), DEPTHS)
        cfg = KongConfig(**full).canonical()
        full = {key: getattr(cfg, key) for key in KONG_DEFAULTS}
        full["depths"] = "joint" if cfg.hops == 0 else depths  # depth 0 alone: the same map
    elif method in ("wl", "wl-grakel"):  # (GraKeL's WL needs one iteration at least: n_iter >= 1)
        full["hops"] = check_int("hops", full["hops"], 0 if method == "wl" else 1)
    elif method == "kw":
        full["length"] = check_int("length", full["length"], 0)
    elif method == "kong-mean":
        check_choice("grid", full["grid"], tuple(GRID_PRESETS))
    if "normalize" in full and method != "kong":
        full["normalize"] = check_bool("normalize", full["normalize"])
    return Setting(method, tuple((key, full[key]) for key in defaults))


def expand_grid(method: str = "kong", grid: Optional[Union[str, Grid]] = None) -> List[Setting]:
    r"""The settings of a grid, in order, without duplicates.

    Settings that give the same features are one (with :math:`k = 1` KONG's order cannot matter: the
    first of them is kept, with its order).

    Args:
        method (str, optional): One of :obj:`"kong"`, :obj:`"kong-mean"`,
            :obj:`"wl"`, :obj:`"wl-grakel"`, :obj:`"sp"`, :obj:`"kw"`.
            (default: :obj:`"kong"`)
        grid (str, dict or list of dicts, optional): A dict of values or
            lists of values (their product is the grid; missing keys take
            their default), an explicit list of dicts, or for KONG the name
            of a preset (:obj:`"paper"`, :obj:`"quick"`, :obj:`"extended"`:
            :data:`GRID_PRESETS`); for :obj:`"kong-mean"` a preset's name
            is the one setting averaging that grid. (default: :func:`paper_grid`)

    Returns:
        A list of :class:`Setting`.
    """
    check_choice("method", method, METHODS)
    if isinstance(grid, str) and method == "kong-mean":  # the mean of that preset's kernels
        grid = {"grid": [grid]}
    if isinstance(grid, str):
        if method != "kong":
            raise ValueError(f"'grid' presets are KONG grids; method {method!r} needs a dict or list")
        grid = GRID_PRESETS[check_choice("grid", grid, tuple(GRID_PRESETS))]
    points = _grid_points(method, paper_grid(method) if grid is None else grid)
    settings: List[Setting] = []
    seen: Set[Setting] = set()
    for point in points:
        setting = make_setting(method, point)
        same_map = _order_free(setting)
        if same_map not in seen:
            seen.add(same_map)
            settings.append(setting)
    return settings


def _order_free(setting: Setting) -> Setting:
    """:obj:`setting` with order "edge" where the order cannot change the map.

    KONG with :math:`k = 1` (label counts): a grid keeps one setting of such a map (the first, with the
    order it was given, which decides whether a stored key is read).
    """
    params = setting.config
    if setting.method != "kong" or params.get("k") != 1 or params.get("order") == "edge":
        return setting
    return Setting(setting.method, tuple((key, "edge" if key == "order" else value)
                                         for key, value in setting.params))


_BASELINE_NAMES = {
    "wl": "wl-hH = Weisfeiler-Lehman subtree features with H iterations (PyG WLConv), -l2 L2-normalised",
    "wl-grakel": "wl-grakel-hH = GraKeL's Weisfeiler-Lehman kernel with H iterations",
    "sp": "sp = labelled shortest-path kernel, -l2 normalised",
    "kw": "kw-K = label sequences of walks with K edges",
    "kong-mean": "kong-mean-GRID = the mean of KONG grid GRID's kernels, each normalised to K(G, G) = 1",
}


def name_legend(settings: Sequence[Setting]) -> str:
    """One line explaining the setting names of a report.

    For KONG: ``kernel-degree``, ``-rlb`` and, for every option off its
    default in some setting, its tag with the option's help text
    (:func:`~kong_pyg.config.option_docs`).

    Args:
        settings (list): The settings of the report.

    Returns:
        str
    """
    methods = list(dict.fromkeys(s.method for s in settings))
    parts = [_BASELINE_NAMES[m] for m in methods if m in _BASELINE_NAMES]
    kong = [s.kong_config().canonical() for s in settings if s.method == "kong"]
    if kong:
        parts.insert(0, "kernel-degree (e.g. cosine-2: cosine base kernel, degree p = 2); "
                        "rlb = WL relabelling first")
        if any(s.config.get("depths") == "sum" for s in settings if s.method == "kong"):
            parts.insert(1, "depth-sum = the sum of the kernels of depths 0..h")
        tags = _tags_in_use(kong)
        if tags:
            parts.append("[...] = options off their defaults: "
                         + ", ".join(_legend_item(tag, *item) for tag, item in tags.items()))
    return "names: " + "; ".join(parts)


def _legend_item(tag: str, name: str, default: Any, doc: str) -> str:
    return f"{tag} (option {name}, --{name.replace('_', '-')}, default {default!r}: {doc})"


def _tags_in_use(configs: Sequence[KongConfig]) -> Dict[str, Tuple[str, Any, str]]:
    """Tag text -> the option's name, default and help, for the tags some config shows (one per option)."""
    docs = option_docs()
    out: Dict[str, Tuple[str, Any, str]] = {}
    for f in fields(KongConfig):
        tag = f.metadata.get("tag")
        if tag is None:
            continue
        texts = [tag(getattr(cfg, f.name)) for cfg in configs if getattr(cfg, f.name) != f.default]
        texts = [text for text in texts if text]
        if texts:
            out[texts[0]] = (f.name, f.default, docs[f.name])
    return out


__all__ = [
    "METHODS",
    "KONG_DEFAULTS",
    "METHOD_DEFAULTS",
    "DEPTHS",
    "GRID_PRESETS",
    "EXTENDED_STRINGS",
    "EXTENDED_KERNELS",
    "EXTENDED_HOPS",
    "EXTENDED_RELABEL",
    "extended_grid",
    "Setting",
    "paper_grid",
    "expand_grid",
    "make_setting",
    "name_legend",
    "as_list",
]
