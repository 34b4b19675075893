r""":class:`KongStream`: the state of a stream and its passes (see :mod:`kong_pyg.stream`)."""
import functools
import os
import types
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, Generic, List, Optional, TypeVar, Union

import torch
from torch import Tensor

from ..config import GivenOptions, KongConfig, check_bool, check_int, given_options, resolve_config
from ..devices import cpu_methods
from ..files import check_path
from ..kernels import get_kernel
from ..kgrams import gram_lengths
from ..sketch import HASH_VERSION, SketchHashes, SymbolHashTable
from ..threads import MAX_THREADS, torch_threads
from ..traversals import Traversal, traversal_rule
from . import checkpoint as ckpt
from . import passes
from .counts import GramCounts
from .ids import Columns, Found, StreamIds
from .options import STREAM_DEFAULTS, node_sketches, replays, stream_config
from .output import final_sketches
from .sources import fit_source
from .state import COUNT_DTYPE, INDEX_DTYPE, NodeState, grow_rows

_R = TypeVar("_R")


class _class_or_stream(Generic[_R]):
    """A method bound to the class when called on it and to the stream when called on one."""

    def __init__(self, fn: Callable[..., _R]):
        self.fn = fn
        functools.update_wrapper(self, fn)  # type: ignore[arg-type]

    def __get__(self, obj: Any, owner: Any = None) -> Callable[..., _R]:
        return types.MethodType(self.fn, owner if obj is None else obj)


@cpu_methods("__init__", "reset", "update", "end_pass", "check_replay", "sketches", "state_dict",  # (on CPU)
             "load_state_dict", "from_state_dict", "copy", "save", "load", "fit", "replay_checksum", "merge")
