// GPU tests of softmax and log_softmax on CUDA against the CPU: every floating dtype, the four
// kernel shapes (rows in registers of a warp or of a block, longer rows per block, an outer dim
// per column), misaligned rows, dtype=, non-contiguous and zero-size inputs, NaN and
// infinities, and the gradient through autograd.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::values_of;

namespace {

// CUDA result against the CPU's: same shape and dtype, values within rtol (plus rtol absolute,
// for probabilities near zero), NaN matching NaN, infinities exactly.
std::string compare_to_cpu(const Tensor& got, const Tensor& want) {
  if (!got.is_cuda()) return "the result is not on CUDA";
  if (got.sizes() != want.sizes() || got.dtype() != want.dtype()) return "shape or dtype differs";
  return gpu_test::close_values(got, want, gpu_test::float_rtol(want.dtype(), 1e-5, 1e-12));
}

void check_both(const Tensor& x, int64_t dim, const std::string& what, std::optional<DType> dtype = std::nullopt) {
  const Tensor g = x.to(kCuda);
  CHECK_MESSAGE(compare_to_cpu(softmax(g, dim, dtype), softmax(x, dim, dtype)).empty(), "softmax ", what);
  CHECK_MESSAGE(compare_to_cpu(log_softmax(g, dim, dtype), log_softmax(x, dim, dtype)).empty(), "log_softmax ", what);
}

// Long rows against the fp64 CPU result rounded to x's dtype: the CPU's own fp32 sum of 70001
// exponentials, one value after another, is off by 8e-5 relative, more than the tolerance,
// while the CUDA kernel's tree of partial sums is not.
void check_long_rows(const Tensor& x, const std::string& what) {
  const Tensor g = x.to(kCuda), x64 = x.to(DType::Float64);
  CHECK_MESSAGE(compare_to_cpu(softmax(g, 1, std::nullopt), softmax(x64, 1, std::nullopt).to(x.dtype())).empty(),
                "softmax ", what);
  CHECK_MESSAGE(
      compare_to_cpu(log_softmax(g, 1, std::nullopt), log_softmax(x64, 1, std::nullopt).to(x.dtype())).empty(),
      "log_softmax ", what);
}

}  // namespace

TEST_CASE("cuda softmax: every floating dtype and kernel shape matches the CPU") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(21);
  for (DType d : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    CAPTURE(name(d));
    const Tensor x = randn({37, 45, 3}, DType::Float32).mul(4).to(d);
    check_both(x, 2, "last dim of 3");
    check_both(x, 1, "middle dim (columns)");
    check_both(x, 0, "first dim (columns)");
    check_both(x.transpose(0, 2), 2, "transposed");
    check_both(x.slice(1, 3, 40, 2), 1, "sliced");
    // Around the register rows' limits (a warp: 256 doubles, 512 floats; a block: 8192 doubles,
    // 16384 floats) and the vector width.
    for (int64_t n :
         {1, 31, 32, 33, 255, 256, 257, 511, 512, 513, 1000, 1024, 1025, 5000, 8192, 8193, 16384, 16385, 70001}) {
      CAPTURE(n);
      check_long_rows(randn({3, n}, DType::Float32).mul(3).to(d), "rows");
    }
    check_both(randn({70000, 20}, DType::Float32).to(d), -1, "many short rows");
  }
  check_both(randn({8, 100}, DType::Float16), 1, "fp16 in, fp32 out", DType::Float32);
  check_both(randn({4, 0, 5}, DType::Float32), 1, "empty dim");
  check_both(randn({0, 7}, DType::Float32), 1, "no rows");
  check_both(randn({}, DType::Float32), 0, "0-dim");
}

TEST_CASE("cuda softmax: misaligned rows take the scalar loads") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(23);
  for (DType d : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    CAPTURE(name(d));
    for (int64_t n : {64, 4096, 8192}) {  // vector multiples: only the offset stops vectors
      CAPTURE(n);
      // A contiguous input one element into its storage.
      const Tensor flat = randn({3 * n + 1}, DType::Float32).mul(3).to(d);
      const Tensor g = flat.to(kCuda).slice(0, 1, 3 * n + 1).view({3, n});
      const Tensor x64 = flat.slice(0, 1, 3 * n + 1).view({3, n}).to(DType::Float64);
      REQUIRE(g.is_contiguous());
      CHECK(compare_to_cpu(softmax(g, 1, std::nullopt), softmax(x64, 1, std::nullopt).to(d)).empty());
      CHECK(compare_to_cpu(log_softmax(g, 1, std::nullopt), log_softmax(x64, 1, std::nullopt).to(d)).empty());
    }
  }
}

TEST_CASE("cuda softmax: NaN and infinities as on the CPU") {
  ANATOMY_REQUIRE_GPU();
  const double kNaN = std::numeric_limits<double>::quiet_NaN(), kInf = std::numeric_limits<double>::infinity();
  for (DType d : {DType::Float32, DType::BFloat16, DType::Float64}) {
    CAPTURE(name(d));
    // Rows: a NaN; -inf among finite values; all -inf; a +inf.
    const Tensor x =
        tensor(std::vector<double>{1, kNaN, 2, 0, -kInf, 1, 3, 2, -kInf, -kInf, -kInf, -kInf, 1, kInf, 2, 0}, {4, 4},
               DType::Float64)
            .to(d);
    check_both(x, 1, "rows");
    check_both(x, 0, "columns");
    // Rows longer than a warp holds (one block each): the special rows repeated, and random rows
    // with some -inf.
    check_both(x.view({1, 16}).expand({100, 16}).contiguous().view({1, 1600}), 1, "long special row");
    const Tensor r = randn({3, 3000}, DType::Float32).to(d);
    check_both(masked_fill(r, r > 1.0, -kInf), 1, "long rows with -inf");
  }
}

TEST_CASE("cuda softmax: the gradient matches the CPU's") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(22);
  const Tensor x = randn({6, 50});
  const Tensor w = randn({6, 50});
  for (bool log : {false, true}) {
    CAPTURE(log);
    const Tensor xc = x.clone().requires_grad_(), xg = x.to(kCuda).requires_grad_();
    const Tensor yc = log ? log_softmax(xc, 1) : softmax(xc, 1), yg = log ? log_softmax(xg, 1) : softmax(xg, 1);
    sum(yc * w).backward();
    sum(yg * w.to(kCuda)).backward();
    CHECK(compare_to_cpu(xg.grad(), xc.grad()).empty());
  }
}
