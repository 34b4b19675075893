r"""An interaction log, checked: its columns as tensors, and its time order.

Part of :mod:`kong_pyg.datasets.interactions` (which re-exports every name
here): :func:`check_log` turns the columns of a log (user, item, time,
rating, an optional tie key) into checked tensors, :func:`time_order` sorts
it by time (ties: the tie key, then row order).
"""
import datetime
import math
import numbers
from typing import Any, Dict, Iterable, NamedTuple, Optional

import numpy as np
import torch
from torch import Tensor

from ..inputs import native_order, on_meta, top_beyond_int64
from ..warn import warn


class InteractionLog(NamedTuple):
    """A checked interaction log (all :obj:`[E]`, in the log's row order)."""

    user: Tensor
    item: Tensor
    time: Tensor
    rating: Optional[Tensor]
    tie_key: Optional[Tensor] = None


def _column(t: Any, name: str) -> Tensor:
    """A column of the log as a tensor (a clear error for what is not numbers).

    Sequences go through NumPy, so Python floats stay ``float64`` (:func:`torch.as_tensor` would
    make them ``float32``, where Unix timestamps in seconds tie within about two minutes).
    """
    if isinstance(t, Tensor) and t.is_meta:
        raise on_meta(f"'{name}'")
    if t is None or isinstance(t, (numbers.Number, str, bytes, dict)):
        raise TypeError(f"'{name}' must be a 1-D tensor or sequence of numbers (got {type(t).__name__})")
    if isinstance(t, Tensor):
        out = t
    else:
        bad = (TypeError, ValueError, RuntimeError, OverflowError)
        try:
            arr = np.asarray(t)
        except bad:
            raise TypeError(_not_numbers(t, name)) from None
        arr = _integers_kept(arr, t, name)  # (outside the try: its ValueError is its own)
        try:
            out = torch.as_tensor(native_order(arr))
        except bad:
            raise TypeError(_not_numbers(t, name)) from None
    if out.dtype != torch.bool and isinstance(t, (list, tuple)) and any(
            isinstance(v, (bool, np.bool_)) for v in t):
        raise TypeError(f"'{name}' mixes bools with numbers (a bool would be read as 0 or 1); pass numbers "
                        "only")
    if out.is_floating_point() and isinstance(t, (list, tuple)) and any(
            isinstance(v, numbers.Integral) and not isinstance(v, bool) and abs(int(v)) > 2**53 for v in t):
        raise ValueError(f"'{name}' mixes integers beyond 2^53 with floats: in float64 (one dtype for the "
                         "column) some would round and tie; pass integers only, or floats only")
    return out


def _integers_kept(arr: np.ndarray, t: Any, name: str) -> np.ndarray:
    """:obj:`arr`, or a ``uint64`` array where NumPy made a list of Python integers beyond ``int64`` floats.

    Raises:
        ValueError: Integers beyond ``int64`` beside negative ones (no integer dtype holds both).
    """
    if arr.dtype.kind != "f" or not isinstance(t, (list, tuple)) or not t or not all(
            isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)) for v in t):
        return arr
    try:
        return np.asarray(t, dtype=np.uint64)
    except OverflowError:
        raise ValueError(f"'{name}' holds integers beyond int64 and negative ones: no integer dtype holds "
                         "both (float64 would round and tie some); shift the values into one range") from None


def _not_numbers(t: Any, name: str) -> str:
    """Why a column is not numbers: dates and durations are named, with their conversion."""
    values: Any = ()
    try:  # (any array-like: a list, a deque, an object with __array__ such as a pandas column)
        listed = t if hasattr(t, "__array__") or not isinstance(t, Iterable) else list(t)
        values = np.asarray(listed).reshape(-1)
    except (TypeError, ValueError, OverflowError):
        pass
    kinds = {getattr(values, "dtype", np.dtype(object)).kind}
    if kinds == {"O"}:
        kinds = {"m" if isinstance(v, (datetime.timedelta, np.timedelta64)) else
                 "M" if isinstance(v, (datetime.date, np.datetime64)) else "" for v in values}
    if "M" in kinds:
        return (f"'{name}' holds dates; pass numbers, e.g. seconds: "
                "numpy.asarray(values, dtype='datetime64[s]').astype('int64')")
    if "m" in kinds:
        return (f"'{name}' holds durations; pass numbers, e.g. seconds: "
                "numpy.asarray(values, dtype='timedelta64[s]').astype('int64')")
    return (f"'{name}' must be a 1-D tensor or sequence of numbers (got {type(t).__name__} holding other "
            "values)" + (_CODES.format(name=name) if name in ("user", "item") else ""))


#: How to turn ids of any kind (strings, sparse numbers) into the 0-based codes the label tables index.
_CODES = ("; ids are 0-based integer codes that index the label tables: "
          "codes = numpy.unique({name}_ids, return_inverse=True)[1] numbers them")


