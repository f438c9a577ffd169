"""anatomy.nn.Parameter: a tensor that is a module's weight.

anatomy.Tensor is an extension type without a Python-side constructor, so a Parameter is not a
subclass as torch.nn.Parameter is: Parameter(data) returns data detached into a new leaf that
requires grad (sharing data's memory), and isinstance(t, Parameter) holds for every leaf tensor
that requires grad. A Module registers such a tensor as a parameter when it is assigned as an
attribute; a frozen one (requires_grad=False) is registered with Module.register_parameter.
"""

from .. import _C

__all__ = ["Parameter"]


class _ParameterMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, _C.Tensor) and obj.is_leaf and obj.requires_grad


class Parameter(metaclass=_ParameterMeta):
    """Parameter(data=None, requires_grad=True): data as a new leaf with requires_grad; an
    empty float tensor when data is None."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _C.empty(0)
        if not isinstance(data, _C.Tensor):
            raise TypeError(f"Parameter: data must be an anatomy.Tensor, got {type(data).__name__}")
        if requires_grad and not data.is_floating_point():
            raise TypeError(f"Parameter: only floating tensors can require gradients, got {data.dtype}")
        out = data.detach()
        out.requires_grad_(bool(requires_grad))
        return out
