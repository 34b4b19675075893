"""KONG message-passing operators."""
from .kong_sketch import KongSketch

__all__ = ["KongSketch"]
