r"""The :class:`KongFeatures` transform: KONG features as PyG data attributes."""
import copy
import re
from contextlib import contextmanager
from typing import Any, Iterator, List, Optional, Sequence, Tuple, Union

import torch
from torch import Tensor
from torch_geometric.data import Batch, Data
from torch_geometric.transforms import BaseTransform

from .config import (
    GivenOptions,
    KongConfig,
    check_attr_name,
    check_bool,
    check_choice,
    check_int,
    check_usable_device,
    given_options,
    option_defaults,
    option_names,
    resolve_config,
)
from .devices import cpu_by_default
from .graphs import as_graph_sequence, count_nodes, gc_paused, iter_graph_batches
from .inputs import check_batch, check_no_empty_graph
from .memory import check_allocation
from .nn.kong_sketch import KongSketch, check_sketch_dim
from .ordering import key_attribute
from .progress import Progress
from .sketch import HASH_VERSION, check_scheme
from .threads import torch_threads
from .warn import warn

#: KongFeatures' keyword defaults: KongConfig's, with a sketch size (the transform always sketches).
_DEFAULTS = {**option_defaults(), "dim": 1024}

LEVELS = ("node", "graph", "both")

#: Default attribute names per level.
DEFAULT_NODE_ATTR = "kong_x"
DEFAULT_GRAPH_ATTR = "kong_graph"
#: Attribute names the features may not take: what the graph holds as input or target (node
#: features may replace :obj:`x`, as PyG's feature transforms do).
RESERVED_ATTRS = frozenset({"x", "y", "pos", "edge_attr", "edge_weight", "num_nodes", "adj_t", "ptr"})


def _check_name(name, what: str) -> str:
    if not isinstance(name, str) or not name:
        raise TypeError(f"'attr_name' must be a non-empty string for the {what} features (got {name!r})")
    if name in RESERVED_ATTRS and not (name == "x" and what == "node"):  # node features may replace x
        raise ValueError(f"'attr_name' {name!r} would overwrite the graph's own {name!r} (PyG's inputs and "
                         f"targets: {', '.join(sorted(RESERVED_ATTRS))}); pick another name")
    # PyG's collation offsets attributes named like indices and batch vectors
    if "index" in name or "batch" in name or name == "face":
        raise ValueError(
            f"'attr_name' {name!r} would be treated as an index by PyG's batching "
            "(names holding 'index' or 'batch', or 'face'); pick another name"
        )
    if name.startswith("_"):  # (PyG keeps these on the object itself: data._store would hide the features)
        raise ValueError(f"'attr_name' {name!r} starts with '_', which PyG keeps for its own attributes; "
                         "pick another name")
    if name != "x" and (hasattr(Data, name) or hasattr(Batch, name)):  # (data.num_edges, batch.num_graphs)
        raise ValueError(f"'attr_name' {name!r} is a property or method of PyG's Data or Batch, which the "
                         "features would hide; pick another name")
    return name


def _register_in_batch(batch: Batch, node_attr: Optional[str], graph_attr: Optional[str]) -> None:
    """Slices for the new attributes of a :class:`~torch_geometric.data.Batch`.

    So that :meth:`~torch_geometric.data.Batch.to_data_list` and
    :meth:`~torch_geometric.data.Batch.get_example` hand them out per graph
    (node features like :obj:`x`, one graph row each).
    """
    slices, incs = getattr(batch, "_slice_dict", None), getattr(batch, "_inc_dict", None)
    if not isinstance(slices, dict) or not isinstance(incs, dict) or "x" not in slices:
        return
    # (copies: the shallow copy of the input shares them, and the input is never modified)
    batch._slice_dict, batch._inc_dict = slices, incs = dict(slices), dict(incs)
    g = batch.num_graphs
    if node_attr is not None:
        slices[node_attr], incs[node_attr] = slices["x"], torch.zeros(g, dtype=torch.long)
    if graph_attr is not None:
        slices[graph_attr], incs[graph_attr] = torch.arange(g + 1), torch.zeros(g, dtype=torch.long)


