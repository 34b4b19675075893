"""The options a stream computes."""
from ..config import STREAM_DEFAULTS, KongConfig
from ..kernels import get_kernel


def stream_config(cfg: KongConfig) -> KongConfig:
    """Check that :obj:`cfg` is a map a stream computes: sketched, arrival order, no relabelling."""
    if cfg.dim is None:
        raise ValueError("KongStream always sketches: 'dim' must be a sketch size, not None (the exact map "
                         "needs every k-gram count, which a stream does not keep)")
    if cfg.order != "edge":
        raise ValueError(f"KongStream supports only order='edge' (the arrival order is the neighbor "
                         f"order); got order={cfg.order!r}")
    if cfg.relabel != 0:
        raise ValueError(f"KongStream supports only relabel=0 (WL relabelling needs whole graphs); got "
                         f"relabel={cfg.relabel!r}")
    if get_kernel(cfg.kernel).needs_norms(cfg) and cfg.norm != "sketch":
        raise ValueError(f"KongStream supports only norm='sketch' for the {cfg.kernel} kernel (exact norms "
                         f"need exact k-gram counts); got norm={cfg.norm!r} (KongConfig's default: pass "
                         "config.replace(norm='sketch'))")
    if cfg.flow != "source_to_target":
        raise ValueError(f"KongStream supports only flow='source_to_target' (use undirected=False for "
                         f"edges that extend only their source); got flow={cfg.flow!r}")
    if cfg.normalize:
        raise ValueError("KongStream does not support normalize=True: normalize the rows of sketches()")
    return cfg


def node_sketches(linear: bool, hops: int, replay: bool, i: int) -> bool:
    r"""Whether pass :obj:`i` builds node sketches (else its grams go straight to graph rows).

    The linear map needs none in its last pass, and none at all at
    :math:`h = 2` when the last pass replays pass 1 (:obj:`replay`, see
    :mod:`kong_pyg.stream`); every other map keeps them in every pass.
    """
    return hops >= 1 and (not linear or (i < hops and not replay))


def replays(linear: bool, hops: int) -> bool:
    r"""Whether a new stream's last pass replays pass 1 (the linear map at :math:`h = 2`)."""
    return linear and hops == 2


__all__ = ["STREAM_DEFAULTS", "stream_config", "node_sketches", "replays"]
