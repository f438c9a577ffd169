"""Linear and Embedding with PyTorch's default initialization (as the engine's nn/linear.cpp)."""

import math

from ..autograd import no_grad
from . import functional as F
from . import init
from ._factory import check_size, new_parameter
from .module import Module

__all__ = ["Linear", "Embedding"]


class Linear(Module):
    """y = x W^T + b; W [out_features, in_features] and b from U(-1/sqrt(in), 1/sqrt(in))."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = check_size("Linear", "in_features", in_features)
        self.out_features = check_size("Linear", "out_features", out_features)
        self.weight = new_parameter((out_features, in_features), device, dtype)
        self.register_parameter("bias", new_parameter((out_features,), device, dtype) if bias else None)
        self.reset_parameters()

    def reset_parameters(self):
        # kaiming_uniform_ with a = sqrt(5): the bound is 1/sqrt(in_features), as PyTorch's.
        if self.in_features > 0:
            init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0.0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):  # noqa: A002 (PyTorch's argument name)
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Embedding(Module):
    """A lookup table [num_embeddings, embedding_dim] from N(0, 1); the padding_idx row is zero
    and receives no gradient."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, device=None, dtype=None):
        super().__init__()
        self.num_embeddings = check_size("Embedding", "num_embeddings", num_embeddings)
        self.embedding_dim = check_size("Embedding", "embedding_dim", embedding_dim)
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"Embedding: padding_idx {padding_idx} must be within num_embeddings {num_embeddings}")
            padding_idx = padding_idx + num_embeddings if padding_idx < 0 else padding_idx
        self.padding_idx = padding_idx
        self.weight = new_parameter((num_embeddings, embedding_dim), device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):  # noqa: A002
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self):
        out = f"{self.num_embeddings}, {self.embedding_dim}"
        return out + (f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "")