class KongFeatures(GivenOptions, BaseTransform):
    r"""Adds KONG features to a graph.

    From the `"KONG: Kernels for ordered-neighborhood graphs"
    <https://arxiv.org/abs/1805.10014>`_ paper (NeurIPS 2018).

    Computes the sketched KONG feature map of :class:`~kong_pyg.KongSketch`
    (same options, same numbers for the same :obj:`seed`) for a
    :class:`~torch_geometric.data.Data` object and stores it as new
    attributes:

    * :obj:`level="node"`: node features :math:`\mathbf{x}_v`, shape
      :obj:`[num_nodes, dim]`, under :obj:`"kong_x"`;
    * :obj:`level="graph"`: the graph feature :math:`\sum_{v \in G}
      \mathbf{x}_v` (:meth:`KongSketch.readout`), shape :obj:`[1, dim]`, under
      :obj:`"kong_graph"`, so that
      :class:`~torch_geometric.loader.DataLoader` batches it into one row
      per graph, :obj:`[num_graphs, dim]`;
    * :obj:`level="both"`: both (:obj:`attr_name` is then a pair of names).

    Node labels are read from :obj:`data.x` (integers or one-hot rows), edge
    labels from :obj:`data.edge_attr` (with :obj:`edge_labels=True`) and the
    neighbor order from the order of :obj:`data.edge_index`, or from the
    per-edge key :obj:`data[edge_order_attr]` when present. The input is
    never modified (a shallow copy gets the new attributes) and its edges are
    never reordered. Applied to a :class:`~torch_geometric.data.Batch`,
    graph-level features get one row per graph of the batch.

    Works as :obj:`transform` and as :obj:`pre_transform` of any PyG
    dataset; its :func:`repr` lists every option, so PyG notices a changed
    :obj:`pre_transform`. The hash tables follow the data to its device.

    .. warning::
        With :obj:`k >= 2` the features depend on the order of each node's
        incoming edges. Transforms that sort edges
        (:class:`~torch_geometric.transforms.ToUndirected`,
        :class:`~torch_geometric.transforms.ToSparseTensor`,
        :class:`~torch_geometric.transforms.RemoveDuplicatedEdges`,
        :func:`~torch_geometric.utils.coalesce`) must not run before it
        unless that order is meaningless for the data set. Those that merge
        parallel edges (the last three) change the features even with
        :obj:`k = 1`, where each parallel edge counts.

    Args:
        k, hops, traversal, dim, kernel, degree, const, seed, order,
            relabel, blended, norm, flow, own_label: The KONG options, documented in
            :class:`~kong_pyg.KongConfig` (defaults as there, except
            :obj:`dim=1024`: the transform always sketches).
        level (str, optional): :obj:`"node"`, :obj:`"graph"` or
            :obj:`"both"`. (default: :obj:`"node"`)
        attr_name (str or (str, str), optional): The attribute name (for
            :obj:`level="both"`: a pair, node name first). Node features may
            replace :obj:`x`; no features may take the graph's other inputs
            and targets (:data:`RESERVED_ATTRS`: :obj:`y`, :obj:`pos`,
            :obj:`edge_attr`, ...), index-like names or the per-edge key
            :obj:`edge_order_attr`. (default: :obj:`"kong_x"` for node
            features, :obj:`"kong_graph"` for graph features)
        normalize (bool, optional): L2-normalize the graph features (as
            :class:`~kong_pyg.KongVectorizer`); needs a graph level.
            (default: :obj:`False`)
        edge_labels (bool, optional): Use :obj:`data.edge_attr` as edge
            labels when present. (default: :obj:`True`)
        edge_order_attr (str, optional): The attribute holding a per-edge
            sort key (for example timestamps) that defines the neighbor
            order, used when present by the orders that read a key
            (:obj:`"edge"`, :obj:`"reverse"`, :obj:`"consistent"`);
            :obj:`None` ignores any.
            (default: :obj:`"edge_order"`)
        dtype (torch.dtype, optional): The dtype of the stored features
            (computed in :obj:`torch.float64`). (default: :obj:`torch.float32`)
        config (KongConfig, optional): All KONG options at once, instead of
            the keyword arguments above (:obj:`normalize` and
            :obj:`edge_labels` included).
        hash_scheme (int, optional): The sketches' hash scheme
            (:data:`kong_pyg.sketch.HASH_VERSION`; 1 reproduces the features
            of kong_pyg before scheme 2). It is part of the repr, which PyG
            compares with a data set's saved :obj:`pre_transform`.
            (default: the current scheme)

    Example:
        >>> from torch_geometric.datasets import TUDataset
        >>> dataset = TUDataset(root, "MUTAG",
        ...                     pre_transform=KongFeatures(k=2, level="graph"))
        >>> dataset[0].kong_graph.shape
        torch.Size([1, 1024])
    """

    def __init__(
        self,
        k: int = 1,
        hops: int = 2,
        traversal: str = "bfs",
        dim: int = 1024,
        kernel: str = "poly",
        degree: int = 1,
        const: float = 0.0,
        seed: int = 0,
        order: str = "edge",
        relabel: Union[int, bool] = False,
        blended: bool = False,
        norm: str = "exact",
        flow: str = "source_to_target",
        level: str = "node",
        attr_name: Optional[Union[str, Sequence[str]]] = None,
        normalize: bool = False,
        edge_labels: bool = True,
        edge_order_attr: Optional[str] = "edge_order",
        dtype: torch.dtype = torch.float32,
        own_label: bool = True,
        *,
        config: Optional[KongConfig] = None,
        hash_scheme: int = HASH_VERSION,
    ):
        given = locals()
        options = {name: given[name] for name in option_names()}
        cfg = resolve_config(config, options, _DEFAULTS, "KongFeatures", given_options(self))
        check_sketch_dim(cfg, "KongFeatures")  # (before its own checks: a config= with KongConfig's dim None)
        self.level = check_choice("level", level, LEVELS)
        self.node_attr, self.graph_attr = self._names(attr_name)
        if cfg.normalize and self.level == "node":
            raise ValueError("'normalize' L2-normalizes graph features; use level='graph' or 'both'")
        self.edge_order_attr = check_attr_name("edge_order_attr", edge_order_attr)
        if self.edge_order_attr is not None and self.edge_order_attr in (self.node_attr, self.graph_attr):
            raise ValueError(f"'attr_name' {self.edge_order_attr!r} would overwrite the per-edge key "
                             "'edge_order_attr' it reads; pick another name")
        if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
            raise TypeError(f"'dtype' must be a floating-point torch.dtype (got {dtype})")
        self.dtype = dtype
        #: The :class:`~kong_pyg.KongSketch` that computes the features
        #: (in ``float64``, returned as :obj:`dtype`).
        self.sketch = KongSketch(config=cfg, dtype=dtype)
        scheme = check_scheme(hash_scheme, "'hash_scheme'")
        if scheme != HASH_VERSION:
            self.sketch.hashes.version = scheme

    @property
    def config(self) -> KongConfig:
        """The KONG options."""
        return self.sketch.config

    @property
    def out_dim(self) -> int:
        """The feature dimension :obj:`dim`."""
        return int(self.config.dim or 0)

    @property
    def normalize(self) -> bool:
        """Whether graph features are L2-normalized."""
        return self.config.normalize

    @property
    def edge_labels(self) -> bool:
        """Whether :obj:`data.edge_attr` is used as edge labels."""
        return self.config.edge_labels

    def _names(self, attr_name) -> Tuple[Optional[str], Optional[str]]:
        if self.level == "both":
            if attr_name is None:
                return DEFAULT_NODE_ATTR, DEFAULT_GRAPH_ATTR
            if isinstance(attr_name, str) or not isinstance(attr_name, (list, tuple)) or len(attr_name) != 2:
                raise ValueError(
                    "level='both' needs 'attr_name' as a pair (node name, graph name) "
                    f"(got {attr_name!r})"
                )
            node, graph = (_check_name(n, w) for n, w in zip(attr_name, ("node", "graph")))
            if node == graph:
                raise ValueError(f"'attr_name' gives node and graph features the same name {node!r}")
            return node, graph
        if attr_name is None:
            attr_name = DEFAULT_NODE_ATTR if self.level == "node" else DEFAULT_GRAPH_ATTR
        name = _check_name(attr_name, self.level)
        return (name, None) if self.level == "node" else (None, name)

    def _follow(self, device: torch.device) -> None:
        """Move the hash tables to the data's device, checked first.

        A device PyTorch cannot compute on, such as :obj:`"meta"`, is a clear error and leaves the
        transform where it was.
        """
        if device != self.sketch.hashes.coef.device:
            check_usable_device("data.x.device", device)
            if self.sketch.hashes.coef.is_meta:  # (built under torch.device("meta"): the tables are a
                self.sketch.to_empty(device=device)  # function of the seed, drawn again where the data is)
                self.sketch.reset_parameters()
            else:
                self.sketch.to(device)

    def forward(self, data: Data) -> Data:
        """Add the features to the (already copied) :obj:`data`."""
        if not isinstance(data, Data):
            from torch.utils.data import DataLoader

            hint = ("; for a loader's graphs, transform_dataset(loader.dataset) computes them all at once"
                    if isinstance(data, DataLoader) else "")
            raise TypeError(
                f"KongFeatures expects a torch_geometric.data.Data object (got {type(data).__name__}){hint}"
            )
        x = data.x
        if x is None:
            raise ValueError(
                "the graph has no 'x': KONG needs node labels (set data.x, for instance to node degrees)"
            )
        edge_index = data.edge_index
        if edge_index is None and getattr(data, "adj_t", None) is not None:
            edge_index = data.adj_t  # (after ToSparseTensor: accepted where the order cannot matter)
        if edge_index is None:
            edge_index = torch.empty(2, 0, dtype=torch.long, device=x.device)
        edge_attr = data.edge_attr
        key = key_attribute(self.config.order, self.edge_order_attr)
        edge_order = None if key is None else getattr(data, key, None)
        if isinstance(x, Tensor):
            self._follow(x.device)
        batch, num_graphs = (data.batch, data.num_graphs) if isinstance(data, Batch) else (None, None)
        if batch is not None and num_graphs and isinstance(x, Tensor) and x.dim() > 0:  # (as alone)
            batch = check_batch(batch, x.size(0))
            assert batch is not None
            check_no_empty_graph(batch, num_graphs, "of the Batch")
        if self.node_attr is not None:
            node = self.sketch.node_maps(x, edge_index, edge_attr, edge_order, batch)  # = self.sketch(...)
            data[self.node_attr] = node
        if self.graph_attr is not None:
            out = self.sketch.readout(x, edge_index, batch, edge_attr, edge_order, num_graphs)
            data[self.graph_attr] = out
        if isinstance(data, Batch):
            _register_in_batch(data, self.node_attr, self.graph_attr)
        return data

    @cpu_by_default
    def transform_dataset(self, dataset: Any, batch_size: int = 1024, progress: bool = False,
                          threads: Optional[int] = 1) -> Any:
        r"""Adds the features to every graph of a data set at once: the fast path.

        The same numbers as applying the transform graph by graph (same
        options and seed), computed in batches of at most :obj:`batch_size`
        graphs, as equal as possible (the per-graph cost of a transform is a few hundred small tensor
        operations; here it is shared by a batch).

        * An :class:`~torch_geometric.data.InMemoryDataset`: the features go
          into its collated storage next to :obj:`x` (:obj:`slices` included),
          so :obj:`dataset[i].kong_x` (:obj:`[num_nodes_i, dim]`) and
          :obj:`dataset[i].kong_graph` (:obj:`[1, dim]`) work, and
          :class:`~torch_geometric.loader.DataLoader` batches them as it
          would a :obj:`pre_transform`'s output. Every stored graph gets
          them (a subset view's parent too, as they share the storage;
          errors number the graphs of the storage);
          they are computed from the stored graphs (before
          :obj:`dataset.transform`, which a warning names when it is a
          :class:`KongFeatures` writing the same attribute) and live in
          memory only. Graphs taken out before the call, PyG's cached
          graphs of other views over the storage (the parent of the view
          passed, for one) and a :class:`~torch_geometric.loader.DataLoader`'s
          persistent workers keep what they had: no features the first
          time, the old ones after an earlier call (a warning counts the
          graphs holding old rows, where the storage holds two graphs or
          more). A one-graph storage is the very :class:`Data` PyG's
          ``collate`` was given: that object gets the attributes (collating
          it again with other graphs needs them there too). Simplest:
          call it on the dataset before taking graphs or making views.
        * Any other sequence of :class:`~torch_geometric.data.Data` (a list,
          a dataset with a transform on disk): a list of shallow copies with
          the new attributes.

        Args:
            dataset (InMemoryDataset or Sequence[Data]): The graphs.
            batch_size (int, optional): At most this many graphs per batch.
                (default: :obj:`1024`)
            progress (bool, optional): Show a progress bar. (default: :obj:`False`)
            threads (int, optional): PyTorch threads meanwhile (see
                :class:`~kong_pyg.KongVectorizer`; :obj:`None` keeps PyTorch's
                setting). (default: :obj:`1`)

        Returns:
            The same :obj:`dataset` (in-memory) or a new list.
        """
        check_int("batch_size", batch_size, 1)
        check_bool("progress", progress)
        if threads is not None:
            check_int("threads", threads, 1)
        store = _stored_graphs(dataset)
        if store is not None and len(dataset) == 0:  # (an empty view: the storage has graphs, it has none)
            raise ValueError("'dataset' is empty")
        graphs = as_graph_sequence(dataset if store is None else store, "dataset")
        if store is None and not isinstance(graphs, list):  # each graph read once: a dataset on disk with a
            graphs = [graphs[i] for i in range(len(graphs))]  # (random) transform gives another one each time
        total = len(graphs)
        dim = self.out_dim
        # the outputs are filled batch by batch: the peak is the output plus one batch
        node = graph = None
        nodes = count_nodes(graphs) if self.node_attr is not None else 0
        rows = nodes + (total if self.graph_attr is not None else 0)
        need = (rows * dim * self.dtype.itemsize, f"the features of {rows:,} nodes and graphs x {dim:,} "
                f"('dim' = {dim:,})")
        check_allocation(*need, advice="a smaller 'dim'")
        if self.node_attr is not None:
            node = torch.empty(nodes, dim, dtype=self.dtype)
        if self.graph_attr is not None:
            graph = torch.empty(total, dim, dtype=self.dtype)
        bar = Progress(total, "KONG features", unit="graph", enabled=progress)
        lo = 0
        with torch_threads(threads), _storage_numbers(dataset, store, total):
            key = key_attribute(self.config.order, self.edge_order_attr)
            sparse_flow = self.config.flow if self.config.k == 1 else None  # (as the per-graph transform)
            for gb in iter_graph_batches(graphs, batch_size, self.config.edge_labels, key, sparse_flow):
                self._follow(gb.x.device)
                if gb.start == 0 and gb.x.device.type != "cpu":  # (the outputs follow the graphs there)
                    check_allocation(*need, gb.x.device, advice="a smaller 'dim'")
                if node is not None:
                    if node.device != gb.x.device:
                        node = node.to(gb.x.device)
                    hi = lo + gb.x.size(0)
                    node[lo:hi] = self.sketch.node_maps(gb.x, gb.edge_index, gb.edge_attr, gb.edge_order,
                                                        gb.batch)
                    lo = hi
                if graph is not None:
                    if graph.device != gb.x.device:
                        graph = graph.to(gb.x.device)
                    graph[gb.start : gb.start + gb.num_graphs] = self.sketch.readout(
                        gb.x, gb.edge_index, gb.batch, gb.edge_attr, gb.edge_order, gb.num_graphs)
                bar.update(gb.num_graphs)
            del gb  # (its tensors are views of the storage's: not graphs held, which the warning counts)
        bar.close()
        if store is not None:
            _warn_if_transform_replaces(dataset, self.node_attr, self.graph_attr)
            return _store_features(dataset, self.node_attr, node, self.graph_attr, graph)
        return _attach_features(graphs, self.node_attr, node, self.graph_attr, graph)

    def __repr__(self) -> str:
        c = self.config
        if self.level == "both":
            name: Any = (self.node_attr, self.graph_attr)
        else:
            name = self.node_attr or self.graph_attr
        args = [f"{n}={getattr(c, n)!r}" for n in option_names()]
        args += [
            f"level={self.level!r}", f"attr_name={name!r}", f"edge_order_attr={self.edge_order_attr!r}",
            f"dtype={self.dtype}",
        ]
        # (a data set pre-transformed before scheme 2 saved a repr without it: PyG warns that it differs)
        args.append(f"hash_scheme={self.sketch.hashes.version}")
        return f"{self.__class__.__name__}({', '.join(args)})"



