// isclose, allclose, equal and isin: operators (as aten::isclose, allclose, equal and isin) whose
// kernels are composites over the element-wise operators, reductions and sort, so every backend
// runs them and a trace shows the operators they call. allclose and equal return a bool and wait
// for the device, like item().
#include "anatomy/core/error.h"
#include "anatomy/core/shape_rules.h"
#include "anatomy/core/tensor_promotion.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/sorted_runs.h"

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

// isin by sorting: the test elements and the elements, sorted together, fall into runs of equal
// values (NaN is unequal to everything, so each NaN is a run of its own); an element is in the
// set when its run holds a test element, counted per run with scatter_add and sent back to the
// element's place through the sort's permutation. O((n + m) log(n + m)), no n * m comparisons.
Tensor isin_tensor_tensor(const Tensor& elements, const Tensor& test_elements, bool assume_unique, bool invert) {
  (void)assume_unique;  // repeats are handled either way
  check_one_device("isin", elements, test_elements);
  ResultTypeState state;
  add_operand(state, elements);
  add_operand(state, test_elements);
  const DType common = state.result();
  const DType t = common == DType::Bool ? DType::UInt8 : common;  // sort orders numbers
  const int64_t n = elements.numel(), m = test_elements.numel(), total = n + m;
  const TensorOptions i64 = TensorOptions().dtype(DType::Int64).device(elements.device());
  Tensor found;
  if (n == 0 || m == 0) {
    found = zeros(elements.sizes(), TensorOptions().dtype(DType::Bool).device(elements.device()));
  } else {
    const Tensor values = cat({test_elements.to(t).reshape({m}), elements.to(t).reshape({n})});
    const auto [sorted, order] = sort(values, 0);
    const Tensor run = run_ids(run_starts(sorted));
    const Tensor tests_in_run = zeros({total}, i64).scatter_add(0, run, lt(order, m).to(DType::Int64));
    const Tensor per_position = zeros({total}, i64).scatter(0, order, tests_in_run.index_select(0, run));
    found = gt(per_position.slice(0, m, total), 0).reshape(elements.sizes());
  }
  return invert ? found.logical_not() : found;
}
Tensor isin_tensor_scalar(const Tensor& elements, const Scalar& test_element, bool assume_unique, bool invert) {
  (void)assume_unique;
  return invert ? ne(elements, test_element) : eq(elements, test_element);
}
Tensor isin_scalar_tensor(const Scalar& element, const Tensor& test_elements, bool assume_unique, bool invert) {
  const Tensor e = scalar_tensor(
      element, TensorOptions().dtype(result_type(test_elements.dtype(), element)).device(test_elements.device()));
  return isin_tensor_tensor(e, test_elements, assume_unique, invert);
}
}  // namespace

// The schemas are defined in binary.cpp, next to the element-wise operators.
ANATOMY_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  m.impl("isclose", ANATOMY_KERNEL(isclose_composite));
  m.impl("allclose", ANATOMY_KERNEL(allclose_composite));
  m.impl("equal", ANATOMY_KERNEL(equal_composite));
  m.impl("isin.Tensor_Tensor", ANATOMY_KERNEL(isin_tensor_tensor));
  m.impl("isin.Tensor_Scalar", ANATOMY_KERNEL(isin_tensor_scalar));
  m.impl("isin.Scalar_Tensor", ANATOMY_KERNEL(isin_scalar_tensor));
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

using IsinSig = Tensor(const Tensor&, const Tensor&, bool, bool);
using IsinScalarSig = Tensor(const Tensor&, const Scalar&, bool, bool);
using IsinScalarSelfSig = Tensor(const Scalar&, const Tensor&, bool, bool);
Tensor isin(const Tensor& elements, const Tensor& test_elements, bool assume_unique, bool invert) {
  ANATOMY_OP(op, "aten::isin.Tensor_Tensor", IsinSig);
  return op.call(elements, test_elements, assume_unique, invert);
}
Tensor isin(const Tensor& elements, const Scalar& test_element, bool assume_unique, bool invert) {
  ANATOMY_OP(op, "aten::isin.Tensor_Scalar", IsinScalarSig);
  return op.call(elements, test_element, assume_unique, invert);
}
Tensor isin(const Scalar& element, const Tensor& test_elements, bool assume_unique, bool invert) {
  ANATOMY_OP(op, "aten::isin.Scalar_Tensor", IsinScalarSelfSig);
  return op.call(element, test_elements, assume_unique, invert);
}

Tensor Tensor::isclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return anatomy::isclose(*this, other, rtol, atol, equal_nan);
}
bool Tensor::allclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return anatomy::allclose(*this, other, rtol, atol, equal_nan);
}
bool Tensor::equal(const Tensor& other) const { return anatomy::equal(*this, other); }

}  // namespace anatomy