def long_vector(t: Any, name: str) -> Tensor:
    """A 1-D column of non-negative integers as ``int64`` (an empty column too)."""
    t = _column(t, name)
    if t.dim() != 1:
        raise ValueError(f"'{name}' must be a 1-D tensor (got shape {list(t.shape)})")
    if t.numel() and (t.is_floating_point() or t.is_complex() or t.dtype == torch.bool):
        raise TypeError(f"'{name}' must hold integers (got {t.dtype})")
    top = top_beyond_int64(t)
    if top is not None:
        raise ValueError(f"'{name}' holds values >= 2^63 ({top})")
    t = t.long()
    if t.numel() and int(t.min()) < 0:
        raise ValueError(f"'{name}' holds negative values ({int(t.min())})")
    return t


def check_log(user, item, time, rating, num_users: int, num_items: int, tie_key=None) -> InteractionLog:
    """Check an interaction log against the sizes of the attribute tables."""
    user = long_vector(user, "user")
    item = long_vector(item, "item")
    time = _column(time, "time")
    if time.dim() != 1:
        raise ValueError(f"'time' must be a 1-D tensor (got shape {list(time.shape)})")
    if time.is_complex() or time.dtype == torch.bool:
        raise TypeError(f"'time' must be a real-valued tensor (got {time.dtype})")
    if time.is_floating_point() and bool(torch.isnan(time).any()):
        raise ValueError("'time' holds NaN values")
    exact = {torch.float16: 2 ** 11, torch.bfloat16: 2 ** 8, torch.float32: 2 ** 24}.get(time.dtype)
    if exact is not None and time.numel() > 1:  # (integers beyond exact are rounded)
        top = float(time.abs().max())
        if top > exact and torch.unique(time).numel() < time.numel():
            spacing = 2.0 ** math.floor(math.log2(top)) * 2 / exact  # (between neighboring values up there)
            warn(f"'time' is {time.dtype} and reaches {top:.3g}, where its values are {spacing:g} apart: "
                 "events closer in time than that may have got one time, and the tie rule orders them; "
                 "pass float64 or integer times (e.g. seconds as int64)")
    e = user.numel()
    for name, t in (("item", item), ("time", time)):
        if t.numel() != e:
            raise ValueError(f"'{name}' has {t.numel()} entries, 'user' has {e}")
    if rating is not None:
        rating = _column(rating, "rating")
        if rating.dim() != 1 or rating.numel() != e:
            raise ValueError(f"'rating' must be a 1-D tensor with {e} entries "
                             f"(got shape {list(rating.shape)})")
    if tie_key is not None:
        tie_key = _column(tie_key, "tie_key")
        if tie_key.dim() != 1 or tie_key.numel() != e:
            raise ValueError(f"'tie_key' must be a 1-D tensor with {e} entries "
                             f"(got shape {list(tie_key.shape)})")
        if tie_key.is_complex() or tie_key.dtype == torch.bool:
            raise TypeError(f"'tie_key' must be a real-valued tensor (got {tie_key.dtype})")
        if tie_key.is_floating_point() and bool(torch.isnan(tie_key).any()):
            raise ValueError("'tie_key' holds NaN values")
    for name, ids, rows in (("user", user, num_users), ("item", item, num_items)):
        top = int(ids.max()) if e else -1
        if top >= rows:
            raise ValueError(f"'{name}' holds id {top}, but '{name}_label' has only {rows} rows"
                             + _CODES.format(name=name))
    return InteractionLog(user, item, time, rating, tie_key)


#: Rows that repeat an id, at least, before a label table as long as the log is called a column of it.
REPEATED_ROWS = 8


def warn_if_log_column(name: str, ids: Tensor, table: Tensor, column: Optional[str] = None) -> None:
    """Warn where a label table (one label per id) looks like a column of the log (one per interaction).

    It does where it is as long as the log, longer than the ids need, not constant, and, read row by
    row beside :obj:`ids`, gives every id one label (as a column of a table of interactions does; a
    table of one label per id read that way would not, unless by chance: so only where at least
    :data:`REPEATED_ROWS` rows repeat an id, each a chance for the two readings to differ).
    """
    e = ids.numel()
    top = int(ids.max()) if e else -1
    if table.numel() != e or e <= top + 1 or bool((table == table[0]).all()) \
            or e - torch.unique(ids).numel() < REPEATED_ROWS:
        return
    first = torch.full((top + 1,), -1, dtype=table.dtype)
    first[ids] = table  # (one of each id's values: all of them where every id has one label)
    if bool((first[ids] == table).all()):
        warn(f"'{name}_label' is as long as the log ({e:,} interactions), longer than the {top + 1:,} {name} "
             f"ids need, and read row by row it gives every {name} one label: it looks like a column of "
             f"the log. It is read as a table of one label per {name} id (entry i is the label of {name} "
             f"i); if it is a column, take one value per id, e.g. table = numpy.zeros({top + 1}, int); "
             f"table[numpy.asarray({column or name})] = numpy.asarray(column)")


