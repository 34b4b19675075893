r"""Brute-force KONG strings and kernels, for teaching and for tests.

These functions build the strings (:mod:`kong_pyg.traversals`) symbol by symbol with
plain Python, so they are slow and their output grows exponentially with
:obj:`hops`: use them on small graphs only. The fast code never builds a
string; the test suite checks it against these.

Symbols are node labels as given (any hashable, for instance one-letter
strings) and, for edge labels, the tuples ``("edge", label)``.
"""
import math
import numbers
from collections import Counter
from functools import lru_cache
from typing import Any, Hashable, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch
from torch import Tensor

from .config import FLOWS, ORDERS, TRAVERSALS, KongConfig, check_bool, check_choice, check_int
from .hashing import node_code
from .inputs import native_order, not_dense, on_meta
from .ordering import ORDERS_WITH_KEY, consistent_key, ordered_neighborhoods, tie_rounds

NodeString = Union[Tuple[Hashable, ...], List[Tuple[Hashable, ...]]]


class _WLLabel(tuple):
    """A WL label: :obj:`(own label, sorted neighbor labels)`, compared by value."""


def _relabel(labels: List[Hashable], neighbors: List[List[int]]) -> List[Hashable]:
    """One round of classic WL relabelling (exact, by value)."""
    keys: List[Hashable] = []
    for v, nb in enumerate(neighbors):
        keys.append(_WLLabel((labels[v], tuple(sorted((labels[u] for u in nb), key=repr)))))
    return keys


