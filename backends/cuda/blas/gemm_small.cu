// The small floating-point matrix product (Note [Small products skip cuBLAS], launch.h):
// 16x16 output tiles, a and b staged through shared memory a 16-wide slice of k at a time, one
// output element per thread, the sum in the accumulation type in k order.
#include "anatomy/backends/cuda/blas/launch.h"
#include "anatomy/backends/cuda/elementwise/elementwise_math.cuh"
#include "anatomy/backends/cuda/runtime/cuda_check.h"

namespace anatomy::cuda {
namespace {

constexpr int kTile = 16;

template <typename T>
__global__ void gemm_small_kernel(SmallGemmArgs p) {
  using M = opmath_t<T>;
  __shared__ M as[kTile][kTile];
  __shared__ M bs[kTile][kTile + 1];
  const int64_t batch = blockIdx.z;
  const int64_t row = static_cast<int64_t>(blockIdx.y) * kTile + threadIdx.y;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kTile + threadIdx.x;
  const T* a = static_cast<const T*>(p.a) + batch * p.as0;
  const T* b = static_cast<const T*>(p.b) + batch * p.bs0;
  M acc = 0;
  for (int64_t k0 = 0; k0 < p.k; k0 += kTile) {
    const int64_t ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
    as[threadIdx.y][threadIdx.x] = row < p.n && ka < p.k ? static_cast<M>(a[row * p.as1 + ka * p.as2]) : M(0);
    bs[threadIdx.y][threadIdx.x] = kb < p.k && col < p.m ? static_cast<M>(b[kb * p.bs1 + col * p.bs2]) : M(0);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTile; ++kk) acc += as[threadIdx.y][kk] * bs[kk][threadIdx.x];
    __syncthreads();
  }
  if (row >= p.n || col >= p.m) return;
  M v = static_cast<M>(p.alpha) * acc;
  if (p.beta != 0.0) {  // beta == 0 ignores the bias, NaN included, as BLAS does
    const T* bias = static_cast<const T*>(p.bias);
    v += static_cast<M>(p.beta) * static_cast<M>(bias[batch * p.cs0 + row * p.cs1 + col * p.cs2]);
  }
  static_cast<T*>(p.c)[(batch * p.n + row) * p.m + col] = static_cast<T>(v);
}

template <typename T>
void launch(const SmallGemmArgs& args, cudaStream_t stream) {
  const dim3 block(kTile, kTile);
  // Batches beyond gridDim.z's limit go in chunks, each a launch over shifted pointers.
  constexpr int64_t kMaxZ = 65535;
  for (int64_t b0 = 0; b0 < args.batches; b0 += kMaxZ) {
    SmallGemmArgs chunk = args;
    chunk.batches = b0 + kMaxZ < args.batches ? kMaxZ : args.batches - b0;
    chunk.a = static_cast<const T*>(args.a) + b0 * args.as0;
    chunk.b = static_cast<const T*>(args.b) + b0 * args.bs0;
    if (args.bias != nullptr) chunk.bias = static_cast<const T*>(args.bias) + b0 * args.cs0;
    chunk.c = static_cast<T*>(args.c) + b0 * args.n * args.m;
    const dim3 grid(static_cast<unsigned>((args.m + kTile - 1) / kTile),
                    static_cast<unsigned>((args.n + kTile - 1) / kTile), static_cast<unsigned>(chunk.batches));
    gemm_small_kernel<T><<<grid, block, 0, stream>>>(chunk);
    ANATOMY_CUDA_LAUNCH_CHECK();
  }
}

}  // namespace

bool launch_gemm_small(DType dtype, const SmallGemmArgs& args, cudaStream_t stream) {
  switch (dtype) {
    case DType::Float32:
      launch<float>(args, stream);
      return true;
    case DType::Float64:
      launch<double>(args, stream);
      return true;
    case DType::Float16:
      launch<Half>(args, stream);
      return true;
    case DType::BFloat16:
      launch<BFloat16>(args, stream);
      return true;
    default:
      return false;
  }
}

}  // namespace anatomy::cuda
