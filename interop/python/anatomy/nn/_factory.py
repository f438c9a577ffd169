"""What the layers and the functions share: uninitialized parameters made with PyTorch's factory
keywords, and the argument checks."""

from .. import _C
from .parameter import Parameter


def new_parameter(shape, device=None, dtype=None):
    """A leaf Parameter of shape, uninitialized (the layer's reset_parameters fills it)."""
    return Parameter(_C.empty(list(shape), dtype=dtype if dtype is not None else _C.dtype.float32,
                              device=device if device is not None else "cpu"))


def check_size(layer, name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{layer}: {name} must be a non-negative integer, got {value!r}")
    return value


def check_probability(layer, p):
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise ValueError(f"{layer}: dropout probability has to be between 0 and 1, but got {p}")
    return float(p)


def expand(layer, name, value, n, minimum):
    """value as n ints (PyTorch's _pair / _single): one int is repeated, a sequence of n is taken;
    each must be at least minimum. Anything else is a ValueError naming the layer and value."""
    values = (value,) * n if isinstance(value, int) and not isinstance(value, bool) else tuple(value) \
        if isinstance(value, (tuple, list)) else None
    if values is None or len(values) not in (1, n) or \
            any(isinstance(v, bool) or not isinstance(v, int) or v < minimum for v in values):
        raise ValueError(f"{layer}: {name} must be an int >= {minimum} or {n} of them, got {value!r}")
    return values * n if len(values) == 1 else values
