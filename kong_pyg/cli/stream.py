"""``kong-pyg stream FILE``: KONG sketches of a StreamSpot edge stream.

Reads the stream with :class:`~kong_pyg.datasets.streamspot.StreamSpotReader`
and sketches it with :class:`~kong_pyg.KongStream` (its public API only:
the constructor, :meth:`~kong_pyg.KongStream.fit`,
:meth:`~kong_pyg.KongStream.sketches`, :attr:`~kong_pyg.KongStream.graph_ids`
and the counts). The KONG options are the ones :class:`~kong_pyg.KongStream`
takes, one value each, with the same flags and parsers as ``classify``.
"""
import argparse
import hashlib
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Tuple

from ..config import STREAM_DEFAULTS, option_names
from ..files import atomic_files, temp_beside
from ..threads import MAX_THREADS as MAX_TORCH_THREADS
from ..threads import torch_threads
from ..warn import ignoring
from .common import (
    MAX_THREADS,
    PROCESSES_PER_CPU,
    CommandError,
    add_command,
    add_kong_options,
    add_quiet,
    check_distinct_files,
    check_output_file,
    input_file,
    int_at_least,
    one_line,
    plural,
    show_kong,
)

if TYPE_CHECKING:  # pragma: no cover
    from torch import Tensor

#: The largest --chunk-size (a chunk is held in memory: six int64 columns).
MAX_CHUNK = 1 << 26

PROG = "kong-pyg stream"
#: Chunks between checkpoints (``--checkpoint-every``).
CHECKPOINT_EVERY = 16
#: Errors that are the user's (as :data:`kong_pyg.cli.USER_ERRORS`): one line, exit 2.
USER_ERRORS = (CommandError, ValueError, TypeError, OSError, ImportError)
#: The command line's defaults where they are not :class:`~kong_pyg.KongStream`'s
#: (a k-gram length of 2; one pass and a sketch, as the stream's own defaults).
CLI_DEFAULTS: Dict[str, Any] = {"k": 2, "hops": 1, "dim": 1024}


def stream_options() -> Dict[str, Any]:
    """The KONG options :class:`~kong_pyg.KongStream` takes, with the command line's defaults.

    :data:`~kong_pyg.config.STREAM_DEFAULTS` (the stream's own), :obj:`CLI_DEFAULTS` overriding
    them, in :class:`~kong_pyg.KongConfig`'s order.
    """
    return {name: CLI_DEFAULTS.get(name, STREAM_DEFAULTS[name]) for name in option_names()
            if name in STREAM_DEFAULTS}


