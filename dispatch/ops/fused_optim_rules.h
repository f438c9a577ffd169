// The argument checks of the optimizers' multi-tensor operators, shared by the composite
// (dispatch/ops/fused_optim.cpp) and the CUDA kernels (backends/cuda/optim/), so both refuse the
// same inputs with the same messages.
#pragma once

#include "anatomy/core/tensor.h"

namespace anatomy {

// _fused_adam_'s: four lists of one entry per parameter, each entry's tensors of the parameter's
// shape, dtype (floating) and device; hyperparameters in range; bias corrections in (0, 1]. `op`
// names the operator in the errors.
void check_fused_adam(TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs, double lr,
                      double beta1, double beta2, double eps, double bias_correction1, double bias_correction2,
                      const char* op = "_fused_adam_");

// _fused_adam_capturable_'s: _fused_adam_'s, and one step count per parameter, each a one-element
// fp64 tensor on its parameter's device.
void check_fused_adam_capturable(TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
                                 TensorList steps, double lr, double beta1, double beta2, double eps);

// One parameter's Adam step written with public operators, in place (the composite's body, and
// CUDA's for an entry whose tensors are not contiguous).
void adam_step_with_ops(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                        double lr, double beta1, double beta2, double weight_decay, double eps, double bias_correction1,
                        double bias_correction2, bool decoupled_weight_decay);

// The step's first half with public operators, in place: weight decay (decoupled: param *= 1 -
// lr wd; else returned in the gradient) and both moments. Returns the gradient the moments took.
Tensor adam_moments_with_ops(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                             double lr, double beta1, double beta2, double weight_decay, bool decoupled_weight_decay);

// The step's second half with the count on the device (capturable): param -= lr / (1 - beta1^t) *
// exp_avg / (sqrt(second) / sqrt(1 - beta2^t) + eps), the corrections formed in fp64 from the
// one-element count t on its device (1 - beta^t as 1 - exp(t log beta)). `second` is exp_avg_sq,
// or its running maximum with amsgrad.
void adam_apply_with_device_count(const Tensor& param, const Tensor& exp_avg, const Tensor& second, const Tensor& count,
                                  double lr, double beta1, double beta2, double eps);

}  // namespace anatomy
