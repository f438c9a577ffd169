"""anatomy: a from-scratch, ATen-like tensor engine in C++ and CUDA.

The engine lives in the extension module anatomy._C; this package gives it PyTorch's spellings.
"""

from . import _C
from ._C import OutOfMemoryError, Tensor, device, dtype

# One name per dtype, as torch spells them, and PyTorch's aliases.
bool = dtype.bool  # noqa: A001 (shadows the builtin inside this module only, as torch.bool does)
uint8 = dtype.uint8
int8 = dtype.int8
int32 = dtype.int32
int64 = dtype.int64
float16 = dtype.float16
bfloat16 = dtype.bfloat16
float32 = dtype.float32
float64 = dtype.float64
half = float16
float = float32  # noqa: A001
double = float64
int = int32  # noqa: A001
long = int64

__all__ = [
    "OutOfMemoryError", "Tensor", "device", "dtype",
    "bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64",
    "half", "float", "double", "int", "long",
]

# anatomy.ops (every operator from its schema), anatomy.library (operators from Python) and
# anatomy.cuda (devices, streams, events, device memory).
from . import cuda, library, ops  # noqa: E402
from ._C import memory_format  # noqa: E402

contiguous_format = memory_format.contiguous_format
channels_last = memory_format.channels_last
preserve_format = memory_format.preserve_format
__all__ += ["cuda", "library", "ops", "memory_format", "contiguous_format", "channels_last", "preserve_format"]
