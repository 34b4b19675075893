r"""Train/test splits of the evaluation harness, and the training sets they make.

:func:`make_splits`: stratified :math:`F`-fold cross-validation repeated
over :math:`R` random permutations (Table 1); :func:`random_splits`:
stratified random train/test splits (Table 2, the order test). Both add the
inner splits of the nested protocol. :func:`plan_jobs` lists every training
set (each outer split, then its inner splits) for the solver.
"""
import math
from typing import Any, List, NamedTuple, Optional, Tuple

import numpy as np

from ..config import check_int

#: A train/test index pair.
Split = Tuple[np.ndarray, np.ndarray]


class Splits(NamedTuple):
    """Train/test index pairs: :obj:`outer[r][f]`, :obj:`inner[r][f][i]`."""

    outer: List[List[Split]]
    inner: Optional[List[List[List[Split]]]]


def check_given_splits(splits: Any, nested: bool) -> None:
    """Refuse splits that :func:`~kong_pyg.evaluation.cv.cross_validate` cannot use.

    A :class:`Splits`, as many outer folds in every repeat, and where :obj:`nested`, inner splits
    for every outer fold of the nested repeats.
    """
    if not isinstance(splits, Splits):
        raise TypeError("'splits' must be a Splits (make_splits or random_splits), "
                        f"got {type(splits).__name__}")
    sizes = sorted({len(r) for r in splits.outer})
    if len(sizes) > 1:
        raise ValueError(f"'splits' must have as many outer folds in every repeat (got {sizes})")
    if nested and splits.inner is None:
        raise ValueError("nested=True needs 'splits' with inner splits")
    inner = splits.inner if nested and splits.inner is not None else []
    if len(inner) > len(splits.outer):
        raise ValueError(f"'splits' has inner splits for {len(inner)} repeats but {len(splits.outer)} "
                         "outer ones")
    for r, rep in enumerate(inner):
        if len(rep) != len(splits.outer[r]):
            raise ValueError(f"'splits': repeat {r} has {len(rep)} lists of inner splits for "
                             f"{len(splits.outer[r])} outer folds (one per outer fold)")
        empty = next((f for f, folds in enumerate(rep) if not len(folds)), None)
        if empty is not None:
            raise ValueError(f"'splits': outer fold {empty} of repeat {r} has no inner splits, which the "
                             "nested protocol needs to choose")


def class_labels(y: Any) -> np.ndarray:
    """:obj:`y` as a 1-D array of class labels, or a :class:`ValueError` naming what is wrong.

    Integers, strings and booleans are labels, and so are floats with integer values (below
    :math:`2^{53}`); an :obj:`[n, 1]` column is flattened. NaN, other floats, complex numbers,
    mixed types and other shapes are refused.
    """
    # (NumPy would make a mixed list all strings, 1 and '1' one class, or all numbers, True and 1 one class)
    for kind, name in ((str, "strings"), ((bool, np.bool_), "booleans")):
        if isinstance(y, (list, tuple)) and any(isinstance(v, kind) for v in y) and \
                not all(isinstance(v, kind) for v in y):
            raise ValueError("'y' must be class labels of one kind (integers, strings or booleans), "
                             f"got {name} mixed with other values")
    if type(y).__module__.startswith("torch") and hasattr(y, "detach"):  # (also one that requires grad)
        from ..outputs import numpy_of

        y = numpy_of(y, "'y'")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.reshape(-1)
    if y.ndim != 1:
        raise ValueError(f"'y' must be one class label per graph, a 1-D array (got shape {y.shape})")
    values = y
    if y.dtype.kind == "O":
        items = y.tolist()
        values = np.asarray(items)
        if values.dtype.kind in "US" and not all(isinstance(v, str) for v in items):
            raise ValueError("'y' must be class labels of one kind (integers, strings or booleans), "
                             "got strings mixed with other values")
    nan = np.flatnonzero(np.isnan(values)) if values.dtype.kind == "f" else np.zeros(0, dtype=np.int64)
    if nan.size:
        raise ValueError(f"'y' contains NaN (label {int(nan[0])}); it must be one class label per graph")
    at = ""
    continuous = values.dtype.kind == "c"
    if values.dtype.kind == "f":
        whole = np.isfinite(values) & (values == np.round(values))
        continuous = not bool(whole.all())
        if continuous:
            first = int(np.flatnonzero(~whole)[0])
            at = f" (label {first} is {float(values[first])!r})"
    if continuous:
        raise ValueError(f"'y' must be class labels (integers, strings or booleans), not continuous "
                         f"values{at}; supported target types are: ('binary', 'multiclass')")
    huge = np.flatnonzero(np.abs(values) >= 2.0**53) if values.dtype.kind == "f" else nan[:0]
    if huge.size:
        raise ValueError(f"'y' holds floating-point labels of 2^53 or more (label {int(huge[0])} is "
                         f"{float(values[huge[0]])!r}), beyond which floats skip integers: give the labels "
                         "as integers")
    if values.size and values.dtype.kind not in "biufUS":
        raise ValueError(f"'y' must be class labels of one kind (integers, strings or booleans), "
                         f"got {values.dtype} values")
    return values


