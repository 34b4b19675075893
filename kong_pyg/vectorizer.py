r"""The :class:`KongVectorizer`: explicit KONG features of many graphs."""
from typing import Any, Optional, Union

import numpy as np
from scipy.sparse import csr_matrix
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .config import (
    GivenOptions,
    KongConfig,
    check_int,
    named_options,
    option_defaults,
    option_names,
    resolve_config,
    same_value,
)
from .featuremap import ExactColumns
from .sketch import HASH_VERSION
from .threads import torch_threads

#: KongVectorizer's keyword defaults: KongConfig's (the exact map).
_DEFAULTS = option_defaults()

#: What :meth:`KongVectorizer.transform` returns: the exact map's CSR matrix or the sketches' array.
FeatureMatrix = Union[csr_matrix, np.ndarray]


class KongVectorizer(GivenOptions, ExactColumns, TransformerMixin, BaseEstimator):
    r"""KONG graph features of a sequence of PyG graphs, scikit-learn style.

    One row per graph: the explicit map :math:`\Phi(G) = \sum_{v \in G}
    \phi_\kappa(c_v)` of the KONG graph kernel (see :class:`KongSketch`).

    * :obj:`dim=None`: the **exact** map as a :class:`scipy.sparse.csr_matrix`.
      Columns are the k-grams (with their BFS level) seen in :meth:`fit`,
      ordered by level, k-gram length and symbol codes whatever
      :obj:`batch_size` and the order of the graphs;
      for :math:`p > 1` they are the multisets of :math:`p` k-grams (ordered
      by their k-grams' columns), weighted
      by the square root of their multinomial coefficient, so that
      :obj:`X @ X.T` is the kernel matrix :math:`K` (exactly at :math:`p = 1`;
      for :math:`p > 1` up to float64 rounding of those square roots, about
      1e-16 relative: 55.99999999999999 for 56; :func:`~kong_pyg.gram_matrix`
      gives integer kernels exactly). As in
      scikit-learn's ``DictVectorizer``, k-grams first seen in
      :meth:`transform` are dropped (they contribute nothing to kernel values
      against fitted graphs; cosine norms still count them).
    * :obj:`dim=b`: the sketched map of :class:`KongSketch` (same seed, same
      numbers), a dense :class:`numpy.ndarray` :obj:`[n_graphs, b]` with
      :math:`E[XX^\top] = K`.

    A graph's row never depends on the other graphs of the call (on the CPU,
    to the last bit where the map's values are integers or its nodes are pooled in
    node order; a sketched cosine map with :math:`p = 1` sums non-integer
    node weights in an order that the batch may change, within rounding,
    about :math:`10^{-16}` relative). The graphs
    of :meth:`fit` and of later calls must all have edge labels
    (:obj:`edge_attr`) or all have none (a :class:`ValueError` otherwise;
    a graph without edges may lack it), unless :obj:`edge_labels=False`. Counts are
    exact in ``float64`` up to :math:`2^{53}` (deep :obj:`hops` on dense
    graphs give astronomically many k-grams: values grow, never wrap).

    Args:
        k, hops, traversal, dim, kernel, degree, const, seed, order,
            relabel, blended, normalize, norm, flow, edge_labels, own_label: The KONG
            options, documented in :class:`~kong_pyg.KongConfig` (same
            defaults: :obj:`dim=None` is the exact map; :obj:`normalize`
            L2-normalizes every graph's row, the normalized kernel
            :math:`K(G,H)/\sqrt{K(G,G)K(H,H)}`).
        edge_order_attr (str, optional): The attribute holding a per-edge
            sort key that defines the neighbor order, used when present by
            the orders that read a key (:obj:`"edge"`, :obj:`"reverse"`,
            :obj:`"consistent"`); the others ignore it.
            (default: :obj:`"edge_order"`)
        batch_size (int, optional): At most this many graphs are processed
            together (memory stays bounded by one batch; the fewest such
            batches, of sizes as equal as possible). (default: :obj:`4096`)
        device (str or torch.device, optional): Where to compute.
            (default: where the graphs are, the CPU for most data sets)
        progress (bool, optional): Show a progress bar. (default: :obj:`False`)
        threads (int, optional): PyTorch threads while computing (at most the
            cores this process is given; restored afterwards); :obj:`None`
            keeps PyTorch's setting. One thread is the robust choice: the
            work is many mid-sized tensor operations that gain little from a
            second thread and slow down several-fold when another process
            competes for the cores (see :func:`kong_pyg.threads.torch_threads`).
            Process-level parallelism (:obj:`n_jobs`) is not offered: on the
            TU data sets one process computes the maps in well under a
            second, and graphs sent to workers must first be made small to
            pickle (:func:`~kong_pyg.compact_graphs`). (default: :obj:`1`)
        hash_scheme (int, optional): The sketches' hash scheme
            (:data:`kong_pyg.sketch.HASH_VERSION`; 1 reproduces the sketched
            features of kong_pyg before scheme 2; the exact map has no hashes).
            A vectorizer pickled before this option keeps the scheme it was
            fitted with, also when fitted again. (default: the current scheme)
        config (KongConfig, optional): All KONG options at once, instead of
            the keyword arguments above. With it, :meth:`get_params` reports
            the config's options and :meth:`set_params` changes them in it
            (so :class:`~sklearn.model_selection.GridSearchCV` can search them).
            An option also named in the call (even at its default value) must
            equal the config's (:meth:`fit` refuses it otherwise, and
            :meth:`get_params` reports it as named, so a clone refuses it
            too); :meth:`set_params` with a new config gives it to the options
            that followed the old one (or sat at their defaults without one).

    Attributes:
        config_ (KongConfig): The options :meth:`fit` used (:meth:`transform`
            uses them too).
        n_features_out_ (int): The number of columns.
    """

    def __init__(
        self,
        k: int = 1,
        hops: int = 2,
        traversal: str = "bfs",
        dim: Optional[int] = None,
        kernel: str = "poly",
        degree: int = 1,
        const: float = 0.0,
        seed: int = 0,
        order: str = "edge",
        relabel: Union[int, bool] = False,
        blended: bool = False,
        normalize: bool = False,
        norm: str = "exact",
        flow: str = "source_to_target",
        edge_labels: bool = True,
        edge_order_attr: Optional[str] = "edge_order",
        batch_size: int = 4096,
        device=None,
        progress: bool = False,
        own_label: bool = True,
        threads: Optional[int] = 1,
        config: Optional[KongConfig] = None,
        hash_scheme: int = HASH_VERSION,
    ):
        self.k = k
        self.hops = hops
        self.traversal = traversal
        self.dim = dim
        self.kernel = kernel
        self.degree = degree
        self.const = const
        self.seed = seed
        self.order = order
        self.relabel = relabel
        self.blended = blended
        self.normalize = normalize
        self.norm = norm
        self.flow = flow
        self.edge_labels = edge_labels
        self.edge_order_attr = edge_order_attr
        self.batch_size = batch_size
        self.device = device
        self.progress = progress
        self.own_label = own_label
        self.threads = threads
        self.config = config
        self.hash_scheme = hash_scheme

    def __setstate__(self, state: dict) -> None:
        if "hash_scheme" not in state:  # (pickled before the option: a fitted one keeps its scheme, 1 where
            # it predates hash_version_ too; an unfitted one gets the current one, as before)
            scheme = state.get("hash_version_", 1) if "config_" in state else HASH_VERSION
            state = dict(state, hash_scheme=scheme)
        super().__setstate__(state)

    # -- scikit-learn API ----------------------------------------------------

    def get_params(self, deep: bool = True) -> dict:
        """The parameters; with :obj:`config`, the KONG options are the config's (but those named off it)."""
        params = super().get_params(deep)
        if isinstance(params.get("config"), KongConfig):  # (an option named in the call stays: fit refuses
            named = named_options(self)  # a clash, and so does a clone)
            params.update({n: getattr(params["config"], n) for n in option_names()
                           if n in params and n not in named})
        return params

    def set_params(self, **params) -> "KongVectorizer":
        """Set parameters; with :obj:`config`, KONG options go into it (``GridSearchCV`` over ``k`` works).

        A new :obj:`config` replaces the options that followed the old one
        (or their defaults, without one); an option named off them stays,
        and :meth:`fit` refuses the clash. :obj:`config=None` puts the
        options that followed the old config back to their defaults (as on
        a vectorizer never given one, and on its clone alike). With a config,
        options are checked here: a refused value leaves every parameter as
        it was, and options equal to the config's keep the config object.
        """
        old = self.config
        options = [n for n in option_names() if hasattr(self, n)]
        new = params.get("config", old)
        new = new if isinstance(new, KongConfig) else None
        if new is not None:  # the config object itself stays where no option changes (get_params round trips)
            changed = {n: params[n] for n in options if n in params and not (
                type(params[n]) is type(getattr(new, n)) and same_value(params[n], getattr(new, n)))}
            if changed:  # checked before anything is set: a refused value leaves the vectorizer as it was
                new = new.replace(**changed)
        super().set_params(**params)
        if new is not None:
            self.config = new
        if "config" in params:
            # Options that mirrored the old config, or sat at their defaults without one (a clone names
            # them all), follow the new one (or go back to their defaults); one named off them stays.
            mirrors = {n for n in options if n not in params and same_value(
                getattr(self, n), getattr(old, n) if isinstance(old, KongConfig) else _DEFAULTS[n])}
            for n in mirrors:
                setattr(self, n, _DEFAULTS[n] if new is None else getattr(new, n))
            named_options(self, named_options(self) - mirrors)
        return self

    def fit(self, graphs: Any, y: Any = None) -> "KongVectorizer":
        """Learn the columns (exact mode) from :obj:`graphs`; in sketch mode, check them.

        (Sketches are computed and dropped: their columns are the hash tables', fixed by :obj:`seed`.)
        """
        with torch_threads(self._threads()):
            self._run(graphs, fit=True, keep=False)
        return self

    def fit_transform(self, graphs: Any, y: Any = None) -> FeatureMatrix:
        """:meth:`fit` and :meth:`transform` in one pass."""
        with torch_threads(self._threads()):
            return self._run(graphs, fit=True, keep=True)

    def transform(self, graphs: Any) -> FeatureMatrix:
        """Features :obj:`[n_graphs, n_features]` of :obj:`graphs`."""
        check_is_fitted(self, "n_features_out_")
        with torch_threads(self._threads()):
            return self._run(graphs, fit=False, keep=True)

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Column names.

        Exact mode: ``L<level>:<gram>`` (BFS), ``<gram>`` (WL), ``const``; with
        :obj:`degree` :math:`p > 1` a column is a product of :math:`p` of those,
        joined by ``*`` (``L0:0*L1:e0``). Sketch mode (:obj:`dim`): ``kong0``,
        ``kong1``, ... (a sketch coordinate has no single k-gram).
        """
        check_is_fitted(self, "n_features_out_")
        return self._feature_names()

    # -- internals -----------------------------------------------------------

    def _threads(self) -> Optional[int]:
        return None if self.threads is None else check_int("threads", self.threads, 1)

    def _config(self) -> KongConfig:
        options = {name: getattr(self, name) for name in option_names()}
        return resolve_config(self.config, options, _DEFAULTS, "KongVectorizer", named_options(self))


__all__ = ["KongVectorizer"]
