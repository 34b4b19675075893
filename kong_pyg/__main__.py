"""``python -m kong_pyg``: the ``kong-pyg`` command line."""
import sys

from .cli import main

sys.exit(main())
