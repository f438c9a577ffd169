"""MaxPool2d, AvgPool2d and AdaptiveAvgPool2d; their reprs echo the arguments as given, stride
defaulting to kernel_size (as PyTorch's)."""

from . import functional as F
from ._factory import expand
from .module import Module

__all__ = ["MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d"]


def _checked(layer, name, value, minimum):
    expand(layer, name, value, 2, minimum)
    return value


class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = _checked("MaxPool2d", "kernel_size", kernel_size, 1)
        self.stride = _checked("MaxPool2d", "stride", kernel_size if stride is None else stride, 1)
        self.padding = _checked("MaxPool2d", "padding", padding, 0)
        self.dilation = _checked("MaxPool2d", "dilation", dilation, 1)
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):  # noqa: A002
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                            self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        if divisor_override == 0:
            raise ValueError("AvgPool2d: divisor_override must not be zero")
        self.kernel_size = _checked("AvgPool2d", "kernel_size", kernel_size, 1)
        self.stride = _checked("AvgPool2d", "stride", kernel_size if stride is None else stride, 1)
        self.padding = _checked("AvgPool2d", "padding", padding, 0)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):  # noqa: A002
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """output_size: one int, or two, either of which may be None (the input's size)."""

    def __init__(self, output_size):
        super().__init__()
        sizes = output_size if isinstance(output_size, (tuple, list)) else (output_size,)
        expand("AdaptiveAvgPool2d", "output_size", [0 if s is None else s for s in sizes], 2, 0)
        self.output_size = output_size

    def forward(self, input):  # noqa: A002
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"
