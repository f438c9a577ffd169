"""anatomy.autograd: grad mode switches (no_grad, enable_grad, set_grad_enabled, inference_mode),
grad() and backward() over several tensors, and Node, the type of Tensor.grad_fn.

The switches are thread-local in the engine (autograd/grad_mode.h), as PyTorch's are. Each works
as a context manager and as a function decorator.
"""

import functools

from . import _C
from ._C import Node, is_grad_enabled, is_inference_mode_enabled


class _Mode:
    """A context manager that is also a decorator: each call of the decorated function runs
    inside a fresh instance, so that nesting and recursion restore the right state."""

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self._clone():
                return func(*args, **kwargs)

        return wrapper

    def _clone(self):
        return self.__class__()


class _GradMode(_Mode):
    _enabled = True

    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self._enabled)
        return self

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False


class no_grad(_GradMode):  # noqa: N801 (PyTorch's name)
    """Operators inside do not record the autograd graph."""

    _enabled = False


class enable_grad(_GradMode):  # noqa: N801
    """Operators inside record the autograd graph, even within no_grad."""

    _enabled = True


class set_grad_enabled(_GradMode):  # noqa: N801
    """Sets grad mode at once (as a function call) and restores it at the end of a with block."""

    def __init__(self, mode):
        self._enabled = bool(mode)
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self._enabled)

    def __enter__(self):
        return self

    def _clone(self):
        return set_grad_enabled(self._enabled)


class inference_mode(_Mode):  # noqa: N801
    """No graph and no version counting inside; tensors made inside are inference tensors."""

    def __init__(self, mode=True):
        self._mode = bool(mode)

    def __enter__(self):
        self._guard = _C._InferenceModeGuard()
        self._guard.enter(self._mode)
        return self

    def __exit__(self, *exc):
        self._guard.exit()
        return False

    def __call__(self, func):
        if isinstance(func, bool):  # @inference_mode(False) written as a call on the mode
            return inference_mode(func)
        return super().__call__(func)

    def _clone(self):
        return inference_mode(self._mode)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=None,
         materialize_grads=False):
    """The gradients of outputs with respect to inputs (a tuple, None for an unused input when
    allow_unused), without touching .grad."""
    if materialize_grads and allow_unused is False:
        raise ValueError("grad(): materialize_grads=True needs allow_unused to be True or None")
    unused_ok = bool(allow_unused) or materialize_grads
    result = _C._autograd_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, unused_ok)
    if materialize_grads:
        from . import zeros_like

        inputs_list = [inputs] if isinstance(inputs, _C.Tensor) else list(inputs)
        result = tuple(zeros_like(x) if g is None else g for g, x in zip(result, inputs_list))
    return result


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False):
    """Accumulates the gradients of tensors (weighted by grad_tensors) into the leaves' .grad."""
    _C._autograd_backward(tensors, grad_tensors, retain_graph, create_graph)


__all__ = ["Node", "backward", "enable_grad", "grad", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "no_grad", "set_grad_enabled"]