def _check_class_sizes(y: np.ndarray, folds: Optional[int], inner_folds: Optional[int]) -> None:
    """Two classes or more, each large enough for :obj:`folds` folds (None: random splits, 2 graphs)."""
    _, counts = np.unique(y, return_counts=True)
    if counts.size < 2:
        raise ValueError("the graphs have a single class; classification needs at least two")
    smallest = int(counts.min())
    if folds is None and smallest < 2:
        raise ValueError(f"the smallest class has {smallest} graph; a stratified split needs 2 or more of "
                         "every class (one to train on, one to test)")
    if folds is not None and smallest < folds:
        raise ValueError(f"'folds' ({folds}) must be at most the size of the smallest class "
                         f"({smallest} graph{'s' if smallest != 1 else ''}); use fewer folds")
    if folds is not None and inner_folds is not None and smallest * (folds - 1) // folds < inner_folds:
        raise ValueError(
            f"'inner_folds' ({inner_folds}) is too many for the smallest class "
            f"({smallest} graphs, about {smallest * (folds - 1) // folds} per "
            "outer training part); use fewer inner folds"
        )


def _check_seed(seed: Any, count: int = 1, what: str = "repeat") -> None:
    """:obj:`seed` to :obj:`seed + count - 1` (one per repeat or split) all seeds NumPy takes."""
    if count > 2**32:  # (not the seed's fault: no seed leaves room for them)
        raise ValueError(f"'{what}s' must be at most 2**32 = 4,294,967,296 (got {count:,}): {what} r uses "
                         "seed + r, a NumPy seed below 2**32")
    if check_int("seed", seed, 0) + count - 1 >= 2**32:
        if count == 1:
            raise ValueError(f"'seed' must be in [0, 2**32) (got {seed})")
        raise ValueError(f"'seed' must be at most 2**32 - {count} = {2**32 - count} here: {what} r uses "
                         f"seed + r, for {count} {what}s (got {seed})")


def stratified_folds(y: Any, folds: int, seed: int) -> List[Split]:
    """The splits of scikit-learn's ``StratifiedKFold(folds, shuffle=True, random_state=seed)``.

    Computed here, by the same rule, so the splits are the same (a test compares them on many
    label vectors), without importing scikit-learn (about 1.5 s per process, as much as the fits
    of a small evaluation): classes are numbered by first appearance; fold :obj:`i` gets, of
    each class, as many graphs as that class has among the labels sorted by that number and
    taken from position :obj:`i` in steps of :obj:`folds`; each class's fold numbers are
    shuffled, class by class, by one :class:`numpy.random.RandomState` seeded with :obj:`seed`,
    and given to its graphs in index order.

    Args:
        y (array-like): :obj:`[n]` class labels (:func:`class_labels`).
        folds (int): :math:`F`, at least 2 and at most :math:`n`.
        seed (int): The seed, in :math:`[0, 2^{32})`.

    Returns:
        list: :math:`F` pairs (training indices, test indices), each sorted.
    """
    y = class_labels(y)
    check_int("folds", folds, 2)
    if folds > y.size:
        raise ValueError(f"'folds' ({folds}) is more than the {y.size} graphs")
    _check_seed(seed)
    return _stratified_folds(y, folds, seed)


