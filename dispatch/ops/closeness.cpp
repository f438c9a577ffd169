// isclose, allclose and equal: operators (as aten::isclose, allclose and equal) whose kernels are
// composites over the element-wise operators and reductions, so every backend runs them and a
// trace shows the operators they call. allclose and equal return a bool and wait for the device,
// like item().
#include "anatomy/core/error.h"
#include "anatomy/core/shape_rules.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy {

namespace {
void check_one_device(const char* op, const Tensor& self, const Tensor& other) {
  ANATOMY_CHECK(self.device() == other.device(), DeviceError,
                "{}: expected both tensors on one device, found {} and {}", op, self.device().str(),
                other.device().str());
}

Tensor close_elements(const char* op, const Tensor& self, const Tensor& other, double rtol, double atol,
                      bool equal_nan) {
  check_one_device(op, self, other);
  ANATOMY_CHECK(self.dtype() == other.dtype(), TypeError, "{}: self ({}) and other ({}) must have the same dtype", op,
                name(self.dtype()), name(other.dtype()));
  ANATOMY_CHECK(rtol >= 0, ValueError, "{}: rtol ({}) must be >= 0", op, rtol);
  ANATOMY_CHECK(atol >= 0, ValueError, "{}: atol ({}) must be >= 0", op, atol);
  broadcast_shapes(self.sizes(), other.sizes(), op);
  // Equal values are close, infinities of one sign included (their difference is NaN).
  Tensor close = eq(self, other);
  if (equal_nan && is_floating(self.dtype())) close = logical_or(close, logical_and(self.isnan(), other.isnan()));
  if (rtol == 0 && atol == 0) return close;
  // Integers and bool in fp64: their difference cannot wrap, and fp64 holds every int32 exactly.
  const bool exact = !is_floating(self.dtype());
  const Tensor a = exact ? self.to(DType::Float64) : self, b = exact ? other.to(DType::Float64) : other;
  const Tensor allowed = (b * rtol).abs() + atol;
  const Tensor actual = (a - b).abs();
  return logical_or(close, logical_and(actual.isfinite(), le(actual, allowed)));
}

Tensor isclose_composite(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  return close_elements("isclose", self, other, rtol, atol, equal_nan);
}
bool allclose_composite(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  return close_elements("allclose", self, other, rtol, atol, equal_nan).all().item<bool>();
}
bool equal_composite(const Tensor& self, const Tensor& other) {
  check_one_device("equal", self, other);
  if (self.sizes() != other.sizes()) return false;
  return eq(self, other).all().item<bool>();
}
}  // namespace

ANATOMY_LIBRARY(aten, m) {
  m.def("isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> Tensor");
  m.def("allclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> bool");
  m.def("equal(Tensor self, Tensor other) -> bool");
}

ANATOMY_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  m.impl("isclose", ANATOMY_KERNEL(isclose_composite));
  m.impl("allclose", ANATOMY_KERNEL(allclose_composite));
  m.impl("equal", ANATOMY_KERNEL(equal_composite));
}

using CloseSig = Tensor(const Tensor&, const Tensor&, double, double, bool);
using AllCloseSig = bool(const Tensor&, const Tensor&, double, double, bool);
using EqualSig = bool(const Tensor&, const Tensor&);

Tensor isclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  ANATOMY_OP(op, "aten::isclose", CloseSig);
  return op.call(self, other, rtol, atol, equal_nan);
}

bool allclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  ANATOMY_OP(op, "aten::allclose", AllCloseSig);
  return op.call(self, other, rtol, atol, equal_nan);
}

bool equal(const Tensor& self, const Tensor& other) {
  ANATOMY_OP(op, "aten::equal", EqualSig);
  return op.call(self, other);
}

Tensor Tensor::isclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return anatomy::isclose(*this, other, rtol, atol, equal_nan);
}
bool Tensor::allclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return anatomy::allclose(*this, other, rtol, atol, equal_nan);
}
bool Tensor::equal(const Tensor& other) const { return anatomy::equal(*this, other); }

}  // namespace anatomy
