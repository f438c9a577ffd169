// GPU tests of the sorted scatter (Note [Sorted scatter on CUDA]): the walks with few
// non-colliding positions and long colliding ones -- a 1-D index_add_, scatter_add_,
// scatter_reduce_, index_put_ or scatter_ of many values, a 2-D index_add_ over short rows --
// against the CPU. 1M values into 7 targets (long segments) and into 1M targets (mostly one value
// each); int64 results are the CPU's exactly (wrapping included), and so are every dtype's
// maxima, minima and last writes, and float sums and products of values whose every partial
// result is exact; other float sums and products are close to the CPU's (they are combined in
// another order) and the same bits from run to run. A bad index raises at the next wait and
// changes nothing; nothing waits for the device.
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::pending_index_error;
using gpu_test::same_values;
using gpu_test::SyncDebugScope;
using gpu_test::values_of;

namespace {

constexpr int64_t kValues = int64_t{1} << 20;

// How a scatter combines the values that meet in an element: the CPU's bits whatever the values
// (the last write, a maximum or minimum), or another order's rounding for floats (a sum, a mean,
// a product).
enum class Combine { Exact, Sum, Product };

// One scatter into self along dim 0, as a user writes it.
struct ScatterCall {
  std::string name;
  Combine combine;
  std::function<void(const Tensor& self, const Tensor& index, const Tensor& src)> write;
};

std::vector<ScatterCall> calls() {
  using C = Combine;
  std::vector<ScatterCall> out = {
      {"index_add_", C::Sum, [](const Tensor& s, const Tensor& i, const Tensor& v) { s.index_add_(0, i, v); }},
      {"scatter_add_", C::Sum, [](const Tensor& s, const Tensor& i, const Tensor& v) { s.scatter_add_(0, i, v); }},
      {"index_put_ accumulate", C::Sum,
       [](const Tensor& s, const Tensor& i, const Tensor& v) { s.index_put_({i}, v, true); }},
      {"index_put_", C::Exact, [](const Tensor& s, const Tensor& i, const Tensor& v) { s.index_put_({i}, v, false); }},
      {"scatter_", C::Exact, [](const Tensor& s, const Tensor& i, const Tensor& v) { s.scatter_(0, i, v); }},
      {"scatter_ value", C::Exact,
       [](const Tensor& s, const Tensor& i, const Tensor&) {
         s.copy_(scatter(s, 0, i, s.dtype() == DType::Bool ? Scalar(true) : Scalar(3)));
       }},
  };
  const std::vector<std::pair<const char*, Combine>> reductions = {
      {"sum", C::Sum}, {"prod", C::Product}, {"mean", C::Sum}, {"amax", C::Exact}, {"amin", C::Exact}};
  for (const auto& [reduce, combine] : reductions) {
    for (bool include_self : {true, false}) {
      out.push_back({std::string("scatter_reduce_ ") + reduce + (include_self ? "" : " without self"), combine,
                     [reduce, include_self](const Tensor& s, const Tensor& i, const Tensor& v) {
                       s.scatter_reduce_(0, i, v, reduce, include_self);
                     }});
    }
  }
  return out;
}

// The call on a CPU copy of self and on a CUDA one; both results on the CPU.
struct Results {
  Tensor cpu, cuda;
};
Results run_both(const ScatterCall& call, const Tensor& self, const Tensor& index, const Tensor& src) {
  Tensor cpu = self.clone(), cuda = self.to(kCuda);
  call.write(cpu, index, src);
  call.write(cuda, index.to(kCuda), src.to(kCuda));
  return {cpu, cuda.cpu()};
}

// |got - want| <= rtol * scale elementwise, scale being the call's result on the magnitudes (in
// fp64 on the CPU): the sum of the magnitudes that met in an element, or their product.
bool close_to(const Tensor& got, const Tensor& want, const Tensor& scale, double rtol) {
  const std::vector<double> g = values_of(got), w = values_of(want), s = values_of(scale);
  for (size_t k = 0; k < g.size(); ++k) {
    if (!(std::abs(g[k] - w[k]) <= rtol * s[k])) {
      MESSAGE("element ", k, ": ", g[k], " against ", w[k], " (scale ", s[k], ")");
      return false;
    }
  }
  return true;
}

Tensor random_targets(int64_t n, int64_t targets) { return randint(0, targets, {n}, DType::Int64); }

// Float values whose sums (of up to 2^20 of them) are exact in fp32: small integers.
Tensor small_integers(IntArrayRef sizes) { return randint(-8, 9, sizes, DType::Int64).to(DType::Float32); }

// Float factors whose products are exact in fp32: mostly 1, one in a thousand 2, one in a
// thousand 1/2 (a product of 2^20 of them stays many standard deviations inside fp32's exponents).
Tensor powers_of_two(IntArrayRef sizes) {
  const Tensor u = rand(sizes);
  return ones(sizes).masked_fill(u < 0.001, 2.0).masked_fill(u > 0.999, 0.5);
}

// Factors near 1, so that a product of 2^20 of them stays finite.
Tensor near_one(IntArrayRef sizes) { return randn(sizes, DType::Float32) * 1e-3 + 1; }

const std::vector<int64_t> kTargets = {7, kValues};

}  // namespace

