// CUDA kernel of masked_fill_: one grid-stride kernel over self's elements (any strides, the
// mask broadcast by zero strides), instantiated per element size. Each element is written by at
// most one thread, so there are no races; what to write was decided on the host.
#include <cstring>

#include "anatomy/backends/cuda/common/launch_config.h"
#include "anatomy/backends/cuda/common/strided_offsets.cuh"
#include "anatomy/backends/cuda/elementwise/launch.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"

namespace anatomy::cuda {
namespace {

template <typename Word>
__global__ void masked_fill_kernel(Word* data, const uint8_t* mask, StridedLayout<2> layout, int64_t n, Word value) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t o[2];
    strided_offsets(layout, i, o);
    if (mask[o[1]] != 0) data[o[0]] = value;
  }
}

template <typename Word>
void masked_fill(void* data, const uint8_t* mask, const StridedLayout<2>& layout, int64_t n, uint64_t bits,
                 cudaStream_t stream) {
  Word value;
  std::memcpy(&value, &bits, sizeof(Word));
  masked_fill_kernel<Word>
      <<<grid_blocks(n), kBlockThreads, 0, stream>>>(static_cast<Word*>(data), mask, layout, n, value);
  ANATOMY_CUDA_LAUNCH_CHECK();
}

}  // namespace

void launch_masked_fill(void* data, size_t element_size, const uint8_t* mask, const StridedLayout<2>& layout,
                        int64_t numel, uint64_t value_bits, cudaStream_t stream) {
  switch (element_size) {
    case 1:
      return masked_fill<uint8_t>(data, mask, layout, numel, value_bits, stream);
    case 2:
      return masked_fill<uint16_t>(data, mask, layout, numel, value_bits, stream);
    case 4:
      return masked_fill<uint32_t>(data, mask, layout, numel, value_bits, stream);
    case 8:
      return masked_fill<uint64_t>(data, mask, layout, numel, value_bits, stream);
  }
  detail::throw_cuda_error(cudaErrorInvalidValue, "launch_masked_fill: element size is not 1, 2, 4 or 8", __FILE__,
                           __LINE__);
}

}  // namespace anatomy::cuda
