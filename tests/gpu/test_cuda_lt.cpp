// GPU tests of the cuBLASLt paths: int8 products on the integer kernels (gemm_int8_lt.cpp)
// bit for bit against the CPU and the exact kernel, on shapes and layouts that meet Note [Exact
// int8 products on cuBLASLt] and shapes that do not, up to k at the overflow bound; and
// _addmm_activation's ReLU/GELU epilogues (addmm_lt.cpp) against the CPU for fp32, fp16 and
// bf16, the shapes that fall back to addmm then the activation, and backward through both.
#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::same_values;

namespace {

// int8 values over the whole range [-128, 127], on the CPU.
Tensor int8s(IntArrayRef sizes) { return randint(-128, 128, sizes, DType::Int8); }

// The exact kernel's answer for the same operands: alpha == -1 is outside the Lt path's
// conditions, and negating an int32 sum of int8 products (never INT_MIN here) is exact.
Tensor exact_kernel_mm(const Tensor& a, const Tensor& b) {
  const Tensor zero = zeros({}, TensorOptions().dtype(DType::Int8).device(a.device()));
  return neg(addmm(zero, a, b, 0, -1));
}

// mm of CUDA operands equals the CPU's product and the exact kernel's, bit for bit.
void check_int8_mm(const Tensor& a, const Tensor& b) {
  const Tensor out = mm(a, b);
  REQUIRE(out.dtype() == DType::Int32);
  CHECK(out.device() == kCuda);
  CHECK(same_values(out, mm(a.cpu(), b.cpu())));
  CHECK(same_values(out, exact_kernel_mm(a, b)));
}

double relative_error(const Tensor& x, const Tensor& ref) {
  REQUIRE(x.sizes() == ref.sizes());
  if (ref.numel() == 0) return 0;
  const Tensor r = ref.cpu().to(DType::Float64);
  const double scale = std::max(1e-30, r.abs().max().item<double>());
  return (x.cpu().to(DType::Float64) - r).abs().max().item<double>() / scale;
}

double tolerance(DType d) {
  switch (d) {
    case DType::Float32:
      return 1e-5;
    case DType::Float16:
      return 4e-3;
    default:
      return 2e-2;
  }
}

Tensor uniform(IntArrayRef sizes, DType d) { return (rand(sizes, DType::Float64) * 2 - 1).to(d); }

// The fp64 CPU answer of _addmm_activation.
Tensor reference_activation(const Tensor& self, const Tensor& a, const Tensor& b, double beta, double alpha,
                            bool use_gelu) {
  const auto f64 = [](const Tensor& t) { return t.cpu().to(DType::Float64); };
  const Tensor pre = addmm(f64(self), f64(a), f64(b), beta, alpha);
  return use_gelu ? gelu(pre, "tanh") : relu(pre);
}

const std::vector<DType> kLtFloats = {DType::Float32, DType::Float16, DType::BFloat16};

}  // namespace

TEST_CASE("cuda lt: int8 mm in the TN layout (linear's x @ w.t()) equals the CPU and the exact kernel") {
  ANATOMY_REQUIRE_GPU();
  for (auto [n, k, m] : std::vector<std::array<int64_t, 3>>{{8, 16, 4}, {37, 64, 28}, {1, 4, 4}, {130, 260, 96}}) {
    CAPTURE(n);
    CAPTURE(k);
    CAPTURE(m);
    const Tensor x = int8s({n, k}).to(kCuda), w = int8s({m, k}).to(kCuda);
    check_int8_mm(x, w.t());
  }
}

TEST_CASE("cuda lt: int8 mm outside the conditions (sizes, alignment, layouts) equals the CPU") {
  ANATOMY_REQUIRE_GPU();
  // m or k not a multiple of 4: the exact kernel.
  check_int8_mm(int8s({9, 18}).to(kCuda), int8s({5, 18}).to(kCuda).t());
  check_int8_mm(int8s({9, 16}).to(kCuda), int8s({6, 16}).to(kCuda).t());
  // Small products in other layouts: the exact kernel; large ones: staged into the TN layout.
  for (int64_t s : {24, 256}) {
    CAPTURE(s);
    const Tensor a = int8s({s, s}).to(kCuda), b = int8s({s, s}).to(kCuda);
    const Tensor at = int8s({s, s}).to(kCuda).t(), bt = int8s({s, s}).to(kCuda).t();
    check_int8_mm(a, b);    // both row-major (NN)
    check_int8_mm(at, b);   // both transposed views
    check_int8_mm(at, bt);  // mat1 column-major
    check_int8_mm(a, bt);   // TN as is
  }
  // An address off the 4-byte grid: a storage offset of one element.
  const Tensor base = int8s({257 * 256}).to(kCuda);
  const Tensor shifted = base.slice(0, 1, 1 + 256 * 256).view({256, 256});
  check_int8_mm(shifted, int8s({256, 256}).to(kCuda).t());
  check_int8_mm(shifted.slice(0, 0, 8), int8s({256, 8}).to(kCuda));
  // Every other column: neither layout.
  check_int8_mm(int8s({64, 512}).to(kCuda).slice(1, 0, 512, 2), int8s({128, 256}).to(kCuda).t());
}