class KongStream(GivenOptions):
    r"""KONG graph sketches of an edge stream, in bounded memory.

    From the `"KONG: Kernels for ordered-neighborhood graphs"
    <https://arxiv.org/abs/1805.10014>`_ paper (NeurIPS 2018), Theorem 2.

    Consumes labeled edges of many graphs, interleaved in any way, in chunks
    (:meth:`update`, or :meth:`fit` over a whole source); the arrival order is
    the neighbor order. :meth:`sketches` returns :obj:`[num_graphs, dim]`
    graph features equal (up to float rounding; exactly, for the linear map
    in ``float64``) to

    .. code-block:: python

        graphs = stream_to_graphs(stream, undirected=undirected)
        KongSketch(k, hops, traversal, dim, kernel, degree, const, seed,
                   blended=blended, norm="sketch").readout(...)

    on those graphs (with :obj:`edge_attr` the edge types when
    :obj:`edge_labels`), rows in order of each graph's first edge. See
    :mod:`kong_pyg.stream` for which neighborhood an edge extends, the
    passes, memory, cosine norms and merging.

    The KONG options are those of :class:`~kong_pyg.KongConfig`, given as
    keyword arguments (with the defaults below) or as :obj:`config`; a
    stream always sketches (:obj:`dim` is not None), in arrival order
    (:obj:`order="edge"`, :obj:`relabel=0`), with cosine norms estimated from
    the sketches (:obj:`norm="sketch"`; a cosine :obj:`config` must say so,
    as :class:`~kong_pyg.KongConfig`'s default is :obj:`"exact"`).

    .. warning::
        Like :class:`~kong_pyg.nn.KongSketch`, the sketches depend on the
        order of the edges when :obj:`k >= 2`: that is the point.

    Args:
        k (int, optional): The k-gram length. (default: :obj:`1`)
        hops (int, optional): The depth :math:`h`; the stream is read
            :math:`\max(h, 1)` times. (default: :obj:`1`)
        traversal (str, optional): :obj:`"bfs"` or :obj:`"wl"`.
            (default: :obj:`"bfs"`)
        dim (int, optional): The sketch size :math:`b`. (default: :obj:`1024`)
        kernel (str, optional): :obj:`"poly"` or :obj:`"cosine"` (norms
            estimated from the sketches). (default: :obj:`"poly"`)
        degree (int, optional): The kernel degree :math:`p`. (default: :obj:`1`)
        const (float, optional): The polynomial constant. (default: :obj:`0.0`)
        seed (int, optional): The seed of the hash tables (the same tables as
            :class:`~kong_pyg.nn.KongSketch` with this seed). (default: :obj:`0`)
        blended (bool, optional): Count all n-grams :math:`n = 1..k`.
            (default: :obj:`False`)
        undirected (bool, optional): Each edge extends both endpoints'
            neighborhoods (source first), else only the source's.
            (default: :obj:`True`)
        edge_labels (bool, optional): Put the edge type before each
            neighbor's piece. (default: :obj:`True`)
        dtype (torch.dtype, optional): The dtype sketches are kept and returned in; counts are exact
            below :math:`2^{53}` in ``float64``, :math:`2^{24}` in ``float32``, which misses edges
            beyond (:meth:`sketches` warns). (default: :obj:`torch.float64`)
        config (KongConfig, optional): The KONG options as one object, instead
            of the keyword arguments above (:obj:`undirected`, :obj:`dtype`
            and :obj:`threads` are the stream's own). (default: :obj:`None`)
        own_label (bool, optional): As in :class:`~kong_pyg.KongConfig`.
            (default: :obj:`True`)
        threads (int, optional): PyTorch's intra-op threads while the stream
            works (set and restored around each call; None: PyTorch's own
            setting). Its work is many mid-sized operations: a second thread
            gains little on a free core, and on a busy machine waiting for
            descheduled threads makes it many times slower (see
            ``docs/results/stream.md``). Run more processes instead
            (:mod:`~kong_pyg.stream.distributed`). (default: :obj:`1`)

    Shapes:
        - **input** (:meth:`update`): :obj:`src`, :obj:`src_type`,
          :obj:`dst`, :obj:`dst_type`, :obj:`edge_type`, :obj:`graph`, each
          :math:`(|\mathcal{E}_{chunk}|)`: integer tensors or arrays, or
          sequences of integers or strings.
        - **output** (:meth:`sketches`): :math:`(|\mathcal{G}|, b)`.
    """

    def __init__(
        self,
        k: int = 1,
        hops: int = 1,
        traversal: str = "bfs",
        dim: int = 1024,
        kernel: str = "poly",
        degree: int = 1,
        const: float = 0.0,
        seed: int = 0,
        blended: bool = False,
        undirected: bool = True,
        edge_labels: bool = True,
        dtype: torch.dtype = torch.float64,
        config: Optional[KongConfig] = None,
        own_label: bool = True,
        threads: Optional[int] = 1,
    ):
        options = dict(k=k, hops=hops, traversal=traversal, dim=dim, kernel=kernel, degree=degree,
                       const=const, seed=seed, blended=blended, edge_labels=edge_labels, norm="sketch",
                       own_label=own_label)
        #: The KONG options (:class:`~kong_pyg.KongConfig`).
        self.cfg = stream_config(resolve_config(config, options, STREAM_DEFAULTS, "KongStream",
                                                given_options(self)))
        cfg = self.cfg
        self.k, self.hops, self.traversal, self.kernel = cfg.k, cfg.hops, cfg.traversal, cfg.kernel
        assert cfg.dim is not None  # checked by stream_config
        self.dim: int = cfg.dim
        self.degree, self.const, self.seed, self.blended = cfg.degree, cfg.const, cfg.seed, cfg.blended
        self.edge_labels = cfg.edge_labels
        self.undirected = check_bool("undirected", undirected)
        if not isinstance(dtype, torch.dtype) or dtype not in (torch.float32, torch.float64):
            raise TypeError(f"'dtype' must be torch.float64 or torch.float32 (got {dtype!r}); sketches hold "
                            "counts (float16 and bfloat16 would round and overflow them)")
        self.dtype = dtype
        #: The traversal's rules (which levels are blocks, whether the label heads every string).
        self.traversal_rule: Traversal = traversal_rule(cfg)
        self.hashes = SketchHashes(self.dim, self.degree, self.k, self.hops + 1, self.seed)
        self.lengths: List[int] = gram_lengths(self.k, self.blended)
        #: The number of passes over the stream, :math:`\max(h, 1)`.
        self.num_passes = max(self.hops, 1)
        #: Whether graph features are a sum of node count sketches (no node maps).
        self.linear = get_kernel(cfg.kernel).is_linear(cfg)
        self._executor: Optional[ThreadPoolExecutor] = None
        if threads is not None:
            check_int("threads", threads, 1, MAX_THREADS)
        #: PyTorch's intra-op threads while the stream works (None: PyTorch's setting).
        self.threads = threads
        self.reset()

    # -- configuration and state ----------------------------------------------

    def config(self) -> Dict[str, Any]:
        """The constructor arguments (what :meth:`state_dict` stores; without :obj:`config`)."""
        out = dict(
            k=self.k, hops=self.hops, traversal=self.traversal, dim=self.dim, kernel=self.kernel,
            degree=self.degree, const=self.const, seed=self.seed, blended=self.blended,
            undirected=self.undirected, edge_labels=self.edge_labels, dtype=self.dtype,
        )
        if not self.cfg.own_label:  # (only when set: checkpoints of version 1 have no such key)
            out["own_label"] = False
        return out

    def _saved_config(self) -> Dict[str, Any]:
        cfg = self.config()
        cfg["dtype"] = str(self.dtype).replace("torch.", "")
        return cfg

    def __repr__(self) -> str:
        """The constructor call that builds this stream's configuration (not its ``threads``: how it runs)."""
        args = ", ".join(f"{k}={v!r}" for k, v in self.config().items())
        old = "" if self.hashes.version == HASH_VERSION else f", [hash scheme {self.hashes.version}]"
        return f"{self.__class__.__name__}({args}{old})"

    def reset(self) -> "KongStream":
        """Forget everything seen (keeps the configuration)."""
        self._broken: Optional[str] = None  # why the state is incomplete (see update)
        self._ids = StreamIds()
        self._set_table(SymbolHashTable(self.hashes, self.dtype))
        self._nodes = NodeState(self.k)
        self._rows = torch.zeros(0, self.dim, dtype=self.dtype)  # graph rows (linear map)
        self._pass_rows = torch.zeros(0, self.dim, dtype=self.dtype)  # grams of passes >= 2 (linear; from 2)
        #: The pass being read (1-based).
        self.pass_index = 1
        #: Edges consumed in the current pass.
        self.position = 0
        #: Edges of the stream (counted in pass 1).
        self.num_edges = 0
        #: The fingerprint of the source, if the caller gave one (see :meth:`fit`).
        self.source: Optional[str] = None
        #: Where the last :meth:`fit` began: (pass, edges of it read before); (1, 0) from the start.
        self.resumed_from = (1, 0)
        self._first: Optional[int] = None  # checksum of pass 1 (unknown: None)
        self._current: Optional[int] = 0  # checksum of the current pass so far (unknown: None)
        self._nodes.add("node_graph", (), INDEX_DTYPE, 0)
        self._nodes.add("node_sym", (), INDEX_DTYPE, 0)
        self._nodes.add_strings("seg")
        #: Whether the last pass replays pass 1's grams, weighted (the linear map at h = 2: no node sketches).
        self._replay = replays(self.linear, self.hops)
        if self._needs_node_sketch(1):
            self._nodes.add("Y", (self.degree * self.dim,), self.dtype, 0)
        if self._replay:  # how often each node is a neighbor, counted in pass 1
            self._nodes.add("nbr_w", (), COUNT_DTYPE, 0)
        return self

    def _set_table(self, table: SymbolHashTable) -> None:
        self._table = table
        self._counts = GramCounts(table)  # grams for graph rows, counted first (see .counts)
        table.on_grow = self._counts.flush

    def _settle(self) -> None:
        """Add the counted grams into the graph rows (before the rows are read, copied or regrown)."""
        self._counts.flush()

    @property
    def num_graphs(self) -> int:
        """The number of graphs seen."""
        return len(self._ids.graphs)

    @property
    def num_nodes(self) -> int:
        """The number of nodes seen."""
        return self._nodes.n

    @property
    def graph_ids(self) -> List[Any]:
        """The graph ids as :meth:`update` got them (integers or strings), in row order of :meth:`sketches`.

        Read from a :class:`~kong_pyg.datasets.StreamSpotReader`, an id that
        is not a plain decimal integer is the reader's code :math:`-(1 + j)`
        (see :class:`~kong_pyg.datasets.EdgeChunk`):
        :obj:`[reader.decode(g) for g in stream.graph_ids]` spells the file's
        ids, as :obj:`kong-pyg stream` writes them.
        """
        return self._ids.graph_ids()

    def _usable(self) -> None:
        if self._table._scrambled != (self.hashes.version >= 2):  # (hashes.version set by hand)
            if self.num_edges or self.pass_index > 1:
                raise RuntimeError("the stream's hash scheme was changed after it read edges: its sketches "
                                   "would mix two schemes; reset() it, or load a state")
            self.reset()  # (nothing read yet: its tables follow)
        if self._broken:
            raise RuntimeError(f"this KongStream stopped inside update() ({self._broken}): its state is "
                               "incomplete; reload the last checkpoint (KongStream.load) or reset()")

    def _needs_node_sketch(self, i: int) -> bool:
        """Whether pass :obj:`i` builds node sketches (else its grams go straight to graph rows)."""
        return node_sketches(self.linear, self.hops, self._replay, i)

    def _block(self, level: int) -> Optional[int]:
        """The level shift of level :obj:`level`'s block (None where levels are not shifted)."""
        return level if self.traversal_rule.shifted() else None

    def _sink(self) -> Optional[passes.Sink]:
        """Where the grams of the current pass go (call after the arrays grew; None: nowhere)."""
        i = self.pass_index
        if self._needs_node_sketch(i):  # node sketches are level-free
            return passes.Sink(self._table, self._nodes["Y"], None, None)
        if i not in self.traversal_rule.blocks(self.hops):  # WL's pass 1, replayed by the last pass
            return None
        return passes.Sink(self._table, self._graph_rows(), self._nodes["node_graph"], self._block(i),
                           self._counts)

    def _graph_rows(self) -> Tensor:
        """The graph rows the current pass adds to: pass 1 the rows; a later (last) pass rows of its own."""
        return self._rows if self.pass_index == 1 else self._pass_rows

    def _replay_sink(self, counts: bool = True) -> passes.Sink:
        r"""Where the grams of :math:`s_u^1` go :math:`w_u` times, into the last level's block.

        :math:`\sum_v \phi(s_v^2)` holds :math:`\phi(s_u^1)` once per time
        :math:`u` is a neighbor (:math:`w_u`, known after pass 1), so the
        last pass replays pass 1 into this sink (the linear map at
        :math:`h = 2`; see :mod:`kong_pyg.stream`). At the end of pass 1 it
        takes WL's label grams of :math:`s_u^1` (into the rows kept, and
        uncounted: :obj:`counts=False`).
        """
        nodes = self._nodes
        return passes.Sink(self._table, self._graph_rows(), nodes["node_graph"], self._block(self.hops),
                    self._counts if counts else None, nodes["nbr_w"])

    def _rows_for(self, g: int) -> None:
        """Graph rows for :obj:`g` graphs (the linear map only)."""
        if self.linear and g > self._rows.size(0):
            self._settle()
            self._rows = grow_rows(self._rows, g)
            self._later_rows()

    def _later_rows(self) -> None:
        """The rows of a pass after the first as many as the graph rows (none before pass 2: memory)."""
        if self.linear and self.pass_index > 1:
            self._pass_rows = grow_rows(self._pass_rows, self._rows.size(0))

    # -- input --------------------------------------------------------------

    def update(self, src: Any, src_type: Any, dst: Any, dst_type: Any, edge_type: Any = None,
               graph: Any = None) -> "KongStream":
        r"""Consume one chunk of edges, in arrival order.

        Args:
            src: Source node ids :obj:`[E]` (integers or strings; node ids are
                per graph: the same id in two graphs is two nodes).
            src_type: Source node types :obj:`[E]` (integers in
                :math:`[0, 2^{58})` or strings).
            dst: Destination node ids :obj:`[E]`.
            dst_type: Destination node types :obj:`[E]`.
            edge_type: Edge types :obj:`[E]` (needed when :obj:`edge_labels`).
            graph: Graph ids :obj:`[E]` (default: all edges in one graph).

        In pass 1 a node's label is its type on its first edge (later types
        of the same node are ignored). In a later pass (after
        :meth:`end_pass`) the chunks must replay the stream of pass 1: a
        chunk that would read past pass 1's edge count is refused, and the
        end of the pass checks the count and a checksum of the edges
        (:meth:`check_replay`). Bad columns (lengths, dtypes, types) are
        rejected before any edge is consumed; should an update fail midway
        nonetheless (a later pass meeting an unknown node, too many graphs),
        reload the last checkpoint: a stream stopped inside :meth:`update`
        (an error, or Ctrl-C) refuses every use until :meth:`reset` or
        :meth:`load_state_dict`, as its state is incomplete.
        """
        self._usable()
        with torch.no_grad(), torch_threads(self.threads, cap=False):
            cols = self._ids.columns(src, src_type, dst, dst_type, edge_type, graph, self.edge_labels)
            e = cols.src.size
            if self.pass_index > 1 and self.position + e > self.num_edges:
                raise ValueError(
                    f"pass {self.pass_index} would read {self.position + e} edges but pass 1 read "
                    f"{self.num_edges}: every pass must read the same stream"
                )
            passes.read_chunk(self, cols)
        return self

    def _pool(self) -> ThreadPoolExecutor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kong-stream-ids")
        return self._executor

    def _consume(self, found: Found, cols: Columns) -> None:
        self._rows_for(found.num_graphs)
        if found.first.size:
            passes.new_nodes(self._nodes, self._table, found, cols)
        esym = None if cols.edge_type is None else self._table.ids(2 * cols.edge_type + 1)  # edge codes
        if self.hops == 0 or found.ends.size == 0:
            return
        ends = torch.from_numpy(found.ends).to(INDEX_DTYPE)  # (.state)
        esym = None if esym is None else esym.to(INDEX_DTYPE)
        inc = passes.incidences(ends, esym, self.undirected, self.k > 1)
        if self.pass_index == 1:
            if self._replay:
                passes.count_neighbors(self._nodes, inc.nbr)
            passes.first_pass_chunk(self._nodes, self._sink(), self.lengths, inc)
            return
        if self._replay:  # pass 1's grams again, each w_u times
            passes.first_pass_chunk(self._nodes, self._replay_sink(), self.lengths, inc, name="rep")
        sink = self._sink()
        assert sink is not None  # (the last level is a block)
        passes.later_pass_chunk(self._nodes, sink, self.lengths, inc,
                                self._needs_node_sketch(self.pass_index), count=not self._replay)

    # -- passes -------------------------------------------------------------

    def end_pass(self) -> "KongStream":
        r"""Close pass :math:`i < h`: fix :math:`s^i` and start pass :math:`i + 1`.

        Call it after the whole stream was read in pass :math:`i` (:meth:`fit`
        does); the next :meth:`update` calls must replay the same stream.
        """
        self._usable()
        if self.pass_index >= self.num_passes:
            raise ValueError(f"pass {self.pass_index} is the last of {self.num_passes} "
                             f"(hops={self.hops}); there is no next pass")
        if self.pass_index == 1:
            self._first = self._current
        else:
            self.check_replay()
        self._current = 0
        with torch.no_grad(), torch_threads(self.threads, cap=False):
            self._settle()
            passes.close_pass(self)
        return self

    def check_replay(self) -> None:
        r"""Check that the current pass :math:`i \geq 2` read pass 1's stream: its edge count and checksum.

        Raises:
            ValueError: The pass read fewer or more edges than pass 1, or
                other edges (a different checksum; see
                :mod:`~kong_pyg.stream.replay`). States of version 1 carry no
                checksum: only the count is checked.
        """
        self._usable()
        i = self.pass_index
        if i == 1:
            return
        if self.position != self.num_edges:
            raise ValueError(f"pass {i} read {self.position} edges but pass 1 read {self.num_edges}: every "
                             "pass must read the same stream (the sketches would be wrong)")
        if self._first is not None and self._current is not None and self._first != self._current:
            raise ValueError(f"pass {i} read other edges than pass 1 (the same number, {self.num_edges}, "
                             "but a different checksum): every pass must read the same stream, in the "
                             "same order")

    # -- output -------------------------------------------------------------

    def sketches(self, release: bool = False) -> Tensor:
        r"""The graph features :obj:`[num_graphs, dim]` of what was read.

        With :math:`h \leq 1` at any moment (the stream so far); with
        :math:`h \geq 2` once the last pass has read the whole stream
        (:meth:`check_replay`). Rows are in order of each graph's first edge
        (:attr:`graph_ids`), the order of
        :func:`~kong_pyg.datasets.streamspot.stream_to_graphs`.

        Args:
            release (bool, optional): For the last call: the features are
                formed in the graph rows' memory (no copy; a view that may
                hold spare rows, which :func:`torch.save` writes too), and the
                stream is :meth:`reset` afterwards, also where forming them
                fails. (default: :obj:`False`)
        """
        check_bool("release", release)
        self._usable()
        if self.pass_index != self.num_passes:
            raise ValueError(
                f"the sketches need {self.num_passes} passes (hops={self.hops}) but the stream "
                f"is in pass {self.pass_index}; read it again after end_pass(), or use fit()"
            )
        self.check_replay()
        try:
            with torch.no_grad(), torch_threads(self.threads, cap=False):
                self._settle()
                return final_sketches(self, in_place=release)
        finally:
            if release:
                self.reset()

    # -- state --------------------------------------------------------------

    def state_dict(self) -> Dict[str, Any]:
        """Everything needed to resume: configuration, id tables, node states, replay checksums.

        Holds only tensors, numbers, strings, lists and dicts (loads with
        :obj:`torch.load(..., weights_only=True)`); its size grows with the
        number of nodes and graphs, never with the number of edges.
        """
        self._usable()
        self._settle()
        return ckpt.stream_state(self)

    def load_state_dict(self, state: Dict[str, Any], assign: bool = False) -> "KongStream":
        """Restore :meth:`state_dict` (the configuration must be the same).

        :obj:`assign=True`: the float per-node arrays (node sketches, neighbor counts) are the state's
        own tensors (no copy, as in :meth:`torch.nn.Module.load_state_dict`; the stream writes them).

        States of versions 1 (before replay checksums), 2 (before the
        linear map's replay at :math:`h = 2`) and 3 (before scrambled hashes)
        load too, and the stream goes on with the hash scheme its state was
        made with (:attr:`SketchHashes.version <kong_pyg.sketch.SketchHashes>`;
        :meth:`reset` keeps it). Every entry
        is checked first (:mod:`~kong_pyg.stream.checkpoint`): a damaged or
        foreign state is a :class:`ValueError` (not a dict: :class:`TypeError`),
        and this stream is left as it was.
        """
        check_bool("assign", assign)
        ckpt.restore(self, state, assign)
        return self

    @_class_or_stream
    def from_state_dict(owner: Any, state: Dict[str, Any], assign: bool = False) -> "KongStream":
        """A stream rebuilt from :meth:`state_dict` (checked, :obj:`assign` as in :meth:`load_state_dict`).

        Called on a stream (:obj:`stream.from_state_dict(state)`), the state
        goes into that stream, whose options must be the state's
        (:meth:`load_state_dict`: a difference is refused, naming the options).
        """
        if not isinstance(owner, type):
            return owner.load_state_dict(state, assign)
        options = ckpt.saved_options(ckpt.old_seed(state)[0], ckpt.READS, ckpt.DTYPES)
        try:
            stream = owner(**options)
        except (TypeError, ValueError) as err:  # (a value no stream takes: the state is not one)
            raise ValueError(f"invalid KongStream state: bad options ({err})") from None
        return stream.load_state_dict(state, assign)

    def copy(self) -> "KongStream":
        """An independent copy."""
        out = type(self).from_state_dict(self.state_dict())
        out.threads = self.threads
        return out

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Write :meth:`state_dict` to :obj:`path` atomically, with a digest that :meth:`load` checks.

        A run killed at any moment leaves the previous checkpoint or the new
        one (see :mod:`~kong_pyg.stream.checkpoint`).
        """
        ckpt.save_checkpoint(self.state_dict(), check_path("path", path))

    @_class_or_stream
    def load(owner: Any, path: Union[str, "os.PathLike[str]"]) -> "KongStream":
        """A stream restored from a file written by :meth:`save` (or by a version writing format 1).

        :obj:`KongStream.load(path)` makes a stream with the checkpoint's
        options. Called on a stream (:obj:`stream.load(path)`), the state goes
        into that stream, whose options must be the checkpoint's: a
        difference is refused, naming the options (it never silently takes
        the checkpoint's options over the ones given).

        Raises:
            ValueError: The file is empty, truncated, damaged, foreign or
                holds an invalid state, or (called on a stream) one made
                with other options (the message names the file).
        """
        state = ckpt.load_checkpoint(check_path("path", path))
        try:
            stream = owner.from_state_dict(state, assign=True)  # (tensors read for it alone: no copies)
        except ValueError as err:
            raise ckpt.retold(err, f"{err} (checkpoint {os.fspath(path)})") from None
        ckpt.warn_old_scheme(stream, path)
        return stream

    def fit(
        self,
        source: Any,
        chunk_size: int = 1 << 20,
        checkpoint: Optional[Union[str, "os.PathLike[str]"]] = None,
        checkpoint_every: int = 1,
        progress: bool = False,
        fingerprint: Optional[str] = None,
    ) -> "KongStream":
        r"""Read a whole source, all passes, optionally with checkpoints.

        Every pass after the first is checked to replay pass 1
        (:meth:`check_replay`); a resumed run first checks that the edges it
        skips are those the checkpoint read (their checksum), so a
        checkpoint resumed against another source is refused. Where it
        began is kept in :attr:`resumed_from`.

        Args:
            source: The stream: an object with :obj:`src`, :obj:`src_type`, :obj:`dst`, :obj:`dst_type`,
                :obj:`edge_type` and :obj:`graph` columns (an :class:`~kong_pyg.datasets.EdgeStream`,
                read in slices of :obj:`chunk_size`; not a file name), a list of chunks, one chunk, or
                a callable returning a fresh iterable of chunks; a one-shot iterator only when one pass
                suffices (:obj:`hops <= 1`). A chunk is such an object, a dict or a tuple
                :obj:`(src, src_type, dst, dst_type, edge_type[, graph])` of tensors or arrays (one
                EdgeStream per stream: each numbers its own nodes).
            chunk_size (int, optional): Edges per slice of a column source.
            checkpoint (str, optional): A file: if it exists, the stream
                resumes from it (skipping the edges its pass already read);
                the state is saved there every :obj:`checkpoint_every` chunks,
                at every pass end and at the end.
            checkpoint_every (int, optional): Chunks between checkpoints.
            progress (bool, optional): A progress bar (edges/s) on stderr.
            fingerprint (str, optional): A fingerprint of the source (for a
                file, say, its size and a hash of its contents), kept in the
                state: a checkpoint with another one is refused before any
                reading. (default: :obj:`None`: none)
        """
        self._usable()
        fit_source(self, source, chunk_size, checkpoint, checkpoint_every, progress, fingerprint)
        return self

    def replay_checksum(self, src: Any, src_type: Any, dst: Any, dst_type: Any, edge_type: Any = None,
                        graph: Any = None, offset: int = 0) -> int:
        """The checksum term (:mod:`~kong_pyg.stream.replay`) of a chunk at position :obj:`offset` of a pass.

        Reads nothing into the stream (only unseen ids are numbered in its id tables).
        """
        self._usable()
        check_int("offset", offset, 0)
        cols = self._ids.columns(src, src_type, dst, dst_type, edge_type, graph, self.edge_labels)
        return self._ids.checksum(cols, offset)

    def merge(self, other: "KongStream") -> "KongStream":
        """The state of this stream followed by :obj:`other` (see :func:`~kong_pyg.stream.merge_streams`)."""
        from .merge import merge_streams

        return merge_streams(self, other)
