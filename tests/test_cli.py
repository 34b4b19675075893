"""The one argument style of every ``kong-pyg`` subcommand (kong_pyg.cli.common)."""
import argparse
import inspect
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from kong_pyg.cli import _flags, build_parser, main, with_flags
from kong_pyg.cli.table2 import command_line
from kong_pyg.config import option_docs, option_names

COMMANDS = ("classify", "table2", "stream")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def subparsers():
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices


def options(parser):
    return [a for a in parser._actions if a.option_strings and a.help is not argparse.SUPPRESS
            and not isinstance(a, argparse._HelpAction)]


@pytest.fixture
def files(tmp_path):
    a_file = tmp_path / "a.txt"
    a_file.write_text("x\n")
    return tmp_path, a_file


# -- help ---------------------------------------------------------------------------------


@pytest.mark.parametrize("cmd", COMMANDS)
def test_help_shows_a_default_for_every_option(cmd, capsys):
    assert main([cmd, "--help"]) == 0
    text = capsys.readouterr().out
    parser = subparsers()[cmd]
    formatter = parser._get_formatter()
    opts = options(parser)
    assert len(opts) > 5
    for action in opts:
        help_text = formatter._get_help_string(action)
        assert "(default:" in help_text, f"{cmd} {action.option_strings} shows no default"
        assert action.option_strings[0] in text
    assert text.count("(default:") >= len(opts)


def test_library_errors_name_the_commands_flags():
    flags = _flags(build_parser(), "classify")
    assert flags["nested_repeats"] == "--nested-repeats" and flags["k"] == "--k" and "x" not in flags
    message = "'nested_repeats' (3) must be at most 'repeats' (2); graph 4: 'x' ('kernel', 'k')"
    assert with_flags(message, flags) == ("--nested-repeats (3) must be at most --repeats (2); "
                                          "graph 4: 'x' ('kernel', 'k')")
    assert with_flags("'data_root' is the folder that holds T/raw", flags).startswith("--data-root is the")
    # a name already followed by its flag, quoted values (from the data too), a dictionary key: left
    assert with_flags("or 'cache_dir' (--cache-dir)", flags) == "or --cache-dir"
    text = "the features [188, 4,000] ('dim' = 4,000, float64) need 6 GiB; a smaller 'dim' or 'degree'"
    assert with_flags(text, flags) == ("the features [188, 4,000] (--dim = 4,000, float64) need 6 GiB; a "
                                       "smaller --dim or --degree")
    for text in ("layout='grid' and params {'k': 2}", "line 1: expected 'graph-id label', got 'seed'",
                 "graph id 'dim' is labelled 0, but line 1 labelled it 1", "got 1: 'k'"):
        assert with_flags(text, flags) == text
    # table2's --C stores into C_grid: no flag spells 'C_grid', and --C's library name is not its own
    assert "C_grid" not in _flags(build_parser(), "table2")


def test_kong_flags_come_from_the_config(capsys):
    docs = option_docs()
    classify = {a.dest: a for a in options(subparsers()["classify"])}
    for name in option_names():
        if name == "seed":  # classify's --seed also seeds the splits
            continue
        assert classify[name].option_strings == ["--" + name.replace("_", "-")]
        assert classify[name].help.startswith(docs[name])
    from kong_pyg.cli.stream import stream_options
    from kong_pyg.config import STREAM_DEFAULTS
    from kong_pyg.stream import KongStream

    stream = {a.dest: a for a in options(subparsers()["stream"])}
    params = inspect.signature(KongStream.__init__).parameters
    takes_all = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    assert {"k", "hops", "dim", "kernel", "degree", "seed", "edge_labels"} <= set(stream_options())
    # the light copy of the stream's defaults is its constructor's
    assert STREAM_DEFAULTS == {name: params[name].default for name in option_names() if name in params}
    for name in option_names():
        assert (name in stream) == (name in stream_options()) == (name in params or takes_all)
        if name == "dim":  # a stream takes sketch sizes only: its help does not offer the exact map
            assert stream[name].help.startswith("sketch size b (a stream always sketches: no exact map)")
            assert stream[name].metavar == "B"
        elif name == "seed":  # a stream has no order=random to seed
            assert stream[name].help.startswith("seed of the hash tables (default")
        elif name in stream:
            assert stream[name].help.startswith(docs[name])


