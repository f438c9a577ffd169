// The front half of the fused backward operators of softmax, log_softmax, layer_norm and
// rms_norm (_softmax_backward_data, _log_softmax_backward_data, native_layer_norm_backward,
// _rms_norm_backward), shared by the composite kernel every backend falls back to
// (dispatch/ops/nn_backward.cpp) and the CUDA kernels (backends/cuda/norm/norm_backward_cuda.cpp):
// the argument checks and, for a kernel that reads raw rows, the contiguous operands.
#pragma once

#include <optional>
#include <vector>

#include "anatomy/core/tensor.h"
#include "anatomy/dispatch/ops/norm_plan.h"

namespace anatomy {

struct SoftmaxBackwardPlan {
  Tensor grad, output;                     // contiguous, of output's dtype (floating), same shape
  int64_t dim = 0;                         // wrapped (0 for a 0-dim output)
  int64_t outer = 1, size = 1, inner = 1;  // P, N, M of the dim, as SoftmaxPlan
};

// grad_output and output have the same shape, dtype (floating) and device; dim is in range;
// input_dtype is floating. `contiguous` makes the operands contiguous (a kernel's rows).
SoftmaxBackwardPlan prepare_softmax_backward(const char* op, const Tensor& grad_output, const Tensor& output,
                                             int64_t dim, DType input_dtype, bool contiguous);

struct NormBackwardPlan {
  RowNormPlan rows;   // input and weight as prepare_row_norm gives them (rows.out: room for dx)
  Tensor grad;        // contiguous when asked, input's dtype and shape
  Tensor mean, rstd;  // contiguous when asked, one value a row (layer_norm only)
};

// The checks of prepare_row_norm for input, normalized_shape, weight (and bias); grad_out has the
// input's shape, dtype and device; mean and rstd (layer_norm: both defined) have one value per
// row, in the input's dtype, on its device.
NormBackwardPlan prepare_norm_backward(const char* op, const Tensor& grad_out, const Tensor& input,
                                       IntArrayRef normalized_shape, const Tensor& mean, const Tensor& rstd,
                                       const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                                       bool contiguous);

// The normalized trailing dims of an input of `ndim` dims, and the leading ones, for the
// backward formulas of layer_norm and rms_norm (the composites here and autograd's derivatives).
struct NormDims {
  std::vector<int64_t> normalized, leading;
};
inline NormDims norm_dims(int64_t ndim, size_t normalized_count) {
  NormDims d;
  const int64_t first = ndim - static_cast<int64_t>(normalized_count);
  for (int64_t i = 0; i < ndim; ++i) (i < first ? d.leading : d.normalized).push_back(i);
  return d;
}
// A weight's or bias's gradient: summed over the leading dims (none: a copy of t).
// No leading dim (a 1-d input): `t` itself, without a sum over no dims that would copy it.
inline Tensor sum_leading(const Tensor& t, const NormDims& d) { return d.leading.empty() ? t : t.sum(d.leading); }

// output_mask of native_layer_norm_backward (3 entries) and _rms_norm_backward (2): 0 or 1 each.
void check_output_mask(const char* op, IntArrayRef mask, size_t count);

}  // namespace anatomy
