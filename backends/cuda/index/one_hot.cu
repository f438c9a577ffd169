// CUDA kernels of one_hot: the min/max reduction behind num_classes = -1 (CUB, deterministic),
// and the writing kernel, one thread per output element, which compares instead of indexing:
// out[i, c] = in[i] == c. No address is ever computed from a class value (Note [Bad indices on
// the device], index_error.h), so a bad value cannot touch memory; it is reported once per row.
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cub/device/device_reduce.cuh>

#include <cstdint>
#include <limits>

#include "anatomy/backends/cuda/common/launch_config.h"
#include "anatomy/backends/cuda/index/launch.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"

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

// Small on purpose: CUB copies its input iterator for every item.
struct ValueAsMinMax {
  const int64_t* in;
  int64_t stride;
  ANATOMY_HOST_DEVICE MinMax operator()(int64_t i) const { return {in[i * stride], in[i * stride]}; }
};

__global__ void one_hot_kernel(const int64_t* in, int64_t stride, int64_t total, int64_t num_classes, int64_t* out,
                               IndexErrorSink sink) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < total; j += step) {
    const int64_t i = j / num_classes, c = j - i * num_classes;
    const int64_t v = in[i * stride];
    if (c == 0 && (v < 0 || v >= num_classes)) sink.report(IndexErrorKind::ClassOutOfRange, v, num_classes, 0);
    out[j] = v == c ? 1 : 0;
  }
}

// num_classes 0 with a value: every value is out of range; the first one is reported.
__global__ void one_hot_no_classes_kernel(const int64_t* in, IndexErrorSink sink) {
  sink.report(IndexErrorKind::ClassOutOfRange, in[0], 0, 0);
}

}  // namespace

void one_hot_min_max(void* temp, size_t& temp_bytes, const int64_t* in, int64_t stride, int64_t numel, int64_t* min_max,
                     cudaStream_t stream) {
  const auto values =
      thrust::make_transform_iterator(thrust::make_counting_iterator<int64_t>(0), ValueAsMinMax{in, stride});
  const MinMax init{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  ANATOMY_CUDA_CHECK(cub::DeviceReduce::Reduce(temp, temp_bytes, values, reinterpret_cast<MinMax*>(min_max), numel,
                                               MinMaxOp{}, init, stream));
}

void launch_one_hot(const int64_t* in, int64_t stride, int64_t numel, int64_t num_classes, int64_t* out,
                    const IndexErrorSink& sink, cudaStream_t stream) {
  if (numel == 0) return;
  if (num_classes == 0) {
    one_hot_no_classes_kernel<<<1, 1, 0, stream>>>(in, sink);
  } else {
    const int64_t total = numel * num_classes;
    one_hot_kernel<<<grid_blocks(total), kBlockThreads, 0, stream>>>(in, stride, total, num_classes, out, sink);
  }
  ANATOMY_CUDA_LAUNCH_CHECK();
}

}  // namespace anatomy::cuda
