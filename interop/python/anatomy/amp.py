"""anatomy.autocast: mixed precision by dispatch, as torch.autocast (docs/autograd.md, "Autocast
and the loss scaler"). Inside the region, operators on tensors of `device_type` that profit from
a lower precision (the matrix products) run in `dtype`, those that need range (reductions,
softmax, norms) in fp32. The state is the calling thread's; regions nest, and each restores on
exit the state it found. Works as a context manager and as a function decorator.

    with anatomy.autocast("cuda", dtype=anatomy.bfloat16):
        loss = loss_fn(model(x), y)
    loss.backward()   # outside the region, as PyTorch advises
"""

import functools

from . import _C

__all__ = ["autocast", "is_autocast_enabled", "get_autocast_dtype"]

is_autocast_enabled = _C.is_autocast_enabled
get_autocast_dtype = _C.get_autocast_dtype


class autocast:  # noqa: N801 (torch's name)
    """autocast(device_type, dtype=None, enabled=True, cache_enabled=None): device_type 'cpu' or
    'cuda'; dtype float16 or bfloat16 (None: the device type's current one, bf16 on the CPU and
    fp16 on CUDA by default); enabled=False turns autocast off inside the region."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise TypeError(f"autocast: device_type must be a str ('cpu' or 'cuda'), got {type(device_type).__name__}")
        if not isinstance(enabled, bool):
            raise TypeError(f"autocast: enabled must be a bool, got {type(enabled).__name__}")
        # Checked now (ValueError for another device type or dtype), not at the first entry.
        _C._AutocastScope(device_type, dtype, enabled)
        self.device_type, self.fast_dtype, self.enabled = device_type, dtype, enabled
        self._scopes = []

    def __enter__(self):
        scope = _C._AutocastScope(self.device_type, self.fast_dtype, self.enabled)
        scope.enter()
        self._scopes.append(scope)
        return self

    def __exit__(self, *exc):
        self._scopes.pop().exit()
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with autocast(self.device_type, self.fast_dtype, self.enabled):
                return func(*args, **kwargs)

        return wrapper
