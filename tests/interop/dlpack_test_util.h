// Helpers of the DLPack tests: a managed tensor made by hand over a test's buffer (a producer
// whose deleter counts its calls), and the bytes a DLTensor describes, read through its own
// data, byte_offset and strides, independently of the engine.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "anatomy/anatomy.h"
#include "anatomy/interop/dlpack.h"

TYPE_TO_STRING(DLManagedTensor);
TYPE_TO_STRING(DLManagedTensorVersioned);

namespace anatomy::dlpack_test {

template <typename Managed>
inline constexpr bool kVersioned = std::is_same_v<Managed, DLManagedTensorVersioned>;

// to_dlpack or to_dlpack_versioned, by the managed tensor's type.
template <typename Managed>
Managed* export_as(const Tensor& t) {
  if constexpr (kVersioned<Managed>) {
    return interop::to_dlpack_versioned(t);
  } else {
    return interop::to_dlpack(t);
  }
}

inline void set_device_type(DLDevice& device, int32_t type) {
  // Through memcpy: a code the header's enumeration lacks is still a valid int32 in memory.
  std::memcpy(&device.device_type, &type, sizeof(type));
}

// A producer's managed tensor over memory the test owns: the deleter only counts its calls, so a
// test can check that it ran exactly once, or not at all. Made in place (the DLTensor points at
// its own shape and strides), never moved.
template <typename Managed>
struct Handmade {
  Managed managed{};
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  int deleted = 0;

  Handmade(void* data, std::vector<int64_t> shape_, std::optional<std::vector<int64_t>> strides_, DLDataType dtype,
           uint64_t byte_offset = 0)
      : shape(std::move(shape_)), strides(strides_.value_or(std::vector<int64_t>{})) {
    DLTensor& dl = managed.dl_tensor;
    dl.data = data;
    dl.device = DLDevice{kDLCPU, 0};
    dl.ndim = static_cast<int32_t>(shape.size());
    dl.dtype = dtype;
    dl.shape = shape.data();
    dl.strides = strides_ ? strides.data() : nullptr;
    dl.byte_offset = byte_offset;
    managed.manager_ctx = &deleted;
    managed.deleter = [](Managed* self) { ++*static_cast<int*>(self->manager_ctx); };
    if constexpr (kVersioned<Managed>) managed.version = DLPackVersion{1, 1};
  }
  Handmade(const Handmade&) = delete;
  Handmade& operator=(const Handmade&) = delete;
};

template <typename Managed>
std::unique_ptr<Handmade<Managed>> handmade(void* data, std::vector<int64_t> shape,
                                            std::optional<std::vector<int64_t>> strides, DLDataType dtype,
                                            uint64_t byte_offset = 0) {
  return std::make_unique<Handmade<Managed>>(data, std::move(shape), std::move(strides), dtype, byte_offset);
}

inline constexpr DLDataType kFloat32{kDLFloat, 32, 1};

// The bytes of every element `dl` describes, in row-major order, read through its data,
// byte_offset and strides (null strides: row-major).
inline std::vector<unsigned char> dl_bytes(const DLTensor& dl) {
  const size_t esize = dl.dtype.bits / 8;
  std::vector<int64_t> shape(dl.shape, dl.shape + dl.ndim), strides(shape.size());
  int64_t n = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = dl.strides ? dl.strides[i] : n;
    n *= shape[i];
  }
  std::vector<unsigned char> out;
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t offset = 0;
    for (size_t i = 0; i < shape.size(); ++i) offset += index[i] * strides[i];
    const auto* p = static_cast<const unsigned char*>(dl.data) + dl.byte_offset + offset * static_cast<int64_t>(esize);
    out.insert(out.end(), p, p + esize);
    for (size_t i = shape.size(); i-- > 0;) {
      if (++index[i] < shape[i]) break;
      index[i] = 0;
    }
  }
  return out;
}

// The bytes of t's elements in row-major order, through the engine's contiguous copy.
inline std::vector<unsigned char> tensor_bytes(const Tensor& t) {
  const Tensor c = t.contiguous();
  std::vector<unsigned char> out(c.nbytes());
  if (!out.empty()) std::memcpy(out.data(), c.data_ptr(), out.size());
  return out;
}

}  // namespace anatomy::dlpack_test
