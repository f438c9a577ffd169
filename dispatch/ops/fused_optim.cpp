// _fused_adam_ (fused_optim.h): schema, the C++ function, the argument checks every backend shares,
// and the composite every backend without its own kernel falls back to (CPU, Meta): the update
// written with public operators per tensor, the same arithmetic as optim/adam.cpp's single-tensor
// step. CUDA updates many tensors per launch (backends/cuda/optim/).
#include "anatomy/dispatch/ops/fused_optim.h"

#include <cmath>

#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/fused_optim_rules.h"
#include "anatomy/dispatch/ops/print.h"

namespace anatomy {

void check_fused_adam(TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs, double lr,
                      double beta1, double beta2, double eps, double bias_correction1, double bias_correction2) {
  const char* op = "_fused_adam_";
  ANATOMY_CHECK(
      grads.size() == params.size() && exp_avgs.size() == params.size() && exp_avg_sqs.size() == params.size(),
      ValueError,
      "{}: the lists must have one entry per parameter: {} params, {} grads, {} exp_avgs, {} "
      "exp_avg_sqs",
      op, params.size(), grads.size(), exp_avgs.size(), exp_avg_sqs.size());
  ANATOMY_CHECK(std::isfinite(lr) && lr >= 0 && beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1 && eps >= 0,
                ValueError, "{}: invalid hyperparameters lr={} beta1={} beta2={} eps={}", op, lr, beta1, beta2, eps);
  ANATOMY_CHECK(bias_correction1 > 0 && bias_correction1 <= 1 && bias_correction2 > 0 && bias_correction2 <= 1,
                ValueError, "{}: the bias corrections must be in (0, 1], got {} and {}", op, bias_correction1,
                bias_correction2);
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    ANATOMY_CHECK(p.defined() && is_floating(p.dtype()), TypeError, "{}: parameter {} must be a floating tensor", op,
                  i);
    for (const Tensor* t : {&grads[i], &exp_avgs[i], &exp_avg_sqs[i]}) {
      const char* what = t == &grads[i] ? "grad" : t == &exp_avgs[i] ? "exp_avg" : "exp_avg_sq";
      ANATOMY_CHECK(t->defined(), ValueError, "{}: {} {} is undefined", op, what, i);
      ANATOMY_CHECK(t->sizes() == p.sizes() && t->dtype() == p.dtype() && t->device() == p.device(), ValueError,
                    "{}: {} {} is {} {} on {}, but its parameter is {} {} on {}", op, what, i, name(t->dtype()),
                    shape_string(t->sizes()), t->device().str(), name(p.dtype()), shape_string(p.sizes()),
                    p.device().str());
    }
  }
}

void adam_step_with_ops(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                        double lr, double beta1, double beta2, double weight_decay, double eps, double bias_correction1,
                        double bias_correction2, bool decoupled_weight_decay) {
  Tensor g = grad;
  if (weight_decay != 0) {
    if (decoupled_weight_decay) param.mul_(1 - lr * weight_decay);
    else g = g.add(param, weight_decay);
  }
  exp_avg.mul_(beta1).add_(g, 1 - beta1);
  exp_avg_sq.mul_(beta2).addcmul_(g, g, 1 - beta2);
  const Tensor denom = (exp_avg_sq.sqrt() / std::sqrt(bias_correction2)).add_(eps);
  param.addcdiv_(exp_avg, denom, -lr / bias_correction1);
}

namespace {

void fused_adam_composite(TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs, double lr,
                          double beta1, double beta2, double weight_decay, double eps, double bias_correction1,
                          double bias_correction2, bool decoupled_weight_decay) {
  check_fused_adam(params, grads, exp_avgs, exp_avg_sqs, lr, beta1, beta2, eps, bias_correction1, bias_correction2);
  for (size_t i = 0; i < params.size(); ++i) {
    adam_step_with_ops(params[i], grads[i], exp_avgs[i], exp_avg_sqs[i], lr, beta1, beta2, weight_decay, eps,
                       bias_correction1, bias_correction2, decoupled_weight_decay);
  }
}

}  // namespace

ANATOMY_LIBRARY(aten, m) {
  m.def(
      "_fused_adam_(Tensor(a!)[] params, Tensor[] grads, Tensor(b!)[] exp_avgs, Tensor(c!)[] exp_avg_sqs, float lr, "
      "float beta1, float beta2, float weight_decay, float eps, float bias_correction1, float bias_correction2, "
      "bool decoupled_weight_decay) -> ()");
}

ANATOMY_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("_fused_adam_", ANATOMY_KERNEL(fused_adam_composite));
}

void _fused_adam_(TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs, double lr,
                  double beta1, double beta2, double weight_decay, double eps, double bias_correction1,
                  double bias_correction2, bool decoupled_weight_decay) {
  ANATOMY_OP(op, "aten::_fused_adam_",
             void(TensorList, TensorList, TensorList, TensorList, double, double, double, double, double, double,
                  double, bool));
  op.call(params, grads, exp_avgs, exp_avg_sqs, lr, beta1, beta2, weight_decay, eps, bias_correction1, bias_correction2,
          decoupled_weight_decay);
}

}  // namespace anatomy