def test_parsers_import_no_heavy_module():
    # --help and usage errors answer at once: no PyTorch, PyG, scikit-learn or SciPy behind the parsers
    code = ("import sys; from kong_pyg.cli import build_parser; build_parser(); "
            "print([m for m in ('torch', 'torch_geometric', 'sklearn', 'scipy') if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_tol_help_shows_the_solvers_tolerance():
    from kong_pyg.cli.classify import SOLVER_TOL_TEXT
    from kong_pyg.evaluation.svm import MARGIN_TOL

    assert float(SOLVER_TOL_TEXT) == MARGIN_TOL and SOLVER_TOL_TEXT == f"{MARGIN_TOL:.0e}"
    tol = {a.dest: a for a in options(subparsers()["classify"])}["tol"]
    assert tol.default is None and SOLVER_TOL_TEXT in tol.help


def test_grid_flags_help_names_the_extended_grids_values():
    # the defaults named the paper and quick grids only; --grid extended sets its own per setting
    helps = {a.dest: a.help for a in options(subparsers()["classify"])}
    shown_of = {"k": "1,2", "hops": "1,2,3", "relabel": "0,1,2", "order": "degree,edge,label"}
    for name, shown in shown_of.items():
        assert f"--grid extended: {shown}, per setting" in helps[name]
    assert "--grid extended" not in helps["flow"]  # (the same in every setting)


def test_deferred_import_loads_on_first_use():
    code = """
import sys, types
from kong_pyg.cli import defer_import
assert defer_import("torch._dynamo")
assert not defer_import("torch._dynamo")            # already there (the stand-in)
assert not defer_import("torch._no_such_module")     # nothing to defer
import torch, torch_geometric                        # PyG imports torch._dynamo: the stand-in answers
stub = sys.modules["torch._dynamo"]
assert type(stub).__name__ == "_Deferred", type(stub)
import inspect, torch_geometric.isinstance as pyg_isinstance
inspect.getmodule(pyg_isinstance.is_torch_instance.__code__)   # scans every module's __file__: no load
assert sys.modules["torch._dynamo"] is stub
from torch_geometric.isinstance import is_torch_instance
assert is_torch_instance(torch.nn.Linear(1, 1), torch.nn.Linear)   # reads OptimizedModule: loads it
real = sys.modules["torch._dynamo"]
assert type(real) is types.ModuleType and torch._dynamo is real
assert stub.OptimizedModule is real.OptimizedModule  # the stand-in forwards
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_import_pyg_leaves_no_stand_in():
    # after import_pyg, torch._dynamo is PyTorch's own lazy import: submodules and settings as usual
    code = """
import sys, types
from kong_pyg.cli import import_pyg
import_pyg()
assert "torch_geometric" in sys.modules and "torch._dynamo" not in sys.modules
import torch._dynamo.config
torch._dynamo.config.recompile_limit = 1234
import torch._dynamo.eval_frame as ef
assert ef.config is torch._dynamo.config and ef.config.recompile_limit == 1234
assert type(sys.modules["torch._dynamo"]) is types.ModuleType
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_the_program_runs_without_dynamo():
    code = ("import sys, json; from kong_pyg.cli import main; "
            "sys.argv = ['kong-pyg', 'classify', '--grid', 'quick', '--repeats', '1', '--folds', '3', "
            "'--protocol', 'paper', '--quiet', '--jobs', '1', '--json']; rc = main(); "
            "print(rc, 'torch._dynamo' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    *out, last = done.stdout.strip().splitlines()
    assert last == "0 False"
    result = json.loads("\n".join(out))
    assert len(result["settings"]) == 4 and 0.5 < result["accuracy_mean"] <= 1.0


def test_order_test_reports_no_warning_of_a_dependency(tmp_path):
    # a fresh process: PyG's own import-time warnings must not be recorded as the run's
    done = subprocess.run([sys.executable, "-m", "kong_pyg", "order-test", "--provenance", "0",
                           "--num-graphs", "60", "--splits", "3", "--shuffles", "2", "--json", "--quiet"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["info"]["warnings"] == []


def test_python_dash_m_runs_the_command_line():
    done = subprocess.run([sys.executable, "-m", "kong_pyg", "--version"], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("kong-pyg ")


# -- values -----------------------------------------------------------------------------------


def test_recorded_out_paths_are_quoted_and_do_not_depend_on_the_folder(tmp_path, monkeypatch):
    import os
    import shlex

    from kong_pyg.cli.common import shown_path

    inner = tmp_path / "runs" / "out é 1"
    inner.mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert shown_path(str(inner)) == "'runs/out é 1'" and shlex.split(shown_path("runs/out é 1")) == [
        "runs/out é 1"]
    monkeypatch.chdir(inner)  # (above the current folder: absolute, not ../..)
    assert shlex.split(shown_path(str(tmp_path / "runs"))) == [str(tmp_path / "runs")]
    assert shown_path("x") == "x"

    def other_drive(path, start=os.curdir):  # (Windows: relpath raises for another drive)
        raise ValueError("path is on mount 'D:', start on mount 'C:'")

    monkeypatch.setattr(os, "name", "nt")  # (cmd.exe's quoting on Windows: double quotes)
    assert shown_path("x y") == '"x y"' and shown_path("x") == "x"
    monkeypatch.setattr(os, "name", "posix")
    monkeypatch.setattr(os.path, "relpath", other_drive)
    assert shown_path(str(tmp_path)) == shlex.quote(str(tmp_path))
    out = str(tmp_path / "a b")
    args = build_parser().parse_args(["table2", "--ml-dir", ".", "--curve-splits", "0", "--out", out])
    assert command_line(args).endswith("--out " + shlex.quote(out))
    from kong_pyg.cli import order_test

    args = build_parser().parse_args(["order-test", "--provenance", "1", "--out", out])
    assert order_test.command_line(args, "--provenance").endswith("--out " + shlex.quote(out))


def test_comma_lists_in_table2():
    args = build_parser().parse_args(["table2", "--methods", "K-1,K-2 shuffled", "--C", "0.1,1,10",
                                      "--fractions", "0.1,0.2", "--ml-dir", "."])
    assert args.methods == ["K-1", "K-2 shuffled"]
    assert args.C_grid == [0.1, 1.0, 10.0] and args.fractions == [0.1, 0.2]
    assert args.quiet is False  # progress bars are on by default
    line = command_line(args)
    assert "--methods 'K-1,K-2 shuffled'" in line and "--C 0.1,1,10" in line and "--fractions 0.1,0.2" in line
    assert "--root" not in line  # (with --ml-dir, --root is only where the processed copy goes)
    cached = command_line(build_parser().parse_args(["table2", "--root", "somewhere", "--curve-splits", "0"]))
    assert cached.startswith("kong-pyg table2 --root DIR ")  # (it was left out: the command did not run)
    defaults = build_parser().parse_args(["table2", "--progress"])  # the old flag: a no-op
    assert defaults.methods[:4] == ["K-1", "K-2", "K-2 consistent", "K-2 shuffled"]
    assert "K-2 authors" in defaults.methods
    assert defaults.ties == ["row", "authors"] and defaults.splits == 30
    assert defaults.C_grid == [0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0]
    assert defaults.fractions is None  # (the default fractions, set once --curve-splits is checked)


def test_grid_values_in_classify():
    args = build_parser().parse_args(["classify", "--degree", "1-3", "--relabel", "both", "--dim", "exact,64",
                                      "--blended", "no", "--kernel", "cosine", "--C", "1,10"])
    assert args.degree == [1, 2, 3] and args.relabel == [0, 1] and args.dim == [None, 64]
    assert args.blended == [False] and args.kernel == ["cosine"] and args.C == [1.0, 10.0]
    assert args.k is None and args.quiet is False  # absent: from --grid


def test_single_values_in_stream():
    args = build_parser().parse_args(["stream", "-", "--k", "3", "--blended", "--edge-labels", "no"])
    assert args.k == 3 and args.blended is True and args.edge_labels is False
    args = build_parser().parse_args(["stream", "-", "--no-edge-labels", "--blended", "no"])
    assert args.edge_labels is False and args.blended is False
    assert build_parser().parse_args(["stream", "-"]).k == 2


def test_worker_defaults_are_the_cores_given(monkeypatch):
    import kong_pyg.memory as memory
    import kong_pyg.threads as threads
    from kong_pyg.cli.classify import PROCESS_MEMORY

    monkeypatch.setattr(memory, "available_memory", lambda device=None: None)  # not this machine's
    monkeypatch.setattr(threads, "available_cores", lambda: 3)
    assert threads.default_jobs() == 3
    monkeypatch.setattr(threads, "available_cores", lambda: 64)
    assert threads.default_jobs() == threads.MAX_DEFAULT_JOBS == 8
    assert threads.default_jobs(4 << 30) == 8  # memory unknown: the cores
    monkeypatch.setattr(threads, "available_cores", lambda: 2)
    parser = build_parser()  # the defaults are read when the parser is built
    assert parser.parse_args(["classify"]).jobs == 2
    assert parser.parse_args(["table2"]).threads == 2
    assert parser.parse_args(["order-test"]).threads == 2
    assert parser.parse_args(["classify", "--jobs", "1"]).jobs == 1
    monkeypatch.setattr(memory, "available_memory", lambda device=None: 9 << 30)
    assert threads.default_jobs(4 << 30) == 2 and threads.default_jobs() == 2
    monkeypatch.setattr(threads, "available_cores", lambda: 8)
    assert threads.default_jobs(4 << 30) == 2 and threads.default_jobs() == 8
    monkeypatch.setattr(memory, "available_memory", lambda device=None: 3 * PROCESS_MEMORY - 1)
    assert build_parser().parse_args(["classify"]).jobs == 2  # one process per PROCESS_MEMORY available
    monkeypatch.setattr(memory, "available_memory", lambda device=None: 1 << 30)
    assert threads.default_jobs(4 << 30) == 1  # at least one
    with pytest.raises(ValueError, match="'memory_per_worker' must be a positive number of bytes"):
        threads.default_jobs(0)


def test_jobs_are_processes_and_threads_are_threads_in_every_command(capsys):
    """One meaning per name: ``--jobs`` is processes (classify), ``--threads`` threads of one process.

    ``table2 --jobs`` (its solver threads) was renamed ``--threads``; the old name still works, hidden
    from the help, with a warning.
    """
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    for name, helps in [("classify", {"--jobs": "processes"}), ("table2", {"--threads": "threads"}),
                        ("order-test", {"--threads": "threads"}), ("stream", {"--threads": "threads",
                                                                             "--workers": "processes"})]:
        options = {o: a for a in sub[name]._actions for o in a.option_strings if a.help != argparse.SUPPRESS}
        for option, word in helps.items():
            assert word in options[option].help.split(" (")[0], (name, option)
        other = {"--jobs": "--threads", "--threads": "--jobs"}
        for option in helps:
            if option in other:
                assert other[option] not in options, (name, other[option])
    assert "--jobs" not in sub["table2"].format_help()
    capsys.readouterr()
    args = parser.parse_args(["table2", "--jobs", "3"])
    assert args.threads == 3 and not hasattr(args, "jobs")
    assert "kong-pyg table2: warning: --jobs is now --threads" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parser.parse_args(["table2", "--jobs", "0"])
    assert "argument --jobs: must be >= 1" in capsys.readouterr().err


def test_available_memory_honours_a_cgroup_limit(tmp_path, monkeypatch):
    import kong_pyg.memory as memory

    monkeypatch.setattr(memory, "CGROUP_DIR", str(tmp_path))
    assert memory._cgroup_memory_left() is None  # no cgroup files
    (tmp_path / "memory.max").write_text("max\n")
    (tmp_path / "memory.current").write_text("1000\n")
    assert memory._cgroup_memory_left() is None  # no limit: the host's memory
    (tmp_path / "memory.max").write_text(f"{(3 << 20) + 1000}\n")
    assert memory._cgroup_memory_left() == 3 << 20
    assert memory.available_memory() == 3 << 20  # below any host's MemAvailable
    (tmp_path / "memory.current").write_text(f"{5 << 20}\n")
    assert memory.available_memory() == 0


def test_available_memory_honours_an_address_space_limit(tmp_path, monkeypatch):
    import resource

    import kong_pyg.memory as memory

    monkeypatch.setattr(memory, "CGROUP_DIR", str(tmp_path))  # (no cgroup limit)
    assert memory._address_space_left() is None or resource.getrlimit(resource.RLIMIT_AS)[0] >= 0
    with open("/proc/self/status") as f:
        size = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    monkeypatch.setattr(resource, "getrlimit", lambda which: (size + (1 << 30), resource.RLIM_INFINITY))
    left = memory.available_memory()  # (ulimit -v: once refused only by the allocator itself)
    assert left is not None and (1 << 30) - (64 << 20) < left <= 1 << 30
    with pytest.raises(ValueError, match="needs 2.0 GiB, only 1.0 GiB are available"):
        memory.check_allocation(2 << 30, "the test")

# -- errors: one line, exit 2, no traceback, before any work -----------------------------------


@pytest.fixture
def no_work(monkeypatch):
    """Fail loudly if a command gets past its checks."""
    def boom(*args, **kwargs):
        raise AssertionError("the command started working")

    monkeypatch.setattr("kong_pyg.datasets.tu.load_tu", boom)
    monkeypatch.setattr("kong_pyg.datasets.movielens.MovieLensOrdered", boom)
    monkeypatch.setattr("kong_pyg.datasets.streamspot.StreamSpotReader", boom)


def error_cases(tmp, a_file):
    stream = tmp / "s.tsv"
    stream.write_text("1\t2\t3\t4\t5\t6\n")
    (tmp / "taken.npy").mkdir()
    return [
        (["classify", "--repeats", "x"], "argument --repeats: expects an integer"),
        (["classify", "--k", "0"], "argument --k: 'k' must be >= 1"),
        (["classify", "--kernel", "poly,rbf"], "'kernel' must be one of"),
        (["classify", "--C", "1,-1"], "argument --C: must be > 0"),
        (["classify", "--method", "nope"], "argument --method: invalid choice"),
        (["classify", "--dataset", "X", "--data-root", str(tmp / "missing")], "no such folder"),
        (["classify", "--dataset", "X", "--data-root", str(a_file)], "is a file, not a folder"),
        (["classify", "--cache-dir", str(a_file)], "is a file, not a folder"),
        (["classify", "--plot", str(tmp)], "--plot: "),
        (["classify", "--plot", str(a_file / "x.png")], "cannot create a folder under"),
        (["classify", "--plot", str(tmp / "x.nope")], "unknown image format 'nope'"),
        (["classify", "--unknown"], "unrecognized arguments: --unknown"),
        (["classify", "--device", "gpu7"], "'--device' must be a device string such as 'cpu' or 'cuda:0'"),
        (["table2", "--ml-dir", str(tmp / "missing")], "no such folder"),
        (["table2", "--ml-dir", str(a_file)], "is a file, not a folder"),
        (["table2", "--ml-dir", str(tmp), "--out", str(a_file)], "is a file, not a folder"),
        (["table2", "--ml-dir", str(tmp), "--out", str(a_file / "sub")], "cannot create a folder under"),
        (["table2", "--ml-dir", str(tmp), "--root", str(a_file)], "is a file, not a folder"),
        (["table2", "--methods", "K-1,nope"], "unknown value 'nope'"),
        (["table2", "--test-size", "1.5"], "must be in (0, 1)"),
        (["table2", "--C", "1 10"], "argument --C: expects a number"),
        (["table2"], "give --ml-dir"),
        (["table2", "--ml-dir", str(tmp), "--device", "gpu7"], "'--device' must be a device string"),
        (["stream", str(tmp / "missing.tsv")], "no such file"),
        (["stream", str(tmp)], "is a folder, not a file"),
        (["stream", str(stream), "--k", "0"], "'k' must be >= 1"),
        (["stream", str(stream), "--blended", "maybe"], "expects yes or no"),
        (["stream", str(stream), "--dim", "exact"], "--dim exact: a stream keeps sketches"),
        (["stream", str(stream), "--out", str(tmp / "taken")], "is a folder, not a file"),
        (["stream", str(stream), "--out", str(a_file / "feat")], "cannot create a folder under"),
        (["stream", str(stream), "--checkpoint", str(tmp)], "--checkpoint: "),
        (["stream", str(stream), "--checkpoint-every", "3"], "--checkpoint-every needs --checkpoint FILE"),
        (["stream", str(stream), "--distributed", "--workers", "2"], "--distributed and --workers: torchrun"),
        (["classify", "--C", "1,1"], "--C: lists 1 twice"),
        (["classify", "--dim", "exact,none"], "--dim: lists one value twice, as exact and none (in"),
    ]


def test_errors_are_one_line_with_exit_2(files, capsys, no_work):
    pytest.importorskip("matplotlib")
    tmp, a_file = files
    for argv, message in error_cases(tmp, a_file):
        rc = main(argv)
        out, err = capsys.readouterr()
        assert rc == 2, (argv, err)
        assert out == "" and "Traceback" not in err, argv
        assert err.count("\n") == 1 and err.startswith(f"kong-pyg {argv[0]}: error: "), (argv, err)
        assert message in err, (argv, err)


def test_stream_output_checked_before_reading(files, capsys, monkeypatch):
    tmp, a_file = files
    from kong_pyg.datasets import synthetic_event_stream, write_streamspot

    stream, _ = synthetic_event_stream(4, seed=1)
    path = tmp / "s.tsv"
    write_streamspot(stream, path)
    out = tmp / "new" / "feat"  # a missing folder is made
    assert main(["stream", str(path), "--out", str(out), "--dim", "16", "-q"]) == 0
    assert np.load(str(out) + ".npy").shape == (4, 16)
    capsys.readouterr()
    # an output that fails half-way (here: the ids) leaves the earlier pair, both files, untouched
    before = {p: p.read_bytes() for p in (tmp / "new").iterdir()}
    real = np.save

    def save_then_fail(f, x):
        real(f, x)
        raise OSError("disk full")

    monkeypatch.setattr(np, "save", save_then_fail)
    assert main(["stream", str(path), "--out", str(out), "--dim", "8", "-q"]) == 2
    assert {p: p.read_bytes() for p in (tmp / "new").iterdir()} == before
    assert "disk full" in capsys.readouterr().err
    monkeypatch.setattr(np, "save", real)
    # stopped while the second file is flushed to disk: still the earlier pair (the ids were renamed first)
    calls = []
    real_fsync = os.fsync

    def fsync_then_stop(fd):
        calls.append(fd)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync_then_stop)
    with pytest.raises(KeyboardInterrupt):
        main(["stream", str(path), "--out", str(out), "--dim", "8", "-q"])
    assert {p: p.read_bytes() for p in (tmp / "new").iterdir()} == before


def test_distributed_outside_torchrun_says_how_to_start_it(files, capsys, monkeypatch):
    tmp, _ = files
    (tmp / "s.tsv").write_text("1\ta\t2\tb\te\tg\n")
    for var in ("RANK", "WORLD_SIZE", "MASTER_ADDR"):
        monkeypatch.delenv(var, raising=False)
    assert main(["stream", str(tmp / "s.tsv"), "--distributed", "--out", str(tmp / "o")]) == 2
    err = capsys.readouterr().err
    assert "started by torchrun" in err and "torchrun --nproc-per-node N -m kong_pyg stream" in err


def test_progress_bar_counts_fits(capsys):
    from kong_pyg import cross_validate

    y = np.array([0, 1] * 10)
    X = np.c_[y + 0.1 * np.arange(20) % 3, np.ones(20)]
    cv = cross_validate([X, X[:, ::-1]], y, repeats=2, folds=2, inner_folds=2, C=[1.0, 10.0], progress=True)
    err = capsys.readouterr().err
    assert cv.fits == 2 * 2 * (2 * 2 + 2 * 2 * 2)
    assert f"{cv.fits}/{cv.fits}" in err and "fit" in err


def test_the_program_tunes_glibc_malloc(monkeypatch):
    """The program sets the two malloc thresholds through mallopt (glibc, Linux), and leaves them alone
    where the user set MALLOC_* variables or the C library is not glibc."""
    import ctypes

    import kong_pyg.cli as cli
    import kong_pyg.memory as memory

    assert cli.tune_allocator is memory.tune_allocator  # one function, the library's

    calls = []

    class FakeLibc:
        gnu_get_libc_version = object()

        def mallopt(self, param, value):
            calls.append((param, value))
            return 1

    monkeypatch.setattr(ctypes, "CDLL", lambda name: FakeLibc())
    monkeypatch.setattr(memory, "_glibc_malloc_in_use", lambda libc: True)
    monkeypatch.setattr(memory.sys, "platform", "linux")
    for key in [k for k in os.environ if k.startswith("MALLOC_") or k == "GLIBC_TUNABLES"]:
        monkeypatch.delenv(key)
    assert cli.tune_allocator() is True
    assert calls == [(-3, 32 << 20), (-1, 128 << 20)]
    calls.clear()
    monkeypatch.setenv("MALLOC_ARENA_MAX", "2")  # another setting: still tuned
    assert cli.tune_allocator() is True and len(calls) == 2
    calls.clear()
    for key, value in [("MALLOC_TRIM_THRESHOLD_", "0"), ("MALLOC_MMAP_THRESHOLD_", "65536"),
                       ("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=0"),
                       ("GLIBC_TUNABLES", "glibc.cpu.x86_shstk=0:glibc.malloc.mmap_threshold=1")]:
        monkeypatch.setenv(key, value)  # the user chose a threshold: left alone
        assert cli.tune_allocator() is False and calls == [], key
        monkeypatch.delenv(key)
    monkeypatch.setattr(memory, "_glibc_malloc_in_use", lambda libc: False)  # jemalloc, tcmalloc
    assert cli.tune_allocator() is False and calls == []
    monkeypatch.setattr(memory, "_glibc_malloc_in_use", lambda libc: True)

    class Musl:
        def mallopt(self, param, value):
            calls.append((param, value))
            return 1

    monkeypatch.setattr(ctypes, "CDLL", lambda name: Musl())
    assert cli.tune_allocator() is False and calls == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc on Linux")
def test_tune_allocator_applies_on_this_machine():
    code = "import os; from kong_pyg import tune_allocator; print(tune_allocator())"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=60)
    import platform

    expected = "True" if platform.libc_ver()[0] == "glibc" else "False"
    assert done.stdout.strip() == expected, done.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("gcc") is None,
                    reason="glibc on Linux, and a C compiler")
def test_tune_allocator_leaves_another_malloc_alone(tmp_path):
    """Under LD_PRELOAD of another malloc (here a shim that forwards to glibc's), mallopt would not
    reach the allocator in use: tune_allocator says False."""
    import platform

    if platform.libc_ver()[0] != "glibc":
        pytest.skip("glibc only")
    src = tmp_path / "shim.c"
    src.write_text("#include <stddef.h>\nextern void *__libc_malloc(size_t);\n"
                   "void *malloc(size_t n) { return __libc_malloc(n); }\n")
    lib = tmp_path / "shim.so"
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True, timeout=60)
    code = "import kong_pyg; print(kong_pyg.tune_allocator())"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    for preload, expected in ((None, "True"), (str(lib), "False")):
        run_env = dict(env, LD_PRELOAD=preload) if preload else env
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                              env=run_env, timeout=60)
        assert done.stdout.strip() == expected, (preload, done.stderr)


