// The argument checks of the multi-tensor operators (foreach.h), shared by the composites
// (dispatch/ops/foreach.cpp) and the CUDA kernels (backends/cuda/optim/), so both refuse the same
// inputs with the same messages.
#pragma once

#include "anatomy/core/tensor.h"

namespace anatomy {

// _foreach_norm's: at least one tensor, every tensor defined and floating; ord a norm order that norm accepts (not
// NaN).
void check_foreach_norm(TensorList self, double ord);

// _foreach_mul_'s: at least one tensor, every tensor defined; other a defined 0-dim tensor.
void check_foreach_mul(TensorList self, const Tensor& other);

// One tensor's entry of _foreach_norm with the single-tensor operators (the composite's body, and
// CUDA's for a tensor that is not contiguous): norm(t, ord), and 0 for an empty tensor.
Tensor foreach_norm_one(const Tensor& t, double ord);

}  // namespace anatomy
