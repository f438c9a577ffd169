// The norm room's launchers: layer_norm and rms_norm forward and backward, and softmax's
// backward (declared here, defined in the .cu files, called by the *_cuda.cpp files).
#pragma once

#include <cuda_runtime_api.h>
#include <cstdint>

#include "anatomy/core/dtype.h"

// ---- norm --------------------------------------------------------------------------------------
// Launchers of the CUDA layer_norm and rms_norm kernels (norm.cu, norm_tile.cu, norm_cluster.cu,
// norm_transpose.cu), called by norm_cuda.cpp with the plan's rows x cols input: rows a stride
// apart, their values a stride apart (dispatch/ops/norm_plan.h).

namespace anatomy::cuda {

enum class RowNormKind : int8_t { Layer, Rms };

// Every pointer is to `dtype` elements: input and out of rows x cols (the input's rows
// input_row_stride apart and its values input_col_stride apart, the output's contiguous), weight
// and bias of cols (null when absent; rms_norm has no bias), mean and rstd of rows (layer_norm
// only).
struct RowNormBuffers {
  const void* input = nullptr;
  int64_t input_row_stride = 0;
  int64_t input_col_stride = 1;
  void* out = nullptr;
  const void* weight = nullptr;
  const void* bias = nullptr;
  void* mean = nullptr;
  void* rstd = nullptr;
};

// A warp or a block per row (norm.cu). Floating dtypes; fp16 and bf16 compute in fp32, fp32 in
// fp32, fp64 in fp64. rows and cols > 0.
void launch_row_norm(RowNormKind kind, DType dtype, const RowNormBuffers& b, int64_t rows, int64_t cols, double eps,
                     cudaStream_t stream);

// Tiles of tile_rows adjacent rows in shared memory (norm_tile.cu, Note [Tiles of adjacent rows]),
// for inputs whose rows lie closer together than their values (a transposed matrix).
// row_norm_tile_rows gives the tile for rows of `cols` values on the current device: 0 when not
// even two rows fit in shared memory.
int row_norm_tile_rows(DType dtype, int64_t cols);
void launch_row_norm_tiles(RowNormKind kind, DType dtype, const RowNormBuffers& b, int64_t rows, int64_t cols,
                           int tile_rows, double eps, cudaStream_t stream);

// The same for a transposed input (rows 1 element apart, 16-byte aligned, values a multiple of 16
// bytes apart) by clusters of blocks that share a tile (norm_cluster.cu, Note [Clusters over a
// tile of rows]). Launches and returns true where the dtype (fp32, fp64), the device, the build
// and the layout allow; false (nothing launched) otherwise.
bool launch_row_norm_clusters(RowNormKind kind, DType dtype, const RowNormBuffers& b, int64_t rows, int64_t cols,
                              double eps, cudaStream_t stream);

// The same for a transposed fp16 or bf16 input within a quarter of L2 by statistics, then a transposing
// write (norm_transpose.cu, Note [Statistics, then a transposing write]). row_norm_transpose_scratch
// gives the bytes of device scratch the launch needs, 0 where the path does not apply (the dtype,
// the layout's alignment, the size); launch_row_norm_transpose then takes that scratch, 16-byte
// aligned, ordered on `stream`.
int64_t row_norm_transpose_scratch(DType dtype, const RowNormBuffers& b, int64_t rows, int64_t cols);
void launch_row_norm_transpose(RowNormKind kind, DType dtype, const RowNormBuffers& b, int64_t rows, int64_t cols,
                               double eps, void* scratch, cudaStream_t stream);

}  // namespace anatomy::cuda

// ---- norm_backward -----------------------------------------------------------------------------
// Launchers of the fused CUDA backward kernels of softmax, log_softmax (softmax_backward.cu),
// layer_norm and rms_norm (norm_backward.cu), called by norm_backward_cuda.cpp with contiguous
// operands (dispatch/ops/norm_backward_plan.h).

namespace anatomy::cuda {

// dx = y * (g - sum(g * y)) (softmax) or g - exp(y) * sum(g) (log), along N of [P, N, M]; g, y
// and dx of `dtype` (floating; fp16/bf16 compute in fp32). P * N * M > 0.
void launch_softmax_backward(bool log, DType dtype, const void* grad, const void* output, void* grad_input, int64_t P,
                             int64_t N, int64_t M, cudaStream_t stream);

enum class NormBackwardKind : int8_t { Layer, Rms };

// Every pointer but the partials is to `dtype` elements: grad and input of rows x cols, weight of
// cols (null: none), mean and rstd of rows (layer_norm; rms_norm recomputes rstd with eps),
// grad_input of rows x cols (null: not wanted), grad_weight and grad_bias of cols (null: not
// wanted; rms_norm has no bias). partials: scratch of norm_backward_partials(...) elements of
// the computation dtype (fp32; fp64 for fp64), unused when neither parameter gradient is wanted.
struct NormBackwardBuffers {
  const void* grad = nullptr;
  const void* input = nullptr;
  const void* weight = nullptr;
  const void* mean = nullptr;
  const void* rstd = nullptr;
  void* grad_input = nullptr;
  void* grad_weight = nullptr;
  void* grad_bias = nullptr;
  void* partials = nullptr;
};

// The scratch elements the launch needs for the parameter gradients (0 when none is wanted):
// two rows of `cols` partial column sums per block of the first kernel.
int64_t norm_backward_partials(DType dtype, int64_t rows, int64_t cols, bool params);

// Floating dtypes; rows and cols > 0.
void launch_norm_backward(NormBackwardKind kind, DType dtype, const NormBackwardBuffers& b, int64_t rows, int64_t cols,
                          double eps, cudaStream_t stream);

}  // namespace anatomy::cuda
