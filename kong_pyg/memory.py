"""Memory: allocation checks, zeros that cost nothing until written, and the C allocator's settings.

Allocation checks give a clear error instead of an allocator failure or the out-of-memory killer.

Tensors whose size follows from user input (the sketch size :obj:`dim`, the
number of graphs, a stream's nodes) are checked here before they are
allocated: a size that cannot be represented, or that is larger than the
memory the device could still give, is refused with a message that names
the input and the estimate.
"""
import os
import sys
from typing import TYPE_CHECKING, Any, Dict, Optional, Union

if TYPE_CHECKING:
    import torch

#: Allocations below this are never checked (cheap, and estimates are rough).
CHECK_FROM_BYTES = 1 << 28
#: Above this no tensor can be allocated on any machine.
MAX_BYTES = 1 << 60


def available_memory(device: Union[str, "torch.device", None] = None) -> Optional[int]:
    """The bytes the device could still give (``None`` where unknown).

    CPU: ``MemAvailable`` of ``/proc/meminfo``, at most what a cgroup v2
    memory limit (a container's) or the process's address-space limit
    (``ulimit -v``) leaves; CUDA:
    :func:`torch.cuda.mem_get_info` plus what PyTorch's caching allocator
    holds but does not use.
    """
    if device is not None:  # the host without importing PyTorch (the command line's parsers stay light)
        import torch

        dev = torch.device(device)
        if dev.type == "cuda":
            try:
                free, _ = torch.cuda.mem_get_info(dev)
                return int(free) + int(torch.cuda.memory_reserved(dev) - torch.cuda.memory_allocated(dev))
            except (RuntimeError, AssertionError):
                return None
        if dev.type != "cpu":
            return None
    host: Optional[int] = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    host = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    limits = (host, _cgroup_memory_left(), _address_space_left())
    return min((v for v in limits if v is not None), default=None)


