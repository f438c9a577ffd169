// The built-in operators that reach their autograd keys (they take tensors) but have no
// derivative formula, each declared here so that none of them meets the autograd fallback
// (Note [Autograd fallback] in autograd_fallback.h). tests/autograd/test_every_op_records.cpp
// checks that every aten operator with a tensor argument has an autograd kernel, a
// CompositeImplicitAutograd kernel, or an entry here.
#include "anatomy/autograd/derivative.h"
#include "anatomy/dispatch/ops/binary_rows.h"
#include "anatomy/dispatch/ops/unary_rows.h"

namespace anatomy::autograd {
namespace {

// Nothing to record, at no cost (a fallthrough): the outputs are integers or booleans
// (comparisons, masks, indices, counts), which carry no gradient, or their values do not depend
// on the input's values (the *_like factories take only its shape, dtype and device). The
// element-wise operators of this kind are their rows' (below).
// clang-format off: grouped by kind
constexpr const char* kNotDifferentiable[] = {
    "_local_scalar_dense",
    "all",
    "all.dims",
    "any",
    "any.dims",
    "argmax",
    "argmin",
    "count_nonzero.dim_IntList",
    "all.dims_out",
    "any.dims_out",
    "argmax.out",
    "argmin.out",
    "count_nonzero.dim_IntList_out",
    "nonzero",
    "one_hot",
    "searchsorted.Tensor",
    "bucketize.Tensor",
    "empty_like",
    "zeros_like",
    "ones_like",
    "full_like",
    "rand_like",
    "randn_like",
    // The optimizers' multi-tensor step writes parameters under no-grad (dispatch/ops/fused_optim.h).
    "_fused_adam_",
    "_fused_adam_capturable_",
};
// clang-format on

// In-place comparisons and logical operators may write 0 and 1 into a floating-point tensor:
// its old history must go (a fallthrough would keep it), and the gradient through the new
// values is zero, as in PyTorch. The node passes no gradient on.
variable_list zero_gradient(BackwardContext& ctx, const variable_list&) { return ctx.grads(); }
#define ANATOMY_ZERO_GRADIENT_ENTRY(var, op, node) const DerivativeEntry var{op, node, 0, 0, &zero_gradient};
ANATOMY_ZERO_GRADIENT_ENTRY(kEq_, "aten::eq_.Tensor", "EqBackward1")
ANATOMY_ZERO_GRADIENT_ENTRY(kNe_, "aten::ne_.Tensor", "NeBackward1")
ANATOMY_ZERO_GRADIENT_ENTRY(kLt_, "aten::lt_.Tensor", "LtBackward1")
ANATOMY_ZERO_GRADIENT_ENTRY(kLe_, "aten::le_.Tensor", "LeBackward1")
ANATOMY_ZERO_GRADIENT_ENTRY(kGt_, "aten::gt_.Tensor", "GtBackward1")
ANATOMY_ZERO_GRADIENT_ENTRY(kGe_, "aten::ge_.Tensor", "GeBackward1")
ANATOMY_ZERO_GRADIENT_ENTRY(kLogicalAnd_, "aten::logical_and_", "LogicalAndBackward0")
ANATOMY_ZERO_GRADIENT_ENTRY(kLogicalOr_, "aten::logical_or_", "LogicalOrBackward0")
ANATOMY_ZERO_GRADIENT_ENTRY(kLogicalXor_, "aten::logical_xor_", "LogicalXorBackward0")
ANATOMY_ZERO_GRADIENT_ENTRY(kLogicalNot_, "aten::logical_not_", "LogicalNotBackward0")
#undef ANATOMY_ZERO_GRADIENT_ENTRY

// The fused backward operators (Note [Fused backward unless create_graph] in
// derivatives_nn.cpp) are called by formulas with grad mode off; a differentiable backward
// (create_graph) uses public operators instead. Called directly on tensors that require grad,
// they raise NotImplementedError at the call (a missing formula), as PyTorch has no formula for
// them either.
const DerivativeEntry kSoftmaxBackwardData{"aten::_softmax_backward_data", "SoftmaxBackwardDataBackward0", 0, 0,
                                           nullptr};
const DerivativeEntry kLogSoftmaxBackwardData{"aten::_log_softmax_backward_data", "LogSoftmaxBackwardDataBackward0", 0,
                                              0, nullptr};
const DerivativeEntry kNativeLayerNormBackward{"aten::native_layer_norm_backward", "NativeLayerNormBackwardBackward0",
                                               0, 0, nullptr};
const DerivativeEntry kRmsNormBackward{"aten::_rms_norm_backward", "RmsNormBackwardBackward0", 0, 0, nullptr};
const DerivativeEntry kGeluBackward{"aten::gelu_backward", "GeluBackwardBackward0", 0, 0, nullptr};

using BinSig = Tensor(const Tensor&, const Tensor&);
using UnarySig = Tensor(const Tensor&);
using SoftmaxBackwardSig = Tensor(const Tensor&, const Tensor&, int64_t, DType);
using LayerNormBackwardSig = std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&, IntArrayRef,
                                                                const Tensor&, const Tensor&,
                                                                const std::optional<Tensor>&,
                                                                const std::optional<Tensor>&, IntArrayRef);
using RmsNormBackwardSig = std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&, IntArrayRef,
                                                      const std::optional<Tensor>&, std::optional<double>, IntArrayRef);

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Autograd, m) {
  for (const char* op : kNotDifferentiable) m.impl_fallthrough(op);
    // The binary function rows without a derivative (core/op_lists.h): comparisons and logical ops
    // (their in-place forms record a zero gradient, above), bitwise ops and shifts (integers and
    // bool only, in place too).
#define ANATOMY_BINARY_NOT_DIFFERENTIABLE(e, name, dtypes, fn, group, functional, inplace, out)            \
  if (!binary_dtypes_differentiable(BinaryDtypes::dtypes)) {                                               \
    m.impl_fallthrough(functional);                                                                        \
    m.impl_fallthrough(out);                                                                               \
    if (BinaryDtypes::dtypes != BinaryDtypes::Compare && sizeof(inplace) > 1) m.impl_fallthrough(inplace); \
  }
  ANATOMY_FORALL_BINARY_FUNCTION_OPS(ANATOMY_BINARY_NOT_DIFFERENTIABLE)
#undef ANATOMY_BINARY_NOT_DIFFERENTIABLE
  // The unary rows without a derivative: the predicates (isnan, isinf, isfinite with a functional
  // form only; logical_not, whose in-place form records a zero gradient, above) and bitwise_not.
  // The special rows' only form is the functional one, named as the row.
#define ANATOMY_UNARY_NOT_DIFFERENTIABLE(e, name, kind, fn, group, functional, inplace, out)         \
  if (!unary_kind_differentiable(UnaryKind::kind)) {                                                 \
    m.impl_fallthrough(#name);                                                                       \
    if (sizeof(out) > 1) m.impl_fallthrough(out);                                                    \
    if (UnaryKind::kind != UnaryKind::Predicate && sizeof(inplace) > 1) m.impl_fallthrough(inplace); \
  }
  ANATOMY_FORALL_UNARY_OPS(ANATOMY_UNARY_NOT_DIFFERENTIABLE)
#undef ANATOMY_UNARY_NOT_DIFFERENTIABLE
  register_derivative<&kEq_, BinSig>(m, "eq_.Tensor");
  register_derivative<&kNe_, BinSig>(m, "ne_.Tensor");
  register_derivative<&kLt_, BinSig>(m, "lt_.Tensor");
  register_derivative<&kLe_, BinSig>(m, "le_.Tensor");
  register_derivative<&kGt_, BinSig>(m, "gt_.Tensor");
  register_derivative<&kGe_, BinSig>(m, "ge_.Tensor");
  register_derivative<&kLogicalAnd_, BinSig>(m, "logical_and_");
  register_derivative<&kLogicalOr_, BinSig>(m, "logical_or_");
  register_derivative<&kLogicalXor_, BinSig>(m, "logical_xor_");
  register_derivative<&kLogicalNot_, UnarySig>(m, "logical_not_");
  register_derivative<&kSoftmaxBackwardData, SoftmaxBackwardSig>(m, "_softmax_backward_data");
  register_derivative<&kLogSoftmaxBackwardData, SoftmaxBackwardSig>(m, "_log_softmax_backward_data");
  register_derivative<&kNativeLayerNormBackward, LayerNormBackwardSig>(m, "native_layer_norm_backward");
  register_derivative<&kRmsNormBackward, RmsNormBackwardSig>(m, "_rms_norm_backward");
  register_derivative<&kGeluBackward, Tensor(const Tensor&, const Tensor&, std::string_view)>(m, "gelu_backward");
}

}  // namespace anatomy::autograd
