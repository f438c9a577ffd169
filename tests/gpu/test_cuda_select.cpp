// GPU tests of nonzero, masked_select and masked_fill_ on CUDA against the CPU's: every dtype,
// non-contiguous, offset, broadcast, 0-dim and zero-size inputs, inputs larger than one CUB tile,
// -0.0 and NaN, a mask overlapping self, the CPU's errors at the call, and the waits: nonzero and
// masked_select read their count with one copy (which the sync-debug error mode stops), and
// masked_fill_ waits for nothing.
#include <cmath>
#include <limits>
#include <vector>

#include "anatomy/cuda.h"
#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::same_values;
using gpu_test::SyncDebugScope;
using gpu_test::values_of;

namespace {

// Random values of dtype d of which about half are zero.
Tensor half_zeros(IntArrayRef sizes, DType d) { return gpu_test::sample(sizes, d).masked_fill(rand(sizes) < 0.5, 0); }

Tensor random_mask(IntArrayRef sizes) { return rand(sizes) < 0.5; }

Tensor identity(const Tensor& t) { return t; }

template <typename ViewFn>
void check_nonzero(const Tensor& base, ViewFn view) {
  const Tensor got = nonzero(view(base.to(kCuda)));
  CHECK(got.is_cuda());
  CHECK(same_values(got, nonzero(view(base))));
}

}  // namespace

TEST_CASE("cuda nonzero: every dtype and layout, against the CPU") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    check_nonzero(half_zeros({7}, d), identity);
    check_nonzero(half_zeros({5, 6, 7}, d), identity);
    check_nonzero(half_zeros({5, 6, 7}, d), [](const Tensor& t) { return t.permute({2, 0, 1}); });
    check_nonzero(half_zeros({8, 9}, d), [](const Tensor& t) { return t.t().slice(0, 1, 8, 3); });
    check_nonzero(half_zeros({4, 5}, d), [](const Tensor& t) { return t.slice(0, 1, 4).slice(1, 2, 5); });
    check_nonzero(half_zeros({3, 1, 4}, d), [](const Tensor& t) { return t.expand({2, 3, 5, 4}); });
    check_nonzero(half_zeros({2, 1, 3, 1, 2, 2}, d), identity);
    check_nonzero(half_zeros({}, d), identity);
    check_nonzero(ones({}, d), identity);   // [1, 0]
    check_nonzero(zeros({}, d), identity);  // [0, 0]
    check_nonzero(zeros({0, 3}, d), identity);
    check_nonzero(zeros({6, 5}, d), identity);  // nothing nonzero: [0, 2]
    check_nonzero(ones({3, 4}, d), identity);   // everything
  }
}

TEST_CASE("cuda nonzero: -0.0 is zero, NaN and tiny values are not") {
  ANATOMY_REQUIRE_GPU();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x =
      tensor({0.0, -0.0, nan, 1e-300, -1.0, 0.0, -nan, std::numeric_limits<double>::infinity()}, DType::Float64);
  for (DType d : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    CAPTURE(name(d));
    check_nonzero(x.to(d), identity);
  }
  CHECK(values_of(nonzero(x.to(kCuda))) == std::vector<double>{2, 3, 4, 6, 7});
}

TEST_CASE("cuda nonzero and masked_select: inputs of many CUB tiles") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : {DType::Bool, DType::Float32, DType::Int64, DType::Float16}) {
    CAPTURE(name(d));
    check_nonzero(half_zeros({3000001}, d), identity);
    check_nonzero(half_zeros({1000, 3001}, d), [](const Tensor& t) { return t.t(); });
    const Tensor x = gpu_test::sample({1000, 3001}, d), m = random_mask({1000, 3001});
    CHECK(same_values(masked_select(x.to(kCuda), m.to(kCuda)), masked_select(x, m)));
    CHECK(same_values(masked_select(x.t().to(kCuda), m.t().to(kCuda)), masked_select(x.t(), m.t())));
  }
}

