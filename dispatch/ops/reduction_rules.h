// The reduction operators' front half: argument checks, the dtype each computes in and
// returns, and results allocated in the layout of the reduction plan (core/reduction_plan.h),
// shared by every backend's reduction kernels.
#pragma once

#include <optional>
#include <string>

#include "anatomy/core/reduction_plan.h"

namespace anatomy {

// A result tensor of `dtype` on `device`, laid out so element (p, m) sits at offset p * M + m.
Tensor allocate_reduction_result(const ReductionPlan& plan, DType dtype, Device device);
// `self` as a dense [P, N, M] block: itself, or a contiguous copy of it in the plan's order.
Tensor dense_reduction_input(const ReductionPlan& plan, const Tensor& self);

enum class ReduceKind : int8_t {
  Sum,
  Mean,
  Prod,
  Max,
  Min,
  ArgMax,
  ArgMin,
  Var,
  Std,
  Norm,
  LogSumExp,
  Any,
  All,
  CountNonzero
};

// Everything a backend's loop needs: the plan, the input to read (already cast to the dtype the
// operator computes in) and the allocated results (`indices` for max.dim and min.dim).
struct Reduction {
  ReductionPlan plan;
  Tensor input;
  Tensor values, indices;
};

// `dims` std::nullopt means every dim, an empty list none. `all_dims`: the operator was called
// without dims (max(), argmax() with dim=None), which over an empty input raises ValueError
// rather than IndexError.
Reduction prepare_reduction(ReduceKind kind, const char* op, const Tensor& self, OptionalIntArrayRef dims, bool keepdim,
                            std::optional<DType> dtype = std::nullopt, bool all_dims = false,
                            bool with_indices = false);

// A dim argument as a message shows it: "None" or "[0, 2]".
std::string dims_text(OptionalIntArrayRef dims);

// out= of sum: the result must fit `out` (same shape, a dtype it may be cast to).
void check_reduction_out(const char* op, const Tensor& out, const Tensor& self, IntArrayRef shape, DType dtype);

}  // namespace anatomy
