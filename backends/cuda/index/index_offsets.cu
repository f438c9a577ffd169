// The offsets-table kernel of the indexing ops (launch.h): reads each index value once, checks it
// through the IndexErrorSink (the CPU's range rules, so the raised message is the CPU's) and
// stores its element offset, or kBadOffset. No memory is touched with an unchecked value.
#include "anatomy/backends/cuda/common/launch_config.h"
#include "anatomy/backends/cuda/index/launch.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"

namespace anatomy::cuda {
namespace {

template <typename I>
__global__ void index_table_kernel(int64_t* table, int64_t n, IndexTableArgs args, IndexErrorSink sink) {
  const I* index = static_cast<const I*>(args.index);
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t at[1];
    args.index_layout.offsets(i, at);
    int64_t v = static_cast<int64_t>(index[at[0]]);
    if (!sink.check(v, args.size, args.dim, args.allow_negative)) {
      table[i] = kBadOffset;
      continue;
    }
    if (args.flat) {
      int64_t off[1];
      args.flat_layout.offsets(v, off);
      table[i] = off[0];
    } else if (args.accumulate) {
      const int64_t before = table[i];
      table[i] = before == kBadOffset ? kBadOffset : before + v * args.stride;
    } else {
      table[i] = v * args.stride;
    }
  }
}

}  // namespace

void launch_index_table(int64_t* table, int64_t n, const IndexTableArgs& args, const IndexErrorSink& sink,
                        cudaStream_t stream) {
  if (n == 0) return;
  if (args.index_int32) {
    index_table_kernel<int32_t><<<grid_blocks(n), kBlockThreads, 0, stream>>>(table, n, args, sink);
  } else {
    index_table_kernel<int64_t><<<grid_blocks(n), kBlockThreads, 0, stream>>>(table, n, args, sink);
  }
  ANATOMY_CUDA_LAUNCH_CHECK();
}

}  // namespace anatomy::cuda