def _stratified_folds(y: np.ndarray, folds: int, seed: int) -> List[Split]:
    """:func:`stratified_folds` on labels and arguments already checked."""
    _, first, inverse = np.unique(y, return_index=True, return_inverse=True)
    code = np.argsort(np.argsort(first))[inverse.reshape(-1)]  # classes by first appearance
    sorted_code = np.sort(code)
    per_fold = np.stack([np.bincount(sorted_code[i::folds], minlength=first.size) for i in range(folds)])
    rng = np.random.RandomState(seed)
    fold = np.empty(code.size, dtype=np.int64)
    for c in range(first.size):
        fold_of = np.repeat(np.arange(folds), per_fold[:, c])
        rng.shuffle(fold_of)
        fold[code == c] = fold_of
    index = np.arange(code.size)
    return [(index[fold != f], index[fold == f]) for f in range(folds)]


def _inner(y: np.ndarray, train: np.ndarray, inner_folds: int, seed: int) -> List[Split]:
    return [(train[a], train[b]) for a, b in _stratified_folds(y[train], inner_folds, seed)]


def make_splits(y: np.ndarray, repeats: int, folds: int, inner_folds: Optional[int], seed: int,
                inner_repeats: Optional[int] = None) -> Splits:
    """Repeated stratified k-fold splits: repeat :obj:`r` is :func:`stratified_folds` with :obj:`seed + r`.

    Args:
        y (numpy.ndarray): :obj:`[n]` class labels.
        repeats (int): :math:`R`.
        folds (int): :math:`F`.
        inner_folds (int, optional): :math:`I`; :obj:`None` for no inner splits.
        seed (int): The seed of repeat 0.
        inner_repeats (int, optional): Inner splits for the first
            :obj:`inner_repeats` repeats only. (default: all)

    Returns:
        :class:`Splits`
    """
    y = class_labels(y)
    check_int("folds", folds, 2)
    _check_seed(seed, max(check_int("repeats", repeats, 0), 1))
    _check_class_sizes(y, folds, inner_folds)
    outer: List[List[Split]] = []
    inner: Optional[List[List[List[Split]]]] = [] if inner_folds is not None else None
    for r in range(repeats):
        parts = _stratified_folds(y, folds, seed + r)
        outer.append(parts)
        if inner is not None and inner_folds is not None and r < (
                repeats if inner_repeats is None else inner_repeats):
            inner.append([_inner(y, train, inner_folds, seed + r) for train, _ in parts])
    return Splits(outer, inner)


def check_split_sizes(y: np.ndarray, test_size: Optional[float], train_size: Optional[float] = None) -> None:
    r"""Check that stratified train/test splits of :obj:`y` can hold every class on both sides.

    A :class:`ValueError` names :obj:`test_size` where they cannot (scikit-learn's rule:
    :math:`\lceil t n \rceil` test graphs). Other forms (a :obj:`train_size`, an absolute size) are
    left to scikit-learn's own checks.
    """
    for name, size in (("test_size", test_size), ("train_size", train_size)):
        if isinstance(size, float) and not math.isfinite(size):
            raise ValueError(f"'{name}' must be a fraction in (0, 1) or a number of graphs (got {size})")
    if train_size is not None or not isinstance(test_size, float) or not 0 < test_size < 1:
        return
    n, classes = len(y), int(np.unique(y).size)
    n_test = math.ceil(test_size * n)
    if min(n_test, n - n_test) < classes:
        raise ValueError(f"'test_size' {test_size:g} gives {n_test} test and {n - n_test} training graphs of "
                         f"{n}; a stratified split needs at least one of each of the {classes} classes on "
                         "each side")