def register(subparsers: Any) -> None:
    """Add the ``stream`` subcommand."""
    p = add_command(
        subparsers, "stream",
        help="KONG sketches of a StreamSpot edge stream (file or stdin)",
        description=(
            "Read a StreamSpot edge stream (tab-separated: source-id, source-type, dest-id, "
            "dest-type, edge-type, graph-id; one edge per line, in arrival order) and write one "
            "KONG feature row per graph. Malformed lines are counted, reported (first few, with "
            "line numbers) and skipped; --strict makes the first one fatal (exit 1). hops >= 2 reads "
            "the input hops times (stdin is first copied to a temporary file) and checks that every "
            "pass read the same edges. With --checkpoint a killed run resumes where it stopped (the "
            "checkpoint records the input's fingerprint and refuses another input). Other errors: "
            "one line, exit 2."
        ),
    )
    p.add_argument("file", type=input_file(allow_stdin=True), help="the stream file, or - for stdin")
    p.add_argument("--out", "-o", default="kong_stream", metavar="PREFIX",
                   help="output prefix: PREFIX.npy (or PREFIX.pt when it ends in .pt, PREFIX.npy when "
                        "it ends in .npy) and PREFIX.ids.txt, the graph ids in row order")
    kong = p.add_argument_group("KONG options")
    options = stream_options()
    add_kong_options(kong, list(options), grid=False, defaults=options,
                     suffix={"hops": " (the input is read max(h, 1) times)"},
                     replace={"dim": ("B", "sketch size b (a stream always sketches: no exact map)"),
                              "seed": ("N", "seed of the hash tables")})  # (a stream has no order=random)
    if "edge_labels" in options:  # the old flag
        kong.add_argument("--no-edge-labels", dest="edge_labels", action="store_const", const=False,
                          help=argparse.SUPPRESS)
    kong.add_argument("--directed", action="store_true",
                      help="an edge extends only its source's neighborhood (default: off: both endpoints)")
    run_group = p.add_argument_group("reading")
    run_group.add_argument("--chunk-size", metavar="N", type=int_in(1, MAX_CHUNK), default=1 << 20,
                           help="edges per chunk")
    run_group.add_argument("--strict", action="store_true", help="stop at the first malformed line (exit 1)")
    run_group.add_argument("--workers", metavar="N", type=int_at_least(1, MAX_THREADS), default=1,
                           help="read the input in N time shards by N processes on this machine "
                                "(torch.distributed, gloo), merged pass by pass")
    run_group.add_argument("--distributed", action="store_true",
                           help="be one process of a torch.distributed run started by torchrun (environment "
                                "variables RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), e.g. torchrun "
                                "--nproc-per-node 4 -m kong_pyg stream FILE --distributed; process 0 writes")
    run_group.add_argument("--show-malformed", type=int_at_least(0), default=5, metavar="N",
                           help="malformed lines to print")
    run_group.add_argument("--float64", action="store_true", help="write float64 (default: off: float32)")
    run_group.add_argument("--checkpoint", default=None, metavar="FILE",
                           help="checkpoint file: resume from it if it exists, save to it as the run goes "
                                "(default: none)")
    run_group.add_argument("--checkpoint-every", metavar="N", type=int_at_least(1), default=None,
                           help=f"chunks between checkpoints, with --checkpoint "
                                f"(default: {CHECKPOINT_EVERY})")
    run_group.add_argument("--threads", metavar="N", type=int_at_least(1, MAX_TORCH_THREADS), default=1,
                           help="PyTorch threads per process (the work is many mid-sized tensor operations: "
                                "a second thread gains little on a free core and makes a busy machine many "
                                "times slower; use --workers for more cores)")
    add_quiet(run_group)
    p.set_defaults(func=run)


def int_in(low: int, high: int) -> Any:
    """An argparse type: an integer in :math:`[low, high]`."""
    at_least = int_at_least(low)

    def parse(text: str) -> int:
        value = at_least(text)
        if value > high:
            raise argparse.ArgumentTypeError(f"must be <= {high} (got {value})")
        return value

    return parse


def file_fingerprint(path: str) -> str:
    """A fingerprint of a file: its size and a BLAKE2b digest of its first and last MiB."""
    size = os.path.getsize(path)
    digest = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as f:
        digest.update(f.read(1 << 20))
        if size > 1 << 20:
            f.seek(max(1 << 20, size - (1 << 20)))
            digest.update(f.read(1 << 20))
    return f"size={size} blake2b={digest.hexdigest()}"


def output_paths(out: str) -> Tuple[str, str]:
    """The feature file and the ids file of the output prefix :obj:`out`."""
    root, ext = os.path.splitext(out)
    if ext in (".npy", ".pt"):
        return out, root + ".ids.txt"
    return out + ".npy", out + ".ids.txt"


def _as_flags(name: str, value: Any) -> str:
    """A stream option's value as this command's flags (for a checkpoint's other options)."""
    if name == "undirected":
        return "(no --directed)" if value else "--directed"
    if name in stream_options():
        return f"--{name.replace('_', '-')} {show_kong(name, value)}"
    return f"{name}={value!r}"  # (an option the command does not set: a checkpoint of the Python API's)


def _make_stream(args: argparse.Namespace) -> Any:
    from ..stream import KongStream

    options = {name: getattr(args, name) for name in stream_options()}
    if "dim" in options and options["dim"] is None:
        raise CommandError("--dim exact: a stream keeps sketches, not exact counts; give a sketch size b")
    return KongStream(undirected=not args.directed, threads=args.threads, **options)


