// CUDA sort and topk over rows: keys and positions made from the strided input, a stable radix
// sort of (key, position) pairs per row, then a gather of the first k positions' values into the
// outputs' layout. The values come from the input by position, so they keep their exact bits
// (NaN payloads, -0.0) whatever the keys normalized.
//
// Which CUB sort (Note [CUDA sort paths]):
// - many rows: cub::DeviceSegmentedSort::StableSortPairs over all rows at once (short rows are
//   sorted a warp or a block each, long ones a block each with a radix sort);
// - one row, or a few long rows: cub::DeviceRadixSort::SortPairs per row, which spreads a row
//   over the whole GPU. Both are stable, so equal keys keep their input order.
// Rows are taken in chunks of at most INT32_MAX elements, so CUB's segment offsets and the sorted
// positions are int32; the chunk's scratch comes from the caller (the caching allocator).
// topk with sorted=false then sorts the k picked positions of each row (cub::DeviceSegmentedSort::
// SortKeys; positions are distinct, so stability does not matter).
#include <cub/cub.cuh>

#include <algorithm>
#include <climits>

#include "anatomy/backends/cuda/cuda_check.h"
#include "anatomy/backends/cuda/launch_config.h"
#include "anatomy/backends/cuda/sort.h"
#include "anatomy/backends/cuda/sort_keys.cuh"

namespace anatomy::cuda {
namespace {

constexpr int64_t kMaxChunkItems = INT32_MAX;

// Rows at least this long, when there are at most kFewRows of them, are sorted one device-wide
// radix sort each instead of one block each.
constexpr int64_t kLongRow = int64_t{1} << 17;
constexpr int64_t kFewRows = 32;

template <typename U>
__global__ void make_keys_kernel(const U* in, StridedLayout<2> starts, int64_t row0, int64_t n, int64_t in_stride,
                                 int64_t count, KeyRule rule, U* keys, int32_t* positions) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
    const int64_t r = i / n, j = i - r * n;
    int64_t off[2];
    starts.offsets(row0 + r, off);
    keys[i] = order_key<U>(in[off[0] + j * in_stride], rule);
    positions[i] = static_cast<int32_t>(j);
  }
}

// offsets[r] = r * pitch for r in [0, count): the segment bounds of rows laid end to end.
__global__ void row_offsets_kernel(int32_t* offsets, int64_t count, int64_t pitch) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
    offsets[i] = static_cast<int32_t>(i * pitch);
  }
}

// The first k of each row of `order` (rows of n), packed into rows of k.
__global__ void take_first_kernel(const int32_t* order, int64_t n, int64_t k, int64_t count, int32_t* out) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
    const int64_t r = i / k, t = i - r * k;
    out[i] = order[r * n + t];
  }
}

// Output t of row r: the input element at position order[r * pitch + t] of that row. The
// positions were written by make_keys_kernel and only permuted by the sorts: each is in [0, n).
template <typename U>
__global__ void gather_kernel(const U* in, U* values, int64_t* indices, StridedLayout<2> starts, int64_t row0,
                              const int32_t* order, int64_t pitch, int64_t k, int64_t count, int64_t in_stride,
                              int64_t out_stride) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
    const int64_t r = i / k, t = i - r * k;
    const int64_t j = order[r * pitch + t];
    int64_t off[2];
    starts.offsets(row0 + r, off);
    const int64_t o = off[1] + t * out_stride;
    values[o] = in[off[0] + j * in_stride];
    indices[o] = j;
  }
}

template <typename T>
T* scratch_of(const ScratchFn& scratch, int64_t count) {
  return static_cast<T*>(scratch(static_cast<size_t>(std::max<int64_t>(count, 1)) * sizeof(T)));
}

void fill_row_offsets(int32_t* offsets, int64_t rows, int64_t pitch, cudaStream_t stream) {
  row_offsets_kernel<<<grid_blocks(rows + 1), kBlockThreads, 0, stream>>>(offsets, rows + 1, pitch);
  ANATOMY_CUDA_LAUNCH_CHECK();
}

// CUB's temporary storage, grown when a call asks for more than the last one.
class TempStorage {
 public:
  explicit TempStorage(const ScratchFn& scratch) : scratch_(scratch) {}
  void* get(size_t bytes) {
    if (bytes > capacity_ || data_ == nullptr) {
      data_ = scratch_(std::max<size_t>(bytes, 1));
      capacity_ = std::max<size_t>(bytes, 1);
    }
    return data_;
  }

