"""BatchNorm1d and BatchNorm2d with PyTorch's parameters, running statistics and momentum (None:
the cumulative average), as the engine's nn/channel_norm.cpp."""

from .. import _C
from ..autograd import no_grad
from . import functional as F
from . import init
from ._factory import check_size, new_parameter
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d"]


class _BatchNorm(Module):
    """weight ones and bias zeros [num_features] (affine); buffers running_mean zeros, running_var
    ones and num_batches_tracked an int64 0 (track_running_stats)."""

    _expected_dims = ()

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None):
        super().__init__()
        self.num_features = check_size(type(self).__name__, "num_features", num_features)
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        self.register_parameter("weight", new_parameter((num_features,), device, dtype) if affine else None)
        self.register_parameter("bias", new_parameter((num_features,), device, dtype) if affine else None)
        if track_running_stats:
            options = {"dtype": dtype if dtype is not None else _C.dtype.float32,
                       "device": device if device is not None else "cpu"}
            self.register_buffer("running_mean", _C.zeros([num_features], **options))
            self.register_buffer("running_var", _C.ones([num_features], **options))
            self.register_buffer("num_batches_tracked", _C.zeros([], dtype=_C.dtype.int64, device=options["device"]))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input):  # noqa: A002
        if input.dim() not in self._expected_dims:
            raise ValueError(f"{type(self).__name__}: expected {' or '.join(f'{d}D' for d in self._expected_dims)} "
                             f"input (got {input.dim()}D input)")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            F._check_batch_size(type(self).__name__, input)  # before counting: a refused batch changes nothing
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / int(self.num_batches_tracked.item())
        # Training normalizes by the batch; eval by the running statistics when there are any.
        use_batch = self.training or self.running_mean is None
        pass_running = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if pass_running else None,
                            self.running_var if pass_running else None, self.weight, self.bias, use_batch, factor,
                            self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """[N, C] or [N, C, L]."""
    _expected_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """[N, C, H, W]."""
    _expected_dims = (4,)