def random_splits(y: np.ndarray, n_splits: int, *, test_size: Optional[float] = None,
                  train_size: Optional[float] = None, inner_folds: Optional[int] = None,
                  seed: int = 0) -> Splits:
    """Stratified random train/test splits, each an outer "fold" (:math:`F = 1`).

    Split :obj:`s` is the :obj:`s`-th of
    :class:`~sklearn.model_selection.StratifiedShuffleSplit` with
    :obj:`random_state=seed`; its inner splits are a shuffled
    :class:`~sklearn.model_selection.StratifiedKFold` of its training part
    with :obj:`random_state=seed + s`.

    Args:
        y (numpy.ndarray): :obj:`[n]` class labels.
        n_splits (int): The number of splits.
        test_size (float, optional): The test fraction.
        train_size (float, optional): The training fraction (the rest is
            tested when :obj:`test_size` is not given).
        inner_folds (int, optional): :math:`I` (fewer on a split whose
            training part holds fewer graphs of a class); :obj:`None` for no
            inner splits.
        seed (int, optional): The seed. (default: :obj:`0`)

    Raises:
        ValueError: A split's training part would hold no graph of a class
            (a small class and a small :obj:`train_size`), or too few for
            the inner folds.

    Returns:
        :class:`Splits`
    """
    from sklearn.model_selection import StratifiedShuffleSplit

    y = class_labels(y)
    check_int("n_splits", n_splits, 1)
    _check_seed(seed, n_splits if inner_folds is not None else 1, "split")
    _check_class_sizes(y, None, None)
    check_split_sizes(y, test_size, train_size)
    splitter = StratifiedShuffleSplit(n_splits, test_size=test_size, train_size=train_size, random_state=seed)
    outer = [[(train, test)] for train, test in splitter.split(np.zeros(y.size), y)]
    classes, code = np.unique(y, return_inverse=True)
    given = (("train_size", train_size), ("test_size", test_size))
    sizes = ", ".join(f"{name}={value:g}" for name, value in given if value is not None)
    for s, ((train, _),) in enumerate(outer):  # (scikit-learn's rounding can give a small class none)
        c = _missing_class(code, classes.size, train)
        if c is not None:
            raise ValueError(f"split {s} ({sizes}) trains on no graph of class {classes[c].item()!r} "
                             f"({int((code == c).sum())} of {y.size} graphs); give a larger training part")
    if inner_folds is None:
        return Splits(outer, None)
    check_int("inner_folds", inner_folds, 2)
    inner = []
    for s, ((train, _),) in enumerate(outer):
        smallest = int(np.bincount(code[train], minlength=code.max() + 1).min())
        if smallest < 2:
            raise ValueError(f"split {s} trains on only {smallest} graph(s) of its smallest class; "
                             "inner cross-validation needs 2 or more")
        inner.append([_inner(y, train, min(inner_folds, smallest), seed + s)])
    return Splits(outer, inner)


class Jobs(NamedTuple):
    """Every training set of a set of splits, in solving order.

    Attributes:
        keys (list): :obj:`(r, f, i)` per job (:obj:`i` is :obj:`None` for an outer split).
        train (numpy.ndarray): :obj:`[J, n]` training masks.
        test (list): The test indices of every job.
        parent (numpy.ndarray): :obj:`[J]` the outer job of an inner one, else :obj:`-1`.
    """

    keys: List[Tuple[int, int, Optional[int]]]
    train: np.ndarray
    test: List[np.ndarray]
    parent: np.ndarray


def _missing_class(code: np.ndarray, num_classes: int, train: np.ndarray) -> Optional[int]:
    """The first class (an index into :obj:`code`'s classes) with no graph in :obj:`train`, or None.

    :obj:`train` holds indices or is a mask.
    """
    missing = np.setdiff1d(np.arange(num_classes), code[train])
    return int(missing[0]) if missing.size else None


