// CUDA sort and topk over rows: keys and positions made from the strided input, CUB's stable
// device-wide radix sorts, then a gather of each row's first k positions' values into the
// outputs' layout. The values come from the input by position, so they keep their exact bits
// (NaN payloads, -0.0) whatever the keys normalized.
//
// Note [CUDA sort paths]
// Every row is sorted at once, whatever the number and the length of the rows, by two stable
// cub::DeviceRadixSort passes over the whole chunk (the segmented sort of PyTorch's
// segmented_sort_pairs_by_full_sort):
//   1. (key, position) pairs by key, positions numbered across the chunk (row * n + j);
//   2. the result by row (position / n, only as many bits as the row count needs).
// Both are stable, so each row ends up in key order with equal keys in input order: the CPU's
// stable order. cub::DeviceSegmentedSort is not used: with more than a few hundred segments it
// copies its partition sizes to the host and waits for the stream, and only item(), copies to
// the host and printing may make the host wait. One row needs pass 1 only.
// topk with sorted=false then sorts each row's k picked positions by themselves (one more
// device-wide sort of keys: a position numbered across the chunk orders by row, then by index).
// topk of at most 16 elements from 32 or more rows of 1024 or more elements does not sort: one
// block a row keeps each thread's first k and merges them (topk_small.cu, small_topk_fits in
// launch.h, picked by sort_cuda.cpp).
// Rows are taken in chunks of at most INT32_MAX elements, so positions are 32-bit; the scratch
// comes from the caller (the caching allocator).
#include <cub/cub.cuh>

#include <algorithm>
#include <climits>

#include "anatomy/backends/cuda/common/launch_config.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/backends/cuda/sort/launch.h"
#include "anatomy/backends/cuda/sort/sort_keys.cuh"

namespace anatomy::cuda {
namespace {

constexpr int64_t kMaxChunkItems = INT32_MAX;

template <typename U>
__global__ void make_keys_kernel(const U* in, StridedLayout<2> starts, int64_t row0, int64_t n, int64_t in_stride,
                                 int64_t count, KeyRule rule, U* keys, uint32_t* positions) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
    const int64_t r = i / n, j = i - r * n;
    int64_t off[2];
    starts.offsets(row0 + r, off);
    keys[i] = order_key<U>(in[off[0] + j * in_stride], rule);
    positions[i] = static_cast<uint32_t>(i);
  }
}

// The row of each position, the key of pass 2.
__global__ void row_of_kernel(const uint32_t* positions, int64_t n, int64_t count, uint32_t* rows) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
    rows[i] = static_cast<uint32_t>(positions[i] / static_cast<uint64_t>(n));
  }
}

// The first k of each row of `order` (rows of n), packed into rows of k.
__global__ void take_first_kernel(const uint32_t* order, int64_t n, int64_t k, int64_t count, uint32_t* out) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
    const int64_t r = i / k, t = i - r * k;
    out[i] = order[r * n + t];
  }
}

// Output t of row r: the input element at position order[r * pitch + t] - r * n of that row.
// The positions were written by make_keys_kernel and only permuted by the sorts, which leave
// row r's own positions (r * n + j, j in [0, n)) in row r: the index is in range by construction.
template <typename U>
__global__ void gather_kernel(const U* in, U* values, int64_t* indices, StridedLayout<2> starts, int64_t row0,
                              const uint32_t* order, int64_t pitch, int64_t n, int64_t k, int64_t count,
                              int64_t in_stride, int64_t out_stride) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
    const int64_t r = i / k, t = i - r * k;
    const int64_t j = static_cast<int64_t>(order[r * pitch + t]) - r * n;
    int64_t off[2];
    starts.offsets(row0 + r, off);
    const int64_t o = off[1] + t * out_stride;
    values[o] = in[off[0] + j * in_stride];
    indices[o] = j;
  }
}

// The number of low bits that hold every value in [0, max_value] (at least 1).
int bits_for(uint64_t max_value) {
  int bits = 1;
  while (bits < 64 && (max_value >> bits) != 0) ++bits;
  return bits;
}

// CUB's temporary storage, grown when a sort asks for more than the last one.
class TempStorage {
 public:
  explicit TempStorage(const ScratchFn& scratch) : scratch_(scratch) {}
  void* get(size_t bytes) {
    if (data_ == nullptr || bytes > capacity_) {
      capacity_ = std::max<size_t>(bytes, 1);
      data_ = scratch_(capacity_);
    }
    return data_;
  }

 private:
  const ScratchFn& scratch_;
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

// Stable sort of `count` (key, value) pairs by the key's bits [0, end_bit), in -> out.
template <typename K>
void sort_pairs(TempStorage& temp, const K* keys_in, K* keys_out, const uint32_t* values_in, uint32_t* values_out,
                int64_t count, int end_bit, cudaStream_t stream) {
  size_t bytes = 0;
  ANATOMY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys_in, keys_out, values_in, values_out, count, 0,
                                                     end_bit, stream));
  ANATOMY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.get(bytes), bytes, keys_in, keys_out, values_in, values_out,
                                                     count, 0, end_bit, stream));
}

