// _fused_adam_ and _fused_adam_capturable_ (fused_optim.h): schemas, the C++ functions, the
// argument checks every backend shares, and the composites every backend without its own kernel
// falls back to (CPU, Meta): the update written with public operators per tensor, the same
// arithmetic as nn/optim/adam.cpp's single-tensor step. CUDA updates many tensors per launch
// (backends/cuda/optim/).
#include "anatomy/dispatch/ops/fused_optim.h"

#include <cmath>

#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/fused_optim_rules.h"
#include "anatomy/dispatch/ops/print.h"

namespace anatomy {

void check_fused_adam(TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs, double lr,
                      double beta1, double beta2, double eps, double bias_correction1, double bias_correction2,
                      const char* op) {
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

void check_fused_adam_capturable(TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
                                 TensorList steps, double lr, double beta1, double beta2, double eps) {
  const char* op = "_fused_adam_capturable_";
  // The corrections come from the counts, checked below; 1 passes the corrections' check.
  check_fused_adam(params, grads, exp_avgs, exp_avg_sqs, lr, beta1, beta2, eps, 1, 1, op);
  ANATOMY_CHECK(steps.size() == params.size(), ValueError,
                "{}: the lists must have one entry per parameter: {} params, {} steps", op, params.size(),
                steps.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& s = steps[i];
    ANATOMY_CHECK(s.defined(), ValueError, "{}: step {} is undefined", op, i);
    ANATOMY_CHECK(s.numel() == 1 && s.dtype() == DType::Float64 && s.device() == params[i].device(), ValueError,
                  "{}: step {} must be a one-element fp64 tensor on {}, got {} {} on {}", op, i,
                  params[i].device().str(), name(s.dtype()), shape_string(s.sizes()), s.device().str());
  }
}

Tensor adam_moments_with_ops(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                             double lr, double beta1, double beta2, double weight_decay, bool decoupled_weight_decay) {
  Tensor g = grad;
  if (weight_decay != 0) {
    if (decoupled_weight_decay) param.mul_(1 - lr * weight_decay);  // a double, as PyTorch's
    else g = g.add(param, weight_decay);
  }
  exp_avg.mul_(beta1).add_(g, 1 - beta1);
  exp_avg_sq.mul_(beta2).addcmul_(g, g, 1 - beta2);
  return g;
}

void adam_apply_with_device_count(const Tensor& param, const Tensor& exp_avg, const Tensor& second, const Tensor& count,
                                  double lr, double beta1, double beta2, double eps) {
  const Tensor bias1 = (count * std::log(beta1)).exp().neg().add(1.0);
  const Tensor bias2 = (count * std::log(beta2)).exp().neg().add(1.0);
  const Tensor denom = (second.sqrt() / bias2.sqrt().to(param.dtype())).add_(eps);
  param.sub_(exp_avg / denom * (bias1.reciprocal() * lr).to(param.dtype()));
}

void adam_step_with_ops(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                        double lr, double beta1, double beta2, double weight_decay, double eps, double bias_correction1,
                        double bias_correction2, bool decoupled_weight_decay) {
  adam_moments_with_ops(param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, weight_decay, decoupled_weight_decay);
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

void fused_adam_capturable_composite(TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
                                     TensorList steps, double lr, double beta1, double beta2, double weight_decay,
                                     double eps, bool decoupled_weight_decay) {
  check_fused_adam_capturable(params, grads, exp_avgs, exp_avg_sqs, steps, lr, beta1, beta2, eps);
  for (size_t i = 0; i < params.size(); ++i) {
    steps[i].add_(1.0);
    adam_moments_with_ops(params[i], grads[i], exp_avgs[i], exp_avg_sqs[i], lr, beta1, beta2, weight_decay,
                          decoupled_weight_decay);
    adam_apply_with_device_count(params[i], exp_avgs[i], exp_avg_sqs[i], steps[i], lr, beta1, beta2, eps);
  }
}

}  // namespace

ANATOMY_LIBRARY(aten, m) {
  m.def(
      "_fused_adam_(Tensor(a!)[] params, Tensor[] grads, Tensor(b!)[] exp_avgs, Tensor(c!)[] exp_avg_sqs, float lr, "
      "float beta1, float beta2, float weight_decay, float eps, float bias_correction1, float bias_correction2, "
      "bool decoupled_weight_decay) -> ()");
  m.def(
      "_fused_adam_capturable_(Tensor(a!)[] params, Tensor[] grads, Tensor(b!)[] exp_avgs, Tensor(c!)[] exp_avg_sqs, "
      "Tensor(d!)[] steps, float lr, float beta1, float beta2, float weight_decay, float eps, "
      "bool decoupled_weight_decay) -> ()");
}

ANATOMY_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("_fused_adam_", ANATOMY_KERNEL(fused_adam_composite));
  m.impl("_fused_adam_capturable_", ANATOMY_KERNEL(fused_adam_capturable_composite));
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

void _fused_adam_capturable_(TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
                             TensorList steps, double lr, double beta1, double beta2, double weight_decay, double eps,
                             bool decoupled_weight_decay) {
  ANATOMY_OP(
      op, "aten::_fused_adam_capturable_",
      void(TensorList, TensorList, TensorList, TensorList, TensorList, double, double, double, double, double, bool));
  op.call(params, grads, exp_avgs, exp_avg_sqs, steps, lr, beta1, beta2, weight_decay, eps, decoupled_weight_decay);
}

}  // namespace anatomy
