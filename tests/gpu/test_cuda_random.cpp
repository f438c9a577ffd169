// GPU tests of uniform_, normal_ and random_ on CUDA: with the CPU and CUDA generators at the same
// seed and offset, the CUDA kernels give the CPU's numbers (uniforms and integers bit for bit,
// normals to a few ulp, as core/philox.h promises) on contiguous, transposed, sliced and empty
// outputs; the offset advances by numel; rejected arguments raise the CPU's errors and change
// nothing; the random factories and dropout run on CUDA.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::same_values;
using gpu_test::values_of;

namespace {

const std::vector<DType> kFloatDTypes = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};

Generator& cpu_gen() { return default_generator(DeviceType::CPU); }
Generator& cuda_gen() { return default_generator(DeviceType::CUDA); }

// Both generators at (seed, offset).
void seed_both(uint64_t seed, uint64_t offset) {
  for (Generator* g : {&cpu_gen(), &cuda_gen()}) {
    g->manual_seed(seed);
    g->set_offset(offset);
  }
}

using ViewFn = std::function<Tensor(const Tensor&)>;

struct Layout {
  const char* label;
  std::vector<int64_t> base;
  ViewFn view;
};

// Contiguous, transposed, sliced with a storage offset and a step, permuted with a dropped dim,
// and empty outputs. Each view is taken of a base that holds sample values, so the tests also
// check that nothing outside the view is written.
const std::vector<Layout>& layouts() {
  static const std::vector<Layout> all = {
      {"contiguous", {37, 53}, [](const Tensor& t) { return t; }},
      {"large contiguous", {1 << 17}, [](const Tensor& t) { return t; }},
      {"transposed", {37, 53}, [](const Tensor& t) { return t.t(); }},
      {"offset slice", {12, 40}, [](const Tensor& t) { return t.slice(0, 2, 11).slice(1, 3, 37, 2); }},
      {"permuted select",
       {3, 4, 5},
       [](const Tensor& t) {
         return t.permute({2, 0, 1}).select(1, 2);
       }},
      {"zero-size", {0, 5}, [](const Tensor& t) { return t; }},
      {"zero-size slice", {4, 5}, [](const Tensor& t) { return t.slice(1, 2, 2); }},
  };
  return all;
}

// Runs `draw` on a view of a CPU base and of its CUDA copy, both generators at (seed, offset),
// and returns the two bases after. Checks the offsets advanced by the view's numel and the CUDA
// base's version went up by one.
std::pair<Tensor, Tensor> draw_both(const Layout& layout, DType dtype, uint64_t seed, uint64_t offset,
                                    const std::function<void(const Tensor&)>& draw) {
  Tensor cpu = gpu_test::sample(layout.base, dtype);
  Tensor gpu = cpu.to(kCuda);
  seed_both(seed, offset);
  Tensor cpu_view = layout.view(cpu), gpu_view = layout.view(gpu);
  const auto numel = static_cast<uint64_t>(gpu_view.numel());
  const uint32_t version = gpu.version();
  draw(cpu_view);
  draw(gpu_view);
  CHECK(gpu_view.is_cuda());
  CHECK(gpu.version() == version + 1);
  CHECK(cpu_gen().offset() == offset + numel);
  CHECK(cuda_gen().offset() == offset + numel);
  return {cpu, gpu};
}

// The gap between two neighbouring values of `dtype` near 1, and its smallest positive value.
double epsilon_of(DType d) {
  switch (d) {
    case DType::Float16:
      return std::ldexp(1.0, -10);
    case DType::BFloat16:
      return std::ldexp(1.0, -7);
    case DType::Float32:
      return std::ldexp(1.0, -23);
    default:
      return std::ldexp(1.0, -52);
  }
}
double denorm_min_of(DType d) {
  switch (d) {
    case DType::Float16:
      return std::ldexp(1.0, -24);
    case DType::BFloat16:
      return std::ldexp(1.0, -133);
    case DType::Float32:
      return std::ldexp(1.0, -149);
    default:
      return std::numeric_limits<double>::denorm_min();
  }
}

