// The out= forms of differentiable operators refuse to record, as PyTorch's do: writing a result
// into a caller's tensor has no node to attach, so a call whose inputs require grad (in grad mode)
// raises NotImplementedError naming the operator, and any other call passes through to the
// backend at no cost beyond one check: the kernels are typed (one per C++ signature of these
// out= forms), so a call is not boxed on its way through. Without this the autograd keys would fall through and the
// result would silently have no history.
//
// The list is the out= schema of every operator whose functional form has a derivative; a test
// (tests/autograd/test_out_forms.cpp) fails when an out= form of a differentiable operator is
// missing from it.
#include <string_view>
#include <tuple>
#include <utility>

#include "anatomy/autograd/autograd_meta.h"
#include "anatomy/autograd/grad_mode.h"
#include "anatomy/dispatch/backend_select.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops/binary_rows.h"
#include "anatomy/dispatch/ops/unary_rows.h"

namespace anatomy::autograd {
namespace {

bool requires_grad(const Tensor& t) {
  const AutogradMeta* m = meta_or_null(t);
  return m != nullptr && m->requires_grad();
}
template <typename T>
bool arg_requires_grad(const T& arg) {
  if constexpr (std::is_same_v<std::remove_cvref_t<T>, Tensor>) return requires_grad(arg);
  return false;
}

// Whether an input (every argument but the out tensors, the last) requires grad.
template <typename Tuple, size_t... I>
bool input_requires_grad(const Tuple& args, std::index_sequence<I...>) {
  return (arg_requires_grad(std::get<I>(args)) || ...);
}

template <dispatch::FixedString Name, typename Sig>
struct RefuseOutForm;

// How many out tensors an out= form writes: one, or one per element of a tuple it returns; they
// are its last arguments.
template <typename R>
constexpr size_t kOuts = 1;
template <typename... Rs>
constexpr size_t kOuts<std::tuple<Rs...>> = sizeof...(Rs);

template <dispatch::FixedString Name, typename R, typename... Args>
struct RefuseOutForm<Name, R(Args...)> {
  static R call(DispatchKeySet ks, Args... args) {
    static const auto op = dispatch::Dispatcher::singleton().find_or_throw(Name.view()).template typed<R(Args...)>();
    if (GradMode::is_enabled()) {
      const bool grad =
          input_requires_grad(std::forward_as_tuple(args...), std::make_index_sequence<sizeof...(Args) - kOuts<R>>());
      ANATOMY_CHECK(!grad, NotImplementedError,
                    "{}: functions with out= arguments don't support automatic differentiation, but one of the "
                    "arguments requires grad",
                    op.schema().full_name());
    }
    return op.redispatch(ks & DispatchKeySet::below(DispatchKey::AutogradCPU), std::forward<Args>(args)...);
  }
};

// The C++ signatures of the out= forms (their public functions' typed handles in dispatch/ops/*.cpp;
// a mismatch is a TypeError when the library loads).
using Unary = Tensor(const Tensor&, const Tensor&);
using Binary = Tensor(const Tensor&, const Tensor&, const Tensor&);
using Alpha = Tensor(const Tensor&, const Tensor&, const Scalar&, const Tensor&);
using Ternary = Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&);
using Mode = Tensor(const Tensor&, const Tensor&, std::optional<std::string_view>, const Tensor&);
using Clamp = Tensor(const Tensor&, const std::optional<Scalar>&, const std::optional<Scalar>&, const Tensor&);
using Gelu = Tensor(const Tensor&, std::string_view, const Tensor&);
using Softplus = Tensor(const Tensor&, const Scalar&, const Scalar&, const Tensor&);
using NanToNum = Tensor(const Tensor&, std::optional<double>, std::optional<double>, std::optional<double>,
                        const Tensor&);
using Polygamma = Tensor(int64_t, const Tensor&, const Tensor&);
using Logit = Tensor(const Tensor&, std::optional<double>, const Tensor&);
using LeakyRelu = Tensor(const Tensor&, const Scalar&, const Tensor&);
using Elu = Tensor(const Tensor&, const Scalar&, const Scalar&, const Scalar&, const Tensor&);
using SumDims = Tensor(const Tensor&, OptionalIntArrayRef, bool, std::optional<DType>, const Tensor&);
using Dims = Tensor(const Tensor&, OptionalIntArrayRef, bool, const Tensor&);
using Correction = Tensor(const Tensor&, OptionalIntArrayRef, double, bool, const Tensor&);
using Norm = Tensor(const Tensor&, const Scalar&, OptionalIntArrayRef, bool, const Tensor&);
using ExtremeDim = std::tuple<Tensor, Tensor>(const Tensor&, int64_t, bool, const Tensor&, const Tensor&);
using Pointwise = Tensor(const Tensor&, const Tensor&, const Tensor&, const Scalar&, const Tensor&);

}  // namespace

