// Factory operators: schemas, BackendSelect kernels, the composites built from empty and the
// fill kernels, and the C++ functions users call.

#include <cstdint>

#include "anatomy/core/checked_arith.h"
#include "anatomy/dispatch/backend_select.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/composite_errors.h"

namespace anatomy {

using OptDType = std::optional<DType>;
using OptDevice = std::optional<Device>;
using OptFormat = std::optional<MemoryFormat>;

ANATOMY_LIBRARY(aten, m) {
  m.def(
      "empty.memory_format(int[] size, *, ScalarType? dtype=None, Device? device=None, MemoryFormat? "
      "memory_format=None) -> Tensor");
  m.def("empty_strided(int[] size, int[] stride, *, ScalarType? dtype=None, Device? device=None) -> Tensor");
  m.def("zeros(int[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor");
  m.def("ones(int[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor");
  m.def("full(int[] size, Scalar fill_value, *, ScalarType? dtype=None, Device? device=None) -> Tensor");
  m.def(
      "arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, Device? device=None) -> "
      "Tensor");
  m.def("linspace(Scalar start, Scalar end, int steps, *, ScalarType? dtype=None, Device? device=None) -> Tensor");
  m.def("eye(int n, int? m=None, *, ScalarType? dtype=None, Device? device=None) -> Tensor");
  m.def("rand(int[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor");
  m.def("randn(int[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor");
  m.def("randint.low(int low, int high, int[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor");
  m.def(
      "empty_like(Tensor self, *, ScalarType? dtype=None, Device? device=None, MemoryFormat? memory_format=None) -> "
      "Tensor");
  m.def("zeros_like(Tensor self, *, ScalarType? dtype=None, Device? device=None) -> Tensor");
  m.def("ones_like(Tensor self, *, ScalarType? dtype=None, Device? device=None) -> Tensor");
  m.def("full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Device? device=None) -> Tensor");
  m.def("rand_like(Tensor self, *, ScalarType? dtype=None, Device? device=None) -> Tensor");
  m.def("randn_like(Tensor self, *, ScalarType? dtype=None, Device? device=None) -> Tensor");
}

ANATOMY_LIBRARY_IMPL(aten, BackendSelect, m) {
  ANATOMY_BACKEND_SELECT(m, "aten::empty.memory_format", Tensor(IntArrayRef, OptDType, OptDevice, OptFormat));
  ANATOMY_BACKEND_SELECT(m, "aten::empty_strided", Tensor(IntArrayRef, IntArrayRef, OptDType, OptDevice));
  ANATOMY_BACKEND_SELECT(m, "aten::zeros", Tensor(IntArrayRef, OptDType, OptDevice));
  ANATOMY_BACKEND_SELECT(m, "aten::ones", Tensor(IntArrayRef, OptDType, OptDevice));
  ANATOMY_BACKEND_SELECT(m, "aten::full", Tensor(IntArrayRef, const Scalar&, OptDType, OptDevice));
  ANATOMY_BACKEND_SELECT(m, "aten::arange.start_step",
                         Tensor(const Scalar&, const Scalar&, const Scalar&, OptDType, OptDevice));
  ANATOMY_BACKEND_SELECT(m, "aten::linspace", Tensor(const Scalar&, const Scalar&, int64_t, OptDType, OptDevice));
  ANATOMY_BACKEND_SELECT(m, "aten::eye", Tensor(int64_t, std::optional<int64_t>, OptDType, OptDevice));
  ANATOMY_BACKEND_SELECT(m, "aten::rand", Tensor(IntArrayRef, OptDType, OptDevice));
  ANATOMY_BACKEND_SELECT(m, "aten::randn", Tensor(IntArrayRef, OptDType, OptDevice));
  ANATOMY_BACKEND_SELECT(m, "aten::randint.low", Tensor(int64_t, int64_t, IntArrayRef, OptDType, OptDevice));
}

// ---- composites: every backend with empty, fill_, uniform_, normal_ and random_ gets these ----
// Each checks its size itself and names itself when the allocation fails (composite_errors.h),
// so that no error speaks of the empty it calls.
namespace {

// An empty tensor for the factory `op`: the size checked, an out-of-memory error named after op.
Tensor factory_empty(const char* op, IntArrayRef size, DType dtype, OptDevice device) {
  check_factory_size(size, op);
  return naming_oom(op, [&] { return empty(size, TensorOptions().dtype(dtype).device(device.value_or(kCPU))); });
}

Tensor zeros_composite(IntArrayRef size, OptDType dtype, OptDevice device) {
  return fill_(factory_empty("zeros", size, dtype.value_or(kDefaultFloat), device), 0);
}
Tensor ones_composite(IntArrayRef size, OptDType dtype, OptDevice device) {
  return fill_(factory_empty("ones", size, dtype.value_or(kDefaultFloat), device), 1);
}
// Like PyTorch, full infers the dtype from the fill value: bool, int64, or the default float.
DType scalar_default_dtype(const Scalar& s) {
  return s.is_bool() ? DType::Bool : s.is_integral() ? DType::Int64 : kDefaultFloat;
}
Tensor full_composite(IntArrayRef size, const Scalar& value, OptDType dtype, OptDevice device) {
  return fill_(factory_empty("full", size, dtype.value_or(scalar_default_dtype(value)), device), value);
}
Tensor eye_composite(int64_t n, std::optional<int64_t> m, OptDType dtype, OptDevice device) {
  ANATOMY_CHECK(n >= 0 && m.value_or(n) >= 0, ValueError, "eye: sizes must be non-negative, got n={} m={}", n,
                m.value_or(n));
  Tensor out = fill_(factory_empty("eye", {n, m.value_or(n)}, dtype.value_or(kDefaultFloat), device), 0);
  fill_(diagonal(out), 1);
  return out;
}
Tensor rand_composite(IntArrayRef size, OptDType dtype, OptDevice device) {
  DType d = dtype.value_or(kDefaultFloat);
  ANATOMY_CHECK(is_floating(d), TypeError, "rand: needs a floating dtype, got {}", name(d));
  return uniform_(factory_empty("rand", size, d, device), 0.0, 1.0);
}
Tensor randn_composite(IntArrayRef size, OptDType dtype, OptDevice device) {
  DType d = dtype.value_or(kDefaultFloat);
  ANATOMY_CHECK(is_floating(d), TypeError, "randn: needs a floating dtype, got {}", name(d));
  return normal_(factory_empty("randn", size, d, device), 0.0, 1.0);
}
Tensor randint_composite(int64_t low, int64_t high, IntArrayRef size, OptDType dtype, OptDevice device) {
  ANATOMY_CHECK(low < high, ValueError, "randint: low ({}) must be below high ({})", low, high);
  return random_(factory_empty("randint", size, dtype.value_or(DType::Int64), device), low, high);
}

TensorOptions like_options(const Tensor& self, OptDType dtype, OptDevice device) {
  return TensorOptions().dtype(dtype.value_or(self.dtype())).device(device.value_or(self.device()));
}

// The *_like factories take self's size, which is valid; only the allocation can fail.
Tensor empty_like_as(const char* op, const Tensor& self, OptDType dtype, OptDevice device, OptFormat memory_format) {
  check_memory_format_dims(self.sizes(), memory_format.value_or(MemoryFormat::Preserve), op);
  return naming_oom(op, [&] {
    TensorOptions o = like_options(self, dtype, device);
    MemoryFormat f = memory_format.value_or(MemoryFormat::Preserve);
    if (f == MemoryFormat::Preserve) {
      // A dense layout (any permutation) is kept stride for stride; otherwise the layout
      // suggest_memory_format picks.
      if (self.is_non_overlapping_and_dense()) return empty_strided(self.sizes(), self.strides(), o);
      f = suggest_memory_format(self);
    }
    return empty(self.sizes(), o, f);
  });
}
Tensor empty_like_composite(const Tensor& self, OptDType dtype, OptDevice device, OptFormat memory_format) {
  return empty_like_as("empty_like", self, dtype, device, memory_format);
}
Tensor zeros_like_composite(const Tensor& self, OptDType dtype, OptDevice device) {
  return fill_(empty_like_as("zeros_like", self, dtype, device, std::nullopt), 0);
}
Tensor ones_like_composite(const Tensor& self, OptDType dtype, OptDevice device) {
  return fill_(empty_like_as("ones_like", self, dtype, device, std::nullopt), 1);
}
Tensor full_like_composite(const Tensor& self, const Scalar& value, OptDType dtype, OptDevice device) {
  return fill_(empty_like_as("full_like", self, dtype, device, std::nullopt), value);
}
Tensor rand_like_composite(const Tensor& self, OptDType dtype, OptDevice device) {
  return uniform_(empty_like_as("rand_like", self, dtype, device, std::nullopt), 0.0, 1.0);
}
Tensor randn_like_composite(const Tensor& self, OptDType dtype, OptDevice device) {
  return normal_(empty_like_as("randn_like", self, dtype, device, std::nullopt), 0.0, 1.0);
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("zeros", ANATOMY_KERNEL(zeros_composite));
  m.impl("ones", ANATOMY_KERNEL(ones_composite));
  m.impl("full", ANATOMY_KERNEL(full_composite));
  m.impl("eye", ANATOMY_KERNEL(eye_composite));
  m.impl("rand", ANATOMY_KERNEL(rand_composite));
  m.impl("randn", ANATOMY_KERNEL(randn_composite));
  m.impl("randint.low", ANATOMY_KERNEL(randint_composite));
  m.impl("empty_like", ANATOMY_KERNEL(empty_like_composite));
  m.impl("zeros_like", ANATOMY_KERNEL(zeros_like_composite));
  m.impl("ones_like", ANATOMY_KERNEL(ones_like_composite));
  m.impl("full_like", ANATOMY_KERNEL(full_like_composite));
  m.impl("rand_like", ANATOMY_KERNEL(rand_like_composite));
  m.impl("randn_like", ANATOMY_KERNEL(randn_like_composite));
}

// ---- the C++ API ----
namespace {
// requires_grad in the options is applied after the factory returns (factories are leaves).
Tensor finish(Tensor t, const TensorOptions& o) {
  if (o.requires_grad()) t.requires_grad_(true);
  return t;
}
}  // namespace

Tensor empty(IntArrayRef size, TensorOptions o, std::optional<MemoryFormat> memory_format) {
  ANATOMY_OP(op, "aten::empty.memory_format", Tensor(IntArrayRef, OptDType, OptDevice, OptFormat));
  return finish(op.call(size, o.dtype_opt(), o.device_opt(), memory_format), o);
}
Tensor empty_strided(IntArrayRef size, IntArrayRef stride, TensorOptions o) {
  ANATOMY_OP(op, "aten::empty_strided", Tensor(IntArrayRef, IntArrayRef, OptDType, OptDevice));
  return finish(op.call(size, stride, o.dtype_opt(), o.device_opt()), o);
}
Tensor zeros(IntArrayRef size, TensorOptions o) {
  ANATOMY_OP(op, "aten::zeros", Tensor(IntArrayRef, OptDType, OptDevice));
  return finish(op.call(size, o.dtype_opt(), o.device_opt()), o);
}
Tensor ones(IntArrayRef size, TensorOptions o) {
  ANATOMY_OP(op, "aten::ones", Tensor(IntArrayRef, OptDType, OptDevice));
  return finish(op.call(size, o.dtype_opt(), o.device_opt()), o);
}
Tensor full(IntArrayRef size, const Scalar& fill_value, TensorOptions o) {
  ANATOMY_OP(op, "aten::full", Tensor(IntArrayRef, const Scalar&, OptDType, OptDevice));
  return finish(op.call(size, fill_value, o.dtype_opt(), o.device_opt()), o);
}
Tensor arange(const Scalar& end, TensorOptions o) { return arange(0, end, 1, o); }
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions o) {
  ANATOMY_OP(op, "aten::arange.start_step", Tensor(const Scalar&, const Scalar&, const Scalar&, OptDType, OptDevice));
  return finish(op.call(start, end, step, o.dtype_opt(), o.device_opt()), o);
}
Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, TensorOptions o) {
  ANATOMY_OP(op, "aten::linspace", Tensor(const Scalar&, const Scalar&, int64_t, OptDType, OptDevice));
  return finish(op.call(start, end, steps, o.dtype_opt(), o.device_opt()), o);
}
Tensor eye(int64_t n, std::optional<int64_t> m, TensorOptions o) {
  ANATOMY_OP(op, "aten::eye", Tensor(int64_t, std::optional<int64_t>, OptDType, OptDevice));
  return finish(op.call(n, m, o.dtype_opt(), o.device_opt()), o);
}
Tensor rand(IntArrayRef size, TensorOptions o) {
  ANATOMY_OP(op, "aten::rand", Tensor(IntArrayRef, OptDType, OptDevice));
  return finish(op.call(size, o.dtype_opt(), o.device_opt()), o);
}
Tensor randn(IntArrayRef size, TensorOptions o) {
  ANATOMY_OP(op, "aten::randn", Tensor(IntArrayRef, OptDType, OptDevice));
  return finish(op.call(size, o.dtype_opt(), o.device_opt()), o);
}
Tensor randint(int64_t low, int64_t high, IntArrayRef size, TensorOptions o) {
  ANATOMY_OP(op, "aten::randint.low", Tensor(int64_t, int64_t, IntArrayRef, OptDType, OptDevice));
  return finish(op.call(low, high, size, o.dtype_opt(), o.device_opt()), o);
}
Tensor randint(int64_t high, IntArrayRef size, TensorOptions o) { return randint(0, high, size, o); }

