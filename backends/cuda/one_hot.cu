// CUDA kernels of one_hot: the min/max reduction behind num_classes = -1 (CUB, deterministic),
// and the writing kernel, one thread per output element, which compares instead of indexing:
// out[i, c] = in[i] == c. No address is ever computed from a class value (Note [Bad indices on
// the device], index_error.h), so a bad value cannot touch memory; it is reported once per row.
#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cstdint>
#include <limits>

#include "anatomy/backends/cuda/cuda_check.h"
#include "anatomy/backends/cuda/launch_config.h"
#include "anatomy/backends/cuda/one_hot.h"
#include "anatomy/backends/cuda/strided_offsets.cuh"

namespace anatomy::cuda {
namespace {

struct MinMax {
  int64_t lo;
  int64_t hi;
};

struct MinMaxOp {
  ANATOMY_HOST_DEVICE MinMax operator()(const MinMax& a, const MinMax& b) const {
    return {a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi};
  }
};

struct ValueAsMinMax {
  const int64_t* in;
  StridedLayout<1> layout;
  ANATOMY_HOST_DEVICE MinMax operator()(int64_t i) const {
    int64_t o[1];
    strided_offsets(layout, i, o);
    return {in[o[0]], in[o[0]]};
  }
};

__global__ void one_hot_kernel(const int64_t* in, StridedLayout<1> layout, int64_t total, int64_t num_classes,
                               int64_t* out, IndexErrorSink sink) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < total; j += step) {
    const int64_t i = j / num_classes, c = j - i * num_classes;
    int64_t o[1];
    strided_offsets(layout, i, o);
    const int64_t v = in[o[0]];
    if (c == 0 && (v < 0 || v >= num_classes)) sink.report(IndexErrorKind::ClassOutOfRange, v, num_classes, 0);
    out[j] = v == c ? 1 : 0;
  }
}

// num_classes 0 with a value: every value is out of range; the first one is reported.
__global__ void one_hot_no_classes_kernel(const int64_t* in, IndexErrorSink sink) {
  sink.report(IndexErrorKind::ClassOutOfRange, in[0], 0, 0);
}

}  // namespace

void one_hot_min_max(void* temp, size_t& temp_bytes, const int64_t* in, const StridedLayout<1>& layout, int64_t numel,
                     int64_t* min_max, cudaStream_t stream) {
  const auto values = thrust::make_transform_iterator(thrust::make_counting_iterator<int64_t>(0),
                                                      ValueAsMinMax{in, layout});
  const MinMax init{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  ANATOMY_CUDA_CHECK(cub::DeviceReduce::Reduce(temp, temp_bytes, values, reinterpret_cast<MinMax*>(min_max), numel,
                                               MinMaxOp{}, init, stream));
}

void launch_one_hot(const int64_t* in, const StridedLayout<1>& layout, int64_t numel, int64_t num_classes,
                    int64_t* out, const IndexErrorSink& sink, cudaStream_t stream) {
  if (numel == 0) return;
  if (num_classes == 0) {
    // Element 0 of the layout is at offset 0.
    one_hot_no_classes_kernel<<<1, 1, 0, stream>>>(in, sink);
  } else {
    const int64_t total = numel * num_classes;
    one_hot_kernel<<<grid_blocks(total), kBlockThreads, 0, stream>>>(in, layout, total, num_classes, out, sink);
  }
  ANATOMY_CUDA_LAUNCH_CHECK();
}

}  // namespace anatomy::cuda
