// DLPack import: from_dlpack for both managed tensors (interop/dlpack.h). Every field of the
// DLTensor is checked before anything is made, so a refused tensor is left to its caller
// untouched; an accepted one becomes a from_blob tensor whose deleter calls the producer's.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "anatomy/cuda.h"
#include "anatomy/interop/dlpack.h"
#include "anatomy/interop/dlpack_types.h"

namespace anatomy::interop {
namespace {

// The most dims an imported tensor may have: NumPy's limit (NPY_MAXDIMS). It bounds how much
// of `shape` and `strides` is read before anything else is known about them.
constexpr int32_t kMaxDims = 64;

// What a DLTensor describes, checked: from_blob's arguments.
struct Layout {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  DType dtype = DType::Float32;
  Device device;
  void* data = nullptr;  // the first element (data + byte_offset)
};

std::vector<int64_t> checked_sizes(const DLTensor& t) {
  ANATOMY_CHECK(t.ndim >= 0 && t.ndim <= kMaxDims, ValueError, "from_dlpack: dl_tensor.ndim is {}; it must be 0 to {}",
                t.ndim, kMaxDims);
  ANATOMY_CHECK(t.ndim == 0 || t.shape != nullptr, ValueError, "from_dlpack: dl_tensor.shape is null for ndim {}",
                t.ndim);
  std::vector<int64_t> sizes(t.shape, t.shape + t.ndim);
  for (size_t i = 0; i < sizes.size(); ++i) {
    ANATOMY_CHECK(sizes[i] >= 0, ValueError, "from_dlpack: dl_tensor.shape[{}] is {}; sizes must be >= 0", i, sizes[i]);
  }
  // Every tensor's shape spans at most int64 elements (an empty dim counting as 1), so that its
  // element count and row-major strides exist.
  int64_t span = 1;
  for (int64_t s : sizes) {
    ANATOMY_CHECK(!__builtin_mul_overflow(span, std::max<int64_t>(s, 1), &span), ValueError,
                  "from_dlpack: dl_tensor.shape [{}] has more elements than int64 counts", fmt::join(sizes, ", "));
  }
  return sizes;
}

DType checked_dtype(const DLTensor& t) {
  ANATOMY_CHECK(t.dtype.lanes == 1, TypeError,
                "from_dlpack: dl_tensor.dtype.lanes is {}; anatomy has no vector types (lanes must be 1)",
                t.dtype.lanes);
  const std::optional<DType> dtype = from_dl_dtype(t.dtype);
  ANATOMY_CHECK(dtype.has_value(), TypeError,
                "from_dlpack: dl_tensor.dtype ({}) has no anatomy dtype; anatomy takes kDLFloat 16/32/64, "
                "kDLBfloat 16, kDLInt 8/32/64, kDLUInt 8 and kDLBool 8",
                dl_dtype_str(t.dtype));
  return *dtype;
}

Device checked_device(const DLTensor& t) {
  const int32_t type = dl_device_type(t.device);
  // Pinned host memory is host memory: a CPU tensor (cuda::is_pinned says true for it).
  if (type == kDLCPU || type == kDLCUDAHost) return kCPU;
  ANATOMY_CHECK(type == kDLCUDA, DeviceError,
                "from_dlpack: dl_tensor.device.device_type is {}; anatomy imports kDLCPU (1), kDLCUDA (2) and "
                "kDLCUDAHost (3)",
                dl_device_type_str(type));
  const int count = cuda::device_count();
  ANATOMY_CHECK(count > 0, DeviceError, "from_dlpack: dl_tensor.device is kDLCUDA:{}, but there is no CUDA device ({})",
                t.device.device_id, cuda::unavailable_reason());
  ANATOMY_CHECK(t.device.device_id >= 0 && t.device.device_id < count, DeviceError,
                "from_dlpack: dl_tensor.device.device_id is {}; the CUDA devices are 0 to {}", t.device.device_id,
                count - 1);
  return Device(DeviceType::CUDA, static_cast<Device::Index>(t.device.device_id));
}

// Strides in elements; null means row-major. A dim of one element, or any dim of an empty
// tensor, addresses no element through its stride: it takes the row-major stride whatever the
// producer wrote (NumPy writes negative ones there after a reversal).
std::vector<int64_t> checked_strides(const DLTensor& t, const std::vector<int64_t>& sizes) {
  const bool empty = std::find(sizes.begin(), sizes.end(), 0) != sizes.end();
  std::vector<int64_t> strides(sizes.size());
  int64_t row_major = 1;  // fits: checked_sizes bounds the shape's span
  for (size_t i = sizes.size(); i-- > 0;) {
    const bool used = t.strides != nullptr && !empty && sizes[i] != 1;
    strides[i] = used ? t.strides[i] : row_major;
    ANATOMY_CHECK(strides[i] >= 0, ValueError,
                  "from_dlpack: dl_tensor.strides[{}] is {}; anatomy has no negative strides (copy the array first)", i,
                  strides[i]);
    row_major *= std::max<int64_t>(sizes[i], 1);
  }
  return strides;
}

// The bytes from the first element to one past the last one the tensor reaches (0 for an empty
// tensor, at least one element's otherwise), checked as the engine's strided loops need: one
// step past the end of every dim must fit int64 bytes.
int64_t checked_extent_bytes(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, DType dtype) {
  if (std::find(sizes.begin(), sizes.end(), 0) != sizes.end()) return 0;
  const auto esize = static_cast<int64_t>(element_size(dtype));
  int64_t past_end = 0, last = 0, term = 0;
  bool fits = true;
  for (size_t i = 0; i < sizes.size() && fits; ++i) {
    fits = !__builtin_mul_overflow(sizes[i], strides[i], &term) && !__builtin_add_overflow(past_end, term, &past_end);
    if (fits) last += (sizes[i] - 1) * strides[i];  // at most past_end, so it fits too
  }
  fits = fits && !__builtin_mul_overflow(past_end, esize, &term);
  ANATOMY_CHECK(fits, ValueError,
                "from_dlpack: dl_tensor.shape [{}] with strides [{}] reaches past int64 bytes ({} bytes an element)",
                fmt::join(sizes, ", "), fmt::join(strides, ", "), esize);
  return (last + 1) * esize;
}

void* checked_data(const DLTensor& t, const std::vector<int64_t>& sizes, DType dtype, int64_t extent_bytes) {
  const bool empty = extent_bytes == 0;
  const uint64_t esize = element_size(dtype);
  const auto address = reinterpret_cast<uintptr_t>(t.data);
  ANATOMY_CHECK(t.byte_offset % esize == 0, ValueError,
                "from_dlpack: dl_tensor.byte_offset is {}, not a multiple of {}'s {} bytes", t.byte_offset, name(dtype),
                esize);
  ANATOMY_CHECK(address % esize == 0, ValueError, "from_dlpack: dl_tensor.data {} is not aligned to {}'s {} bytes",
                t.data, name(dtype), esize);
  ANATOMY_CHECK(t.data != nullptr || empty, ValueError,
                "from_dlpack: dl_tensor.data is null, but the tensor has elements (shape [{}])",
                fmt::join(sizes, ", "));
  int64_t end = 0;
  ANATOMY_CHECK(t.byte_offset <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) &&
                    !__builtin_add_overflow(static_cast<int64_t>(t.byte_offset), extent_bytes, &end),
                ValueError, "from_dlpack: dl_tensor.byte_offset {} and the tensor's {} bytes overflow int64",
                t.byte_offset, extent_bytes);
  ANATOMY_CHECK(static_cast<uint64_t>(end) <= std::numeric_limits<uintptr_t>::max() - address, ValueError,
                "from_dlpack: dl_tensor.data {} plus {} bytes wraps around the address space", t.data, end);
  // No arithmetic on a null pointer: an empty tensor without data stays without.
  return t.data == nullptr ? nullptr : static_cast<char*>(t.data) + t.byte_offset;
}

Layout checked_layout(const DLTensor& t) {
  Layout layout;
  layout.sizes = checked_sizes(t);
  layout.dtype = checked_dtype(t);
  layout.device = checked_device(t);
  layout.strides = checked_strides(t, layout.sizes);
  const int64_t extent = checked_extent_bytes(layout.sizes, layout.strides, layout.dtype);
  layout.data = checked_data(t, layout.sizes, layout.dtype, extent);
  return layout;
}

// Calls the producer's deleter when the imported storage goes, once the import has succeeded:
// if from_blob threw after taking the deleter, its cleanup finds it unarmed and leaves the
// managed tensor to the caller.
template <typename Managed>
struct ProducerOwner {
  Managed* managed;
  bool armed = false;
  void release() const {
    if (armed && managed->deleter != nullptr) managed->deleter(managed);
  }
};

template <typename Managed>
Tensor import_tensor(Managed* managed) {
  const Layout layout = checked_layout(managed->dl_tensor);
  auto owner = std::make_shared<ProducerOwner<Managed>>(ProducerOwner<Managed>{managed});
  Tensor t = from_blob(layout.data, layout.sizes, layout.strides,
                       TensorOptions().dtype(layout.dtype).device(layout.device), [owner](void*) { owner->release(); });
  owner->armed = true;
  return t;
}

}  // namespace

Tensor from_dlpack(DLManagedTensor* managed) {
  ANATOMY_CHECK(managed != nullptr, ValueError, "from_dlpack: the DLManagedTensor is null");
  return import_tensor(managed);
}

Tensor from_dlpack(DLManagedTensorVersioned* managed) {
  ANATOMY_CHECK(managed != nullptr, ValueError, "from_dlpack: the DLManagedTensorVersioned is null");
  // Only the version may be read before the major is known: a later major may lay out the rest
  // differently (the specification's rule).
  const uint32_t major = managed->version.major;
  ANATOMY_CHECK(major == kDLPackMajorVersion, NotImplementedError,
                "from_dlpack: version.major is {}; anatomy reads DLPack {}.x and left the tensor unread (its deleter "
                "is still the caller's to call)",
                major, kDLPackMajorVersion);
  // DLPACK_FLAG_BITMASK_READ_ONLY is not kept: anatomy has no read-only tensors, and, as PyTorch
  // does, imports the memory as writable (docs/interop.md, "Read-only tensors").
  return import_tensor(managed);
}

}  // namespace anatomy::interop
