// Python values to the engine's, for every binding: what a user may pass where the engine takes
// a dtype, a device, a Scalar or a list of sizes. Each throws the engine's typed error (TypeError
// for a value of the wrong kind, ValueError for a bad spelling) naming `what`, the argument, so
// that the message reads like the C++ API's.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include "anatomy/anatomy.h"

namespace anatomy::python {

namespace nb = nanobind;

// anatomy.float32 (an anatomy.dtype), or its name as a string ("float32", "fp32", "torch.float32").
DType to_dtype(nb::handle h, std::string_view what = "dtype");
// anatomy.device, "cpu", "cuda", "cuda:1", "meta", or an int (that CUDA device).
Device to_device(nb::handle h, std::string_view what = "device");
// bool, int (that fits int64), float, or a one-element Tensor (its value, as item() reads it).
Scalar to_scalar(nb::handle h, std::string_view what = "value");
bool is_scalar(nb::handle h);  // whether to_scalar would take h (no tensor)
// An int, or a sequence of ints (tuple, list, anatomy.Size...): sizes, dims, strides.
std::vector<int64_t> to_int_list(nb::handle h, std::string_view what = "size");
// An int that fits int64 (a Python bool is refused: True is not a dimension).
int64_t to_int(nb::handle h, std::string_view what);

// The Python form of a Scalar: bool, int or float.
nb::object from_scalar(const Scalar& s);

}  // namespace anatomy::python
