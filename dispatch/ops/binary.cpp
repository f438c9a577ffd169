// Element-wise binary and ternary operators: their argument rules and plans, schemas, the C++
// functions, Tensor methods and operators.
#include <atomic>
#include <string>

#include "anatomy/core/call_path.h"
#include "anatomy/core/cpu_scalar.h"
#include "anatomy/core/dtype_visit.h"
#include "anatomy/core/shape_rules.h"
#include "anatomy/core/tensor_promotion.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/binary_registration.h"
#include "anatomy/dispatch/ops/plan_casts.h"

namespace anatomy {

// ---- the argument rules (PyTorch's) and the plans every backend's kernels run ----

const char* binary_op_name(BinaryOp op) {
  switch (op) {
#define ANATOMY_BINARY_NAME(e, name, dtypes, fn, group, ...) \
  case BinaryOp::e:                                          \
    return #name;
    ANATOMY_FORALL_BINARY_OPS(ANATOMY_BINARY_NAME)
#undef ANATOMY_BINARY_NAME
  }
  return "?";
}

BinaryDtypes binary_op_dtypes(BinaryOp op) {
  switch (op) {
#define ANATOMY_BINARY_DTYPES(e, name, dtypes, fn, group, ...) \
  case BinaryOp::e:                                            \
    return BinaryDtypes::dtypes;
    ANATOMY_FORALL_BINARY_OPS(ANATOMY_BINARY_DTYPES)
#undef ANATOMY_BINARY_DTYPES
  }
  return BinaryDtypes::Any;
}

bool binary_op_gives_bool(BinaryOp op) { return binary_op_dtypes(op) == BinaryDtypes::Compare; }

bool binary_op_divides(BinaryOp op) {
  return op == BinaryOp::DivTrunc || op == BinaryOp::DivFloor || op == BinaryOp::FloorDivide ||
         op == BinaryOp::Remainder || op == BinaryOp::Fmod;
}

namespace {
bool promotes_integers(BinaryOp op) { return binary_op_dtypes(op) == BinaryDtypes::Float; }

IterationPlan build_binary_plan(BinaryOp op, const char* name, const Tensor& out, const Tensor& self,
                                const Tensor& other) {
  IterationPlan::Builder builder(name, operator_casts());
  builder.add_output(out).add_input(self).add_input(other);
  if (promotes_integers(op)) builder.promote_integers_to_float();
  if (binary_op_gives_bool(op)) builder.output_dtype(DType::Bool);
  return builder.build();
}
}  // namespace

IterationPlan plan_binary(BinaryOp op, const Tensor& out, const Tensor& self, const Tensor& other,
                          const Scalar& alpha) {
  ANATOMY_CALL_PATH_STEP();
  const char* name = binary_op_name(op);
  const bool flat = !out.defined() && IterationPlan::is_flat_functional(self, &other) && !binary_op_gives_bool(op) &&
                    !(promotes_integers(op) && !is_floating(self.dtype()));
  IterationPlan plan =
      flat ? IterationPlan::flat_functional(name, self, &other) : build_binary_plan(op, name, out, self, other);
  const DType t = plan.common_dtype();
  if (op == BinaryOp::Sub) {
    ANATOMY_CHECK(t != DType::Bool, TypeError,
                  "sub: subtracting bool tensors is not supported; use logical_xor or bitwise_not instead");
  }
  if (op == BinaryOp::Add || op == BinaryOp::Sub) {
    ANATOMY_CHECK(is_floating(t) || alpha.is_integral() || alpha.is_bool(), TypeError,
                  "{}: for {} inputs alpha must be an integer, got {}", name, anatomy::name(t), alpha.to_string());
    ANATOMY_CHECK(t != DType::Bool || alpha.is_bool() || alpha.to_int() == 1, TypeError,
                  "{}: for bool inputs alpha must be a bool, got {}", name, alpha.to_string());
  }
  const BinaryDtypes dtypes = binary_op_dtypes(op);
  if (dtypes == BinaryDtypes::Bitwise || dtypes == BinaryDtypes::Shift) {
    ANATOMY_CHECK(!is_floating(t), TypeError, "{}: expected integer or bool operands, got {}", name, anatomy::name(t));
  }
  if (dtypes == BinaryDtypes::FloatOnly) {
    ANATOMY_CHECK(is_floating(t), TypeError, "{}: expected floating point operands, got {}", name, anatomy::name(t));
  }
  if (dtypes == BinaryDtypes::NoBool || dtypes == BinaryDtypes::Shift) {
    ANATOMY_CHECK(t != DType::Bool, TypeError, "{}: not supported for bool operands", name);
  }
  if (op == BinaryOp::ThresholdBackward) {
    // The kernels convert the threshold to the type they compare in (PyTorch's opmath type).
    const bool reduced = t == DType::Float16 || t == DType::BFloat16;
    check_scalar_fits(alpha, reduced ? DType::Float32 : t, name);
  }
  return plan;
}

void check_binary_values(BinaryOp op, const IterationPlan& plan) {
  const DType t = plan.common_dtype();
  const bool divides = binary_op_divides(op);
  if (is_floating(t) || t == DType::Bool || (!divides && op != BinaryOp::Pow)) return;
  // Scans the second input (the divisor or the exponent) over the plan, in parallel.
  std::atomic<bool> bad{false};
  visit_dtype(t, binary_op_name(op), [&]<typename T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      const int operand = plan.num_outputs() + 1;
      plan.for_each_chunk([&](char* const* data, const int64_t* s, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          const T v = *reinterpret_cast<const T*>(data[operand] + i * s[operand]);
          if (divides ? v == 0 : v < 0) {
            bad.store(true, std::memory_order_relaxed);
            return;
          }
        }
      });
    }
  });
  if (divides) ANATOMY_CHECK(!bad.load(), ValueError, "{}: integer division by zero", binary_op_name(op));
  ANATOMY_CHECK(!bad.load(), ValueError, "pow: Integers to negative integer powers are not allowed");
}

