// The CPU reduction kernels, one function per concept (each in its own reduce_*_cpu.cpp), and
// the types they accumulate in.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "anatomy/core/dtype_visit.h"
#include "anatomy/dispatch/ops/reduce_registration.h"

namespace anatomy::cpu {

// What a sum or product of T accumulates in: fp32 for the 2-byte floats and fp32, fp64 for
// fp64, int64 for the integers and bool.
template <typename T>
using reduce_acc_t = std::conditional_t<std::is_same_v<T, double>, double,
                                        std::conditional_t<std::is_integral_v<T>, int64_t, float>>;

template <typename T>
inline bool is_nan_value(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  else return false;
}

// sum, mean, prod.
void sum_prod_loop(ReduceKind kind, const Reduction& r);
// max, min, amax, amin, argmax, argmin, max.dim, min.dim.
void extreme_loop(ReduceKind kind, const Reduction& r);
// var, std, norm, logsumexp.
void stats_loop(ReduceKind kind, const Reduction& r, const dispatch::ReduceArgs& args);
// any, all, count_nonzero.
void logical_loop(ReduceKind kind, const Reduction& r);

}  // namespace anatomy::cpu
