"""The CPU as PyTorch's default device for the work that lives there (:func:`torch.set_default_device`)."""
import functools
from typing import Any, Callable, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])


def cpu_by_default(fn: _F) -> _F:
    """Run :obj:`fn` with the CPU as PyTorch's default device where another one is set.

    Work that lives on the CPU (data sets read from files, edge streams, evaluation, outputs held in
    a data set) makes tensors without naming a device; under another default device
    (:func:`torch.set_default_device`) they would land there: on a GPU beside CPU ones, or on
    :obj:`"meta"`, which holds no values. Nothing changes where the default device is the CPU (a
    call pays well under a microsecond to find out, unless a mode of PyTorch's is active).
    """
    @functools.wraps(fn)
    def on_cpu(*args: Any, **kwargs: Any) -> Any:
        import torch

        modes = getattr(torch._C, "_len_torch_function_stack", None)  # (another default device is one)
        if modes is not None and modes() == 0:
            return fn(*args, **kwargs)
        get = getattr(torch, "get_default_device", None)  # (PyTorch >= 2.3)
        if (get() if get is not None else torch.empty(0).device).type == "cpu":
            return fn(*args, **kwargs)
        with torch.device("cpu"):
            return fn(*args, **kwargs)

    return on_cpu  # type: ignore[return-value]


def cpu_methods(*names: str) -> Callable[[Any], Any]:
    """A class decorator: :func:`cpu_by_default` on methods :obj:`names` of a class that works on the CPU.

    A method wrapped in a descriptor that keeps it as :obj:`fn` has that function wrapped.
    """
    def wrap(cls: Any) -> Any:
        for name in names:
            attr = vars(cls)[name]
            if hasattr(attr, "fn"):
                attr.fn = cpu_by_default(attr.fn)
            else:
                setattr(cls, name, cpu_by_default(attr))
        return cls

    return wrap


__all__ = ["cpu_by_default", "cpu_methods"]
