r"""The :class:`KongSketch` operator."""
from typing import Any, Callable, List, Optional, Union

import torch
from torch import Tensor
from torch_geometric.nn.conv import MessagePassing
from torch_geometric.utils import spmm

from .. import engine
from ..config import (
    GivenOptions,
    KongConfig,
    check_int,
    given_options,
    option_defaults,
    option_names,
    resolve_config,
)
from ..exact import index_grams
from ..inputs import PreparedGraph, check_batch, check_no_empty_graph, not_dense
from ..kernels import get_kernel
from ..kgrams import Occurrences
from ..memory import check_allocation
from ..propagation import (
    MESSAGE_ENTRIES,
    Aggregate,
    dense_step_bytes,
    gram_hashes,
    propagate_sketches,
    propagation_copies,
)
from ..sketch import SketchHashes
from .tooling import NO_TORCHSCRIPT, check_loaded_tables, check_table_shapes, refuse_tracing, run_eagerly

#: KongSketch's keyword defaults: KongConfig's, with a sketch size (the layer always sketches).
_DEFAULTS = {**option_defaults(), "dim": 1024}


def check_sketch_dim(cfg: KongConfig, owner: str) -> int:
    """:obj:`cfg`'s sketch size, or a :class:`ValueError` where it has none (:obj:`owner` only sketches)."""
    if cfg.dim is None:
        raise ValueError(f"{owner} computes sketches: 'dim' must be a sketch size (got None, the exact map, "
                         "KongConfig's default: pass dim=1024 or KongConfig(dim=1024, ...); use "
                         "KongVectorizer(dim=None) for exact features)")
    return cfg.dim


