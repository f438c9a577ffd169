// CUDA: empty and empty_strided, over the CUDA allocator, on the device the call names ("cuda"
// means the current device).
#include "anatomy/backends/cuda/memory/cuda_allocator.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/core/empty_tensor.h"
#include "anatomy/dispatch/library.h"

namespace anatomy::cuda {
namespace {

Tensor empty_cuda(IntArrayRef size, std::optional<DType> dtype, std::optional<Device> device,
                  std::optional<MemoryFormat> format) {
  DeviceGuard guard(resolve_device_index(device.value_or(Device(DeviceType::CUDA)), "empty"));
  return make_empty_tensor(size, dtype.value_or(kDefaultFloat), cuda_allocator(),
                           format.value_or(MemoryFormat::Contiguous), "empty");
}

Tensor empty_strided_cuda(IntArrayRef size, IntArrayRef stride, std::optional<DType> dtype,
                          std::optional<Device> device) {
  DeviceGuard guard(resolve_device_index(device.value_or(Device(DeviceType::CUDA)), "empty_strided"));
  return make_empty_tensor(size, stride, dtype.value_or(kDefaultFloat), cuda_allocator(), "empty_strided");
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) {
  m.impl("empty.memory_format", ANATOMY_KERNEL(empty_cuda));
  m.impl("empty_strided", ANATOMY_KERNEL(empty_strided_cuda));
}

}  // namespace anatomy::cuda
