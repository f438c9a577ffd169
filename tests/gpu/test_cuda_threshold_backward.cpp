// GPU tests of threshold_backward (relu's gradient) against the CPU on random signed inputs:
// every numeric dtype, contiguous, transposed, sliced, broadcast, expanded, 0-dim, zero-size and
// large (vectorized with a tail) layouts, NaN and signed zeros, mixed dtypes and CPU scalars. The
// result only ever selects 0 or a grad_output element, so CUDA must give the CPU's numbers
// exactly. Also: errors, and relu's backward on CUDA as one threshold_backward call.
// tests/gpu/test_cuda_op_table.cpp runs the op-table entries against their fp64 references.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::same_numbers;

namespace {

const std::vector<DType> kNumeric = {DType::UInt8,   DType::Int8,     DType::Int32,   DType::Int64,
                                     DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

// Random values of both signs: randn for floats, [-50, 50) for signed integers, [0, 100) for uint8.
Tensor signed_sample(std::vector<int64_t> sizes, DType d) {
  if (is_floating(d)) return randn(sizes, d);
  if (d == DType::UInt8) return randint(0, 100, sizes, d);
  return randint(-50, 50, sizes, d);
}

struct Pair {
  std::string label;
  Tensor grad, self;
};

std::vector<Pair> layouts(DType d) {
  std::vector<Pair> v;
  v.push_back({"contiguous", signed_sample({33, 65}, d), signed_sample({33, 65}, d)});
  v.push_back({"transposed", signed_sample({65, 33}, d).t(), signed_sample({65, 33}, d).t()});
  v.push_back({"sliced", signed_sample({40, 70}, d).slice(0, 3).slice(1, 1, 69, 2),
               signed_sample({40, 70}, d).slice(0, 3).slice(1, 1, 69, 2)});
  v.push_back({"broadcast", signed_sample({6, 1, 5}, d), signed_sample({4, 5}, d)});
  v.push_back({"expanded self", signed_sample({7, 9}, d), signed_sample({1, 9}, d).expand({7, 9})});
  v.push_back({"0-dim", signed_sample({}, d), signed_sample({}, d)});
  v.push_back({"zero-size", signed_sample({0, 3}, d), signed_sample({0, 3}, d)});
  v.push_back({"large", signed_sample({(1 << 20) + 3}, d), signed_sample({(1 << 20) + 3}, d)});
  return v;
}

}  // namespace

TEST_CASE("cuda threshold_backward: every numeric dtype and layout gives the CPU's values") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(7);
  for (DType d : kNumeric) {
    for (const Pair& p : layouts(d)) {
      for (double threshold : {0.0, 0.5, -1.0}) {
        if (d == DType::UInt8 && threshold < 0) continue;  // does not fit uint8: a ValueError
        INFO(name(d), " ", p.label, " threshold ", threshold);
        const Tensor want = threshold_backward(p.grad, p.self, threshold);
        const Tensor got =
            threshold_backward(gpu_test::to_cuda_same_layout(p.grad), gpu_test::to_cuda_same_layout(p.self), threshold);
        CHECK(got.is_cuda());
        CHECK(same_numbers(got, want));
      }
    }
  }
}

TEST_CASE("cuda threshold_backward: NaN, signed zeros, mixed dtypes and CPU scalars") {
  ANATOMY_REQUIRE_GPU();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (DType d : gpu_test::kFloatingDtypes) {
    CAPTURE(name(d));
    const Tensor g = tensor(std::vector<double>{nan, 1, 2, -0.0, nan, inf, 3, 4}, {8}, DType::Float64).to(d);
    const Tensor x = tensor(std::vector<double>{-1, nan, -0.0, 0.0, 2, -inf, inf, 1e-3}, {8}, DType::Float64).to(d);
    CHECK(same_numbers(threshold_backward(g.to(kCuda), x.to(kCuda), 0), threshold_backward(g, x, 0)));
    // A threshold that fp16 would round: compared in float on both sides.
    CHECK(same_numbers(threshold_backward(g.to(kCuda), x.to(kCuda), 1e-3 * 0.9999),
                       threshold_backward(g, x, 1e-3 * 0.9999)));
  }
  // Mixed dtypes promote (fp16 with fp32 gives fp32; int64 with bf16 gives bf16).
  const Tensor g16 = randn({5, 6}, DType::Float16), x32 = randn({5, 6});
  CHECK(same_numbers(threshold_backward(g16.to(kCuda), x32.to(kCuda), 0), threshold_backward(g16, x32, 0)));
  const Tensor gi = randint(-5, 5, {5, 6}, DType::Int64), xb = randn({5, 6}, DType::BFloat16);
  CHECK(same_numbers(threshold_backward(gi.to(kCuda), xb.to(kCuda), 0), threshold_backward(gi, xb, 0)));
  // A 0-dim CPU self (read on the host) with a CUDA gradient, and the other way round.
  const Tensor s = full({}, 0.25);
  const Tensor g = randn({3, 4});
  CHECK(same_numbers(threshold_backward(g.to(kCuda), s, 0.1), threshold_backward(g, s, 0.1)));
  CHECK(same_numbers(threshold_backward(s, x32.to(kCuda), 0.1), threshold_backward(s, x32, 0.1)));
}

TEST_CASE("cuda threshold_backward: bad inputs raise typed errors naming the op") {
  ANATOMY_REQUIRE_GPU();
  const TensorOptions cuda = TensorOptions().device(kCuda);
  const Tensor a = randn({2, 3}, cuda);
  auto raises = [](auto f, const char* needle) {
    try {
      f();
    } catch (const Error& e) {
      CHECK(std::string(e.what()).find("threshold_backward") != std::string::npos);
      CHECK(std::string(e.what()).find(needle) != std::string::npos);
      return true;
    }
    return false;
  };
  CHECK(raises([&] { threshold_backward(a, randn({2, 3}), 0); }, "cpu"));
  CHECK(raises([&] { threshold_backward(a, randn({4}, cuda), 0); }, "[4]"));
  const Tensor b = ones({3}, cuda.dtype(DType::Bool));
  CHECK(raises([&] { threshold_backward(b, b, 0); }, "bool"));
  const Tensor i8 = ones({3}, cuda.dtype(DType::Int8));
  CHECK(raises([&] { threshold_backward(i8, i8, 300); }, "300"));
}

TEST_CASE("cuda threshold_backward: relu's backward on CUDA is one threshold_backward call") {
  ANATOMY_REQUIRE_GPU();
  const Tensor x = randn({64, 32}).to(kCuda).requires_grad_();
  const Tensor g = randn({64, 32}).to(kCuda);
  const Tensor y = relu(x);
  dispatch::Tracer tracer;
  y.backward(g);
  int thresholds = 0, others = 0;
  for (const dispatch::TracedCall& c : tracer.calls()) {
    if (c.depth != 0) continue;
    if (c.op == "aten::threshold_backward") ++thresholds;
    else if (c.op == "aten::where.self" || c.op == "aten::gt.Tensor") ++others;
  }
  CHECK(thresholds == 1);
  CHECK(others == 0);
  const Tensor xc = x.detach().cpu(), gc = g.cpu();
  CHECK(same_numbers(x.grad(), threshold_backward(gc, relu(xc), 0).to(kCuda)));
}
