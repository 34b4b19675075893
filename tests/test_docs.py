"""Every code block of README.md and docs/*.md works as written.

* A ```python block runs in a fresh process (an empty working folder, this
  checkout on the path) and must exit 0. A block whose first line is
  ``# docs: skip (REASON)`` is not run (for blocks that need the network or
  data that is not here; keep them rare).
* A ```bash block's documented commands (``kong-pyg ...``, ``python -m
  kong_pyg ...``, ``python examples/X.py ...``, ``python benchmarks/X.py
  ...``) must parse: every flag and value is checked by the command's own
  parser, in a folder where the placeholders the docs use exist (``DIR``
  with TU data sets, ``PATH/ml-100k``, ``all.tsv``); nothing runs. Each such
  command states its running time in its trailing comment.
"""
import argparse
import os
import re
import runpy
import shlex
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SKIP = re.compile(r"^#\s*docs:\s*skip\b")
TIME = re.compile(r"\b\d+(\.\d+)?\s*(ms|s|min|h)\b|\b(seconds|minutes|hours)\b")


def blocks(language: str) -> List[Tuple[str, int, str]]:
    """(file, line, code) of every fenced block of :obj:`language`."""
    out = []
    for path in DOCS:
        lines = path.read_text().splitlines()
        i = 0
        while i < len(lines):
            if lines[i].strip() == f"```{language}":
                start = i + 1
                j = start
                while lines[j].strip() != "```":
                    j += 1
                out.append((path.relative_to(ROOT).as_posix(), start + 1, "\n".join(lines[start:j]) + "\n"))
                i = j
            i += 1
    return out


PYTHON = blocks("python")
BASH = blocks("bash")


def test_the_docs_have_blocks():
    assert len(PYTHON) >= 6 and len(BASH) >= 4
    skipped = [f"{f}:{n}" for f, n, code in PYTHON if SKIP.match(code)]
    assert len(skipped) <= 1, skipped  # markers stay rare


@pytest.mark.parametrize("where,line,code", PYTHON, ids=[f"{f}:{n}" for f, n, _ in PYTHON])
def test_python_block_runs(where, line, code, tmp_path):
    if SKIP.match(code):
        pytest.skip(code.splitlines()[0])
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OMP_NUM_THREADS="1", KONG_PYG_CACHE=str(tmp_path / "cache"), MPLBACKEND="Agg")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, f"{where}:{line} failed:\n{done.stderr[-3000:]}"


# -- bash blocks: the documented commands parse -----------------------------------------------------


def commands() -> List[Tuple[str, int, str, str]]:
    """(file, line, command, comment) of every documented command of the bash blocks."""
    out = []
    for where, start, code in BASH:
        for k, raw in enumerate(code.splitlines()):
            text, _, comment = raw.partition("  #")
            text = text.strip()
            for part in text.split("&&"):
                part = part.strip()
                if re.match(r"^(kong-pyg|python3? -m kong_pyg|python3? (examples|benchmarks)/)", part):
                    out.append((where, start + k, part, comment))
    return out


COMMANDS = commands()


class Parsed(Exception):
    """Raised instead of running a command once its arguments parsed."""


@pytest.fixture
def placeholders(tmp_path, monkeypatch):
    """A working folder holding what the documented commands name."""
    from ml_fake import write_fake_ml100k
    from test_examples import write_tu

    for name in ("NCI1", "PROTEINS", "MUTAG", "PTC_MR", "ENZYMES"):
        write_tu(tmp_path / "DIR", name)
    write_fake_ml100k(tmp_path / "PATH" / "ml-100k")
    (tmp_path / "all.tsv").write_text("1\ta\t2\tb\tc\t0\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def parse_only(monkeypatch):
    """Make every argparse parser stop (raising :class:`Parsed`) once it has parsed its arguments."""
    original = argparse.ArgumentParser.parse_known_args

    def parse_known_args(self, args=None, namespace=None):
        ns, extra = original(self, args, namespace)
        if extra:
            self.error(f"unrecognized arguments: {' '.join(extra)}")
        raise Parsed(ns)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args", parse_known_args)


@pytest.mark.parametrize("where,line,command,comment", COMMANDS, ids=[f"{f}:{n}" for f, n, _, _ in COMMANDS])
def test_documented_command_parses_and_states_its_time(where, line, command, comment, placeholders,
                                                       monkeypatch, capsys):
    assert TIME.search(comment), f"{where}:{line}: '{command}' states no running time in its comment"
    argv = shlex.split(command)
    if argv[0] == "kong-pyg" or argv[:3] in (["python", "-m", "kong_pyg"], ["python3", "-m", "kong_pyg"]):
        from kong_pyg.cli import build_parser

        args = argv[1:] if argv[0] == "kong-pyg" else argv[3:]
        try:
            build_parser().parse_args(args)
        except SystemExit as err:
            message = capsys.readouterr().err.strip()
            pytest.fail(f"{where}:{line}: '{command}' does not parse: {message} ({err})")
        return
    script = ROOT / argv[1]
    assert script.is_file(), f"{where}:{line}: no {argv[1]}"
    monkeypatch.setattr(sys, "argv", [str(script), *argv[2:]])
    monkeypatch.syspath_prepend(str(script.parent))
    parse_only(monkeypatch)
    with pytest.raises(Parsed):
        try:
            runpy.run_path(str(script), run_name="__main__")
        except SystemExit as err:
            message = capsys.readouterr().err.strip()
            pytest.fail(f"{where}:{line}: '{command}' does not parse: {message} ({err})")
