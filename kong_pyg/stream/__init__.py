r"""KONG sketches of graph streams in bounded memory (the paper's Theorem 2).

Labeled edges of many graphs arrive in one stream, interleaved in any way;
the arrival order is the neighbor order. :class:`KongStream` keeps per node
only what the strings need (the saturated length and the first and last
:math:`k - 1` symbols of the node's string, see :mod:`kong_pyg.kgrams`) and,
where the kernel needs them, the node's Count-Sketches: never the edges. It
produces the same graph features as :meth:`KongSketch.readout
<kong_pyg.nn.KongSketch.readout>` on the graphs that
:func:`~kong_pyg.datasets.streamspot.stream_to_graphs` builds from the same
stream (same seed, same hashes), in :math:`\max(h, 1)` passes over the
stream; with :math:`h = 1` in a single pass, the current sketches available
at any moment.

**Which neighborhood an edge extends.** An arrival (source :math:`s`,
destination :math:`d`, edge type :math:`e`, graph :math:`g`) appends
:math:`e\, s_d^{i-1}` to :math:`s`'s string and (with :obj:`undirected`, the
default) :math:`e\, s_s^{i-1}` to :math:`d`'s string, in that order: a process
sees the objects it acted on in time order, an object the processes that
touched it. This is :func:`stream_to_graphs`'s graph (edges :math:`d \to s`
then :math:`s \to d`, PyG's default flow). With :obj:`undirected=False` only
:math:`s` sees :math:`d`. A node's label is its type on its first edge.

**Passes.** Pass :math:`i` builds :math:`s_v^i` from the neighbors'
:math:`s_u^{i-1}`, whose state (sketch, length, prefix, suffix) is fixed
after pass :math:`i - 1`: pass :math:`i` adds, per arrival, the neighbor's
sketch and the hashed k-grams that cross into the new piece. So
:math:`h \geq 2` re-reads the stream :math:`h` times (:meth:`KongStream.fit`
takes a re-iterable source: an :class:`~kong_pyg.datasets.EdgeStream`, a
list of chunks, or a callable returning a fresh iterator).

**The linear map at** :math:`h = 2` needs no node sketches: the string
:math:`s_v^2` is its pieces (the edge symbols, :math:`l(v)` for WL, and one
:math:`s_u^1` per neighbor :math:`u`) put together, so its k-grams are those
of the :math:`s_u^1`, those of the one-symbol pieces, and those that cross
piece boundaries; summed over :math:`v`, :math:`\phi(s_u^1)` counts
:math:`w_u` times, :math:`w_u` being how often :math:`u` is a neighbor
(known once pass 1 has read every edge). So pass 1 counts :math:`w_u` (and,
for BFS, adds its own level's grams to the graph rows), and pass 2
*replays* pass 1: it rebuilds every :math:`s_u^1` from the start
(:math:`O(k)` codes per node, ``rep_*``) and adds each of its k-grams
:math:`w_u` times into the graph rows, beside the grams it finds itself.
The same numbers as node sketches summed with weights (integer counts), in
:math:`O(N k)` memory instead of :math:`O(N b)`. States that keep node
sketches instead (written by earlier versions) still resume as they were
written.

**Memory.** Per node: a graph index, a label and :math:`O(k)` string codes.
The linear map (:obj:`kernel="poly"`, :obj:`degree=1`) with :math:`h \leq 2`
needs nothing more (each k-gram goes straight into its graph's row,
:math:`O(b)` per graph; a neighbor count per node for :math:`h = 2`);
otherwise nodes also hold :math:`p` Count-Sketches of size :math:`b` (in
:obj:`dtype`), up to three sets of them for :math:`h \geq 2` (previous
pass, current pass, BFS levels so far): :math:`O(N p b)`, never
:math:`O(|E|)`.

**Ids.** Node and graph ids are any 64-bit integers or strings (a canonical
decimal string of at most 18 digits, such as ``"12"`` but not ``"012"`` or
``"-5"``, is the integer it spells); node ids are per graph. They are mapped to
dense indices by a vectorized hash table (:class:`~kong_pyg.idmap.IdMap`),
in order of first appearance; graphs are numbered likewise, which is the row
order of :meth:`KongStream.sketches` (:attr:`KongStream.graph_ids`): the
order of each graph's first edge, the order of
:func:`~kong_pyg.datasets.streamspot.stream_to_graphs`'s graphs too.

**Cosine** normalizes each node by the norm *estimated from its sketches*
(:obj:`norm="sketch"` of :class:`~kong_pyg.nn.KongSketch`): exact norms need
exact k-gram counts, which a stream does not keep.

**Merging.** A node's string over stream A followed by stream B is its
string over A concatenated with its string over B, and sketches are linear:
:func:`merge_streams` joins the states of two consecutive time shards (sums
the sketches, hashes in the k-grams that cross the seam from A's suffix codes
to B's prefix codes, joins the codes) into the state of the whole stream, in
any pass (shards of pass :math:`i \geq 2` are read into copies of the merged
state after pass :math:`i - 1`; the replayed strings of the linear map's
pass 2 join likewise, their seam grams weighted by :math:`w_u`), so an
:math:`h`-pass stream can be read by many processes pass by pass
(:mod:`~kong_pyg.stream.distributed`).

**Checks.** Every pass after the first must replay pass 1: its edge count
and a checksum are compared (:mod:`~kong_pyg.stream.replay`); checkpoints
carry a digest, the replay checksums and the source's fingerprint, and every
entry is checked when loaded (:mod:`~kong_pyg.stream.checkpoint`).

**Modules.** :mod:`~kong_pyg.stream.core` (:class:`KongStream`: options,
node arrays, passes, output, checkpoints), :mod:`~kong_pyg.stream.ids` (ids
to dense indices, with direct-address caches), :mod:`~kong_pyg.stream.state`
(per-node arrays), :mod:`~kong_pyg.stream.passes` (the k-gram work of a
chunk), :mod:`~kong_pyg.stream.counts` (grams counted per graph before
hashing), :mod:`~kong_pyg.stream.output` (graph features),
:mod:`~kong_pyg.stream.sources` (whole sources), :mod:`~kong_pyg.stream.checkpoint`
(files and state checks), :mod:`~kong_pyg.stream.replay` (pass checksums),
:mod:`~kong_pyg.stream.merge` (:func:`merge_streams`) and
:mod:`~kong_pyg.stream.distributed` (many processes, :mod:`torch.distributed`).
The n-gram hashes are :class:`~kong_pyg.sketch.SymbolHashTable`'s, the node
maps :mod:`kong_pyg.kernels`', the level layout :mod:`kong_pyg.traversals`'.
"""
from .core import KongStream
from .ids import MAX_GRAPHS
from .merge import merge_streams

__all__ = ["KongStream", "merge_streams", "MAX_GRAPHS"]