Tensor wrapped_scalar(const Scalar& s) {
  Tensor t = make_cpu_scalar(s, s.dtype());
  t.impl()->set_wrapped_number(true);
  return t;
}

// ---- schemas ----

ANATOMY_LIBRARY(aten, m) {
  m.def("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  m.def("sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  m.def("mul.Tensor(Tensor self, Tensor other) -> Tensor");
  m.def("div.Tensor(Tensor self, Tensor other) -> Tensor");
  m.def("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)");
  m.def("sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)");
  m.def("mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)");
  m.def("div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)");
  m.def("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
  m.def("sub.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
  m.def("mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("div.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor");
  m.def("div_.Tensor_mode(Tensor(a!) self, Tensor other, *, str? rounding_mode) -> Tensor(a!)");
  m.def("div.out_mode(Tensor self, Tensor other, *, str? rounding_mode, Tensor(a!) out) -> Tensor(a!)");
  // remainder ... bitwise_right_shift: the three forms each (the function rows of core/op_lists.h).
#define ANATOMY_DEF_BINARY_FUNCTION(e, name, dtypes, fn, group, functional, inplace, out) \
  m.def(std::string(functional) + "(Tensor self, Tensor other) -> Tensor");               \
  if (std::string_view(inplace).size() > 0) {                                             \
    m.def(std::string(inplace) + "(Tensor(a!) self, Tensor other) -> Tensor(a!)");        \
  }                                                                                       \
  m.def(std::string(out) + "(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
  ANATOMY_FORALL_BINARY_FUNCTION_OPS(ANATOMY_DEF_BINARY_FUNCTION)
#undef ANATOMY_DEF_BINARY_FUNCTION
  m.def("threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor");
  m.def("gelu_backward(Tensor grad_output, Tensor self, *, str approximate='none') -> Tensor");
  m.def("where.self(Tensor condition, Tensor self, Tensor other) -> Tensor");
  m.def("where.self_out(Tensor condition, Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor");
  m.def("clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor");
  m.def("clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)");
  m.def("clamp.out(Tensor self, Scalar? min=None, Scalar? max=None, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor");
  m.def("lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor");
  m.def("lerp_.Scalar(Tensor(a!) self, Tensor end, Scalar weight) -> Tensor(a!)");
  m.def("lerp_.Tensor(Tensor(a!) self, Tensor end, Tensor weight) -> Tensor(a!)");
  m.def("lerp.Scalar_out(Tensor self, Tensor end, Scalar weight, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("lerp.Tensor_out(Tensor self, Tensor end, Tensor weight, *, Tensor(a!) out) -> Tensor(a!)");
  // isclose, allclose, equal and isin: composites in closeness.cpp.
  m.def("isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> Tensor");
  m.def("allclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> bool");
  m.def("equal(Tensor self, Tensor other) -> bool");
  m.def(
      "isin.Tensor_Tensor(Tensor elements, Tensor test_elements, *, bool assume_unique=False, bool invert=False) "
      "-> Tensor");
  m.def(
      "isin.Tensor_Scalar(Tensor elements, Scalar test_element, *, bool assume_unique=False, bool invert=False) "
      "-> Tensor");
  m.def(
      "isin.Scalar_Tensor(Scalar element, Tensor test_elements, *, bool assume_unique=False, bool invert=False) "
      "-> Tensor");
  for (const char* name : {"addcmul", "addcdiv"}) {
    const std::string n(name);
    m.def(n + "(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor");
    m.def(n + "_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor(a!)");
    m.def(n + ".out(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1, Tensor(a!) out) -> Tensor(a!)");
  }
}

// ---- addcmul and addcdiv: composites over mul, div and add ----
namespace {
// PyTorch's rules: no bool; an integral result takes an integral value; addcdiv divides truly, so
// two integer (or bool) divisor operands are refused rather than silently promoted.
template <bool Divide>
Tensor pointwise_term(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  const char* name = Divide ? "addcdiv" : "addcmul";
  if (Divide) {
    ANATOMY_CHECK(is_floating(tensor1.dtype()) || is_floating(tensor2.dtype()), TypeError,
                  "addcdiv: integer division of tensor1 ({}) by tensor2 ({}) is not supported; use a floating "
                  "dtype for one of them",
                  anatomy::name(tensor1.dtype()), anatomy::name(tensor2.dtype()));
  }
  // The shapes first, so a clash names this operator rather than the mul or add it reaches.
  broadcast_shapes(self.sizes(), broadcast_shapes(tensor1.sizes(), tensor2.sizes(), name), name);
  ResultTypeState state;
  for (const Tensor* t : {&self, &tensor1, &tensor2}) add_operand(state, *t);
  const DType t = state.result();
  ANATOMY_CHECK(t != DType::Bool, TypeError, "{}: not supported for bool operands", name);
  ANATOMY_CHECK(is_floating(t) || value.is_integral() || value.is_bool(), TypeError,
                "{}: for {} inputs value must be an integer, got {}", name, anatomy::name(t), value.to_string());
  return Divide ? div(tensor1, tensor2) : mul(tensor1, tensor2);
}
template <bool Divide>
Tensor pointwise_composite(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  return add(self, pointwise_term<Divide>(self, tensor1, tensor2, value), value);
}
template <bool Divide>
Tensor pointwise_composite_(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  return add_(self, pointwise_term<Divide>(self, tensor1, tensor2, value), value);
}
template <bool Divide>
Tensor pointwise_composite_out(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value,
                               const Tensor& out) {
  return add_out(out, self, pointwise_term<Divide>(self, tensor1, tensor2, value), value);
}
}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  m.impl("addcmul", ANATOMY_KERNEL(pointwise_composite<false>));
  m.impl("addcmul_", ANATOMY_KERNEL(pointwise_composite_<false>));
  m.impl("addcmul.out", ANATOMY_KERNEL(pointwise_composite_out<false>));
  m.impl("addcdiv", ANATOMY_KERNEL(pointwise_composite<true>));
  m.impl("addcdiv_", ANATOMY_KERNEL(pointwise_composite_<true>));
  m.impl("addcdiv.out", ANATOMY_KERNEL(pointwise_composite_out<true>));
}

using PointwiseSig = Tensor(const Tensor&, const Tensor&, const Tensor&, const Scalar&);
using PointwiseOutSig = Tensor(const Tensor&, const Tensor&, const Tensor&, const Scalar&, const Tensor&);
Tensor addcmul(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  ANATOMY_OP(op, "aten::addcmul", PointwiseSig);
  return op.call(self, tensor1, tensor2, value);
}
Tensor addcmul_(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  ANATOMY_OP(op, "aten::addcmul_", PointwiseSig);
  return op.call(self, tensor1, tensor2, value);
}
Tensor addcmul_out(const Tensor& out, const Tensor& self, const Tensor& tensor1, const Tensor& tensor2,
                   const Scalar& value) {
  ANATOMY_OP(op, "aten::addcmul.out", PointwiseOutSig);
  return op.call(self, tensor1, tensor2, value, out);
}
Tensor addcdiv(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  ANATOMY_OP(op, "aten::addcdiv", PointwiseSig);
  return op.call(self, tensor1, tensor2, value);
}
Tensor addcdiv_(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  ANATOMY_OP(op, "aten::addcdiv_", PointwiseSig);
  return op.call(self, tensor1, tensor2, value);
}
Tensor addcdiv_out(const Tensor& out, const Tensor& self, const Tensor& tensor1, const Tensor& tensor2,
                   const Scalar& value) {
  ANATOMY_OP(op, "aten::addcdiv.out", PointwiseOutSig);
  return op.call(self, tensor1, tensor2, value, out);
}
Tensor Tensor::addcmul(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) const {
  return anatomy::addcmul(*this, tensor1, tensor2, value);
}
const Tensor& Tensor::addcmul_(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) const {
  anatomy::addcmul_(*this, tensor1, tensor2, value);
  return *this;
}
Tensor Tensor::addcdiv(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) const {
  return anatomy::addcdiv(*this, tensor1, tensor2, value);
}
const Tensor& Tensor::addcdiv_(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) const {
  anatomy::addcdiv_(*this, tensor1, tensor2, value);
  return *this;
}

using AlphaSig = Tensor(const Tensor&, const Tensor&, const Scalar&);
using PlainSig = Tensor(const Tensor&, const Tensor&);
using AlphaOutSig = Tensor(const Tensor&, const Tensor&, const Scalar&, const Tensor&);
using PlainOutSig = Tensor(const Tensor&, const Tensor&, const Tensor&);

Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  ANATOMY_CALL_PATH_STEP();
  ANATOMY_OP(op, "aten::add.Tensor", AlphaSig);
  return op.call(self, other, alpha);
}
Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  ANATOMY_OP(op, "aten::sub.Tensor", AlphaSig);
  return op.call(self, other, alpha);
}
Tensor mul(const Tensor& self, const Tensor& other) {
  ANATOMY_OP(op, "aten::mul.Tensor", PlainSig);
  return op.call(self, other);
}
Tensor div(const Tensor& self, const Tensor& other) {
  ANATOMY_OP(op, "aten::div.Tensor", PlainSig);
  return op.call(self, other);
}
Tensor add_(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  ANATOMY_OP(op, "aten::add_.Tensor", AlphaSig);
  return op.call(self, other, alpha);
}
Tensor sub_(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  ANATOMY_OP(op, "aten::sub_.Tensor", AlphaSig);
  return op.call(self, other, alpha);
}
Tensor mul_(const Tensor& self, const Tensor& other) {
  ANATOMY_OP(op, "aten::mul_.Tensor", PlainSig);
  return op.call(self, other);
}
Tensor div_(const Tensor& self, const Tensor& other) {
  ANATOMY_OP(op, "aten::div_.Tensor", PlainSig);
  return op.call(self, other);
}
Tensor add_out(const Tensor& out, const Tensor& self, const Tensor& other, const Scalar& alpha) {
  ANATOMY_OP(op, "aten::add.out", AlphaOutSig);
  return op.call(self, other, alpha, out);
}
Tensor sub_out(const Tensor& out, const Tensor& self, const Tensor& other, const Scalar& alpha) {
  ANATOMY_OP(op, "aten::sub.out", AlphaOutSig);
  return op.call(self, other, alpha, out);
}
Tensor mul_out(const Tensor& out, const Tensor& self, const Tensor& other) {
  ANATOMY_OP(op, "aten::mul.out", PlainOutSig);
  return op.call(self, other, out);
}
Tensor div_out(const Tensor& out, const Tensor& self, const Tensor& other) {
  ANATOMY_OP(op, "aten::div.out", PlainOutSig);
  return op.call(self, other, out);
}

// ---- methods ----
Tensor Tensor::add(const Tensor& other, const Scalar& alpha) const { return anatomy::add(*this, other, alpha); }
Tensor Tensor::sub(const Tensor& other, const Scalar& alpha) const { return anatomy::sub(*this, other, alpha); }
Tensor Tensor::mul(const Tensor& other) const { return anatomy::mul(*this, other); }
Tensor Tensor::div(const Tensor& other) const { return anatomy::div(*this, other); }
const Tensor& Tensor::add_(const Tensor& other, const Scalar& alpha) const {
  anatomy::add_(*this, other, alpha);
  return *this;
}
const Tensor& Tensor::sub_(const Tensor& other, const Scalar& alpha) const {
  anatomy::sub_(*this, other, alpha);
  return *this;
}
const Tensor& Tensor::mul_(const Tensor& other) const {
  anatomy::mul_(*this, other);
  return *this;
}
const Tensor& Tensor::div_(const Tensor& other) const {
  anatomy::div_(*this, other);
  return *this;
}

// ---- div with a rounding mode ----
using ModeSig = Tensor(const Tensor&, const Tensor&, std::optional<std::string_view>);
using ModeOutSig = Tensor(const Tensor&, const Tensor&, std::optional<std::string_view>, const Tensor&);
Tensor div(const Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode) {
  ANATOMY_OP(op, "aten::div.Tensor_mode", ModeSig);
  return op.call(self, other, rounding_mode);
}
Tensor div_(const Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode) {
  ANATOMY_OP(op, "aten::div_.Tensor_mode", ModeSig);
  return op.call(self, other, rounding_mode);
}
Tensor div_out(const Tensor& out, const Tensor& self, const Tensor& other,
               std::optional<std::string_view> rounding_mode) {
  ANATOMY_OP(op, "aten::div.out_mode", ModeOutSig);
  return op.call(self, other, rounding_mode, out);
}

// ---- Scalar `other`: a wrapped number, as PyTorch's Python bindings pass it ----
Tensor add(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return add(self, wrapped_scalar(other), alpha);
}
Tensor sub(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return sub(self, wrapped_scalar(other), alpha);
}
Tensor mul(const Tensor& self, const Scalar& other) { return mul(self, wrapped_scalar(other)); }
Tensor div(const Tensor& self, const Scalar& other) { return div(self, wrapped_scalar(other)); }
Tensor add_(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return add_(self, wrapped_scalar(other), alpha);
}
Tensor sub_(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return sub_(self, wrapped_scalar(other), alpha);
}
Tensor mul_(const Tensor& self, const Scalar& other) { return mul_(self, wrapped_scalar(other)); }
Tensor div_(const Tensor& self, const Scalar& other) { return div_(self, wrapped_scalar(other)); }
Tensor div(const Tensor& self, const Scalar& other, std::optional<std::string_view> rounding_mode) {
  return div(self, wrapped_scalar(other), rounding_mode);
}
Tensor div_(const Tensor& self, const Scalar& other, std::optional<std::string_view> rounding_mode) {
  return div_(self, wrapped_scalar(other), rounding_mode);
}
Tensor rsub(const Tensor& self, const Tensor& other, const Scalar& alpha) { return sub(other, self, alpha); }
Tensor rsub(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return sub(wrapped_scalar(other), self, alpha);
}

// ---- remainder ... bitwise_right_shift ----
// Without a PyTorch in-place schema (maximum, minimum), name_ is the out= form writing into self.
#define ANATOMY_DEFINE_BINARY_FUNCTION(e, name, dtypes, fn, group, functional, inplace, out)         \
  Tensor name(const Tensor& self, const Tensor& other) {                                             \
    ANATOMY_OP(op, "aten::" functional, PlainSig);                                                   \
    return op.call(self, other);                                                                     \
  }                                                                                                  \
  Tensor name(const Tensor& self, const Scalar& other) { return name(self, wrapped_scalar(other)); } \
  Tensor name##_out(const Tensor& result, const Tensor& self, const Tensor& other) {                 \
    ANATOMY_OP(op, "aten::" out, PlainOutSig);                                                       \
    return op.call(self, other, result);                                                             \
  }                                                                                                  \
  Tensor name##_(const Tensor& self, const Tensor& other) {                                          \
    if (sizeof(inplace) == 1) return name##_out(self, self, other);                                  \
    ANATOMY_OP(op, "aten::" inplace, PlainSig);                                                      \
    return op.call(self, other);                                                                     \
  }                                                                                                  \
  Tensor name##_(const Tensor& self, const Scalar& other) { return name##_(self, wrapped_scalar(other)); }
ANATOMY_FORALL_BINARY_FUNCTION_OPS(ANATOMY_DEFINE_BINARY_FUNCTION)
#undef ANATOMY_DEFINE_BINARY_FUNCTION

Tensor pow(const Scalar& self, const Tensor& exponent) { return pow(wrapped_scalar(self), exponent); }
Tensor xlogy(const Scalar& self, const Tensor& other) { return xlogy(wrapped_scalar(self), other); }

// ---- threshold_backward ----
Tensor threshold_backward(const Tensor& grad_output, const Tensor& self, const Scalar& threshold) {
  ANATOMY_OP(op, "aten::threshold_backward", AlphaSig);
  return op.call(grad_output, self, threshold);
}

// ---- gelu_backward ----
Tensor gelu_backward(const Tensor& grad_output, const Tensor& self, std::string_view approximate) {
  ANATOMY_OP(op, "aten::gelu_backward", Tensor(const Tensor&, const Tensor&, std::string_view));
  return op.call(grad_output, self, approximate);
}

// ---- where ----
using TernarySig = Tensor(const Tensor&, const Tensor&, const Tensor&);
using TernaryOutSig = Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&);
Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other) {
  ANATOMY_OP(op, "aten::where.self", TernarySig);
  return op.call(condition, self, other);
}
Tensor where(const Tensor& condition, const Tensor& self, const Scalar& other) {
  return where(condition, self, wrapped_scalar(other));
}
Tensor where(const Tensor& condition, const Scalar& self, const Tensor& other) {
  return where(condition, wrapped_scalar(self), other);
}
Tensor where_out(const Tensor& out, const Tensor& condition, const Tensor& self, const Tensor& other) {
  ANATOMY_OP(op, "aten::where.self_out", TernaryOutSig);
  return op.call(condition, self, other, out);
}

