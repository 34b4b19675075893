"""``kong-pyg stream FILE``: KONG sketches of a StreamSpot edge stream.

Reads the stream with :class:`~kong_pyg.datasets.streamspot.StreamSpotReader`
and sketches it with :class:`~kong_pyg.KongStream` (its public API only:
the constructor, :meth:`~kong_pyg.KongStream.fit`,
:meth:`~kong_pyg.KongStream.sketches`, :attr:`~kong_pyg.KongStream.graph_ids`
and the counts). The KONG options are the ones :class:`~kong_pyg.KongStream`
takes, one value each, with the same flags and parsers as ``classify``.
"""
import argparse
import inspect
import os
import shutil
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Tuple

from ..config import option_defaults, option_names
from .common import (
    CommandError,
    add_command,
    add_kong_options,
    add_quiet,
    check_output_file,
    input_file,
    int_at_least,
)

PROG = "kong-pyg stream"
#: The command line's defaults where they are not :class:`~kong_pyg.KongStream`'s
#: (a k-gram length of 2; one pass and a sketch, as the stream's own defaults).
CLI_DEFAULTS: Dict[str, Any] = {"k": 2, "hops": 1, "dim": 1024}


def stream_options() -> Dict[str, Any]:
    """The KONG options :class:`~kong_pyg.KongStream` takes, with the command line's defaults.

    The options named in its constructor, with its defaults; all of
    :class:`~kong_pyg.KongConfig`'s when it takes them as keyword arguments
    (``**options``). :obj:`CLI_DEFAULTS` override both.
    """
    from ..stream import KongStream

    params = inspect.signature(KongStream.__init__).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        defaults = option_defaults()
    else:
        defaults = {name: params[name].default for name in option_names()
                    if name in params and params[name].default is not inspect.Parameter.empty}
    return {name: CLI_DEFAULTS.get(name, value) for name, value in defaults.items()}


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
            "the input hops times (stdin is first copied to a temporary file)."
        ),
    )
    p.add_argument("file", type=input_file(allow_stdin=True), help="the stream file, or - for stdin")
    p.add_argument("--out", "-o", default="kong_stream", metavar="PREFIX",
                   help="output prefix: PREFIX.npy (or PREFIX.pt when it ends in .pt, PREFIX.npy when "
                        "it ends in .npy) and PREFIX.ids.txt, the graph ids in row order")
    kong = p.add_argument_group("KONG options")
    options = stream_options()
    add_kong_options(kong, list(options), grid=False, defaults=options,
                     suffix={"hops": " (the input is read max(h, 1) times)"})
    if "edge_labels" in options:  # the old flag
        kong.add_argument("--no-edge-labels", dest="edge_labels", action="store_const", const=False,
                          help=argparse.SUPPRESS)
    kong.add_argument("--directed", action="store_true",
                      help="an edge extends only its source's neighborhood (default: off: both endpoints)")
    run_group = p.add_argument_group("reading")
    run_group.add_argument("--chunk-size", metavar="N", type=int_at_least(1), default=1 << 20,
                           help="edges per chunk")
    run_group.add_argument("--strict", action="store_true", help="stop at the first malformed line (exit 1)")
    run_group.add_argument("--show-malformed", type=int_at_least(0), default=5, metavar="N",
                           help="malformed lines to print")
    run_group.add_argument("--float64", action="store_true", help="write float64 (default: off: float32)")
    run_group.add_argument("--checkpoint", default=None, metavar="FILE",
                           help="checkpoint file: resume from it if it exists, save to it as the run goes "
                                "(default: none)")
    run_group.add_argument("--checkpoint-every", metavar="N", type=int_at_least(1), default=16,
                           help="chunks between checkpoints")
    run_group.add_argument("--threads", metavar="N", type=int_at_least(1), default=1,
                           help="PyTorch threads (the work is many mid-sized tensor operations, which gain "
                                "little from more threads and lose a lot on a busy machine)")
    add_quiet(run_group)
    p.set_defaults(func=run)


