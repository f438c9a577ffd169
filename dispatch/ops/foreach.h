// Multi-tensor operators over lists of tensors (PyTorch's _foreach_ family): the norm and the scale
// that clip_grad_norm_ (nn/optim/clip_grad.cpp) runs over every gradient. The CPU and Meta run them
// tensor by tensor with the single-tensor operators; CUDA takes many tensors per launch
// (backends/cuda/optim/). They record no history: an input that requires grad, in grad mode, is a
// NotImplementedError (autograd/foreach_refusal.cpp).
#pragma once

#include <vector>

#include "anatomy/core/tensor.h"

namespace anatomy {

// The ord-norm of each tensor (as norm(t, ord) of the whole tensor), each a 0-dim tensor of its
// tensor's dtype and device; an empty tensor's norm is 0. Floating tensors only, at least one.
std::vector<Tensor> _foreach_norm(TensorList self, double ord = 2.0);

// self[i] *= other for every tensor of the list, in place, as self[i].mul_(other): `other` is a
// 0-dim tensor, on the tensors' device or the CPU, whose value is read on the device (nothing waits
// for it). At least one tensor.
void _foreach_mul_(TensorList self, const Tensor& other);

}  // namespace anatomy
