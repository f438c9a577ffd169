// GPU tests of the scans on CUDA against the CPU's: every dtype, every dim (the warp, block,
// column and tiled paths of scan_kernels.cuh), non-contiguous and offset inputs, 0-dim and
// zero-size inputs, rows of a million elements; for cumsum and cumprod dtype=, integer
// wrap-around, -0.0 and determinism; for cummax and cummin ties and NaN across tiles (values and
// indices exactly); for logcumsumexp infinities, NaN and large magnitudes; the errors, and that
// nothing waits (sync-debug error mode).
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "anatomy/cuda.h"
#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::same_values;
using gpu_test::SyncDebugScope;
using gpu_test::values_of;

namespace {

// How close a floating scan must be to the CPU's serial one: the parallel scans regroup the
// sums (in float for fp16/bf16, double for fp32 and fp64) and round each output once.
double rtol_for(DType d) {
  switch (d) {
    case DType::Float16:
      return 2e-3;
    case DType::BFloat16:
      return 1.6e-2;
    case DType::Float32:
      return 1e-6;
    default:
      return 1e-12;
  }
}

// got (CUDA) against want (CPU): same shape and dtype; integers and bool bit for bit, floats
// within rtol (the dtype's tolerance unless given; the inputs are positive, so nothing cancels).
std::string compare_to_cpu(const Tensor& got, const Tensor& want, double rtol = 0) {
  if (!got.is_cuda()) return "the result is not on CUDA";
  if (got.sizes() != want.sizes() || got.dtype() != want.dtype()) return "shape or dtype differs";
  if (!is_floating(want.dtype())) return same_values(got, want) ? "" : "integer values differ";
  const std::vector<double> g = values_of(got), w = values_of(want);
  if (rtol == 0) rtol = rtol_for(want.dtype());
  // Below the smallest normal value the rounding steps are absolute, not relative.
  const double atol = want.dtype() == DType::Float16 ? 6.2e-5 : want.dtype() == DType::Float64 ? 2.3e-308 : 1.2e-38;
  for (size_t i = 0; i < g.size(); ++i) {
    if ((std::isnan(g[i]) && std::isnan(w[i])) || g[i] == w[i]) continue;
    if (!(std::abs(g[i] - w[i]) <= rtol * std::abs(w[i]) + atol)) {
      return "element " + std::to_string(i) + ": " + std::to_string(g[i]) + " vs " + std::to_string(w[i]);
    }
  }
  return "";
}

// Runs cumsum or cumprod of view(x) on both devices, for every dim of x.
template <typename ViewFn>
void check_scan(bool prod, const Tensor& cpu_base, ViewFn view, std::optional<DType> dtype = std::nullopt) {
  const Tensor cpu = view(cpu_base), gpu = view(cpu_base.to(kCuda));
  for (int64_t d = 0; d < std::max<int64_t>(cpu.dim(), 1); ++d) {
    CAPTURE(d);
    const Tensor want = prod ? cpu.cumprod(d, dtype) : cpu.cumsum(d, dtype);
    const Tensor got = prod ? gpu.cumprod(d, dtype) : gpu.cumsum(d, dtype);
    CHECK(compare_to_cpu(got, want) == "");
  }
}

Tensor identity(const Tensor& t) { return t; }

// Values whose products stay representable over rows of 100000: within 0.5% of 1 for floats
// (the log of a product walks about one unit), 1..3 for integers (which wrap around, checked
// exactly).
Tensor product_sample(IntArrayRef sizes, DType d) {
  if (is_floating(d)) return exp((rand(sizes, DType::Float64) - 0.5) * 0.01).to(d);
  return randint(d == DType::Bool ? 0 : 1, d == DType::Bool ? 2 : 4, sizes, d);
}

}  // namespace

TEST_CASE("cuda cumsum and cumprod: every dtype and every dim, against the CPU") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    for (bool prod : {false, true}) {
      CAPTURE(prod);
      auto make = [&](IntArrayRef sizes) { return prod ? product_sample(sizes, d) : gpu_test::sample(sizes, d); };
      check_scan(prod, make({5, 7, 9}), identity);  // rows of 9 (warp), columns of 5 and 7
      check_scan(prod, make({3, 40}), identity);    // a warp row of two chunks
      check_scan(prod, make({2, 1500}), identity);  // block rows of two chunks, the second partial
      check_scan(prod, make({600, 3}), identity);   // 600 long columns
      check_scan(prod, make({4, 1, 6}), identity);  // a size-1 dim
      check_scan(prod, make({}), identity);         // 0-dim
      check_scan(prod, make({0, 3}), identity);     // zero-size
      check_scan(prod, make({3, 0}), identity);     // zero-size rows
    }
  }
}

