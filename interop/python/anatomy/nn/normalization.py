"""LayerNorm, RMSNorm and GroupNorm (weight ones, bias zeros, as PyTorch's)."""

from . import functional as F
from . import init
from ._factory import check_size, new_parameter
from .module import Module

__all__ = ["LayerNorm", "RMSNorm", "GroupNorm"]


class LayerNorm(Module):
    """Normalizes over the last len(normalized_shape) dims, then scales and shifts."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        affine = elementwise_affine
        self.register_parameter("weight", new_parameter(self.normalized_shape, device, dtype) if affine else None)
        self.register_parameter("bias", new_parameter(self.normalized_shape, device, dtype) if affine and bias else None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input):  # noqa: A002
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class RMSNorm(Module):
    """Divides by the root mean square over the last len(normalized_shape) dims, then scales; eps
    None is the dtype's machine epsilon, as torch.nn.RMSNorm's."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        weight = new_parameter(self.normalized_shape, device, dtype) if elementwise_affine else None
        self.register_parameter("weight", weight)
        self.reset_parameters()

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, input):  # noqa: A002
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class GroupNorm(Module):
    """Normalizes each of num_groups groups of channels over its channels and the spatial dims,
    then scales and shifts per channel."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None):
        super().__init__()
        if isinstance(num_groups, bool) or not isinstance(num_groups, int) or num_groups <= 0:
            raise ValueError(f"GroupNorm: num_groups must be positive, got {num_groups!r}")
        check_size("GroupNorm", "num_channels", num_channels)
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        self.register_parameter("weight", new_parameter((num_channels,), device, dtype) if affine else None)
        self.register_parameter("bias", new_parameter((num_channels,), device, dtype) if affine else None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input):  # noqa: A002
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"