TEST_CASE("cuda masked_select: every dtype, broadcast and layouts, against the CPU") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    auto check = [](const Tensor& x, const Tensor& m) {
      const Tensor got = masked_select(x.to(kCuda), m.to(kCuda));
      CHECK(got.is_cuda());
      CHECK(same_values(got, masked_select(x, m)));
    };
    const Tensor x = gpu_test::sample({4, 6}, d);
    check(x, random_mask({4, 6}));
    check(x.t(), random_mask({6, 4}));
    check(x, random_mask({6, 4}).t());
    check(x.slice(0, 1, 4).slice(1, 1, 6, 2), random_mask({3, 3}));
    check(gpu_test::sample({4, 1, 5}, d), random_mask({3, 1}));  // both broadcast: [4, 3, 5]
    check(x, random_mask({6}));                                  // the mask broadcast
    check(gpu_test::sample({6}, d), random_mask({4, 6}));        // self broadcast
    check(x, tensor({true}).squeeze(0));                         // a 0-dim mask
    check(x, tensor({false}).squeeze(0));
    check(gpu_test::sample({}, d), tensor({true}).squeeze(0));  // 0-dim both
    check(gpu_test::sample({0, 6}, d), random_mask({6}));       // zero-size
    check(x, zeros({4, 6}, DType::Bool));                       // nothing selected
  }
}

TEST_CASE("cuda masked_select: the CPU's errors at the call") {
  ANATOMY_REQUIRE_GPU();
  const Tensor x = rand({3, 4}).to(kCuda);
  CHECK_THROWS_WITH_AS(masked_select(x, ones({3, 4}, DType::Int64).to(kCuda)), doctest::Contains("masked_select"),
                       TypeError);
  CHECK_THROWS_WITH_AS(masked_select(x, random_mask({2, 4}).to(kCuda)), doctest::Contains("masked_select"), ValueError);
  CHECK_THROWS_AS(masked_select(x, random_mask({3, 4})), DeviceError);  // a CPU mask
}

TEST_CASE("cuda masked_fill_: every dtype and layout, against the CPU") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    const Scalar v = d == DType::Bool ? Scalar(true) : Scalar(7);
    auto check = [&](IntArrayRef sizes, auto view, const Tensor& mask) {
      Tensor cpu = gpu_test::sample(sizes, d), gpu = cpu.to(kCuda);
      view(cpu).masked_fill_(mask, v);
      const uint32_t before = gpu.version();
      view(gpu).masked_fill_(mask.to(kCuda), v);
      CHECK(gpu.version() == before + 1);
      CHECK(same_values(gpu, cpu));  // the whole base: filled and untouched parts
    };
    check({4, 6}, identity, random_mask({4, 6}));
    check(
        {4, 6}, [](const Tensor& t) { return t.t(); }, random_mask({6, 4}));
    check({4, 6}, identity, random_mask({6, 4}).t());
    check(
        {4, 6}, [](const Tensor& t) { return t.slice(0, 1, 4).slice(1, 1, 6, 2); }, random_mask({3, 3}));
    check(
        {2, 3, 4},
        [](const Tensor& t) {
          return t.permute({2, 0, 1});
        },
        random_mask({2, 1}));  // broadcast
    check({4, 6}, identity, random_mask({6}));
    check({4, 6}, identity, tensor({true}).squeeze(0));
    check({}, identity, tensor({true}).squeeze(0));
    check({0, 6}, identity, random_mask({6}));
    check({1 << 20}, identity, random_mask({1 << 20}));  // more than one grid
  }
}

TEST_CASE("cuda masked_fill_: values convert on the host as on the CPU") {
  ANATOMY_REQUIRE_GPU();
  const Tensor mask = random_mask({5, 3});
  for (DType d : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    CAPTURE(name(d));
    for (double v : {0.1, -0.0, std::numeric_limits<double>::infinity(), 1e10}) {
      if (d == DType::Float16 && std::abs(v) == 1e10) continue;  // out of fp16's range: an error on both
      Tensor cpu = rand({5, 3}, d), gpu = cpu.to(kCuda);
      cpu.masked_fill_(mask, v);
      gpu.masked_fill_(mask.to(kCuda), v);
      CHECK(same_values(gpu, cpu));
    }
  }
  Tensor i8 = zeros({4}, DType::Int8).to(kCuda);
  i8.masked_fill_(ones({4}, DType::Bool).to(kCuda), -128);
  CHECK(values_of(i8) == std::vector<double>{-128, -128, -128, -128});
}

