// CUDA: uniform_, normal_ and random_.from from the CUDA default generator's Philox stream. The
// argument checks and errors are the CPU's (dispatch/ops/random_args.h), made before any counter
// is reserved, so a rejected call leaves the tensor and the generator as they were. The kernels
// (random.cu) give element i, in row-major order of the shape, block i past the reserved offset:
// with the same seed and offset as the CPU generator, the same numbers.
//
// The CUDA generator is default_generator(DeviceType::CUDA), separate from the CPU's (as in
// PyTorch), one for all CUDA devices; manual_seed seeds both. While a CUDA graph captures the
// stream, the counters come from the graph instead (Note [Random numbers in CUDA graphs]).
#include <cmath>
#include <limits>

#include "anatomy/backends/cuda/common/make_strided_layout.h"
#include "anatomy/backends/cuda/random/launch.h"
#include "anatomy/backends/cuda/runtime/capture.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/core/dtype_visit.h"
#include "anatomy/core/empty_tensor.h"
#include "anatomy/core/generator.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops/random_args.h"

namespace anatomy::cuda {
namespace {

// Checks the output, reserves numel counters and launches `launch(out, position, stream)`. The
// layout is built before the reservation: a tensor the kernels cannot take (too many dims)
// raises with the generator untouched.
template <typename Launch>
void fill_random(const Tensor& self, const char* op, Launch&& launch) {
  check_no_internal_overlap(self, op);
  RandomOutput out;
  out.data = self.data_ptr();
  out.dtype = self.dtype();
  out.numel = self.numel();
  out.contiguous = self.is_contiguous();
  if (!out.contiguous && out.numel > 0) out.layout = make_strided_layout<1>(self.sizes(), {self.strides()}, op);
  DeviceGuard guard(self.device());
  PhiloxPosition pos;
  CaptureRng* graph = captures_underway() ? capture_rng(current_stream()) : nullptr;
  if (ANATOMY_UNLIKELY(graph != nullptr)) {  // Note [Random numbers in CUDA graphs]
    pos = {0, graph->reserve(static_cast<uint64_t>(out.numel)), graph->device_state};
  } else {
    Generator& gen = default_generator(DeviceType::CUDA);
    pos = {gen.seed(), gen.reserve(static_cast<uint64_t>(out.numel))};
  }
  if (out.numel > 0) {
    launch(out, pos, current_stream());
  }
  self.impl()->bump_version();
}

Tensor uniform_cuda(const Tensor& self, double from, double to) {
  check_uniform_args(self.dtype(), from, to);
  fill_random(self, "uniform_", [&](const RandomOutput& out, PhiloxPosition pos, cudaStream_t stream) {
    launch_uniform(out, pos, from, to - from, stream);
  });
  return self;
}

Tensor normal_cuda(const Tensor& self, double mean, double std) {
  check_normal_args(self.dtype(), std);
  fill_random(self, "normal_", [&](const RandomOutput& out, PhiloxPosition pos, cudaStream_t stream) {
    launch_normal(out, pos, mean, std, stream);
  });
  return self;
}

Tensor random_cuda(const Tensor& self, int64_t from, std::optional<int64_t> to) {
  // A range of 2^64 is 0, which the kernel reads as "the raw bits".
  const uint64_t range = random_range(self.dtype(), from, to);
  fill_random(self, "random_", [&](const RandomOutput& out, PhiloxPosition pos, cudaStream_t stream) {
    launch_random(out, pos, from, range, stream);
  });
  return self;
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) {
  m.impl("uniform_", ANATOMY_KERNEL(uniform_cuda));
  m.impl("normal_", ANATOMY_KERNEL(normal_cuda));
  m.impl("random_.from", ANATOMY_KERNEL(random_cuda));
}

}  // namespace anatomy::cuda
