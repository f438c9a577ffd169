// GPU tests of flip, tril and triu on CUDA against the CPU, bit for bit: every dtype, contiguous,
// transposed, sliced (storage offset and steps) and expanded inputs, batch dims, every diagonal
// side, zero-size and 0-dim tensors, and the CPU's errors.
#include <string>
#include <vector>

#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::same_values;

namespace {

// Values with both signs where the dtype has them, so sign bits and -0.0 travel too.
Tensor signed_sample(IntArrayRef sizes, DType d) {
  if (is_floating(d)) return randn(sizes, DType::Float64).mul(3).to(d);
  if (d == DType::Bool || d == DType::UInt8) return gpu_test::sample(sizes, d);
  return randint(-100, 100, sizes, d);
}

// The inputs each op runs on: a CPU tensor and the same view of its CUDA copy, so the kernels
// walk the view's strides and storage offset.
struct Sample {
  std::string what;
  Tensor cpu, cuda;
};

std::vector<Sample> layouts(DType d) {
  const Tensor base = signed_sample({4, 6, 5}, d), row = signed_sample({1, 6, 1}, d);
  const Tensor gbase = base.to(kCuda), grow = row.to(kCuda);
  const Tensor matrix = signed_sample({7, 3}, d), long_rows = signed_sample({2, 3, 1000}, d),
               batch = signed_sample({2, 3, 4, 5}, d);
  return {{"contiguous", base, gbase},
          {"transposed", base.transpose(0, 2), gbase.transpose(0, 2)},
          {"permuted", base.permute({1, 2, 0}), gbase.permute({1, 2, 0})},
          {"sliced", base.slice(1, 1, 6, 2).slice(2, 1, 4), gbase.slice(1, 1, 6, 2).slice(2, 1, 4)},
          {"expanded", row.expand({3, 6, 4}), grow.expand({3, 6, 4})},
          {"matrix", matrix, matrix.to(kCuda)},
          {"long rows", long_rows, long_rows.to(kCuda)},
          {"4-d batch", batch.transpose(1, 3), batch.to(kCuda).transpose(1, 3)}};
}

void check_same(const Tensor& got, const Tensor& want, const std::string& what) {
  CHECK_MESSAGE(got.is_cuda(), what);
  CHECK_MESSAGE(got.is_contiguous(), what);
  CHECK_MESSAGE(same_values(got, want), what);
}

}  // namespace

TEST_CASE("cuda flip: every dtype, layout and set of dims matches the CPU") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(5);
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    for (const auto& [what, x, g] : layouts(d)) {
      const int64_t nd = x.dim();
      std::vector<std::vector<int64_t>> dim_sets = {{}, {0}, {-1}, {0, nd - 1}};
      if (nd >= 3) dim_sets.push_back({1});
      if (nd >= 3) dim_sets.push_back({0, 1, 2});
      if (nd >= 4) dim_sets.push_back({3, 1});
      for (const auto& dims : dim_sets) {
        check_same(g.flip(dims), x.flip(dims), what + " flip dims " + std::to_string(dims.size()));
      }
    }
    const Tensor scalar = signed_sample({}, d);
    check_same(scalar.to(kCuda).flip({0}), scalar.flip({0}), "0-dim");
    const Tensor empty_rows = signed_sample({0, 4}, d);
    check_same(empty_rows.to(kCuda).flip({0, 1}), empty_rows.flip({0, 1}), "zero-size");
  }
}

TEST_CASE("cuda flip: the CPU's errors") {
  ANATOMY_REQUIRE_GPU();
  const Tensor g = rand({3, 4}).to(kCuda);
  CHECK_THROWS_AS(g.flip({2}), IndexError);
  CHECK_THROWS_AS(g.flip({-3}), IndexError);
  CHECK_THROWS_AS(g.flip({1, -1}), ValueError);
  CHECK(same_values(g.flip({1}), g.cpu().flip({1})));  // the next op works normally
}

TEST_CASE("cuda tril and triu: every dtype, layout and diagonal matches the CPU") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(6);
  for (DType d : gpu_test::all_dtypes()) {
    CAPTURE(name(d));
    for (const auto& [what, x, g] : layouts(d)) {
      for (int64_t diagonal : {-1000, -4, -1, 0, 1, 2, 5, 1000}) {
        const std::string label = what + " diagonal " + std::to_string(diagonal);
        check_same(g.tril(diagonal), x.tril(diagonal), "tril " + label);
        check_same(g.triu(diagonal), x.triu(diagonal), "triu " + label);
      }
    }
    for (const Tensor& e : {signed_sample({0, 4}, d), signed_sample({3, 0}, d), signed_sample({2, 0, 3, 3}, d)}) {
      check_same(e.to(kCuda).tril(0), e.tril(0), "zero-size tril");
      check_same(e.to(kCuda).triu(1), e.triu(1), "zero-size triu");
    }
  }
}

TEST_CASE("cuda tril and triu: a large batch of wide matrices matches the CPU") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(7);
  const Tensor x = randn({3, 300, 1100});
  const Tensor g = x.to(kCuda);
  for (int64_t diagonal : {-200, 0, 700}) {
    check_same(g.tril(diagonal), x.tril(diagonal), "tril large");
    check_same(g.triu(diagonal), x.triu(diagonal), "triu large");
    check_same(g.transpose(1, 2).triu(diagonal), x.transpose(1, 2).triu(diagonal), "triu transposed large");
  }
}

TEST_CASE("cuda tril and triu: the CPU's errors") {
  ANATOMY_REQUIRE_GPU();
  const Tensor v = rand({5}).to(kCuda);
  CHECK_THROWS_AS(v.tril(0), ValueError);
  CHECK_THROWS_AS(v.triu(0), ValueError);
  CHECK_THROWS_AS(rand({}).to(kCuda).triu(0), ValueError);
  const Tensor m = rand({4, 4});
  CHECK(same_values(m.to(kCuda).tril(0), m.tril(0)));
}
