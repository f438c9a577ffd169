// The remainder of a product split around K's misaligned head and odd tail (Note [Splitting K
// around a misaligned head], blas_cuda.cpp): at most 14 terms an element of c, added in fp32 to
// what cuBLAS wrote and rounded once.
#include <algorithm>
#include <cstdint>

#include "anatomy/backends/cuda/blas/k_remainder.h"
#include "anatomy/backends/cuda/common/hardware_convert.cuh"
#include "anatomy/backends/cuda/elementwise/elementwise.cuh"
#include "anatomy/backends/cuda/runtime/cuda_check.h"

namespace anatomy::cuda {
namespace {

constexpr int kThreads = 256;

// One row of c per blockIdx.x; Vec adjacent values of it a thread (Vec > 1: c's rows and b's rows
// 16-byte aligned, b's values adjacent, cols a multiple of Vec). Each term's loads in turn: issuing
// c's and up to 8 terms' loads before the sums measured slower (docs/perf.md, "LayerNorm's views
// without their extra traffic").
template <typename T, int Vec>
__global__ void __launch_bounds__(kThreads) k_remainder_kernel(KRemainderArgs args) {
  const int64_t i = blockIdx.x;
  T* c = static_cast<T*>(args.c) + i * args.ldc;
  const T* a = static_cast<const T*>(args.a) + i * args.a_row_stride;
  const T* b = static_cast<const T*>(args.b);
  const int64_t words = args.cols / Vec;
  for (int64_t w = static_cast<int64_t>(blockIdx.y) * kThreads + threadIdx.x; w < words;
       w += static_cast<int64_t>(gridDim.y) * kThreads) {
    const int64_t j = w * Vec;
    float acc[Vec] = {};
    const auto add_term = [&](int64_t p) {
      const float ap = to_compute<float>(a[p * args.a_col_stride]);
      const T* bp = b + p * args.b_row_stride;
      if constexpr (Vec > 1) {
        const AlignedVector<T, Vec> bw = *reinterpret_cast<const AlignedVector<T, Vec>*>(bp + j);
#pragma unroll
        for (int e = 0; e < Vec; ++e) acc[e] += ap * to_compute<float>(bw.v[e]);
      } else {
        acc[0] += ap * to_compute<float>(bp[j * args.b_col_stride]);
      }
    };
    for (int64_t p = 0; p < args.head; ++p) add_term(p);
    for (int64_t p = args.tail; p < args.k; ++p) add_term(p);
    if constexpr (Vec > 1) {
      AlignedVector<T, Vec> cw = *reinterpret_cast<AlignedVector<T, Vec>*>(c + j);
#pragma unroll
      for (int e = 0; e < Vec; ++e) cw.v[e] = from_compute<T>(to_compute<float>(cw.v[e]) + args.alpha * acc[e]);
      *reinterpret_cast<AlignedVector<T, Vec>*>(c + j) = cw;
    } else {
      c[j] = from_compute<T>(to_compute<float>(c[j]) + args.alpha * acc[0]);
    }
  }
}

template <typename T>
void launch_for(const KRemainderArgs& args, cudaStream_t stream) {
  constexpr int kVec = 16 / static_cast<int>(sizeof(T));
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  const bool vec = args.cols % kVec == 0 && args.ldc % kVec == 0 && args.b_row_stride % kVec == 0 &&
                   args.b_col_stride == 1 && aligned(args.c) && aligned(args.b);
  const int64_t words = vec ? args.cols / kVec : args.cols;
  const dim3 grid(static_cast<unsigned>(args.rows),
                  static_cast<unsigned>(std::clamp<int64_t>((words + kThreads - 1) / kThreads, 1, 65535)));
  if (vec) k_remainder_kernel<T, kVec><<<grid, kThreads, 0, stream>>>(args);
  else k_remainder_kernel<T, 1><<<grid, kThreads, 0, stream>>>(args);
  ANATOMY_CUDA_LAUNCH_CHECK();
}

}  // namespace

void launch_k_remainder(const KRemainderArgs& args, cudaStream_t stream) {
  if (args.rows == 0 || args.cols == 0) return;
  if (args.bfloat16) launch_for<BFloat16>(args, stream);
  else launch_for<Half>(args, stream);
}

}  // namespace anatomy::cuda
