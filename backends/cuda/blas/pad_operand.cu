// The operand padding kernel (launch.h): a copy of a 2-byte operand into a buffer with more
// rows or columns, the extra ones zero, in one pass over the buffer. A zero fill of the added
// entries and then a strided copy into a view of the rest took two launches, and the copy
// walked a misaligned source a element at a time with the general strided kernel. Each thread
// writes 16 bytes; where its 8 source elements are adjacent it reads them as aligned 16-byte
// words (two and a shift when the source is misaligned, as x[:, 1:] is), every other element of
// an aligned row as two words, else one by one.
#include <cstdint>

#include "anatomy/backends/cuda/blas/launch.h"
#include "anatomy/backends/cuda/common/launch_config.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"

namespace anatomy::cuda {
namespace {

constexpr int kPack = 8;  // 2-byte elements per 16-byte store

struct alignas(16) Pack {
  uint16_t v[kPack];
};

// lo and hi are adjacent aligned words; the 8 elements from element K of lo on.
template <int K>
__device__ __forceinline__ Pack shifted(const Pack& lo, const Pack& hi) {
  Pack out;
#pragma unroll
  for (int j = 0; j < kPack; ++j) out.v[j] = j + K < kPack ? lo.v[j + K] : hi.v[j + K - kPack];
  return out;
}

// Whether load_pack may read the 8 elements from p on, with `after` more elements of the row
// after them: an aligned p reads only those 8, a misaligned one the aligned words that hold them,
// which reach up to 7 elements past the 8 (so 7 must be the row's) and up to 7 before p (inside
// the 16-byte aligned chunk p is in: allocations start 16-byte aligned).
__device__ __forceinline__ bool pack_loadable(const uint16_t* p, int64_t after) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0 || after >= kPack - 1;
}

// The 8 elements from p on (pack_loadable): one aligned load, or two and a shift.
__device__ __forceinline__ Pack load_pack(const uint16_t* p) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(p);
  const Pack* word = reinterpret_cast<const Pack*>(address - address % 16);
  const Pack lo = word[0];
  switch ((address % 16) / 2) {
    case 0:
      return lo;
    case 1:
      return shifted<1>(lo, word[1]);
    case 2:
      return shifted<2>(lo, word[1]);
    case 3:
      return shifted<3>(lo, word[1]);
    case 4:
      return shifted<4>(lo, word[1]);
    case 5:
      return shifted<5>(lo, word[1]);
    case 6:
      return shifted<6>(lo, word[1]);
    default:
      return shifted<7>(lo, word[1]);
  }
}

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
    const uint16_t* s = src + b * a.src_batch_stride + r * a.src_row_stride;
    const bool row_inside = r < a.src_rows;
    Pack out;
    if (row_inside && a.src_col_stride == 1 && c0 + kPack <= a.src_cols &&
        pack_loadable(s + c0, a.src_cols - c0 - kPack)) {
      out = load_pack(s + c0);
    } else if (row_inside && a.src_col_stride == 2 && c0 + kPack < a.src_cols &&
               reinterpret_cast<uintptr_t>(s + 2 * c0) % 16 == 0) {
      // Every other element (x[:, ::2]): the two aligned words that hold the 8, whose last
      // element lies before the row's next one.
      const Pack* word = reinterpret_cast<const Pack*>(s + 2 * c0);
      const Pack lo = word[0], hi = word[1];
#pragma unroll
      for (int j = 0; j < kPack / 2; ++j) {
        out.v[j] = lo.v[2 * j];
        out.v[kPack / 2 + j] = hi.v[2 * j];
      }
    } else {
#pragma unroll
      for (int j = 0; j < kPack; ++j) {
        const int64_t c = c0 + j;
        out.v[j] = row_inside && c < a.src_cols ? s[c * a.src_col_stride] : uint16_t{0};
      }
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