def _spool_stdin(passes: int, checkpoint: Optional[str]) -> Tuple[Any, Optional[str]]:
    """The source for ``-``: stdin itself, or a temporary copy when it is read more than once.

    With a checkpoint the copy lies next to it (``.NAME.stdin.*.tsv``), where a resumed run removes the
    copy a killed one left; otherwise in the system's temporary folder.
    """
    if sys.stdin is None:  # (<&-: nothing to read)
        raise CommandError("'-' reads stdin, which is closed: give the input file")
    if passes <= 1:
        return sys.stdin.buffer, None
    if checkpoint is not None:
        fd, spooled = temp_beside(checkpoint, "stdin.", ".tsv")
    else:
        fd, spooled = tempfile.mkstemp(prefix="kong-stream-", suffix=".tsv")
    try:
        with os.fdopen(fd, "wb") as f:
            shutil.copyfileobj(sys.stdin.buffer, f, 1 << 24)
        print(f"{PROG}: hops >= 2 reads the input {passes} times: stdin was copied to a temporary file",
              file=sys.stderr)
    except BaseException:  # (a full disk, Ctrl-C or SIGTERM, a closed stderr: no copy left behind)
        os.unlink(spooled)
        raise
    return spooled, spooled


def run(args: argparse.Namespace) -> int:
    """Run ``kong-pyg stream``."""
    ks = _make_stream(args)
    passes = max(int(args.hops), 1)
    if os.path.isdir(args.out) or os.path.basename(args.out) in ("", ".", ".."):
        raise CommandError(f"--out is a file prefix (PREFIX.npy and PREFIX.ids.txt), not a folder: got "
                           f"{args.out!r}; for files in a folder give DIR/NAME")
    matrix_path, ids_path = output_paths(args.out)
    for path in (matrix_path, ids_path):
        check_output_file(path, "--out")
    if args.checkpoint is not None:
        check_output_file(args.checkpoint, "--checkpoint")
        os.makedirs(os.path.dirname(os.path.abspath(args.checkpoint)), exist_ok=True)
    if args.checkpoint_every is not None and args.checkpoint is None:
        raise CommandError("--checkpoint-every needs --checkpoint FILE (there is nothing to save otherwise)")
    files = [("--out", matrix_path), ("--out", ids_path)]
    if args.file != "-":
        files.insert(0, ("the input", args.file))
    if args.checkpoint is not None:
        files.append(("--checkpoint", args.checkpoint))
    check_distinct_files(files)
    if args.distributed and args.workers > 1:
        raise CommandError("--distributed and --workers: torchrun starts the processes of a --distributed "
                           "run (--nproc-per-node N); --workers N starts N on this machine without torchrun")
    if args.distributed and not all(os.environ.get(v) for v in ("RANK", "WORLD_SIZE", "MASTER_ADDR")):
        raise CommandError("--distributed is one process of a run started by torchrun (RANK, WORLD_SIZE and "
                           "MASTER_ADDR are not set): torchrun --nproc-per-node N -m kong_pyg stream FILE "
                           "--distributed; or --workers N on this machine")
    if args.workers > 1 or args.distributed:
        flag = "--distributed" if args.distributed else "--workers"
        if args.file == "-":
            raise CommandError(f"{flag}: the input must be a file (shards are byte ranges of it), not stdin")
        if args.checkpoint is not None:
            raise CommandError(f"{flag}: --checkpoint is for one process (rerun a sharded run instead)")
        if args.distributed:
            return _sharded(args)
        _check_workers(args.workers)
        return _spawn_local(args)
    with torch_threads(args.threads, cap=False):  # (given back after: a caller of main keeps its own)
        return _one_process(args, ks, passes)


def _one_process(args: argparse.Namespace, ks: Any, passes: int) -> int:
    """The stream read in this process: :func:`run`'s part after the checks."""
    from ..datasets.streamspot import MalformedLineError, StreamSpotReader
    from ..stream.checkpoint import OptionsDiffer

    readers: List[Any] = []
    source: Any = None
    spooled: Optional[str] = None

    def chunks() -> Any:
        reader = StreamSpotReader(source, args.chunk_size, strict=args.strict, keep=args.show_malformed)
        readers.append(reader)
        return reader

    try:  # (from the copy of stdin on: whatever stops the run, the copy goes)
        source, spooled = _spool_stdin(passes, args.checkpoint) if args.file == "-" else (args.file, None)
        start = time.perf_counter()  # (the rate is the run's: the copy of stdin is not in it)
        fingerprint = file_fingerprint(source) if isinstance(source, str) else None
        ks.fit(chunks, chunk_size=args.chunk_size, checkpoint=args.checkpoint,
               checkpoint_every=args.checkpoint_every or CHECKPOINT_EVERY, progress=not args.quiet,
               fingerprint=fingerprint)
    except MalformedLineError as e:  # --strict: the data, not the command, is at fault
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    except OptionsDiffer as e:
        saved = " ".join(_as_flags(name, was) for name, (was, _) in e.diff.items())
        given = " ".join(_as_flags(name, now) for name, (_, now) in e.diff.items())
        raise CommandError(f"--checkpoint {args.checkpoint} was made with other options: {saved} (this run: "
                           f"{given}); resume with the checkpoint's, or remove it to start again") from None
    except MemoryError as e:
        raise CommandError(str(e) or "out of memory") from None
    finally:
        if spooled is not None:
            os.unlink(spooled)
    write_output(args, ks, readers[-1] if readers else None, time.perf_counter() - start, passes,
                 resumed_from=ks.resumed_from)
    return 0


