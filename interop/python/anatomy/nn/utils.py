"""anatomy.nn.utils: clip_grad_norm_ (as torch.nn.utils and the engine's optim/clip_grad.cpp)."""

import math

from .. import _C
from ..autograd import no_grad

__all__ = ["clip_grad_norm_"]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scales the gradients in place so that their joint norm is at most max_norm; returns the
    norm before clipping (a 0-d tensor: nothing waits for the device)."""
    if isinstance(parameters, _C.Tensor):
        parameters = [parameters]
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not max_norm >= 0:
        raise ValueError(f"clip_grad_norm_: max_norm must be non-negative, got {max_norm}")
    if not norm_type > 0:
        raise ValueError(f"clip_grad_norm_: norm_type must be positive, got {norm_type}")
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return _C.zeros([])
    with no_grad():
        device = grads[0].device
        if math.isinf(norm_type):
            norms = [g.abs().amax().to(device, _C.dtype.float32) for g in grads]
            total = _C.stack(norms).amax()
        else:
            norms = [g.norm(norm_type).to(device, _C.dtype.float32) for g in grads]
            total = _C.stack(norms).norm(norm_type)
        if error_if_nonfinite and not bool(total.isfinite()):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                               "so it cannot be clipped. To disable this error and scale the gradients by the "
                               "non-finite norm anyway, set `error_if_nonfinite=False`")
        # min(1, max_norm / (total + 1e-6)), as a tensor.
        scale = ((total + 1e-6).reciprocal() * max_norm).clamp(max=1.0)
        for g in grads:
            g.mul_(scale.to(g.device, g.dtype))
    return total