def kong_strings(
    edge_index: Union[Tensor, Sequence[Tuple[int, int]]],
    labels: Sequence[Hashable],
    hops: int,
    traversal: str = "bfs",
    edge_labels: Optional[Sequence[Hashable]] = None,
    flow: str = "source_to_target",
    edge_order: Optional[Sequence[float]] = None,
    order: str = "edge",
    relabel: int = 0,
    seed: int = 0,
    own_label: bool = True,
) -> List[NodeString]:
    r"""The explicit KONG strings of every node (brute force).

    Node :math:`v`'s neighbors :math:`u_1, u_2, \ldots` are its incoming
    edges' other ends in edge order (see :mod:`kong_pyg.ordering`), and

    * BFS: :math:`s_v^i = e_1 s_{u_1}^{i-1} e_2 s_{u_2}^{i-1} \ldots`, the
      node's string is the list of levels :math:`(s_v^0, \ldots, s_v^h)`;
    * WL: :math:`s_v^i = l(v)\, e_1 s_{u_1}^{i-1} \ldots`, the node's string
      is :math:`s_v^h`;

    with :math:`s_v^0 = l(v)` and :math:`e_j` the edge symbols (absent
    without edge labels).

    Example (the paper's Figure 1)::

        >>> names = "ABCDEFGH"
        >>> edges = ["AB", "AC", "AD", "AG", "BE", "BF", "CH", "DG"]
        >>> ei = [(names.index(a), names.index(b)) for a, b in edges]
        >>> s = kong_strings(ei, list(names), 2, "bfs", flow="target_to_source")
        >>> ["".join(level) for level in s[0]]
        ['A', 'BCDG', 'EFHG']

    Args:
        edge_index (torch.Tensor or list of pairs): The edges.
        labels (sequence): One label per node (a list, or a tensor or
            array as :obj:`data.x`: :obj:`[num_nodes]`, or :obj:`[num_nodes, C]`
            one-hot rows, read as the fast code reads them).
        hops (int): The depth :math:`h`.
        traversal (str, optional): :obj:`"bfs"` or :obj:`"wl"`.
        edge_labels (sequence, optional): One label per edge, in the same
            forms as :obj:`labels` (e.g. :obj:`data.edge_attr`).
        flow (str, optional): As in :class:`MessagePassing`.
        edge_order (sequence, optional): A per-edge sort key.
        order (str, optional): :obj:`"edge"`, :obj:`"reverse"`,
            :obj:`"consistent"`, :obj:`"label"`, :obj:`"degree"` or
            :obj:`"random"` (:obj:`"consistent"` and :obj:`"random"` are the
            library's seeded shuffles).
        relabel (int, optional): Rounds of WL relabelling first
            (:obj:`True` is one round).
        seed (int, optional): The seed of :obj:`order="random"` and
            :obj:`"consistent"`.
        own_label (bool, optional): Without it, strings hold the neighbors'
            strings only, and theirs too (every label but the neighbors' at
            the last depth drops out): BFS drops level 0, and WL's string at
            depth :math:`h` is BFS's level-:math:`h` block.

    Returns:
        list: Per node, a list of level tuples (BFS) or one tuple (WL).
    """
    check_choice("traversal", traversal, TRAVERSALS)
    check_choice("flow", flow, FLOWS)
    check_choice("order", order, ORDERS)
    check_int("hops", hops, 0)
    KongConfig(hops=hops, relabel=relabel, seed=seed, own_label=own_label)  # each option checked once
    for name, value in (("labels", labels), ("edge_index", edge_index), ("edge_labels", edge_labels),
                        ("edge_order", edge_order)):
        _check_readable(name, value)
    if edge_labels is not None and (isinstance(edge_labels, (str, bytes))
                                    or not hasattr(edge_labels, "__len__")):
        raise TypeError(f"'edge_labels' must be a sequence with one label per edge (got "
                        f"{type(edge_labels).__name__})")
    if labels is None or isinstance(labels, (str, bytes)) or not hasattr(labels, "__len__"):
        raise TypeError(f"'labels' must be a sequence with one label per node (got {type(labels).__name__})")
    if isinstance(edge_index, Tensor):
        if edge_index.layout != torch.strided:  # (a sparse adjacency has no edge order to read)
            raise TypeError("'edge_index' must be a dense [2, num_edges] tensor in edge order (got a "
                            f"{str(edge_index.layout).replace('torch.', '')} tensor: a sparse adjacency "
                            "keeps no neighbor order)")
        no_edges = edge_index.dim() == 1 and edge_index.numel() == 0  # (torch.tensor([]): no edges)
        if not no_edges and (edge_index.dim() != 2 or edge_index.size(0) != 2):
            raise ValueError(f"'edge_index' must have shape [2, num_edges] (got {list(edge_index.shape)})")
        pairs = edge_index.t().tolist()
    elif isinstance(edge_index, (str, bytes)) or not isinstance(edge_index, Iterable):
        raise TypeError(f"'edge_index' must be (source, target) pairs or a [2, num_edges] tensor (got "
                        f"{type(edge_index).__name__})")
    else:
        pairs = list(edge_index)
    if any(not isinstance(p, (list, tuple)) or len(p) != 2 for p in pairs):
        raise ValueError("'edge_index' must be (source, target) pairs or a [2, num_edges] tensor")
    pairs = [tuple(int(v) if isinstance(v, numbers.Integral) and not isinstance(v, bool) else v for v in p)
             for p in pairs]  # (NumPy integers are node indices too)
    if isinstance(edge_order, (Tensor, np.ndarray)):
        edge_order = edge_order.tolist()  # (Python numbers: NaN is found, float64 kept)
    if edge_order is not None:  # (the fast code's rules: a key only for the orders that read one, numbers)
        if order not in ORDERS_WITH_KEY:
            raise ValueError(f"'edge_order' defines the neighbor order, but order='{order}' asks for another "
                             f"one; pass order in {list(ORDERS_WITH_KEY)} or drop 'edge_order'")
        if isinstance(edge_order, (str, bytes)) or not isinstance(edge_order, Iterable):
            raise TypeError(f"'edge_order' must be one number per edge (got {type(edge_order).__name__})")
        edge_order = [v[0] if isinstance(v, (list, tuple)) and len(v) == 1 else v  # (a [m, 1] column)
                      for v in edge_order]
        odd = next((v for v in edge_order if not isinstance(v, numbers.Real) or isinstance(v, bool)), None)
        if odd is not None:
            raise TypeError(f"'edge_order' must be a real-valued sort key, one number per edge (got {odd!r})")
    n = len(labels)
    labels = _plain_labels(labels, "labels")
    for name, per_edge in (("edge_labels", edge_labels), ("edge_order", edge_order)):
        if per_edge is not None and len(per_edge) != len(pairs):
            raise ValueError(f"'{name}' must have one entry per edge ({len(pairs)}; got {len(per_edge)})")
    if edge_labels is not None:  # (as the node labels: a tensor's entries would be symbols by identity)
        edge_labels = _plain_labels(edge_labels, "edge_labels")
    if edge_order is not None and any(isinstance(v, float) and math.isnan(v) for v in list(edge_order)):
        raise ValueError("'edge_order' holds NaN")
    ends = [v for pair in pairs for v in pair]
    odd = next((v for v in ends if not isinstance(v, int) or isinstance(v, bool)), None)
    if odd is not None:  # (a float 1.0 is no node index either: the fast code refuses float edge_index)
        raise TypeError(f"'edge_index' must hold integer node indices (got {odd!r} of type "
                        f"{type(odd).__name__})")
    if ends and not all(0 <= v < n for v in ends):
        raise ValueError(f"'edge_index' must hold node indices in [0, {n}) (one entry of 'labels' per "
                         f"node; got {n} labels and node indices from {min(ends)} to {max(ends)})")
    if flow == "source_to_target":
        centers = [b for a, b in pairs]
        others = [a for a, b in pairs]
    else:
        centers = [a for a, b in pairs]
        others = [b for a, b in pairs]
    edge_ids = list(range(len(pairs)))
    if order in ("edge", "reverse") and edge_order is not None:
        edge_ids.sort(key=lambda e: edge_order[e])  # (real numbers: checked above)
    if order == "reverse":
        edge_ids.reverse()
    elif order == "consistent":
        if edge_order is None:
            raise ValueError("order='consistent' needs 'edge_order'")
        hashed = consistent_key(torch.from_numpy(np.asarray(list(edge_order))), seed).tolist()  # (float64)
        edge_ids.sort(key=lambda e: hashed[e])
    elif order == "random":
        ei = torch.tensor(pairs, dtype=torch.long).t().reshape(2, -1)
        hood = ordered_neighborhoods(ei, n, flow, "random", node_label=_label_codes(labels), seed=seed)
        edge_ids = hood.perm.tolist()
    neighbors: List[List[int]] = [[] for _ in range(n)]
    via: List[List[int]] = [[] for _ in range(n)]
    if relabel:
        for e in edge_ids:
            neighbors[centers[e]].append(others[e])
        for _ in range(int(relabel)):
            labels = _relabel(labels, neighbors)
        neighbors = [[] for _ in range(n)]
    if order in ("label", "degree"):  # by key, then edge label, then WL colours (the numbering plays no part)
        deg = Counter(centers)
        colours = _colours(labels, centers, others, edge_labels, tie_rounds(order, hops))
        edge_ids.sort(key=lambda e: (_label_key(labels[others[e]]) if order == "label" else deg[others[e]],
                                     () if edge_labels is None else _label_key(edge_labels[e]),
                                     colours[others[e]]))
    for e in edge_ids:  # stable: each neighborhood keeps the sorted order
        neighbors[centers[e]].append(others[e])
        via[centers[e]].append(e)

    def piece(v: int, j: int, prev: List[Tuple]) -> Tuple:
        u, e = neighbors[v][j], via[v][j]
        lead = () if edge_labels is None else (("edge", edge_labels[e]),)
        return lead + prev[u]

    prev: List[Tuple[Hashable, ...]] = [(lab,) for lab in labels]
    levels: List[List[Tuple[Hashable, ...]]] = [[p] for p in prev]
    for _ in range(hops):
        cur: List[Tuple[Hashable, ...]] = []
        for v in range(n):
            s: Tuple[Hashable, ...] = (labels[v],) if traversal == "wl" and own_label else ()
            for j in range(len(neighbors[v])):
                s = s + piece(v, j, prev)
            cur.append(s)
        prev = cur
        for v in range(n):
            levels[v].append(cur[v])
    if traversal == "wl":
        return [lv[-1] for lv in levels]
    return [lv if own_label else lv[1:] for lv in levels]