def temporal_log(data: Any, user_label: Any = None, item_label: Any = None, y: Any = None) -> Dict[str, Any]:
    r"""The interaction log of a PyG :class:`~torch_geometric.data.TemporalData`.

    Its events ``src -> dst`` at time ``t`` are users and items, returned as
    :class:`~kong_pyg.datasets.InteractionGraphs`' arguments:
    ``InteractionGraphs(**temporal_log(data, y=...))`` builds one ordered ego graph per user, and
    :func:`~kong_pyg.order_test` takes the mapping as it is. Users and items are renumbered
    ``0..n-1`` in the order of their ids (``torch.unique(data.src)``, ``torch.unique(data.dst)``:
    PyG's JODIE data sets, say, number items after the users); :obj:`msg` is not used. The
    graphs' :obj:`user_id` and :obj:`n_id` are these numbers: ``torch.unique(data.src)[g.user_id]``
    is graph :obj:`g`'s user as :obj:`data.src` names it.

    Args:
        data (TemporalData): The events (integer :obj:`src`, :obj:`dst`; real :obj:`t`).
        user_label (array-like, optional): A label per user, indexed by the
            user's id in :obj:`src`. (default: one label for every user)
        item_label (array-like, optional): A label per item, indexed by the
            item's id in :obj:`dst`. (default: the item's id in :obj:`dst`:
            every item its own label, the same in every call, e.g. for a
            training and a test period; with one label for every item the
            strings could not show any order)
        y (array-like, optional): A class per user, indexed by its id in
            :obj:`src` (for per-event labels such as JODIE's, reduce them
            first, e.g. ``torch.zeros(int(data.src.max()) + 1, dtype=torch.long)
            .scatter_reduce(0, data.src, data.y.long(), "amax")``: ever
            labelled 1). (default: :obj:`None`)

    Returns:
        dict: :obj:`user`, :obj:`item`, :obj:`time`, :obj:`user_label`,
        :obj:`item_label` and :obj:`y` (:obj:`None` if not given).
    """
    events = [getattr(data, n, None) for n in ("src", "dst", "t")]
    if any(e is None for e in events):
        raise TypeError("'data' must be a TemporalData with 'src', 'dst' and 't' "
                        f"(got {type(data).__name__})")
    src, dst = long_vector(events[0], "data.src"), long_vector(events[1], "data.dst")
    if src.numel() == 0:
        raise ValueError("'data' holds no events")
    users, user = torch.unique(src, return_inverse=True)
    items, item = torch.unique(dst, return_inverse=True)

    def per_id(values: Any, name: str, ids: Tensor, side: str, of_event: Tensor) -> Tensor:
        """:obj:`values` (one per id of :obj:`side`, indexed by it) of the ids in :obj:`ids`, in order."""
        t = long_vector(values, name)
        if t.numel() <= int(ids[-1]):
            raise ValueError(f"'{name}' has {t.numel()} entries, but 'data.{side}' holds id {int(ids[-1])} "
                             f"(one entry per {side} id, indexed by it)")
        if name == "y" and t.numel() == src.numel() > int(ids[-1]) + 1:  # (TemporalData's y: one per event)
            warn(f"'y' has one entry per event ({src.numel():,}): it is read as one class per user id "
                 "(entry i is the class of user i); for per-event labels such as TemporalData's y, reduce "
                 "them per user first, e.g. torch.zeros(int(data.src.max()) + 1, dtype=torch.long)"
                 ".scatter_reduce(0, data.src, data.y.long(), 'amax')")
        elif name != "y":
            warn_if_log_column(name[:-len("_label")], of_event, t, f"data.{side}")
        return t[ids]

    return {"user": user, "item": item, "time": events[2],
            "user_label": torch.zeros(users.numel(), dtype=torch.long) if user_label is None else
            per_id(user_label, "user_label", users, "src", src),
            "item_label": items.clone() if item_label is None else
            per_id(item_label, "item_label", items, "dst", dst),
            "y": None if y is None else per_id(y, "y", users, "src", src)}


def time_order(time: Tensor, tie_key: Optional[Tensor] = None) -> Tensor:
    """The rows of a log in time order: ties by :obj:`tie_key`, then by row (stable sorts)."""
    if tie_key is None:
        return torch.sort(time, stable=True).indices
    by_tie = torch.sort(tie_key, stable=True).indices
    return by_tie[torch.sort(time[by_tie], stable=True).indices]


def tie_share(time) -> float:
    """The share of consecutive interactions (in time order) that have the same timestamp.

    This is the share of the time order that a tie rule decides: 0.507 for
    the 100,000 ratings of MovieLens-100k (99.5 % of those ties are two
    ratings of the same user in the same second), 0.256 for the 30,062
    ratings of its single-genre movies.
    """
    t = torch.sort(_column(time, "time").view(-1)).values
    if t.numel() < 2:
        return 0.0
    return float((t[1:] == t[:-1]).double().mean())


__all__ = ["InteractionLog", "check_log", "long_vector", "temporal_log", "time_order", "tie_share",
           "warn_if_log_column"]