// Normals go through log, cos and sqrt, whose host and device versions agree to a few ulp; a
// value of a narrow dtype may then round to the neighbour of the CPU's.
void check_normals_close(const Tensor& gpu, const Tensor& cpu, double mean, double std) {
  REQUIRE(gpu.sizes() == cpu.sizes());
  const std::vector<double> g = values_of(gpu), c = values_of(cpu);
  const double eps = epsilon_of(cpu.dtype()), tiny = denorm_min_of(cpu.dtype());
  int64_t bad = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    const double z = (c[i] - mean) / (std == 0 ? 1 : std);
    const double tol = 16 * eps * (std::fabs(mean) + std * std::fabs(z) + std::fabs(c[i])) + tiny;
    if (!(std::fabs(g[i] - c[i]) <= tol)) {
      if (bad++ < 5) FAIL_CHECK("element ", i, ": cuda ", g[i], " cpu ", c[i]);
    }
  }
  CHECK(bad == 0);
}

struct Failure {
  std::string type;
  std::string message;
};

// The type and message of what fn throws (empty when it throws nothing).
Failure failure_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const TypeError& e) {
    return {"TypeError", e.what()};
  } catch (const ValueError& e) {
    return {"ValueError", e.what()};
  } catch (const Error& e) {
    return {"Error", e.what()};
  }
  return {};
}

// A call that both backends must reject: same error type and message, and neither the CUDA
// tensor, its version nor the CUDA generator change.
void check_rejected(DType dtype, const char* what, const std::function<void(const Tensor&)>& call) {
  CAPTURE(name(dtype));
  CAPTURE(what);
  Tensor cpu = gpu_test::sample({3, 4}, dtype);
  Tensor gpu = cpu.to(kCuda);
  seed_both(5, 77);
  const uint32_t version = gpu.version();
  const Failure on_cpu = failure_of([&] { call(cpu); });
  const Failure on_cuda = failure_of([&] { call(gpu); });
  CHECK_FALSE(on_cpu.type.empty());
  CHECK(on_cuda.type == on_cpu.type);
  CHECK(on_cuda.message == on_cpu.message);
  CHECK(gpu.version() == version);
  CHECK(same_values(gpu, cpu));
  CHECK(cuda_gen().offset() == 77);
  CHECK(cuda_gen().seed() == 5);
}

}  // namespace

TEST_CASE("cuda random: uniform_ equals the CPU's bit for bit, every floating dtype and layout") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : kFloatDTypes) {
    for (const Layout& layout : layouts()) {
      CAPTURE(name(d));
      CAPTURE(layout.label);
      auto [cpu, gpu] = draw_both(layout, d, 42, 1000, [](const Tensor& t) { t.uniform_(); });
      CHECK(same_values(gpu, cpu));
      auto [cpu2, gpu2] = draw_both(layout, d, 7, 3, [](const Tensor& t) { t.uniform_(-3.5, 1e3); });
      CHECK(same_values(gpu2, cpu2));
      // A degenerate range gives `from` everywhere.
      auto [cpu3, gpu3] = draw_both(layout, d, 7, 3, [](const Tensor& t) { t.uniform_(2, 2); });
      CHECK(same_values(gpu3, cpu3));
    }
  }
}

