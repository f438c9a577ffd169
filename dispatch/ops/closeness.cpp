// isclose, allclose and equal: functions over the element-wise operators (as torch.isclose,
// torch.allclose and torch.equal), not registered operators of their own, so a trace shows the
// operators they call.
#include "anatomy/core/error.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy {

namespace {
void check_one_device(const char* op, const Tensor& self, const Tensor& other) {
  ANATOMY_CHECK(self.device() == other.device(), DeviceError,
                "{}: expected both tensors on one device, found {} and {}", op, self.device().str(),
                other.device().str());
}
}  // namespace

Tensor isclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  check_one_device("isclose", self, other);
  ANATOMY_CHECK(self.dtype() == other.dtype(), TypeError, "isclose: self ({}) and other ({}) must have the same dtype",
                name(self.dtype()), name(other.dtype()));
  ANATOMY_CHECK(rtol >= 0, ValueError, "isclose: rtol ({}) must be >= 0", rtol);
  ANATOMY_CHECK(atol >= 0, ValueError, "isclose: atol ({}) must be >= 0", atol);
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

bool allclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  return isclose(self, other, rtol, atol, equal_nan).all().item<bool>();
}

bool equal(const Tensor& self, const Tensor& other) {
  check_one_device("equal", self, other);
  if (self.sizes() != other.sizes()) return false;
  return eq(self, other).all().item<bool>();
}

Tensor Tensor::isclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return anatomy::isclose(*this, other, rtol, atol, equal_nan);
}
bool Tensor::allclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return anatomy::allclose(*this, other, rtol, atol, equal_nan);
}
bool Tensor::equal(const Tensor& other) const { return anatomy::equal(*this, other); }

}  // namespace anatomy
