r"""Explicit KONG graph features with learned columns: the work behind :class:`~kong_pyg.KongVectorizer`.

:class:`ExactColumns` holds what :class:`~kong_pyg.KongVectorizer` does with
graphs (the batches, the exact map's column vocabularies, the sketched map),
with no scikit-learn in it; :class:`~kong_pyg.KongVectorizer` adds
scikit-learn's estimator API on top. :class:`FeatureMap` is the same work for
one configuration, for code that must not import scikit-learn (importing it
costs about 1.5 s per process, more than the features and fits of a small
evaluation: the evaluation harness uses :class:`FeatureMap`).
"""
from typing import Any, List, Optional

import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor

from . import engine
from .config import KongConfig, check_attr_name, check_bool, check_int, check_usable_device
from .engine import ExactRows
from .exact import ExactMapTooLarge, dense_rank, row_norms
from .graphs import GraphBatch, as_graph_sequence, edges_checked, iter_graph_batches, split_batch
from .kernels import inverse_or_zero
from .kgrams import flat_nonzero
from .memory import check_allocation
from .ordering import key_attribute
from .progress import Progress
from .sketch import HASH_VERSION, SketchHashes, check_scheme
from .traversals import traversal_rule
from .vocab import KeyVocab, TupleVocab

#: The block id of the polynomial kernel's constant coordinate.
CONST_BLOCK = 2**31 - 1

#: What a fit sets (restored as it was when a fit fails).
_FIT_STATE = ("config_", "symbols_", "strings_", "grams_", "multisets_", "column_rank_", "edge_attr_",
              "n_features_out_", "hash_version_")


