r"""Every KONG option, documented and validated in one place: :class:`KongConfig`.

Each front-end (:class:`~kong_pyg.KongSketch`, :class:`~kong_pyg.KongVectorizer`,
:class:`~kong_pyg.KongFeatures`, :class:`~kong_pyg.KongStream`, the
``kong-pyg`` command line and the evaluation grids) takes either a
:class:`KongConfig` (``config=``) or the same options as keyword arguments,
and turns them into a :class:`KongConfig` with :func:`resolve_config`. So an
option is added, documented and checked here once; front-ends only pass it
on. An option named beside :obj:`config` must equal the config's value, even
where it is the front-end's default (:class:`GivenOptions` notes the names a
call gives).

A field's metadata holds its help text (``doc``, shown by :func:`option_docs`
and the command line) and, for the evaluation tables, the short ``tag`` a
non-default value adds to a setting's name (:meth:`KongConfig.short_name`).
"""
import inspect
import math
import numbers
from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Tuple

if TYPE_CHECKING:  # torch is imported where it is used: `import kong_pyg` stays light
    import torch

#: The traversals (see :mod:`kong_pyg.traversals`).
TRAVERSALS: Tuple[str, ...] = ("bfs", "wl")
#: The base kernels (see :mod:`kong_pyg.kernels`).
KERNELS: Tuple[str, ...] = ("poly", "cosine")
#: The neighbor orders (see :mod:`kong_pyg.ordering`).
ORDERS: Tuple[str, ...] = ("edge", "reverse", "consistent", "label", "degree", "random")
#: How cosine norms of sketched maps are taken.
NORMS: Tuple[str, ...] = ("exact", "sketch")
#: PyG's message-passing directions.
FLOWS: Tuple[str, ...] = ("source_to_target", "target_to_source")


# -- small validators (also used by the front-ends for their own arguments) ----


#: The largest k, hops, degree and relabel rounds (far beyond any useful value; bounds the tables:
#: k = degree = 10,000 built 3.3 GB of hashes, and the linear map's work grows like hops^2).
MAX_SIZE_OPTION = 1_000
#: The largest sketch size :obj:`dim` (sketches are dense rows: 2^40 columns are 8 TiB a row).
MAX_DIM = 2**40
#: The largest seed. PyTorch's CPU generator (a Mersenne Twister, which draws every table) keeps only
#: the low 32 bits of its seed, so larger seeds would repeat smaller ones (2**32 draws as 0); NumPy's
#: seeds stop there too.
MAX_SEED = 2**32 - 1


def check_choice(name: str, value: Any, choices: Iterable[str]) -> str:
    """Check that :obj:`value` is one of :obj:`choices` (a string: :class:`TypeError` for another type)."""
    choices = tuple(choices)
    if not isinstance(value, str):
        raise TypeError(f"'{name}' must be a string, one of {list(choices)} (got {type(value).__name__})")
    if value not in choices:
        raise ValueError(f"'{name}' must be one of {list(choices)} (got {value!r})")
    return next(c for c in choices if c == value)  # (the plain choice: np.str_('wl') or a str Enum member)


def check_int(name: str, value: Any, minimum: int, maximum: Optional[int] = None) -> int:
    """Check that :obj:`value` is an integer (Python or NumPy) in [:obj:`minimum`, :obj:`maximum`]."""
    if not isinstance(value, bool) and type(value).__module__ == "numpy" and hasattr(value, "dtype"):
        if value.dtype.kind in "iu" and getattr(value, "ndim", 0) == 0:
            value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"'{name}' must be an integer (got {type(value).__name__})")
    if value < minimum:
        raise ValueError(f"'{name}' must be >= {minimum} (got {value})")
    if maximum is not None and value > maximum:
        raise ValueError(f"'{name}' must be <= {maximum:,} (got {value:,})")
    return int(value)