_FAULTS = """
import resource, sys
import numpy as np
if sys.argv[1] == "tuned":
    import kong_pyg
    assert kong_pyg.tune_allocator()
def rounds(n):  # four 8 MiB temporaries alive at once, then freed, as a chain of tensor operations does
    for _ in range(n):
        parts = [np.ones(1 << 20) for _ in range(4)]
        del parts
rounds(3)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
rounds(10)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc on Linux")
def test_tune_allocator_keeps_freed_memory_for_reuse():
    """What the settings are for: with glibc's defaults freed temporaries go back to the system and
    are faulted in again at every reuse; after tune_allocator() they stay with the process."""
    import platform

    if platform.libc_ver()[0] != "glibc":
        pytest.skip("glibc only")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}

    def faults(mode):
        done = subprocess.run([sys.executable, "-c", _FAULTS, mode], capture_output=True, text=True,
                              cwd=ROOT, env=env, timeout=60)
        assert done.returncode == 0, done.stderr
        return int(done.stdout)

    default, tuned = faults("default"), faults("tuned")
    assert default > 10 * 1024  # most of an 8 MiB block (2,048 pages) faulted in again per round
    assert tuned < default // 20


def test_one_progress_bar_for_fits_graphs_and_edges(capsys):
    """One Progress class: the evaluation's (fits), the feature maps' (graphs) and the stream's (edges,
    counted again from zero in every pass, under the pass's label)."""
    import torch
    from torch_geometric.data import Data

    import kong_pyg.evaluation.progress as evaluation_progress
    import kong_pyg.progress as progress
    from kong_pyg import KongStream, KongVectorizer
    from kong_pyg.datasets import synthetic_event_stream

    assert evaluation_progress.Progress is progress.Progress
    bar = progress.Progress(None, "pass 1", unit="edge", unit_scale=True)
    bar.update(1500)
    bar.restart("pass 2/2")
    assert bar.done == 0 and bar.total is None
    bar.update(7)
    bar.close()
    assert bar.done == 7 and "pass 2/2" in capsys.readouterr().err

    stream, _ = synthetic_event_stream(20)
    KongStream(k=2, hops=2, dim=32).fit(stream, progress=True)
    err = capsys.readouterr().err
    assert "pass 2/2" in err and "edge" in err
    assert stream.num_edges < 1000
    assert f"{stream.num_edges}/{stream.num_edges}" in err  # the last pass's bar counts every edge

    g = Data(x=torch.tensor([0, 1, 2]), edge_index=torch.tensor([[1, 2], [0, 0]]))
    KongVectorizer(k=2, hops=1, progress=True).fit_transform([g, g, g])
    err = capsys.readouterr().err
    assert "KONG features" in err and "3/3" in err


