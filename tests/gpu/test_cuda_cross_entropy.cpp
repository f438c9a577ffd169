// GPU tests of cross_entropy's fused CUDA kernels against the CPU (whose composite is written
// with public operators): every floating dtype, rows short and long (a GPT vocabulary), rows
// misaligned for the 16-byte vectors, weights, ignore_index, label smoothing, the loss's and the
// logits' gradient, infinities, a bad target raised at the next wait, and a graph of the
// backward (create_graph) against the fused path.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::pending_index_error;
using gpu_test::values_of;

namespace {

std::string compare(const Tensor& got, const Tensor& want, double rtol) {
  return gpu_test::close_values(got, want, rtol);
}

struct Case {
  int64_t rows, classes;
  bool weighted, ignored;
  double smoothing;
  int64_t reduction;
};

// Loss and logits gradient on CUDA against the CPU's, from the same fp64-rounded inputs.
void check_case(const Case& c, DType dtype, int64_t offset) {
  const Tensor base = randn({c.rows * c.classes + offset}).to(dtype);
  const Tensor x = base.slice(0, offset).view({c.rows, c.classes});  // rows start misaligned when offset != 0
  Tensor target = randint(0, c.classes, {c.rows}, DType::Int64);
  if (c.ignored && c.rows > 0) target.slice(0, 0, std::nullopt, 4).fill_(-100);
  const std::optional<Tensor> w = c.weighted ? std::optional<Tensor>(rand({c.classes}) + 0.5) : std::nullopt;
  const std::string what =
      fmt::format("{} rows {} classes {} weighted {} ignored {} smoothing {} reduction {} offset {}", name(dtype),
                  c.rows, c.classes, c.weighted, c.ignored, c.smoothing, c.reduction, offset);
  // The CPU from the same values in fp64, then rounded to the dtype the result has.
  const Tensor x64 = x.to(DType::Float64).detach().requires_grad_();
  const std::optional<Tensor> w64 = w ? std::optional<Tensor>(w->to(DType::Float64)) : std::nullopt;
  const Tensor want = cross_entropy(x64, target, w64, c.reduction, -100, c.smoothing);
  const Tensor xg = gpu_test::to_cuda_same_layout(x).detach().requires_grad_();
  const std::optional<Tensor> wg = w ? std::optional<Tensor>(w->to(kCuda)) : std::nullopt;
  const Tensor got = cross_entropy(xg, target.to(kCuda), wg, c.reduction, -100, c.smoothing);
  CHECK(got.dtype() == dtype);
  CHECK(pending_index_error().empty());
  const double rtol = gpu_test::float_rtol(dtype, 2e-5, 1e-10);
  CHECK_MESSAGE(compare(got.cpu(), want.to(dtype), rtol).empty(), "loss ", what, ": ",
                compare(got.cpu(), want.to(dtype), rtol));
  const Tensor seed = randn(want.sizes(), DType::Float64);
  want.backward(seed);
  got.backward(seed.to(dtype).to(kCuda));
  const Tensor gx = xg.grad().cpu(), wx = x64.grad().to(dtype);
  CHECK_MESSAGE(compare(gx, wx, rtol).empty(), "gradient ", what, ": ", compare(gx, wx, rtol));
}

}  // namespace

TEST_CASE("cuda cross_entropy: the fused kernels match the CPU for every floating dtype") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(25);
  const std::vector<Case> cases = {
      {6, 5, false, false, 0.0, 1},    {6, 5, true, true, 0.0, 1},      {7, 33, false, true, 0.1, 0},
      {7, 33, true, true, 0.2, 2},     {3, 1000, false, false, 0.0, 1}, {4, 5003, true, true, 0.1, 1},
      {2, 50257, false, true, 0.0, 2}, {0, 7, false, false, 0.0, 2},    {5, 1, false, false, 0.0, 0},
  };
  for (DType dtype : gpu_test::kFloatingDtypes) {
    for (const Case& c : cases) {
      for (int64_t offset : {0, 3}) check_case(c, dtype, offset);
    }
  }
}

