"""What a wheel or an sdist carries: version, licence, type marker, the tests' own files."""
import re
from pathlib import Path

import kong_pyg

ROOT = Path(__file__).resolve().parents[1]


def test_one_version_everywhere():
    """pyproject and kong_pyg.__version__ (which the CLI's --version and the cache keys read) agree."""
    text = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^version = "([^"]+)"', text, re.M).group(1) == kong_pyg.__version__


def test_licence_and_type_marker_ship():
    """The wheel had no licence text and no py.typed (users' mypy skipped the package's annotations)."""
    text = (ROOT / "pyproject.toml").read_text()
    assert 'license-files = ["LICENSE"]' in text and "MIT License" in (ROOT / "LICENSE").read_text()
    assert (Path(kong_pyg.__file__).parent / "py.typed").is_file()
    assert re.search(r'^"kong_pyg" = \["py.typed"\]', text, re.M)


def test_the_built_sdist_carries_what_the_tests_and_readme_need(tmp_path):
    """Built for real from the tracked files (the check of MANIFEST.in's lines alone passed whatever the
    archive held): the tests' helpers and data, the licence, the type marker, the linked docs and figures."""
    import shutil
    import subprocess
    import sys
    import tarfile

    import pytest

    pytest.importorskip("setuptools", minversion="77")  # (the build backend pyproject names; in [test])
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("needs the git checkout (the tracked files are what an sdist is built from)")
    tracked = subprocess.run([git, "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True)
    src = tmp_path / "src"
    for name in tracked.stdout.decode().split("\0"):
        if name and (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    built = subprocess.run([sys.executable, "-c", "import sys; from setuptools import build_meta as b; "
                            "print(b.build_sdist(sys.argv[1]))", str(tmp_path / "dist")],
                           cwd=src, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-2000:]
    archive = tmp_path / "dist" / built.stdout.strip().splitlines()[-1]
    with tarfile.open(archive) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    wanted = ["LICENSE", "kong_pyg/py.typed", "kong_pyg/datasets/data/MUTAG/MUTAG_A.txt.gz",
              "tests/helpers.py", "tests/conftest.py", "tests/ml_fake.py", "tests/tu_helpers.py",
              "tests/data/pickled_v0_1.pkl", "examples/quickstart.py", "benchmarks/table2.py",
              "docs/guide.md", "docs/results/table2_curve.png"]
    assert [n for n in wanted if n not in names] == []
    assert any(n.startswith("docs/results/order_test/") and n.endswith(".png") for n in names)
    assert not any(n.startswith("docs/results/table1/") or n.endswith(".pyc") for n in names)