def _address_space_left() -> Optional[int]:
    """What the address-space limit (``ulimit -v``, ``RLIMIT_AS``) still allows, ``None`` without one."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft == resource.RLIM_INFINITY or soft < 0:
            return None
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return max(0, soft - int(line.split()[1]) * 1024)
    except (ImportError, OSError, ValueError, IndexError):
        pass
    return None


#: Where this process's cgroup (v2) limits are read (memory here, CPU in :mod:`kong_pyg.threads`).
CGROUP_DIR = "/sys/fs/cgroup"


def _cgroup_memory_left() -> Optional[int]:
    """What a cgroup v2 memory limit (a container's) still allows, ``None`` without one."""
    try:
        with open(f"{CGROUP_DIR}/memory.max") as f:
            limit = f.read().strip()
        if limit == "max":
            return None
        with open(f"{CGROUP_DIR}/memory.current") as f:
            used = int(f.read().strip())
        return max(0, int(limit) - used)
    except (OSError, ValueError):
        return None


def shortfall(nbytes: int, device: Union[str, "torch.device", None] = None) -> Optional[int]:
    """The bytes available when :obj:`nbytes` exceed them (``-1``: beyond any machine), else ``None``."""
    if nbytes < CHECK_FROM_BYTES:
        return None
    if nbytes > MAX_BYTES:
        return -1
    free = available_memory(device)
    return free if free is not None and nbytes > free else None


def what_is_left(free: int) -> str:
    """The part of a refusal that says what is available (:func:`shortfall`'s value)."""
    return "more than any machine has" if free < 0 else f"only {gib(free)} are available"


def gib(nbytes: int) -> str:
    """A size for messages: GiB, or MiB below one GiB (where "0.0 GiB" would say nothing)."""
    mib = nbytes / 2**20
    return f"{nbytes / 2**30:,.1f} GiB" if round(abs(mib), 1) >= 1024 else f"{mib:,.1f} MiB"


def check_allocation(nbytes: int, what: str, device: Union[str, "torch.device", None] = None,
                     advice: str = "") -> None:
    """Refuse (:class:`ValueError`) an allocation of :obj:`nbytes` the device cannot give.

    Args:
        nbytes (int): The estimated size.
        what (str): What would be allocated, naming the input responsible
            (e.g. :obj:`"'dim' = 4096: node sketches [100, 4096]"`).
        device (torch.device, optional): Where. (default: CPU)
        advice (str, optional): What to change, appended to the message.
    """
    free = shortfall(nbytes, device)
    if free is None:
        return
    raise ValueError(f"{what} needs {gib(nbytes)}, {what_is_left(free)}" + (f"; {advice}" if advice else ""))


#: glibc ``mallopt`` settings of :func:`tune_allocator`: ``M_MMAP_THRESHOLD`` (-3) 32 MiB, the most glibc
#: accepts and the most its own sliding threshold reaches, and ``M_TRIM_THRESHOLD`` (-1) 128 MiB.
MALLOC_SETTINGS: Dict[int, int] = {-3: 32 << 20, -1: 128 << 20}


#: Where a user chooses these two settings for glibc (then :func:`tune_allocator` leaves them alone).
MALLOC_ENV = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")
MALLOC_TUNABLES = ("glibc.malloc.mmap_threshold", "glibc.malloc.trim_threshold")


#: Zeros of at least this many bytes come from :func:`mapped_zeros`'s memory map.
MAPPED_FROM_BYTES = 1 << 20


def mapped_zeros(rows: int, cols: int, dtype: "torch.dtype") -> "torch.Tensor":
    """Zeros :obj:`[rows, cols]` whose pages take memory only once written (CPU).

    Large ones are a fresh anonymous memory map (zero pages, mapped on first write): capacity
    kept for growth costs address space, not memory. :func:`torch.zeros` writes every page.
    (NumPy's ``calloc``-backed zeros would do too, but NumPy asks the kernel for huge pages
    there, whose first writes cost more system time than they save.)
    """
    import mmap

    import torch

    nbytes = rows * cols * torch.empty(0, dtype=dtype).element_size()
    if nbytes < MAPPED_FROM_BYTES:
        return torch.zeros(rows, cols, dtype=dtype)
    # A private map: Python's default for an anonymous one is MAP_SHARED, which a forked child would
    # write into as well (a stream copied by fork must stay the parent's own)
    flags = {"flags": mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS} if hasattr(mmap, "MAP_PRIVATE") else {}
    return torch.frombuffer(mmap.mmap(-1, nbytes, **flags), dtype=dtype).view(rows, cols)  # (holds the map)


def _user_chose_thresholds() -> bool:
    """Whether the environment sets glibc's mmap or trim threshold (variables or ``GLIBC_TUNABLES``)."""
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    return any(k in os.environ for k in MALLOC_ENV) or any(t in tunables for t in MALLOC_TUNABLES)


def _glibc_malloc_in_use(libc: Any) -> bool:
    """Whether the process's ``malloc`` is glibc's (not jemalloc or tcmalloc put first by ``LD_PRELOAD``)."""
    import ctypes

    ours = ctypes.cast(ctypes.CDLL(None).malloc, ctypes.c_void_p).value
    return ours is not None and ours == ctypes.cast(libc.malloc, ctypes.c_void_p).value


def tune_allocator() -> bool:
    r"""Keep freed memory for reuse: glibc's ``malloc`` with :data:`MALLOC_SETTINGS`, for this process.

    PyTorch allocates and frees temporaries of 128 KiB to tens of MiB all
    the time, from the C library's ``malloc``. With glibc's defaults whether
    freed blocks stay with the process depends on the order in which earlier
    blocks were freed, so it changes from process to process: where they go
    back to the operating system, every reuse faults their pages in again.
    Measured on a 2-core machine (one thread, the same code and data, fresh
    processes): NCI1's exact :math:`k = 2` map took about 19 ms in some
    processes and 36-47 ms in others (twice the page faults), 17.5-18.6 ms
    in every process after this call. The ``kong-pyg`` command line calls
    it at start-up; call it once at the start of a script of your own.

    The cost: blocks below 32 MiB come from the heap, and freed heap memory
    goes back to the system only from the top of the heap, above 128 MiB of
    free space there. Freed blocks below a block still in use stay with the
    process, so a long-running process that frees many large temporaries
    while keeping small objects can hold much more than 128 MiB (glibc's
    defaults behave alike once their sliding threshold has grown).

    It does nothing (and returns :obj:`False`) on other systems and C
    libraries, when another allocator is in use (``LD_PRELOAD`` of jemalloc
    or tcmalloc), and where the environment sets either threshold
    (``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_`` or
    ``GLIBC_TUNABLES``: the user's choice stands). The settings are the
    process's: every later allocation is affected, and processes forked
    later inherit them; they cannot be undone.

    Returns:
        bool: Whether the settings were applied.
    """
    if not sys.platform.startswith("linux") or _user_chose_thresholds():
        return False
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6")
        if not libc.gnu_get_libc_version:  # glibc's own symbol: not musl or another C library
            return False
        if not _glibc_malloc_in_use(libc):
            return False
        return all(libc.mallopt(param, value) == 1 for param, value in MALLOC_SETTINGS.items())
    except (OSError, AttributeError):
        return False