TEST_CASE("cuda masked_fill_: a mask sharing memory with self is read before writing") {
  ANATOMY_REQUIRE_GPU();
  // self masked by itself: every true element becomes false.
  Tensor b = random_mask({1000}), g = b.to(kCuda);
  b.masked_fill_(b, false);
  g.masked_fill_(g, false);
  CHECK(same_values(g, b));
  // self and mask overlapping at an offset: each element reads its neighbour's old value.
  Tensor c = random_mask({3001}), h = c.to(kCuda);
  c.slice(0, 0, 3000).masked_fill_(c.slice(0, 1, 3001), true);
  h.slice(0, 0, 3000).masked_fill_(h.slice(0, 1, 3001), true);
  CHECK(same_values(h, c));
  Tensor e = random_mask({3001}), k = e.to(kCuda);
  e.slice(0, 1, 3001).masked_fill_(logical_not(e.slice(0, 0, 3000)), true);
  k.slice(0, 1, 3001).masked_fill_(logical_not(k.slice(0, 0, 3000)), true);
  CHECK(same_values(k, e));
  Tensor f = random_mask({3001}), l = f.to(kCuda);
  f.slice(0, 1, 3001).masked_fill_(f.slice(0, 0, 3000), false);
  l.slice(0, 1, 3001).masked_fill_(l.slice(0, 0, 3000), false);
  CHECK(same_values(l, f));
}

TEST_CASE("cuda masked_fill_: the CPU's errors at the call, self unchanged") {
  ANATOMY_REQUIRE_GPU();
  Tensor u8 = zeros({3, 4}, DType::UInt8).to(kCuda);
  const Tensor mask = ones({3, 4}, DType::Bool).to(kCuda);
  auto cpu_error = [](auto f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return typeid(e).name();
    }
    return "";
  };
  // The CPU's error types, asked of the CPU itself.
  CHECK(cpu_error([&] { u8.masked_fill_(mask, 300); }) == cpu_error([&] {
          zeros({3, 4}, DType::UInt8).masked_fill_(ones({3, 4}, DType::Bool), 300);
        }));
  CHECK(cpu_error([&] { u8.masked_fill_(mask, 300); }) != "");
  CHECK_THROWS_WITH_AS(u8.masked_fill_(ones({3, 4}, DType::Int32).to(kCuda), 1), doctest::Contains("masked_fill_"),
                       TypeError);
  CHECK_THROWS_WITH_AS(u8.masked_fill_(ones({2, 4}, DType::Bool).to(kCuda), 1), doctest::Contains("masked_fill_"),
                       ValueError);
  CHECK_THROWS_AS(u8.masked_fill_(ones({3, 4}, DType::Bool), 1), DeviceError);                           // a CPU mask
  CHECK_THROWS_AS(u8.expand({2, 3, 4}).masked_fill_(ones({2, 3, 4}, DType::Bool).to(kCuda), 1), Error);  // overlap
  CHECK(values_of(u8) == std::vector<double>(12, 0.0));
}

TEST_CASE("cuda nonzero and masked_select read their count with one wait; masked_fill_ waits for nothing") {
  ANATOMY_REQUIRE_GPU();
  const Tensor x = half_zeros({50, 40}, DType::Float32).to(kCuda);
  const Tensor m = random_mask({50, 40}).to(kCuda);
  Tensor y = x.clone();
  {
    SyncDebugScope scope(cuda::SyncDebugMode::Error);
    CHECK_THROWS_WITH_AS(nonzero(x), doctest::Contains("aten::_local_scalar_dense"), DeviceError);
    CHECK_THROWS_WITH_AS(masked_select(x, m), doctest::Contains("aten::_local_scalar_dense"), DeviceError);
    y.masked_fill_(m, 2.5);
    // An empty input has nothing to count: no wait.
    CHECK(nonzero(x.slice(0, 0, 0)).sizes() == IntArrayRef({0, 2}));
    CHECK(masked_select(x.slice(0, 0, 0), m.slice(0, 0, 0)).numel() == 0);
  }
  // After the refused waits the ops work normally.
  CHECK(same_values(nonzero(x), nonzero(x.cpu())));
  CHECK(same_values(y, x.cpu().masked_fill(m.cpu(), 2.5)));
}
