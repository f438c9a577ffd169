// C++ exceptions as Python exceptions, for code that Python calls without nanobind's function
// wrapper around it (anatomy.ops' call slots): the mapping nanobind applies to a bound function,
// and the engine's errors as errors.cpp's translator maps them.
#pragma once

namespace anatomy::python {

// Sets the Python error for the C++ exception being handled; call it inside a catch (...) block.
// A nb::python_error is restored, a nb::builtin_exception raised as its type, an engine error as
// its kind (bindings.h's bind_errors lists them), std::bad_alloc as MemoryError, the standard
// library's logic and range errors as nanobind raises them, any other std::exception as
// RuntimeError.
void set_python_error() noexcept;

}  // namespace anatomy::python