TEST_CASE("cuda lt: int8 mm with k at the overflow bound: exact below it, wrapping like the CPU above it") {
  ANATOMY_REQUIRE_GPU();
  // (-128) * (-128) = 2^14 per term: k = 2^17 - 4 sums to 2^31 - 2^16, the largest Lt sum; k = 2^17
  // reaches 2^31, which wraps to INT_MIN in the exact kernel and on the CPU (Lt declines it).
  for (int64_t k : {(int64_t{1} << 17) - 4, int64_t{1} << 17}) {
    CAPTURE(k);
    const Tensor a = full({8, k}, -128, DType::Int8).to(kCuda), w = full({4, k}, -128, DType::Int8).to(kCuda);
    const Tensor out = mm(a, w.t());
    CHECK(same_values(out, mm(a.cpu(), w.cpu().t())));
    const int64_t expected = k * 16384;
    const int64_t wrapped = expected >= (int64_t{1} << 31) ? expected - (int64_t{1} << 32) : expected;
    CHECK(gpu_test::values_of(out)[0] == static_cast<double>(wrapped));
    // Mixed signs, full range: still bit for bit.
    check_int8_mm(int8s({8, k}).to(kCuda), int8s({4, k}).to(kCuda).t());
  }
}

TEST_CASE("cuda lt: int8 bmm, addmm and baddbmm on the Lt path equal the CPU") {
  ANATOMY_REQUIRE_GPU();
  const Tensor a = int8s({3, 20, 32}), b = int8s({3, 12, 32}).mT();
  CHECK(same_values(bmm(a.to(kCuda), b.to(kCuda)), bmm(a, b)));
  // A broadcast batch (stride 0), small: the exact kernel; large: staged.
  const Tensor a1 = int8s({1, 20, 32}).expand({3, 20, 32});
  CHECK(same_values(bmm(a1.to(kCuda), b.to(kCuda)), bmm(a1, b)));
  const Tensor big_a = int8s({1, 128, 256}).expand({4, 128, 256}), big_b = int8s({4, 256, 128});
  CHECK(same_values(bmm(big_a.to(kCuda), big_b.to(kCuda)), bmm(big_a, big_b)));
  // addmm: beta 1 (the int8 self added by the kernel), beta 0, and beta 2 / alpha 3 (exact kernel).
  const Tensor self = int8s({20, 12}), bias = int8s({12}), x = int8s({20, 32}), w = int8s({12, 32});
  for (auto [beta, alpha] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {0, 1}, {2, 3}, {1, -1}}) {
    CAPTURE(beta);
    CAPTURE(alpha);
    CHECK(same_values(addmm(self.to(kCuda), x.to(kCuda), w.to(kCuda).t(), beta, alpha),
                      addmm(self, x, w.t(), beta, alpha)));
    CHECK(same_values(addmm(bias.to(kCuda), x.to(kCuda), w.to(kCuda).t(), beta, alpha),
                      addmm(bias, x, w.t(), beta, alpha)));
  }
  const Tensor bself = int8s({3, 20, 12});
  CHECK(same_values(baddbmm(bself.to(kCuda), a.to(kCuda), b.to(kCuda)), baddbmm(bself, a, b)));
  // out= into an offset int32 view.
  Tensor buf = zeros({20 * 12 + 1}, TensorOptions().dtype(DType::Int32).device(kCuda));
  Tensor out = buf.slice(0, 1, 1 + 20 * 12).view({20, 12});
  mm_out(out, x.to(kCuda), w.to(kCuda).t());
  CHECK(same_values(out, mm(x, w.t())));
}