def test_warnings_are_one_line(tmp_path):
    from tu_helpers import paths_and_stars, write_tu

    graphs, classes = paths_and_stars(12)
    write_tu(tmp_path / "data", "NOLAB", graphs, classes)  # no node labels: degrees are used, with a warning
    argv = ["classify", "--dataset", "NOLAB", "--data-root", str(tmp_path / "data"), "--cache-dir",
            str(tmp_path / "cache"), "--grid", "quick", "--repeats", "1", "--folds", "3",
            "--inner-folds", "2", "--quiet"]
    done = subprocess.run([sys.executable, "-m", "kong_pyg", *argv], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ("kong-pyg classify: warning: data set 'NOLAB' has no node labels "
                           "(NOLAB_node_labels.txt); using node degrees as labels (NoNodeLabelsWarning)\n")


def test_ctrl_c_is_one_line_and_status_130(tmp_path):
    # the program (argv from the command line): no traceback; a caller of main(argv) gets the exception
    import subprocess
    import sys

    code = ("import sys, kong_pyg.cli as c, kong_pyg.cli.stream as s\n"
            "def stop(args):\n    raise KeyboardInterrupt\n"
            "s.run = stop\nsys.argv = ['kong-pyg', 'stream', 'x.tsv']\nsys.exit(c.main())\n")
    (tmp_path / "x.tsv").write_text("1\ta\t2\tb\te\tg\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 130
    assert done.stderr.strip() == "kong-pyg stream: interrupted" and "Traceback" not in done.stderr


def test_reports_and_figures_are_written_whole_or_not_at_all(tmp_path):
    """A write that fails midway (here: a 4 KiB file-size limit, as a full disk would) leaves the earlier
    report, its JSON and its figure as they were: table2's and order-test's Markdown and JSON, and the
    figures of classify --plot, table2 and order-test (the plain writes left a cut file behind)."""
    import subprocess
    import sys

    pytest.importorskip("matplotlib")
    md, js, png = tmp_path / "r.md", tmp_path / "r.json", tmp_path / "f.png"
    for f in (md, js, png):
        f.write_bytes(b"old " + f.name.encode())
    code = f"""
import resource, signal
from kong_pyg.files import atomic_texts
from kong_pyg.evaluation.plots import pyplot, save_figure
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
for step in ("texts", "figure"):
    try:
        if step == "texts":
            atomic_texts([({str(md)!r}, "x" * 100), ({str(js)!r}, "y" * 10000)])
        else:
            fig = pyplot().figure(figsize=(8, 8)); fig.gca().plot(range(1000), range(1000))
            save_figure(fig, {str(png)!r}, dpi=150)
        print(step, "written")
    except OSError as err:
        print(step, "failed", err.errno)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split("\n")[:2] == ["texts failed 27", "figure failed 27"], out.stdout + out.stderr
    for f in (md, js, png):
        assert f.read_bytes() == b"old " + f.name.encode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.png", "r.json", "r.md"]  # (no temporary left)


def test_reports_naming_an_undecodable_file_name_are_written(tmp_path):
    """A folder or file name with a byte the locale cannot decode (a Latin-1 'ä' in UTF-8: a lone
    surrogate in Python) went into the report's command line and failed its write after the whole run
    ("surrogates not allowed"); the order test's figure title failed in matplotlib. Such characters are
    written as escapes."""
    from kong_pyg.files import atomic_texts, printable

    name = os.fsdecode(b"t\xe4")  # ('t\udce4')
    folder = tmp_path / name
    folder.mkdir()
    atomic_texts([(folder / "r.md", f"--out {name}\n"), (folder / "r.json", json.dumps({"out": name}))])
    assert (folder / "r.md").read_text(encoding="utf-8") == "--out t\\udce4\n"
    assert json.loads((folder / "r.json").read_text(encoding="utf-8")) == {"out": name}
    assert printable("Order test: StreamSpot file " + name) == "Order test: StreamSpot file t\\udce4"
    assert printable("ä ± −") == "ä ± −"


def test_the_order_test_figure_title_holds_no_lone_surrogates(tmp_path):
    """matplotlib refused a title naming an undecodable file (after the whole run); review."""
    import argparse
    from types import SimpleNamespace

    from kong_pyg.cli.order_test import _write

    titles = []
    res = SimpleNamespace(plot=lambda path, title: titles.append(title), info={"command": "kong-pyg"},
                          to_markdown=lambda heading: "table", to_dict=lambda: {"a": 1})
    args = argparse.Namespace(out=str(tmp_path / "o"), no_plot=False)
    _write(res, args, {"data": "StreamSpot file " + os.fsdecode(b"G\xe4.txt")})
    assert titles == ["Order test: StreamSpot file G\\udce4.txt"]
    titles[0].encode("utf-8")


def test_inputs_that_differ_only_in_case_are_two_files_where_both_exist(tmp_path):
    """order-test --streamspot G.txt --labels g.txt --out DIR was refused as 'one file on a case-insensitive
    disk', though both exist and are two files (review); a new output named so is still refused."""
    from kong_pyg.cli.common import CommandError, check_distinct_files

    (tmp_path / "G.txt").write_text("a")
    (tmp_path / "g.txt").write_text("b")
    if os.path.samefile(tmp_path / "G.txt", tmp_path / "g.txt"):
        pytest.skip("a case-insensitive disk")
    check_distinct_files([("--streamspot", str(tmp_path / "G.txt")), ("--labels", str(tmp_path / "g.txt"))])
    with pytest.raises(CommandError, match="differ only in letter case"):
        check_distinct_files([("--in", str(tmp_path / "G.txt")), ("--out", str(tmp_path / "g.TXT"))])


def test_closed_descriptors_stay_filled_while_any_thread_runs_a_command(tmp_path):
    """Two threads calling main(argv) with stdout closed: the first one out closed descriptor 1 again while
    the other still ran, whose next file then became descriptor 1 (review)."""
    tsv = tmp_path / "s.tsv"
    tsv.write_text("1\ta\t2\tb\te\t0\n")
    code = f"""
import os, sys, threading, time
from kong_pyg.cli import main, stream
got = {{}}
def run(args):
    time.sleep(0.6 if threading.current_thread().name == "B" else 0.3)
    with open({str(tmp_path / "out.txt")!r} + threading.current_thread().name, "w") as f:
        got[threading.current_thread().name] = f.fileno()
    return 0
stream.run = run
threads = [threading.Thread(target=main, args=(["stream", {str(tsv)!r}],), name=n) for n in "AB"]
threads[0].start(); time.sleep(0.1); threads[1].start()
for t in threads:
    t.join()
sys.exit(0 if min(got.values()) > 2 and len(got) == 2 else 1)
"""
    done = subprocess.run(["bash", "-c", f'"{sys.executable}" -c "$0" >&-', code], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr


def test_closed_descriptors_and_streams_everywhere(tmp_path, monkeypatch):
    """With stdin and stdout closed the null sink took descriptor 0 and the run's next file became
    descriptor 1; `stream -` with stdin closed was an AttributeError; a caller of main(argv) or a library
    user with stderr closed crashed in tqdm (review)."""
    tsv = tmp_path / "s.tsv"
    tsv.write_text("1\ta\t2\tb\te\t0\n")
    for how in ("sys.argv = ['kong-pyg', 'stream', TSV]\ncode = main()",  # (the program)
                "code = main(['stream', TSV])"):  # (a caller of main(argv): review)
        code = (f"import os, sys\nfrom kong_pyg.cli import main, stream\n"
                f"def run(args):\n    with open({str(tmp_path / 'fd.txt')!r}, 'w') as f:\n"
                f"        f.write(str(f.fileno()))\n    return 0\n"
                f"stream.run = run\n{how.replace('TSV', repr(str(tsv)))}\n"
                f"try:\n    os.fstat(1)\nexcept OSError:\n    sys.exit(code)\nsys.exit(9)\n")
        done = subprocess.run(["bash", "-c", f'"{sys.executable}" -c "$0" <&- >&-', code],
                              capture_output=True, text=True)
        assert done.returncode == 0, (how, done.stderr)  # (9: descriptor 1 left filled after main)
        assert int((tmp_path / "fd.txt").read_text()) > 2
    done = subprocess.run(["bash", "-c", f'"{sys.executable}" -m kong_pyg stream - -o "{tmp_path}/x" -q <&-'],
                          capture_output=True, text=True)
    closed = "kong-pyg stream: error: '-' reads stdin, which is closed: give the input file\n"
    assert done.returncode == 2 and done.stderr == closed, done.stderr
    from kong_pyg import KongVectorizer
    from kong_pyg.cli import main

    monkeypatch.setattr(sys, "stderr", None)
    assert main(["stream", str(tsv), "-o", str(tmp_path / "y")]) == 0 and sys.stderr is None
    from kong_pyg.datasets import load_tu

    graphs = list(load_tu("MUTAG"))[:5]
    assert KongVectorizer(progress=True).fit_transform(graphs).shape[0] == 5


def test_out_of_memory_is_one_line(monkeypatch, capsys):
    """A subcommand that runs out of memory (NumPy's error says how much it asked for) ends with one line and
    exit status 2, not a traceback (order-test --num-graphs 99999999999 gave one)."""
    import numpy as np

    from kong_pyg.cli import main, order_test

    def run(args):
        np.empty(1 << 62, dtype=np.uint8)  # (NumPy refuses it without touching memory)

    monkeypatch.setattr(order_test, "run", run)
    assert main(["order-test", "-q"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("kong-pyg order-test: error: out of memory: Unable to allocate"), err


def test_an_overflow_with_workers_is_the_one_process_error(tmp_path):
    """kong-pyg stream --workers 2 on a stream whose sketches overflow says what one process says (it said
    "invalid KongStream state: 'rows' must be finite torch.float64 of shape (1, 4) (got torch.float64 (1, 4))"
    for the linear map and "array 'acc' holds values that are not finite" for cosine)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[1])  # (this checkout, whatever is installed)
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    (tmp_path / "star.tsv").write_text("".join(f"0\ta\t{i}\tb\te\tg\n" for i in range(1, 200)))
    for extra in ([], ["--kernel", "cosine"]):
        args = [sys.executable, "-m", "kong_pyg", "stream", "star.tsv", "--k", "1", "--hops", "300", "--dim",
                "4", "--float64", "-q", "-o", "f"] + extra
        one = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
        two = subprocess.run(args + ["--workers", "2"], cwd=tmp_path, capture_output=True, text=True,
                             timeout=300, env=env)
        assert one.returncode == two.returncode == 2
        assert "overflowed float64: with hops=300" in one.stderr
        last = [p.stderr.strip().splitlines()[-1] for p in (one, two)]
        assert last[0] == last[1], (one.stderr, two.stderr)


def test_torch_out_of_memory_is_one_line(monkeypatch, capsys):
    """PyTorch's out-of-memory error is a RuntimeError with the allocator's C++ text: the command line ends
    with one line naming the size (it gave a traceback); another RuntimeError still raises."""
    import pytest
    import torch

    from kong_pyg.cli import _out_of_memory, main, order_test

    def run(args):
        torch.empty(1 << 50, dtype=torch.uint8)  # (1 PiB: the allocator refuses it at once)

    monkeypatch.setattr(order_test, "run", run)
    assert main(["order-test", "-q"]) == 2
    err = capsys.readouterr().err
    assert err == "kong-pyg order-test: error: out of memory: could not allocate 1,048,576.0 GiB\n", err
    assert _out_of_memory(RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to allocate "
                                       f"{40 << 20} bytes")) == "could not allocate 40.0 MiB"

    def other(args):
        raise RuntimeError("a bug, not the user's")

    monkeypatch.setattr(order_test, "run", other)
    with pytest.raises(RuntimeError, match="a bug"):
        main(["order-test", "-q"])


def test_stream_in_process_gives_back_the_thread_count_and_its_copy_of_stdin(tmp_path, monkeypatch, capsys):
    """main(["stream", ...]) left torch's thread count at --threads (success or error); a failure after the
    copy of stdin (a closed stderr for its notice, an interrupt while fingerprinting it) left the copy in
    the temporary folder."""
    import io
    import sys

    import torch

    from kong_pyg.cli import stream as stream_cli
    from kong_pyg.datasets import synthetic_event_stream, write_streamspot

    data = tmp_path / "s.tsv"
    write_streamspot(synthetic_event_stream(10, seed=1)[0], str(data))
    (tmp_path / "bad.tsv").write_text("a\tb\n")
    before = torch.get_num_threads()
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            assert main(["stream", str(data), "--out", str(tmp_path / f"o{threads}"), "--threads",
                         str(3 - threads), "-q"]) == 0
            assert torch.get_num_threads() == threads
            assert main(["stream", str(tmp_path / "bad.tsv"), "--strict", "--out", str(tmp_path / "b"),
                         "--threads", str(3 - threads), "-q"]) == 1
            assert torch.get_num_threads() == threads
    finally:
        torch.set_num_threads(before)
    spool = tmp_path / "tmp"
    spool.mkdir()
    monkeypatch.setenv("TMPDIR", str(spool))
    monkeypatch.setattr("tempfile.tempdir", None)

    class Stdin:
        buffer = io.BytesIO(data.read_bytes())

    class ClosedStderr(io.StringIO):
        def write(self, text):
            raise BrokenPipeError("stderr closed")

    monkeypatch.setattr(sys, "stdin", Stdin)
    monkeypatch.setattr(sys, "stderr", ClosedStderr())
    with pytest.raises(BrokenPipeError):
        stream_cli._spool_stdin(2, None)
    assert not list(spool.glob("kong-stream-*"))
    monkeypatch.undo()
    monkeypatch.setenv("TMPDIR", str(spool))
    monkeypatch.setattr("tempfile.tempdir", None)
    monkeypatch.setattr(sys, "stdin", type("Stdin", (), {"buffer": io.BytesIO(data.read_bytes())}))

    def interrupted(path):
        raise KeyboardInterrupt

    monkeypatch.setattr(stream_cli, "file_fingerprint", interrupted)
    with pytest.raises(KeyboardInterrupt):
        stream_cli.run(stream_cli_args(["stream", "-", "--hops", "2", "-q", "--out", str(tmp_path / "i")]))
    assert not list(spool.glob("kong-stream-*"))


def stream_cli_args(argv):
    """The parsed arguments of a kong-pyg command line."""
    from kong_pyg.cli import build_parser

    return build_parser().parse_args(argv)


def test_sigterm_while_stdin_is_spooled_leaves_no_copy(tmp_path):
    """kong-pyg stream - --hops 2 copies stdin to a temporary file; SIGTERM while it copies (or later) ends
    with one line and the shell's status for SIGTERM, and the copy is removed (it was left behind)."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[1])
    spool = tmp_path / "tmp"
    spool.mkdir()
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""), TMPDIR=str(spool))
    proc = subprocess.Popen([sys.executable, "-m", "kong_pyg", "stream", "-", "--hops", "2", "-q", "-o",
                             str(tmp_path / "f")], stdin=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    proc.stdin.write(b"0\ta\t1\tb\te\t0\n" * 1000)
    proc.stdin.flush()  # (the pipe stays open: the copy waits for more)
    deadline = time.monotonic() + 120
    while not list(spool.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(spool.iterdir()), "the copy of stdin was never begun"
    time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    proc.stdin.close()
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert err.decode().strip().endswith("kong-pyg stream: terminated"), err
    assert list(spool.iterdir()) == []


def test_a_copy_of_stdin_left_by_a_killed_run_is_removed_when_it_resumes(tmp_path):
    """With --checkpoint the copy lies next to the checkpoint; a run killed (SIGKILL) while it held the copy
    left it in the temporary folder for good, and every resumed run made another."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    ck = tmp_path / "ck"
    cmd = [sys.executable, "-m", "kong_pyg", "stream", "-", "--hops", "2", "-q", "-o", str(tmp_path / "f"),
           "--checkpoint", str(ck / "c.ckpt")]
    lines = b"".join(b"%d\ta\t%d\tb\te\t%d\n" % (i, i + 1, i % 3) for i in range(300))
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    proc.stdin.write(lines[:2000])
    proc.stdin.flush()  # (the pipe stays open: the copy waits for more)
    deadline = time.monotonic() + 120
    while not list(ck.glob(".c.ckpt.stdin.*.tsv")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(ck.glob(".c.ckpt.stdin.*.tsv")), "the copy of stdin was never begun next to the checkpoint"
    proc.kill()
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL and len(list(ck.glob(".c.ckpt.stdin.*.tsv"))) == 1
    done = subprocess.run(cmd, input=lines, stderr=subprocess.PIPE, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in ck.iterdir()) == ["c.ckpt"]


def test_a_failed_write_names_the_files(tmp_path):
    """A write that fails for want of space (here a 4 KiB file-size limit) names the files asked for: kong-pyg
    stream said "error: 2048 requested and 992 written" and no file."""
    import os
    import resource
    import signal
    import subprocess
    import sys
    from pathlib import Path

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    root = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    (tmp_path / "s.tsv").write_text("0\ta\t1\tb\te\t7\n1\tb\t2\ta\te\t8\n")
    args = [sys.executable, "-m", "kong_pyg", "stream", "s.tsv", "--dim", "1024", "-q", "-o", "f"]
    out = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env,
                         preexec_fn=limit)
    assert out.returncode == 2, out.stderr
    # (NumPy's error for a short write: "2048 requested and 992 written")
    assert out.stderr.startswith("kong-pyg stream: error: cannot write 'f.npy' and 'f.ids.txt': "), out.stderr
    assert out.stderr.endswith(" written (is the disk full?)\n") and out.stderr.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.tsv"]


def test_output_into_a_closed_pipe_ends_quietly(tmp_path):
    """kong-pyg classify --json | head -c 10: the reader goes early; the command ends with the shell's status
    for SIGPIPE and no message (it said "error: [Errno 32] Broken pipe" and exit 2)."""
    import signal
    import sys

    from helpers import into_closed_pipe

    args = ["classify", "--grid", "quick", "--repeats", "1", "--folds", "3", "-q", "--json"]
    for status, stderr in into_closed_pipe([sys.executable, "-m", "kong_pyg", *args], tmp_path):
        assert status == 128 + signal.SIGPIPE and stderr == "", stderr


def test_a_closed_stdout_or_stderr_is_a_sink(tmp_path):
    """Started with stdout closed (>&-), a finished run ended with an AttributeError traceback and exit 1;
    with stderr closed, progress bars stopped the run and quiet runs printed their stderr lines on stdout."""
    tsv = tmp_path / "s.tsv"
    tsv.write_text("1\ta\t2\tb\te\t0\n2\ta\t3\tb\te\t0\n")
    cmd = f'"{sys.executable}" -m kong_pyg stream "{tsv}" -o "{tmp_path}/OUT"'
    for i, (extra, closes) in enumerate((("-q", ">&-"), ("", ">&-"), ("", "2>&-"), ("-q", "2>&-"),
                                          ("", ">&- 2>&-"))):
        done = subprocess.run(["bash", "-c", f"{cmd.replace('OUT', str(i))} {extra} {closes}"],
                              capture_output=True, text=True)
        assert done.returncode == 0, (closes, done.stderr)
        assert (tmp_path / f"{i}.npy").exists() and (tmp_path / f"{i}.ids.txt").exists()
        if "2>&-" in closes:
            assert done.stdout == ""  # (stderr's lines went to stdout)
        if closes == ">&-" and not extra:
            assert "kong-pyg stream: 2 edges" in done.stderr and "Traceback" not in done.stderr


def test_a_broken_pipe_that_is_not_stdout_is_one_line(monkeypatch, capsys):
    """A broken pipe elsewhere (not the output's reader gone) is an error of one line, exit 2."""
    from kong_pyg.cli import main, order_test

    def run(args):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(order_test, "run", run)
    assert main(["order-test", "-q"]) == 2
    assert capsys.readouterr().err == "kong-pyg order-test: error: [Errno 32] Broken pipe\n"


def test_sigterm_ends_the_workers_of_a_sharded_stream(tmp_path):
    """kong-pyg stream --workers 2 ended by SIGTERM ends its worker processes too (they ran on alone and
    printed their errors after the command had ended)."""
    import os
    import random
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    if not os.path.isdir("/proc/self"):
        pytest.skip("reads child processes from /proc")
    rng = random.Random(0)
    with open(tmp_path / "s.tsv", "w") as f:
        for _ in range(400_000):
            a, b = rng.randrange(5000), rng.randrange(5000)
            f.write(f"{a}\tt{a % 3}\t{b}\tt{b % 3}\te\t{rng.randrange(50)}\n")
    root = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    args = ["stream", "s.tsv", "--workers", "2", "--hops", "3", "-q", "-o", "f"]
    proc = subprocess.Popen([sys.executable, "-m", "kong_pyg"] + args, cwd=tmp_path, env=env,
                            stderr=subprocess.PIPE, text=True)

    def children():
        found = []
        for entry in os.listdir("/proc"):
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[1]) == proc.pid:
                found.append(int(entry))
        return found

    deadline = time.monotonic() + 120
    while len(children()) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = children()
    assert len(workers) >= 2 and proc.poll() is None, "the workers never started"
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert err.strip() == "kong-pyg stream: terminated", err
    for pid in workers:
        assert not os.path.exists(f"/proc/{pid}"), f"worker {pid} still runs"


@pytest.fixture
def default_sigint():
    """Python's own SIGINT handler for the test: a shell starts background jobs (``cmd &``, ``nohup``) with
    SIGINT ignored, which the tests of handlers given back would read as the caller's."""
    import signal

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_workers_started_before_an_interrupt_end_too(monkeypatch, default_sigint):
    """SIGTERM or Ctrl-C while the --workers are being started: those already started end as well (the
    interrupt came before the command had their handles, and they ran on alone); other children of the
    caller, even ones started meanwhile, are left alone; the handlers are given back."""
    import argparse
    import multiprocessing
    import os
    import signal
    import time

    import torch.multiprocessing as mp

    from kong_pyg.cli import stream as stream_cli

    class Stop(Exception):
        pass

    def stop(signum, frame):
        raise Stop

    fork = multiprocessing.get_context("fork")
    started, others = [], []

    class Context:
        processes = started

        def join(self):
            raise AssertionError("the interrupt comes before the workers are waited for")

    ready = fork.Event()

    def work():  # (as _local_worker begins)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        ready.set()
        time.sleep(120)

    def start_processes(fn, args=(), nprocs=1, **kwargs):
        worker = fork.Process(target=work)
        worker.start()
        started.append(worker)
        assert ready.wait(60)
        meanwhile = fork.Process(target=time.sleep, args=(120,))  # (the caller's, from another thread)
        meanwhile.start()
        others.append(meanwhile)
        os.kill(os.getpid(), signal.SIGTERM)  # (the interrupt, while they start)
        time.sleep(0.1)
        return Context()

    theirs = fork.Process(target=time.sleep, args=(120,))  # (the caller's)
    theirs.start()
    monkeypatch.setattr(mp, "start_processes", start_processes)
    previous = signal.signal(signal.SIGTERM, stop)
    try:
        with pytest.raises(Stop):
            stream_cli._spawn_local(argparse.Namespace(workers=2))
        assert signal.getsignal(signal.SIGTERM) is stop
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        assert not started[0].is_alive() and started[0].exitcode == -signal.SIGTERM
        assert theirs.is_alive() and others[0].is_alive()
    finally:
        signal.signal(signal.SIGTERM, previous)
        for process in [theirs] + started + others:
            if process.is_alive():
                process.kill()
            process.join()


def test_workers_started_before_a_failed_start_end_and_workers_without_a_result_are_an_error(monkeypatch,
                                                                                             capsys,
                                                                                             default_sigint):
    """Starting the --workers fails part-way (a fork refused): those started end (they waited for their
    peers and held the command's exit); workers that end without their result (a Ctrl-C to one of them) are
    an error, not a wait for ever; workers of a parent that ignores SIGINT ignore it too."""
    import argparse
    import multiprocessing
    import signal
    import time

    import torch.multiprocessing as mp

    from kong_pyg.cli import stream as stream_cli

    fork = multiprocessing.get_context("fork")
    started, seen = [], []

    def failing(fn, args=(), nprocs=1, **kwargs):
        worker = fork.Process(target=time.sleep, args=(120,))
        worker.start()
        started.append(worker)
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(mp, "start_processes", failing)
    try:
        with pytest.raises(OSError):
            stream_cli._spawn_local(argparse.Namespace(workers=2))
        assert not started[0].is_alive()
    finally:
        for process in started:
            if process.is_alive():
                process.kill()
            process.join()

    class Ended:
        processes: list = []

        def join(self):
            return True

    def silent(fn, args=(), nprocs=1, **kwargs):  # every worker ends; one put its code
        seen.append(args[3])
        args[2].put(0)
        return Ended()

    monkeypatch.setattr(mp, "start_processes", silent)
    assert stream_cli._spawn_local(argparse.Namespace(workers=2)) == 1
    assert "1 of 2 processes ended without finishing" in capsys.readouterr().err
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        stream_cli._spawn_local(argparse.Namespace(workers=2))
    finally:
        signal.signal(signal.SIGINT, previous)
    assert seen == [False, True]


def test_the_program_gives_the_sigterm_handler_back(monkeypatch):
    """main() as the program installs its SIGTERM handler for its run only (it stayed: a later SIGTERM raised
    kong_pyg.cli.Terminated in the caller's code)."""
    import signal
    import sys

    from kong_pyg.cli import main, order_test

    monkeypatch.setattr(order_test, "run", lambda args: 0)
    monkeypatch.setattr(sys, "argv", ["kong-pyg", "order-test", "-q"])
    before = signal.getsignal(signal.SIGTERM)
    assert main() == 0
    assert signal.getsignal(signal.SIGTERM) is before


def test_the_command_lines_warning_lines_are_written_once_each():
    """Python's once-per-place rule forgets what it showed whenever a filter changes: the command's own
    showwarning writes a line once."""
    import io

    from kong_pyg.cli import _warning_line

    show, out = _warning_line("kong-pyg table2"), io.StringIO()
    same = "1 of 48 columns below 1e-06 (span 1.2e+06)"
    for message in (same, same, "4000 of 4096 columns below 1e-06 (span 3.4e+09)", "other"):
        show(UserWarning(message), UserWarning, "f.py", 1, out)
    assert out.getvalue().splitlines() == [
        "kong-pyg table2: warning: 1 of 48 columns below 1e-06 (span 1.2e+06) (UserWarning)",
        "kong-pyg table2: warning: 4000 of 4096 columns below 1e-06 (span 3.4e+09) (UserWarning)",
        "kong-pyg table2: warning: other (UserWarning)"]  # (other numbers: another warning, written)


@pytest.mark.parametrize("errors", ["strict", "surrogateescape"])  # (surrogateescape: a C locale's stdout)
def test_the_programs_stdout_escapes_what_its_encoding_lacks_and_gets_its_handler_back(monkeypatch, errors):
    """A results table with '±' on an ASCII or Latin-1 stdout failed the run at its very end (exit 2)."""
    import io

    import kong_pyg.cli.order_test as command
    from kong_pyg.cli import main

    def run(args):
        print("mean ± 95 % CI, true − consistent")
        return 0

    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="ascii", errors=errors)
    monkeypatch.delenv("PYTHONIOENCODING", raising=False)
    monkeypatch.setattr(command, "run", run)  # (the command's work, as the parser finds it)
    monkeypatch.setattr(sys, "argv", ["kong-pyg", "order-test", "--provenance", "0.5"])
    monkeypatch.setattr(sys, "stdout", out)
    assert main() == 0  # (the program itself: argv from sys.argv)
    out.flush()
    assert raw.getvalue() == b"mean \\xb1 95 % CI, true \\u2212 consistent\n"
    assert out.errors == errors  # (a caller of main gets its stdout's handler back)


def test_an_error_handler_the_user_chose_for_stdout_is_kept(monkeypatch):
    import io

    from kong_pyg.cli import _escape_unencodable

    monkeypatch.setenv("PYTHONIOENCODING", "ascii:strict")
    out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    _escape_unencodable(out)
    assert out.errors == "strict"


def test_yes_no_options_take_the_same_words_in_every_subcommand(tmp_path):
    """order-test took only yes/no where classify and stream take true/false and on/off too."""
    parser = build_parser()
    (tmp_path / "s.tsv").write_text("1\ta\t2\tb\te\t0\n")
    for command in (["order-test"], ["classify"], ["stream", str(tmp_path / "s.tsv")]):
        args = parser.parse_args(command + ["--blended", "OFF", "--own-label", " on "])
        assert (args.blended, args.own_label) in ((False, True), ([False], [True]))


def test_classify_passes_the_apis_defaults(monkeypatch):
    """The command's defaults are written beside its flags (the inner folds as a literal 5 in run()): a
    drift from classify()'s would silently change every nested number the command prints. Without
    options it passes classify()'s own defaults."""
    import kong_pyg.datasets.tu as tu
    import kong_pyg.evaluation.classify as ev
    from kong_pyg.cli.classify import run

    seen = {}

    class Stop(Exception):
        pass

    def fake_classify(graphs, **kw):
        seen.update(kw)
        raise Stop

    defaults = {name: p.default for name, p in inspect.signature(ev.classify).parameters.items()}
    monkeypatch.setattr(tu, "load_tu", lambda *a, **k: None)
    monkeypatch.setattr(ev, "classify", fake_classify)
    with pytest.raises(Stop):
        run(build_parser().parse_args(["classify", "--quiet"]))
    for name in ("method", "protocol", "repeats", "folds", "inner_folds", "nested_repeats", "seed",
                 "max_iter", "tol", "device"):
        assert seen.get(name, defaults[name]) == defaults[name], name  # (absent: the API's default)
    assert list(seen["C"]) == list(defaults["C"])


def test_flags_beat_a_preset_grid():
    """A flag replaces the preset's entry in every setting of a list preset (``--grid extended --k 3``):
    merged the other way round, the preset's k and kernels would be evaluated instead, silently."""
    from kong_pyg.cli.classify import grid_from_args
    from kong_pyg.evaluation.grid import GRID_PRESETS

    grid = grid_from_args(build_parser().parse_args(["classify", "--grid", "extended", "--k", "3",
                                                     "--kernel", "poly"]))
    assert len(grid) == len(GRID_PRESETS["extended"])
    assert {p["k"] for p in grid} == {3} and {p["kernel"] for p in grid} == {"poly"}
    assert {p["k"] for p in GRID_PRESETS["extended"]} == {1, 2}  # (the preset sets both)