// ---- clamp ----
using ClampSig = Tensor(const Tensor&, const std::optional<Scalar>&, const std::optional<Scalar>&);
using ClampOutSig = Tensor(const Tensor&, const std::optional<Scalar>&, const std::optional<Scalar>&, const Tensor&);
using ClampTensorSig = Tensor(const Tensor&, const std::optional<Tensor>&, const std::optional<Tensor>&);
Tensor clamp(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  ANATOMY_OP(op, "aten::clamp", ClampSig);
  return op.call(self, min, max);
}
Tensor clamp(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  ANATOMY_OP(op, "aten::clamp.Tensor", ClampTensorSig);
  return op.call(self, min, max);
}
Tensor clamp_(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  ANATOMY_OP(op, "aten::clamp_", ClampSig);
  return op.call(self, min, max);
}
Tensor clamp_out(const Tensor& out, const Tensor& self, const std::optional<Scalar>& min,
                 const std::optional<Scalar>& max) {
  ANATOMY_OP(op, "aten::clamp.out", ClampOutSig);
  return op.call(self, min, max, out);
}

// ---- lerp ----
using LerpScalarSig = Tensor(const Tensor&, const Tensor&, const Scalar&);
using LerpScalarOutSig = Tensor(const Tensor&, const Tensor&, const Scalar&, const Tensor&);
Tensor lerp(const Tensor& self, const Tensor& end, const Scalar& weight) {
  ANATOMY_OP(op, "aten::lerp.Scalar", LerpScalarSig);
  return op.call(self, end, weight);
}
Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight) {
  ANATOMY_OP(op, "aten::lerp.Tensor", TernarySig);
  return op.call(self, end, weight);
}
Tensor lerp_(const Tensor& self, const Tensor& end, const Scalar& weight) {
  ANATOMY_OP(op, "aten::lerp_.Scalar", LerpScalarSig);
  return op.call(self, end, weight);
}
Tensor lerp_(const Tensor& self, const Tensor& end, const Tensor& weight) {
  ANATOMY_OP(op, "aten::lerp_.Tensor", TernarySig);
  return op.call(self, end, weight);
}
Tensor lerp_out(const Tensor& out, const Tensor& self, const Tensor& end, const Scalar& weight) {
  ANATOMY_OP(op, "aten::lerp.Scalar_out", LerpScalarOutSig);
  return op.call(self, end, weight, out);
}
Tensor lerp_out(const Tensor& out, const Tensor& self, const Tensor& end, const Tensor& weight) {
  ANATOMY_OP(op, "aten::lerp.Tensor_out", TernaryOutSig);
  return op.call(self, end, weight, out);
}