def _check_workers(workers: int) -> None:
    """Refuse far more processes than CPUs (each holds PyTorch: about 0.3 GB); warn above the CPUs."""
    cpus = os.cpu_count() or 1
    if workers > PROCESSES_PER_CPU * cpus:
        raise CommandError(f"--workers {workers} is more than {PROCESSES_PER_CPU} x the {cpus} CPUs here; on "
                           "several machines start one process per CPU with torchrun and --distributed")
    if workers > cpus:
        print(f"{PROG}: warning: --workers {workers} is more than the {cpus} CPUs here: the processes share "
              "them (slower; the same features)", file=sys.stderr)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _spawn_local(args: argparse.Namespace) -> int:
    """``--workers N``: N processes on this machine (gloo over the loopback), each a :func:`_sharded`."""
    import multiprocessing

    import torch.multiprocessing as mp

    port = _free_port()
    method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"  # fork: no second import
    codes = mp.get_context(method).SimpleQueue()
    ignore_sigint = signal.getsignal(signal.SIGINT) is signal.SIG_IGN  # (`cmd &` in a script: so do they)
    before = {p.pid for p in multiprocessing.active_children()}
    context = None
    try:
        with _stop_signals_deferred():  # (an interrupt while they start comes once the handles are here)
            context = mp.start_processes(_local_worker, args=(args, port, codes, ignore_sigint),
                                         nprocs=args.workers, join=False, start_method=method)
        while not context.join():
            pass
    except mp.ProcessExitedException as err:  # (killed: the kernel's out-of-memory killer, most often)
        how = f"was killed by {err.signal_name}" if err.signal_name else f"exited with status {err.exit_code}"
        hint = (" (out of memory? every process holds its shard's state: fewer --workers, or a smaller "
                "--dim)") if err.signal_name == "SIGKILL" else ""
        print(f"{PROG}: error: --workers: process {err.error_index} {how}{hint}", file=sys.stderr)
        return 1  # (a failure of the run, not of the command line: exit 1, as --strict)
    except BaseException:  # (SIGTERM or Ctrl-C here: the workers end too, not left running alone)
        if context is not None:
            _end_workers(context.processes)
        else:  # (starting them failed part-way, e.g. a fork refused: those started have no handle here)
            _end_workers([p for p in multiprocessing.active_children() if p.pid not in before])
        raise
    results = []
    while not codes.empty():  # (every worker has ended: what they put is all there is)
        results.append(codes.get())
    if len(results) < args.workers:  # (a worker ended without its code: interrupted alone, say)
        print(f"{PROG}: error: --workers: {args.workers - len(results)} of {args.workers} processes ended "
              "without finishing (interrupted?)", file=sys.stderr)
        return 1
    return max(results)