TEST_CASE("cuda cumsum and cumprod: transposed, sliced, offset and permuted inputs") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : {DType::Float32, DType::Int32, DType::Float16, DType::Bool, DType::Float64}) {
    CAPTURE(name(d));
    for (bool prod : {false, true}) {
      CAPTURE(prod);
      const Tensor x = prod ? product_sample({6, 300}, d) : gpu_test::sample({6, 300}, d);
      check_scan(prod, x, [](const Tensor& t) { return t.t(); });
      check_scan(prod, x, [](const Tensor& t) { return t.slice(0, 1, 5).slice(1, 3, 290, 2); });
      check_scan(prod, x, [](const Tensor& t) { return t.slice(1, 7, 300); });
      const Tensor y = prod ? product_sample({3, 4, 5}, d) : gpu_test::sample({3, 4, 5}, d);
      check_scan(prod, y, [](const Tensor& t) { return t.permute({2, 0, 1}); });
      check_scan(prod, y, [](const Tensor& t) { return t.select(1, 2); });
      check_scan(prod, y, [](const Tensor& t) { return t.expand({2, 3, 4, 5}); });  // broadcast: zero strides
    }
  }
}

TEST_CASE("cuda cumsum: rows of a million elements, innermost and not") {
  ANATOMY_REQUIRE_GPU();
  const int64_t n = int64_t{1} << 20;
  // fp32 ones sum exactly (below 2^24): the last element is n.
  const Tensor ones_row = ones({n}, TensorOptions().device(kCuda));
  const Tensor s = ones_row.cumsum(0);
  CHECK(s[n - 1].item<double>() == static_cast<double>(n));
  CHECK(same_values(s, ones({n}).cumsum(0)));
  for (DType d : {DType::Float32, DType::Int64, DType::BFloat16, DType::Float64}) {
    CAPTURE(name(d));
    // fp64 sums of a million regrouped: their rounding differs by more than a short row's.
    const double rtol = d == DType::Float64 ? 1e-10 : 0;
    const Tensor x = gpu_test::sample({n}, d);
    CHECK(compare_to_cpu(x.to(kCuda).cumsum(0), x.cumsum(0), rtol) == "");
    const Tensor cols = gpu_test::sample({n, 2}, d);  // two columns of a million: tiled
    CHECK(compare_to_cpu(cols.to(kCuda).cumsum(0), cols.cumsum(0), rtol) == "");
    const Tensor rows = gpu_test::sample({3, 400000}, d);
    CHECK(compare_to_cpu(rows.to(kCuda).cumsum(1), rows.cumsum(1), rtol) == "");
  }
  // Many short rows: more warps than the grid holds, so the warp kernel's row loop turns.
  const Tensor many = gpu_test::sample({1 << 20, 5}, DType::Int32);
  CHECK(same_values(many.to(kCuda).cumsum(1), many.cumsum(1)));
}

TEST_CASE("cuda cumsum and cumprod: few long rows and columns are tiled (Note [Tiled scans])") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    for (bool prod : {false, true}) {
      CAPTURE(prod);
      auto make = [&](IntArrayRef sizes) { return prod ? product_sample(sizes, d) : gpu_test::sample(sizes, d); };
      // Rows of 7 tiles, the last one partial, read contiguously and through a transpose.
      check_scan(prod, make({3, 100003}), [](const Tensor& t) { return t.slice(0, 0, 3); });
      check_scan(prod, make({40000, 2}), [](const Tensor& t) { return t.t(); });
      // Columns: few and long, and many enough to tile into short pieces.
      check_scan(prod, make({20001, 3}), identity);
      check_scan(prod, make({700, 300}), identity);
      check_scan(prod, make({5000, 2, 3}), [](const Tensor& t) { return t.slice(0, 1, 4999, 2); });
    }
  }
  // The tiles' carries keep -0.0 as the CPU's serial sum does.
  const Tensor neg_zero = full({2, 40000}, -0.0);
  CHECK(same_values(neg_zero.to(kCuda).cumsum(1), neg_zero.cumsum(1)));
  CHECK(same_values(neg_zero.t().to(kCuda).cumsum(0), neg_zero.t().cumsum(0)));
}