def _colours(labels: List[Hashable], centers: List[int], others: List[int],
             edge_labels: Optional[List[Hashable]], rounds: int) -> List[Tuple[Any, ...]]:
    r"""Per node, its WL colours :math:`(c^1, \ldots, c^R)`.

    They order the ties of :obj:`order="label"` / :obj:`"degree"` (:func:`kong_pyg.ordering.colour_ranks`).

    With integer labels (and edge labels) these are the fast code's fingerprints, node by node
    (their order decides which neighbor comes first); other labels get exact colours (nested
    tuples, compared by :func:`repr`), which the fast code, taking integers only, never sees.
    """
    n = len(labels)
    coded = all(isinstance(v, (int, _WLLabel)) for v in labels) and (
        edge_labels is None or all(isinstance(v, int) for v in edge_labels))
    c: List[Any] = [2 * _label_key(v) for v in labels] if coded else list(labels)  # (node_code)
    incoming: List[List[int]] = [[] for _ in range(n)]
    for e, v in enumerate(centers):
        incoming[v].append(e)
    out: List[List[Any]] = [[] for _ in range(n)]
    for _ in range(rounds):
        new = []
        for v in range(n):
            items = [c[others[e]] if edge_labels is None else (edge_labels[e], c[others[e]])
                     for e in incoming[v]]
            new.append(_fingerprint(c[v], items, edge_labels is not None) if coded
                       else (c[v], tuple(sorted(items, key=repr))))
        c = new
        for v in range(n):
            out[v].append(c[v] if coded else repr(c[v]))
    return [tuple(o) for o in out]


