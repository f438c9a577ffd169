// CUDA kernels of flip, tril and triu: one grid-stride kernel each over the contiguous output,
// reading the input through a StridedLayout (any strides, negative ones for flipped dims),
// instantiated per element size. 64-bit indices throughout.
#include "anatomy/backends/cuda/common/launch_config.h"
#include "anatomy/backends/cuda/elementwise/launch.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"

namespace anatomy::cuda {
namespace {

template <typename Word>
__global__ void flip_kernel(const Word* in, Word* out, StridedLayout<1> layout, int64_t n) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t offset[1];
    layout.offsets(i, offset);
    out[i] = in[offset[0]];
  }
}

template <typename Word, bool Upper>
__global__ void triangle_kernel(const Word* in, Word* out, StridedLayout<1> layout, int64_t n, int64_t rows,
                                int64_t cols, int64_t diagonal) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const int64_t c = i % cols;
    const int64_t r = (i / cols) % rows;
    const bool keep = Upper ? (c - r >= diagonal) : (c - r <= diagonal);
    if (keep) {
      int64_t offset[1];
      layout.offsets(i, offset);
      out[i] = in[offset[0]];
    } else {
      out[i] = Word{0};
    }
  }
}

template <typename Word>
void flip_for(const void* in, void* out, const StridedLayout<1>& layout, int64_t n, cudaStream_t stream) {
  flip_kernel<Word>
      <<<grid_blocks(n), kBlockThreads, 0, stream>>>(static_cast<const Word*>(in), static_cast<Word*>(out), layout, n);
  ANATOMY_CUDA_LAUNCH_CHECK();
}

template <typename Word>
void triangle_for(bool upper, const void* in, void* out, const StridedLayout<1>& layout, int64_t n, int64_t rows,
                  int64_t cols, int64_t diagonal, cudaStream_t stream) {
  const Word* src = static_cast<const Word*>(in);
  Word* dst = static_cast<Word*>(out);
  if (upper) {
    triangle_kernel<Word, true>
        <<<grid_blocks(n), kBlockThreads, 0, stream>>>(src, dst, layout, n, rows, cols, diagonal);
  } else {
    triangle_kernel<Word, false>
        <<<grid_blocks(n), kBlockThreads, 0, stream>>>(src, dst, layout, n, rows, cols, diagonal);
  }
  ANATOMY_CUDA_LAUNCH_CHECK();
}

[[noreturn]] void bad_element_size(const char* launcher) {
  detail::throw_cuda_error(cudaErrorInvalidValue, launcher, __FILE__, __LINE__);
}

}  // namespace

void launch_flip(const void* in, void* out, size_t element_size, const StridedLayout<1>& layout, int64_t numel,
                 cudaStream_t stream) {
  switch (element_size) {
    case 1:
      return flip_for<uint8_t>(in, out, layout, numel, stream);
    case 2:
      return flip_for<uint16_t>(in, out, layout, numel, stream);
    case 4:
      return flip_for<uint32_t>(in, out, layout, numel, stream);
    case 8:
      return flip_for<uint64_t>(in, out, layout, numel, stream);
  }
  bad_element_size("launch_flip: element size is not 1, 2, 4 or 8");
}

void launch_triangle(bool upper, const void* in, void* out, size_t element_size, const StridedLayout<1>& layout,
                     int64_t numel, int64_t rows, int64_t cols, int64_t diagonal, cudaStream_t stream) {
  switch (element_size) {
    case 1:
      return triangle_for<uint8_t>(upper, in, out, layout, numel, rows, cols, diagonal, stream);
    case 2:
      return triangle_for<uint16_t>(upper, in, out, layout, numel, rows, cols, diagonal, stream);
    case 4:
      return triangle_for<uint32_t>(upper, in, out, layout, numel, rows, cols, diagonal, stream);
    case 8:
      return triangle_for<uint64_t>(upper, in, out, layout, numel, rows, cols, diagonal, stream);
  }
  bad_element_size("launch_triangle: element size is not 1, 2, 4 or 8");
}

}  // namespace anatomy::cuda
