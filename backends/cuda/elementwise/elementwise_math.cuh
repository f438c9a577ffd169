// A building block elementwise/ shares with blas/, optim/ and reduce/ (not a launcher: the room's
// is launch.h).
// The scalar vocabulary of the CUDA kernels: the one every backend shares
// (dispatch/ops/elementwise_scalar.h: the type arithmetic happens in, wrapping integers, NaN),
// named in anatomy::cuda. The element-wise operators' rules are dispatch/ops/*_functors.h.
#pragma once

#include "anatomy/dispatch/ops/elementwise_scalar.h"

namespace anatomy::cuda {

using elementwise::all_ones;
using elementwise::infinity;
using elementwise::is_floating_v;
using elementwise::is_int_v;
using elementwise::opmath_t;
using elementwise::quiet_nan;
using elementwise::wrap_t;
using elementwise::wrapping_neg;

}  // namespace anatomy::cuda
