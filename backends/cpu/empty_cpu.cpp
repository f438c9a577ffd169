// CPU: empty and empty_strided, over the CPU allocator.
#include "anatomy/core/empty_tensor.h"
#include "anatomy/dispatch/library.h"

namespace anatomy::cpu {
namespace {

Tensor empty_cpu(IntArrayRef size, std::optional<DType> dtype, std::optional<Device>,
                 std::optional<MemoryFormat> format) {
  return make_empty_tensor(size, dtype.value_or(kDefaultFloat), get_allocator(DeviceType::CPU),
                           format.value_or(MemoryFormat::Contiguous), "empty");
}

Tensor empty_strided_cpu(IntArrayRef size, IntArrayRef stride, std::optional<DType> dtype, std::optional<Device>) {
  return make_empty_tensor(size, stride, dtype.value_or(kDefaultFloat), get_allocator(DeviceType::CPU),
                           "empty_strided");
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) {
  m.impl("empty.memory_format", ANATOMY_KERNEL(empty_cpu));
  m.impl("empty_strided", ANATOMY_KERNEL(empty_strided_cpu));
}

}  // namespace anatomy::cpu
