// The reduction plan: what every reduction kernel (CPU, Meta and CUDA alike) needs to know
// before its loop runs. The reduction operators' argument checks and result dtypes, and the
// allocation of their results, are the operator layer's (dispatch/ops/reduction_rules.h).
//
// Note [Reduction plan]
// Given the input and the dims to reduce, the plan
//   1. wraps the dims (IndexError when out of range, ValueError when repeated; std::nullopt
//      reduces every dim, an empty list none, which leaves N = 1) and computes the result
//      shape, with or without keepdim;
//   2. presents the input as a dense [P, N, M] array: P and M are the kept elements before and
//      after the N reduced ones. When the input is dense and, in memory order, its reduced dims
//      form one block (the common cases: reducing the innermost or the outermost dims of a
//      contiguous or transposed tensor) the input is used as it is; otherwise the kernel first
//      copies permute(kept dims, reduced dims) into a contiguous [P, N, 1] tensor;
//   3. lays out the outputs so that output element (p, m) sits at offset p * M + m: dense, in
//      the input's memory order (result_strides).
// A kernel then reduces N contiguous values per output when M == 1 ("inner" reduction), or
// accumulates N rows of M contiguous values element-wise ("outer" reduction).
#pragma once

#include <optional>

#include "anatomy/core/tensor.h"

namespace anatomy {

class ReductionPlan {
 public:
  // `ordered`: the N index must count the reduced dims in their logical (row-major) order, as
  // argmax's flattened index does; a layout that does not keep that order is copied.
  ReductionPlan(const char* op, const Tensor& self, OptionalIntArrayRef dims, bool keepdim, bool ordered = false);

  const char* op() const { return op_; }
  int64_t outer() const { return p_; }    // P
  int64_t reduced() const { return n_; }  // N
  int64_t inner() const { return m_; }    // M
  int64_t num_outputs() const { return p_ * m_; }
  IntArrayRef result_shape() const { return result_shape_; }
  bool is_reduced(int64_t d) const { return (mask_ >> d) & 1; }

  // The strides of a result laid out so element (p, m) sits at offset p * M + m.
  IntArrayRef result_strides() const { return result_strides_; }
  // Whether the input is a dense [P, N, M] block as it is; otherwise a kernel that walks it as
  // one reads permute(permutation()) made contiguous (dispatch/ops/reduction_rules.h).
  bool is_direct() const { return direct_; }
  IntArrayRef permutation() const { return perm_; }

 private:
  const char* op_;
  uint64_t mask_ = 0;
  int64_t p_ = 1, n_ = 1, m_ = 1;
  bool direct_ = true;
  DimVector perm_;  // the input's dims in [P, N, M] order
  DimVector result_shape_, result_strides_;
};

}  // namespace anatomy