def output_paths(out: str) -> Tuple[str, str]:
    """The feature file and the ids file of the output prefix :obj:`out`."""
    root, ext = os.path.splitext(out)
    if ext in (".npy", ".pt"):
        return out, root + ".ids.txt"
    return out + ".npy", out + ".ids.txt"


def _make_stream(args: argparse.Namespace) -> Any:
    from ..stream import KongStream

    options = {name: getattr(args, name) for name in stream_options()}
    if "dim" in options and options["dim"] is None:
        raise CommandError("--dim exact: a stream keeps sketches, not exact counts; give a sketch size b")
    return KongStream(undirected=not args.directed, **options)


def _spool_stdin(passes: int) -> Tuple[Any, Optional[str]]:
    """The source for ``-``: stdin itself, or a temporary copy when it is read more than once."""
    if passes <= 1:
        return sys.stdin.buffer, None
    fd, spooled = tempfile.mkstemp(prefix="kong-stream-", suffix=".tsv")
    with os.fdopen(fd, "wb") as f:
        shutil.copyfileobj(sys.stdin.buffer, f, 1 << 24)
    print(f"{PROG}: hops >= 2 reads the input {passes} times: stdin was copied to a temporary file",
          file=sys.stderr)
    return spooled, spooled


def run(args: argparse.Namespace) -> int:
    """Run ``kong-pyg stream``."""
    import torch

    from ..datasets.streamspot import StreamSpotReader

    ks = _make_stream(args)
    passes = max(int(args.hops), 1)
    matrix_path, ids_path = output_paths(args.out)
    for path in (matrix_path, ids_path):
        check_output_file(path, "--out")
    if args.checkpoint is not None:
        check_output_file(args.checkpoint, "--checkpoint")
    torch.set_num_threads(args.threads)
    source, spooled = _spool_stdin(passes) if args.file == "-" else (args.file, None)
    readers: List[Any] = []

    def chunks() -> Any:
        reader = StreamSpotReader(source, args.chunk_size, strict=args.strict, keep=args.show_malformed)
        readers.append(reader)
        return reader

    start = time.perf_counter()
    try:
        ks.fit(chunks, chunk_size=args.chunk_size, checkpoint=args.checkpoint,
               checkpoint_every=args.checkpoint_every, progress=not args.quiet)
    except ValueError as e:  # a malformed line under --strict, or a checkpoint of another stream
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    finally:
        if spooled is not None:
            os.unlink(spooled)
    _write(args, ks, readers[-1] if readers else None, time.perf_counter() - start, passes)
    return 0


def _write(args: argparse.Namespace, ks: Any, reader: Any, seconds: float, passes: int) -> None:
    """Write the features and the graph ids, and report the run on stderr."""
    import numpy as np
    import torch

    from ..datasets.streamspot import format_malformed

    x = ks.sketches().to(torch.float64 if args.float64 else torch.float32)
    ids = [str(reader.decode(i)) if reader is not None else str(i) for i in ks.graph_ids]
    matrix_path, ids_path = output_paths(args.out)
    os.makedirs(os.path.dirname(os.path.abspath(matrix_path)), exist_ok=True)
    if matrix_path.endswith(".pt"):
        torch.save({"x": x, "graph_ids": ids, "config": repr(ks)}, matrix_path)
    else:
        np.save(matrix_path, x.numpy())
    with open(ids_path, "w", encoding="utf-8") as f:
        f.write("".join(i + "\n" for i in ids))
    n_bad = reader.num_malformed if reader is not None else 0
    rate = ks.num_edges * passes / max(seconds, 1e-9)
    print(
        f"{PROG}: {ks.num_edges:,} edges, {ks.num_graphs:,} graphs, {ks.num_nodes:,} nodes; "
        f"{passes} pass{'es' if passes > 1 else ''} in {seconds:.1f} s ({rate:,.0f} edges/s); "
        f"{n_bad:,} malformed line{'s' if n_bad != 1 else ''}; wrote {matrix_path} {tuple(x.shape)} "
        f"and {ids_path}",
        file=sys.stderr,
    )
    if n_bad:
        print(format_malformed(reader.malformed, n_bad), file=sys.stderr)


__all__ = ["register", "run", "output_paths", "stream_options"]
