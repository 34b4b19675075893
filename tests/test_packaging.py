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


def test_sdist_carries_every_file_the_tests_import():
    """setuptools puts only tests/test_*.py into an sdist by default: 22 of them failed to import their
    helpers there, and tests/data was missing."""
    manifest = (ROOT / "MANIFEST.in").read_text().splitlines()
    assert "graft tests" in manifest and "include LICENSE" in manifest
    assert all(f"graft {d}" in manifest for d in ("examples", "benchmarks"))  # (the README links them)
