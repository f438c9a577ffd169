// The kernels at the Autocast key: one boxed kernel per cast policy, registered for the
// operators of each policy's list below. Operators not listed keep the Autocast fallback, a
// fallthrough (dispatch/tracer.cpp), so autocast costs them nothing.
//
// Note [Autocast kernels]
// A kernel finds the call's device type (its highest backend key) and, when autocast is on for
// it, casts the eligible tensor arguments (floating, on that device type, not fp64, not a
// wrapped Python-style number) with `Tensor::to`, which returns the tensor itself when it has
// the dtype already. Then it redispatches below Autocast, to autograd and the backend. Both the
// casts and the redispatch run with Autocast excluded on the thread, as in PyTorch: the casts
// are ordinary operator calls that autograd records (ToCopyBackward), so a gradient returns to
// a fp32 leaf as fp32; and the operators that a composite (matmul, linear, attention) is made
// of are not cast a second time.
#include <string_view>

#include "anatomy/amp/autocast_mode.h"
#include "anatomy/core/dtype.h"
#include "anatomy/core/tensor.h"
#include "anatomy/core/tensor_impl.h"
#include "anatomy/dispatch/library.h"

namespace anatomy::autocast {
namespace {

using dispatch::IValue;
using dispatch::OperatorHandle;
using dispatch::Stack;

enum class CastPolicy {
  LowerPrecision,  // cast to the scope's fp16 / bf16
  Fp32,            // cast up to fp32, unless the call names its own `dtype`
  Promote,         // cast to the widest floating dtype among the eligible inputs
};

bool eligible(const Tensor& t, DeviceType device_type) {
  return t.defined() && t.is_floating_point() && t.dtype() != DType::Float64 && t.device().type() == device_type &&
         !t.impl()->is_wrapped_number();
}

template <typename F>
void for_each_tensor(IValue& v, F&& f) {
  if (v.is<Tensor>()) {
    f(v.get<Tensor>());
  } else if (v.is<std::vector<Tensor>>()) {
    for (Tensor& t : v.get<std::vector<Tensor>>()) f(t);
  }
}

// An fp32-policy call that names its own output dtype (softmax(x, dim, dtype), sum(x, dtype))
// runs as asked.
bool names_dtype(const OperatorHandle& op, const IValue* args) {
  const auto& schema_args = op.schema().arguments;
  for (size_t i = 0; i < schema_args.size(); ++i) {
    if (schema_args[i].name == "dtype" && schema_args[i].type == dispatch::ArgType::OptionalScalarType &&
        !args[i].is_none()) {
      return true;
    }
  }
  return false;
}

// The dtype the policy casts to, or nullopt when nothing is to be cast.
std::optional<DType> target_dtype(CastPolicy policy, const OperatorHandle& op, IValue* args, size_t nargs,
                                  DeviceType device_type) {
  switch (policy) {
    case CastPolicy::LowerPrecision:
      return get_dtype(device_type);
    case CastPolicy::Fp32:
      if (names_dtype(op, args)) return std::nullopt;
      return DType::Float32;
    case CastPolicy::Promote: {
      std::optional<DType> widest;
      for (size_t i = 0; i < nargs; ++i) {
        for_each_tensor(args[i], [&](const Tensor& t) {
          if (eligible(t, device_type)) widest = widest ? promote_types(*widest, t.dtype()) : t.dtype();
        });
      }
      return widest;
    }
  }
  return std::nullopt;
}

void autocast_kernel(CastPolicy policy, const OperatorHandle& op, DispatchKeySet ks, Stack& stack) {
  const DispatchKeySet below = ks & DispatchKeySet::below(DispatchKey::Autocast);
  std::optional<DeviceType> device_type = device_type_of_backend_key(ks.highest_backend());
  if (!device_type || !is_enabled(*device_type)) {
    op.redispatch_boxed(below, stack);
    return;
  }
  dispatch::ExcludeDispatchKeyGuard no_autocast(DispatchKey::Autocast);
  const size_t nargs = op.schema().arguments.size();
  IValue* args = stack.data() + (stack.size() - nargs);
  if (std::optional<DType> to = target_dtype(policy, op, args, nargs, *device_type)) {
    for (size_t i = 0; i < nargs; ++i) {
      for_each_tensor(args[i], [&](Tensor& t) {
        if (eligible(t, *device_type)) t = t.to(*to);
      });
    }
  }
  op.redispatch_boxed(below, stack);
}

void lower_precision_kernel(const OperatorHandle& op, DispatchKeySet ks, Stack& stack, void*) {
  autocast_kernel(CastPolicy::LowerPrecision, op, ks, stack);
}
void fp32_kernel(const OperatorHandle& op, DispatchKeySet ks, Stack& stack, void*) {
  autocast_kernel(CastPolicy::Fp32, op, ks, stack);
}
void promote_kernel(const OperatorHandle& op, DispatchKeySet ks, Stack& stack, void*) {
  autocast_kernel(CastPolicy::Promote, op, ks, stack);
}

// The policy lists. CompositeImplicitAutograd operators (matmul, linear, dot, outer,
// scaled_dot_product_attention, the conv spellings, layer_norm, group_norm) are listed themselves, as PyTorch lists them: the
// cast then happens once, at the top, and the operators they are made of run on the cast
// tensors without passing through Autocast again. Out= and in-place forms are not listed: their
// destination fixes the dtype.
constexpr std::string_view kLowerPrecisionOps[] = {
    "mm",
    "bmm",
    "addmm",
    "baddbmm",
    "_addmm_activation",
    "matmul",
    "linear",
    "dot",
    "outer",
    "scaled_dot_product_attention",
    "convolution",
    "conv1d",
    "conv1d.padding",
    "conv2d",
    "conv2d.padding",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d.input",
};
// clang-format off
constexpr std::string_view kFp32Ops[] = {
    "softmax.int", "log_softmax.int", "layer_norm", "native_layer_norm", "rms_norm", "group_norm",
    "sum", "sum.dim_IntList", "mean", "mean.dim", "prod", "prod.dim_IntList", "norm.ScalarOpt_dim",
    "var.correction", "std.correction", "logsumexp", "cumsum", "cumprod",
    "exp", "expm1", "log", "log1p", "log2", "reciprocal", "rsqrt", "tan", "sinh", "cosh", "pow.Tensor_Tensor",
    "softplus", "log10", "acos", "asin", "erfinv",
    "mse_loss", "l1_loss", "smooth_l1_loss", "nll_loss", "cross_entropy_loss", "binary_cross_entropy_with_logits",
};
// clang-format on
constexpr std::string_view kPromoteOps[] = {
    "cat", "stack", "index_put", "where.self", "lerp.Scalar", "lerp.Tensor", "atan2", "scatter_add",
};

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Autocast, m) {
  for (std::string_view op : kLowerPrecisionOps) m.impl_boxed(op, &lower_precision_kernel, "autocast_lower_precision");
  for (std::string_view op : kFp32Ops) m.impl_boxed(op, &fp32_kernel, "autocast_fp32");
  for (std::string_view op : kPromoteOps) m.impl_boxed(op, &promote_kernel, "autocast_promote");
}

}  // namespace anatomy::autocast
