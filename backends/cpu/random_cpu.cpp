// CPU: uniform_, normal_ and random_ from the default generator's Philox stream. Element i of
// the tensor (in row-major order of its shape) uses block i past the reserved offset, as
// core/philox.h specifies, so CUDA kernels reproduce the same values.
#include <cmath>
#include <limits>

#include "anatomy/core/dtype_visit.h"
#include "anatomy/core/empty_tensor.h"
#include "anatomy/core/generator.h"
#include "anatomy/core/philox.h"
#include "anatomy/core/strided_loop.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops/random_args.h"

namespace anatomy::cpu {
namespace {

// Writes value_of(block, T-tag) into every element of self, element i getting block i.
template <typename Fn>
void fill_random(const Tensor& self, const char* op, Fn&& value_of) {
  check_no_internal_overlap(self, op);
  Generator& gen = default_generator(DeviceType::CPU);
  uint64_t seed = gen.seed();
  uint64_t offset = gen.reserve(static_cast<uint64_t>(self.numel()));
  visit_dtype(self.dtype(), op, [&]<typename T>() {
    T* data = static_cast<T*>(self.data_ptr());
    uint64_t i = 0;
    for_each_strided<1>(self.sizes(), {self.strides()}, [&](const std::array<int64_t, 1>& o) {
      data[o[0]] = value_of.template operator()<T>(philox_element_block(seed, offset, i++));
    });
  });
  self.impl()->bump_version();
}

Tensor uniform_cpu(const Tensor& self, double from, double to) {
  check_uniform_args(self.dtype(), from, to);
  fill_random(self, "uniform_", [&]<typename T>(const Philox4x32Result& r) {
    double u = philox_uniform_bits<mantissa_digits<T>()>(r);
    return convert<T>(from + (to - from) * u);
  });
  return self;
}

Tensor normal_cpu(const Tensor& self, double mean, double std) {
  check_normal_args(self.dtype(), std);
  fill_random(self, "normal_",
              [&]<typename T>(const Philox4x32Result& r) { return convert<T>(mean + std * philox_normal(r)); });
  return self;
}

Tensor random_cpu(const Tensor& self, int64_t from, std::optional<int64_t> to) {
  const uint64_t range = random_range(self.dtype(), from, to);
  fill_random(self, "random_", [&]<typename T>(const Philox4x32Result& r) {
    uint64_t bits = philox_u64(r);
    // Modulo has a bias below 2^-32 for ranges under 2^32; a range of 2^64 (range == 0 after
    // wrapping) takes the raw bits.
    int64_t v = static_cast<int64_t>(static_cast<uint64_t>(from) + (range == 0 ? bits : bits % range));
    return convert<T>(v);
  });
  return self;
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) {
  m.impl("uniform_", ANATOMY_KERNEL(uniform_cpu));
  m.impl("normal_", ANATOMY_KERNEL(normal_cpu));
  m.impl("random_.from", ANATOMY_KERNEL(random_cpu));
}

}  // namespace anatomy::cpu
