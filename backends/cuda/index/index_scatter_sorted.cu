// The sorted scatter (launch.h): the walks of scatter_, scatter_add_, scatter_reduce_ and
// index_put_ that the serial kernel of index_scatter.cu would leave to a few threads.
//
// Note [Sorted scatter on CUDA]
//   A 1-D index_add_, scatter_add_ or scatter_reduce_ has a single parallel position (Note
//   [Deterministic scatter on CUDA]), so the serial kernel walks all its values in one thread.
//   When the parallel positions are few and the serial walks long (sorted_scatter_fits, launch.h),
//   the walk is taken instead as its N = n_parallel * n_serial entries e = p * n_serial + j, p a
//   parallel position and j a serial one:
//   1. key[e] = the element of dst that e writes (its offset from dst's first element, at most
//      dst's extent: every stride of dst is >= 0) and value[e] = e's source value, read in e
//      order. Different parallel positions never share an element, so the entries of one key
//      have one p, and their e order is the CPU's order for that element.
//   2. cub::DeviceRadixSort::SortPairs, stable, over the key's bits [0, bit width of the extent)
//      (32-bit keys when the extent fits): few bits, so few passes, when dst is small. The
//      values travel with their keys: sorting positions instead and reading the source through
//      them afterwards cost a random 32-byte sector per value.
//   3. the segmented combine of segmented_combine.h (Note [Segmented combine in levels]): each
//      element's values taken in e order and combined with scatter_combine in a fixed
//      association, the total written into the element once, by one thread. Level 0 reads its
//      chunks of sorted keys and values a group of aligned elements per load.
//   No atomics and nothing read back on the host: every level's size follows from N. Integers,
//   bool, scatter_'s last write, max and min are the CPU's bit for bit; floating sums and
//   products are the same from run to run but not always the CPU's, whose sequential order
//   rounds differently (as any other order of the same sum would; fp16 and bf16 round every
//   partial total to their own precision, as each step of the CPU's does, so theirs differ most).
//   A bad index (the call's flag set by the table kernel) gives key 0, which nothing reads
//   through: every combine kernel writes nothing when the flag is set.
#include <cub/cub.cuh>

#include <algorithm>
#include <bit>
#include <cstdint>

#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/common/launch_config.h"
#include "anatomy/backends/cuda/common/strided_offsets.cuh"
#include "anatomy/backends/cuda/index/launch.h"
#include "anatomy/backends/cuda/index/segmented_combine.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"

namespace anatomy::cuda {
namespace {

// The walk of the entries: entry e is parallel position e / n_serial, serial position
// e % n_serial; operand 0 is dst, 1 src, 2 the offsets table.
struct EntryWalk {
  StridedLayout<3> parallel;
  StridedLayout<3> serial;
  int64_t n_serial;

  __device__ void offsets(int64_t e, int64_t (&out)[3]) const {
    // One parallel position (a 1-D walk, the common case here) needs no 64-bit division.
    const int64_t p = parallel.ndim == 0 ? 0 : e / n_serial;
    int64_t base[3], o[3];
    strided_offsets(parallel, p, base);
    strided_offsets(serial, e - p * n_serial, o);
    for (int k = 0; k < 3; ++k) out[k] = base[k] + o[k];
  }
};

template <typename K, typename T>
__global__ void scatter_keys_kernel(const int64_t* table, const T* src, EntryWalk walk, int64_t n, K* keys, T* values) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += step) {
    int64_t o[3];
    walk.offsets(e, o);
    const int64_t off = table[o[2]];
    keys[e] = off == kBadOffset ? K{0} : static_cast<K>(o[0] + off);
    values[e] = src[o[1]];
  }
}

template <ScatterMode Mode, typename T>
struct DstWrite {
  T* dst;

  __device__ void operator()(uint64_t key, T total) const {
    T& target = dst[key];
    target = scatter_combine<Mode, T>(target, total);
  }
};

// Level 0 of the combine: a thread per chunk of kSegmentChunk sorted entries.
template <ScatterMode Mode, typename T, typename K>
__global__ void combine_sorted_kernel(const K* keys, const T* values, int64_t m, SegmentPiece<T>* next,
                                      DstWrite<Mode, T> write, IndexErrorSink sink) {
  if (sink.call_failed()) return;
  const int64_t chunks = segment_chunks(m);
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < chunks; t += step) {
    combine_sorted_chunk<Mode, T>(keys, values, m, t, next, write);
  }
}