def check_float(name: str, value: Any, minimum: float) -> float:
    """Check that :obj:`value` is a finite real number at least :obj:`minimum`."""
    kind = getattr(getattr(value, "dtype", None), "kind", "")
    numpy_scalar = type(value).__module__ == "numpy" and kind in "iuf" and getattr(value, "ndim", 1) == 0
    if isinstance(value, bool) or not (isinstance(value, (int, float)) or numpy_scalar):
        raise TypeError(f"'{name}' must be a number (got {type(value).__name__})")
    try:
        value = float(value)
    except OverflowError:  # (a Python int beyond float64: 10**400)
        raise ValueError(f"'{name}' must be >= {minimum} and finite (got an integer beyond float64, "
                         f"of {int(value).bit_length():,} bits)") from None
    if not value >= minimum or value == float("inf"):  # also rejects NaN
        raise ValueError(f"'{name}' must be >= {minimum} and finite (got {value})")
    return value


def check_c_grid(name: str, value: Any) -> List[float]:
    r"""Check an SVM :math:`C` grid: finite positive real numbers, at least one; as a list of floats.

    One rule for every function that takes a grid. A single number is a one-value grid; a sequence
    or other ordered iterable (list, tuple, generator, 1-D array or tensor) is read in order (ties in
    the choice of :math:`C` go to the earlier value, so unordered sets are refused). Booleans and
    strings are not numbers.

    Args:
        name (str): The argument's name, for the error.
        value (Any): The grid.
    """
    if _is_real(value):
        values = [value]
    elif isinstance(value, (str, bytes, Mapping, set, frozenset)) or not isinstance(value, Iterable) \
            or getattr(value, "ndim", 1) != 1:
        raise TypeError(f"'{name}' must be a positive number or a sequence of them "
                        f"(got {type(value).__name__})")
    else:
        values = list(value)
    out = []
    for c in values:
        try:
            f = float(c) if _is_real(c) else math.nan
        except OverflowError:
            f = math.inf
        if not 0 < f < math.inf:
            raise ValueError(f"'{name}' must be positive numbers, finite and at least one (got {values!r})")
        out.append(f)
    if not out:
        raise ValueError(f"'{name}' must be positive numbers, finite and at least one (got [])")
    return out


def python_number(value: Any) -> Any:
    """A NumPy (or 0-d torch) number as Python's own (for JSON); any other value as it is."""
    return value.item() if getattr(value, "ndim", None) == 0 and hasattr(value, "item") else value


def zero_dim(value: Any) -> bool:
    """Whether :obj:`value` is a 0-d array or tensor: iterable by its type, but not by its value."""
    return getattr(value, "ndim", None) == 0 and hasattr(value, "__iter__")


def _is_real(value: Any) -> bool:
    """A real number (Python's, a fraction, NumPy's), or a 0-d real array or tensor (not a bool)."""
    if _is_bool(value):
        return False
    if isinstance(value, numbers.Real):
        return True
    dtype = getattr(value, "dtype", None)
    if dtype is None or getattr(value, "ndim", None) != 0:
        return False
    kind = getattr(dtype, "kind", None)  # NumPy; a torch dtype has none
    if kind is not None:
        return kind in ("i", "u", "f")
    return not getattr(dtype, "is_complex", True) and str(dtype) != "torch.bool"


def _is_bool(value: Any) -> bool:
    """Python's bool or NumPy's (named ``bool`` in NumPy 2, ``bool_`` in NumPy 1)."""
    kind = type(value)
    return isinstance(value, bool) or (kind.__module__ == "numpy" and kind.__name__ in ("bool", "bool_"))


def check_bool(name: str, value: Any) -> bool:
    """Check that :obj:`value` is :obj:`True` or :obj:`False` (NumPy bools too)."""
    if _is_bool(value):
        return bool(value)
    raise TypeError(f"'{name}' must be True or False (got {value!r})")


