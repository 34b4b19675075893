"""The settings of a cross-validation run, in this process or in forked worker processes.

Forked workers inherit the feature entries (callables such as closures need not be picklable) and
send back only results and the warnings they raised, which are raised again here
(:func:`kong_pyg.warn.replay`).
"""
import itertools
import warnings
from typing import Any, Callable, Dict, Iterator, List, Sequence, Tuple, TypeVar

from ..warn import replay, sendable, warn
from .grid import Setting
from .progress import Progress

#: A setting's result (cross_validate's: feature seconds, fit seconds, scores).
Result = TypeVar("Result")

#: What forked worker processes read, per call of :func:`run_settings` (set before its pool forks; nothing
#: is pickled but results). One entry per call: calls from several threads at once each read their own
#: (a single entry was overwritten by another thread's call before the first call's workers forked).
_FORKED: Dict[int, Tuple[Callable[..., Any], Sequence[Any]]] = {}
_CALLS = itertools.count()


def _forked_setting(call: int, index: int) -> Tuple[Any, List[Tuple[Any, ...]]]:
    """One setting in a forked worker, with the warnings it raised (the parent raises them again).

    The worker has the parent's warning filters (forked): what they ignore is not recorded, and an
    ``"error"`` filter stops the setting as it would in the parent.
    """
    with warnings.catch_warnings(record=True) as caught:
        work, features = _FORKED[call]
        out = work(features[index], index)
    return out, [sendable(w) for w in caught]


def run_settings(work: Callable[..., Result], features: Sequence[Any], names: Sequence[Setting],
                 processes: int, bar: Progress, per_setting: int) -> Iterator[Tuple[int, Result]]:
    """:obj:`(index, work(entry, index))` for every setting, here or in :obj:`processes` forked processes.

    Forked workers inherit the entries (callables such as closures need not be picklable); where
    ``fork`` is not available the settings run in this process.
    """
    import multiprocessing

    forks = "fork" in multiprocessing.get_all_start_methods()
    if processes > 1 and len(features) > 1 and not forks:
        warn(f"n_jobs = {processes} runs the settings in forked processes, and this system has no 'fork' "
             "(Windows): they run one after another in this process (the same results)")
    if processes == 1 or len(features) == 1 or not forks:
        for s, entry in enumerate(features):
            bar.status(names[s].name)
            yield s, work(entry, s, progress=bar)
        return
    from concurrent.futures import ProcessPoolExecutor, as_completed

    workers = min(processes, len(features))
    call = next(_CALLS)  # (atomic in CPython: one number per call, whatever the threads)
    try:
        _FORKED[call] = (work, features)
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                                 initializer=_single_thread) as pool:
            futures = {pool.submit(_forked_setting, call, s): s for s in range(len(features))}
            bar.status(f"{len(futures)} settings in {workers} processes")
            try:
                for future in as_completed(futures):
                    bar.update(per_setting)
                    result, caught = future.result()
                    replay(caught)
                    yield futures[future], result
            except BaseException as err:  # (an error, an "error" filter, an interrupt: the settings not begun
                if not isinstance(err, Exception):  # are dropped, not run first; after Ctrl-C or SIGTERM
                    _stop_workers(pool)  # the settings under way are stopped too, not waited for)
                pool.shutdown(wait=True, cancel_futures=True)
                raise
    finally:
        _FORKED.pop(call, None)


def _stop_workers(pool: Any) -> None:
    """End a process pool's workers now (SIGTERM), not after the settings they are working on."""
    stop = getattr(pool, "terminate_workers", None)  # (Python 3.14)
    if stop is not None:
        stop()
        return
    processes = getattr(pool, "_processes", None) or {}
    for process in list(processes.values()):
        process.terminate()


def _single_thread() -> None:
    """Worker processes use one thread each (the processes are the parallelism); SIGTERM ends them at once.

    (A forked worker inherits the command line's Python-level SIGTERM handler, which would wait for the
    C call under way, a factorization say, to return.)
    """
    import signal

    import torch

    signal.signal(signal.SIGTERM, signal.SIG_DFL)

    torch.set_num_threads(1)
