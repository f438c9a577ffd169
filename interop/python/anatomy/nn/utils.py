"""anatomy.nn.utils: clip_grad_norm_ (as torch.nn.utils and the engine's nn/optim/clip_grad.cpp)."""

import math

from .. import _C
from .. import ops as _ops
from ..autograd import no_grad

__all__ = ["clip_grad_norm_"]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scales the gradients in place so that their joint norm is at most max_norm; returns the
    norm before clipping (a 0-d tensor: nothing waits for the device). With foreach (the default)
    the gradients of one device and dtype take one aten._foreach_norm and one aten._foreach_mul_
    (on CUDA a few launches for the whole list); foreach=False takes one norm and one mul_ per
    gradient."""
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
        if foreach is False:
            norms = [_C.stack([(g.abs().amax() if math.isinf(norm_type) else g.norm(norm_type))
                               .to(device, _C.dtype.float32) for g in grads])]
        else:
            by_kind = {}
            for g in grads:
                by_kind.setdefault((str(g.device), g.dtype), []).append(g)
            groups = list(by_kind.values())
            norms = [_C.stack(_ops.aten._foreach_norm(group, norm_type)) for group in groups]
        norms = [n.to(device, _C.dtype.float32) for n in norms]
        total = (norms[0] if len(norms) == 1 else _C.cat(norms)).norm(norm_type)
        if error_if_nonfinite and not bool(total.isfinite()):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                               "so it cannot be clipped. To disable this error and scale the gradients by the "
                               "non-finite norm anyway, set `error_if_nonfinite=False`")
        # min(1, max_norm / (total + 1e-6)), as a tensor.
        scale = ((total + 1e-6).reciprocal() * max_norm).clamp(max=1.0)
        if foreach is False:
            for g in grads:
                g.mul_(scale.to(g.device, g.dtype))
        else:
            for group in groups:
                _ops.aten._foreach_mul_(group, scale.to(group[0].device))
    return total