def check_attr_name(name: str, value: Any) -> Optional[str]:
    """Check that :obj:`value` is a non-empty string (an attribute name) or :obj:`None`."""
    if value is not None and (not isinstance(value, str) or not value):
        raise TypeError(f"'{name}' must be a non-empty string or None (got {value!r})")
    return value


def check_device(name: str, value: Any) -> Optional["torch.device"]:
    """Check that :obj:`value` names a device; returns it as a :class:`torch.device` (or :obj:`None`).

    A :class:`torch.device`, a string such as :obj:`"cuda:0"`, or :obj:`None`.
    """
    import torch

    if value is None or isinstance(value, torch.device):
        return value
    if not isinstance(value, str):
        raise TypeError(f"'{name}' must be a torch.device, a device string such as 'cpu' or 'cuda:0', or "
                        f"None (got {type(value).__name__})")
    try:
        return torch.device(value)
    except RuntimeError:
        raise ValueError(f"'{name}' must be a device string such as 'cpu' or 'cuda:0' "
                         f"(got {value!r})") from None


def check_usable_device(name: str, value: Any) -> Optional["torch.device"]:
    """:func:`check_device`, and that this PyTorch computes there (a :obj:`ValueError` if not).

    A one-element sum is computed there and read back: a CPU-only build asserts for :obj:`"cuda"`,
    and the :obj:`"meta"` device allocates but holds no values.
    """
    import torch

    dev = check_device(name, value)
    if dev is not None and dev.type == "meta":  # (allocates, computes shapes: no values to read)
        raise ValueError(f"'{name}' is 'meta', a device that holds no values: nothing can be computed there")
    if dev is not None:
        try:
            float(torch.ones(1, device=dev).sum())
        except (AssertionError, RuntimeError, NotImplementedError) as err:
            raise ValueError(f"'{name}' is {str(dev)!r}, which this PyTorch cannot use: "
                             f"{str(err).splitlines()[0] if str(err) else type(err).__name__}") from None
    return dev


def _opt(default: Any, doc: str, tag: Optional[Callable[[Any], str]] = None) -> Any:
    return field(default=default, metadata={"doc": doc, "tag": tag})


