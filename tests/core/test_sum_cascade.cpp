// The cascade sum's copies (backends/cpu/sum_cascade.h): the baseline, AVX2 and AVX-512 copies give
// the same bits as each other and as the generic cascade (reduce_loops.h with SumFn), at lengths
// around the lane count and the block, for fp32 and fp64, with signed zeros, infinities and NaN
// in the input.
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "anatomy/backends/cpu/sum_cascade.h"
#include "test_util.h"

using namespace anatomy;
using anatomy::cpu::kSumLanes;

namespace {

// The generic cascade's arithmetic, written out: blocks split at the middle block boundary; in a
// block accumulator i % 16, the tail, then pairwise.
template <typename T>
T lanes_reference(const T* x, int64_t n) {
  if (n > cpu::kSumBlock) {
    const int64_t half = (n / 2 + cpu::kSumBlock - 1) / cpu::kSumBlock * cpu::kSumBlock;
    return lanes_reference(x, half) + lanes_reference(x + half, n - half);
  }
  std::vector<T> acc(kSumLanes, T(0));
  int64_t i = 0;
  for (; i + kSumLanes <= n; i += kSumLanes) {
    for (int64_t j = 0; j < kSumLanes; ++j) acc[j] = acc[j] + x[i + j];
  }
  for (int64_t j = 0; i + j < n; ++j) acc[j] = acc[j] + x[i + j];
  for (int64_t w = kSumLanes / 2; w > 0; w /= 2) {
    for (int64_t j = 0; j < w; ++j) acc[j] = acc[j] + acc[j + w];
  }
  return acc[0];
}

template <typename T>
bool same_bits(T a, T b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::bit_cast<std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>(a) ==
         std::bit_cast<std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>(b);
}

template <typename T, typename Pick>
void check_copies(const Pick& pick) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<cpu::SumCascadeCopies> copies = {cpu::sum_cascade_baseline(), cpu::sum_cascade_avx2(),
                                               cpu::sum_cascade_avx512()};
  for (int64_t n : {0, 1, 7, 15, 16, 17, 31, 33, 100, 1000, 2047, 2048, 2049, 5000, 65536 + 3}) {
    for (int kind = 0; kind < 4; ++kind) {
      std::vector<T> x(n);
      for (int64_t i = 0; i < n; ++i) {
        // Values of very different sizes, so that any change of order changes the rounding.
        x[i] = static_cast<T>(normal(rng) * std::pow(10.0, static_cast<double>(i % 9)));
      }
      if (n > 3 && kind == 1) x[n / 2] = -0.0;
      if (n > 3 && kind == 2) x[n / 3] = std::numeric_limits<T>::infinity();
      if (n > 3 && kind == 3) x[1] = std::numeric_limits<T>::quiet_NaN();
      const T want = lanes_reference(x.data(), n);
      for (const cpu::SumCascadeCopies& c : copies) {
        const auto f = pick(c);
        if (f == nullptr) continue;  // this CPU lacks the copy's instructions
        CAPTURE(n);
        CAPTURE(kind);
        CHECK(same_bits(f(x.data(), n), want));
      }
      CHECK(same_bits(cpu::sum_cascade(x.data(), n), want));
    }
  }
}

}  // namespace

TEST_CASE("sum cascade: every copy gives the generic cascade's bits, fp32 and fp64") {
  check_copies<float>([](const cpu::SumCascadeCopies& c) { return c.f32; });
  check_copies<double>([](const cpu::SumCascadeCopies& c) { return c.f64; });
  const bool has_baseline = cpu::sum_cascade_baseline().f32 != nullptr;
  CHECK(has_baseline);
}
