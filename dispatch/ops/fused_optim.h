// The optimizers' multi-tensor updates: one operator call updates every parameter of a group, and
// the CUDA kernel updates many tensors per launch (backends/cuda/optim/). optim/'s Adam and
// AdamW call it when their options' `foreach` is set (nn/optim/optim.h).
#pragma once

#include "anatomy/core/tensor.h"

namespace anatomy {

// Adam's step on each (param, grad, exp_avg, exp_avg_sq), in place, with torch.optim.Adam's
// arithmetic in fp32 (fp64 for fp64 tensors): weight decay (decoupled: param *= 1 - lr wd, as
// AdamW; else grad += wd param), exp_avg = beta1 exp_avg + (1 - beta1) grad, exp_avg_sq =
// beta2 exp_avg_sq + (1 - beta2) grad^2, param -= lr / bias_correction1 * exp_avg /
// (sqrt(exp_avg_sq) / sqrt(bias_correction2) + eps). The bias corrections (1 - beta^t) come from
// the caller, so every tensor of one call is at the same step. The four lists have one entry per
// parameter; entry i's tensors share a shape, dtype (floating) and device. Not differentiable:
// call it with grad mode off, as the optimizers do.
void _fused_adam_(TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs, double lr,
                  double beta1, double beta2, double weight_decay, double eps, double bias_correction1,
                  double bias_correction2, bool decoupled_weight_decay);

// _fused_adam_ with each parameter's step count in a one-element fp64 tensor on its device, as
// the optimizers' capturable state keeps it: every count advances by one, then entry i's bias
// corrections are 1 - beta^steps[i], formed on the device. Nothing is read back to the host, so
// the call can be captured into a CUDA graph and each replay advances the counts. On CUDA two
// launches (the counts, then the update) per table of tensors.
void _fused_adam_capturable_(TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,
                             TensorList steps, double lr, double beta1, double beta2, double weight_decay, double eps,
                             bool decoupled_weight_decay);

}  // namespace anatomy
