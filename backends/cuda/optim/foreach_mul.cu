// The multi-tensor scale (_foreach_mul_ by a 0-dim tensor): up to 32 tensors and 320 chunks of
// 65536 elements per launch (multi_tensor.h), each element multiplied by the scale read on the
// device, in fp32 for fp16 and bf16 (opmath), as mul_ computes it.
#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/elementwise/elementwise_math.cuh"
#include "anatomy/backends/cuda/optim/launch.h"
#include "anatomy/backends/cuda/optim/multi_tensor.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"

namespace anatomy::cuda {
namespace {

constexpr int kTensors = 32;
constexpr int kBlocks = 320;
constexpr int64_t kChunk = 65536;
constexpr int kThreads = 512;

using ScaleTable = DataTable<kTensors, kBlocks>;
static_assert(sizeof(ScaleTable) + 64 < 4096, "a kernel's parameters are limited to 4 KB");

template <typename T>
__global__ void __launch_bounds__(kThreads) foreach_mul_kernel(ScaleTable table, const T* scale) {
  using A = opmath_t<T>;
  const int i = table.map.tensor_of_block[blockIdx.x];
  const int64_t begin = static_cast<int64_t>(table.map.chunk_of_block[blockIdx.x]) * kChunk;
  const int64_t end = min(begin + kChunk, table.numel[i]);
  T* x = static_cast<T*>(table.data[i]);
  const A s = static_cast<A>(*scale);
  for (int64_t e = begin + threadIdx.x; e < end; e += kThreads) x[e] = static_cast<T>(static_cast<A>(x[e]) * s);
}

template <typename T>
void launch_for(const std::vector<DenseTensor>& tensors, const T* scale, cudaStream_t stream) {
  ScaleTable table{};
  plan_data_launches(tensors, kChunk, table, [&](int blocks) {
    foreach_mul_kernel<T><<<blocks, kThreads, 0, stream>>>(table, scale);
    ANATOMY_CUDA_LAUNCH_CHECK();
  });
}

}  // namespace

void launch_foreach_mul(DType dtype, const std::vector<DenseTensor>& tensors, const void* scale, cudaStream_t stream) {
  const bool launched = dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_floating_v<T>) {
      launch_for<T>(tensors, static_cast<const T*>(scale), stream);
      return true;
    }
    return false;
  });
  if (!launched)
    detail::throw_cuda_error(cudaErrorInvalidValue, "launch_foreach_mul: not a floating dtype", __FILE__, __LINE__);
}

}  // namespace anatomy::cuda