def _stored_graphs(dataset: Any) -> Any:
    """Every graph of an in-memory dataset's collated storage, as a dataset without transform."""
    from torch_geometric.data import InMemoryDataset

    if not isinstance(dataset, InMemoryDataset):
        return None
    if dataset.slices is None and isinstance(dataset._data, Data) and dataset.len() == 1:
        return [dataset._data]  # PyG collates a single graph with slices=None: the storage is that graph
    if dataset.slices is None or "x" not in dataset.slices:
        return None
    view = copy.copy(dataset)
    view.transform = None
    view._indices = None
    return view


@contextmanager
def _storage_numbers(dataset: Any, store: Any, total: int) -> Iterator[None]:
    """Say, in a refusal of a graph of a view's storage, that the numbers count the storage's graphs."""
    try:
        yield
    except (ValueError, TypeError) as err:
        view = store is not None and getattr(dataset, "_indices", None) is not None
        if not view or type(err) not in (ValueError, TypeError) or not re.search(r"\bgraph \d", str(err)):
            raise
        raise type(err)(f"{err} (graph numbers count the {total:,} graphs of the storage this view of "
                        f"{len(dataset):,} shares: transform_dataset computes them all; dataset.copy() "
                        "makes a data set of the view's own graphs)") from err


def _kong_transforms(transform: Any) -> Iterator[Any]:
    """The :class:`KongFeatures` among a data set's transform (inside a ``Compose`` too)."""
    if isinstance(transform, KongFeatures):
        yield transform
    for inner in getattr(transform, "transforms", None) or ():
        yield from _kong_transforms(inner)


