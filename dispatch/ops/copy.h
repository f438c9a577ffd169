// Copies, fills and conversions.
#pragma once

#include <optional>

#include "anatomy/core/tensor.h"

namespace anatomy {

// ---- copies, fills, conversions ----
Tensor clone(const Tensor& self, std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor contiguous(const Tensor& self, MemoryFormat memory_format = MemoryFormat::Contiguous);
Tensor copy_(const Tensor& self, const Tensor& src, bool non_blocking = false);
Tensor fill_(const Tensor& self, const Scalar& value);
Tensor uniform_(const Tensor& self, double from = 0.0, double to = 1.0);
Tensor normal_(const Tensor& self, double mean = 0.0, double std = 1.0);
// Integers in [from, to) (to = None: up to the dtype's largest value), converted to self's dtype.
Tensor random_(const Tensor& self, int64_t from, std::optional<int64_t> to);
// A copy with a new dtype, device or layout (what Tensor::to does when something changes).
Tensor _to_copy(const Tensor& self, std::optional<DType> dtype = std::nullopt,
                std::optional<Device> device = std::nullopt, bool non_blocking = false,
                std::optional<MemoryFormat> memory_format = std::nullopt);
// The value of a one-element tensor (what item() calls after its checks). Synchronizes with
// the device for device tensors.
Scalar _local_scalar_dense(const Tensor& self);

// The layout clone and the _like factories choose for a tensor `t` that is not dense:
// ChannelsLast for a 4-D tensor whose strides are ordered NHWC (gaps allowed), ChannelsLast3d for
// a 5-D one ordered NDHWC, else Contiguous (PyTorch's suggest_memory_format).
MemoryFormat suggest_memory_format(const Tensor& t);

}  // namespace anatomy
