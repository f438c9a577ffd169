// The multi-tensor norm (_foreach_norm): the reductions' own norm functor (NormFn,
// dispatch/ops/reduce_functors.h: |x|^p summed in fp32, fp64 for fp64, or the largest or smallest
// |x|) over many tensors per launch. First every chunk of every tensor is folded by one block into
// a partial result, up to 64 tensors and 320 chunks per launch (multi_tensor.h), the chunks'
// partials stored in list order; then one block per tensor folds that tensor's partials, always in
// the same order, and writes its norm. Two kinds of launch for a whole list, where norm per tensor
// takes one or two per tensor; and no atomics, so a list's norms are the same bits every time.
#include <algorithm>

#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/optim/launch.h"
#include "anatomy/backends/cuda/optim/multi_tensor.h"
#include "anatomy/backends/cuda/reduce/reduce.cuh"

namespace anatomy::cuda {
namespace {

using reduction::NormFn;
using reduction::NormKind;

constexpr int kTensors = 64;
constexpr int kBlocks = 320;
constexpr int64_t kChunk = 65536;  // elements a block folds

using ChunkTable = DataTable<kTensors, kBlocks>;
static_assert(sizeof(ChunkTable) + 64 < 4096, "a kernel's parameters are limited to 4 KB");

// Where each tensor's partials begin: tensor k of the launch folds partials [first[k], first[k+1]).
constexpr int kFinishTensors = 512;
struct FinishTable {
  int32_t first[kFinishTensors + 1];
};
static_assert(sizeof(FinishTable) + 64 < 4096, "a kernel's parameters are limited to 4 KB");

// Block b folds its chunk into partials[b] (partials points at the launch's first block's slot).
template <typename T, NormKind K>
__global__ void __launch_bounds__(kReduceThreads)
    chunk_norm_kernel(ChunkTable table, NormFn<T, K> fn, typename NormFn<T, K>::acc_t* partials) {
  const int i = table.map.tensor_of_block[blockIdx.x];
  const int64_t begin = static_cast<int64_t>(table.map.chunk_of_block[blockIdx.x]) * kChunk;
  const int64_t end = min(begin + kChunk, table.numel[i]);
  const T* x = static_cast<const T*>(table.data[i]);
  constexpr int kVec = 16 / sizeof(T);
  // A chunk begins at a multiple of kChunk elements: 16-byte vectors when the tensor's are.
  auto a = reinterpret_cast<uintptr_t>(x) % 16 == 0
               ? row_chunk_reduce<kVec>(x, begin, end, threadIdx.x, kReduceThreads, fn)
               : row_chunk_reduce<1>(x, begin, end, threadIdx.x, kReduceThreads, fn);
  a = block_reduce(fn, a);
  if (threadIdx.x == 0) partials[blockIdx.x] = a;
}

// Block k folds the partials of the launch's tensor k and writes its norm to out[k].
template <typename T, NormKind K>
__global__ void __launch_bounds__(kReduceThreads)
    finish_norm_kernel(FinishTable table, NormFn<T, K> fn, const typename NormFn<T, K>::acc_t* partials, T* out) {
  const int k = blockIdx.x;
  auto a = fn.identity();
  for (int32_t s = table.first[k] + static_cast<int32_t>(threadIdx.x); s < table.first[k + 1]; s += kReduceThreads) {
    a = fn.combine(a, partials[s]);
  }
  a = block_reduce(fn, a);
  if (threadIdx.x == 0) out[k] = convert<T>(fn.project(a));
}

template <typename T, NormKind K>
void launch_for(const std::vector<DenseTensor>& tensors, double ord, T* out, const ScratchFn& scratch,
                cudaStream_t stream) {
  using Fn = NormFn<T, K>;
  using A = typename Fn::acc_t;
  const Fn fn{static_cast<A>(ord)};
  std::vector<int32_t> first{0};  // tensor i's partials: [first[i], first[i + 1])
  for (const DenseTensor& t : tensors) {
    first.push_back(first.back() + static_cast<int32_t>((t.numel + kChunk - 1) / kChunk));
  }
  A* partials = scratch_of<A>(scratch, first.back());
  ChunkTable table{};
  int64_t launched = 0;
  plan_data_launches(tensors, kChunk, table, [&](int blocks) {
    chunk_norm_kernel<T, K><<<blocks, kReduceThreads, 0, stream>>>(table, fn, partials + launched);
    ANATOMY_CUDA_LAUNCH_CHECK();
    launched += blocks;
  });
  FinishTable finish{};
  for (size_t begin = 0; begin < tensors.size(); begin += kFinishTensors) {
    const int count = static_cast<int>(std::min<size_t>(kFinishTensors, tensors.size() - begin));
    std::copy(first.begin() + static_cast<ptrdiff_t>(begin), first.begin() + static_cast<ptrdiff_t>(begin) + count + 1,
              finish.first);
    finish_norm_kernel<T, K><<<count, kReduceThreads, 0, stream>>>(finish, fn, partials, out + begin);
    ANATOMY_CUDA_LAUNCH_CHECK();
  }
}

}  // namespace

void launch_foreach_norm(DType dtype, const std::vector<DenseTensor>& tensors, double ord, void* out,
                         const ScratchFn& scratch, cudaStream_t stream) {
  const bool launched = dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_floating_v<T>) {
      reduction::visit_norm_kind(
          ord, [&]<NormKind K>() { launch_for<T, K>(tensors, ord, static_cast<T*>(out), scratch, stream); });
      return true;
    }
    return false;
  });
  if (!launched) reduce_dtype_error("launch_foreach_norm");
}

}  // namespace anatomy::cuda