class KongSketch(GivenOptions, MessagePassing):
    r"""The sketched KONG feature map.

    From the `"KONG: Kernels for ordered-neighborhood graphs"
    <https://arxiv.org/abs/1805.10014>`_ paper (NeurIPS 2018).

    Each node :math:`v` gets a string :math:`S_v^h` from its ordered
    neighborhood (:obj:`traversal="bfs"`: one level string per hop,
    :math:`s_v^i = s_{u_1}^{i-1} s_{u_2}^{i-1} \cdots`;
    :obj:`traversal="wl"`: :math:`s_v^i = l(v)\, s_{u_1}^{i-1}
    s_{u_2}^{i-1} \cdots`, with an edge label before each neighbor's piece
    when :obj:`edge_attr` is given). With :math:`c_v` the k-gram counts of
    :math:`S_v^h` (BFS levels as separate blocks), the node map is a
    Count-Sketch (:math:`p = 1`) or Tensor-Sketch of

    .. math::
        \phi(c_v) = (c_v \oplus \sqrt{c})^{\otimes p} \quad \textrm{(poly)},
        \qquad \phi(c_v) = (c_v / \| c_v \|)^{\otimes p} \quad \textrm{(cosine)},

    so that :math:`E\langle \mathbf{x}_v, \mathbf{x}_w \rangle = \kappa(c_v,
    c_w)`, and the graph map :meth:`readout` is :math:`\sum_{v \in G}
    \mathbf{x}_v`, whose inner products estimate the KONG graph kernel
    :math:`K(G, H) = \sum_{v, w} \kappa(c_v, c_w)`.

    The strings are never built: every node keeps the first and last
    :math:`k-1` symbols of its string (see :mod:`kong_pyg.kgrams`).
    :meth:`forward` propagates the Count-Sketches with
    :meth:`~torch_geometric.nn.conv.MessagePassing.propagate`: the message
    is the neighbor's sketch, the aggregation a sum, and :meth:`update` adds
    the sketch of the k-grams that cross from one neighbor's string into the
    next, so :obj:`flow`, hooks and PyG's inspection tools work as for any
    PyG layer (PyG's explainers leave it out: :attr:`explain` is always
    :obj:`False`, as an edge mask would scale single messages of whole
    neighborhood strings). :meth:`readout` computes graph features without node features
    where it can: for :math:`p = 1` the sum over nodes commutes with the
    propagation (each k-gram goes straight into its graph's row with a
    walk-count weight); otherwise node sketches come from exact sparse count
    rows (their own sparse aggregation, cheaper while strings are short) and
    switch to :meth:`propagate` once those outgrow the sketches. The module
    has no learnable parameters: its hash tables are buffers drawn from
    :obj:`seed`, so it gives the same output on any device and moves with
    :meth:`to`.

    .. warning::
        :class:`KongSketch` is **not** invariant to the order of each node's
        neighbors when :obj:`k >= 2`: the neighbor order of node :math:`i` is
        the order of its incoming edges in :obj:`edge_index` (or by
        :obj:`edge_order`). :func:`~torch_geometric.utils.coalesce`,
        :func:`~torch_geometric.utils.to_undirected`,
        :func:`~torch_geometric.utils.sort_edge_index`,
        :class:`~torch_geometric.transforms.ToSparseTensor` and
        :class:`~torch_geometric.datasets.TUDataset`'s loader reorder edges;
        sparse adjacency input (:obj:`adj_t`, :class:`torch_sparse.SparseTensor`)
        is rejected where the order matters; with :obj:`k = 1` the output does
        not depend on the order and sparse input is accepted. Parallel edges
        count once each, so :class:`~torch_geometric.transforms.ToSparseTensor`
        and :class:`~torch_geometric.transforms.RemoveDuplicatedEdges`, which
        merge them, change the features even with :obj:`k = 1`.

    .. note::
        :meth:`forward`, :meth:`readout` and :meth:`node_maps` have data-dependent
        shapes and run eagerly under :func:`torch.compile` (they are marked with
        :func:`torch.compiler.disable`): a compiled model around this layer
        works, with a graph break at the layer, but not with
        :obj:`fullgraph=True`. The output never requires gradients.

    Args:
        k, hops, traversal, dim, kernel, degree, const, seed, order, relabel,
            blended, norm, flow, normalize, edge_labels, own_label: The KONG options,
            documented in :class:`~kong_pyg.KongConfig` (defaults as there,
            except :obj:`dim=1024`: this layer always sketches;
            :obj:`normalize` L2-normalizes :meth:`readout`'s rows).
        dtype (torch.dtype, optional): The output dtype; computation is in
            :obj:`torch.float64`. :meth:`double`, :meth:`float` and
            :meth:`to` change it. (default: :obj:`torch.float32`)
        config (KongConfig, optional): All KONG options at once, instead of
            the keyword arguments above.

    Shapes:
        - **input:**
          node labels :math:`(|\mathcal{V}|)` or :math:`(|\mathcal{V}|, C)`
          (integers or one-hot rows, see :mod:`kong_pyg.inputs`),
          edge indices :math:`(2, |\mathcal{E}|)`,
          edge labels :math:`(|\mathcal{E}|)` or :math:`(|\mathcal{E}|, C)`
          *(optional)*, edge order keys :math:`(|\mathcal{E}|)` *(optional)*
        - **output:** node features :math:`(|\mathcal{V}|, b)`;
          :meth:`readout`: graph features :math:`(|\mathcal{G}|, b)`
    """

    #: Exact node rows give way to dense sketches once they hold more than
    #: this fraction of the :obj:`N * p * b` sketch entries (:meth:`readout`).
    switch_ratio: float = engine.SWITCH_RATIO

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
        dtype: torch.dtype = torch.float32,
        normalize: bool = False,
        edge_labels: bool = True,
        own_label: bool = True,
        *,
        config: Optional[KongConfig] = None,
    ):
        given = locals()
        options = {name: given[name] for name in option_names()}
        cfg = resolve_config(config, options, _DEFAULTS, "KongSketch", given_options(self))
        dim = check_sketch_dim(cfg, "KongSketch")
        if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
            raise TypeError(f"'dtype' must be a floating-point torch.dtype (got {dtype})")
        super().__init__(aggr="add", flow=cfg.flow, node_dim=0)
        self.config = cfg
        self.out_dtype = dtype
        self.hashes = SketchHashes(dim, cfg.degree, cfg.k, cfg.hops + 1, cfg.seed)
        self.register_load_state_dict_pre_hook(check_table_shapes)
        self.register_load_state_dict_post_hook(check_loaded_tables)

    @property
    def out_channels(self) -> int:
        """The output dimension :math:`b`."""
        return int(self.config.dim or 0)

    def reset_parameters(self) -> None:
        r"""Redraws the hash tables from :obj:`seed` (no learnable state)."""
        super().reset_parameters()
        self.hashes.reset_parameters()

    def __prepare_scriptable__(self) -> "KongSketch":
        """:func:`torch.jit.script` calls this first: a clear error instead of TorchScript's."""
        raise TypeError(NO_TORCHSCRIPT)

    @property
    def explain(self) -> bool:
        r"""Always :obj:`False`: PyG's explainers (``set_masks``) leave this layer out.

        Its features count the k-grams of whole ordered neighborhoods; a mask that scales single
        messages would match no graph (with :math:`k \geq 2` not even the graph without the edge),
        and no gradient reaches it through this non-learned layer.
        """
        return False

    @explain.setter
    def explain(self, value: Optional[bool]) -> None:
        if value:
            raise ValueError("KongSketch takes no edge masks (explain=True): its features count the "
                             "k-grams of whole ordered neighborhoods and are not learned; explain the layers "
                             "around it")

    @property
    def decomposed_layers(self) -> int:
        """Always 1: the sketches are propagated whole (wide ones in column blocks of their own)."""
        return 1

    @decomposed_layers.setter
    def decomposed_layers(self, value: int) -> None:
        if value != 1:
            raise ValueError(f"KongSketch propagates its sketches whole: 'decomposed_layers' must be 1 (got "
                             f"{value!r}); wide sketches are propagated in column blocks already")

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> "KongSketch":
        # .double(), .float(), .half() and .to(dtype) set the output dtype
        # (probes on the CPU, not the default device: under torch.device("meta") a CPU layer still moves)
        probe = fn(torch.zeros((), dtype=self.out_dtype, device="cpu"))
        if probe.is_complex():  # (before the float tables turn complex)
            raise TypeError(f"KongSketch computes real features: it cannot be moved to {probe.dtype} (give "
                            "the model around it a real dtype, or cast its output)")
        if not probe.is_floating_point():  # (Module.type(torch.int32))
            raise TypeError(f"KongSketch computes floating-point features: it cannot be cast to "
                            f"{probe.dtype} (give the model around it a floating-point dtype, or cast its "
                            "output)")
        moved = fn(torch.zeros((), dtype=torch.long, device="cpu"))
        if moved.dtype != torch.long:  # Module.type(dtype) casts every tensor: the hash tables stay integers
            cast_all = fn

            def fn(t: Tensor) -> Tensor:  # (an integer table goes where a float tensor beside it goes)
                if t.is_floating_point():
                    return cast_all(t)
                return t.to(cast_all(t.new_zeros((), dtype=torch.float32)).device)

        out = super()._apply(fn, recurse)
        self.out_dtype = probe.dtype  # (floating: checked above)
        return out

    # -- the pipeline's steps (for inspection and tests) ---------------------------

    @staticmethod
    def _batch(batch: Optional[Tensor], x: Any) -> Optional[Tensor]:
        """:obj:`batch` checked against the nodes of :obj:`x` (None stays None); symbolic tracing refused."""
        refuse_tracing(x, batch)
        if batch is None:
            return None
        if isinstance(x, Tensor) and x.is_nested:  # (its size(0) counts its parts, not nodes)
            raise TypeError(not_dense("x", x))
        n = x.size(0) if isinstance(x, Tensor) and x.dim() > 0 else 0
        return check_batch(batch, n, x.device if isinstance(x, Tensor) else None)

    def prepare(
        self,
        x: Tensor,
        edge_index: Tensor,
        edge_attr: Optional[Tensor] = None,
        edge_order: Optional[Tensor] = None,
        batch: Optional[Tensor] = None,
    ) -> PreparedGraph:
        """Check the input and turn it into symbols and ordered neighborhoods."""
        if torch.jit.is_tracing():
            raise TypeError(NO_TORCHSCRIPT)
        refuse_tracing(x, edge_index, edge_attr, edge_order, batch)
        prep = engine.prepare(self.config, x, edge_index, edge_attr, edge_order, batch=batch)
        hood = prep.hood
        if batch is not None and hood.center.numel() and bool((batch[hood.center] != batch[hood.nbr]).any()):
            raise ValueError("'edge_index' holds an edge between nodes of different graphs of 'batch' "
                             "(each graph's neighborhoods must stay inside it)")
        if prep.node_sym.device != self.hashes.coef.device:
            raise ValueError(
                f"the input is on {prep.node_sym.device} but the module is on "
                f"{self.hashes.coef.device}; move one with .to()"
            )
        return prep

    def occurrences(self, prep: PreparedGraph) -> List[List[Occurrences]]:
        """The n-grams each step adds (see :func:`kong_pyg.kgrams.occurrences`)."""
        return engine.kgram_steps(self.config, prep)

    def node_counts(self, prep: PreparedGraph, steps: List[List[Occurrences]]) -> engine.NodeCounts:
        """The node count vectors as :meth:`readout` computes them (exact rows or dense sketches)."""
        grams = index_grams(steps)
        gh = gram_hashes(self.hashes, grams)
        return engine.node_counts(self.config, self.hashes, prep, grams, gh, None, self.switch_ratio)

    # -- message passing -----------------------------------------------------------

    def update(self, inputs: Tensor, inject: Optional[Tensor] = None) -> Tensor:
        r""":math:`\sum_{u \in N_v} \mathbf{y}_u` plus the sketch of the step's new k-grams."""
        return inputs if inject is None else inputs + inject

    def message_and_aggregate(self, adj_t: Any, x: Tensor) -> Tensor:
        r"""Sum aggregation :math:`\sum_{u \in N_v} \mathbf{y}_u` over a sparse adjacency."""
        return spmm(adj_t, x, reduce="sum")

    def aggregator(self, edge_index: Tensor, num_nodes: int) -> Aggregate:
        r"""Sum aggregation through :meth:`propagate`, in column blocks of bounded size.

        Returns :obj:`aggregate(y, inject)` :math:`= A y + inject` for
        :obj:`y` of shape :obj:`[num_nodes, F]` (see :data:`kong_pyg.propagation.Aggregate`).
        """
        m = max(int(edge_index.size(1)), 1)

        def aggregate(y: Tensor, inject: Optional[Tensor]) -> Tensor:
            width = y.size(1)
            step = max(1, MESSAGE_ENTRIES // m)
            if step >= width:
                return self.propagate(edge_index, x=y, inject=inject, size=(num_nodes, num_nodes))
            out = torch.empty_like(y)
            for lo in range(0, width, step):
                hi = min(lo + step, width)
                part = None if inject is None else inject[:, lo:hi]
                out[:, lo:hi] = self.propagate(edge_index, x=y[:, lo:hi].contiguous(), inject=part,
                                               size=(num_nodes, num_nodes))
            return out

        return aggregate

    # -- node level ------------------------------------------------------------------

    @run_eagerly
    def forward(
        self,
        x: Tensor,
        edge_index: Tensor,
        edge_attr: Optional[Tensor] = None,
        edge_order: Optional[Tensor] = None,
        batch: Optional[Tensor] = None,
    ) -> Tensor:
        r"""Node features :obj:`[num_nodes, dim]`.

        Args:
            x (torch.Tensor): Node labels.
            edge_index (torch.Tensor): Edge indices, in neighbor order (or, with
                :obj:`k = 1`, a sparse adjacency :obj:`adj_t`).
            edge_attr (torch.Tensor, optional): Edge labels.
            edge_order (torch.Tensor, optional): A per-edge sort key (for
                example a timestamp) that defines the neighbor order.
            batch (torch.Tensor, optional): :obj:`[num_nodes]` graph index of
                each node, where the input joins several graphs: only
                :obj:`order="random"` reads it (each graph's shuffle is its
                own, whatever the batch). (default: one graph)
        """
        with torch.no_grad():
            cfg, hashes = self.config, self.hashes
            prep = self.prepare(x, edge_index, edge_attr, edge_order, self._batch(batch, x))
            n = prep.num_nodes
            width = hashes.degree * hashes.dim
            self._check_node_output(n, prep.node_sym.device, propagation_copies(cfg), apart=True,
                                    work=dense_step_bytes(cfg, n, prep.hood.nbr.numel(), width))
            grams = index_grams(engine.kgram_steps(cfg, prep))
            gh = gram_hashes(hashes, grams)
            kernel = get_kernel(cfg.kernel)
            norms = None
            if kernel.needs_norms(cfg) and cfg.norm == "exact":
                norms = engine.exact_norms(cfg, prep, grams)
            agg = self.aggregator(engine.edges_of(cfg, prep), n)
            cs = propagate_sketches(cfg, hashes, grams, gh, n, agg)
            out = torch.empty(n, hashes.dim, dtype=self.out_dtype, device=cs.device)
            chunk = max(1, engine.CHUNK_ENTRIES // (hashes.degree * hashes.dim))
            for lo in range(0, n, chunk):
                hi = min(lo + chunk, n)
                part = cs[lo:hi].permute(1, 0, 2).clone()
                maps = kernel.sketch_node_maps(cfg, hashes, part, None if norms is None else norms[lo:hi])
                out[lo:hi] = engine.cast_checked(maps, self.out_dtype, cfg)  # (checks for overflow)
            return out

    @run_eagerly
    def node_maps(
        self,
        x: Tensor,
        edge_index: Tensor,
        edge_attr: Optional[Tensor] = None,
        edge_order: Optional[Tensor] = None,
        batch: Optional[Tensor] = None,
    ) -> Tensor:
        r"""The node features of :meth:`forward`, computed as :meth:`readout` computes node sketches.

        Exact sparse count rows, sketched at the end, switching to
        :meth:`propagate` once they outgrow the dense sketches
        (:func:`kong_pyg.engine.node_maps`): much cheaper than dense
        propagation while the strings are short (few k-grams per node), and
        the same numbers (Count-Sketches of integer counts are exact).
        """
        with torch.no_grad():
            cfg = self.config
            prep = self.prepare(x, edge_index, edge_attr, edge_order, self._batch(batch, x))
            n = prep.num_nodes
            self._check_node_output(n, prep.node_sym.device, copies=1, apart=False)
            steps = engine.kgram_steps(cfg, prep)
            maps = engine.node_maps(cfg, self.hashes, prep, steps, aggregate=self._lazy_aggregator(prep),
                                    switch_ratio=self.switch_ratio)
            return engine.cast_checked(maps, self.out_dtype, cfg)

    # -- graph level -----------------------------------------------------------------

    @run_eagerly
    def readout(
        self,
        x: Tensor,
        edge_index: Tensor,
        batch: Optional[Tensor] = None,
        edge_attr: Optional[Tensor] = None,
        edge_order: Optional[Tensor] = None,
        num_graphs: Optional[int] = None,
    ) -> Tensor:
        r"""Graph features :obj:`[num_graphs, dim]`: the sum of node features.

        Equals :func:`~torch_geometric.nn.global_add_pool` of :meth:`forward`
        (up to float rounding; L2-normalized rows with :obj:`normalize`) but
        for :math:`p = 1` never builds the dense :obj:`[num_nodes, dim]`
        tensor (see the class doc).

        Args:
            x (torch.Tensor): Node labels.
            edge_index (torch.Tensor): Edge indices, in neighbor order (or, with
                :obj:`k = 1`, a sparse adjacency :obj:`adj_t`).
            batch (torch.Tensor, optional): :obj:`[num_nodes]` graph index of
                each node (a single graph when :obj:`None`).
            edge_attr (torch.Tensor, optional): Edge labels.
            edge_order (torch.Tensor, optional): A per-edge sort key.
            num_graphs (int, optional): The number of graphs (default:
                :obj:`batch.max() + 1`). Every graph needs a node: a graph
                index below it that :obj:`batch` holds for no node is
                refused (a :class:`ValueError`), as an empty graph alone
                is. Without it an empty *last* graph goes unseen (no row for
                it): pass a :class:`Batch`'s :obj:`num_graphs` to have it
                refused too.
        """
        with torch.no_grad():
            batch = self._batch(batch, x)
            prep = self.prepare(x, edge_index, edge_attr, edge_order, batch)
            n = prep.num_nodes
            if batch is None:
                batch = torch.zeros(n, dtype=torch.long, device=prep.node_sym.device)
                size = 1
            else:
                size = int(batch.max()) + 1
            if num_graphs is None:
                num_graphs, who = size, f"'batch' refers to graph {size - 1:,}"
            else:
                num_graphs = check_int("num_graphs", num_graphs, 0)
                if num_graphs < size:
                    raise ValueError(f"'num_graphs' is {num_graphs} but 'batch' refers to graph {size - 1}")
                who = f"'num_graphs' = {num_graphs:,}"
            dim = self.hashes.dim
            check_allocation(num_graphs * dim * (8 + self._cast_bytes()),
                             f"the graph features [{num_graphs:,}, {dim:,}] ({who}, 'dim' = {dim:,}) in "
                             f"float64{self._cast_note()}", prep.node_sym.device)
            if num_graphs > 1:  # (after the check above: counts one integer a graph)
                check_no_empty_graph(batch, num_graphs, "of 'batch'")
            steps = engine.kgram_steps(self.config, prep)
            out = engine.graph_sketch(self.config, self.hashes, prep, steps, batch, num_graphs,
                                      self._lazy_aggregator(prep),
                                      self.switch_ratio, check=False)  # cast_checked checks
            return engine.cast_checked(out, self.out_dtype, self.config)

    def _lazy_aggregator(self, prep: PreparedGraph) -> Aggregate:
        """:meth:`aggregator` over :obj:`prep`'s edges, built on first use (exact paths may never need it)."""
        built: List[Aggregate] = []

        def agg(y: Tensor, inject: Optional[Tensor]) -> Tensor:
            if not built:
                built.append(self.aggregator(engine.edges_of(self.config, prep), prep.num_nodes))
            return built[0](y, inject)

        return agg

    def _check_node_output(self, num_nodes: int, device: torch.device, copies: int, apart: bool,
                           work: Optional[int] = None) -> None:
        """Refuse node sketches that cannot fit: :obj:`copies` float64 ones, and the output.

        :obj:`apart`: the output is a tensor of its own (:meth:`forward`), not a cast of a sketch.
        :obj:`work`: the bytes the sketches take with their working arrays, where more than the copies
        (:func:`~kong_pyg.propagation.dense_step_bytes`).
        """
        p, dim = self.hashes.degree, self.hashes.dim
        out = self.out_dtype.itemsize if apart else self._cast_bytes()
        shown = f" and the output [{num_nodes:,}, {dim:,}] in {self.out_dtype}" if out else ""
        sketches = copies * num_nodes * p * dim * 8 if work is None else work
        besides = "" if work is None else " with their messages"
        check_allocation(sketches + num_nodes * dim * out,
                         f"'dim' = {dim:,}: the node sketches ({copies} x [{num_nodes:,}, {p} x {dim:,}], "
                         f"float64{besides}){shown}", device,
                         advice="a smaller 'dim' or fewer nodes per call")

    def _cast_bytes(self) -> int:
        """Bytes per output entry of its copy in :attr:`out_dtype` (none in float64, the working dtype)."""
        return 0 if self.out_dtype == torch.float64 else self.out_dtype.itemsize

    def _cast_note(self) -> str:
        """The output's copy in :attr:`out_dtype`, for the memory checks' messages."""
        return f" and their copy in {self.out_dtype}" if self._cast_bytes() else ""

    def __repr__(self) -> str:
        c = self.config
        args = [f"k={c.k}", f"hops={c.hops}", f"traversal='{c.traversal}'", f"dim={c.dim}",
                f"kernel='{c.kernel}'", f"degree={c.degree}"]
        shown = {"k", "hops", "traversal", "dim", "kernel", "degree"}
        for name in option_names():
            value, default = getattr(c, name), _DEFAULTS[name]
            if name not in shown and value != default:
                args.append(f"{name}={value!r}")
        if self.out_dtype != torch.float32:
            args.append(f"dtype={self.out_dtype}")
        return f"{self.__class__.__name__}({', '.join(args)})"


def _option(name: str) -> property:
    return property(lambda self: getattr(self.config, name), doc=f"The option :obj:`{name}` (read-only).")


def _get_flow(self: KongSketch) -> str:
    config = self.__dict__.get("config")
    return config.flow if config is not None else self.__dict__["_flow"]


def _set_flow(self: KongSketch, value: str) -> None:
    config = self.__dict__.get("config")
    if config is None:  # (MessagePassing.__init__ setting it, before the config is kept)
        self.__dict__["_flow"] = value
    elif value != config.flow:  # propagate() would read one flow and the k-gram engine the other
        raise AttributeError(f"'flow' is read-only (this layer's is {config.flow!r}): build a new "
                             f"KongSketch(..., flow={value!r})")


for _name in option_names():  # layer.k, layer.dim, ... read the config
    setattr(KongSketch, _name, _option(_name) if _name != "flow" else property(
        _get_flow, _set_flow, doc="The option :obj:`flow` (read-only; MessagePassing's own)."))


# (pickled layers name their state-dict hooks by these names, their home before nn/tooling.py)
_check_table_shapes, _check_loaded_tables = check_table_shapes, check_loaded_tables

__all__ = ["KongSketch"]