def _fingerprint(head: int, items: List[Any], with_edges: bool) -> int:
    """The fast code's WL label or colour of one node (:func:`kong_pyg.ordering.wl_relabel`).

    The fingerprint of its own code followed by its neighbors' codes (with edges: (edge label, colour)
    pairs) in increasing order.
    """
    from .hashing import row_fingerprint, sequence_fingerprint

    if with_edges:  # ((edge label, colour) pairs: edge symbols are 2 e + 1)
        items = [int(row_fingerprint(torch.tensor([[2 * e + 1, c]]))[0]) for e, c in items]
    items = sorted(items)
    m = len(items)
    fingerprint = sequence_fingerprint(torch.tensor([head]), torch.tensor(items, dtype=torch.long),
                                       torch.zeros(m, dtype=torch.long), torch.arange(1, m + 1),
                                       torch.tensor([m]))
    return int(fingerprint[0])


def _plain_labels(values: Any, name: str) -> List[Hashable]:
    """Node or edge labels (argument :obj:`name`) as the fast code reads them, one symbol per entry.

    A whole :obj:`[N, C]` matrix (one-hot or multi-hot rows, an :obj:`[N, 1]` column; NumPy or
    torch) is read by the fast code's own reading; every entry then by :func:`_plain_label`.
    """
    if isinstance(values, np.ndarray) and values.ndim == 2 and values.dtype.kind in "biuf":
        # (a copy in native byte order where needed: PyTorch takes no negative strides, no big-endian bytes)
        values = torch.from_numpy(np.ascontiguousarray(native_order(values)))
    if isinstance(values, Tensor) and values.dim() == 2:
        from .inputs import labels as label_codes  # the fast code's reading of them

        values = label_codes(values, name, values.size(0)).tolist()
    return [_plain_label(v, i, name) for i, v in enumerate(values)]


def _plain_label(v: Any, index: int, name: str = "labels") -> Hashable:
    """An integer label of any kind (NumPy, a 0-d integer tensor, a boolean) as a Python ``int``.

    Equal labels must be equal symbols (tensors hash by identity) and sort as the fast code's
    integers do; other labels (strings, tuples) are kept. A tensor or array of several values is
    no label (entry :obj:`index` of argument :obj:`name`, in the error): a whole one-hot matrix is
    read as the fast code reads it (:func:`_plain_labels`).
    """
    what = "node" if name == "labels" else "edge"
    if isinstance(v, (Tensor, np.ndarray)):
        if v.ndim != 0:
            raise TypeError(f"'{name}' entry {index} is a {type(v).__name__} of shape {list(v.shape)}, not "
                            f"one label: give one label per {what} ([num_{what}s] or [num_{what}s, C] "
                            "one-hot rows as a whole tensor, or a list of scalars)")
        v = v.item()
    if isinstance(v, (numbers.Integral, np.bool_)):
        return int(v)
    if not isinstance(v, Hashable):
        raise TypeError(f"'{name}' entry {index} is a {type(v).__name__}, which is no symbol (not hashable)")
    return v


def _label_codes(labels: List[Hashable]) -> Optional[Tensor]:
    """The fast code's symbol codes (:func:`~kong_pyg.hashing.node_code`) of integer labels, else None.

    The labels are :func:`_plain_label` ones: other labels (strings, tuples) have no code in the fast
    code, and the shuffle then reads none.
    """
    if not all(isinstance(v, int) for v in labels):
        return None
    return node_code(torch.tensor(labels, dtype=torch.long))


def _label_key(label: Hashable):
    """Sort key of a label, matching the fast code's order for integers and for WL labels."""
    if isinstance(label, _WLLabel):
        return _wl_code(label)
    return label if isinstance(label, int) else repr(label)


@lru_cache(maxsize=1 << 16)  # (bounded: every WL label of every call stayed alive, for the process's life)
def _wl_code(label: Hashable) -> int:
    """The fast code's integer for a label (its neighbor order for :obj:`order="label"`).

    An integer stands for itself; a WL label is the 58-bit fingerprint of its
    own code followed by its neighbors' codes in increasing order
    (:func:`kong_pyg.ordering.wl_relabel`).
    """
    if not isinstance(label, _WLLabel):
        if not isinstance(label, int):
            raise TypeError(f"order='label' after relabelling needs integer labels (got {label!r})")
        return label
    head, nbs = label
    return _fingerprint(_wl_code(head), [_wl_code(u) for u in nbs], with_edges=False)


