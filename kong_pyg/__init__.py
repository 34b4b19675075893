"""kong_pyg: KONG graph kernels (Kernels for Ordered-Neighborhood Graphs) for PyG."""
from .evaluate import ClassifyResult, classify, cross_validate, expand_grid, paper_grid, sketch_curve
from .nn import KongSketch
from .stream import KongStream, merge_streams
from .strings import brute_force_kernel, kgram_counts, kong_strings
from .transforms import KongFeatures
from .vectorizer import KongVectorizer

__version__ = "0.1.0"

__all__ = [
    "KongSketch",
    "KongVectorizer",
    "KongFeatures",
    "KongStream",
    "merge_streams",
    "kong_strings",
    "kgram_counts",
    "brute_force_kernel",
    "classify",
    "ClassifyResult",
    "cross_validate",
    "expand_grid",
    "paper_grid",
    "sketch_curve",
    "__version__",
]