TEST_CASE("cuda cumsum and cumprod: the dtype argument casts first, as on the CPU") {
  ANATOMY_REQUIRE_GPU();
  const Tensor i = randint(-50, 50, {4, 300}, DType::Int32);
  const Tensor f = rand({4, 300}) * 4;  // non-negative: a negative float cast to uint8 is undefined
  for (DType to : gpu_test::all_dtypes()) {
    CAPTURE(name(to));
    CHECK(compare_to_cpu(i.to(kCuda).cumsum(1, to), i.cumsum(1, to)) == "");
    CHECK(compare_to_cpu(i.to(kCuda).cumsum(0, to), i.cumsum(0, to)) == "");
    CHECK(same_values(f.to(kCuda).cumsum(0, to), f.cumsum(0, to)));  // a column: the CPU's own order
  }
  CHECK(i.to(kCuda).cumsum(1).dtype() == DType::Int64);
  CHECK(ones({3}, DType::Bool).to(kCuda).cumprod(0).dtype() == DType::Int64);
  CHECK(values_of(ones({5}, DType::Bool).to(kCuda).cumsum(0)) == std::vector<double>{1, 2, 3, 4, 5});
}

TEST_CASE("cuda cumprod: integer products wrap around exactly as on the CPU") {
  ANATOMY_REQUIRE_GPU();
  // int8 values kept as int8: each output is the uint64 running product cast to int8.
  const Tensor small = full({3, 70}, 3, DType::Int8);
  for (int64_t d : {0, 1}) {
    CHECK(same_values(small.to(kCuda).cumprod(d, DType::Int8), small.cumprod(d, DType::Int8)));
    CHECK(same_values(small.to(kCuda).cumprod(d), small.cumprod(d)));  // int64: 3^70 wraps too
  }
  const Tensor mixed = randint(-128, 128, {2, 2000}, DType::Int8);
  CHECK(same_values(mixed.to(kCuda).cumprod(1, DType::Int8), mixed.cumprod(1, DType::Int8)));
  CHECK(same_values(mixed.to(kCuda).cumprod(1), mixed.cumprod(1)));
  CHECK(same_values(mixed.to(kCuda).cumsum(1, DType::Int8), mixed.cumsum(1, DType::Int8)));
  const Tensor big = randint(std::numeric_limits<int64_t>::min() / 2, std::numeric_limits<int64_t>::max() / 2,
                             {3, 1000}, DType::Int64);
  CHECK(same_values(big.to(kCuda).cumsum(1), big.cumsum(1)));
  CHECK(same_values(big.to(kCuda).cumprod(1), big.cumprod(1)));
}

TEST_CASE("cuda cumsum: signed zeros, NaN and infinities") {
  ANATOMY_REQUIRE_GPU();
  for (int64_t n : {int64_t{5}, int64_t{40}, int64_t{3000}}) {  // warp, two warp chunks, block chunks
    CAPTURE(n);
    const Tensor neg_zero = full({2, n}, -0.0);
    CHECK(same_values(neg_zero.to(kCuda).cumsum(1), neg_zero.cumsum(1)));  // -0.0 throughout
    CHECK(std::signbit(neg_zero.to(kCuda).cumsum(1)[1][n - 1].item<double>()));
    Tensor x = rand({n});
    x[n / 2].fill_(std::numeric_limits<double>::quiet_NaN());
    const std::vector<double> got = values_of(x.to(kCuda).cumsum(0));
    for (int64_t i = 0; i < n; ++i) CHECK(std::isnan(got[i]) == (i >= n / 2));
    const Tensor inf = full({n}, std::numeric_limits<double>::infinity(), DType::Float32);
    CHECK(same_values(inf.to(kCuda).cumprod(0), inf.cumprod(0)));
  }
}

TEST_CASE("cuda cumsum and cumprod: bit-identical from run to run") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : {DType::Float32, DType::Float16, DType::Float64}) {
    CAPTURE(name(d));
    const Tensor x = (rand({4, 100000}) * 2 - 1).to(d).to(kCuda);
    CHECK(same_values(x.cumsum(1), x.cumsum(1)));
    CHECK(same_values(x.cumprod(1), x.cumprod(1)));
    CHECK(same_values(x.cumsum(0), x.cumsum(0)));
    const Tensor columns = (rand({100000, 3}) * 2 - 1).to(d).to(kCuda);
    CHECK(same_values(columns.cumsum(0), columns.cumsum(0)));
    const Tensor short_rows = (rand({1000, 100}) * 2 - 1).to(d).to(kCuda);
    CHECK(same_values(short_rows.cumsum(1), short_rows.cumsum(1)));
  }
}