def _check_readable(name: str, value: Any) -> None:
    """Refuse a tensor argument whose values cannot be read: nested, or on the meta device."""
    if isinstance(value, Tensor):
        if value.is_nested:
            raise TypeError(not_dense(name, value))
        if value.is_meta:
            raise on_meta(f"'{name}'")


def kgram_counts(string: NodeString, k: int, blended: bool = False) -> Counter:
    r"""Count the k-grams of a node's string (BFS levels kept apart).

    Keys are :obj:`(block, gram)` with :obj:`block` the index of the level
    in :obj:`string` (BFS: the level, one less where :func:`kong_strings`
    dropped level 0, :obj:`own_label=False`) or :obj:`0` (WL).

    Args:
        string: A node's string as :func:`kong_strings` gives it.
        k (int): The gram length.
        blended (bool, optional): Count the grams of every length
            :math:`1, \ldots, k` (the option :obj:`blended`), under the same
            block keys, instead of length :math:`k` alone. (default: :obj:`False`)
    """
    check_int("k", k, 1)
    check_bool("blended", blended)
    if isinstance(string, (str, bytes)) or not isinstance(string, (tuple, list)):
        raise TypeError("'string' must be a node's string as kong_strings gives it: a tuple of labels (WL) "
                        f"or a list of such tuples, one per BFS level (got {type(string).__name__})")
    levels = [string] if isinstance(string, tuple) else list(string)
    others = sorted({type(level).__name__ for level in levels if not isinstance(level, tuple)})
    if others:
        raise TypeError(f"'string' as a list must hold one tuple of labels per BFS level (got {others})")
    lengths = range(1, k + 1) if blended else (k,)
    out: Counter = Counter()
    for block, s in enumerate(levels):
        for n in lengths:
            for i in range(len(s) - n + 1):
                out[(block, tuple(s[i : i + n]))] += 1
    return out


def base_kernel(
    a: Counter, b: Counter, kernel: str = "poly", degree: int = 1, const: float = 0.0
) -> float:
    r"""The base kernel :math:`\kappa` of two count vectors (:mod:`kong_pyg.kernels`)."""
    dot = float(sum(v * b[key] for key, v in a.items() if key in b))
    if kernel == "poly":
        return (dot + const) ** degree
    na = math.sqrt(sum(v * v for v in a.values()))
    nb = math.sqrt(sum(v * v for v in b.values()))
    if na == 0 or nb == 0:
        return 0.0
    return (dot / (na * nb)) ** degree


def brute_force_kernel(
    graphs: Sequence[List[NodeString]],
    k: int,
    kernel: str = "poly",
    degree: int = 1,
    const: float = 0.0,
    blended: bool = False,
    normalize: bool = False,
) -> List[List[float]]:
    r"""The KONG graph kernel matrix from explicit strings.

    :math:`K(G, H) = \sum_{v \in G} \sum_{w \in H} \kappa(c_v, c_w)`, with
    :math:`c_v` the k-gram counts of node :math:`v`'s string; with
    :obj:`normalize`, :math:`K(G, H) / \sqrt{K(G, G) K(H, H)}`.

    Args:
        graphs (sequence): Per graph, the output of :func:`kong_strings`.
        k (int): The k-gram length.
        kernel (str, optional): :obj:`"poly"` or :obj:`"cosine"`.
        degree (int, optional): The degree :math:`p`.
        const (float, optional): The polynomial constant.
        blended (bool, optional): Count all lengths :math:`1..k`.
        normalize (bool, optional): Normalize the graph kernel.
    """
    KongConfig(k=k, kernel=kernel, degree=degree, const=const, blended=blended, normalize=normalize)
    if isinstance(graphs, (str, bytes)) or not isinstance(graphs, Iterable):
        raise TypeError(f"'graphs' must be a sequence of kong_strings() outputs (got "
                        f"{type(graphs).__name__})")
    graphs = list(graphs)
    odd = next((i for i, g in enumerate(graphs) if not isinstance(g, list)), None)
    if odd is not None:
        raise TypeError(f"'graphs' entry {odd} must be a kong_strings() output, a list of node strings (got "
                        f"{type(graphs[odd]).__name__})")
    counts = [[kgram_counts(s, k, blended) for s in g] for g in graphs]
    out = [
        [sum(base_kernel(a, b, kernel, degree, const) for a in ga for b in gb) for gb in counts]
        for ga in counts
    ]
    if normalize:
        d = [math.sqrt(out[i][i]) for i in range(len(out))]
        out = [
            [out[i][j] / (d[i] * d[j]) if d[i] and d[j] else 0.0 for j in range(len(out))]
            for i in range(len(out))
        ]
    return out