TEST_CASE("cuda cross_entropy: spatial inputs and 1-D inputs take the same path") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(26);
  const Tensor x = randn({2, 7, 3, 4});
  const Tensor t = randint(0, 7, {2, 3, 4}, DType::Int64);
  for (int64_t reduction : {0, 1, 2}) {
    const Tensor got = cross_entropy(x.to(kCuda), t.to(kCuda), std::nullopt, reduction, -100, 0.05).cpu();
    CHECK(compare(got, cross_entropy(x, t, std::nullopt, reduction, -100, 0.05), 1e-5).empty());
  }
  const Tensor v = randn({9});
  const Tensor c = tensor(std::vector<int64_t>{4}, {});
  CHECK(compare(cross_entropy(v.to(kCuda), c.to(kCuda)).cpu(), cross_entropy(v, c), 1e-5).empty());
}

TEST_CASE("cuda cross_entropy: infinities in the logits give the CPU's lse and loss") {
  ANATOMY_REQUIRE_GPU();
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor x = tensor(std::vector<double>{-inf, 0.0, 1.0, -inf, -inf, 2.0, 3.0, -inf, 0.5}, {3, 3});
  const Tensor t = tensor(std::vector<int64_t>{1, 2, 2}, {3});
  const auto [loss, lse] = _cross_entropy_rows(x.to(kCuda), t.to(kCuda), std::nullopt, -100, 0.0);
  const auto [want_loss, want_lse] = _cross_entropy_rows(x, t, std::nullopt, -100, 0.0);
  CHECK(compare(loss.cpu().to(DType::Float64), want_loss, 1e-6).empty());
  CHECK(compare(lse.cpu().to(DType::Float64), want_lse, 1e-6).empty());
  // A NaN anywhere in a long row (read by many threads) makes that row's loss NaN, as on the CPU.
  const Tensor wide = randn({2, 1000});
  wide[0][500].fill_(std::numeric_limits<double>::quiet_NaN());
  const Tensor wt = tensor(std::vector<int64_t>{3, 4}, {2});
  const Tensor rows = std::get<0>(_cross_entropy_rows(wide.to(kCuda), wt.to(kCuda), std::nullopt, -100, 0.0)).cpu();
  CHECK(std::isnan(rows[0].item<double>()));
  CHECK(std::isfinite(rows[1].item<double>()));
}

TEST_CASE("cuda cross_entropy: a target out of range is the CPU's IndexError at the next wait") {
  ANATOMY_REQUIRE_GPU();
  const Tensor x = randn({3, 4}, kCuda);
  CHECK(pending_index_error().empty());
  const Tensor loss = cross_entropy(x, tensor(std::vector<int64_t>{0, 4, 1}, {3}).to(kCuda));
  const std::string what = pending_index_error();
  CHECK(what.find("cross_entropy") != std::string::npos);
  CHECK(what.find('4') != std::string::npos);
  CHECK_THROWS_AS(cross_entropy(x.cpu(), tensor(std::vector<int64_t>{0, 4, 1}, {3})), IndexError);
  // The ignored rows' targets are never read as classes.
  const Tensor ok = cross_entropy(x, tensor(std::vector<int64_t>{0, -100, 1}, {3}).to(kCuda));
  CHECK(pending_index_error().empty());
  CHECK(std::isfinite(ok.item<float>()));
}

TEST_CASE("cuda cross_entropy: a graph of the backward (create_graph) gives the fused path's gradient") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(27);
  const Tensor x = randn({8, 40}, kCuda).requires_grad_();
  const Tensor t = randint(0, 40, {8}, DType::Int64).to(kCuda);
  const Tensor w = (rand({40}) + 0.5).to(kCuda);
  const Tensor fused = autograd::grad({cross_entropy(x, t, w, 1, -100, 0.1)}, {x})[0];
  const Tensor recorded = autograd::grad({cross_entropy(x, t, w, 1, -100, 0.1)}, {x}, {}, true, true)[0];
  CHECK(compare(fused.cpu(), recorded.detach().cpu(), 1e-5).empty());
  // The second derivative exists: the gradient's norm differentiated again.
  const Tensor gg = autograd::grad({recorded.square().sum()}, {x})[0];
  CHECK(gg.sizes() == x.sizes());
}
