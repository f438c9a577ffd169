// Reductions: accuracy (cascade summation, fp32 accumulation of fp16/bf16, a variance that does
// not cancel), determinism across thread counts, and exact values the op table cannot state.
#include <cmath>
#include <limits>

#include "test_util.h"

using namespace anatomy;
using namespace anatomy_test;

namespace {

// The fp64 sum of a contiguous fp32 tensor, by a plain loop.
double sum_fp64(const Tensor& t) {
  const float* p = static_cast<const float*>(t.data_ptr());
  double s = 0;
  for (int64_t i = 0; i < t.numel(); ++i) s += p[i];
  return s;
}

}  // namespace

TEST_CASE("sum of 16M fp32 ones is exact") {
  // A single fp32 accumulator stops at 16777216 = 2^24 (adding 1 no longer changes it) long
  // before 16M random values would be summed well; cascade summation keeps every partial small.
  const int64_t n = int64_t{1} << 24;
  Tensor ones = full({n}, 1.0, DType::Float32);
  CHECK(sum(ones).item<double>() == 16777216.0);
  Tensor more = full({n + 8}, 1.0, DType::Float32);  // 2^24 + 8 is a float (2^24 + 5 is not)
  CHECK(sum(more).item<double>() == 16777224.0);
  // Outer reduction: rows accumulated element-wise, also pairwise.
  Tensor rows = full({n / 2, 2}, 1.0, DType::Float32);
  CHECK(values(sum(rows, {0})) == D{8388608.0, 8388608.0});
}

TEST_CASE("fp32 sums of random data match an fp64 sum") {
  manual_seed(7);
  Tensor x = rand({int64_t{1} << 22}, DType::Float32);
  const double want = sum_fp64(x);
  CHECK(std::fabs(sum(x).item<double>() - want) <= 1e-6 * want);
  CHECK(std::fabs(mean(x).item<double>() - want / static_cast<double>(x.numel())) <= 1e-6 * want / x.numel());
  // The same data as [65536, 64] reduced over the outer dim, column by column.
  Tensor m = x.view({65536, 64});
  D got = values(sum(m, {0}));
  const float* p = static_cast<const float*>(x.data_ptr());
  for (int64_t j = 0; j < 64; ++j) {
    double w = 0;
    for (int64_t i = 0; i < 65536; ++i) w += p[i * 64 + j];
    CHECK(std::fabs(got[j] - w) <= 1e-6 * w);
  }
}

TEST_CASE("fp16 and bf16 sums accumulate in fp32") {
  // Accumulating in fp16 stalls at 2048 (2048 + 1 rounds back to 2048); in bf16 at 256.
  CHECK(sum(full({4096}, 1.0, DType::Float16)).item<double>() == 4096.0);
  CHECK(sum(full({1000}, 1.0, DType::BFloat16)).item<double>() == 1000.0);
  CHECK(sum(full({64, 4096}, 1.0, DType::Float16), {1}).dtype() == DType::Float16);
  CHECK(values(sum(full({4096, 2}, 1.0, DType::Float16), {0})) == D{4096.0, 4096.0});
  CHECK(mean(full({5000}, 0.5, DType::BFloat16)).item<double>() == 0.5);
}

TEST_CASE("var does not cancel a large common offset") {
  // sum(x^2)/n - mean^2 in fp32 would lose every digit of a variance of ~1/12 at an offset of 1e4.
  manual_seed(3);
  Tensor x = rand({100000}, DType::Float32) + 10000.0;
  const float* p = static_cast<const float*>(x.data_ptr());
  const double mu = sum_fp64(x) / 100000.0;
  double m2 = 0;
  for (int64_t i = 0; i < 100000; ++i) m2 += (p[i] - mu) * (p[i] - mu);
  const double want = m2 / 99999.0;
  CHECK(std::fabs(var(x).item<double>() - want) <= 1e-5 * want);
  CHECK(std::fabs(anatomy::std(x, std::nullopt, 0).item<double>() - std::sqrt(m2 / 100000.0)) <=
        1e-5 * std::sqrt(want));
}

TEST_CASE("reductions do not depend on the thread count") {
  manual_seed(11);
  Tensor x = randn({3000, 1000});
  const int threads = get_num_threads();
  const D all = values(sum(x)), rows = values(sum(x, {1})), cols = values(sum(x, {0}));
  set_num_threads(1);
  const D all1 = values(sum(x)), rows1 = values(sum(x, {1})), cols1 = values(sum(x, {0}));
  set_num_threads(threads);
  CHECK(all == all1);
  CHECK(rows == rows1);
  CHECK(cols == cols1);
}