// ---- the other methods ----
Tensor Tensor::add(const Scalar& other, const Scalar& alpha) const { return anatomy::add(*this, other, alpha); }
Tensor Tensor::sub(const Scalar& other, const Scalar& alpha) const { return anatomy::sub(*this, other, alpha); }
Tensor Tensor::mul(const Scalar& other) const { return anatomy::mul(*this, other); }
Tensor Tensor::div(const Scalar& other) const { return anatomy::div(*this, other); }
Tensor Tensor::div(const Tensor& other, std::optional<std::string_view> rounding_mode) const {
  return anatomy::div(*this, other, rounding_mode);
}
const Tensor& Tensor::div_(const Tensor& other, std::optional<std::string_view> rounding_mode) const {
  anatomy::div_(*this, other, rounding_mode);
  return *this;
}
const Tensor& Tensor::add_(const Scalar& other, const Scalar& alpha) const {
  anatomy::add_(*this, other, alpha);
  return *this;
}
const Tensor& Tensor::sub_(const Scalar& other, const Scalar& alpha) const {
  anatomy::sub_(*this, other, alpha);
  return *this;
}
const Tensor& Tensor::mul_(const Scalar& other) const {
  anatomy::mul_(*this, other);
  return *this;
}
const Tensor& Tensor::div_(const Scalar& other) const {
  anatomy::div_(*this, other);
  return *this;
}
Tensor Tensor::div(const Scalar& other, std::optional<std::string_view> rounding_mode) const {
  return anatomy::div(*this, other, rounding_mode);
}
const Tensor& Tensor::div_(const Scalar& other, std::optional<std::string_view> rounding_mode) const {
  anatomy::div_(*this, other, rounding_mode);
  return *this;
}
#define ANATOMY_DEFINE_BINARY_METHODS(e, name, ...)                                      \
  Tensor Tensor::name(const Tensor& other) const { return anatomy::name(*this, other); } \
  Tensor Tensor::name(const Scalar& other) const { return anatomy::name(*this, other); } \
  const Tensor& Tensor::name##_(const Tensor& other) const {                             \
    anatomy::name##_(*this, other);                                                      \
    return *this;                                                                        \
  }                                                                                      \
  const Tensor& Tensor::name##_(const Scalar& other) const {                             \
    anatomy::name##_(*this, other);                                                      \
    return *this;                                                                        \
  }
