// CUDA kernels of fill_: a dense one (the elements form one block of memory) and a strided one,
// each instantiated per element size. Which bytes to write was decided on the host.
#include <cstring>

#include "anatomy/backends/cuda/common/launch_config.h"
#include "anatomy/backends/cuda/elementwise/launch.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"

namespace anatomy::cuda {
namespace {

template <typename Word>
__global__ void fill_dense_kernel(Word* data, int64_t n, Word value) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) data[i] = value;
}

template <typename Word>
__global__ void fill_strided_kernel(Word* data, StridedLayout<1> layout, int64_t n, Word value) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t offset[1];
    layout.offsets(i, offset);
    data[offset[0]] = value;
  }
}

template <typename Word>
Word word_of(uint64_t bits) {
  Word w;
  std::memcpy(&w, &bits, sizeof(Word));
  return w;
}

template <typename Word>
void fill_dense(void* data, int64_t n, uint64_t bits, cudaStream_t stream) {
  fill_dense_kernel<Word>
      <<<grid_blocks(n), kBlockThreads, 0, stream>>>(static_cast<Word*>(data), n, word_of<Word>(bits));
  ANATOMY_CUDA_LAUNCH_CHECK();
}

template <typename Word>
void fill_strided(void* data, const StridedLayout<1>& layout, int64_t n, uint64_t bits, cudaStream_t stream) {
  fill_strided_kernel<Word>
      <<<grid_blocks(n), kBlockThreads, 0, stream>>>(static_cast<Word*>(data), layout, n, word_of<Word>(bits));
  ANATOMY_CUDA_LAUNCH_CHECK();
}

}  // namespace

void launch_fill_dense(void* data, size_t element_size, int64_t numel, uint64_t value_bits, cudaStream_t stream) {
  switch (element_size) {
    case 1:
      return fill_dense<uint8_t>(data, numel, value_bits, stream);
    case 2:
      return fill_dense<uint16_t>(data, numel, value_bits, stream);
    case 4:
      return fill_dense<uint32_t>(data, numel, value_bits, stream);
    case 8:
      return fill_dense<uint64_t>(data, numel, value_bits, stream);
  }
  detail::throw_cuda_error(cudaErrorInvalidValue, "launch_fill_dense: element size is not 1, 2, 4 or 8", __FILE__,
                           __LINE__);
}

void launch_fill_strided(void* data, size_t element_size, const StridedLayout<1>& layout, int64_t numel,
                         uint64_t value_bits, cudaStream_t stream) {
  switch (element_size) {
    case 1:
      return fill_strided<uint8_t>(data, layout, numel, value_bits, stream);
    case 2:
      return fill_strided<uint16_t>(data, layout, numel, value_bits, stream);
    case 4:
      return fill_strided<uint32_t>(data, layout, numel, value_bits, stream);
    case 8:
      return fill_strided<uint64_t>(data, layout, numel, value_bits, stream);
  }
  detail::throw_cuda_error(cudaErrorInvalidValue, "launch_fill_strided: element size is not 1, 2, 4 or 8", __FILE__,
                           __LINE__);
}

}  // namespace anatomy::cuda