#define ANATOMY_REFUSING_OUT_FORM(name, sig) \
  m.impl(name, dispatch::named_kernel(&RefuseOutForm<"aten::" name, sig>::call, "refuse_out_form"))

// Every out= form whose functional operator has a derivative.
ANATOMY_LIBRARY_IMPL(aten, Autograd, m) {
  ANATOMY_REFUSING_OUT_FORM("add.out", Alpha);
  ANATOMY_REFUSING_OUT_FORM("sub.out", Alpha);
  ANATOMY_REFUSING_OUT_FORM("mul.out", Binary);
  ANATOMY_REFUSING_OUT_FORM("div.out", Binary);
  ANATOMY_REFUSING_OUT_FORM("div.out_mode", Mode);
  ANATOMY_REFUSING_OUT_FORM("clamp.out", Clamp);
  // The binary function rows (core/op_lists.h) of operators with a derivative.
#define ANATOMY_REFUSING_BINARY_OUT_FORM(e, name, dtypes, fn, group, functional, inplace, out) \
  if (binary_dtypes_differentiable(BinaryDtypes::dtypes)) ANATOMY_REFUSING_OUT_FORM(out, Binary);
  ANATOMY_FORALL_BINARY_FUNCTION_OPS(ANATOMY_REFUSING_BINARY_OUT_FORM)
#undef ANATOMY_REFUSING_BINARY_OUT_FORM
  ANATOMY_REFUSING_OUT_FORM("lerp.Scalar_out", Alpha);
  ANATOMY_REFUSING_OUT_FORM("lerp.Tensor_out", Ternary);
  ANATOMY_REFUSING_OUT_FORM("where.self_out", Ternary);
  // Composites of mul or div and add.out: refused here, so the error names the operator called.
  ANATOMY_REFUSING_OUT_FORM("addcmul.out", Pointwise);
  ANATOMY_REFUSING_OUT_FORM("addcdiv.out", Pointwise);
  // The unary function rows (core/op_lists.h) of operators with a derivative.
#define ANATOMY_REFUSING_UNARY_OUT_FORM(e, name, kind, fn, group, functional, inplace, out) \
  if (unary_kind_differentiable(UnaryKind::kind)) ANATOMY_REFUSING_OUT_FORM(out, Unary);
  ANATOMY_FORALL_UNARY_FUNCTION_OPS(ANATOMY_REFUSING_UNARY_OUT_FORM)
#undef ANATOMY_REFUSING_UNARY_OUT_FORM
  ANATOMY_REFUSING_OUT_FORM("gelu.out", Gelu);
  ANATOMY_REFUSING_OUT_FORM("nan_to_num.out", NanToNum);
  ANATOMY_REFUSING_OUT_FORM("softplus.out", Softplus);
  ANATOMY_REFUSING_OUT_FORM("polygamma.out", Polygamma);
  ANATOMY_REFUSING_OUT_FORM("logit.out", Logit);
  ANATOMY_REFUSING_OUT_FORM("leaky_relu.out", LeakyRelu);
  ANATOMY_REFUSING_OUT_FORM("hardtanh.out", Softplus);  // two Scalars, as softplus's
  ANATOMY_REFUSING_OUT_FORM("elu.out", Elu);
  ANATOMY_REFUSING_OUT_FORM("sum.IntList_out", SumDims);
  ANATOMY_REFUSING_OUT_FORM("mean.out", SumDims);
  ANATOMY_REFUSING_OUT_FORM("prod.IntList_out", SumDims);
  ANATOMY_REFUSING_OUT_FORM("amax.out", Dims);
  ANATOMY_REFUSING_OUT_FORM("amin.out", Dims);
  ANATOMY_REFUSING_OUT_FORM("logsumexp.out", Dims);
  ANATOMY_REFUSING_OUT_FORM("var.correction_out", Correction);
  ANATOMY_REFUSING_OUT_FORM("std.correction_out", Correction);
  ANATOMY_REFUSING_OUT_FORM("norm.out", Norm);
  ANATOMY_REFUSING_OUT_FORM("max.dim_max", ExtremeDim);
  ANATOMY_REFUSING_OUT_FORM("min.dim_min", ExtremeDim);
  ANATOMY_REFUSING_OUT_FORM("bmm.out", Binary);
  ANATOMY_REFUSING_OUT_FORM("mm.out", Binary);
}

#undef ANATOMY_REFUSING_OUT_FORM

}  // namespace anatomy::autograd