TEST_CASE("cuda sorted scatter: 1-D int64 scatters of 1M values are the CPU's exactly") {
  ANATOMY_REQUIRE_GPU();
  for (int64_t targets : kTargets) {
    const Tensor self = randint(-1000, 1000, {targets}, DType::Int64);
    const Tensor index = random_targets(kValues, targets);
    for (const ScatterCall& call : calls()) {
      CAPTURE(call.name);
      CAPTURE(targets);
      // Odd factors: products of thousands of them wrap around without reaching 0.
      const Tensor src = call.combine == Combine::Product
                             ? randint(-500, 500, {kValues}, DType::Int64) * 2 + 1
                             : randint(int64_t{-1} << 40, int64_t{1} << 40, {kValues}, DType::Int64);
      const Results r = run_both(call, self, index, src);
      CHECK(same_values(r.cuda, r.cpu));
    }
  }
}

TEST_CASE("cuda sorted scatter: 1-D float32 scatters of 1M values, exact where the CPU's is, else close") {
  ANATOMY_REQUIRE_GPU();
  for (int64_t targets : kTargets) {
    const Tensor index = random_targets(kValues, targets);
    for (const ScatterCall& call : calls()) {
      CAPTURE(call.name);
      CAPTURE(targets);
      const bool product = call.combine == Combine::Product;
      // Exact partial results: the same bits as the CPU's in any order.
      const Tensor exact_self = product ? powers_of_two({targets}) : small_integers({targets});
      const Tensor exact_src = product ? powers_of_two({kValues}) : small_integers({kValues});
      const Results exact = run_both(call, exact_self, index, exact_src);
      CHECK(same_values(exact.cuda, exact.cpu));
      // Random values: max, min and last writes exactly, sums, means and products closely.
      const Tensor self = product ? near_one({targets}) : randn({targets});
      const Tensor src = product ? near_one({kValues}) : randn({kValues});
      const Results r = run_both(call, self, index, src);
      if (call.combine == Combine::Exact) {
        CHECK(same_values(r.cuda, r.cpu));
        continue;
      }
      Tensor scale = self.abs().to(DType::Float64);
      call.write(scale, index, src.abs().to(DType::Float64));
      CHECK(close_to(r.cuda, r.cpu, scale, 1e-4));
    }
  }
}

TEST_CASE("cuda sorted scatter: every dtype's last writes, maxima and minima are the CPU's exactly") {
  ANATOMY_REQUIRE_GPU();
  const int64_t n = 100000;
  const Tensor index = random_targets(n, 100);
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    const Tensor self = gpu_test::sample({100}, d), src = gpu_test::sample({n}, d);
    for (const ScatterCall& call : calls()) {
      if (call.combine != Combine::Exact) continue;
      CAPTURE(call.name);
      const Results r = run_both(call, self, index, src);
      CHECK(same_values(r.cuda, r.cpu));
    }
  }
}

