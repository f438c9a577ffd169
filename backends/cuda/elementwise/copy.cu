// CUDA kernel of same-dtype copies between strided layouts, instantiated per element size; a
// source transposed against its destination goes through the element-wise tile kernel.
#include "anatomy/backends/cuda/common/launch_config.h"
#include "anatomy/backends/cuda/elementwise/elementwise.cuh"
#include "anatomy/backends/cuda/elementwise/launch.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"

namespace anatomy::cuda {
namespace {

template <typename Word>
__global__ void strided_copy_kernel(Word* __restrict__ dst, const Word* __restrict__ src, StridedLayout<2> layout,
                                    int64_t n) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t offset[2];
    layout.offsets(i, offset);
    dst[offset[0]] = src[offset[1]];
  }
}

struct Identity {
  template <typename T>
  __device__ T operator()(T x) const {
    return x;
  }
};

// A copy whose source is transposed against its destination (`t.t().contiguous()`) takes the
// element-wise tile kernel (Note [Transposed element-wise operands]) with the identity: true when
// it applied. The element-wise layout is innermost first and in bytes.
template <typename Word>
bool transposed_copy(void* dst, const void* src, const StridedLayout<2>& layout, int64_t n, cudaStream_t stream) {
  ElementwiseArgs<1> args;
  args.output = dst;
  args.inputs[0] = src;
  args.numel = n;
  args.contiguous = false;
  args.layout.ndim = layout.ndim;
  for (int d = 0; d < layout.ndim; ++d) {
    const int from = layout.ndim - 1 - d;
    args.layout.sizes[d] = layout.sizes[from];
    for (int k = 0; k < 2; ++k) {
      args.layout.byte_strides[k][d] = layout.strides[k][from] * static_cast<int64_t>(sizeof(Word));
    }
  }
  if (transposed_inputs<1, Word, Word>(args) == 0) return false;
  launch_elementwise<1, Word, Word>(args, Identity{}, stream);
  return true;
}

template <typename Word>
void strided_copy(void* dst, const void* src, const StridedLayout<2>& layout, int64_t n, cudaStream_t stream) {
  if (transposed_copy<Word>(dst, src, layout, n, stream)) return;
  strided_copy_kernel<Word>
      <<<grid_blocks(n), kBlockThreads, 0, stream>>>(static_cast<Word*>(dst), static_cast<const Word*>(src), layout, n);
  ANATOMY_CUDA_LAUNCH_CHECK();
}

}  // namespace

void launch_strided_copy(void* dst, const void* src, size_t element_size, const StridedLayout<2>& layout, int64_t numel,
                         cudaStream_t stream) {
  switch (element_size) {
    case 1:
      return strided_copy<uint8_t>(dst, src, layout, numel, stream);
    case 2:
      return strided_copy<uint16_t>(dst, src, layout, numel, stream);
    case 4:
      return strided_copy<uint32_t>(dst, src, layout, numel, stream);
    case 8:
      return strided_copy<uint64_t>(dst, src, layout, numel, stream);
  }
  detail::throw_cuda_error(cudaErrorInvalidValue, "launch_strided_copy: element size is not 1, 2, 4 or 8", __FILE__,
                           __LINE__);
}

}  // namespace anatomy::cuda
