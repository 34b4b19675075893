r"""The :class:`KongSketch` operator."""
import math
import warnings
from typing import List, NamedTuple, Optional

import torch
from torch import Tensor
from torch_geometric.nn import global_add_pool
from torch_geometric.nn.conv import MessagePassing
from torch_geometric.utils import spmm

from ..exact import (
    LocalGrams,
    Rows,
    index_grams,
    inverse_or_zero,
    linear_blocks,
    node_count_rows,
    node_count_steps,
    row_norms,
    tag_blocks,
    walk_weights,
)
from ..inputs import PreparedGraph, check_batch, check_options, prepare_graph
from ..kgrams import Occurrences, exclusive_cumsum, occurrences
from ..sketch import SketchHashes, place, shift_level, tensor_sketch


class NodeCounts(NamedTuple):
    """Node count vectors, exact or sketched.

    Either exact sparse :obj:`rows` (columns :obj:`level * G + gram`) or
    :obj:`dense` Count-Sketches :obj:`[N, p, b]`.
    """

    grams: LocalGrams
    rows: Optional[Rows]
    dense: Optional[Tensor]


class KongSketch(MessagePassing):
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
    :math:`k-1` symbols of its string, sketches propagate by sum aggregation
    over the neighborhood, and only the k-grams that cross from one
    neighbor's string into the next are hashed in (see
    :mod:`kong_pyg.kgrams`). The module has no learnable parameters: its
    hash tables are buffers drawn from :obj:`seed`, so it gives the same
    output on any device and moves with :meth:`to`.

    .. warning::
        :class:`KongSketch` is **not** invariant to the order of each node's
        neighbors when :obj:`k >= 2`: the neighbor order of node :math:`i` is
        the order of its incoming edges in :obj:`edge_index` (or by
        :obj:`edge_order`). :func:`~torch_geometric.utils.coalesce`,
        :func:`~torch_geometric.utils.to_undirected`,
        :func:`~torch_geometric.utils.sort_edge_index`,
        :class:`~torch_geometric.transforms.ToSparseTensor` and
        :class:`~torch_geometric.datasets.TUDataset`'s loader reorder edges;
        sparse adjacency input is rejected. With :obj:`k = 1` the output does
        not depend on the order.

    .. note::
        :meth:`forward` and :meth:`readout` have data-dependent shapes and
        run eagerly under :func:`torch.compile` (they are marked with
        :func:`torch.compiler.disable`): a compiled model around this layer
        works, with a graph break at the layer, but not with
        :obj:`fullgraph=True`. The output never requires gradients.

    Args:
        k (int, optional): The k-gram length (:obj:`1` = unordered label
            counts). (default: :obj:`1`)
        hops (int, optional): The depth :math:`h`. (default: :obj:`2`)
        traversal (str, optional): :obj:`"bfs"` or :obj:`"wl"`.
            (default: :obj:`"bfs"`)
        dim (int, optional): The sketch size :math:`b`. (default: :obj:`1024`)
        kernel (str, optional): :obj:`"poly"` or :obj:`"cosine"`.
            (default: :obj:`"poly"`)
        degree (int, optional): The kernel degree :math:`p`; Tensor-Sketch
            when :math:`p > 1`. (default: :obj:`1`)
        const (float, optional): The polynomial constant :math:`c \geq 0`.
            (default: :obj:`0.0`)
        seed (int, optional): The seed of the hash tables and of
            :obj:`order="random"`. (default: :obj:`0`)
        order (str, optional): The neighbor order: :obj:`"edge"` (edge
            order, or :obj:`edge_order` when given), :obj:`"label"` (by
            neighbor label), :obj:`"degree"` (by neighbor degree) or
            :obj:`"random"` (a seeded shuffle; the paper's "shuffled"
            baseline). Ties keep edge order. (default: :obj:`"edge"`)
        relabel (bool, optional): Replace labels by one round of WL
            relabelling first (the paper's "rlb"). (default: :obj:`False`)
        blended (bool, optional): Count all n-grams for
            :math:`n = 1, \ldots, k`, each length its own block (the
            authors' experiment code). (default: :obj:`False`)
        norm (str, optional): For :obj:`kernel="cosine"`: :obj:`"exact"`
            norms :math:`\|c_v\|` (from exact sparse counts, unbiased) or
            :obj:`"sketch"` (estimated from the sketches, faster).
            (default: :obj:`"exact"`)
        flow (str, optional): :obj:`"source_to_target"` (node
            :obj:`edge_index[1]` collects from :obj:`edge_index[0]`) or
            :obj:`"target_to_source"`. (default: :obj:`"source_to_target"`)
        dtype (torch.dtype, optional): The output dtype; computation is in
            :obj:`torch.float64`. (default: :obj:`torch.float32`)

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
    #: this fraction of the :obj:`N * p * b` sketch entries.
    switch_ratio: float = 0.25

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
        relabel: bool = False,
        blended: bool = False,
        norm: str = "exact",
        flow: str = "source_to_target",
        dtype: torch.dtype = torch.float32,
    ):
        opts = check_options(k, hops, traversal, dim, kernel, degree, const, seed, order, norm, flow)
        super().__init__(aggr="add", flow=flow)
        self.k, self.hops, self.traversal = opts["k"], opts["hops"], opts["traversal"]
        self.dim, self.kernel, self.degree = opts["dim"], opts["kernel"], opts["degree"]
        self.const, self.seed, self.order = opts["const"], opts["seed"], opts["order"]
        self.norm = opts["norm"]
        self.relabel = bool(relabel)
        self.blended = bool(blended)
        if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
            raise TypeError(f"'dtype' must be a floating-point torch.dtype (got {dtype})")
        self.out_dtype = dtype
        self.hashes = SketchHashes(self.dim, self.degree, self.k, self.hops + 1, self.seed)

    @property
    def out_channels(self) -> int:
        """The output dimension :math:`b`."""
        return self.dim

    def reset_parameters(self):
        r"""Redraws the hash tables from :obj:`seed` (no learnable state)."""
        super().reset_parameters()
        self.hashes.reset_parameters()

    # -- preparation ---------------------------------------------------------

    def prepare(
        self,
        x: Tensor,
        edge_index: Tensor,
        edge_attr: Optional[Tensor] = None,
        edge_order: Optional[Tensor] = None,
    ) -> PreparedGraph:
        """Check the input and turn it into symbols and ordered neighborhoods."""
        prep = prepare_graph(
            x, edge_index, edge_attr, edge_order,
            flow=self.flow, order=self.order, relabel=self.relabel, seed=self.seed,
            grouped=self.k > 1,  # k = 1 is order-free: no need to sort
        )
        if prep.node_sym.device != self.hashes.coef.device:
            raise ValueError(
                f"the input is on {prep.node_sym.device} but the module is on "
                f"{self.hashes.coef.device}; move one with .to()"
            )
        return prep

    def occurrences(self, prep: PreparedGraph) -> List[List[Occurrences]]:
        """The n-grams each step adds (see :func:`kong_pyg.kgrams.occurrences`)."""
        return list(
            occurrences(
                prep.node_sym, prep.hood, prep.edge_sym, self.k, self.hops,
                self.traversal, self.blended,
            )
        )

    def _adjacency(self, prep: PreparedGraph) -> Tensor:
        n = prep.num_nodes
        hood = prep.hood
        # Sum aggregation is order-free, so a sorted sparse matrix is fine
        # here; the neighbor order lives in the occurrences, never in this.
        adj = torch.sparse_coo_tensor(
            torch.stack([hood.center, hood.nbr]),
            torch.ones(hood.nbr.numel(), dtype=torch.float64, device=hood.nbr.device),
            (n, n),
            check_invariants=False,
        )
        with warnings.catch_warnings():  # "sparse CSR support is in beta"
            warnings.simplefilter("ignore", UserWarning)
            return adj.coalesce().to_sparse_csr()  # sums multi-edges (order-free)

    def message_and_aggregate(self, adj_t: Tensor, x: Tensor) -> Tensor:
        r"""Sum aggregation :math:`\sum_{u \in N_v} \mathbf{x}_u`."""
        return spmm(adj_t, x, reduce="sum")

    # -- node level ----------------------------------------------------------

    def gram_hashes(self, grams: LocalGrams) -> tuple:
        """Buckets and signs :obj:`[G, p]` of the call's distinct grams."""
        dev = self.hashes.coef.device
        if not grams.tables:
            z = torch.zeros(0, self.degree, dtype=torch.long, device=dev)
            return z, z.to(torch.float64)
        parts = [self.hashes.hash(rows) for _, _, rows in grams.tables]
        return torch.cat([b for b, _ in parts]), torch.cat([s for _, s in parts])

    def node_counts(self, prep: PreparedGraph, steps) -> "NodeCounts":
        r"""The node count vectors :math:`c_v`, exact or already sketched.

        Exact sparse rows are propagated while they hold fewer entries than
        a quarter of the dense :obj:`[N, p, b]` sketches would; past that
        (deep :obj:`hops` on dense graphs) the Count-Sketches themselves are
        propagated by sum aggregation (:meth:`message_and_aggregate`), which
        costs :math:`O(m p b)` per step whatever the strings' lengths. Exact
        cosine norms need the exact rows, so they never switch.
        """
        grams = index_grams(steps)
        n, p, b = prep.num_nodes, self.degree, self.dim
        may_switch = self.kernel == "poly" or self.norm == "sketch"
        budget = int(n * p * b * self.switch_ratio)
        levels = []
        gen = node_count_steps(grams, prep.hood, n)
        for step, y in enumerate(gen):
            levels.append(y)
            if may_switch and step < self.hops and y.row.numel() > budget:
                gen.close()
                dense = self._propagate_dense(prep, grams, levels)
                return NodeCounts(grams, None, dense)
        return NodeCounts(grams, tag_blocks(levels, grams.num_grams, self.traversal), None)

    def _block_hashes(self, bucket: Tensor, sign: Tensor, level: Tensor) -> tuple:
        """Buckets and signs :obj:`[M, p]` of grams placed in their level's block."""
        if self.traversal == "wl":
            return bucket, sign
        shift, flip = self.hashes.shift.t()[level], self.hashes.flip.t()[level]
        return (bucket + shift) % self.dim, sign * flip

    def _scatter(self, out: Tensor, node: Tensor, bucket: Tensor, sign: Tensor, val: Tensor):
        """Add :obj:`val * sign[:, f]` into sketch :math:`f` of :obj:`node`.

        :obj:`out` is :obj:`[N, p * b]`, sketch :math:`f` its columns
        :obj:`f * b .. (f + 1) * b - 1`; :obj:`bucket` and :obj:`sign` are
        :obj:`[M, p]`.
        """
        p, b = self.degree, self.dim
        offset = torch.arange(p, device=out.device) * b
        place(out, node.repeat_interleave(p), (bucket + offset).view(-1), (sign * val.unsqueeze(1)).view(-1))

    def _propagate_dense(self, prep: PreparedGraph, grams: LocalGrams, levels: List[Rows]) -> Tensor:
        """Continue from exact rows of the first steps with dense sketches."""
        n, p, b = prep.num_nodes, self.degree, self.dim
        hb, hs = self.gram_hashes(grams)
        y = torch.zeros(n, p * b, dtype=torch.float64, device=prep.node_sym.device)
        last = levels[-1]
        self._scatter(y, last.row, hb[last.col], hs[last.col], last.val)
        out = None
        if self.traversal == "bfs":
            out = torch.zeros_like(y)
            for level, lv in enumerate(levels):
                bucket, sign = self._block_hashes(hb[lv.col], hs[lv.col], torch.full_like(lv.col, level))
                self._scatter(out, lv.row, bucket, sign, lv.val)
        adj = self._adjacency(prep)
        for step in range(len(levels), self.hops + 1):
            y = self.message_and_aggregate(adj, y)
            if grams.steps[step] is not None:
                node, gid = grams.steps[step]
                ones = torch.ones(node.numel(), dtype=torch.float64, device=y.device)
                self._scatter(y, node, hb[gid], hs[gid], ones)
            if out is not None:
                for f in range(p):
                    shift, flip = self.hashes.level(f, step)
                    out[:, f * b : (f + 1) * b] += shift_level(y[:, f * b : (f + 1) * b], shift, flip)
        return (y if out is None else out).view(n, p, b)

    def _chunk_sketches(
        self, counts: "NodeCounts", hb: Tensor, hs: Tensor, lo: int, hi: int, rowptr: Tensor
    ) -> Tensor:
        """Count-Sketches :obj:`[p, hi - lo, b]` of nodes :obj:`lo .. hi - 1`."""
        if counts.dense is not None:
            return counts.dense[lo:hi].permute(1, 0, 2).clone()
        rows = counts.rows
        a, z = int(rowptr[lo]), int(rowptr[hi])
        col, val = rows.col[a:z], rows.val[a:z]
        g = max(counts.grams.num_grams, 1)
        bucket, sign = self._block_hashes(hb[col % g], hs[col % g], col // g)
        out = torch.zeros(hi - lo, self.degree * self.dim, dtype=torch.float64, device=val.device)
        self._scatter(out, rows.row[a:z] - lo, bucket, sign, val)
        return out.view(hi - lo, self.degree, self.dim).permute(1, 0, 2)

    def node_features(
        self,
        prep: PreparedGraph,
        steps,
        batch: Optional[Tensor] = None,
        num_graphs: Optional[int] = None,
    ) -> Tensor:
        r"""Node features :obj:`[N, b]` in ``float64``.

        With :obj:`batch`, their sums per graph :obj:`[num_graphs, b]`.

        Works through the nodes in chunks, so with :obj:`batch` the memory
        beyond the count vectors is one chunk of :obj:`[p, chunk, b]`.
        """
        n, p, b = prep.num_nodes, self.degree, self.dim
        dev = prep.node_sym.device
        counts = self.node_counts(prep, steps)
        hb, hs = self.gram_hashes(counts.grams)
        rowptr, exact_norm = None, None
        if counts.rows is not None:
            rowptr = exclusive_cumsum(torch.bincount(counts.rows.row, minlength=n))
            if self.kernel == "cosine" and self.norm == "exact":
                exact_norm = row_norms(counts.rows, n)
        out = torch.zeros(n if batch is None else num_graphs, b, dtype=torch.float64, device=dev)
        chunk = max(1, (1 << 22) // (p * b))
        for lo in range(0, n, chunk):
            hi = min(lo + chunk, n)
            cs = self._chunk_sketches(counts, hb, hs, lo, hi, rowptr)
            scale = None
            if self.kernel == "cosine":
                norm = exact_norm[lo:hi] if exact_norm is not None else cs.pow(2).sum(-1).mean(0).sqrt()
                scale = inverse_or_zero(norm).pow(p).unsqueeze(1)
            elif self.const > 0:
                bucket, sign = self.hashes.const_token()
                cs[torch.arange(p, device=dev), :, bucket] += sign.view(-1, 1) * math.sqrt(self.const)
            ts = tensor_sketch(cs)
            if scale is not None:
                ts = ts * scale
            if batch is None:
                out[lo:hi] = ts
            else:
                out += global_add_pool(ts, batch[lo:hi], size=out.size(0))
        return out

    @torch.compiler.disable
    def forward(
        self,
        x: Tensor,
        edge_index: Tensor,
        edge_attr: Optional[Tensor] = None,
        edge_order: Optional[Tensor] = None,
    ) -> Tensor:
        r"""Node features :obj:`[num_nodes, dim]`.

        Args:
            x (torch.Tensor): Node labels.
            edge_index (torch.Tensor): Edge indices, in neighbor order.
            edge_attr (torch.Tensor, optional): Edge labels.
            edge_order (torch.Tensor, optional): A per-edge sort key (for
                example a timestamp) that defines the neighbor order.
        """
        with torch.no_grad():
            prep = self.prepare(x, edge_index, edge_attr, edge_order)
            steps = self.occurrences(prep)
            return self.node_features(prep, steps).to(self.out_dtype)

    # -- graph level ---------------------------------------------------------

    @torch.compiler.disable
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
        (up to float rounding) but for :math:`p = 1` never builds the dense
        :obj:`[num_nodes, dim]` tensor: the sum over nodes commutes with the
        linear propagation, so each k-gram is hashed straight into its
        graph's row with a walk-count weight.

        Args:
            x (torch.Tensor): Node labels.
            edge_index (torch.Tensor): Edge indices, in neighbor order.
            batch (torch.Tensor, optional): :obj:`[num_nodes]` graph index of
                each node (a single graph when :obj:`None`).
            edge_attr (torch.Tensor, optional): Edge labels.
            edge_order (torch.Tensor, optional): A per-edge sort key.
            num_graphs (int, optional): The number of graphs (default:
                :obj:`batch.max() + 1`).
        """
        with torch.no_grad():
            n = x.size(0) if isinstance(x, Tensor) and x.dim() > 0 else 0
            batch = check_batch(batch, n)
            prep = self.prepare(x, edge_index, edge_attr, edge_order)
            dev = prep.node_sym.device
            if batch is None:
                batch = torch.zeros(n, dtype=torch.long, device=dev)
            size = int(batch.max()) + 1
            if num_graphs is None:
                num_graphs = size
            elif num_graphs < size:
                raise ValueError(f"'num_graphs' is {num_graphs} but 'batch' refers to graph {size - 1}")
            steps = self.occurrences(prep)
            linear = self.degree == 1 and (self.kernel == "poly" or self.norm == "exact")
            if not linear:
                return self.node_features(prep, steps, batch, num_graphs).to(self.out_dtype)
            weight = torch.ones(n, dtype=torch.float64, device=dev)
            if self.kernel == "cosine":
                counts = node_count_rows(index_grams(steps), prep.hood, n, self.traversal)
                weight = inverse_or_zero(row_norms(counts, n))
            out = self.linear_readout(prep, steps, weight, batch, num_graphs)
            return out.to(self.out_dtype)

    def linear_readout(
        self, prep: PreparedGraph, steps, weight: Tensor, batch: Tensor, num_graphs: int
    ) -> Tensor:
        r""":math:`\sum_v w_v\, CS(c_v)` per graph, for :math:`p = 1`."""
        b = self.dim
        out = torch.zeros(num_graphs, b, dtype=torch.float64, device=weight.device)
        omega = walk_weights(prep.hood, weight, self.hops)
        hashed = [[self.hashes.hash(o.grams) for o in occ] for occ in steps]
        for j, level, _ in linear_blocks(len(steps), self.hops, self.traversal):
            shift, flip = self.hashes.level(0, level)
            if self.traversal == "wl":
                shift, flip = 0, 1.0
            for o, (bucket, sign) in zip(steps[j], hashed[j]):
                col = (bucket[:, 0] + shift) % b
                place(out, batch[o.node], col, sign[:, 0] * flip * omega[level - j][o.node])
        if self.kernel == "poly" and self.const > 0:
            bucket, sign = self.hashes.const_token()
            sizes = global_add_pool(weight.unsqueeze(1), batch, size=num_graphs).squeeze(1)
            out[:, int(bucket[0])] += sign[0] * math.sqrt(self.const) * sizes
        return out

    def __repr__(self) -> str:
        args = [
            f"k={self.k}", f"hops={self.hops}", f"traversal='{self.traversal}'",
            f"dim={self.dim}", f"kernel='{self.kernel}'", f"degree={self.degree}",
        ]
        defaults = {
            "const": 0.0, "seed": 0, "order": "edge", "relabel": False,
            "blended": False, "norm": "exact", "flow": "source_to_target",
        }
        for name, default in defaults.items():
            value = getattr(self, name)
            if value != default:
                args.append(f"{name}={value!r}")
        return f"{self.__class__.__name__}({', '.join(args)})"
