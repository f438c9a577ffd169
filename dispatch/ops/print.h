// Pictures of tensors for people: PyTorch-like value printing (operator<<, fmt "{}"), and the
// layout report `describe` that the contiguity experiments print.
#pragma once

#include <fmt/format.h>

#include <string>

#include "anatomy/core/tensor.h"

namespace anatomy {

struct PrintOptions {
  int precision = 4;         // digits after the point for floats
  int64_t threshold = 1000;  // summarize tensors with more elements than this
  int64_t edgeitems = 3;     // items shown at each end of a summarized dim
  int linewidth = 80;        // not enforced for rows; kept for PyTorch parity in docs
};
void set_print_options(const PrintOptions& options);
const PrintOptions& print_options();

// "tensor([[1., 2.],\n        [3., 4.]], dtype=fp16, device='cuda:0')". Reading a device
// tensor's values copies it to the CPU, which synchronizes with the device.
std::string to_string(const Tensor& t);

// The layout report, one "  key : value" line each: shape, dtype, device, is_contiguous,
// strides, storage_offset, offset_bytes (with offset_bytes mod 128).
std::string describe(const Tensor& t);

// "(2048, 2048)", "(5,)", "()": a shape as Python prints a tuple.
std::string shape_string(IntArrayRef sizes);

}  // namespace anatomy

template <>
struct fmt::formatter<anatomy::Tensor> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(const anatomy::Tensor& t, FormatContext& ctx) const {
    std::string s = anatomy::to_string(t);
    return fmt::formatter<std::string_view>::format(std::string_view(s), ctx);
  }
};