TEST_CASE("cuda random: uniform_ stays within from and to, to excluded, and is not constant") {
  ANATOMY_REQUIRE_GPU();
  seed_both(11, 0);
  for (DType d : kFloatDTypes) {
    CAPTURE(name(d));
    Tensor t = empty({4096}, TensorOptions().dtype(d).device(kCuda)).uniform_(-2, 3);
    const std::vector<double> v = values_of(t);
    double lo = v[0], hi = v[0];
    for (double x : v) {
      CHECK(x >= -2);
      CHECK(x < 3);
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    CHECK(lo < -1.9);
    CHECK(hi > 2.9);
  }
}

TEST_CASE("cuda random: normal_ is within a few ulp of the CPU's") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : kFloatDTypes) {
    for (const Layout& layout : layouts()) {
      CAPTURE(name(d));
      CAPTURE(layout.label);
      auto [cpu, gpu] = draw_both(layout, d, 42, 1000, [](const Tensor& t) { t.normal_(); });
      check_normals_close(gpu, cpu, 0, 1);
      auto [cpu2, gpu2] = draw_both(layout, d, 9, 123456, [](const Tensor& t) { t.normal_(0.5, 2.5); });
      check_normals_close(gpu2, cpu2, 0.5, 2.5);
      // std = 0 gives the mean exactly.
      auto [cpu3, gpu3] = draw_both(layout, d, 9, 5, [](const Tensor& t) { t.normal_(-1.25, 0); });
      CHECK(same_values(gpu3, cpu3));
    }
  }
  // The sample moments of many normals on the device itself.
  seed_both(3, 0);
  Tensor n = empty({1 << 20}, TensorOptions().dtype(DType::Float64).device(kCuda)).normal_(2, 3);
  CHECK(n.mean().item<double>() == doctest::Approx(2).epsilon(0.01));
  CHECK(n.std().item<double>() == doctest::Approx(3).epsilon(0.01));
}

TEST_CASE("cuda random: random_ equals the CPU's bit for bit, every dtype and range") {
  ANATOMY_REQUIRE_GPU();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  for (DType d : gpu_test::all_dtypes()) {
    // (from, to) pairs that every dtype in the list takes; no `to` runs to the dtype's limit.
    std::vector<std::pair<int64_t, std::optional<int64_t>>> ranges = {{0, std::nullopt}, {0, 2}};
    if (d != DType::Bool) ranges.push_back({1, 100});
    if (d != DType::Bool && d != DType::UInt8) ranges.push_back({-50, 50});
    if (d == DType::Int8) ranges.push_back({-128, std::nullopt});
    if (d == DType::Int32) ranges.push_back({-(int64_t{1} << 31), std::nullopt});
    if (d == DType::Int64) {
      ranges.push_back({kMin, std::nullopt});  // 2^64 values: the raw bits
      ranges.push_back({-(int64_t{1} << 40), (int64_t{1} << 40) + 7});
      ranges.push_back({kMin, 0});
    }
    if (d == DType::Float32) ranges.push_back({-(int64_t{1} << 24), std::nullopt});
    if (d == DType::Float64) ranges.push_back({-(int64_t{1} << 53), int64_t{1} << 53});
    for (const auto& [from, to] : ranges) {
      for (const Layout& layout : layouts()) {
        CAPTURE(name(d));
        CAPTURE(layout.label);
        CAPTURE(from);
        CAPTURE(to.value_or(-1));
        auto [cpu, gpu] = draw_both(layout, d, 1234, 99, [&](const Tensor& t) { random_(t, from, to); });
        CHECK(same_values(gpu, cpu));
      }
    }
  }
}

TEST_CASE("cuda random: 64-bit counters and large outputs") {
  ANATOMY_REQUIRE_GPU();
  // Counters that cross 2^32 and ones near 2^64 (where offset + i wraps) use both counter words.
  for (uint64_t offset : {(uint64_t{1} << 32) - 100, uint64_t{0xFFFFFFFFFFFFFF00ull}, uint64_t{1} << 63}) {
    CAPTURE(offset);
    Layout layout{"contiguous", {1000}, [](const Tensor& t) { return t; }};
    auto [cpu, gpu] =
        draw_both(layout, DType::Float64, 0xDEADBEEFCAFEull, offset, [](const Tensor& t) { t.uniform_(); });
    CHECK(same_values(gpu, cpu));
    auto [cpu2, gpu2] = draw_both(layout, DType::Int64, 0xDEADBEEFCAFEull, offset, [](const Tensor& t) {
      random_(t, std::numeric_limits<int64_t>::min(), std::nullopt);
    });
    CHECK(same_values(gpu2, cpu2));
  }
  // More elements than one grid covers (65536 blocks of 256 threads), so the grid-stride loop
  // runs, contiguous and strided.
  const int64_t n = (int64_t{1} << 24) + 1000;
  Layout big{"large", {n}, [](const Tensor& t) { return t; }};
  auto [cpu, gpu] = draw_both(big, DType::UInt8, 8, 17, [](const Tensor& t) { random_(t, 0, std::nullopt); });
  CHECK(same_values(gpu, cpu));
  Layout big_strided{"large strided", {2 * n}, [](const Tensor& t) { return t.slice(0, 1, std::nullopt, 2); }};
  auto [cpu2, gpu2] = draw_both(big_strided, DType::Int8, 8, 17, [](const Tensor& t) { random_(t, -3, 4); });
  CHECK(same_values(gpu2, cpu2));
}