ANATOMY_FORALL_BINARY_FUNCTION_OPS(ANATOMY_DEFINE_BINARY_METHODS)
#undef ANATOMY_DEFINE_BINARY_METHODS
Tensor Tensor::clamp(const std::optional<Scalar>& min, const std::optional<Scalar>& max) const {
  return anatomy::clamp(*this, min, max);
}
Tensor Tensor::clamp(const std::optional<Tensor>& min, const std::optional<Tensor>& max) const {
  return anatomy::clamp(*this, min, max);
}
const Tensor& Tensor::clamp_(const std::optional<Scalar>& min, const std::optional<Scalar>& max) const {
  anatomy::clamp_(*this, min, max);
  return *this;
}
Tensor Tensor::lerp(const Tensor& end, const Scalar& weight) const { return anatomy::lerp(*this, end, weight); }
Tensor Tensor::lerp(const Tensor& end, const Tensor& weight) const { return anatomy::lerp(*this, end, weight); }
Tensor Tensor::where(const Tensor& condition, const Tensor& other) const {
  return anatomy::where(condition, *this, other);
}
Tensor Tensor::where(const Tensor& condition, const Scalar& other) const {
  return anatomy::where(condition, *this, other);
}

// ---- operators: a Scalar becomes a wrapped number ----
Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, wrapped_scalar(b)); }
Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, wrapped_scalar(b)); }
Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, wrapped_scalar(b)); }
Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, wrapped_scalar(b)); }
// `2 + a` and `2 * a` are `a + 2` and `a * 2`, as in ATen's C++ operators: the same values (both
// ops commute), and the tensor first takes the flat path (IterationPlan::flat_functional).
Tensor operator+(const Scalar& a, const Tensor& b) { return add(b, wrapped_scalar(a)); }
Tensor operator-(const Scalar& a, const Tensor& b) { return sub(wrapped_scalar(a), b); }
Tensor operator*(const Scalar& a, const Tensor& b) { return mul(b, wrapped_scalar(a)); }
Tensor operator/(const Scalar& a, const Tensor& b) { return div(wrapped_scalar(a), b); }