def _warn_if_transform_replaces(dataset: Any, node_attr: Optional[str], graph_attr: Optional[str]) -> None:
    """Warn when the data set's own transform writes an attribute the stored features go into."""
    ours = {a for a in (node_attr, graph_attr) if a is not None}
    for t in _kong_transforms(getattr(dataset, "transform", None)):
        hidden = sorted(ours & {t.node_attr, t.graph_attr})
        if hidden:
            warn(f"the data set's transform ({t!r}) writes {hidden}: dataset[i] gives its features, not the "
                 f"stored ones that transform_dataset writes (dataset.{hidden[0]} holds those); pass another "
                 "attr_name or set dataset.transform = None")


def _store_features(dataset: Any, node_attr: Optional[str], node: Optional[Tensor],
                    graph_attr: Optional[str], graph: Optional[Tensor]) -> Any:
    """Put features into an in-memory dataset's collated storage (and drop its cache of graphs).

    An attribute the storage held is replaced (never written into: a matrix
    a user took with ``dataset.kong_graph`` keeps its numbers). Graphs taken
    out before, among them those PyG cached in other views (a view's parent,
    which no call on the view reaches), keep rows of the old tensor: a
    warning counts them.
    """
    data, slices = dataset._data, dataset.slices  # slices None: a single graph (see _stored_graphs)
    old = {}
    if node_attr is not None and node is not None:
        old[node_attr] = data[node_attr] if node_attr in data else None
        data[node_attr] = node
        if slices is not None:
            slices[node_attr] = slices["x"].clone()
    if graph_attr is not None and graph is not None:
        old[graph_attr] = data[graph_attr] if graph_attr in data else None
        data[graph_attr] = graph
        if slices is not None:
            slices[graph_attr] = torch.arange(graph.size(0) + 1)
    _drop_cached_graphs(dataset)
    held = {attr: _views_held(t) for attr, t in old.items()}
    stale = {attr: n for attr, n in held.items() if n}
    if stale and slices is not None:
        attr, n = next(iter(stale.items()))
        warn(f"{n:,} graph(s) taken out of this data set or one of its views before this call hold rows of "
             f"the '{attr}' it replaces and keep the old features (PyG caches graphs per view object, and a "
             "call reaches only the one passed): take them again from the data set passed, or call "
             "transform_dataset on the one they came from")
    return dataset


