// Copies, fills, conversions and the random fills: schemas, composites and C++ functions.
#include "anatomy/core/checked_arith.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy {
namespace {

Tensor clone_composite(const Tensor& self, std::optional<MemoryFormat> memory_format) {
  check_memory_format_dims(self.sizes(), memory_format.value_or(MemoryFormat::Preserve), "clone");
  Tensor out = empty_like(self, {}, memory_format.value_or(MemoryFormat::Preserve));
  copy_(out, self);
  return out;
}

Tensor contiguous_composite(const Tensor& self, MemoryFormat memory_format) {
  ANATOMY_CHECK(memory_format != MemoryFormat::Preserve, ValueError,
                "contiguous: preserve_format is not a layout to make a tensor contiguous in");
  check_memory_format_dims(self.sizes(), memory_format, "contiguous");
  if (self.is_contiguous(memory_format)) return self;
  return clone(self, memory_format);
}

Tensor to_copy_composite(const Tensor& self, std::optional<DType> dtype, std::optional<Device> device,
                         bool non_blocking, std::optional<MemoryFormat> memory_format) {
  check_memory_format_dims(self.sizes(), memory_format.value_or(MemoryFormat::Preserve), "to");
  Tensor out =
      empty_like(self, TensorOptions().dtype(dtype.value_or(self.dtype())).device(device.value_or(self.device())),
                 memory_format.value_or(MemoryFormat::Preserve));
  copy_(out, self, non_blocking);
  return out;
}

}  // namespace

ANATOMY_LIBRARY(aten, m) {
  m.def("copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)");
  m.def("fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)");
  m.def("uniform_(Tensor(a!) self, float from=0, float to=1) -> Tensor(a!)");
  m.def("normal_(Tensor(a!) self, float mean=0, float std=1) -> Tensor(a!)");
  m.def("random_.from(Tensor(a!) self, int from, int? to) -> Tensor(a!)");
  m.def("_local_scalar_dense(Tensor self) -> Scalar");
  m.def("clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor");
  m.def(
      "_to_copy(Tensor self, *, ScalarType? dtype=None, Device? device=None, bool non_blocking=False, "
      "MemoryFormat? memory_format=None) -> Tensor");
  m.def("contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)",
        ANATOMY_KERNEL(contiguous_composite));
}

ANATOMY_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("clone", ANATOMY_KERNEL(clone_composite));
  m.impl("_to_copy", ANATOMY_KERNEL(to_copy_composite));
}

// ---- the C++ API ----
Tensor copy_(const Tensor& self, const Tensor& src, bool non_blocking) {
  ANATOMY_OP(op, "aten::copy_", Tensor(const Tensor&, const Tensor&, bool));
  return op.call(self, src, non_blocking);
}
Tensor fill_(const Tensor& self, const Scalar& value) {
  ANATOMY_OP(op, "aten::fill_.Scalar", Tensor(const Tensor&, const Scalar&));
  return op.call(self, value);
}
Tensor uniform_(const Tensor& self, double from, double to) {
  ANATOMY_OP(op, "aten::uniform_", Tensor(const Tensor&, double, double));
  return op.call(self, from, to);
}
Tensor normal_(const Tensor& self, double mean, double std) {
  ANATOMY_OP(op, "aten::normal_", Tensor(const Tensor&, double, double));
  return op.call(self, mean, std);
}
Tensor random_(const Tensor& self, int64_t from, std::optional<int64_t> to) {
  ANATOMY_OP(op, "aten::random_.from", Tensor(const Tensor&, int64_t, std::optional<int64_t>));
  return op.call(self, from, to);
}
Scalar _local_scalar_dense(const Tensor& self) {
  ANATOMY_OP(op, "aten::_local_scalar_dense", Scalar(const Tensor&));
  return op.call(self);
}
Tensor clone(const Tensor& self, std::optional<MemoryFormat> memory_format) {
  ANATOMY_OP(op, "aten::clone", Tensor(const Tensor&, std::optional<MemoryFormat>));
  return op.call(self, memory_format);
}
Tensor contiguous(const Tensor& self, MemoryFormat memory_format) {
  ANATOMY_OP(op, "aten::contiguous", Tensor(const Tensor&, MemoryFormat));
  return op.call(self, memory_format);
}
Tensor _to_copy(const Tensor& self, std::optional<DType> dtype, std::optional<Device> device, bool non_blocking,
                std::optional<MemoryFormat> memory_format) {
  ANATOMY_OP(op, "aten::_to_copy",
             Tensor(const Tensor&, std::optional<DType>, std::optional<Device>, bool, std::optional<MemoryFormat>));
  return op.call(self, dtype, device, non_blocking, memory_format);
}

}  // namespace anatomy