@dataclass(frozen=True)
class KongConfig:
    r"""The options of a KONG feature map.

    Node :math:`v` gets strings :math:`s_v^0 = l(v)` and, for
    :math:`i = 1..h`, :math:`s_v^i` = (WL only: :math:`l(v)`) then, for each
    neighbor :math:`u` in neighbor order, the edge label (if any) and
    :math:`s_u^{i-1}`. :math:`c_v` counts the k-grams of these strings (BFS:
    every level its own block; WL: the last string), the base kernel is
    :math:`\kappa(c, c') = (\langle c, c' \rangle + const)^p` (poly) or
    :math:`(\langle c, c' \rangle / \|c\| \|c'\|)^p` (cosine), and the graph
    kernel is :math:`K(G, H) = \sum_{v \in G} \sum_{w \in H}
    \kappa(c_v, c_w)`, computed exactly or through a sketch of size
    :obj:`dim`.

    Args:
        k (int, optional): The k-gram length; :obj:`1` counts labels and
            ignores the neighbor order. (default: :obj:`1`)
        hops (int, optional): The depth :math:`h` of the strings.
            (default: :obj:`2`)
        traversal (str, optional): :obj:`"bfs"` (one string per level, each
            level its own block of the feature vector) or :obj:`"wl"`
            (:math:`l(v)` then the neighbors' strings; the last string
            only). (default: :obj:`"bfs"`)
        dim (int, optional): The sketch size :math:`b`, or :obj:`None` for
            the exact (sparse) map. (default: :obj:`None`)
        kernel (str, optional): The base kernel, :obj:`"poly"` or
            :obj:`"cosine"`. (default: :obj:`"poly"`)
        degree (int, optional): The kernel degree :math:`p` (Tensor-Sketch
            when sketched and :math:`p > 1`). (default: :obj:`1`)
        const (float, optional): The polynomial constant :math:`c \geq 0`
            (one extra coordinate :math:`\sqrt{c}`; the cosine kernel has
            none). (default: :obj:`0.0`)
        seed (int, optional): The seed of the hash tables and of
            :obj:`order="random"`, :math:`0 \leq seed < 2^{32}` (PyTorch's
            CPU generator keeps 32 bits of a seed: larger ones would repeat
            smaller ones). (default: :obj:`0`)
        order (str, optional): The neighbor order: :obj:`"edge"` (edge order,
            or a per-edge key :obj:`edge_order` such as timestamps),
            :obj:`"reverse"` (that order backwards), :obj:`"consistent"` (a
            seeded shuffle by the per-edge key: an event keeps its random
            position in every graph it appears in, the honest "shuffled"
            control), :obj:`"label"` (by neighbor label; after relabelling by
            the WL label's 58-bit code, a fixed order), :obj:`"degree"`
            (ascending by the neighbor's own neighborhood size under
            :obj:`flow`, its in-degree for :obj:`"source_to_target"`,
            multi-edges and self-loops counted; for both, ties by edge label, then WL
            colours: no node numbering changes the features) or
            :obj:`"random"` (a seeded shuffle of
            every neighborhood, keyed by each edge's position in its graph
            and the graph's content, so a graph's features do not depend on
            the batch: the paper's "shuffled" control, which also turns a
            node's order, the same in every graph, into per-graph noise).
            Other ties keep edge order (:obj:`"reverse"` reverses them too).
            (default: :obj:`"edge"`)
        relabel (int or bool, optional): Rounds of WL relabelling before the
            strings are built (the paper's "rlb" is one round; :obj:`True`
            means 1). (default: :obj:`0`)
        blended (bool, optional): Count all n-grams :math:`n = 1..k`, each
            length its own block (the authors' experiment code).
            (default: :obj:`False`)
        norm (str, optional): Cosine norms of a sketched map: :obj:`"exact"`
            (from exact counts) or :obj:`"sketch"` (estimated from the
            sketches; what a stream can do). (default: :obj:`"exact"`)
        flow (str, optional): :obj:`"source_to_target"` (node
            :obj:`edge_index[1]` collects from :obj:`edge_index[0]`, PyG's
            default) or :obj:`"target_to_source"`.
            (default: :obj:`"source_to_target"`)
        normalize (bool, optional): L2-normalize every graph vector (the
            normalized graph kernel :math:`K(G, H) / \sqrt{K(G, G) K(H, H)}`);
            a graph whose vector is zero (no k-gram, e.g. a single node with
            :math:`k \geq 2`, with :obj:`const = 0` or the cosine kernel) keeps a
            zero row: its kernel with every graph, itself included, is 0.
            (default: :obj:`False`)
        edge_labels (bool, optional): Use edge labels (:obj:`edge_attr`, a
            stream's edge types) when the graphs have them.
            (default: :obj:`True`)
        own_label (bool, optional): Whether the node's own label is part of
            its strings. :obj:`False` (the KONG authors' experiment code) counts
            the neighbors' strings only, and theirs lack their own labels too:
            BFS drops the level-0 block; WL's :math:`s_v^i` is the neighbors'
            label-free strings :math:`s_u^{i-1}` joined, which at :math:`h \geq
            2` is BFS's level-:math:`h` block (at :math:`h = 1` both are the
            neighbors' labels). (default: :obj:`True`)
    """

    k: int = _opt(1, "k-gram length (1 = label counts, order-free)",
                  lambda v: f"k={v}")
    hops: int = _opt(2, "depth h of the strings", lambda v: f"h={v}")
    traversal: str = _opt("bfs", "bfs (one block per level) or wl (label, then the neighbors' strings)",
                          lambda v: v)
    dim: Optional[int] = _opt(None, "sketch size b ('exact' or none: the exact sparse map)",
                              lambda v: f"b={v}")
    kernel: str = _opt("poly", "base kernel: poly or cosine")
    degree: int = _opt(1, "kernel degree p")
    const: float = _opt(0.0, "polynomial constant c >= 0", lambda v: f"c={v:g}")
    seed: int = _opt(0, "seed of the hash tables and of order=random")
    order: str = _opt("edge", "neighbor order: edge (or the edge_order key), reverse, consistent (seeded "
                      "shuffle by edge key), label, degree or random (a seeded shuffle per graph)",
                      lambda v: f"order={v}")
    relabel: int = _opt(0, "rounds of WL relabelling first (rlb; yes = 1)",
                        lambda v: "" if v == 1 else f"rlb={v}")
    blended: bool = _opt(False, "count all n-grams n = 1..k, each length its own block",
                         lambda v: "blended")
    norm: str = _opt("exact", "cosine norms of a sketch: exact or sketch (estimated)",
                     lambda v: f"norm={v}")
    flow: str = _opt("source_to_target", "source_to_target (PyG's default) or target_to_source",
                     lambda v: f"flow={v}")
    normalize: bool = _opt(False, "L2-normalize every graph vector", lambda v: "gnorm")
    edge_labels: bool = _opt(True, "use edge labels when the graphs have them",
                             lambda v: "no-edge-labels")
    own_label: bool = _opt(True, "the node's own label is part of its strings (no: neighbors' strings only)",
                           lambda v: "no-own-label")

    def __post_init__(self) -> None:
        put = object.__setattr__
        put(self, "k", check_int("k", self.k, 1, MAX_SIZE_OPTION))
        put(self, "hops", check_int("hops", self.hops, 0, MAX_SIZE_OPTION))
        put(self, "traversal", check_choice("traversal", self.traversal, TRAVERSALS))
        if self.dim is not None:
            put(self, "dim", check_int("dim", self.dim, 1, MAX_DIM))
        put(self, "kernel", check_choice("kernel", self.kernel, KERNELS))
        put(self, "degree", check_int("degree", self.degree, 1, MAX_SIZE_OPTION))
        put(self, "const", check_float("const", self.const, 0.0))
        put(self, "seed", check_int("seed", self.seed, 0, MAX_SEED))
        put(self, "order", check_choice("order", self.order, ORDERS))
        relabel = int(bool(self.relabel)) if _is_bool(self.relabel) else self.relabel
        put(self, "relabel", check_int("relabel", relabel, 0, MAX_SIZE_OPTION))
        put(self, "blended", check_bool("blended", self.blended))
        put(self, "norm", check_choice("norm", self.norm, NORMS))
        put(self, "flow", check_choice("flow", self.flow, FLOWS))
        put(self, "normalize", check_bool("normalize", self.normalize))
        put(self, "edge_labels", check_bool("edge_labels", self.edge_labels))
        put(self, "own_label", check_bool("own_label", self.own_label))
        if not self.own_label and self.hops == 0:
            raise ValueError("own_label=False leaves no string at hops=0 (the level-0 string is the label)")

    # -- conveniences ----------------------------------------------------------

    @property
    def exact(self) -> bool:
        """Whether this is the exact (unsketched) map."""
        return self.dim is None

    def replace(self, **changes: Any) -> "KongConfig":
        """A copy with some options changed (and checked)."""
        return replace(self, **changes)

    def to_dict(self) -> Dict[str, Any]:
        """The options as a plain dict (JSON-ready)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> "KongConfig":
        """Build from a dict; unknown keys are an error naming them."""
        unknown = sorted(set(values) - set(option_names()))
        if unknown:
            raise ValueError(f"unknown KONG option(s) {unknown}; expected some of {option_names()}")
        return cls(**dict(values))

    def canonical(self) -> "KongConfig":
        """The same map with options that cannot change it set to their defaults.

        The cosine kernel has no constant; :obj:`norm` only matters for a
        sketched cosine map; with :math:`k = 1` blended counts are the counts;
        at depth 0 the strings are the labels alone, whatever the edge labels
        and, for the exact map, the traversal (the sketches of the two
        traversals hash level 0 apart). Two configs with the same canonical form give
        the same features. (With :math:`k = 1` no order matters either, but
        the order decides whether a stored :obj:`edge_order` is read and
        checked, so it stays: :func:`~kong_pyg.evaluation.grid.expand_grid`
        keeps one setting of such a map.)
        """
        out = self
        if self.kernel == "cosine" and self.const:
            out = out.replace(const=0.0)
        if (self.dim is None or self.kernel != "cosine") and self.norm != "exact":
            out = out.replace(norm="exact")
        if self.k == 1 and self.blended:
            out = out.replace(blended=False)
        if self.hops == 0 and not self.edge_labels:
            out = out.replace(edge_labels=True)
        if self.hops == 0 and self.dim is None and self.traversal != "bfs":
            out = out.replace(traversal="bfs")
        return out

    def short_name(self) -> str:
        """A short name in the KONG paper's style, with a tag per non-default option.

        ``cosine-rlb-2`` is the cosine kernel of degree 2 after one WL
        relabelling round; options off their defaults follow in brackets,
        e.g. ``poly-1 [k=2, b=1024]`` (see :func:`option_docs` for what each
        tag means).
        """
        c = self.canonical()
        base = f"{c.kernel}{'-rlb' if c.relabel else ''}-{c.degree}"
        extra = []
        for f in fields(c):
            tag = f.metadata.get("tag")
            value = getattr(c, f.name)
            if tag is None or value == f.default:
                continue
            text = tag(value)
            if text:
                extra.append(text)
        return base + (f" [{', '.join(extra)}]" if extra else "")

    def __repr__(self) -> str:
        changed = [f"{f.name}={getattr(self, f.name)!r}" for f in fields(self)
                   if getattr(self, f.name) != f.default]
        return f"KongConfig({', '.join(changed)})"


def option_names() -> List[str]:
    """The names of the options, in order."""
    return [f.name for f in fields(KongConfig)]


def option_defaults() -> Dict[str, Any]:
    """Every option and its default."""
    return {f.name: f.default for f in fields(KongConfig)}


#: :class:`~kong_pyg.KongStream`'s defaults of the KONG options it takes (they differ from
#: :class:`KongConfig`'s); here, not in the stream package, so the command line reads them light.
STREAM_DEFAULTS: Dict[str, Any] = dict(k=1, hops=1, traversal="bfs", dim=1024, kernel="poly", degree=1,
                                       const=0.0, seed=0, blended=False, edge_labels=True, own_label=True)


def option_docs() -> Dict[str, str]:
    """Every option and its one-line help text."""
    return {f.name: f.metadata["doc"] for f in fields(KongConfig)}


#: Where :class:`GivenOptions` keeps the names (in the object's own dict, before ``__init__`` runs).
_GIVEN = "_given_options"


@lru_cache(maxsize=None)
def _init_names(init: Any) -> Tuple[str, ...]:
    """The parameter names of a front-end's ``__init__``, without ``self`` (cached: 25 us saved a call)."""
    return tuple(inspect.signature(init).parameters)[1:]