def plan_jobs(splits: Splits, n: int, y: Optional[np.ndarray] = None) -> Jobs:
    """The jobs of :obj:`splits` on :obj:`n` points: each outer split, then its inner splits.

    With the labels :obj:`y`, every training part must hold every class (the split is named).
    """
    keys: List[Tuple[int, int, Optional[int]]] = []
    trains: List[np.ndarray] = []
    tests: List[np.ndarray] = []
    parent: List[int] = []
    for r, row in enumerate(splits.outer):
        for f, (train, test) in enumerate(row):
            keys.append((r, f, None))
            trains.append(train)
            tests.append(test)
            parent.append(-1)
            top = len(keys) - 1
            if splits.inner is not None and r < len(splits.inner):
                for i, (a, b) in enumerate(splits.inner[r][f]):
                    keys.append((r, f, i))
                    trains.append(a)
                    tests.append(b)
                    parent.append(top)
    if not keys:
        raise ValueError("'splits' holds no split")
    for j, part in enumerate(trains + tests):  # (an index past the data was an IndexError deep inside)
        part, key = np.asarray(part), keys[j % len(keys)]
        if part.dtype.kind == "b":
            if part.shape != (n,):
                raise ValueError(f"'splits' split {key} is a mask of shape {part.shape} for {n} graphs")
        elif part.size and part.dtype.kind not in "iu":
            raise TypeError(f"'splits' split {key} must hold integer indices or a boolean mask (got "
                            f"{part.dtype})")
        elif part.size and (int(part.min()) < 0 or int(part.max()) >= n):
            raise ValueError(f"'splits' split {key} holds indices outside [0, {n}) for {n} graphs (made for "
                             "other data?)")
        if j >= len(keys) and not (part.any() if part.dtype.kind == "b" else part.size):
            raise ValueError(f"'splits' split {key} tests no graph (its accuracy would be NaN)")
    masks = np.zeros((len(keys), n), dtype=bool)
    tested = np.zeros((len(keys), n), dtype=bool)
    for j, (train, test) in enumerate(zip(trains, tests)):
        masks[j, train] = True
        tested[j, test] = True
    parents = np.asarray(parent, dtype=np.int64)
    _no_leak(keys, masks, tested, parents)
    if y is not None:  # (the solver's own check numbers its training sets, which a user cannot map)
        classes, code = np.unique(y, return_inverse=True)
        for key, mask in zip(keys, masks):
            c = _missing_class(code, classes.size, mask)
            if c is not None:
                raise ValueError(f"'splits' split {key} trains on no graph of class {classes[c].item()!r}")
    return Jobs(keys, masks, tests, parents)


def _no_leak(keys: List[Tuple[int, int, Optional[int]]], train: np.ndarray, test: np.ndarray,
             parent: np.ndarray) -> None:
    """Refuse a split that tests on its training graphs, or an inner split that reads its outer split's test.

    (There the outer split's test graphs would take part in choosing C. Graphs in neither outer part,
    a fixed validation set, may be read.)
    """
    both = train & test
    if both.any():
        j, i = (int(v[0]) for v in np.nonzero(both))
        raise ValueError(f"'splits' split {keys[j]} has graph {i} in both its training and its test part")
    inner = np.flatnonzero(parent >= 0)
    leak = (train[inner] | test[inner]) & test[parent[inner]]
    if leak.any():
        j, i = (int(v[0]) for v in np.nonzero(leak))
        raise ValueError(f"'splits' inner split {keys[inner[j]]} reads graph {i}, a test graph of its outer "
                         f"split {keys[parent[inner[j]]]}: the choice of C must not see the test graphs")


def inner_folds_used(splits: Splits, asked: int) -> List[int]:
    """The distinct numbers of inner folds of :obj:`splits`, sorted (:obj:`[asked]` without inner splits).

    :func:`random_splits` gives a split fewer folds than asked where its training part holds
    fewer graphs of its smallest class.
    """
    if not splits.inner:
        return [asked]
    return sorted({len(folds[0]) for folds in splits.inner})


def describe_folds(asked: int, used: List[int]) -> str:
    """The inner folds as used (``"5"``), or as used of those asked (``"3-4 (of 16 asked)"``)."""
    if list(used) == [asked]:
        return str(asked)
    return f"{_span(used)} (of {asked} asked)"


def fewer_folds_note(asked: int, used: List[int]) -> str:
    """The warning where some splits had fewer inner folds than asked."""
    return (f"inner CV: {asked} folds asked, {_span(used)} used (a split's training part holds fewer graphs "
            "of its smallest class)")


def _span(values: List[int]) -> str:
    """Sorted integers as ``"3"`` or ``"3-5"``."""
    return str(values[0]) if values[0] == values[-1] else f"{values[0]}-{values[-1]}"


__all__ = ["Split", "Splits", "Jobs", "class_labels", "stratified_folds", "make_splits", "random_splits",
           "check_split_sizes", "plan_jobs", "inner_folds_used", "describe_folds",
           "fewer_folds_note"]
