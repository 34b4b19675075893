r"""How :class:`~kong_pyg.KongSketch` meets PyTorch's tooling.

Compilation and tracing (:func:`torch.compile`, TorchScript, :mod:`torch.fx`,
:func:`torch.export.export`: the layer's steps have data-dependent sizes, so it
runs eagerly and the others are refused with a reason), and the checks of a
loaded state dict's hash tables.
"""
from typing import Any, Callable, TypeVar, cast

import torch
from torch import Tensor

from ..sketch import SketchHashes

#: Why the layer runs eagerly, in the graph-break message of ``fullgraph=True`` and strict export.
_EAGER = ("KongSketch's steps have sizes that depend on the data's values (the k-grams of each graph), so it "
          "runs eagerly: a compiled model around it works with fullgraph=False; for fullgraph=True or "
          "torch.export, feed the model features computed with KongFeatures or KongVectorizer")


_F = TypeVar("_F", bound=Callable[..., Any])


def run_eagerly(fn: _F) -> _F:
    """:func:`torch.compiler.disable`, with the reason where this PyTorch takes one (the signature kept)."""
    try:
        return cast(_F, torch.compiler.disable(fn, reason=_EAGER))
    except TypeError:  # (PyTorch before 2.6: no reason)
        return cast(_F, torch.compiler.disable(fn))


#: Why :func:`torch.jit.script` and :func:`torch.jit.trace` are refused.
NO_TORCHSCRIPT = (
    "KongSketch cannot be compiled to TorchScript (torch.jit.script or torch.jit.trace): its shapes and "
    "steps depend on the data (the k-grams of each graph). Run it eagerly or under torch.compile (it "
    "runs uncompiled there), or compute the features once with KongFeatures or KongVectorizer"
)

#: Why :func:`torch.fx.symbolic_trace` of the layer is refused.
_NO_FX = (
    "KongSketch cannot be traced symbolically (torch.fx): its steps read the data's values (the k-grams of "
    "each graph). Trace the model with KongSketch as a leaf module (a torch.fx.Tracer whose is_leaf_module "
    "is True for it), or compute the features once with KongFeatures or KongVectorizer"
)

#: Why :func:`torch.export.export` of the layer is refused.
_NO_EXPORT = (
    "KongSketch cannot be exported (torch.export): the sizes of its steps depend on the data's values (the "
    "k-grams of each graph). Export a model that takes KONG features as input, computed with KongFeatures "
    "or KongVectorizer"
)


def refuse_tracing(*inputs: Any) -> None:
    """Refuse :mod:`torch.fx` proxies and :func:`torch.export.export` (non-strict export runs the layer)."""
    if any(isinstance(t, torch.fx.Proxy) for t in inputs):
        raise TypeError(_NO_FX)
    if getattr(torch.compiler, "is_exporting", lambda: False)():
        raise TypeError(_NO_EXPORT)


def _table_options(coef_shape: Any, shift_shape: Any) -> str:
    """The options a layer's hash-table shapes tell: degree, longest k-gram, depth."""
    return (f"degree={coef_shape[0] // 2}, k-grams of up to {(coef_shape[1] - 2) // 2} symbols (k), "
            f"hops={shift_shape[1] - 1}")


def check_table_shapes(module: torch.nn.Module, state_dict: Any, prefix: str, *args: Any) -> None:
    """Refuse, before anything is copied, a state dict whose hash tables have another shape."""
    hashes = module.hashes
    assert isinstance(hashes, SketchHashes)
    coef, shift = state_dict.get(prefix + "hashes.coef"), state_dict.get(prefix + "hashes.shift")
    if not isinstance(coef, Tensor) or not isinstance(shift, Tensor) or coef.dim() != 2 or shift.dim() != 2:
        return  # (missing or odd entries: PyTorch's own checks report them)
    if coef.shape != hashes.coef.shape or shift.shape != hashes.shift.shape:
        saved = _table_options(coef.shape, shift.shape)
        mine = _table_options(hashes.coef.shape, hashes.shift.shape)
        raise ValueError(f"the state dict's hash tables are those of a layer with {saved}; this layer has "
                         f"{mine}: build the layer with the options it was saved with")


def check_loaded_tables(module: torch.nn.Module, incompatible: Any) -> None:
    """Refuse a state dict whose hash tables were drawn with another seed or sketch size.

    A state dict saved before the hash scheme was recorded loads as scheme 1
    (:class:`~kong_pyg.sketch.SketchHashes`): the layer then gives the
    features it gave when the state was saved. A state refused here leaves
    the layer as it was, scheme included (one PyTorch refuses after the
    copy, for unexpected keys under ``strict=True``, keeps what was copied,
    as with any module).
    """
    hashes = module.hashes
    assert isinstance(hashes, SketchHashes)
    if hashes.coef.is_meta:  # (nothing was copied into meta tensors, as PyTorch warns: nothing to check)
        return
    with torch.device("cpu"):  # (not the default device, which may be "meta")
        fresh = SketchHashes(hashes.dim, hashes.degree, hashes.coef.size(1) // 2 - 1, hashes.shift.size(1),
                             hashes.seed, version=hashes.version).to(hashes.coef.device)
    same = all(torch.equal(getattr(fresh, n).to(getattr(hashes, n).dtype), getattr(hashes, n))
               for n in ("coef", "shift", "flip"))
    if not same:
        for name, table in list(hashes._buffers.items()):  # (after load_state_dict(assign=True) they are the
            if table is not None:  # state dict's own tensors, maybe another layer's: redrawn in copies)
                hashes._buffers[name] = table.clone()
        hashes.version = hashes.__dict__.get("scheme_before_load", hashes.version)  # (redraws the tables)
        raise ValueError(
            f"the state dict's hash tables were not drawn with this layer's seed={hashes.seed} and "
            f"dim={hashes.dim}; build the layer with the options it was saved with (the tables "
            "were left as this layer's own)"
        )


__all__ = ["NO_TORCHSCRIPT", "run_eagerly", "refuse_tracing", "check_table_shapes", "check_loaded_tables"]
