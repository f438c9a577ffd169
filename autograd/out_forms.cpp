// The out= forms of differentiable operators refuse to record, as PyTorch's do: writing a result
// into a caller's tensor has no node to attach, so a call whose inputs require grad (in grad mode)
// raises NotImplementedError naming the operator, and any other call passes through to the
// backend at no cost beyond one check. Without this the autograd keys would fall through and the
// result would silently have no history.
//
// The list is the out= schema of every operator whose functional form has a derivative; a test
// (tests/autograd/test_out_forms.cpp) fails when an out= form of a differentiable operator is
// missing from it.
#include <string>

#include "anatomy/autograd/autograd_meta.h"
#include "anatomy/autograd/grad_mode.h"
#include "anatomy/dispatch/library.h"

namespace anatomy::autograd {
namespace {

bool requires_grad(const Tensor& t) {
  const AutogradMeta* m = meta_or_null(t);
  return m != nullptr && m->requires_grad();
}

void refuse_out_form(const dispatch::OperatorHandle& op, DispatchKeySet ks, dispatch::Stack& stack, void*) {
  if (GradMode::is_enabled()) {
    const auto& args = op.schema().arguments;
    const size_t first = stack.size() - args.size();
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].alias && args[i].alias->is_write) continue;  // the out tensor itself
      const dispatch::IValue& v = stack[first + i];
      bool grad = false;
      if (v.is<Tensor>()) {
        grad = requires_grad(v.get<Tensor>());
      } else if (v.is<std::vector<Tensor>>()) {
        for (const Tensor& t : v.get<std::vector<Tensor>>()) grad = grad || requires_grad(t);
      }
      ANATOMY_CHECK(!grad, NotImplementedError,
                    "{}: functions with out= arguments don't support automatic differentiation, but one of the "
                    "arguments requires grad",
                    op.schema().full_name());
    }
  }
  op.redispatch_boxed(ks & DispatchKeySet::below(DispatchKey::AutogradCPU), stack);
}

}  // namespace

// Every out= form whose functional operator has a derivative.
const char* const kRefusingOutForms[] = {
    "add.out",
    "sub.out",
    "mul.out",
    "div.out",
    "div.out_mode",
    "atan2.out",
    "clamp.out",
    "fmod.Tensor_out",
    "lerp.Scalar_out",
    "lerp.Tensor_out",
    "maximum.out",
    "minimum.out",
    "pow.Tensor_Tensor_out",
    "remainder.Tensor_out",
    "where.self_out",
    "abs.out",
    "ceil.out",
    "cos.out",
    "erf.out",
    "exp.out",
    "exp2.out",
    "expm1.out",
    "floor.out",
    "gelu.out",
    "log.out",
    "log1p.out",
    "log2.out",
    "nan_to_num.out",
    "neg.out",
    "reciprocal.out",
    "relu.out",
    "round.out",
    "rsqrt.out",
    "sigmoid.out",
    "sign.out",
    "silu.out",
    "sin.out",
    "softplus.out",
    "sqrt.out",
    "tan.out",
    "tanh.out",
    "trunc.out",
    "sum.IntList_out",
    "bmm.out",
    "mm.out",
};

ANATOMY_LIBRARY_IMPL(aten, Autograd, m) {
  for (const char* name : kRefusingOutForms) m.impl_boxed(name, &refuse_out_form, "refuse_out_form");
}

}  // namespace anatomy::autograd
