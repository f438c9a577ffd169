// The gather kernels of the reading indexing ops (launch.h): a strided one over three operands
// (out, src, offsets table) for every layout, and a rows one for contiguous rows (embedding,
// index_select of a contiguous tensor) that copies whole words of up to 16 bytes. They only move
// bits, so they are instantiated per element (or word) size; a bad table entry writes zeros.
#include "anatomy/backends/cuda/common/launch_config.h"
#include "anatomy/backends/cuda/index/launch.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"

namespace anatomy::cuda {
namespace {

template <typename Word>
__global__ void index_gather_kernel(Word* out, const Word* src, const int64_t* table, StridedLayout<3> layout,
                                    int64_t n) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t o[3];
    layout.offsets(i, o);
    const int64_t off = table[o[2]];
    out[o[0]] = off == kBadOffset ? Word{} : src[o[1] + off];
  }
}

// Offsets in words: the host checked that every byte offset is a multiple of the word size.
template <typename Word>
__global__ void index_gather_rows_kernel(Word* out, const unsigned char* src, const int64_t* table,
                                         int64_t element_size, int64_t outer, int64_t rows, int64_t row_words,
                                         int64_t src_outer_stride, int64_t n) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const int64_t w = i % row_words, t = i / row_words;
    const int64_t r = t % rows, a = t / rows;
    const int64_t off = table[r];
    if (off == kBadOffset) {
      out[i] = Word{};
    } else {
      const Word* row = reinterpret_cast<const Word*>(src + (a * src_outer_stride + off) * element_size);
      out[i] = row[w];
    }
  }
}

template <typename Word>
void gather(void* out, const void* src, const int64_t* table, const StridedLayout<3>& layout, int64_t n,
            cudaStream_t stream) {
  index_gather_kernel<Word><<<grid_blocks(n), kBlockThreads, 0, stream>>>(
      static_cast<Word*>(out), static_cast<const Word*>(src), table, layout, n);
  ANATOMY_CUDA_LAUNCH_CHECK();
}

template <typename Word>
void gather_rows(void* out, const void* src, const int64_t* table, size_t element_size, int64_t outer, int64_t rows,
                 int64_t row_elems, int64_t src_outer_stride, cudaStream_t stream) {
  const int64_t row_words = row_elems * static_cast<int64_t>(element_size) / static_cast<int64_t>(sizeof(Word));
  const int64_t n = outer * rows * row_words;
  index_gather_rows_kernel<Word><<<grid_blocks(n), kBlockThreads, 0, stream>>>(
      static_cast<Word*>(out), static_cast<const unsigned char*>(src), table, static_cast<int64_t>(element_size), outer,
      rows, row_words, src_outer_stride, n);
  ANATOMY_CUDA_LAUNCH_CHECK();
}

struct alignas(16) Word16 {
  uint4 v;
};

}  // namespace

void launch_index_gather(void* out, const void* src, const int64_t* table, size_t element_size,
                         const StridedLayout<3>& layout, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  switch (element_size) {
    case 1:
      return gather<uint8_t>(out, src, table, layout, n, stream);
    case 2:
      return gather<uint16_t>(out, src, table, layout, n, stream);
    case 4:
      return gather<uint32_t>(out, src, table, layout, n, stream);
    case 8:
      return gather<uint64_t>(out, src, table, layout, n, stream);
  }
  detail::throw_cuda_error(cudaErrorInvalidValue, "launch_index_gather: element size is not 1, 2, 4 or 8", __FILE__,
                           __LINE__);
}

void launch_index_gather_rows(void* out, const void* src, const int64_t* table, size_t element_size, int64_t outer,
                              int64_t rows, int64_t row_elems, int64_t src_outer_stride, int64_t row_stride,
                              cudaStream_t stream) {
  if (outer * rows * row_elems == 0) return;
  // The widest word that divides every byte address and step the kernel uses (table entries are
  // multiples of row_stride).
  const uint64_t es = element_size;
  const uint64_t bits = reinterpret_cast<uintptr_t>(out) | reinterpret_cast<uintptr_t>(src) |
                        static_cast<uint64_t>(row_elems) * es | static_cast<uint64_t>(src_outer_stride) * es |
                        static_cast<uint64_t>(row_stride) * es;
  auto fits = [&](uint64_t w) { return w >= es && (bits % w) == 0; };
  if (fits(16)) return gather_rows<Word16>(out, src, table, es, outer, rows, row_elems, src_outer_stride, stream);
  if (fits(8)) return gather_rows<uint64_t>(out, src, table, es, outer, rows, row_elems, src_outer_stride, stream);
  if (fits(4)) return gather_rows<uint32_t>(out, src, table, es, outer, rows, row_elems, src_outer_stride, stream);
  if (fits(2)) return gather_rows<uint16_t>(out, src, table, es, outer, rows, row_elems, src_outer_stride, stream);
  return gather_rows<uint8_t>(out, src, table, es, outer, rows, row_elems, src_outer_stride, stream);
}

}  // namespace anatomy::cuda