namespace {
// The largest integer up to which every integer is exact in `t`.
int64_t max_exact_integer(DType t) {
  switch (t) {
    case DType::UInt8:
      return 255;
    case DType::Int8:
      return 127;
    case DType::Int32:
      return 2147483647;
    case DType::Float16:
      return 2048;
    case DType::BFloat16:
      return 256;
    case DType::Float32:
      return int64_t{1} << 24;
    case DType::Float64:
      return int64_t{1} << 53;
    default:
      return INT64_MAX;
  }
}
}  // namespace

Tensor randperm(int64_t n, TensorOptions o) {
  const DType dtype = o.dtype_opt().value_or(DType::Int64);
  ANATOMY_CHECK(n >= 0, ValueError, "randperm: n ({}) must be non-negative", n);
  ANATOMY_CHECK(dtype != DType::Bool, TypeError, "randperm: a bool tensor cannot hold a permutation");
  ANATOMY_CHECK(n == 0 || n - 1 <= max_exact_integer(dtype), ValueError,
                "randperm: n ({}) is too large for {}, which holds integers exactly up to {}", n, name(dtype),
                max_exact_integer(dtype));
  // Uniform fp64 keys, sorted: argsort is stable, so even tied keys give a permutation.
  TensorOptions keys_options = TensorOptions().dtype(DType::Float64);
  if (o.device_opt()) keys_options = keys_options.device(*o.device_opt());
  const Tensor perm = argsort(rand({n}, keys_options));
  return finish(dtype == DType::Int64 ? perm : perm.to(dtype), o);
}

