// 0-dim CPU tensors made and cast without the dispatcher (see cpu_scalar.h).
#include "anatomy/core/cpu_scalar.h"

#include "anatomy/core/allocator.h"
#include "anatomy/core/dtype_visit.h"
#include "anatomy/core/empty_tensor.h"

namespace anatomy {
namespace {

// A 0-dim tensor has no sizes or strides to check and one element: made directly, as
// contiguous, without make_empty_tensor's checks (every `a * 2` makes one or two of these).
Tensor empty_cpu_scalar(DType dtype, const char* op) {
  Allocator* cpu = get_allocator(DeviceType::CPU);
  ANATOMY_CHECK(cpu != nullptr, DeviceError, "{}: no allocator is registered for cpu", op);
  return Tensor(IntrusivePtr<TensorImpl>::make(cpu->make_storage(element_size(dtype)), dtype, IntArrayRef{},
                                               IntArrayRef{}, TensorImpl::ContiguousLayout{1}));
}

}  // namespace

Tensor make_cpu_scalar(const Scalar& value, DType dtype) {
  Tensor t = empty_cpu_scalar(dtype, "scalar_tensor");
  visit_dtype(dtype, "scalar_tensor", [&]<typename T>() { *static_cast<T*>(t.data_ptr()) = value.to<T>(); });
  return t;
}

Tensor cast_cpu_scalar(const Tensor& t, DType dtype) {
  ANATOMY_INTERNAL_ASSERT(t.dim() == 0 && t.is_cpu(), "cast_cpu_scalar: expected a 0-dim CPU tensor");
  Tensor out = empty_cpu_scalar(dtype, "_to_copy");
  visit_dtype(t.dtype(), "_to_copy", [&]<typename From>() {
    const From v = *static_cast<const From*>(t.data_ptr());
    visit_dtype(dtype, "_to_copy", [&]<typename To>() { *static_cast<To*>(out.data_ptr()) = convert<To>(v); });
  });
  return out;
}

}  // namespace anatomy