#: What ends a run: deferred while its workers start (so that none is left without a handle).
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def _stop_signals_deferred() -> Iterator[None]:
    """SIGINT and SIGTERM noted inside the block and raised again as it ends, to the handlers of before.

    (Python-level handlers: they run in the main thread whichever thread the signal reached, so
    blocking the signals in this thread would not hold them back. Outside the main thread, where
    handlers cannot be set, the block runs as it is.)
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted: List[int] = []
    before = {s: signal.signal(s, lambda signum, frame: noted.append(signum)) for s in _STOP_SIGNALS}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
        if noted:
            signal.raise_signal(noted[0])


def _end_workers(processes: List[Any]) -> None:
    """SIGTERM to every live worker, then wait for each (10 s at most; then SIGKILL).

    (A worker forked a moment before keeps the deferring handlers of :func:`_stop_signals_deferred`
    until its first line: a SIGTERM then is only noted.)
    """
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(10)
        if process.is_alive():
            process.kill()
            process.join()


def _local_worker(rank: int, args: argparse.Namespace, port: int, codes: Any, ignore_sigint: bool) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # (not the parent's handler: it waits for C calls)
    # (forked: not the deferring handler either; as the parent had it before)
    signal.signal(signal.SIGINT, signal.SIG_IGN if ignore_sigint else signal.default_int_handler)
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(args.workers), MASTER_ADDR="127.0.0.1",
                      MASTER_PORT=str(port))
    try:
        code = _sharded(args)
    except USER_ERRORS as err:  # one line, as kong_pyg.cli.main prints it (process 0 only)
        if rank == 0:
            print(f"{PROG}: error: {one_line(str(err))}", file=sys.stderr)
        code = 2
    codes.put(code)


def _sharded(args: argparse.Namespace) -> int:
    """One process of a sharded run (:func:`kong_pyg.stream.distributed.read_shards`)."""
    with torch_threads(args.threads, cap=False):  # (given back after: a caller of main keeps its own)
        return _shard(args)


def _shard(args: argparse.Namespace) -> int:
    """:func:`_sharded`'s work, in the process group."""
    import torch.distributed as dist

    from ..datasets.streamspot import MalformedLineError
    from ..stream.distributed import read_shards

    dist.init_process_group("gloo", init_method="env://")
    try:
        rank = dist.get_rank()
        ks = _make_stream(args)
        start = time.perf_counter()
        say = None if args.quiet else (lambda text: print(f"{PROG}: {text}", file=sys.stderr))
        try:
            with ignoring(Warning, "the first line looks like a header"):  # (write_output prints it, once)
                merged, stats = read_shards(ks, args.file, args.chunk_size, args.strict, args.show_malformed,
                                            say)
        except MalformedLineError as err:  # --strict: the data is at fault (exit 1)
            if rank == 0:
                print(f"{PROG}: error: {err}", file=sys.stderr)
            return 1
        if rank == 0:
            counts = argparse.Namespace(num_malformed=stats["num_malformed"], num_blank=stats["num_blank"],
                                        malformed=stats["malformed"],
                                        first_graph_edges=stats["first_graph_edges"])
            tokens = stats["graph_tokens"]
            write_output(args, merged, counts, time.perf_counter() - start, max(int(args.hops), 1),
                         decode=lambda g: tokens.get(g, g))
            sent = sum(stats["bytes_sent"]) + sum(stats["bytes_broadcast"])
            read = max(sum(r) for r in stats["cpu_read"])
            merge = sum(stats["cpu_merge"][0])
            print(f"{PROG}: {dist.get_world_size()} processes; {sent / 2**20:.1f} MiB sent between them; "
                  f"CPU seconds: reading {read:.2f} (the slowest process), merging {merge:.2f} (process 0)",
                  file=sys.stderr)
        return 0
    finally:
        dist.destroy_process_group()