TEST_CASE("cuda cumsum and cumprod: errors at the call, no wait") {
  ANATOMY_REQUIRE_GPU();
  const Tensor x = rand({2, 3}).to(kCuda);
  CHECK_THROWS_WITH_AS(x.cumsum(2), doctest::Contains("cumsum"), IndexError);
  CHECK_THROWS_WITH_AS(x.cumprod(-3), doctest::Contains("cumprod"), IndexError);
  const Tensor i = randint(0, 5, {3, 700}, DType::Int32).to(kCuda);
  Tensor a, b;
  {
    SyncDebugScope scope(cuda::SyncDebugMode::Error);
    a = x.cumsum(1);
    b = i.cumprod(0, DType::Float64);
  }
  CHECK(compare_to_cpu(a, x.cpu().cumsum(1)) == "");
  CHECK(b.dtype() == DType::Float64);
}

// ---- cummax, cummin, logcumsumexp ----

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Values from {0, 1, 2}, so ties everywhere (true and false for bool), with a NaN at every
// `nan_every`-th element (row-major) for floating dtypes.
Tensor ties_sample(std::vector<int64_t> sizes, DType d, int64_t nan_every = 0) {
  std::vector<double> v = values_of(randint(0, 3, sizes, DType::Int64));
  if (nan_every > 0 && is_floating(d)) {
    for (size_t i = static_cast<size_t>(nan_every - 1); i < v.size(); i += static_cast<size_t>(nan_every)) v[i] = kNaN;
  }
  return tensor(v, sizes, DType::Float64).to(d);
}

// cummax and cummin of view(x) on both devices, for every dim of x: values and indices exactly,
// since the op picks one of its operands and no grouping can change which.
template <typename ViewFn>
void check_extrema(const Tensor& cpu_base, ViewFn view) {
  const Tensor cpu = view(cpu_base), gpu = view(cpu_base.to(kCuda));
  for (int64_t d = 0; d < std::max<int64_t>(cpu.dim(), 1); ++d) {
    for (bool is_max : {true, false}) {
      CAPTURE(d);
      CAPTURE(is_max);
      const auto [want_values, want_indices] = is_max ? cpu.cummax(d) : cpu.cummin(d);
      const auto [got_values, got_indices] = is_max ? gpu.cummax(d) : gpu.cummin(d);
      CHECK(got_values.is_cuda());
      CHECK(gpu_test::same_numbers(got_values, want_values));
      CHECK(same_values(got_indices, want_indices));
    }
  }
}

// logcumsumexp of view(x) on both devices, for every dim of x.
template <typename ViewFn>
void check_logcumsumexp(const Tensor& cpu_base, ViewFn view, double rtol = 0) {
  const Tensor cpu = view(cpu_base), gpu = view(cpu_base.to(kCuda));
  for (int64_t d = 0; d < std::max<int64_t>(cpu.dim(), 1); ++d) {
    CAPTURE(d);
    CHECK(compare_to_cpu(gpu.logcumsumexp(d), cpu.logcumsumexp(d), rtol) == "");
  }
}

}  // namespace

TEST_CASE("cuda cummax, cummin and logcumsumexp: every dtype and every dim, against the CPU") {
  ANATOMY_REQUIRE_GPU();
  const std::vector<std::vector<int64_t>> shapes = {{5, 7, 9}, {3, 40}, {2, 1500}, {600, 3},
                                                    {4, 1, 6}, {},      {0, 3},    {3, 0}};
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    for (const auto& sizes : shapes) {
      check_extrema(gpu_test::sample(sizes, d), identity);
      check_extrema(ties_sample(sizes, d), identity);
      if (is_floating(d)) {
        check_extrema(ties_sample(sizes, d, 7), identity);
        check_logcumsumexp(gpu_test::sample(sizes, d), identity);
      }
    }
  }
}

TEST_CASE("cuda cummax, cummin and logcumsumexp: transposed, sliced, offset and permuted inputs") {
  ANATOMY_REQUIRE_GPU();
  const std::vector<std::function<Tensor(const Tensor&)>> views = {
      [](const Tensor& t) { return t.t(); },
      [](const Tensor& t) { return t.slice(0, 1, 5).slice(1, 3, 290, 2); },
      [](const Tensor& t) { return t.slice(1, 7, 300); },
  };
  for (DType d : {DType::Float32, DType::Int32, DType::Float16, DType::Bool, DType::Float64, DType::UInt8}) {
    CAPTURE(name(d));
    for (const auto& view : views) {
      check_extrema(ties_sample({6, 300}, d, 11), view);
      if (is_floating(d)) check_logcumsumexp(gpu_test::sample({6, 300}, d), view);
    }
    const Tensor y = ties_sample({3, 4, 5}, d);
    check_extrema(y, [](const Tensor& t) { return t.permute({2, 0, 1}); });
    check_extrema(y, [](const Tensor& t) { return t.select(1, 2); });
    check_extrema(y, [](const Tensor& t) { return t.expand({2, 3, 4, 5}); });  // zero strides: all ties
    if (is_floating(d)) check_logcumsumexp(y, [](const Tensor& t) { return t.permute({2, 0, 1}); });
  }
}