// A later level: a thread per chunk of the pieces the level before left open.
template <ScatterMode Mode, typename T>
__global__ void combine_level_kernel(PieceEntries<T> entries, int64_t m, SegmentPiece<T>* next, DstWrite<Mode, T> write,
                                     IndexErrorSink sink) {
  if (sink.call_failed()) return;
  const int64_t chunks = segment_chunks(m);
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < chunks; t += step) {
    combine_segment_chunk<Mode, T>(entries, m, t, next, write);
  }
}

// The walk's n (key, value) pairs sorted by key, in scratch.
template <typename K, typename T>
struct SortedTargets {
  const K* keys;
  const T* values;
};

template <typename K, typename T>
SortedTargets<K, T> sort_targets(const int64_t* table, const T* src, const EntryWalk& walk, int64_t n,
                                 uint64_t dst_extent, const ScratchFn& scratch, cudaStream_t stream) {
  // Double buffers: the sort ping-pongs between the two of each and says on the host, from the
  // pass count, which one holds the result (no copy of the input, no read of the device).
  cub::DoubleBuffer<K> keys(scratch_of<K>(scratch, n), scratch_of<K>(scratch, n));
  cub::DoubleBuffer<T> values(scratch_of<T>(scratch, n), scratch_of<T>(scratch, n));
  scatter_keys_kernel<K, T>
      <<<grid_blocks(n), kBlockThreads, 0, stream>>>(table, src, walk, n, keys.Current(), values.Current());
  ANATOMY_CUDA_LAUNCH_CHECK();
  const int end_bit = std::max(1, static_cast<int>(std::bit_width(dst_extent)));
  size_t bytes = 0;
  ANATOMY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, values, n, 0, end_bit, stream));
  ANATOMY_CUDA_CHECK(
      cub::DeviceRadixSort::SortPairs(scratch(std::max<size_t>(bytes, 1)), bytes, keys, values, n, 0, end_bit, stream));
  return {keys.Current(), values.Current()};
}

template <ScatterMode Mode, typename T, typename K>
void combine_sorted(T* dst, const SortedTargets<K, T>& sorted, int64_t n, const IndexErrorSink& sink,
                    const ScratchFn& scratch, cudaStream_t stream) {
  const SegmentBuffers sizes = segment_buffers(n);
  SegmentPiece<T>* buffers[2] = {scratch_of<SegmentPiece<T>>(scratch, sizes.size[0]),
                                 scratch_of<SegmentPiece<T>>(scratch, sizes.size[1])};
  const DstWrite<Mode, T> write{dst};
  for_each_segment_level(n, [&](int level, int64_t m) {
    SegmentPiece<T>* next = buffers[level % 2];
    const unsigned blocks = grid_blocks(segment_chunks(m));
    if (level == 0) {
      combine_sorted_kernel<Mode, T, K>
          <<<blocks, kBlockThreads, 0, stream>>>(sorted.keys, sorted.values, m, next, write, sink);
    } else {
      const PieceEntries<T> entries{buffers[(level + 1) % 2]};
      combine_level_kernel<Mode, T><<<blocks, kBlockThreads, 0, stream>>>(entries, m, next, write, sink);
    }
    ANATOMY_CUDA_LAUNCH_CHECK();
  });
}

template <typename K>
bool scatter_sorted(DType dtype, void* dst, const void* src, const int64_t* table, const EntryWalk& walk, int64_t n,
                    uint64_t dst_extent, ScatterMode mode, const IndexErrorSink& sink, const ScratchFn& scratch,
                    cudaStream_t stream) {
  return dtype_switch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const SortedTargets<K, T> sorted =
        sort_targets<K, T>(table, static_cast<const T*>(src), walk, n, dst_extent, scratch, stream);
    visit_scatter_mode(mode, [&](auto m) {
      combine_sorted<decltype(m)::value, T, K>(static_cast<T*>(dst), sorted, n, sink, scratch, stream);
    });
    return true;
  });
}

}  // namespace

bool launch_index_scatter_sorted(DType dtype, void* dst, const void* src, const int64_t* table,
                                 const StridedLayout<3>& parallel, int64_t n_parallel, const StridedLayout<3>& serial,
                                 int64_t n_serial, uint64_t dst_extent, ScatterMode mode, const IndexErrorSink& sink,
                                 const ScratchFn& scratch, cudaStream_t stream) {
  const int64_t n = n_parallel * n_serial;
  if (n == 0) return true;
  const EntryWalk walk{parallel, serial, n_serial};
  if (dst_extent <= UINT32_MAX) {
    return scatter_sorted<uint32_t>(dtype, dst, src, table, walk, n, dst_extent, mode, sink, scratch, stream);
  }
  return scatter_sorted<uint64_t>(dtype, dst, src, table, walk, n, dst_extent, mode, sink, scratch, stream);
}

}  // namespace anatomy::cuda
