// The remainder of a product split around K's misaligned head and odd tail (Note [Splitting K
// around a misaligned head], blas_cuda.cpp): at most 14 terms an element of c, summed in fp32,
// scaled and added to beta times c, rounded once.
#include <algorithm>
#include <cstdint>

#include "anatomy/backends/cuda/blas/launch.h"
#include "anatomy/backends/cuda/common/hardware_convert.cuh"
#include "anatomy/backends/cuda/elementwise/elementwise.cuh"
#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/backends/cuda/runtime/device_limits.h"

namespace anatomy::cuda {
namespace {

constexpr int kMaxRemainderRowsPerBlock = 32;
constexpr int kThreads = 256;
constexpr int kMaxTerms = 14;     // head and tail, each at most 7 columns
constexpr int kRowsInFlight = 4;  // rows of c whose loads a thread issues together

// Note [The remainder's rows share b's terms]
//   Each element of c needs the same few rows of b as every other element of its column, so a
//   block reading them once per row of c would move many times c's bytes from L2. A block takes a
//   column slice of c over `rows_per_block` rows: each thread loads its
//   vector of each term's b row once into registers, the block stages its rows' a values in
//   shared memory, and the thread walks its rows kRowsInFlight at a time (their c loads issued
//   together). Rows a block: rows_per_block below (the measured choice: docs/perf.md, "The split
//   product's remainder over shared rows"). The sums keep the one-row order: terms in order from
//   zero, then beta * c + alpha * sum in fp32, one rounding.
template <typename T, int Vec, int Terms>
__global__ void __launch_bounds__(kThreads) k_remainder_kernel(KRemainderArgs args, int rows_per_block) {
  __shared__ float a_terms[kMaxRemainderRowsPerBlock][kMaxTerms];
  const int head = static_cast<int>(args.head), terms = head + static_cast<int>(args.k - args.tail);
  const auto term_column = [&](int q) -> int64_t { return q < head ? q : args.tail + (q - head); };
  const int64_t words = args.cols / Vec, w = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const bool active = w < words;
  const int64_t j = w * Vec;
  T* c0 = static_cast<T*>(args.c);
  const T* a = static_cast<const T*>(args.a);
  const T* b = static_cast<const T*>(args.b);
  // This thread's values of b's term rows.
  AlignedVector<T, Vec> bt[Terms];
#pragma unroll
  for (int q = 0; q < Terms; ++q) {
    if (!active || q >= terms) continue;
    const T* bp = b + term_column(q) * args.b_row_stride;
    if constexpr (Vec > 1) bt[q] = *reinterpret_cast<const AlignedVector<T, Vec>*>(bp + j);
    else bt[q].v[0] = bp[j * args.b_col_stride];
  }
  const int64_t chunks = (args.rows + rows_per_block - 1) / rows_per_block;
  for (int64_t chunk = blockIdx.y; chunk < chunks; chunk += gridDim.y) {
    const int64_t row0 = chunk * rows_per_block;
    const int rows_here = static_cast<int>(args.rows - row0 < rows_per_block ? args.rows - row0 : rows_per_block);
    __syncthreads();  // the last chunk's a values are read
    for (int x = static_cast<int>(threadIdx.x); x < rows_here * terms; x += kThreads) {
      const int r = x / terms, q = x % terms;
      a_terms[r][q] = to_compute<float>(a[(row0 + r) * args.a_row_stride + term_column(q) * args.a_col_stride]);
    }
    __syncthreads();
    if (!active) continue;
    for (int r0 = 0; r0 < rows_here; r0 += kRowsInFlight) {
      AlignedVector<T, Vec> cw[kRowsInFlight];
#pragma unroll
      for (int u = 0; u < kRowsInFlight; ++u) {
        // beta == 0 leaves c unread: what it held (a NaN too) does not reach the output.
        if (args.read_c && r0 + u < rows_here) {
          cw[u] = *reinterpret_cast<AlignedVector<T, Vec>*>(c0 + (row0 + r0 + u) * args.ldc + j);
        }
      }
#pragma unroll
      for (int u = 0; u < kRowsInFlight; ++u) {
        if (r0 + u >= rows_here) break;
        float acc[Vec] = {};
#pragma unroll
        for (int q = 0; q < Terms; ++q) {
          if (q >= terms) break;
          const float ap = a_terms[r0 + u][q];
#pragma unroll
          for (int e = 0; e < Vec; ++e) acc[e] += ap * to_compute<float>(bt[q].v[e]);
        }
#pragma unroll
        for (int e = 0; e < Vec; ++e) {
          const float scaled = args.alpha * acc[e];
          cw[u].v[e] = from_compute<T>(args.read_c ? args.beta * to_compute<float>(cw[u].v[e]) + scaled : scaled);
        }
        *reinterpret_cast<AlignedVector<T, Vec>*>(c0 + (row0 + r0 + u) * args.ldc + j) = cw[u];
      }
    }
  }
}

// Rows a block takes: enough that b's terms are read from L2 a few times over rather than once
// per row, few enough that the grid fills the GPU.
int rows_per_block(int64_t rows, int64_t slices) {
  const int64_t blocks_wanted = 4 * int64_t{current_device_limits().multiprocessors};
  const int64_t by_fill = rows * slices / std::max<int64_t>(blocks_wanted, 1);
  return static_cast<int>(std::clamp<int64_t>(by_fill, 2 * kRowsInFlight, kMaxRemainderRowsPerBlock));
}

template <typename T>
void launch_for(const KRemainderArgs& args, cudaStream_t stream) {
  constexpr int kVec = 16 / static_cast<int>(sizeof(T));
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  const bool vec = args.cols % kVec == 0 && args.ldc % kVec == 0 && args.b_row_stride % kVec == 0 &&
                   args.b_col_stride == 1 && aligned(args.c) && aligned(args.b);
  const int64_t words = vec ? args.cols / kVec : args.cols;
  const int64_t slices = (words + kThreads - 1) / kThreads;
  const int rows = rows_per_block(args.rows, slices);
  const dim3 grid(static_cast<unsigned>(slices),
                  static_cast<unsigned>(std::min<int64_t>((args.rows + rows - 1) / rows, 65535)));
  const int terms = static_cast<int>(args.head + (args.k - args.tail));
  auto go = [&]<int Vec>() {
    if (terms <= kMaxTerms / 2) k_remainder_kernel<T, Vec, kMaxTerms / 2><<<grid, kThreads, 0, stream>>>(args, rows);
    else k_remainder_kernel<T, Vec, kMaxTerms><<<grid, kThreads, 0, stream>>>(args, rows);
  };
  if (vec) go.template operator()<kVec>();
  else go.template operator()<1>();
  ANATOMY_CUDA_LAUNCH_CHECK();
}

}  // namespace

void launch_k_remainder(const KRemainderArgs& args, cudaStream_t stream) {
  if (args.rows == 0 || args.cols == 0) return;
  if (args.bfloat16) launch_for<BFloat16>(args, stream);
  else launch_for<Half>(args, stream);
}

}  // namespace anatomy::cuda
