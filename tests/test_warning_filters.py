"""This package's warning filters and calls from several threads.

Before Python 3.14 ``warnings.catch_warnings`` saves the process-wide filter list on entry and puts that
copy back on exit: two threads' blocks that overlapped and ended out of order left one block's filter for
good. Loading TU data sets in threads left ``ignore`` for every warning in the process (a blanket filter
around NumPy's parser), as did stream checkpoints. TU parsing now sets no filter at all; the blocks that
remain ignore one kind of warning each, so the most an overlap can leave behind is that narrow filter.
"""
import threading
import warnings

import numpy as np
import pytest
import torch
from ml_fake import write_fake_ml100k


def _overlapping(run, module, name, monkeypatch, narrow=None):
    """Run :obj:`run` in two threads whose calls of :obj:`module.name` (inside the filtered block) overlap
    and end out of order (A enters, B enters, A ends, B ends); the filters must be as they were after both,
    but for the one narrow filter :obj:`narrow` (action, category) the block sets, if given."""
    original = getattr(module, name)
    entered = [threading.Event(), threading.Event()]
    release = [threading.Event(), threading.Event()]
    who = threading.local()

    def inside(*args, **kwargs):
        i = getattr(who, "i", None)  # (calls from the test's own thread pass straight on)
        if i is not None:
            entered[i].set()
            release[i].wait(10)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, inside)
    failures = []

    def thread(i):
        who.i = i
        try:
            run()
        except Exception as err:  # (the test is about the filters; a thread's own error is reported below)
            failures.append(err)

    with warnings.catch_warnings():  # (what the threads leave goes when the test ends)
        before = list(warnings.filters)
        a, b = (threading.Thread(target=thread, args=(i,)) for i in (0, 1))
        a.start()
        assert entered[0].wait(10)
        b.start()
        assert entered[1].wait(10)
        release[0].set()
        a.join(10)
        release[1].set()
        b.join(10)
        left = [f for f in warnings.filters if f not in before]
        assert all(f[0] == "ignore" and f[2] is narrow and narrow is not Warning for f in left), left
        assert [f for f in before if f not in warnings.filters] == []
    return failures


def test_tu_parsing_in_threads_sets_no_filter(monkeypatch):
    from kong_pyg.datasets import tu_raw

    out = []
    fails = _overlapping(lambda: out.append(tu_raw._parse("f", "1,2\n3,4\n")), np, "loadtxt", monkeypatch)
    assert not fails and all(np.array_equal(t, [[1, 2], [3, 4]]) for t in out) and len(out) == 2


def test_checkpoint_loads_in_threads_leave_no_blanket_filter(monkeypatch, tmp_path):
    import io

    from kong_pyg.stream import checkpoint

    buf = io.BytesIO()
    torch.save({"a": torch.ones(2)}, buf)
    raw = buf.getvalue()
    out = []
    load = checkpoint.load_state_file
    fails = _overlapping(lambda: out.append(load(io.BytesIO(raw), len(raw), "f")), torch, "load", monkeypatch,
                         narrow=UserWarning)
    assert not fails and len(out) == 2 and all(torch.equal(o["a"], torch.ones(2)) for o in out)


def test_liblinear_fits_in_threads_leave_no_blanket_filter(monkeypatch):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import LinearSVC

    from kong_pyg.evaluation.liblinear import fit_liblinear

    rng = np.random.default_rng(0)
    M, y = rng.normal(size=(30, 4)), np.arange(30) % 2
    train = np.ones((1, 30), dtype=bool)
    out = []
    fails = _overlapping(lambda: out.append(fit_liblinear(M, y, train, [1.0], max_iter=1)), LinearSVC,
                         "fit", monkeypatch, narrow=ConvergenceWarning)
    assert not fails and len(out) == 2 and (out[0].scores == out[1].scores).all()
    with warnings.catch_warnings(record=True) as caught:  # (the fits' ConvergenceWarning: still ignored)
        warnings.simplefilter("always")
        fit_liblinear(M, y, train, [1.0], max_iter=1)
    assert not caught


def test_read_ml100k_quiet_drops_ratings_without_a_warning(tmp_path):
    """table2's summary read the ratings again under a blanket filter to hide the warning about dropped
    ratings, given when the data set was processed; it asks for no warning now."""
    from kong_pyg.datasets.movielens import read_ml100k

    write_fake_ml100k(tmp_path, extra_lines=["999\t1\t5\t881250949"])
    with pytest.warns(UserWarning, match="dropped 1 rating"):
        loud = read_ml100k(str(tmp_path))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        quiet = read_ml100k(str(tmp_path), quiet=True)
    assert not caught and quiet.dropped == loud.dropped == 1
    assert torch.equal(quiet.user, loud.user) and torch.equal(quiet.time, loud.time)
    with pytest.raises(TypeError, match="quiet"):
        read_ml100k(str(tmp_path), quiet="yes")


def test_main_with_arguments_keeps_filters_added_while_it_runs(tmp_path, monkeypatch):
    """main(argv) saved the filter list on entry and put it back on exit, so a filter that another thread
    added while it ran was dropped; only the program (main() without arguments) changes showwarning, and
    only it saves and restores them now."""
    from kong_pyg.cli import main
    from kong_pyg.cli import stream as stream_cli
    from kong_pyg.datasets import synthetic_event_stream, write_streamspot

    data = tmp_path / "s.tsv"
    write_streamspot(synthetic_event_stream(5, seed=1)[0], str(data))
    made = stream_cli._make_stream

    def another_threads_filter(args):  # (as if another thread added it meanwhile)
        warnings.filterwarnings("ignore", message="a filter of another thread")
        return made(args)

    monkeypatch.setattr(stream_cli, "_make_stream", another_threads_filter)
    with warnings.catch_warnings():
        assert main(["stream", str(data), "--out", str(tmp_path / "o"), "-q"]) == 0
        assert any(getattr(f[1], "pattern", None) == "a filter of another thread" for f in warnings.filters)


def _warning_work(entry, index, progress=None):
    warnings.warn(f"setting {index}: the solver stopped at max_iter", UserWarning)
    return index * 10


@pytest.mark.parametrize("processes", [1, 2])
def test_warnings_of_settings_in_worker_processes_reach_the_caller(processes):
    """Settings run in forked processes (n_jobs > 1) send their warnings back to be raised again in the
    caller; dropped there, a fit that did not converge would warn with n_jobs=1 only."""
    import multiprocessing
    from collections import namedtuple

    from kong_pyg.evaluation.processes import run_settings
    from kong_pyg.progress import Progress

    if processes > 1 and "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this system: the settings run in this process")
    name = namedtuple("name", "name")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = sorted(run_settings(_warning_work, [0, 1], [name("a"), name("b")], processes=processes,
                                  bar=Progress(2, "x", enabled=False), per_setting=1))
    assert out == [(0, 0), (1, 10)]
    assert sorted(str(w.message) for w in caught) == [
        f"setting {i}: the solver stopped at max_iter" for i in (0, 1)]
    assert all(w.category is UserWarning for w in caught)
