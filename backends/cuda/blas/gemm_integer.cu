// The integer matrix product on CUDA: 16x16 output tiles, a and b staged through shared memory a
// 16-wide slice of k at a time, one output element per thread. Exact and deterministic (integer
// sums in a fixed order); arithmetic in the unsigned type of the accumulator's width, so that
// overflow wraps as on the CPU instead of being undefined.
#include <type_traits>

#include "anatomy/backends/cuda/blas/launch.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"

namespace anatomy::cuda {
namespace {

constexpr int kTile = 16;

template <typename In, typename Out>
__global__ void gemm_integer_kernel(IntegerGemmArgs p) {
  using U = std::make_unsigned_t<Out>;
  __shared__ U as[kTile][kTile];
  __shared__ U bs[kTile][kTile + 1];
  const int64_t batch = blockIdx.z;
  const int64_t row = static_cast<int64_t>(blockIdx.y) * kTile + threadIdx.y;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kTile + threadIdx.x;
  const In* a = static_cast<const In*>(p.a) + batch * p.as0;
  const In* b = static_cast<const In*>(p.b) + batch * p.bs0;
  U acc = 0;
  for (int64_t k0 = 0; k0 < p.k; k0 += kTile) {
    const int64_t ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
    as[threadIdx.y][threadIdx.x] =
        row < p.n && ka < p.k ? static_cast<U>(static_cast<Out>(a[row * p.as1 + ka * p.as2])) : U(0);
    bs[threadIdx.y][threadIdx.x] =
        kb < p.k && col < p.m ? static_cast<U>(static_cast<Out>(b[kb * p.bs1 + col * p.bs2])) : U(0);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTile; ++kk) acc += as[threadIdx.y][kk] * bs[kk][threadIdx.x];
    __syncthreads();
  }
  if (row >= p.n || col >= p.m) return;
  Out* c = static_cast<Out*>(p.c) + (batch * p.n + row) * p.m + col;
  U v = static_cast<U>(p.alpha) * acc;
  if (p.beta != 0) v += static_cast<U>(p.beta) * static_cast<U>(*c);
  *c = static_cast<Out>(v);
}

template <typename In, typename Out>
void launch(const IntegerGemmArgs& args, cudaStream_t stream) {
  const dim3 block(kTile, kTile);
  // Batches beyond gridDim.z's limit go in chunks, each a launch over a shifted view.
  constexpr int64_t kMaxZ = 65535;
  for (int64_t b0 = 0; b0 < args.batches; b0 += kMaxZ) {
    IntegerGemmArgs chunk = args;
    chunk.batches = b0 + kMaxZ < args.batches ? kMaxZ : args.batches - b0;
    chunk.a = static_cast<const In*>(args.a) + b0 * args.as0;
    chunk.b = static_cast<const In*>(args.b) + b0 * args.bs0;
    chunk.c = static_cast<Out*>(args.c) + b0 * args.n * args.m;
    const dim3 grid(static_cast<unsigned>((args.m + kTile - 1) / kTile),
                    static_cast<unsigned>((args.n + kTile - 1) / kTile), static_cast<unsigned>(chunk.batches));
    gemm_integer_kernel<In, Out><<<grid, block, 0, stream>>>(chunk);
    ANATOMY_CUDA_LAUNCH_CHECK();
  }
}

}  // namespace

bool launch_gemm_integer(DType input, const IntegerGemmArgs& args, cudaStream_t stream) {
  switch (input) {
    case DType::UInt8:
      launch<uint8_t, uint8_t>(args, stream);
      return true;
    case DType::Int8:
      launch<int8_t, int32_t>(args, stream);
      return true;
    case DType::Int32:
      launch<int32_t, int32_t>(args, stream);
      return true;
    case DType::Int64:
      launch<int64_t, int64_t>(args, stream);
      return true;
    default:
      return false;
  }
}

}  // namespace anatomy::cuda
