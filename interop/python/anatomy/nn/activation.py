"""The activation layers (ReLU, GELU, SiLU, Sigmoid, Tanh, Softmax, LogSoftmax, Softplus, ELU,
SELU, LeakyReLU, Hardtanh, ReLU6, Mish, Hardswish, Hardsigmoid) and Dropout, each one call of
nn.functional, with torch.nn's arguments and reprs."""

from . import functional as F
from ._factory import check_probability
from .module import Module

__all__ = ["ReLU", "GELU", "Dropout", "SiLU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Softplus", "ELU", "SELU",
           "LeakyReLU", "Hardtanh", "ReLU6", "Mish", "Hardswish", "Hardsigmoid"]


class ReLU(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, input):  # noqa: A002
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Dropout(Module):
    """Zeroes elements with probability p while training (scaling the rest by 1/(1-p)); the
    identity in eval mode."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        self.p = check_probability("Dropout", p)
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class _Inplace(Module):
    """An activation whose one option is inplace, as torch.nn's: its repr says so when set."""

    _function = None

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return type(self)._function(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class SiLU(_Inplace):
    _function = staticmethod(F.silu)


class SELU(_Inplace):
    _function = staticmethod(F.selu)


class Mish(_Inplace):
    _function = staticmethod(F.mish)


class Hardswish(_Inplace):
    _function = staticmethod(F.hardswish)


class Hardsigmoid(_Inplace):
    _function = staticmethod(F.hardsigmoid)


class ReLU6(_Inplace):
    _function = staticmethod(F.relu6)


class Sigmoid(Module):
    def forward(self, input):  # noqa: A002
        return F.sigmoid(input)


class Tanh(Module):
    def forward(self, input):  # noqa: A002
        return F.tanh(input)


class Softmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):  # noqa: A002
        return F.softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    def forward(self, input):  # noqa: A002
        return F.log_softmax(input, self.dim)


class Softplus(Module):
    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):  # noqa: A002
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class ELU(Module):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class LeakyReLU(Module):
    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class Hardtanh(Module):
    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        if min_val > max_val:
            raise ValueError(f"Hardtanh: min_val ({min_val}) cannot be greater than max_val ({max_val})")
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace

    def forward(self, input):  # noqa: A002
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")
