// The operand padding kernel (pad_operand.h): a copy of a 2-byte operand into a buffer with more
// rows or columns, the extra ones zero, in one pass over the buffer. A zero fill of the added
// entries and then a strided copy into a view of the rest took two launches, and the copy
// walked a misaligned source a element at a time with the general strided kernel.
#include <cstdint>

#include "anatomy/backends/cuda/blas/pad_operand.h"
#include "anatomy/backends/cuda/common/launch_config.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"

namespace anatomy::cuda {
namespace {

constexpr int kPack = 8;  // 2-byte elements per 16-byte store

struct alignas(16) Pack {
  uint16_t v[kPack];
};

__global__ void pad_operand_kernel(PadOperandArgs a) {
  const uint16_t* src = static_cast<const uint16_t*>(a.src);
  uint16_t* dst = static_cast<uint16_t*>(a.dst);
  const int64_t packs_per_row = a.cols / kPack;
  const int64_t packs = a.batch * a.rows * packs_per_row;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < packs; p += step) {
    const int64_t row_of_all = p / packs_per_row;
    const int64_t c0 = (p - row_of_all * packs_per_row) * kPack;
    const int64_t b = row_of_all / a.rows, r = row_of_all - b * a.rows;
    Pack out;
    const uint16_t* s = src + b * a.src_batch_stride + r * a.src_row_stride;
    const bool row_inside = r < a.src_rows;
#pragma unroll
    for (int j = 0; j < kPack; ++j) {
      const int64_t c = c0 + j;
      out.v[j] = row_inside && c < a.src_cols ? s[c * a.src_col_stride] : uint16_t{0};
    }
    *reinterpret_cast<Pack*>(dst + b * a.batch_stride + r * a.ld + c0) = out;
  }
}

}  // namespace

void launch_pad_operand(const PadOperandArgs& args, cudaStream_t stream) {
  const int64_t packs = args.batch * args.rows * (args.cols / kPack);
  if (packs == 0) return;
  pad_operand_kernel<<<grid_blocks(packs), kBlockThreads, 0, stream>>>(args);
  ANATOMY_CUDA_LAUNCH_CHECK();
}

}  // namespace anatomy::cuda