TEST_CASE("empty reductions give the identity and extremes refuse empty input") {
  Tensor e = empty({0, 4});
  CHECK(sum(e).item<double>() == 0.0);
  CHECK(prod(e).item<double>() == 1.0);
  CHECK(std::isnan(mean(e).item<double>()));
  CHECK(values(sum(e, {0})) == D{0, 0, 0, 0});
  CHECK(vec(sum(e, {1}).sizes()) == V{0});
  CHECK(values(any(e, {0})) == D{0, 0, 0, 0});
  CHECK(values(all(e, {0})) == D{1, 1, 1, 1});
  CHECK(values(logsumexp(e, {0})) == D(4, -std::numeric_limits<double>::infinity()));
  EXPECT_ERROR(ValueError, max(e), "max", "numel");
  EXPECT_ERROR(ValueError, argmin(e), "argmin");
  EXPECT_ERROR(IndexError, amax(e, {0}), "amax");
  CHECK(vec(amax(e, {1}).sizes()) == V{0});
}

TEST_CASE("integer sums give int64 and wrap like two's complement") {
  Tensor x = full({3}, 100, DType::Int8);
  CHECK(sum(x).dtype() == DType::Int64);
  CHECK(sum(x).item<int64_t>() == 300);
  CHECK(prod(tensor({true, true})).dtype() == DType::Int64);
  CHECK(sum(x, {0}, false, DType::Int8).item<int64_t>() == 44);  // 300 wraps in int8
  Tensor big = full({2}, std::numeric_limits<int64_t>::max(), DType::Int64);
  CHECK(sum(big).item<int64_t>() == -2);
  EXPECT_ERROR(TypeError, mean(x), "mean", "int8");
  CHECK(mean(x, DType::Float32).item<double>() == 100.0);
}

TEST_CASE("max and argmax: NaN wins, ties go to the first index") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = tensor(std::vector<double>{1, nan, 3, nan}, {4}, DType::Float32);
  CHECK(std::isnan(max(x).item<double>()));
  CHECK(std::isnan(amin(x, {0}).item<double>()));
  CHECK(argmax(x).item<int64_t>() == 1);
  CHECK(argmin(x).item<int64_t>() == 1);
  Tensor ties = tensor(std::vector<double>{2, 5, 5, 1, 5}, {5}, DType::Float32);
  auto [v, i] = max(ties, 0);
  CHECK(v.item<double>() == 5.0);
  CHECK(i.item<int64_t>() == 1);
  // A long run with the maximum repeated in every lane: still the first.
  Tensor flat = zeros({100000});
  CHECK(argmax(flat).item<int64_t>() == 0);
  CHECK(argmin(flat.view({1000, 100}), 0).sizes() == IntArrayRef(V{100}));
  CHECK(values(argmin(flat.view({1000, 100}), 0)) == D(100, 0.0));
}

TEST_CASE("reductions on the meta device give shapes and dtypes") {
  Tensor m = empty({4, 5, 6}, TensorOptions().device(Device("meta")).dtype(DType::Int32));
  Tensor s = sum(m, {1}, true);
  CHECK(s.device().type() == DeviceType::Meta);
  CHECK(vec(s.sizes()) == V{4, 1, 6});
  CHECK(s.dtype() == DType::Int64);
  auto [v, i] = max(m, -1);
  CHECK(vec(i.sizes()) == V{4, 5});
  CHECK(i.dtype() == DType::Int64);
  EXPECT_ERROR(TypeError, mean(m), "mean");
  Tensor f = empty({4, 5, 6}, TensorOptions().device(Device("meta")));
  CHECK(vec(softmax(f, 1).sizes()) == V{4, 5, 6});
  auto [y, mu, rstd] = native_layer_norm(f, {6}, std::nullopt, std::nullopt, 1e-5);
  CHECK(vec(mu.sizes()) == V{4, 5, 1});
  CHECK(vec(rms_norm(f, {5, 6}).sizes()) == V{4, 5, 6});
  EXPECT_ERROR(ValueError, rms_norm(f, {5}), "rms_norm", "normalized_shape");
}

TEST_CASE("sum out= checks the output first") {
  Tensor x = ones({3, 4});
  Tensor out = zeros({3});
  sum_out(out, x, {1});
  CHECK(values(out) == D{4, 4, 4});
  Tensor wrong = zeros({4});
  EXPECT_ERROR_UNCHANGED(wrong, ValueError, sum_out(wrong, x, {1}), "sum.out", "[4]", "[3]");
  Tensor narrow = zeros({3}, DType::Int32);
  EXPECT_ERROR_UNCHANGED(narrow, TypeError, sum_out(narrow, x, {1}), "sum.out", "int32");
}

TEST_CASE("softmax stays finite for large inputs") {
  Tensor x = tensor(std::vector<double>{1000, 1001, 1002}, {3}, DType::Float32);
  D p = values(softmax(x, 0));
  CHECK(std::fabs(p[0] + p[1] + p[2] - 1.0) < 1e-6);
  CHECK(std::fabs(p[2] - 0.66524096) < 1e-6);
  D l = values(log_softmax(x, 0));
  CHECK(std::fabs(l[2] - std::log(0.66524096)) < 1e-6);
  CHECK(softmax(tensor({1, 2}), 0, DType::Float64).dtype() == DType::Float64);
}
