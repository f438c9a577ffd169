// Python values to the boxed calling convention's IValues and back, one schema ArgType at a time:
// what anatomy.ops uses to bind a call's arguments against an operator's schema and to return its
// results. Built on convert.h's conversions; the extra rule here is that a value of the wrong kind
// is not an error but a "does not bind", so that overload resolution can try the next overload.
#pragma once

#include <nanobind/nanobind.h>

#include <string>

#include "anatomy/anatomy.h"

namespace anatomy::python {

namespace nb = nanobind;

// Binds `h` to an argument of schema type `type` into `out`. Returns false, leaving `out` alone,
// when the value has another kind (a string for an int, a float for a Tensor...). A value of the
// right kind that is out of range (an int beyond int64) throws the engine's error, as convert.h does.
// As PyTorch's parser: a Scalar takes bool/int/float (and NumPy numbers) but not a Tensor, an int a
// Python int or anything with __index__ except bool, a float an int or float but not bool, a bool
// only a bool, a ScalarType an anatomy.dtype, a Device an anatomy.device, a string or an int.
// With `numbers_as_tensors`, a Tensor argument also takes a Python number, as a 0-dim "wrapped
// number" tensor (which type promotion treats as the number it is: int64 + 1.5 is float32), as
// torch.ops does; overload resolution tries that only when no overload binds without it.
bool try_to_ivalue(nb::handle h, dispatch::ArgType type, dispatch::IValue& out, bool numbers_as_tensors = false);

// False when h's kind alone shows that try_to_ivalue must refuse it as a `type` argument (a
// Tensor argument given no tensor, a Scalar one given no number); true otherwise, where the
// conversion decides. Costs two type checks, so a packet rules out overloads before converting.
bool kind_fits(nb::handle h, dispatch::ArgType type, bool numbers_as_tensors = false);

// The Python type name of `h` as error messages print it ("int", "anatomy.Tensor", "NoneType").
std::string python_type_name(nb::handle h);

// The value of a schema default literal ("None", "True", "1", "1e-05", "[0,1]", "'mean'",
// "contiguous_format") for an argument of type arg.type. ValueError when the literal does not fit.
dispatch::IValue parse_default(const dispatch::Argument& arg);

// An IValue as a Python value: Tensor, list of Tensors, bool/int/float, anatomy.dtype,
// anatomy.device, str, anatomy.memory_format, or None.
nb::object from_ivalue(const dispatch::IValue& v);
// The same, moving a Tensor out of `v` rather than taking a new handle to it (a call's results).
nb::object from_ivalue(dispatch::IValue&& v);

// anatomy.memory_format (contiguous_format, channels_last, channels_last_3d, preserve_format),
// registered once even when another part of the module binds MemoryFormat too.
void bind_memory_format(nb::module_& m);

}  // namespace anatomy::python
