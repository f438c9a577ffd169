"""Process-wide switches that trade accuracy for speed, in PyTorch's spellings:

    anatomy.backends.cuda.matmul.allow_tf32 = True   # torch.backends.cuda.matmul.allow_tf32
    anatomy.backends.cudnn.benchmark = True          # torch.backends.cudnn.benchmark
    anatomy.backends.cudnn.allow_tf32 = False        # torch.backends.cudnn.allow_tf32

Each reads and writes the engine's switch (core/precision_switches.h), so C++ code in the same
process sees the change; docs/cuda.md, "Precision switches", lists them with their defaults.
"""

from anatomy.backends import cuda, cudnn

__all__ = ["cuda", "cudnn"]
