"""anatomy.library: operators defined and implemented from Python, as torch.library.

    anatomy.library.define("myops::scale(Tensor x, float s) -> Tensor")

    @anatomy.library.impl("myops::scale", "CPU")
    def scale_cpu(x, s):
        return anatomy.ops.aten.mul(x, s)

    y = anatomy.ops.myops.scale(x, 2.0)

The operator is registered in the engine's dispatcher like any C++ one: C++ code calls it through
the dispatcher, dumps and traces show its kernel ("python:scale_cpu"). A Python kernel receives
its arguments as Python values and must return what the schema's returns say. Registrations last
as long as the process (the dispatcher has no unregistration).
"""

from . import _C
from . import ops as _ops

__all__ = ["define", "impl"]


def define(schema):
    """Defines an operator from "ns::name.overload(args) -> returns"; returns its qualified name.
    A new namespace becomes an attribute of anatomy.ops."""
    qualified = _C._library_define(schema)
    _ops.namespace(qualified.partition("::")[0])
    return qualified


def impl(qualified_name, dispatch_key, fn=None):
    """Registers fn as the kernel of operator qualified_name ("myops::scale", with an overload
    name when it has one) for a dispatch key ("CPU", "CUDA", "Meta", "CompositeImplicitAutograd",
    "CompositeExplicitAutograd", "Autograd", ...). Without fn, returns a decorator."""
    if fn is None:
        def decorator(f):
            _C._library_impl(qualified_name, dispatch_key, f)
            return f
        return decorator
    _C._library_impl(qualified_name, dispatch_key, fn)
    return fn
