// The scatter kernel of the writing indexing ops (launch.h): scatter_, scatter_add_, scatter_reduce_,
// index_put_.
//
// Note [Deterministic scatter on CUDA]
//   Two positions of a scatter can only write the same element of dst when they differ in the
//   dims where dst's base stride is 0 (the scattered dim of scatter_, the index block of
//   index_put_): dst has no internal overlap, so positions that differ elsewhere write different
//   elements. The host splits the walk into those "serial" dims and the others; one thread owns
//   each position of the others and walks the serial dims itself in row-major order. Every
//   element of dst is therefore written by one thread, in the CPU's order: the last write wins
//   for scatter_, and sums, products, maxima and minima combine in index order (no atomics,
//   scatter_combine of dispatch/ops/scatter_functors.h), so the results are the CPU's bit for bit. The kernel runs
//   after the table kernel of its call and does nothing when that found a bad index (Note [Bad indices on the device]).
//   A walk with few positions outside the serial dims and long serial walks (a 1-D index_add_ of
//   16M values is one thread's 16M steps) goes to the sorted path instead (sorted_scatter_fits,
//   launch.h; Note [Sorted scatter on CUDA], index_scatter_sorted.cu): the same order for each
//   element, combined in a fixed tree, so integers, writes, maxima and minima stay the CPU's bits
//   and floating sums and products may round differently (the same from run to run).
#include <type_traits>

#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/common/launch_config.h"
#include "anatomy/backends/cuda/index/launch.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"

namespace anatomy::cuda {
namespace {

template <typename T, ScatterMode Mode>
__global__ void index_scatter_kernel(T* dst, const T* src, const int64_t* table, StridedLayout<3> parallel,
                                     int64_t n_parallel, StridedLayout<3> serial, int64_t n_serial,
                                     IndexErrorSink sink) {
  if (sink.call_failed()) return;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n_parallel; i += step) {
    int64_t base[3];
    parallel.offsets(i, base);
    for (int64_t j = 0; j < n_serial; ++j) {
      int64_t o[3];
      serial.offsets(j, o);
      const int64_t off = table[base[2] + o[2]];
      if (off == kBadOffset) continue;  // only when the flag is set, so never reached
      T& target = dst[base[0] + o[0] + off];
      target = scatter_combine<Mode, T>(target, src[base[1] + o[1]]);
    }
  }
}

template <typename T, ScatterMode Mode>
void scatter(void* dst, const void* src, const int64_t* table, const StridedLayout<3>& parallel, int64_t n_parallel,
             const StridedLayout<3>& serial, int64_t n_serial, const IndexErrorSink& sink, cudaStream_t stream) {
  index_scatter_kernel<T, Mode><<<grid_blocks(n_parallel), kBlockThreads, 0, stream>>>(
      static_cast<T*>(dst), static_cast<const T*>(src), table, parallel, n_parallel, serial, n_serial, sink);
  ANATOMY_CUDA_LAUNCH_CHECK();
}

}  // namespace

bool launch_index_scatter(DType dtype, void* dst, const void* src, const int64_t* table,
                          const StridedLayout<3>& parallel, int64_t n_parallel, const StridedLayout<3>& serial,
                          int64_t n_serial, ScatterMode mode, const IndexErrorSink& sink, cudaStream_t stream) {
  return dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (n_parallel == 0 || n_serial == 0) return true;
    visit_scatter_mode(mode, [&](auto m) {
      scatter<T, decltype(m)::value>(dst, src, table, parallel, n_parallel, serial, n_serial, sink, stream);
    });
    return true;
  });
}

}  // namespace anatomy::cuda