TEST_CASE("cuda cummax and cummin: NaN and ties across the tiles of long rows and columns") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    // Few NaNs, far apart: the first and the later ones fall in different tiles.
    for (int64_t nan_every : {0, 50000, 997}) {
      CAPTURE(nan_every);
      check_extrema(ties_sample({3, 100003}, d, nan_every), [](const Tensor& t) { return t.slice(0, 0, 3); });
      check_extrema(ties_sample({40000, 2}, d, nan_every), [](const Tensor& t) { return t.t(); });
      check_extrema(ties_sample({20001, 3}, d, nan_every), identity);
      check_extrema(ties_sample({700, 300}, d, nan_every), identity);
    }
  }
  // Distinct values rising then falling over tiled rows: the running max stops moving halfway
  // and the running min moves on every element.
  const int64_t half = int64_t{1} << 17;
  const Tensor ramp = half - arange(-half, half, 1, DType::Int64).abs();
  for (DType d : {DType::Int32, DType::Int64, DType::Float32, DType::Float64}) {
    CAPTURE(name(d));
    check_extrema(ramp.to(d).reshape({2, -1}), identity);
    check_extrema(ramp.to(d).reshape({2, -1}), [](const Tensor& t) { return t.t(); });
  }
}

TEST_CASE("cuda logcumsumexp: long rows and columns are tiled, as close to the CPU as cumsum") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : gpu_test::kFloatingDtypes) {
    CAPTURE(name(d));
    const double rtol = d == DType::Float64 ? 1e-10 : 0;
    check_logcumsumexp(
        gpu_test::sample({3, 100003}, d), [](const Tensor& t) { return t.slice(0, 0, 3); }, rtol);
    check_logcumsumexp(gpu_test::sample({20001, 3}, d), identity, rtol);
    check_logcumsumexp(gpu_test::sample({700, 300}, d), identity, rtol);
    check_logcumsumexp(gpu_test::sample({1 << 20}, d), identity, rtol);
  }
}

TEST_CASE("cuda logcumsumexp: infinities, NaN and large magnitudes as on the CPU") {
  ANATOMY_REQUIRE_GPU();
  const std::vector<double> special = {-kInf, -kInf, 0.5, -kInf, 1000, 1000, -1000, kInf, 2.0, kNaN, kInf, -3.0};
  for (DType d : gpu_test::kFloatingDtypes) {
    CAPTURE(name(d));
    const Tensor x = tensor(special, {2, 6}, DType::Float64).to(d);
    check_logcumsumexp(x, identity);
    check_logcumsumexp(x, [](const Tensor& t) { return t.t(); });
    // Only -inf: the result stays -inf (not NaN), on every path.
    const Tensor all_neg_inf = full({3, 2000}, -kInf, d);
    CHECK(same_values(all_neg_inf.to(kCuda).logcumsumexp(1), all_neg_inf));
    CHECK(same_values(all_neg_inf.t().to(kCuda).logcumsumexp(0), all_neg_inf.t().contiguous()));
  }
}

TEST_CASE("cuda cummax, cummin and logcumsumexp: errors at the call, no wait") {
  ANATOMY_REQUIRE_GPU();
  const Tensor x = rand({2, 3}).to(kCuda);
  CHECK_THROWS_WITH_AS(x.cummax(2), doctest::Contains("cummax"), IndexError);
  CHECK_THROWS_WITH_AS(x.cummin(-3), doctest::Contains("cummin"), IndexError);
  CHECK_THROWS_WITH_AS(x.logcumsumexp(5), doctest::Contains("logcumsumexp"), IndexError);
  CHECK_THROWS_WITH_AS(randint(0, 5, {3}, DType::Int64).to(kCuda).logcumsumexp(0), doctest::Contains("logcumsumexp"),
                       TypeError);
  Tensor v, i, l;
  {
    SyncDebugScope scope(cuda::SyncDebugMode::Error);
    std::tie(v, i) = x.cummax(1);
    l = x.logcumsumexp(0);
  }
  CHECK(same_values(v, std::get<0>(x.cpu().cummax(1))));
  CHECK(same_values(i, std::get<1>(x.cpu().cummax(1))));
  CHECK(compare_to_cpu(l, x.cpu().logcumsumexp(0)) == "");
}
