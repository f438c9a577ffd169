// Meta backend: tensors with shape, dtype and strides but no data. Its kernels do every check
// the real kernels do and compute output metadata, so a user can ask what an op would return
// (shape, dtype, layout) without allocating or computing anything.
#include "anatomy/core/empty_tensor.h"
#include "anatomy/core/type_promotion.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/random_args.h"

namespace anatomy::meta {
namespace {

// Hands out no memory: a meta storage records its size only.
class MetaAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t) override { return DataPtr(nullptr, Device(DeviceType::Meta)); }
};

MetaAllocator g_meta_allocator;
const bool registered = [] {
  set_allocator(DeviceType::Meta, &g_meta_allocator);
  return true;
}();

Tensor empty_meta(IntArrayRef size, std::optional<DType> dtype, std::optional<Device>,
                  std::optional<MemoryFormat> format) {
  return make_empty_tensor(size, dtype.value_or(kDefaultFloat), &g_meta_allocator,
                           format.value_or(MemoryFormat::Contiguous), "empty");
}

Tensor empty_strided_meta(IntArrayRef size, IntArrayRef stride, std::optional<DType> dtype, std::optional<Device>) {
  return make_empty_tensor(size, stride, dtype.value_or(kDefaultFloat), &g_meta_allocator, "empty_strided");
}

Tensor copy_meta(const Tensor& self, const Tensor& src, bool) {
  ANATOMY_CHECK(self.is_meta(), DeviceError,
                "copy_: cannot copy meta data into a {} tensor (meta tensors have no data)", self.device().str());
  checked_copy_source(self, src);
  self.impl()->bump_version();
  return self;
}

Tensor fill_meta(const Tensor& self, const Scalar& value) {
  check_scalar_fits(value, self.dtype(), "fill_");
  check_no_internal_overlap(self, "fill_");
  self.impl()->bump_version();
  return self;
}

// The random fills check their arguments as every backend does (dispatch/ops/random_args.h).
Tensor uniform_meta(const Tensor& self, double from, double to) {
  check_uniform_args(self.dtype(), from, to);
  return self;
}

Tensor normal_meta(const Tensor& self, double, double std) {
  check_normal_args(self.dtype(), std);
  return self;
}

Tensor random_meta(const Tensor& self, int64_t from, std::optional<int64_t> to) {
  (void)random_range(self.dtype(), from, to);
  return self;
}

Tensor arange_meta(const Scalar& start, const Scalar& end, const Scalar& step, std::optional<DType> dtype,
                   std::optional<Device>) {
  int64_t n = arange_length(start, end, step, "arange");
  return make_empty_tensor({n}, dtype.value_or(arange_default_dtype(start, end, step)), &g_meta_allocator,
                           MemoryFormat::Contiguous, "arange");
}

Tensor linspace_meta(const Scalar&, const Scalar&, int64_t steps, std::optional<DType> dtype, std::optional<Device>) {
  ANATOMY_CHECK(steps >= 0, ValueError, "linspace: number of steps must be non-negative, got {}", steps);
  return make_empty_tensor({steps}, dtype.value_or(kDefaultFloat), &g_meta_allocator, MemoryFormat::Contiguous,
                           "linspace");
}

Scalar local_scalar_dense_meta(const Tensor&) {
  ANATOMY_THROW(NotImplementedError, "item: meta tensors have no data to read");
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Meta, m) {
  m.impl("empty.memory_format", ANATOMY_KERNEL(empty_meta));
  m.impl("empty_strided", ANATOMY_KERNEL(empty_strided_meta));
  m.impl("copy_", ANATOMY_KERNEL(copy_meta));
  m.impl("fill_.Scalar", ANATOMY_KERNEL(fill_meta));
  m.impl("uniform_", ANATOMY_KERNEL(uniform_meta));
  m.impl("normal_", ANATOMY_KERNEL(normal_meta));
  m.impl("random_.from", ANATOMY_KERNEL(random_meta));
  m.impl("arange.start_step", ANATOMY_KERNEL(arange_meta));
  m.impl("linspace", ANATOMY_KERNEL(linspace_meta));
  m.impl("_local_scalar_dense", ANATOMY_KERNEL(local_scalar_dense_meta));
}

}  // namespace anatomy::meta
