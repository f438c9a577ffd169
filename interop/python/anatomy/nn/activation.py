"""The parameterless layers: ReLU, GELU, Dropout."""

from . import functional as F
from ._factory import check_probability
from .module import Module

__all__ = ["ReLU", "GELU", "Dropout"]


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
