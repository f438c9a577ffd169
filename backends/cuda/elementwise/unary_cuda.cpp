// CUDA: every element-wise unary operator (functional, in-place, out=) over the same iteration
// plans as the CPU (dispatch/ops/unary_registration.h); this file picks a family's launcher, turns
// the plan into its arguments and rounds nan_to_num's replacements on the host, as the CPU does.
#include <limits>

#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/backends/cuda/elementwise/elementwise_args.h"
#include "anatomy/backends/cuda/elementwise/launch.h"
#include "anatomy/core/dtype_visit.h"
#include "anatomy/dispatch/ops/unary_registration.h"

namespace anatomy::cuda {
namespace {

// nan_to_num's replacements in the computation type of dtype t: each rounded to t first, so that
// the kernel's final rounding keeps it exact; the defaults are t's largest and lowest values.
UnaryConstants nan_to_num_constants(DType t, const UnaryParams& p) {
  UnaryConstants k;
  visit_dtype(t, "nan_to_num", [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T> || is_reduced_float_v<T>) {
      using M = std::conditional_t<is_reduced_float_v<T>, float, T>;
      auto as_t = [](double v) { return static_cast<double>(static_cast<M>(static_cast<T>(v))); };
      k.a = as_t(p.nan.value_or(0.0));
      k.b = p.posinf ? as_t(*p.posinf) : static_cast<double>(static_cast<M>(std::numeric_limits<T>::max()));
      k.c = p.neginf ? as_t(*p.neginf) : static_cast<double>(static_cast<M>(std::numeric_limits<T>::lowest()));
    }
  });
  return k;
}

void unary_cuda(UnaryOp op, const IterationPlan& plan, const UnaryParams& params) {
  DeviceGuard guard(plan.output(0).device());
  const DType t = plan.common_dtype();
  const ElementwiseArgs<1> args = make_elementwise_args<1>(plan, unary_op_name(op));
  const cudaStream_t stream = current_stream();
  auto basic = [&](BasicUnaryOp code, const UnaryConstants& k = {}) { launch_unary_basic(code, t, args, k, stream); };
  auto math = [&](FloatUnaryOp code) { launch_unary_float(code, t, args, stream); };
  auto activation = [&](ActivationOp code, const UnaryConstants& k = {}) {
    launch_activation(code, t, args, k, stream);
  };
  switch (op) {
    case UnaryOp::Neg: basic(BasicUnaryOp::Neg); break;
    case UnaryOp::Abs: basic(BasicUnaryOp::Abs); break;
    case UnaryOp::Sign: basic(BasicUnaryOp::Sign); break;
    case UnaryOp::Floor: basic(BasicUnaryOp::Floor); break;
    case UnaryOp::Ceil: basic(BasicUnaryOp::Ceil); break;
    case UnaryOp::Round: basic(BasicUnaryOp::Round); break;
    case UnaryOp::Trunc: basic(BasicUnaryOp::Trunc); break;
    case UnaryOp::Relu: basic(BasicUnaryOp::Relu); break;
    case UnaryOp::NanToNum: basic(BasicUnaryOp::NanToNum, nan_to_num_constants(t, params)); break;
    case UnaryOp::BitwiseNot: basic(BasicUnaryOp::BitwiseNot); break;
    case UnaryOp::Exp: math(FloatUnaryOp::Exp); break;
    case UnaryOp::Exp2: math(FloatUnaryOp::Exp2); break;
    case UnaryOp::Expm1: math(FloatUnaryOp::Expm1); break;
    case UnaryOp::Log: math(FloatUnaryOp::Log); break;
    case UnaryOp::Log1p: math(FloatUnaryOp::Log1p); break;
    case UnaryOp::Log2: math(FloatUnaryOp::Log2); break;
    case UnaryOp::Sqrt: math(FloatUnaryOp::Sqrt); break;
    case UnaryOp::Rsqrt: math(FloatUnaryOp::Rsqrt); break;
    case UnaryOp::Reciprocal: math(FloatUnaryOp::Reciprocal); break;
    case UnaryOp::Sin: activation(ActivationOp::Sin); break;
    case UnaryOp::Cos: activation(ActivationOp::Cos); break;
    case UnaryOp::Tan: activation(ActivationOp::Tan); break;
    case UnaryOp::Tanh: activation(ActivationOp::Tanh); break;
    case UnaryOp::Erf: activation(ActivationOp::Erf); break;
    case UnaryOp::Sigmoid: activation(ActivationOp::Sigmoid); break;
    case UnaryOp::Silu: activation(ActivationOp::Silu); break;
    case UnaryOp::Gelu: activation(ActivationOp::Gelu); break;
    case UnaryOp::GeluTanh: activation(ActivationOp::GeluTanh); break;
    case UnaryOp::Softplus: {
      UnaryConstants k;
      k.a = params.beta;
      k.b = params.threshold;
      activation(ActivationOp::Softplus, k);
      break;
    }
    // Computed in the input's dtype, written as bool.
    case UnaryOp::Isnan: launch_predicate(PredicateOp::Isnan, t, args, stream); break;
    case UnaryOp::Isinf: launch_predicate(PredicateOp::Isinf, t, args, stream); break;
    case UnaryOp::Isfinite: launch_predicate(PredicateOp::Isfinite, t, args, stream); break;
    case UnaryOp::LogicalNot: launch_predicate(PredicateOp::LogicalNot, t, args, stream); break;
  }
  plan.finish();  // an out= tensor of another dtype: the cast kernel (copy_cuda.cpp)
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) { dispatch::register_unary_kernels<&unary_cuda>(m); }

}  // namespace anatomy::cuda
