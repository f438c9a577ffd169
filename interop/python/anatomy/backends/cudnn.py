"""anatomy.backends.cudnn: the cuDNN convolutions' switches (torch.backends.cudnn).

    anatomy.backends.cudnn.benchmark    # time the candidate plans of each new shape (off)
    anatomy.backends.cudnn.allow_tf32   # fp32 convolutions may compute in TF32 (on)
    with anatomy.backends.cudnn.flags(benchmark=True): ...
"""

import contextlib
import sys
import types

from anatomy.backends._switch import Switch


class _CudnnModule(types.ModuleType):
    benchmark = Switch("cudnn_benchmark", "set_cudnn_benchmark")
    allow_tf32 = Switch("allow_tf32_cudnn", "set_allow_tf32_cudnn")

    def __setattr__(self, name, value):
        # A misspelled switch is an error, not a new module attribute.
        if not name.startswith("_") and not isinstance(getattr(type(self), name, None), Switch):
            raise AttributeError(f"anatomy.backends.cudnn has no switch {name!r}")
        super().__setattr__(name, value)

    @contextlib.contextmanager
    def flags(self, benchmark=None, allow_tf32=None):
        """Sets the switches given (None leaves one as it is) for the block, then restores them."""
        saved = (self.benchmark, self.allow_tf32)
        try:
            if benchmark is not None:
                self.benchmark = benchmark
            if allow_tf32 is not None:
                self.allow_tf32 = allow_tf32
            yield
        finally:
            self.benchmark, self.allow_tf32 = saved


# Module attributes with a getter and a setter: the module's class carries the descriptors.
sys.modules[__name__].__class__ = _CudnnModule
