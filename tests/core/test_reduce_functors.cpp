// The reduce functors every backend runs (dispatch/ops/reduce_functors.h), on the host: the rules
// that must not depend on the order an engine combines partial results in.
#include <cmath>
#include <limits>
#include <vector>

#include "anatomy/dispatch/ops/reduce_functors.h"
#include "test_util.h"

using namespace anatomy;
using namespace anatomy::reduction;

namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

// Folds `xs` from index `base` into one partial, as one engine lane would.
template <typename Fn, typename T>
typename Fn::acc_t fold(const Fn& fn, const std::vector<T>& xs, int64_t begin, int64_t end) {
  typename Fn::acc_t a = fn.identity();
  for (int64_t i = begin; i < end; ++i) a = fn.step(a, xs[static_cast<size_t>(i)], i);
  return a;
}

}  // namespace

TEST_CASE("reduce functors: argmax keeps the first extreme and the first NaN, in either combine order") {
  const ArgExtremeFn<float, true> fn{};
  const std::vector<float> ties = {1, 3, 2, 3, 3};
  for (int64_t split = 0; split <= 5; ++split) {
    CAPTURE(split);
    const auto lo = fold(fn, ties, 0, split), hi = fold(fn, ties, split, 5);
    CHECK(fn.combine(lo, hi).index == 1);
    CHECK(fn.combine(hi, lo).index == 1);
  }
  const std::vector<float> nans = {1, kNaN, 5, kNaN};
  const auto lo = fold(fn, nans, 0, 2), hi = fold(fn, nans, 2, 4);
  CHECK(fn.combine(hi, lo).index == 1);
  CHECK(std::isnan(fn.combine(lo, hi).value));
  // The empty partial is no candidate, even against the worst value.
  const std::vector<float> lowest = {-kInf};
  CHECK(fn.combine(fn.identity(), fold(fn, lowest, 0, 1)).index == 0);
  CHECK(ArgExtremeFn<int8_t, false>{}.combine({-128, 4}, {-128, 2}).index == 2);
}

TEST_CASE("reduce functors: identities are the worst values and the neutral elements") {
  CHECK(ExtremeFn<int8_t, true>{}.identity() == -128);
  CHECK(ExtremeFn<int8_t, false>{}.identity() == 127);
  CHECK(ExtremeFn<uint8_t, false>{}.identity() == 255);
  CHECK(ExtremeFn<int64_t, true>{}.identity() == std::numeric_limits<int64_t>::lowest());
  CHECK(ExtremeFn<bool, true>{}.identity() == false);
  CHECK(ExtremeFn<double, false>{}.identity() == std::numeric_limits<double>::infinity());
  CHECK(ExtremeFn<Half, true>{}.identity() == -kInf);  // compared in float
  CHECK(std::isnan(ExtremeFn<float, true>{}.combine(2.0f, kNaN)));
  CHECK(std::isnan(ExtremeFn<float, false>{}.combine(kNaN, 2.0f)));
  CHECK(SumFn<int8_t>{1}.identity() == 0);
  CHECK(ProdFn<Half>{}.identity() == 1.0f);
  CHECK(AnyAllFn<float, false>{}.identity());
}

TEST_CASE("reduce functors: Welford's partials merged by Chan's formula give the sequential variance") {
  // Values near 1e8: sum(x^2) - sum(x)^2 / n would lose every digit of the variance in fp64.
  const VarFn<double> var{1, false};
  const std::vector<double> xs = {1e8 + 1, 1e8 + 2, 1e8 + 4, 1e8 + 7, 1e8 + 11};
  const double whole = var.project(fold(var, xs, 0, 5));
  CHECK(whole == doctest::Approx(16.5).epsilon(1e-6));
  for (int64_t split = 0; split <= 5; ++split) {
    CAPTURE(split);
    CHECK(var.project(var.combine(fold(var, xs, 0, split), fold(var, xs, split, 5))) ==
          doctest::Approx(whole).epsilon(1e-6));
  }
  // N <= correction: divided by max(0, N - correction).
  const std::vector<double> one = {3};
  CHECK(std::isnan(var.project(fold(var, one, 0, 1))));
  CHECK(VarFn<double>{0.5, true}.project(fold(var, one, 0, 1)) == 0);
  CHECK(std::isinf(VarFn<double>{2, false}.project(fold(var, std::vector<double>{1, 2}, 0, 2))));
}

TEST_CASE("reduce functors: logsumexp shifts by the max and keeps infinities and NaN") {
  const LogSumExpFn<float> fn{};
  const std::vector<float> big = {1000, 1000};
  CHECK(fn.project(fold(fn, big, 0, 2)) == doctest::Approx(1000 + std::log(2.0f)));
  CHECK(fn.project(fn.combine(fold(fn, big, 1, 2), fold(fn, big, 0, 1))) == doctest::Approx(1000 + std::log(2.0f)));
  CHECK(fn.project(fn.identity()) == -kInf);
  CHECK(fn.project(fold(fn, std::vector<float>{-kInf, -kInf}, 0, 2)) == -kInf);
  CHECK(fn.project(fold(fn, std::vector<float>{kInf, 1, kInf}, 0, 3)) == kInf);
  CHECK(std::isnan(fn.project(fold(fn, std::vector<float>{1, kNaN, kInf}, 0, 3))));
}

TEST_CASE("reduce functors: norms and mean's single division") {
  const std::vector<float> xs = {3, -4};
  CHECK(NormFn<float, NormKind::Two>{2}.project(fold(NormFn<float, NormKind::Two>{2}, xs, 0, 2)) == 5);
  CHECK(NormFn<float, NormKind::One>{1}.project(fold(NormFn<float, NormKind::One>{1}, xs, 0, 2)) == 7);
  CHECK(NormFn<float, NormKind::Inf>{kInf}.project(fold(NormFn<float, NormKind::Inf>{kInf}, xs, 0, 2)) == 4);
  CHECK(NormFn<float, NormKind::NegInf>{-kInf}.project(fold(NormFn<float, NormKind::NegInf>{-kInf}, xs, 0, 2)) == 3);
  CHECK(NormFn<float, NormKind::Zero>{0}.project(fold(NormFn<float, NormKind::Zero>{0}, xs, 0, 2)) == 2);
  const NormFn<double, NormKind::P> p3{3};
  CHECK(p3.project(fold(p3, std::vector<double>{1, 2}, 0, 2)) == doctest::Approx(std::cbrt(9.0)));
  CHECK(std::isnan(NormFn<float, NormKind::Inf>{kInf}.combine(kNaN, 1)));
  const SumFn<Half> mean{4};
  CHECK(mean.project(fold(mean, std::vector<Half>{Half(1.0f), Half(2.0f), Half(3.0f), Half(4.0f)}, 0, 4)) == 2.5f);
  const SumFn<int8_t> wrap{1};
  CHECK(wrap.project(fold(wrap, std::vector<int8_t>{127, 127}, 0, 2)) == 254);  // int64 accumulator
  // visit_norm_kind picks the kernel the p names.
  std::vector<NormKind> seen;
  for (double p : {2.0, 1.0, 0.0, 3.5, static_cast<double>(kInf), -static_cast<double>(kInf)}) {
    visit_norm_kind(p, [&]<NormKind K>() { seen.push_back(K); });
  }
  CHECK(seen == std::vector<NormKind>{NormKind::Two, NormKind::One, NormKind::Zero, NormKind::P, NormKind::Inf,
                                      NormKind::NegInf});
}