 private:
  const ScratchFn& scratch_;
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

template <typename U>
bool sort_rows(const SortRows& q, KeyRule rule, const ScratchFn& scratch, cudaStream_t stream) {
  const int64_t n = q.n, k = q.k;
  const int64_t chunk_rows = std::min(q.rows, std::max<int64_t>(1, kMaxChunkItems / n));
  const int64_t capacity = chunk_rows * n;
  const bool per_row = q.rows == 1 || (n >= kLongRow && q.rows <= kFewRows);
  const bool pick_by_index = !q.sorted && k > 1;

  U* keys = scratch_of<U>(scratch, capacity);
  U* keys_alt = scratch_of<U>(scratch, capacity);
  int32_t* positions = scratch_of<int32_t>(scratch, capacity);
  int32_t* positions_alt = scratch_of<int32_t>(scratch, capacity);
  int32_t* offsets = per_row ? nullptr : scratch_of<int32_t>(scratch, chunk_rows + 1);
  int32_t* picked = pick_by_index ? scratch_of<int32_t>(scratch, chunk_rows * k) : nullptr;
  int32_t* picked_alt = pick_by_index ? scratch_of<int32_t>(scratch, chunk_rows * k) : nullptr;
  int32_t* picked_offsets = pick_by_index ? scratch_of<int32_t>(scratch, chunk_rows + 1) : nullptr;
  TempStorage temp(scratch);
  const U* in = static_cast<const U*>(q.in);

  for (int64_t row0 = 0; row0 < q.rows; row0 += chunk_rows) {
    const int64_t c = std::min(chunk_rows, q.rows - row0);
    const int64_t items = c * n;
    make_keys_kernel<U><<<grid_blocks(items), kBlockThreads, 0, stream>>>(in, q.starts, row0, n, q.in_stride, items,
                                                                          rule, keys, positions);
    ANATOMY_CUDA_LAUNCH_CHECK();

    const int32_t* order = nullptr;
    if (per_row) {
      size_t bytes = 0;
      ANATOMY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, keys_alt, positions, positions_alt,
                                                         n, 0, static_cast<int>(8 * sizeof(U)), stream));
      void* storage = temp.get(bytes);
      for (int64_t r = 0; r < c; ++r) {
        ANATOMY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(storage, bytes, keys + r * n, keys_alt + r * n,
                                                           positions + r * n, positions_alt + r * n, n, 0,
                                                           static_cast<int>(8 * sizeof(U)), stream));
      }
      order = positions_alt;
    } else {
      fill_row_offsets(offsets, c, n, stream);
      size_t bytes = 0;
      {
        cub::DoubleBuffer<U> kb(keys, keys_alt);
        cub::DoubleBuffer<int32_t> vb(positions, positions_alt);
        ANATOMY_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(nullptr, bytes, kb, vb, items, c, offsets,
                                                                     offsets + 1, stream));
      }
      cub::DoubleBuffer<U> kb(keys, keys_alt);
      cub::DoubleBuffer<int32_t> vb(positions, positions_alt);
      ANATOMY_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(temp.get(bytes), bytes, kb, vb, items, c, offsets,
                                                                   offsets + 1, stream));
      order = vb.Current();
    }

    int64_t pitch = n;
    if (pick_by_index) {
      const int64_t picked_items = c * k;
      take_first_kernel<<<grid_blocks(picked_items), kBlockThreads, 0, stream>>>(order, n, k, picked_items, picked);
      ANATOMY_CUDA_LAUNCH_CHECK();
      fill_row_offsets(picked_offsets, c, k, stream);
      size_t bytes = 0;
      {
        cub::DoubleBuffer<int32_t> pb(picked, picked_alt);
        ANATOMY_CUDA_CHECK(cub::DeviceSegmentedSort::SortKeys(nullptr, bytes, pb, picked_items, c, picked_offsets,
                                                              picked_offsets + 1, stream));
      }
      cub::DoubleBuffer<int32_t> pb(picked, picked_alt);
      ANATOMY_CUDA_CHECK(cub::DeviceSegmentedSort::SortKeys(temp.get(bytes), bytes, pb, picked_items, c,
                                                            picked_offsets, picked_offsets + 1, stream));
      order = pb.Current();
      pitch = k;
    }

    const int64_t out_items = c * k;
    gather_kernel<U><<<grid_blocks(out_items), kBlockThreads, 0, stream>>>(
        in, static_cast<U*>(q.values), q.indices, q.starts, row0, order, pitch, k, out_items, q.in_stride,
        q.out_stride);
    ANATOMY_CUDA_LAUNCH_CHECK();
  }
  return true;
}

}  // namespace

bool launch_sort_rows(const SortRows& q, const ScratchFn& scratch, cudaStream_t stream) {
  const bool d = q.descending;
  switch (q.dtype) {
    case DType::Bool:
      return sort_rows<uint8_t>(q, {KeyKind::Bool, 0, d}, scratch, stream);
    case DType::UInt8:
      return sort_rows<uint8_t>(q, {KeyKind::Unsigned, 0, d}, scratch, stream);
    case DType::Int8:
      return sort_rows<uint8_t>(q, {KeyKind::Signed, 0, d}, scratch, stream);
    case DType::Int32:
      return sort_rows<uint32_t>(q, {KeyKind::Signed, 0, d}, scratch, stream);
    case DType::Int64:
      return sort_rows<uint64_t>(q, {KeyKind::Signed, 0, d}, scratch, stream);
    case DType::Float16:
      return sort_rows<uint16_t>(q, {KeyKind::Float, 0x7C00, d}, scratch, stream);
    case DType::BFloat16:
      return sort_rows<uint16_t>(q, {KeyKind::Float, 0x7F80, d}, scratch, stream);
    case DType::Float32:
      return sort_rows<uint32_t>(q, {KeyKind::Float, 0x7F800000u, d}, scratch, stream);
    case DType::Float64:
      return sort_rows<uint64_t>(q, {KeyKind::Float, 0x7FF0000000000000ull, d}, scratch, stream);
  }
  return false;
}

}  // namespace anatomy::cuda