Tensor empty_like(const Tensor& self, TensorOptions o, std::optional<MemoryFormat> memory_format) {
  ANATOMY_OP(op, "aten::empty_like", Tensor(const Tensor&, OptDType, OptDevice, OptFormat));
  return finish(op.call(self, o.dtype_opt(), o.device_opt(), memory_format), o);
}
Tensor zeros_like(const Tensor& self, TensorOptions o) {
  ANATOMY_OP(op, "aten::zeros_like", Tensor(const Tensor&, OptDType, OptDevice));
  return finish(op.call(self, o.dtype_opt(), o.device_opt()), o);
}
Tensor ones_like(const Tensor& self, TensorOptions o) {
  ANATOMY_OP(op, "aten::ones_like", Tensor(const Tensor&, OptDType, OptDevice));
  return finish(op.call(self, o.dtype_opt(), o.device_opt()), o);
}
Tensor full_like(const Tensor& self, const Scalar& fill_value, TensorOptions o) {
  ANATOMY_OP(op, "aten::full_like", Tensor(const Tensor&, const Scalar&, OptDType, OptDevice));
  return finish(op.call(self, fill_value, o.dtype_opt(), o.device_opt()), o);
}
Tensor rand_like(const Tensor& self, TensorOptions o) {
  ANATOMY_OP(op, "aten::rand_like", Tensor(const Tensor&, OptDType, OptDevice));
  return finish(op.call(self, o.dtype_opt(), o.device_opt()), o);
}
Tensor randn_like(const Tensor& self, TensorOptions o) {
  ANATOMY_OP(op, "aten::randn_like", Tensor(const Tensor&, OptDType, OptDevice));
  return finish(op.call(self, o.dtype_opt(), o.device_opt()), o);
}

MemoryFormat suggest_memory_format(const Tensor& t) {
  // Strides ordered like NHWC decide even when the tensor is also contiguous ((N, C, 1, 1) with
  // strides (C, 1, C, C)), as PyTorch's does.
  if (is_channels_last_strides(t.sizes(), t.strides())) return MemoryFormat::ChannelsLast;
  if (is_channels_last_3d_strides(t.sizes(), t.strides())) return MemoryFormat::ChannelsLast3d;
  return MemoryFormat::Contiguous;
}

}  // namespace anatomy