TEST_CASE("cuda random: consecutive draws differ and continue the CPU's stream") {
  ANATOMY_REQUIRE_GPU();
  seed_both(2024, 0);
  Tensor a = empty({64}, kCuda).uniform_();
  Tensor b = empty({64}, kCuda).uniform_();
  CHECK_FALSE(same_values(a, b));
  CHECK(cuda_gen().offset() == 128);
  Tensor ca = empty({64}).uniform_();
  Tensor cb = empty({64}).uniform_();
  CHECK(same_values(a, ca));
  CHECK(same_values(b, cb));
  // The CUDA generator is its own stream: drawing on the CPU does not move it.
  CHECK(cpu_gen().offset() == 128);
  empty({10}).uniform_();
  CHECK(cuda_gen().offset() == 128);
  // A new seed restarts the stream.
  cuda_gen().manual_seed(2024);
  CHECK(same_values(empty({64}, kCuda).uniform_(), a));
  cuda_gen().manual_seed(2025);
  CHECK_FALSE(same_values(empty({64}, kCuda).uniform_(), a));
}

TEST_CASE("cuda random: bad arguments raise the CPU's errors and change nothing") {
  ANATOMY_REQUIRE_GPU();
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  for (DType d : {DType::Int32, DType::Bool, DType::UInt8}) {
    check_rejected(d, "uniform_ of an integer tensor", [](const Tensor& t) { t.uniform_(); });
    check_rejected(d, "normal_ of an integer tensor", [](const Tensor& t) { t.normal_(); });
  }
  for (DType d : kFloatDTypes) {
    check_rejected(d, "uniform_ from > to", [](const Tensor& t) { t.uniform_(2, 1); });
    check_rejected(d, "uniform_ infinite to", [&](const Tensor& t) { t.uniform_(0, inf); });
    check_rejected(d, "uniform_ NaN from", [&](const Tensor& t) { t.uniform_(nan, 1); });
    check_rejected(d, "normal_ negative std", [](const Tensor& t) { t.normal_(0, -1); });
    check_rejected(d, "normal_ NaN std", [&](const Tensor& t) { t.normal_(0, nan); });
    check_rejected(d, "normal_ infinite std", [&](const Tensor& t) { t.normal_(0, inf); });
  }
  check_rejected(DType::UInt8, "random_ below uint8", [](const Tensor& t) { random_(t, -1, 5); });
  check_rejected(DType::UInt8, "random_ above uint8", [](const Tensor& t) { random_(t, 0, 257); });
  check_rejected(DType::Int8, "random_ above int8", [](const Tensor& t) { random_(t, 0, 129); });
  check_rejected(DType::Bool, "random_ above bool", [](const Tensor& t) { random_(t, 0, 3); });
  check_rejected(DType::Int32, "random_ empty range", [](const Tensor& t) { random_(t, 5, 5); });
  check_rejected(DType::Float16, "random_ above fp16's exact integers", [](const Tensor& t) { random_(t, 0, 2050); });
  check_rejected(DType::Float32, "random_ below fp32's exact integers",
                 [](const Tensor& t) { random_(t, -(int64_t{1} << 25), 0); });
  // An output whose elements overlap cannot take independent values.
  Tensor base = zeros({1}, kCuda);
  seed_both(5, 77);
  CHECK_THROWS(base.expand({4}).uniform_());
  CHECK(cuda_gen().offset() == 77);
}

