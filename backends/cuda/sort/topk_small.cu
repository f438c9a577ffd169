// CUDA topk of a few elements (k <= kSmallTopkMaxK) from each of many long rows: one block per
// row reads the row once, each thread keeping the first k of its own elements in the row's
// stable order, then k rounds of a block-wide minimum pick the row's first k (Note [CUDA sort
// paths] says when; sort.cu sorts everything else). The order is the CPU's: the keys of
// sort_keys.cuh, ties to the lower index.
#include <cub/block/block_reduce.cuh>

#include <algorithm>

#include "anatomy/backends/cuda/common/launch_config.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/backends/cuda/sort/launch.h"
#include "anatomy/backends/cuda/sort/sort_keys.cuh"

namespace anatomy::cuda {
namespace {

constexpr int kThreads = 256;

// An element of a row: its key and its position. Positions are distinct, so the order
// (key, then position) is total and its first k are the stable order's first k.
template <typename U>
struct Candidate {
  U key;
  uint32_t pos;
};

struct FirstOf {
  template <typename C>
  __device__ C operator()(const C& a, const C& b) const {
    return (b.key < a.key || (b.key == a.key && b.pos < a.pos)) ? b : a;
  }
};

template <typename U>
__global__ __launch_bounds__(kThreads) void topk_small_kernel(const U* in, U* values, int64_t* indices,
                                                              StridedLayout<2> starts, int64_t rows, int64_t n, int k,
                                                              int64_t in_stride, int64_t out_stride, KeyRule rule,
                                                              bool sorted) {
  using Reduce = cub::BlockReduce<Candidate<U>, kThreads>;
  __shared__ typename Reduce::TempStorage reduce_storage;
  __shared__ Candidate<U> winner;
  __shared__ uint32_t picked[kSmallTopkMaxK];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    int64_t off[2];
    starts.offsets(row, off);
    const U* src = in + off[0];

    // This thread's elements (positions ascending) kept in order, the first k only: a later
    // element with an equal key goes after, as in the stable order.
    U keys[kSmallTopkMaxK];
    uint32_t positions[kSmallTopkMaxK];
    int count = 0;
    for (int64_t j = threadIdx.x; j < n; j += kThreads) {
      const U key = order_key<U>(src[j * in_stride], rule);
      if (count == k && !(key < keys[k - 1])) continue;
      int p = count < k ? count++ : k - 1;
      while (p > 0 && key < keys[p - 1]) {
        keys[p] = keys[p - 1];
        positions[p] = positions[p - 1];
        --p;
      }
      keys[p] = key;
      positions[p] = static_cast<uint32_t>(j);
    }

    // Round t takes the smallest of the threads' next candidates; its owner moves on. A thread
    // with none left offers a sentinel after every real element (positions are < INT32_MAX).
    int head = 0;
    for (int t = 0; t < k; ++t) {
      const Candidate<U> mine =
          head < count ? Candidate<U>{keys[head], positions[head]} : Candidate<U>{static_cast<U>(~U{0}), UINT32_MAX};
      const Candidate<U> best = Reduce(reduce_storage).Reduce(mine, FirstOf{});
      if (threadIdx.x == 0) {
        winner = best;
        picked[t] = best.pos;
      }
      __syncthreads();
      if (head < count && positions[head] == winner.pos) ++head;
      __syncthreads();  // reduce_storage and winner are written again next round
    }

    if (!sorted && threadIdx.x == 0) {
      for (int a = 1; a < k; ++a) {
        const uint32_t v = picked[a];
        int b = a;
        for (; b > 0 && picked[b - 1] > v; --b) picked[b] = picked[b - 1];
        picked[b] = v;
      }
    }
    __syncthreads();
    if (static_cast<int>(threadIdx.x) < k) {
      const int64_t j = picked[threadIdx.x];
      const int64_t o = off[1] + static_cast<int64_t>(threadIdx.x) * out_stride;
      values[o] = src[j * in_stride];
      indices[o] = j;
    }
    __syncthreads();  // picked is written again for the next row
  }
}

template <typename U>
void topk_small(const SortRows& q, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(q.rows, kMaxBlocks));
  topk_small_kernel<U><<<blocks, kThreads, 0, stream>>>(
      static_cast<const U*>(q.in), static_cast<U*>(q.values), q.indices, q.starts, q.rows, q.n, static_cast<int>(q.k),
      q.in_stride, q.out_stride, key_rule(q.dtype, q.descending), q.sorted);
  ANATOMY_CUDA_LAUNCH_CHECK();
}

}  // namespace

bool launch_topk_small(const SortRows& q, cudaStream_t stream) {
  switch (element_size(q.dtype)) {
    case 1:
      return topk_small<uint8_t>(q, stream), true;
    case 2:
      return topk_small<uint16_t>(q, stream), true;
    case 4:
      return topk_small<uint32_t>(q, stream), true;
    case 8:
      return topk_small<uint64_t>(q, stream), true;
  }
  return false;
}

}  // namespace anatomy::cuda
