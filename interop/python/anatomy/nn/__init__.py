"""anatomy.nn: modules, layers, initialization and losses in Python, as torch.nn, built on the
package's operators and autograd (docs/nn.md, "From Python: anatomy.nn")."""

from . import functional, init, utils
from .activation import GELU, Dropout, ReLU
from .attention import MultiheadAttention
from .container import ModuleList, Sequential
from .linear import Embedding, Linear
from .module import Module
from .normalization import LayerNorm
from .parameter import Parameter
from .transformer import TransformerEncoderLayer

__all__ = ["functional", "init", "utils", "Parameter", "Module", "Linear", "Embedding", "LayerNorm", "Dropout",
           "GELU", "ReLU", "Sequential", "ModuleList", "MultiheadAttention", "TransformerEncoderLayer"]
