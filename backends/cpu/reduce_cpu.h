// The CPU reduction kernels, one function per concept (each in its own reduce_*_cpu.cpp), running
// the shared functors (dispatch/ops/reduce_functors.h) through the CPU engine (reduce_loops.h).
#pragma once

#include "anatomy/core/dtype_visit.h"
#include "anatomy/dispatch/ops/reduce_functors.h"
#include "anatomy/dispatch/ops/reduce_registration.h"

namespace anatomy::cpu {

// sum, mean, prod.
void sum_prod_loop(ReduceKind kind, const Reduction& r);
// max, min, amax, amin, argmax, argmin, max.dim, min.dim.
void extreme_loop(ReduceKind kind, const Reduction& r);
// var, std, norm, logsumexp.
void stats_loop(ReduceKind kind, const Reduction& r, const dispatch::ReduceArgs& args);
// any, all, count_nonzero.
void logical_loop(ReduceKind kind, const Reduction& r);

}  // namespace anatomy::cpu