template <typename U>
bool sort_rows(const SortRows& q, KeyRule rule, const ScratchFn& scratch, cudaStream_t stream) {
  const int64_t n = q.n, k = q.k;
  const int64_t chunk_rows = std::min(q.rows, std::max<int64_t>(1, kMaxChunkItems / n));
  const int64_t capacity = chunk_rows * n;
  const bool pick_by_index = !q.sorted && k > 1;
  // A bool's keys differ in their lowest bit only, in both directions.
  const int key_bits = rule.kind == KeyKind::Bool ? 1 : static_cast<int>(8 * sizeof(U));

  U* keys = scratch_of<U>(scratch, capacity);
  U* keys_sorted = scratch_of<U>(scratch, capacity);
  uint32_t* positions = scratch_of<uint32_t>(scratch, capacity);
  uint32_t* positions_alt = scratch_of<uint32_t>(scratch, capacity);
  uint32_t* row_keys = chunk_rows > 1 ? scratch_of<uint32_t>(scratch, capacity) : nullptr;
  uint32_t* row_keys_sorted = chunk_rows > 1 ? scratch_of<uint32_t>(scratch, capacity) : nullptr;
  uint32_t* picked = pick_by_index ? scratch_of<uint32_t>(scratch, chunk_rows * k) : nullptr;
  uint32_t* picked_sorted = pick_by_index ? scratch_of<uint32_t>(scratch, chunk_rows * k) : nullptr;
  TempStorage temp(scratch);
  const U* in = static_cast<const U*>(q.in);

  for (int64_t row0 = 0; row0 < q.rows; row0 += chunk_rows) {
    const int64_t c = std::min(chunk_rows, q.rows - row0);
    const int64_t items = c * n;
    make_keys_kernel<U><<<grid_blocks(items), kBlockThreads, 0, stream>>>(in, q.starts, row0, n, q.in_stride, items,
                                                                          rule, keys, positions);
    ANATOMY_CUDA_LAUNCH_CHECK();

    // Pass 1, by key; pass 2, by row (Note [CUDA sort paths]).
    sort_pairs<U>(temp, keys, keys_sorted, positions, positions_alt, items, key_bits, stream);
    const uint32_t* order = positions_alt;
    if (c > 1) {
      row_of_kernel<<<grid_blocks(items), kBlockThreads, 0, stream>>>(positions_alt, n, items, row_keys);
      ANATOMY_CUDA_LAUNCH_CHECK();
      sort_pairs<uint32_t>(temp, row_keys, row_keys_sorted, positions_alt, positions, items,
                           bits_for(static_cast<uint64_t>(c - 1)), stream);
      order = positions;
    }

    int64_t pitch = n;
    if (pick_by_index) {
      const int64_t picked_items = c * k;
      take_first_kernel<<<grid_blocks(picked_items), kBlockThreads, 0, stream>>>(order, n, k, picked_items, picked);
      ANATOMY_CUDA_LAUNCH_CHECK();
      size_t bytes = 0;
      const int end_bit = bits_for(static_cast<uint64_t>(items - 1));
      ANATOMY_CUDA_CHECK(
          cub::DeviceRadixSort::SortKeys(nullptr, bytes, picked, picked_sorted, picked_items, 0, end_bit, stream));
      ANATOMY_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp.get(bytes), bytes, picked, picked_sorted, picked_items, 0,
                                                        end_bit, stream));
      order = picked_sorted;
      pitch = k;
    }

    const int64_t out_items = c * k;
    gather_kernel<U><<<grid_blocks(out_items), kBlockThreads, 0, stream>>>(in, static_cast<U*>(q.values), q.indices,
                                                                           q.starts, row0, order, pitch, n, k,
                                                                           out_items, q.in_stride, q.out_stride);
    ANATOMY_CUDA_LAUNCH_CHECK();
  }
  return true;
}

}  // namespace

bool launch_sort_rows(const SortRows& q, const ScratchFn& scratch, cudaStream_t stream) {
  const KeyRule rule = key_rule(q.dtype, q.descending);
  switch (element_size(q.dtype)) {
    case 1:
      return sort_rows<uint8_t>(q, rule, scratch, stream);
    case 2:
      return sort_rows<uint16_t>(q, rule, scratch, stream);
    case 4:
      return sort_rows<uint32_t>(q, rule, scratch, stream);
    case 8:
      return sort_rows<uint64_t>(q, rule, scratch, stream);
  }
  return false;
}

}  // namespace anatomy::cuda
