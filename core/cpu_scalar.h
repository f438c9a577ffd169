// 0-dim CPU tensors made and cast without the dispatcher: the scalars that element-wise ops wrap
// (`a * 2`, `where(c, g, 0)`) and the casts the iteration plan gives them. Through the dispatcher
// each costs an empty, a fill or a _to_copy call with its autograd and composite layers; on a tiny
// op that is a large part of the host time, and the value is one element either way.
#pragma once

#include "anatomy/core/dtype.h"
#include "anatomy/core/scalar.h"
#include "anatomy/core/tensor.h"

namespace anatomy {

// A 0-dim CPU tensor of `dtype` holding `value` (converted as fill_ converts it).
Tensor make_cpu_scalar(const Scalar& value, DType dtype);

// `t`, a 0-dim CPU tensor, as a new 0-dim CPU tensor of `dtype` (converted as a copy converts).
Tensor cast_cpu_scalar(const Tensor& t, DType dtype);

}  // namespace anatomy
