"""Where the benchmarks look for data by default: the shared data folder beside the checkout.

Every benchmark takes its data folder as an argument; these are only the defaults
(``../shared/data`` next to the repository, and ``KONG_ML100K`` for MovieLens-100k).
"""
import os
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
#: TU data sets in PyG's raw layout (NAME/raw/NAME_A.txt, ...).
TU_ROOT = SHARED_DATA / "tu"


def default_ml_dir() -> Optional[str]:
    """The MovieLens-100k folder: ``$KONG_ML100K``, else the shared copy if present."""
    env = os.environ.get("KONG_ML100K")
    if env:
        return env
    shared = SHARED_DATA / "ml-100k"
    return str(shared) if shared.is_dir() else None