def write_output(args: argparse.Namespace, ks: Any, reader: Any, seconds: float, passes: int,
                 decode: Any = None, resumed_from: Tuple[int, int] = (1, 0)) -> None:
    """Write the features and the graph ids, and report the run on stderr.

    Graph ids are :obj:`reader`'s tokens (or :obj:`decode` of each id, or
    the ids themselves); the ids file holds one per line, its bytes those of
    the input (``surrogateescape``). The rate is of the edges this run
    processed: a run resumed from a checkpoint at :obj:`resumed_from` (pass,
    edges of it read before) processes the rest of that pass and the passes
    after it (it reads the skipped edges again only to check them).

    Raises:
        CommandError: No edge was read (an empty input, or only malformed or blank lines); nothing
            is written.
    """
    import numpy as np
    import torch

    from ..datasets.streamspot import format_malformed
    from ..datasets.streamspot.reader import header_note

    if ks.num_edges == 0:
        n_bad = reader.num_malformed if reader is not None else 0
        where = "stdin" if args.file == "-" else repr(args.file)
        bad = f"; {format_malformed(reader.malformed, n_bad)}" if n_bad else ""
        raise CommandError(f"no edges in {where} ({n_bad:,} malformed and "
                           f"{getattr(reader, 'num_blank', 0):,} blank lines): no features written{bad}")

    decode = decode or (reader.decode if reader is not None else str)
    ids = [str(decode(i)) for i in ks.graph_ids]
    counts = ", ".join(plural(n, noun) for n, noun in ((ks.num_edges, "edge"), (ks.num_graphs, "graph"),
                                                       (ks.num_nodes, "node")))
    total = ks.num_edges * passes
    at_pass, at_edge = resumed_from
    done = (at_pass - 1) * ks.num_edges + at_edge  # (edge-passes processed before this run)
    rate = (total - done) / max(seconds, 1e-9)
    resumed = ""
    if done:
        resumed = (f" (resumed from the checkpoint at edge {at_edge:,} of pass {at_pass}: "
                   f"{total - done:,} of {total:,} edge-passes in this run)")
    matrix_path, ids_path = output_paths(args.out)
    config, scheme = repr(ks), ks.hashes.version
    # (finite in the stream's dtype, or an error; formed in the stream's memory, which is then released)
    x = ks.sketches(release=True)
    if not args.float64:
        x = as_float32(x)
    if matrix_path.endswith(".pt"):  # (torch.save writes a view's whole memory: the rows' spare capacity too)
        x = x.clone()
    note = header_note(ids, getattr(reader, "first_graph_edges", 0) or None)
    if note is not None:
        print(f"{PROG}: warning: {note}", file=sys.stderr)
    os.makedirs(os.path.dirname(os.path.abspath(matrix_path)), exist_ok=True)
    # both written in full to temporary files, then renamed: an interrupted run leaves the earlier pair
    with atomic_files([matrix_path, ids_path]) as (matrix_file, ids_file):
        if matrix_path.endswith(".pt"):
            # (config: the stream's options, computed in its dtype; dtype: that of the x written)
            torch.save({"x": x, "graph_ids": ids, "config": config, "hash_scheme": scheme,
                        "dtype": str(x.dtype).replace("torch.", "")},
                       matrix_file)
        else:
            np.save(matrix_file, x.numpy())
        ids_file.write("".join(i + "\n" for i in ids).encode("utf-8", errors="surrogateescape"))
    n_bad = reader.num_malformed if reader is not None else 0
    n_blank = getattr(reader, "num_blank", 0)
    print(
        f"{PROG}: {counts}; "
        f"{passes} pass{'es' if passes > 1 else ''}{resumed} in {seconds:.2f} s ({rate:,.0f} edges/s); "
        f"{n_bad:,} malformed line{'s' if n_bad != 1 else ''}, {n_blank:,} blank; wrote {matrix_path} "
        f"{tuple(x.shape)} and {ids_path}",
        file=sys.stderr,
    )
    if n_bad:
        print(format_malformed(reader.malformed, n_bad), file=sys.stderr)


#: Bytes of ``float32`` converted at a time by :func:`as_float32`.
F32_BLOCK_BYTES = 64 << 20


def as_float32(full: "Tensor") -> "Tensor":
    """A ``float64`` matrix as ``float32``, in the front of its own memory (no second matrix).

    Row blocks are converted in order; block :math:`i`'s ``float32`` bytes end before the
    ``float64`` rows not read yet begin. :obj:`full` is lost (also where a block overflows:
    then a :class:`CommandError`, as nothing is written).
    """
    import torch

    from ..outputs import all_finite

    if full.dtype == torch.float32:  # (checked finite by the stream)
        return full
    rows, cols = full.shape
    flat = full.contiguous().view(-1).view(torch.float32)  # (2 * rows * cols numbers, the same memory)
    out = flat[: rows * cols].view(rows, cols)
    step = max(1, F32_BLOCK_BYTES // max(4 * cols, 1))
    for lo in range(0, rows, step):
        block = full[lo : lo + step].to(torch.float32)
        if not all_finite(block):
            big = float(full[lo : lo + step].abs().max())
            raise CommandError(f"the features reach {big:.3g}, beyond float32: pass --float64 (or fewer "
                               "--hops, a smaller --degree or --const)")
        out[lo : lo + step] = block
    return out


__all__ = ["register", "run", "output_paths", "stream_options", "write_output", "file_fingerprint",
           "as_float32"]
