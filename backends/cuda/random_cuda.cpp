// CUDA: uniform_, normal_ and random_.from from the CUDA default generator's Philox stream. The
// argument checks and errors are the CPU's (backends/cpu/random_cpu.cpp), made before any counter
// is reserved, so a rejected call leaves the tensor and the generator as they were. The kernels
// (random.cu) give element i, in row-major order of the shape, block i past the reserved offset:
// with the same seed and offset as the CPU generator, the same numbers.
//
// The CUDA generator is default_generator(DeviceType::CUDA), separate from the CPU's (as in
// PyTorch), one for all CUDA devices; manual_seed seeds both.
#include <cmath>
#include <limits>

#include "anatomy/backends/cuda/current_stream.h"
#include "anatomy/backends/cuda/device.h"
#include "anatomy/backends/cuda/make_strided_layout.h"
#include "anatomy/backends/cuda/random.h"
#include "anatomy/core/dtype_visit.h"
#include "anatomy/core/empty_tensor.h"
#include "anatomy/core/generator.h"
#include "anatomy/dispatch/library.h"

namespace anatomy::cuda {
namespace {

template <typename T>
constexpr int mantissa_digits() {
  if constexpr (std::is_same_v<T, Half>) return 11;
  else if constexpr (std::is_same_v<T, BFloat16>) return 8;
  else if constexpr (std::is_same_v<T, float>) return 24;
  else return 53;
}

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
  Generator& gen = default_generator(DeviceType::CUDA);
  PhiloxPosition pos{gen.seed(), gen.reserve(static_cast<uint64_t>(out.numel))};
  if (out.numel > 0) {
    DeviceGuard guard(self.device());
    launch(out, pos, current_stream());
  }
  self.impl()->bump_version();
}

Tensor uniform_cuda(const Tensor& self, double from, double to) {
  ANATOMY_CHECK(is_floating(self.dtype()), TypeError, "uniform_: needs a floating tensor, got {}", name(self.dtype()));
  ANATOMY_CHECK(from <= to && std::isfinite(from) && std::isfinite(to), ValueError,
                "uniform_: expects from <= to and both finite, got from={} to={}", from, to);
  fill_random(self, "uniform_", [&](const RandomOutput& out, PhiloxPosition pos, cudaStream_t stream) {
    launch_uniform(out, pos, from, to - from, stream);
  });
  return self;
}

Tensor normal_cuda(const Tensor& self, double mean, double std) {
  ANATOMY_CHECK(is_floating(self.dtype()), TypeError, "normal_: needs a floating tensor, got {}", name(self.dtype()));
  ANATOMY_CHECK(std >= 0.0 && std::isfinite(std), ValueError, "normal_: std must be finite and >= 0, got {}", std);
  fill_random(self, "normal_", [&](const RandomOutput& out, PhiloxPosition pos, cudaStream_t stream) {
    launch_normal(out, pos, mean, std, stream);
  });
  return self;
}

// As random_cpu.cpp: the largest integer random_ may produce (the dtype's max; 2^digits for
// floats, up to which every integer is exact) and the smallest.
int64_t random_upper_limit(DType t) {
  return visit_dtype(t, "random_", [&]<typename T>() -> int64_t {
    if constexpr (std::is_same_v<T, bool>) return 1;
    else if constexpr (std::is_integral_v<T>) return static_cast<int64_t>(std::numeric_limits<T>::max());
    else return int64_t{1} << mantissa_digits<T>();
  });
}

Tensor random_cuda(const Tensor& self, int64_t from, std::optional<int64_t> to) {
  int64_t limit = random_upper_limit(self.dtype());
  int64_t lowest = visit_dtype(self.dtype(), "random_", [&]<typename T>() -> int64_t {
    if constexpr (std::is_integral_v<T>) return static_cast<int64_t>(std::numeric_limits<T>::lowest());
    else return -limit;
  });
  ANATOMY_CHECK(from >= lowest, ValueError, "random_: from={} is below the smallest {} value {}", from,
                name(self.dtype()), lowest);
  // `to` is exclusive; without it the range ends at the dtype's limit (inclusive). A range of
  // 2^64 wraps to 0, which the kernel reads as "the raw bits".
  uint64_t range;
  if (to) {
    ANATOMY_CHECK(from < *to, ValueError, "random_: expects from < to, got from={} to={}", from, *to);
    ANATOMY_CHECK(*to - 1 <= limit, ValueError, "random_: to - 1 = {} is above the largest {} value {}", *to - 1,
                  name(self.dtype()), limit);
    range = static_cast<uint64_t>(*to) - static_cast<uint64_t>(from);
  } else {
    range = static_cast<uint64_t>(limit) - static_cast<uint64_t>(from) + 1;
  }
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