TEST_CASE("cuda lt: _addmm_activation relu and gelu match the CPU for fp32, fp16 and bf16") {
  ANATOMY_REQUIRE_GPU();
  for (DType d : kLtFloats) {
    for (bool use_gelu : {false, true}) {
      CAPTURE(name(d));
      CAPTURE(use_gelu);
      const Tensor x = uniform({64, 96}, d), w = uniform({40, 96}, d), bias = uniform({40}, d);
      // The fused case: a bias vector, beta 1, alpha 1 or 2, weight transposed (linear) or not.
      for (double alpha : {1.0, 2.0}) {
        const Tensor out = _addmm_activation(bias.to(kCuda), x.to(kCuda), w.to(kCuda).t(), 1, alpha, use_gelu);
        CHECK(out.device() == kCuda);
        CHECK(out.dtype() == d);
        CHECK(relative_error(out, reference_activation(bias, x, w.t(), 1, alpha, use_gelu)) < tolerance(d));
        CHECK(relative_error(out, _addmm_activation(bias, x, w.t(), 1, alpha, use_gelu)) < tolerance(d));
      }
      const Tensor w2 = uniform({96, 40}, d);
      CHECK(relative_error(_addmm_activation(bias.to(kCuda), x.to(kCuda), w2.to(kCuda), 1, 1, use_gelu),
                           reference_activation(bias, x, w2, 1, 1, use_gelu)) < tolerance(d));
      // Fallbacks: a full self, a column bias with beta 0.5, an offset bias, one row, beta 0.
      const Tensor full_self = uniform({64, 40}, d), col = uniform({64, 1}, d);
      const Tensor offset_bias = uniform({41}, d).to(kCuda).slice(0, 1, 41);
      CHECK(relative_error(_addmm_activation(full_self.to(kCuda), x.to(kCuda), w.to(kCuda).t(), 1, 1, use_gelu),
                           reference_activation(full_self, x, w.t(), 1, 1, use_gelu)) < tolerance(d));
      CHECK(relative_error(_addmm_activation(col.to(kCuda), x.to(kCuda), w.to(kCuda).t(), 0.5, 1, use_gelu),
                           reference_activation(col, x, w.t(), 0.5, 1, use_gelu)) < tolerance(d));
      CHECK(relative_error(_addmm_activation(offset_bias, x.to(kCuda), w.to(kCuda).t(), 1, 1, use_gelu),
                           reference_activation(offset_bias, x, w.t(), 1, 1, use_gelu)) < tolerance(d));
      const Tensor row = x.slice(0, 0, 1);
      CHECK(relative_error(_addmm_activation(bias.to(kCuda), row.to(kCuda), w.to(kCuda).t(), 1, 1, use_gelu),
                           reference_activation(bias, row, w.t(), 1, 1, use_gelu)) < tolerance(d));
      CHECK(relative_error(_addmm_activation(bias.to(kCuda), x.to(kCuda), w.to(kCuda).t(), 0, 1, use_gelu),
                           reference_activation(bias, x, w.t(), 0, 1, use_gelu)) < tolerance(d));
    }
  }
}

TEST_CASE("cuda lt: _addmm_activation's relu writes exact zeros, and every layout of a large product agrees") {
  ANATOMY_REQUIRE_GPU();
  const Tensor x = uniform({512, 256}, DType::Float32).to(kCuda), w = uniform({384, 256}, DType::Float32).to(kCuda);
  const Tensor bias = uniform({384}, DType::Float32).to(kCuda);
  const Tensor out = _addmm_activation(bias, x, w.t());
  CHECK(out.min().item<double>() == 0.0);
  CHECK(eq(out, Scalar(0)).sum().item<int64_t>() > 0);
  CHECK(relative_error(out, relu(addmm(bias, x, w.t()))) < 1e-6);
  CHECK(relative_error(out, reference_activation(bias, x, w.t(), 1, 1, false)) < 1e-5);
  CHECK(relative_error(_addmm_activation(bias, x, w.t(), 1, 1, true),
                       reference_activation(bias, x, w.t(), 1, 1, true)) < 1e-5);
  // Zero sizes.
  const Tensor n0 = _addmm_activation(bias, x.slice(0, 0, 0), w.t());
  CHECK((n0.sizes()[0] == 0 && n0.sizes()[1] == 384));
  const Tensor k0 = _addmm_activation(bias, empty({4, 0}, x.options()), empty({0, 384}, x.options()), 1, 1, true);
  CHECK(relative_error(k0, gelu(bias.cpu().to(DType::Float64).expand({4, 384}), "tanh")) < 1e-6);
}

TEST_CASE("cuda lt: backward through _addmm_activation matches the CPU's") {
  ANATOMY_REQUIRE_GPU();
  for (bool use_gelu : {false, true}) {
    for (bool fused : {true, false}) {
      CAPTURE(use_gelu);
      CAPTURE(fused);
      const Tensor x0 = uniform({48, 32}, DType::Float32), w0 = uniform({24, 32}, DType::Float32);
      const Tensor b0 = fused ? uniform({24}, DType::Float32) : uniform({48, 1}, DType::Float32);
      const Tensor g0 = uniform({48, 24}, DType::Float32);
      const double beta = fused ? 1.0 : 0.5, alpha = 1.5;
      std::vector<Tensor> grads[2];
      for (int dev = 0; dev < 2; ++dev) {
        const Tensor x = (dev ? x0.to(kCuda) : x0.clone()).requires_grad_(true);
        const Tensor w = (dev ? w0.to(kCuda) : w0.clone()).requires_grad_(true);
        const Tensor b = (dev ? b0.to(kCuda) : b0.clone()).requires_grad_(true);
        const Tensor out = _addmm_activation(b, x, w.t(), beta, alpha, use_gelu);
        out.backward(dev ? g0.to(kCuda) : g0);
        grads[dev] = {x.grad(), w.grad(), b.grad()};
      }
      for (int i = 0; i < 3; ++i) {
        CAPTURE(i);
        CHECK(grads[1][i].device() == kCuda);
        CHECK(relative_error(grads[1][i], grads[0][i]) < 1e-5);
      }
    }
  }
}
