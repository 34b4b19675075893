"""How many PyTorch threads the KONG front-ends use: never more than the cores the process is given."""
import os
from contextlib import contextmanager
from typing import Iterator, Optional

from . import memory


def available_cores() -> int:
    """The CPU cores this process is given: its affinity mask, capped by a cgroup CPU quota."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cores = os.cpu_count() or 1
    try:
        with open(f"{memory.CGROUP_DIR}/cpu.max") as f:  # cgroup v2: "quota period" or "max period"
            quota, period = f.read().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, int(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, cores)


#: The most worker processes or threads a command-line tool starts by default.
MAX_DEFAULT_JOBS = 8
#: The most PyTorch threads asked of any front-end (each is an OS thread with its own stack; OpenMP
#: fails to start 1,024 of them on a small machine, and many more than the cores only wait).
MAX_THREADS = 256


def default_jobs(memory_per_worker: Optional[int] = None) -> int:
    """The command-line tools' default number of workers: the cores given (:func:`available_cores`), <= 8.

    Args:
        memory_per_worker (int, optional): Bytes each worker may need (worker
            processes that each hold their own data): then also at most the
            memory available now (:func:`~kong_pyg.memory.available_memory`)
            divided by this, and at least one; unknown memory does not cap
            it. (default: :obj:`None`)
    """
    jobs = min(available_cores(), MAX_DEFAULT_JOBS)
    if memory_per_worker is not None:
        if not int(memory_per_worker) > 0:
            raise ValueError("'memory_per_worker' must be a positive number of bytes "
                             f"(got {memory_per_worker!r})")
        free = memory.available_memory()
        if free is not None:
            jobs = max(1, min(jobs, free // int(memory_per_worker)))
    return jobs


@contextmanager
def torch_threads(threads: Optional[int], cap: bool = True) -> Iterator[None]:
    """Run a block with :obj:`threads` PyTorch threads, then restore the previous count.

    :obj:`None` leaves PyTorch's setting alone. With :obj:`cap` the count is
    at most :func:`available_cores` (the batch maps, the evaluation); without
    it the count asked is set as it is (:class:`~kong_pyg.stream.KongStream`,
    whose :obj:`threads` is the user's explicit choice). The KONG pipeline is
    many mid-sized tensor operations: a second thread gains little on a quiet
    machine and, when another process competes for the cores, makes every
    parallel operation wait for a descheduled thread (batch maps measured 6
    to 14 times slower with 2 threads than with 1 on a loaded 2-core machine).
    """
    if threads is None:
        yield
        return
    from .config import check_int

    check_int("threads", threads, 1, None if cap else MAX_THREADS)  # (capped: more is harmless)
    import torch  # here, so that the command line's parsers (which read default_jobs) stay light

    old = torch.get_num_threads()
    # (one thread needs no look at the cores)
    want = max(1, min(int(threads), available_cores())) if cap and int(threads) > 1 else int(threads)
    if want == old:
        yield
        return
    torch.set_num_threads(want)
    try:
        yield
    finally:
        torch.set_num_threads(old)


__all__ = ["available_cores", "default_jobs", "torch_threads"]
