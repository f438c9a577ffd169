// Argument rules of the element-wise unary operators (PyTorch's), generated from their rows'
// kinds, and their plans.
#include "anatomy/dispatch/ops/unary_rules.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "anatomy/core/dtype_visit.h"
#include "anatomy/dispatch/ops/plan_casts.h"

namespace anatomy {

namespace {

// The name and kind columns, indexed by the enum (declared in row order).
constexpr const char* kNames[] = {
#define ANATOMY_UNARY_NAME(e, name, ...) #name,
    ANATOMY_FORALL_UNARY_OPS(ANATOMY_UNARY_NAME)
#undef ANATOMY_UNARY_NAME
};
constexpr UnaryKind kKinds[] = {
#define ANATOMY_UNARY_KIND(e, name, kind, ...) UnaryKind::kind,
    ANATOMY_FORALL_UNARY_OPS(ANATOMY_UNARY_KIND)
#undef ANATOMY_UNARY_KIND
};

}  // namespace

const char* unary_op_name(UnaryOp op) { return kNames[static_cast<size_t>(op)]; }
UnaryKind unary_op_kind(UnaryOp op) { return kKinds[static_cast<size_t>(op)]; }

UnaryScalars unary_scalars(UnaryOp op, DType dtype, const UnaryParams& p) {
  UnaryScalars k;
  if (op == UnaryOp::Softplus) {
    k.a = p.beta;
    k.b = p.threshold;
  } else if (op == UnaryOp::Polygamma) {
    k.a = static_cast<double>(p.n);
  } else if (op == UnaryOp::Logit) {
    k.a = p.eps.value_or(-1.0);
  } else if (op == UnaryOp::LeakyRelu) {
    k.a = p.negative_slope;
  } else if (op == UnaryOp::Hardtanh) {
    k.a = p.min_val;
    k.b = p.max_val;
    // An integer tensor's kernel computes in its dtype: the bounds truncated to integers and
    // brought into its range, so their conversion is exact (and clamping gives the same values).
    visit_dtype(dtype, "hardtanh", [&]<typename T>() {
      if constexpr (std::is_integral_v<T>) {
        ANATOMY_CHECK(!std::isnan(p.min_val) && !std::isnan(p.max_val), ValueError,
                      "hardtanh: the bounds of an integer tensor must be numbers, got min_val={} max_val={}", p.min_val,
                      p.max_val);
        const double lo = std::max(static_cast<double>(std::numeric_limits<T>::lowest()), -9.0e18);
        const double hi = std::min(static_cast<double>(std::numeric_limits<T>::max()), 9.0e18);
        k.a = std::clamp(std::trunc(p.min_val), lo, hi);
        k.b = std::clamp(std::trunc(p.max_val), lo, hi);
      }
    });
  } else if (op == UnaryOp::Elu) {
    k.a = p.alpha;
    k.b = p.scale;
    k.c = p.input_scale;
  } else if (op == UnaryOp::Selu) {
    k.a = kSeluAlpha;
    k.b = kSeluScale;
    k.c = 1;
  } else if (op == UnaryOp::NanToNum) {
    visit_dtype(dtype, "nan_to_num", [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T> || is_reduced_float_v<T>) {
        using M = std::conditional_t<is_reduced_float_v<T>, float, T>;
        auto exact = [](T v) { return static_cast<double>(static_cast<M>(v)); };
        k.a = exact(static_cast<T>(p.nan.value_or(0.0)));
        k.b = exact(p.posinf ? static_cast<T>(*p.posinf) : std::numeric_limits<T>::max());
        k.c = exact(p.neginf ? static_cast<T>(*p.neginf) : std::numeric_limits<T>::lowest());
      }
    });
  }
  return k;
}

void check_polygamma_order(int64_t n) {
  ANATOMY_CHECK(n >= 0, ValueError, "polygamma: the order n must be a non-negative integer, got {}", n);
}

UnaryOp gelu_op(std::string_view approximate) {
  if (approximate == "none") return UnaryOp::Gelu;
  if (approximate == "tanh") return UnaryOp::GeluTanh;
  ANATOMY_THROW(ValueError, "gelu: approximate must be 'none' or 'tanh', got '{}'", approximate);
}

namespace {

// The dtypes an operator's kind refuses, checked on the input before anything is allocated or
// written. bool has no arithmetic of its own here (PyTorch's kernels are not built for it
// either).
void check_input_dtype(UnaryOp op, DType t) {
  const char* name = unary_op_name(op);
  switch (unary_op_kind(op)) {
    case UnaryKind::NoBool:
      ANATOMY_CHECK(op != UnaryOp::Neg || t != DType::Bool, TypeError,
                    "neg: negation, the `-` operator, on a bool tensor is not supported; use logical_not or "
                    "bitwise_not instead");
      ANATOMY_CHECK(t != DType::Bool, TypeError, "{}: not supported for bool tensors", name);
      break;
    case UnaryKind::Bitwise:
      ANATOMY_CHECK(!is_floating(t), TypeError, "{}: only integer and bool tensors are supported, got {}", name,
                    anatomy::name(t));
      break;
    case UnaryKind::FloatOnly:
      ANATOMY_CHECK(is_floating(t), TypeError, "{}: only floating tensors are supported, got {}", name,
                    anatomy::name(t));
      break;
    case UnaryKind::SameDtype:
    case UnaryKind::Float:
    case UnaryKind::Predicate:
      break;
  }
}

}  // namespace

IterationPlan plan_unary(UnaryOp op, const Tensor& out, const Tensor& self) {
  const char* name = unary_op_name(op);
  ANATOMY_CHECK(self.defined(), ValueError, "{}: the input is an undefined tensor", name);
  check_input_dtype(op, self.dtype());
  // PyTorch's predicates with an out= form write bool only (logical_not's writes any dtype).
  const bool bool_out = op == UnaryOp::Signbit || op == UnaryOp::Isposinf || op == UnaryOp::Isneginf;
  ANATOMY_CHECK(!bool_out || !out.defined() || out.dtype() == DType::Bool, TypeError,
                "{}: the out= tensor must be bool, got {}", name, out.defined() ? anatomy::name(out.dtype()) : "");
  const UnaryKind kind = unary_op_kind(op);
  // Every kind but Predicate gives the input's dtype when the input is floating.
  const bool keeps_dtype = kind != UnaryKind::Predicate && (kind != UnaryKind::Float || is_floating(self.dtype()));
  if (!out.defined() && keeps_dtype && IterationPlan::is_flat_functional(self, nullptr)) {
    return IterationPlan::flat_functional(name, self, nullptr);
  }
  IterationPlan::Builder builder(name, operator_casts());
  builder.add_output(out).add_input(self);
  if (kind == UnaryKind::Float) builder.promote_integers_to_float();
  // Predicates compute in the input's dtype (no cast) and write bool.
  if (kind == UnaryKind::Predicate) builder.output_dtype(DType::Bool);
  return builder.build();
}

}  // namespace anatomy