class ExactColumns:
    r"""The work of :class:`~kong_pyg.KongVectorizer` (see there for the features).

    A subclass provides :meth:`_config` (the :class:`~kong_pyg.KongConfig` a
    fit uses) and the attributes :obj:`edge_order_attr`, :obj:`batch_size`,
    :obj:`device` and :obj:`progress`; :meth:`_run` with :obj:`fit=True`
    sets :obj:`config_`, the column vocabularies and :obj:`n_features_out_`.
    """

    edge_order_attr: Optional[str]
    batch_size: int
    device: Any
    progress: bool
    config_: KongConfig
    n_features_out_: int

    def _config(self) -> KongConfig:
        raise NotImplementedError

    def _feature_names(self) -> np.ndarray:
        """Column names (see :meth:`KongVectorizer.get_feature_names_out`)."""
        cfg = self.config_
        if cfg.dim is not None:
            return np.array([f"kong{i}" for i in range(cfg.dim)], dtype=object)
        names = [self._gram_name(c) for c in range(len(self.grams_))]
        rank = self.__dict__.get("column_rank_")
        if cfg.degree > 1:  # the grams of a multiset in their order as columns
            gram_rank = np.arange(len(names)) if rank is None else self._gram_rank()
            names = ["*".join(names[c] for c in sorted(self.multisets_.row(i), key=gram_rank.__getitem__))
                     for i in range(len(self.multisets_))]
        out = np.empty(len(names), dtype=object)
        out[np.arange(len(names)) if rank is None else rank.numpy()] = names
        return out

    def _canonical_rank(self) -> Tensor:
        r"""Each vocabulary column's place in the order one batch gives them (:obj:`column_rank_`).

        One batch numbers its gram columns by (level block, n-gram length, symbol codes) and its
        :math:`p`-multisets by their sorted gram columns; a fit over several batches appends each
        batch's new columns. Sorting by that content makes the columns (and
        :meth:`get_feature_names_out`) the same whatever :obj:`batch_size` and the graphs' order.
        """
        gram_rank = self._gram_rank()
        if self.config_.degree == 1:
            return torch.from_numpy(gram_rank)
        sets = np.sort(gram_rank[self.multisets_.rows()[0].numpy()], axis=1)
        return torch.from_numpy(_rank_of(np.lexsort(sets.T[::-1])))

    def _gram_rank(self) -> np.ndarray:
        """Each gram column's place by (level block, n-gram length, symbol codes)."""
        paths, _ = self.grams_.rows()
        block, string = paths[:, 0], paths[:, 1].clamp(min=0)  # the constant's string: none (-1)
        syms, length = self.strings_.rows()
        codes = self.symbols_.keys.index_select(0, syms.clamp(min=0).reshape(-1)).view(syms.shape)
        codes = torch.where(syms >= 0, codes, torch.iinfo(torch.long).min)
        const = block == CONST_BLOCK
        if syms.size(0):
            codes = codes.index_select(0, string)
            length = torch.where(const, 0, length.index_select(0, string))
        else:  # the constant alone
            codes, length = codes.new_zeros((block.numel(), 0)), torch.zeros_like(block)
        keys = [c.numpy() for c in codes.t().flip(0)] + [length.numpy(), block.numpy()]
        return _rank_of(np.lexsort(keys))

    def _run(self, graphs: Any, fit: bool, keep: bool) -> Any:
        """:meth:`_compute`; a fit that fails leaves the fitted state as it was (nothing half-built)."""
        check_int("batch_size", self.batch_size, 1)  # also at transform: set_params may have changed them
        check_usable_device("device", self.device)
        check_attr_name("edge_order_attr", self.edge_order_attr)
        check_bool("progress", self.progress)
        if not fit:
            return self._compute(graphs, fit, keep)
        saved = {name: self.__dict__[name] for name in _FIT_STATE if name in self.__dict__}
        try:
            return self._compute(graphs, fit, keep)
        except BaseException:
            for name in _FIT_STATE:
                self.__dict__.pop(name, None)
            self.__dict__.update(saved)
            raise

    def _compute(self, graphs: Any, fit: bool, keep: bool) -> Any:
        if fit:
            self.config_ = self._config()
            self.symbols_ = KeyVocab()
            self.strings_ = TupleVocab()
            self.grams_ = TupleVocab()
            self.multisets_ = TupleVocab()
            self.column_rank_: Optional[Tensor] = None
            # (one pickled before hash_version_: scheme 1, its own; see KongVectorizer.__setstate__)
            self.hash_version_ = check_scheme(getattr(self, "hash_scheme", HASH_VERSION), "'hash_scheme'")
        cfg = self.config_
        graphs = as_graph_sequence(graphs)
        hashes = None
        if cfg.dim is not None:
            with torch.device("cpu"):  # (not the default device, which may be "meta"; then moved)
                hashes = SketchHashes(cfg.dim, cfg.degree, cfg.k, cfg.hops + 1, cfg.seed,
                                      version=getattr(self, "hash_version_", 1))
            hashes = hashes.to(self.device) if self.device is not None else hashes
        bar = Progress(len(graphs), "KONG features", unit="graph", enabled=self.progress)
        parts: List[Any] = []
        dense = None
        if hashes is not None:  # written batch by batch: the peak is the output plus one batch
            rows = len(graphs) if keep else min(len(graphs), self.batch_size)  # (a fit keeps one batch,
            check_allocation(rows * int(cfg.dim or 0) * 8,  # where it is computed)
                             f"the sketched features [{rows:,}, {cfg.dim:,}] ('dim' = {cfg.dim:,}, "
                             "float64)", None if keep else self.device,
                             advice=f"a smaller 'dim' or {'fewer graphs' if keep else repr('batch_size')}")
            dense = np.empty((len(graphs), int(cfg.dim or 0)), dtype=np.float64) if keep else None
        with torch.no_grad():
            key_attr = key_attribute(cfg.order, self.edge_order_attr)
            sparse_flow = cfg.flow if cfg.k == 1 else None  # ('adj_t' where the order cannot matter)
            for gb in iter_graph_batches(graphs, self.batch_size, cfg.edge_labels, key_attr, sparse_flow):
                self._check_edge_attr(gb, fit)
                gb = self._to_device(gb)
                if hashes is not None and hashes.coef.device != gb.x.device:  # (device=None: the graphs' own)
                    hashes = hashes.to(gb.x.device)
                if hashes is None:
                    parts.extend(self._exact_parts(cfg, gb, grow=fit))
                else:
                    self._sketch_parts(cfg, hashes, gb, dense)
                bar.update(gb.num_graphs)
        bar.close()
        if fit:
            self.n_features_out_ = cfg.dim if cfg.dim is not None else (
                len(self.grams_) if cfg.degree == 1 else len(self.multisets_)
            )
            if hashes is None and len(parts) > 1:  # several batches: the columns one batch would give
                self.column_rank_ = self._canonical_rank()
                rank = self.column_rank_.numpy()
                parts = [(val, rank[col], ptr) for val, col, ptr in parts]
        if not keep:
            return None
        if dense is not None:
            return dense
        width = self.n_features_out_
        if width < 2**31 and all(part[0].size < 2**31 for part in parts):
            # scipy keeps 32-bit indices then: cast here, and it need not check every index to do so
            parts = [(val, col.astype(np.int32), ptr.astype(np.int32)) for val, col, ptr in parts]
        mats = [sp.csr_matrix(part, shape=(part[2].size - 1, width)) for part in parts]
        out = mats[0] if len(mats) == 1 else sp.vstack(mats, format="csr")
        out.sort_indices()
        return out

    def _check_edge_attr(self, gb: GraphBatch, fit: bool) -> None:
        """The graphs of a fit and of later transforms all have edge labels (``edge_attr``) or none do.

        (Within a batch the join checks it; a graph without the edge labels that the columns were
        learnt with would otherwise get other k-grams, all unseen: a row of zeros.)
        """
        has = gb.edge_attr is not None
        seen = self.__dict__.get("edge_attr_")
        if not has and gb.edge_index.size(1) == 0:  # graphs without edges have nothing to label
            if fit and gb.start == 0:
                self.edge_attr_ = None  # (decided by the next batch with edges)
            return
        if fit and (gb.start == 0 or seen is None):
            self.edge_attr_ = has
        elif seen is not None and has != seen:
            when = "the other graphs of the fit" if fit else "the graphs of fit()"
            raise ValueError(f"graph {gb.start} has {'an' if has else 'no'} 'edge_attr' (edge labels) but "
                             f"{when} had {'none' if has else 'one'}; give every graph edge labels or none "
                             "(edge_labels=False ignores them)")

    def _to_device(self, gb: GraphBatch) -> GraphBatch:
        if self.device is None:
            return gb

        def move(t: Optional[Tensor]) -> Optional[Tensor]:
            return None if t is None else t.to(self.device)

        return GraphBatch(gb.x.to(self.device), gb.edge_index.to(self.device), move(gb.edge_attr),
                          move(gb.edge_order), gb.batch.to(self.device), gb.start, gb.num_graphs)

    def _sketch_parts(self, cfg: KongConfig, hashes: Any, gb: GraphBatch,
                      dense: Optional[np.ndarray]) -> None:
        """Sketch a batch into its rows of :obj:`dense`; a batch whose work is too large is split in two."""
        prep = engine.prepare(cfg, gb.x, gb.edge_index, gb.edge_attr, gb.edge_order,
                              edges_checked=edges_checked(gb), batch=gb.batch, first_graph=gb.start)
        rows = None if dense is None else dense[gb.start : gb.start + gb.num_graphs]
        try:
            steps = engine.kgram_steps(cfg, prep)
            if rows is not None and gb.x.device.type == "cpu":  # written in place
                engine.graph_sketch(cfg, hashes, prep, steps, gb.batch, gb.num_graphs,
                                    out=torch.from_numpy(rows))
            else:
                out = engine.graph_sketch(cfg, hashes, prep, steps, gb.batch, gb.num_graphs)
                if rows is not None:
                    rows[:] = out.cpu().numpy()
        except ExactMapTooLarge as err:
            if gb.num_graphs < 2:
                raise err.replaced(what=f"{err.what} of graph {gb.start}") from None
            del prep
            for half in split_batch(gb):
                self._sketch_parts(cfg, hashes, half, dense)

    def _exact_parts(self, cfg: KongConfig, gb: GraphBatch, grow: bool) -> List[tuple]:
        """CSR parts of a batch; a batch whose exact map is too large is split in halves."""
        prep = engine.prepare(cfg, gb.x, gb.edge_index, gb.edge_attr, gb.edge_order,
                              edges_checked=edges_checked(gb), batch=gb.batch,
                              first_graph=gb.start)
        try:
            er = engine.exact_graph_map(cfg, prep, engine.kgram_steps(cfg, prep), gb.batch, gb.num_graphs)
        except ExactMapTooLarge as err:
            if gb.num_graphs < 2:
                raise err.replaced(what=f"{err.what} of graph {gb.start}") from None
            first, second = split_batch(gb)
            return self._exact_parts(cfg, first, grow) + self._exact_parts(cfg, second, grow)
        return [self._exact_batch(cfg, er, gb, grow)]

    def _exact_batch(self, cfg: KongConfig, er: ExactRows, gb: GraphBatch, grow: bool) -> tuple:
        rows = er.rows
        scale = None
        if cfg.normalize:  # (row_norms: no square overflows, past values of 1e154)
            scale = inverse_or_zero(row_norms(rows, gb.num_graphs))
        cols = self._global_columns(cfg, er, grow)
        rank = self.__dict__.get("column_rank_")
        if rank is not None and not grow:  # a fit's columns are ranked when it ends
            if rank.numel():
                cols = torch.where(cols >= 0, rank.to(cols.device).index_select(0, cols.clamp(min=0)), -1)
            else:  # (a fit without columns: every k-gram is unseen)
                cols = torch.full_like(cols, -1)
        row, val = rows.row, rows.val if scale is None else rows.val * scale[rows.row]
        if not grow:  # drop columns the fit did not see (a fit numbers them all)
            keep = flat_nonzero(cols >= 0)
            row, val, cols = row.index_select(0, keep), val.index_select(0, keep), cols.index_select(0, keep)
        # CSR parts straight away: entries are sorted by graph already (indptr[g]: entries of graphs < g)
        indptr = torch.searchsorted(row, torch.arange(gb.num_graphs + 1, device=row.device))
        return val.cpu().numpy(), cols.cpu().numpy(), indptr.cpu().numpy()

    def _global_columns(self, cfg: KongConfig, er: ExactRows, grow: bool) -> Tensor:
        """Global column of every entry of :obj:`er.rows` (-1: unseen)."""
        rows = er.rows
        if cfg.degree == 1:
            used, inv = dense_rank(rows.col, (0, er.const_col))  # (columns: grams or the constant)
            return self._gram_columns(er, used, grow).index_select(0, inv)
        assert er.multisets is not None
        used, inv = dense_rank(er.multisets.reshape(-1))
        gram_cols = self._gram_columns(er, used, grow)[inv].view(er.multisets.shape)
        ok = (gram_cols >= 0).all(dim=1)
        sets = torch.sort(gram_cols.clamp(min=0), dim=1).values
        cols = torch.full((sets.size(0),), -1, dtype=torch.long, device=sets.device)
        if bool(ok.any()):
            cols[ok] = self.multisets_.lookup(sets[ok], grow, distinct=True)
        return cols[rows.col]

    def _gram_columns(self, er: ExactRows, local: Tensor, grow: bool) -> Tensor:
        """Global gram columns of local columns (block * G + gram, or const).

        A column is the pair (block, string id) in :obj:`grams_`; a string id
        is the symbol ids of the gram in :obj:`strings_`; a symbol id is the
        code in :obj:`symbols_`. The constant is the pair (CONST_BLOCK, 0).
        """
        g = max(er.grams.num_grams, 1)
        # string id of every distinct gram of the call (tables hold distinct rows, ids base.. in turn)
        parts = []
        for n, base, table in er.grams.tables:
            sym = self.symbols_.lookup(table.reshape(-1), grow).view(table.shape)
            if grow:  # every symbol and string is found (or numbered)
                parts.append(self.strings_.lookup(sym, grow, distinct=True))
                continue
            ok = (sym >= 0).all(dim=1)
            ids = self.strings_.lookup(sym.clamp(min=0), grow, distinct=True)
            parts.append(torch.where(ok, ids, -1))
        if er.grams.num_grams:
            of_gram = torch.cat(parts) if len(parts) > 1 else parts[0]
        else:  # no grams (tables without rows): the constant alone
            of_gram = torch.full((1,), -1, dtype=torch.long, device=local.device)
        is_const = local == er.const_col
        block = torch.where(is_const, CONST_BLOCK, torch.div(local, g, rounding_mode="floor"))
        string = torch.where(is_const, 0, of_gram.index_select(0, local % g))
        if grow:
            return self.grams_.lookup_pairs(block, string, grow, distinct=True)
        found = flat_nonzero(string >= 0)
        out = torch.full_like(local, -1)
        if found.numel():
            out[found] = self.grams_.lookup_pairs(block.index_select(0, found), string.index_select(0, found),
                                                  grow, distinct=True)
        return out

    def _gram_name(self, col: int) -> str:
        path = self.grams_.row(col)
        if path[0] == CONST_BLOCK:
            return "const"
        symbols = []
        for sid in self.strings_.row(path[1]):
            code = int(self.symbols_.keys[sid])
            symbols.append(str(code // 2) if code % 2 == 0 else f"e{code // 2}")
        gram = ",".join(symbols)
        return f"L{path[0]}:{gram}" if traversal_rule(self.config_).all_levels else gram


def _rank_of(order: np.ndarray) -> np.ndarray:
    """The inverse permutation of :obj:`order`: where each item goes."""
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size)
    return rank


class FeatureMap(ExactColumns):
    r"""KONG graph features of one :class:`~kong_pyg.KongConfig`, without scikit-learn.

    The same features as :obj:`KongVectorizer(config=config, ...)` (the
    same code), for callers that must not import scikit-learn.

    Args:
        config (KongConfig): The options.
        edge_order_attr, batch_size, device, progress: As in
            :class:`~kong_pyg.KongVectorizer`.
    """

    def __init__(self, config: KongConfig, edge_order_attr: Optional[str] = "edge_order",
                 batch_size: int = 4096, device: Any = None, progress: bool = False):
        if not isinstance(config, KongConfig):
            raise TypeError(f"'config' must be a KongConfig (got {type(config).__name__})")
        self.config = config
        self.edge_order_attr = edge_order_attr
        self.batch_size = batch_size
        self.device = device
        self.progress = progress

    def _config(self) -> KongConfig:
        return self.config

    def fit_transform(self, graphs: Any) -> Any:
        """Learn the columns (exact map) from :obj:`graphs` and return their features."""
        return self._run(graphs, fit=True, keep=True)

    def transform(self, graphs: Any) -> Any:
        """Features of :obj:`graphs` in the columns of the last :meth:`fit_transform`."""
        if not hasattr(self, "n_features_out_"):
            raise RuntimeError("FeatureMap.transform needs fit_transform first")
        return self._run(graphs, fit=False, keep=True)


__all__ = ["CONST_BLOCK", "ExactColumns", "FeatureMap"]