class GivenOptions:
    """Records which constructor arguments a call named, positionally or by keyword.

    :obj:`KongSketch(k=1, config=KongConfig(k=2))` names :obj:`k` at its
    default value: only the call tells it from an absent :obj:`k`, so the
    front-ends' ``__new__`` notes the names for :func:`resolve_config`
    (:func:`given_options` takes them in ``__init__``). Only calls of a
    front-end's own ``__init__`` are noted: a subclass's constructor takes
    other arguments, and passes its own to the front-end (there the values
    alone are compared with the defaults, as without this class).
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        obj = super().__new__(cls)
        init = cls.__init__
        if (args or kwargs) and getattr(init, "__module__", "").startswith(__name__.rpartition(".")[0] + "."):
            # (no names when copy or pickle makes the object)
            obj.__dict__[_GIVEN] = frozenset(_init_names(init)[:len(args)]) | frozenset(kwargs)
        return obj


def given_options(obj: Any) -> FrozenSet[str]:
    """The argument names :class:`GivenOptions` noted for :obj:`obj`'s construction (taken once)."""
    return obj.__dict__.pop(_GIVEN, frozenset())


def named_options(obj: Any, names: Optional[Iterable[str]] = None) -> FrozenSet[str]:
    """The names noted for :obj:`obj`, left in place; with :obj:`names`, they replace them first.

    For a front-end that resolves its config later, as a scikit-learn estimator does in ``fit``.
    """
    if names is not None:
        obj.__dict__[_GIVEN] = frozenset(names)
    return obj.__dict__.get(_GIVEN, frozenset())