TEST_CASE("cuda sorted scatter: 2-D index_add_ over rows of 64, and embedding-style index_put_") {
  ANATOMY_REQUIRE_GPU();
  const int64_t rows = kValues / 64;
  const Tensor index = random_targets(rows, 100);
  // int64 and exact floats: the CPU's bits; random floats: close.
  const Tensor ints = randint(-1000, 1000, {100, 64}, DType::Int64);
  const Tensor int_src = randint(-1000, 1000, {rows, 64}, DType::Int64);
  const ScatterCall index_add{"index_add_", Combine::Sum,
                              [](const Tensor& s, const Tensor& i, const Tensor& v) { s.index_add_(0, i, v); }};
  Results r = run_both(index_add, ints, index, int_src);
  CHECK(same_values(r.cuda, r.cpu));
  r = run_both(index_add, small_integers({100, 64}), index, small_integers({rows, 64}));
  CHECK(same_values(r.cuda, r.cpu));
  const Tensor self = randn({100, 64}), src = randn({rows, 64});
  r = run_both(index_add, self, index, src);
  Tensor scale = self.abs().to(DType::Float64);
  scale.index_add_(0, index, src.abs().to(DType::Float64));
  CHECK(close_to(r.cuda, r.cpu, scale, 1e-4));
  // An embedding's gradient, index_put_(zeros, {indices}, grad, accumulate=True), into a
  // transposed self (its rows of 64 strided, consecutive rows adjacent).
  const ScatterCall embedding_grad{
      "index_put_ accumulate", Combine::Sum,
      [](const Tensor& s, const Tensor& i, const Tensor& v) { s.t().index_put_({i}, v, true); }};
  r = run_both(embedding_grad, zeros({64, 100}), index, src);
  scale = zeros({64, 100}, DType::Float64);
  embedding_grad.write(scale, index, src.abs().to(DType::Float64));
  CHECK(close_to(r.cuda, r.cpu, scale, 1e-4));
}

TEST_CASE("cuda sorted scatter: float sums are the same bits from run to run, and nothing waits") {
  ANATOMY_REQUIRE_GPU();
  for (int64_t targets : kTargets) {
    CAPTURE(targets);
    const Tensor index = random_targets(kValues, targets).to(kCuda);
    const Tensor src = randn({kValues}).to(kCuda), factors = near_one({kValues}).to(kCuda);
    const Tensor self = randn({targets}).to(kCuda);
    Tensor a = self.clone(), b = self.clone(), c = self.clone(), d = self.clone();
    {
      SyncDebugScope scope(cuda::SyncDebugMode::Error);
      a.index_add_(0, index, src);
      b.index_add_(0, index, src);
      c.scatter_reduce_(0, index, factors, "prod", false);
      d.scatter_reduce_(0, index, factors, "prod", false);
    }
    CHECK(same_values(a, b));
    CHECK(same_values(c, d));
    CHECK(!same_values(a, self));
  }
}

TEST_CASE("cuda sorted scatter: a bad index raises IndexError at the next wait and writes nothing") {
  ANATOMY_REQUIRE_GPU();
  for (int64_t targets : kTargets) {
    CAPTURE(targets);
    const Tensor self = randn({targets}).to(kCuda);
    const Tensor before = self.cpu();
    Tensor index = random_targets(kValues, targets);
    index.index_put_({tensor<int64_t>({kValues / 2})}, tensor<int64_t>({targets}));
    const Tensor src = randn({kValues}).to(kCuda);
    const std::string bound = std::to_string(targets);
    self.index_add_(0, index.to(kCuda), src);
    CHECK(pending_index_error().find("index " + bound + " is out of bounds for dimension 0 with size " + bound) !=
          std::string::npos);
    CHECK(same_values(self, before));
    self.scatter_reduce_(0, index.to(kCuda), src, "amax", false);
    CHECK(pending_index_error().find("scatter_reduce_: index " + bound) != std::string::npos);
    CHECK(same_values(self, before));
    // The next call works and raises nothing.
    self.scatter_add_(0, index.clamp(0, targets - 1).to(kCuda), src);
    CHECK(pending_index_error().empty());
    CHECK(!same_values(self, before));
  }
}