def _views_held(t: Any) -> int:
    """How many other tensors share :obj:`t`'s memory (views of it: rows held by graphs taken out)."""
    count = getattr(torch._C, "_storage_Use_Count", None)  # (no public API; without it, no count)
    if not isinstance(t, Tensor) or count is None or t.layout != torch.strided:
        return 0
    try:
        # less t, the storage object asked and, where t is itself a view (TUDataset's x), its base
        return max(int(count(t.untyped_storage()._cdata)) - 2 - (t._base is not None), 0)
    except (RuntimeError, TypeError, AttributeError):
        return 0


def _drop_cached_graphs(dataset: Any) -> None:
    """Forget the graphs PyG cached, in every view of the storage that shares the cache.

    PyG keeps them in one list per storage index (``_data_list``), which subset views share
    (they are shallow copies); graphs cached before carry no features. Emptied in place, not
    replaced: a new list on one object would leave the others serving stale graphs. A list is
    left (rather than None) so that views made from now on share it too.
    """
    cached = getattr(dataset, "_data_list", None)
    if isinstance(cached, list):
        cached[:] = [None] * len(cached)
    else:
        dataset._data_list = dataset.len() * [None]


def _attach_features(graphs: Sequence[Any], node_attr: Optional[str], node: Optional[Tensor],
                     graph_attr: Optional[str], graph: Optional[Tensor]) -> List[Any]:
    """Shallow copies of the graphs with their rows of the features (views).

    Python's cyclic collector is paused meanwhile: thousands of new ``Data``
    objects set off full collections (about 0.2 s each on NCI1's 4,110 graphs).
    """
    out = []
    lo = 0
    with gc_paused():
        for i in range(len(graphs)):
            d = copy.copy(graphs[i])
            if node is not None:
                n = d.x.size(0)
                d[node_attr] = node[lo : lo + n]
                lo += n
            if graph is not None:
                d[graph_attr] = graph[i : i + 1]
            out.append(d)
    return out

__all__ = ["KongFeatures"]