def resolve_config(
    config: Optional[KongConfig],
    options: Mapping[str, Any],
    defaults: Mapping[str, Any],
    owner: str,
    given: Iterable[str] = (),
) -> KongConfig:
    """The :class:`KongConfig` of a front-end called with :obj:`config` or keyword options.

    Args:
        config (KongConfig, optional): A config passed as :obj:`config=`.
        options (dict): The front-end's KONG keyword arguments as received.
        defaults (dict): The front-end's defaults of those arguments (they
            may differ from :class:`KongConfig`'s, e.g. a sketch size).
        owner (str): The front-end's name, for error messages.
        given (iterable of str, optional): The options the call named, where
            known: one named at its default value clashes with a config of
            another value too.

    Raises:
        TypeError: :obj:`config` is not a :class:`KongConfig`.
        ValueError: Both :obj:`config` and options (named, or off their
            defaults) off the config's values.
    """
    check_option_names(owner, options)
    if config is None:
        return KongConfig(**dict(options))
    if not isinstance(config, KongConfig):
        raise TypeError(f"'config' must be a KongConfig (got {type(config).__name__})")
    named = frozenset(given)
    changed = [name for name, value in options.items() if name in named
               or defaults.get(name, MISSING) is not MISSING and not same_value(value, defaults[name])]
    clash = [name for name in changed if not same_value(options[name], getattr(config, name, MISSING))]
    if clash:
        raise ValueError(
            f"{owner} got both 'config' and the option(s) {clash}; pass the options inside the "
            f"config (config.replace({clash[0]}=...)) or drop 'config'"
        )
    return config


def check_option_names(owner: str, options: Iterable[str], not_here: Iterable[str] = ()) -> None:
    """Refuse keyword arguments of :obj:`owner` that are no KONG option, naming :obj:`owner`.

    The message lists the options :obj:`owner` takes: all but :obj:`not_here`.
    """
    names = option_names()
    unknown = [name for name in options if name not in names]  # (the first as Python names it: in call order)
    if unknown:
        taken = [name for name in names if name not in set(not_here)]
        raise TypeError(f"{owner}() got an unexpected keyword argument {unknown[0]!r}; its KONG options are "
                        f"{', '.join(taken)}")


def same_value(a: Any, b: Any) -> bool:
    """Whether two option values are the same (odd values that cannot be compared: not)."""
    try:
        return a is b or bool(a == b)
    except Exception:  # arrays and other odd values: not the default
        return False


__all__ = [
    "KongConfig",
    "resolve_config",
    "option_names",
    "option_defaults",
    "option_docs",
    "STREAM_DEFAULTS",
    "check_choice",
    "check_int",
    "check_float",
    "check_bool",
    "zero_dim",
    "python_number",
    "TRAVERSALS",
    "KERNELS",
    "ORDERS",
    "NORMS",
    "FLOWS",
]
