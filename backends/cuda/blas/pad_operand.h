// The launcher of the operand padding kernel (pad_operand.cu), called by blas_cuda.cpp for an
// fp16 or bf16 product whose K it rounds up (Note [Padding K for the tensor cores]).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace anatomy::cuda {

struct PadOperandArgs {
  // dst: [batch, rows, cols] of 2-byte elements, rows ld apart, batches batch_stride apart; cols
  // and ld multiples of 8 elements and dst 16-byte aligned, so every row starts on 16 bytes.
  void* dst;
  int64_t batch, rows, cols, ld, batch_stride;
  // src: [batch, src_rows, src_cols] with any element strides, src_rows <= rows and
  // src_cols <= cols; dst's elements outside it are written zero.
  const void* src;
  int64_t src_rows, src_cols;
  int64_t src_batch_stride, src_row_stride, src_col_stride;
};

// Writes every element of dst once (one pass, 16 bytes a thread); nothing waits.
void launch_pad_operand(const PadOperandArgs& args, cudaStream_t stream);

}  // namespace anatomy::cuda
