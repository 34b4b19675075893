"""kong_pyg: KONG graph kernels (Kernels for Ordered-Neighborhood Graphs) for PyG.

``import kong_pyg`` is light: the public names below are loaded on first use,
so scikit-learn, SciPy, tqdm, matplotlib, the streams and the evaluation
harness are imported only by code that uses them.
"""
import importlib
from typing import TYPE_CHECKING, Any, Dict, List

from .config import KongConfig

__version__ = "0.2.0"

#: Public name -> the module that defines it (imported on first access).
_LAZY: Dict[str, str] = {
    "KongSketch": "kong_pyg.nn.kong_sketch",
    "KongVectorizer": "kong_pyg.vectorizer",
    "KongFeatures": "kong_pyg.transforms",
    "compact_graphs": "kong_pyg.graphs",
    "KongStream": "kong_pyg.stream",
    "merge_streams": "kong_pyg.stream",
    "kong_strings": "kong_pyg.strings",
    "kgram_counts": "kong_pyg.strings",
    "brute_force_kernel": "kong_pyg.strings",
    "classify": "kong_pyg.evaluation.classify",
    "ClassifyResult": "kong_pyg.evaluation.classify",
    "cross_validate": "kong_pyg.evaluation.cv",
    "evaluate_features": "kong_pyg.evaluation.harness",
    "gram_matrix": "kong_pyg.gram",
    "kernel_matrix": "kong_pyg.gram",
    "expand_grid": "kong_pyg.evaluation.grid",
    "paper_grid": "kong_pyg.evaluation.grid",
    "extended_grid": "kong_pyg.evaluation.grid",
    "sketch_curve": "kong_pyg.evaluation.classify",
    "order_test": "kong_pyg.ordertest",
    "OrderTestResult": "kong_pyg.ordertest",
    "tune_allocator": "kong_pyg.memory",
}

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from .evaluation.classify import ClassifyResult, classify, sketch_curve
    from .evaluation.cv import cross_validate
    from .evaluation.grid import expand_grid, extended_grid, paper_grid
    from .evaluation.harness import evaluate_features
    from .gram import gram_matrix, kernel_matrix
    from .graphs import compact_graphs
    from .memory import tune_allocator
    from .nn.kong_sketch import KongSketch
    from .ordertest import OrderTestResult, order_test
    from .stream import KongStream, merge_streams
    from .strings import brute_force_kernel, kgram_counts, kong_strings
    from .transforms import KongFeatures
    from .vectorizer import KongVectorizer


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kong_pyg' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "KongConfig",
    "KongSketch",
    "KongVectorizer",
    "KongFeatures",
    "compact_graphs",
    "KongStream",
    "merge_streams",
    "kong_strings",
    "kgram_counts",
    "brute_force_kernel",
    "classify",
    "ClassifyResult",
    "cross_validate",
    "evaluate_features",
    "gram_matrix",
    "kernel_matrix",
    "expand_grid",
    "paper_grid",
    "extended_grid",
    "sketch_curve",
    "order_test",
    "OrderTestResult",
    "tune_allocator",
    "__version__",
]
