// The front half of softmax, log_softmax, layer_norm and rms_norm shared by every backend: the
// argument checks, the result dtype and the allocated results. The loops (backends/cpu/
// softmax_cpu.cpp, norm_cpu.cpp) read a contiguous input as [P, N, M] (softmax over N) or as
// rows x cols (a normalization over each row of `cols` trailing elements).
#pragma once

#include <optional>

#include "anatomy/core/tensor.h"

namespace anatomy {

struct SoftmaxPlan {
  Tensor input;                            // contiguous, of the computation dtype (floating)
  Tensor out;                              // contiguous, same shape and dtype
  int64_t outer = 1, size = 1, inner = 1;  // P, N, M
};

// `dtype` casts the input first; a non-floating computation raises TypeError.
SoftmaxPlan prepare_softmax(const char* op, const Tensor& self, int64_t dim, std::optional<DType> dtype);

struct RowNormPlan {
  Tensor input;         // contiguous, or (in_place) rows row_stride apart of values col_stride apart
  Tensor weight, bias;  // contiguous, of the input's dtype; undefined when absent
  Tensor out;           // contiguous, like input
  int64_t rows = 0, cols = 1;
  int64_t row_stride = 1;  // elements from one row of `input` to the next (cols when contiguous)
  int64_t col_stride = 1;  // elements from one normalized value of a row to the next (1 when contiguous)
  DimVector stat_shape;    // the leading dims followed by ones (layer_norm's mean and rstd)
};

// normalized_shape must be non-empty and equal the input's trailing dims; weight and bias, when
// given, have exactly that shape. With `in_place`, an input whose normalized elements lie a
// constant stride apart within each row and whose rows lie a constant stride apart (x[:, 1:], a
// slice of rows, an expanded row, every other column, a transposed matrix) stays as it is, for
// kernels that read it where it lies; any other layout is copied into a contiguous tensor.
RowNormPlan prepare_row_norm(const char* op, const Tensor& input, IntArrayRef normalized_shape,
                             const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                             bool in_place = false);

// Makes the plan's input contiguous (a copy, unless it is already), for a backend that cannot read
// the plan's strides.
void make_rows_contiguous(RowNormPlan& plan);

}  // namespace anatomy
