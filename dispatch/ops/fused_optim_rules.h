// The argument checks of the optimizers' multi-tensor operators, shared by the composite
// (dispatch/ops/fused_optim.cpp) and the CUDA kernels (backends/cuda/optim/), so both refuse the
// same inputs with the same messages.
#pragma once

#include "anatomy/core/tensor.h"

namespace anatomy {

// _fused_adam_'s: four lists of one entry per parameter, each entry's tensors of the parameter's
// shape, dtype (floating) and device; hyperparameters in range; bias corrections in (0, 1].
void check_fused_adam(TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs, double lr,
                      double beta1, double beta2, double eps, double bias_correction1, double bias_correction2);

// One parameter's Adam step written with public operators, in place (the composite's body, and
// CUDA's for an entry whose tensors are not contiguous).
void adam_step_with_ops(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                        double lr, double beta1, double beta2, double weight_decay, double eps, double bias_correction1,
                        double bias_correction2, bool decoupled_weight_decay);

}  // namespace anatomy
