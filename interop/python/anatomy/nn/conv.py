"""Conv1d, Conv2d and ConvTranspose2d with PyTorch's arguments, initialization and repr (as the
engine's nn/conv.cpp)."""

import math

from . import functional as F
from . import init
from ._factory import check_size, expand, new_parameter
from .module import Module

__all__ = ["Conv1d", "Conv2d", "ConvTranspose2d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    """What the convolutions share: the checked arguments, one value per spatial dim; weight
    [out, in / groups, *k] (transposed: [in, out / groups, *k]) from kaiming_uniform_(a=sqrt(5)),
    bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, device, dtype, dims):
        super().__init__()
        name = type(self).__name__
        check_size(name, "in_channels", in_channels)
        check_size(name, "out_channels", out_channels)
        if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
            raise ValueError(f"{name}: groups must be a positive integer, got {groups!r}")
        if in_channels % groups:
            raise ValueError(f"{name}: in_channels ({in_channels}) must be divisible by groups ({groups})")
        if out_channels % groups:
            raise ValueError(f"{name}: out_channels ({out_channels}) must be divisible by groups ({groups})")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"{name}: padding_mode must be one of {', '.join(map(repr, _PADDING_MODES))}, "
                             f"but got padding_mode={padding_mode!r}")
        if transposed and padding_mode != "zeros":
            raise ValueError(f"{name}: only 'zeros' padding mode is supported, got {padding_mode!r}")
        if padding_mode != "zeros":
            raise NotImplementedError(f"{name}: padding_mode={padding_mode!r} is not implemented (only 'zeros' is; "
                                      "'reflect', 'replicate' and 'circular' are not)")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = expand(name, "kernel_size", kernel_size, dims, 1)
        self.stride = expand(name, "stride", stride, dims, 1)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"{name}: invalid padding string {padding!r}, should be one of 'same', 'valid'")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError(f"{name}: padding='same' is not supported for strided convolutions "
                                 f"(stride={self.stride})")
            self.padding = padding
        else:
            self.padding = expand(name, "padding", padding, dims, 0)
        self.dilation = expand(name, "dilation", dilation, dims, 1)
        self.transposed = transposed
        self.output_padding = expand(name, "output_padding", output_padding, dims, 0)
        self.groups = groups
        self.padding_mode = padding_mode
        shape = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = new_parameter(shape + self.kernel_size, device, dtype)
        self.register_parameter("bias", new_parameter((out_channels,), device, dtype) if bias else None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
            init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if isinstance(self.padding, str) or self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups, bias,
                         padding_mode, device, dtype, 1)

    def forward(self, input):  # noqa: A002
        return F.conv1d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class Conv2d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups, bias,
                         padding_mode, device, dtype, 2)

    def forward(self, input):  # noqa: A002
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class ConvTranspose2d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, True, output_padding,
                         groups, bias, padding_mode, device, dtype, 2)

    def forward(self, input, output_size=None):  # noqa: A002
        output_padding = self.output_padding
        if output_size is not None:
            output_padding = self._output_padding(input, output_size)
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                  self.groups, self.dilation)

    def _output_padding(self, input, output_size):  # noqa: A002
        """The output_padding that gives output_size (PyTorch's _output_padding): each size must lie
        between the smallest output and that plus stride - 1."""
        output_size = list(output_size)[-2:]
        out = []
        for d in range(2):
            smallest = ((input.shape[d - 2] - 1) * self.stride[d] - 2 * self.padding[d]
                        + self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            if not smallest <= output_size[d] < smallest + self.stride[d]:
                raise ValueError(f"ConvTranspose2d: requested an output size of {output_size}, but valid sizes "
                                 f"range from {smallest} to {smallest + self.stride[d] - 1} in dim {d + 2}")
            out.append(output_size[d] - smallest)
        return tuple(out)
