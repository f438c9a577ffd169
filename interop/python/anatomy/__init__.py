"""anatomy: a from-scratch, ATen-like tensor engine in C++ and CUDA.

The engine lives in the extension module anatomy._C; this package gives it PyTorch's spellings.
"""

import builtins as _builtins

from . import _C
from ._C import OutOfMemoryError, Tensor, device, dtype
from ._C import return_types
from ._size import Size

_C._set_size_type(Size)

# The factories and the functions that mirror Tensor methods (anatomy.add, anatomy.sum, ...): the
# bound C++ functions themselves, with nothing in between.
_FUNCTIONS = [name for name in dir(_C) if not name.startswith("_") and callable(getattr(_C, name))
              and name not in ("Tensor", "device", "dtype", "OutOfMemoryError", "Node")]
globals().update({name: getattr(_C, name) for name in _FUNCTIONS})

from . import autograd  # noqa: E402 (needs _C's functions above)
from .autograd import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: E402
from ._C import is_grad_enabled, is_inference_mode_enabled  # noqa: E402

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
    "OutOfMemoryError", "Tensor", "device", "dtype", "Size", "return_types", "autograd",
    "no_grad", "enable_grad", "inference_mode", "set_grad_enabled", "is_grad_enabled",
    "is_inference_mode_enabled",
    "bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64",
    "half", "float", "double", "int", "long",
] + _builtins.sorted(_FUNCTIONS)

# anatomy.ops (every operator from its schema), anatomy.library (operators from Python) and
# anatomy.cuda (devices, streams, events, device memory, graphs), anatomy.profiler, anatomy.safetensors.
from . import backends, cuda, library, ops, profiler, safetensors, utils  # noqa: E402
from .amp import autocast  # noqa: E402
from ._C import memory_format  # noqa: E402

contiguous_format = memory_format.contiguous_format
channels_last = memory_format.channels_last
channels_last_3d = memory_format.channels_last_3d
preserve_format = memory_format.preserve_format
__all__ += ["autocast", "utils", "cuda", "library", "ops", "profiler", "safetensors", "memory_format", "contiguous_format", "channels_last", "channels_last_3d", "preserve_format"]
