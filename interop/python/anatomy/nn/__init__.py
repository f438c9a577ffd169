"""anatomy.nn: modules, layers, initialization and losses in Python, as torch.nn, built on the
package's operators and autograd (docs/nn.md, "From Python: anatomy.nn")."""

from . import functional, init, utils
from .activation import (ELU, GELU, SELU, Dropout, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSoftmax, Mish,
                         ReLU, ReLU6, Sigmoid, SiLU, Softmax, Softplus, Tanh)
from .attention import MultiheadAttention
from .batchnorm import BatchNorm1d, BatchNorm2d
from .container import ModuleDict, ModuleList, Sequential
from .conv import Conv1d, Conv2d, ConvTranspose2d
from .flatten import Flatten
from .linear import Embedding, Linear
from .module import Module
from .normalization import GroupNorm, LayerNorm, RMSNorm
from .parameter import Parameter
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from .transformer import TransformerEncoderLayer
from .upsampling import Upsample

__all__ = ["functional", "init", "utils", "Parameter", "Module", "Linear", "Embedding", "LayerNorm", "Dropout",
           "GELU", "ReLU", "Sequential", "ModuleList", "MultiheadAttention", "TransformerEncoderLayer",
           "Conv1d", "Conv2d", "ConvTranspose2d", "BatchNorm1d", "BatchNorm2d", "GroupNorm", "MaxPool2d",
           "AvgPool2d", "AdaptiveAvgPool2d", "Upsample", "Flatten", "ModuleDict", "RMSNorm", "SiLU", "Sigmoid",
           "Tanh", "Softmax", "LogSoftmax", "Softplus", "ELU", "SELU", "LeakyReLU", "Hardtanh", "ReLU6", "Mish",
           "Hardswish", "Hardsigmoid"]