#define ANATOMY_DEFINE_BINARY_OPERATOR(op, fn)                                              \
  Tensor operator op(const Tensor& a, const Tensor& b) { return fn(a, b); }                 \
  Tensor operator op(const Tensor& a, const Scalar& b) { return fn(a, wrapped_scalar(b)); } \
  Tensor operator op(const Scalar& a, const Tensor& b) { return fn(wrapped_scalar(a), b); }
ANATOMY_DEFINE_BINARY_OPERATOR(%, remainder)
ANATOMY_DEFINE_BINARY_OPERATOR(==, eq)
ANATOMY_DEFINE_BINARY_OPERATOR(!=, ne)
ANATOMY_DEFINE_BINARY_OPERATOR(<, lt)
ANATOMY_DEFINE_BINARY_OPERATOR(<=, le)
ANATOMY_DEFINE_BINARY_OPERATOR(>, gt)
ANATOMY_DEFINE_BINARY_OPERATOR(>=, ge)
ANATOMY_DEFINE_BINARY_OPERATOR(&, bitwise_and)
ANATOMY_DEFINE_BINARY_OPERATOR(|, bitwise_or)
ANATOMY_DEFINE_BINARY_OPERATOR(^, bitwise_xor)
ANATOMY_DEFINE_BINARY_OPERATOR(<<, bitwise_left_shift)
ANATOMY_DEFINE_BINARY_OPERATOR(>>, bitwise_right_shift)
#undef ANATOMY_DEFINE_BINARY_OPERATOR

}  // namespace anatomy