TEST_CASE("cuda random: rand, randn, randint and the _like forms on CUDA") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : kFloatDTypes) {
    CAPTURE(name(d));
    TensorOptions cuda_opts = TensorOptions().dtype(d).device(kCuda), cpu_opts = TensorOptions().dtype(d);
    seed_both(31, 0);
    Tensor r = rand({6, 7}, cuda_opts);
    CHECK(r.is_cuda());
    CHECK(r.dtype() == d);
    CHECK(same_values(r, rand({6, 7}, cpu_opts)));
    Tensor n = randn({6, 7}, cuda_opts);
    CHECK(n.is_cuda());
    check_normals_close(n, randn({6, 7}, cpu_opts), 0, 1);
    Tensor rl = rand_like(n);
    CHECK(rl.is_cuda());
    CHECK(rl.dtype() == d);
    CHECK(same_values(rl, rand({6, 7}, cpu_opts)));
    Tensor nl = randn_like(n);
    CHECK(nl.is_cuda());
    check_normals_close(nl, randn({6, 7}, cpu_opts), 0, 1);
  }
  seed_both(32, 0);
  Tensor i = randint(-3, 9, {5, 11}, kCuda);
  CHECK(i.is_cuda());
  CHECK(i.dtype() == DType::Int64);
  CHECK(same_values(i, randint(-3, 9, {5, 11})));
  Tensor u8 = randint(200, {40}, TensorOptions().dtype(DType::UInt8).device(kCuda));
  CHECK(same_values(u8, randint(200, {40}, TensorOptions().dtype(DType::UInt8))));
  // The factories' own checks come before anything reaches the device.
  CHECK_THROWS_AS(rand({2}, TensorOptions().dtype(DType::Int32).device(kCuda)), TypeError);
  CHECK_THROWS_AS(randint(5, 5, {2}, kCuda), ValueError);
}

TEST_CASE("cuda random: dropout keeps the CPU's elements and scales them") {
  ANATOMY_REQUIRE_GPU();
  const double p = 0.3;
  for (DType d : kFloatDTypes) {
    CAPTURE(name(d));
    const Tensor x_cpu = gpu_test::sample({200, 250}, d).add(0.5);
    const Tensor x = x_cpu.to(kCuda);
    seed_both(77, 0);
    auto [out, mask] = native_dropout(x, p, true);
    auto [out_cpu, mask_cpu] = native_dropout(x_cpu, p, true);
    REQUIRE(out.is_cuda());
    REQUIRE(mask.is_cuda());
    CHECK(mask.dtype() == DType::Bool);
    // The mask comes from an fp32 uniform_, which is bit-identical to the CPU's.
    CHECK(same_values(mask, mask_cpu));
    const std::vector<double> xv = values_of(x_cpu), ov = values_of(out), mv = values_of(mask);
    const double scale = 1.0 / (1.0 - p), eps = epsilon_of(d);
    int64_t kept = 0, bad = 0;
    for (size_t k = 0; k < xv.size(); ++k) {
      const double want = mv[k] != 0 ? xv[k] * scale : 0.0;
      kept += mv[k] != 0;
      if (!(std::fabs(ov[k] - want) <= 2 * eps * std::fabs(want))) {
        if (bad++ < 5) FAIL_CHECK("element ", k, ": got ", ov[k], " expected ", want);
      }
    }
    CHECK(bad == 0);
    // The kept fraction: 1 - p within five standard deviations.
    const double n = static_cast<double>(xv.size());
    CHECK(std::fabs(kept - n * (1 - p)) < 5 * std::sqrt(n * p * (1 - p)));
    // dropout is the composite over native_dropout: the same draw from the same position.
    seed_both(77, 0);
    CHECK(same_values(dropout(x, p, true), out));
  }
}
