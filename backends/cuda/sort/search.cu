// CUDA kernels of searchsorted and bucketize: one thread per value (a grid-stride loop), which
// finds its row through the layout and runs the binary search every backend shares
// (dispatch/ops/sorted_search.h), so the positions are the CPU's bit for bit. The rows are read
// where they lie, whatever their strides; nothing is copied or sorted.
#include <cstdint>
#include <type_traits>

#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/common/launch_config.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/backends/cuda/sort/launch.h"
#include "anatomy/dispatch/ops/sorted_search.h"

namespace anatomy::cuda {
namespace {

template <typename T, typename Out>
__global__ void search_kernel(SearchValues q) {
  const T* values = static_cast<const T*>(q.values);
  const T* sequence = static_cast<const T*>(q.sequence);
  Out* out = static_cast<Out*>(q.out);
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < q.numel; i += step) {
    int64_t o[4];
    q.layout.offsets(i, o);
    const T* row = sequence + o[2];
    const int64_t* order = q.sorter != nullptr ? q.sorter + o[3] : nullptr;
    const int64_t last = q.n - 1;
    const int64_t pos = search::sorted_position(values[o[0]], q.n, q.right, [&](int64_t k) {
      if (order == nullptr) return row[k * q.sequence_stride];
      // A bad entry was reported by the check kernel; a clamped one keeps the read in the row.
      int64_t j = order[k * q.sorter_stride];
      j = j < 0 ? 0 : (j > last ? last : j);
      return row[j * q.sequence_stride];
    });
    out[o[1]] = static_cast<Out>(pos);
  }
}

__global__ void check_sorter_kernel(const int64_t* sorter, StridedLayout<1> layout, int64_t numel, int64_t n,
                                    int64_t dim, IndexErrorSink sink) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < numel; i += step) {
    int64_t o[1];
    layout.offsets(i, o);
    int64_t v = sorter[o[0]];
    sink.check(v, n, dim, /*allow_negative=*/false);
  }
}

}  // namespace

bool launch_search(const SearchValues& q, cudaStream_t stream) {
  const bool launched = dtype_switch(q.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      return false;  // bool has no order to search (the shared checks refuse it first)
    } else {
      if (q.numel == 0) return true;
      if (q.out_int32) search_kernel<T, int32_t><<<grid_blocks(q.numel), kBlockThreads, 0, stream>>>(q);
      else search_kernel<T, int64_t><<<grid_blocks(q.numel), kBlockThreads, 0, stream>>>(q);
      ANATOMY_CUDA_LAUNCH_CHECK();
      return true;
    }
  });
  return launched;
}

void launch_check_sorter(const int64_t* sorter, const StridedLayout<1>& layout, int64_t numel, int64_t n, int64_t dim,
                         const IndexErrorSink& sink, cudaStream_t stream) {
  if (numel == 0) return;
  check_sorter_kernel<<<grid_blocks(numel), kBlockThreads, 0, stream>>>(sorter, layout, numel, n, dim, sink);
  ANATOMY_CUDA_LAUNCH_CHECK();
}

}  // namespace anatomy::cuda
