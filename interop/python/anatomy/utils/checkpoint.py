"""anatomy.utils.checkpoint: activation checkpointing, as torch.utils.checkpoint.checkpoint with
use_reentrant=True, on the engine's autograd::checkpoint (autograd/checkpoint.h).

checkpoint(function, *args) runs function(*args) without keeping its intermediate results for
backward (only the tensor arguments are saved) and runs it again in backward to backpropagate
through it: the gradients are those of the plain call, at the cost of a second forward. The
recomputation draws the same random numbers (every device's default generator is put back, so
dropout draws the same masks) and runs under the autocast state of the first call, as PyTorch's.

    for layer in layers:
        x = checkpoint(layer, x)

As the reentrant form: the parameters that function uses get their gradients from the
recomputation's own backward (they must be leaves); if no tensor argument requires grad nothing is
recorded; backward with create_graph and anatomy.autograd.grad through a checkpoint are refused.
"""

import contextlib

from .. import _C
from ..amp import autocast

__all__ = ["checkpoint"]

_DEVICE_TYPES = ("cpu", "cuda")


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    """function(*args, **kwargs) checkpointed; it must return a Tensor or a tuple of Tensors.
    Arguments that are not tensors are passed as they are."""
    if use_reentrant is False:
        raise NotImplementedError("checkpoint: only the reentrant form (use_reentrant=True) is implemented")
    if not preserve_rng_state:
        raise NotImplementedError("checkpoint: the generators are always put back (preserve_rng_state=True)")
    if not callable(function):
        raise TypeError(f"checkpoint: function must be callable, got {type(function).__name__}")
    positions = [i for i, a in enumerate(args) if isinstance(a, _C.Tensor)]
    states = [(t, _C.is_autocast_enabled(t), _C.get_autocast_dtype(t)) for t in _DEVICE_TYPES]

    def run(*tensors):
        full = list(args)
        for i, t in zip(positions, tensors):
            full[i] = t
        with contextlib.ExitStack() as stack:
            for device_type, enabled, dtype in states:
                stack.enter_context(autocast(device_type, dtype, enabled))
            return function(*full, **kwargs)

    return _C._checkpoint(run, [args[i] for i in positions])
