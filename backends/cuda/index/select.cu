// CUDA kernels of nonzero and masked_select (launch.h): CUB's DeviceReduce::Sum over selection
// flags for the count, and DeviceSelect::Flagged, which keeps the selected items in their order,
// for the result. The inputs are read in place through transform iterators over the row-major
// index; each holds a pointer and a stride only (16 bytes), since CUB copies iterators around
// per item: one holding a whole StridedLayout would make nonzero many times slower.
// Both CUB algorithms are deterministic: integer sums and an order-preserving compaction.
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_select.cuh>

#include "anatomy/backends/cuda/common/launch_config.h"
#include "anatomy/backends/cuda/index/launch.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"

namespace anatomy::cuda {
namespace {

// The bits that make an element nonzero: all of them, or all but the sign bit of a float.
template <typename Word>
Word value_bits_mask(bool floating) {
  const Word all = static_cast<Word>(~Word{0});
  return floating ? static_cast<Word>(all >> 1) : all;
}

// 1 when element i (row-major) of a strided tensor is nonzero, else 0.
template <typename Word>
struct NonzeroFlag {
  const Word* data;
  int64_t stride;
  Word value_mask;
  ANATOMY_HOST_DEVICE int64_t operator()(int64_t i) const { return (data[i * stride] & value_mask) != 0 ? 1 : 0; }
};

// 1 when the mask element of row-major index i is true, else 0.
struct MaskFlag {
  const uint8_t* mask;
  int64_t stride;
  ANATOMY_HOST_DEVICE int64_t operator()(int64_t i) const { return mask[i * stride] != 0 ? 1 : 0; }
};

// Self's element at row-major index i.
template <typename Word>
struct StridedValue {
  const Word* data;
  int64_t stride;
  ANATOMY_HOST_DEVICE Word operator()(int64_t i) const { return data[i * stride]; }
};

template <typename F>
auto over_indices(F f) {
  return thrust::make_transform_iterator(thrust::make_counting_iterator<int64_t>(0), f);
}

// Calls f.template operator()<Word>() for the unsigned word of element_size bytes.
template <typename F>
void with_word(size_t element_size, const char* what, F&& f) {
  switch (element_size) {
    case 1:
      return f.template operator()<uint8_t>();
    case 2:
      return f.template operator()<uint16_t>();
    case 4:
      return f.template operator()<uint32_t>();
    case 8:
      return f.template operator()<uint64_t>();
  }
  detail::throw_cuda_error(cudaErrorInvalidValue, what, __FILE__, __LINE__);
}

__global__ void nonzero_coordinates_kernel(const int64_t* positions, int64_t count, RowMajorShape shape, int64_t* out) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < count; k += step) {
    int64_t rem = positions[k];
    int64_t* row = out + k * shape.ndim;
    for (int d = shape.ndim - 1; d >= 0; --d) {
      row[d] = rem % shape.sizes[d];
      rem /= shape.sizes[d];
    }
  }
}

}  // namespace

void nonzero_count(void* temp, size_t& temp_bytes, const void* data, int64_t stride, size_t element_size, bool floating,
                   int64_t numel, int64_t* count, cudaStream_t stream) {
  with_word(element_size, "nonzero_count: element size is not 1, 2, 4 or 8", [&]<typename Word>() {
    const auto flags =
        over_indices(NonzeroFlag<Word>{static_cast<const Word*>(data), stride, value_bits_mask<Word>(floating)});
    ANATOMY_CUDA_CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, flags, count, numel, stream));
  });
}

void nonzero_positions(void* temp, size_t& temp_bytes, const void* data, int64_t stride, size_t element_size,
                       bool floating, int64_t numel, int64_t* positions, int64_t* num_selected, cudaStream_t stream) {
  with_word(element_size, "nonzero_positions: element size is not 1, 2, 4 or 8", [&]<typename Word>() {
    const auto flags =
        over_indices(NonzeroFlag<Word>{static_cast<const Word*>(data), stride, value_bits_mask<Word>(floating)});
    ANATOMY_CUDA_CHECK(cub::DeviceSelect::Flagged(temp, temp_bytes, thrust::make_counting_iterator<int64_t>(0), flags,
                                                  positions, num_selected, numel, stream));
  });
}

void launch_nonzero_coordinates(const int64_t* positions, int64_t count, const RowMajorShape& shape, int64_t* out,
                                cudaStream_t stream) {
  nonzero_coordinates_kernel<<<grid_blocks(count), kBlockThreads, 0, stream>>>(positions, count, shape, out);
  ANATOMY_CUDA_LAUNCH_CHECK();
}

void masked_select_count(void* temp, size_t& temp_bytes, const uint8_t* mask, int64_t mask_stride, int64_t numel,
                         int64_t* count, cudaStream_t stream) {
  ANATOMY_CUDA_CHECK(
      cub::DeviceReduce::Sum(temp, temp_bytes, over_indices(MaskFlag{mask, mask_stride}), count, numel, stream));
}

void masked_select_values(void* temp, size_t& temp_bytes, const void* self, int64_t self_stride, size_t element_size,
                          const uint8_t* mask, int64_t mask_stride, int64_t numel, void* out, int64_t* num_selected,
                          cudaStream_t stream) {
  with_word(element_size, "masked_select_values: element size is not 1, 2, 4 or 8", [&]<typename Word>() {
    const auto values = over_indices(StridedValue<Word>{static_cast<const Word*>(self), self_stride});
    ANATOMY_CUDA_CHECK(cub::DeviceSelect::Flagged(temp, temp_bytes, values, over_indices(MaskFlag{mask, mask_stride}),
                                                  static_cast<Word*>(out), num_selected, numel, stream));
  });
}

}  // namespace anatomy::cuda
