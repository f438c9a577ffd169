// GPU tests of batch_norm (the CUDA kernels of backends/cuda/channel_norm/) and group_norm (the
// composites) against the CPU: every floating dtype, float32 parameters for fp16/bf16 inputs,
// contiguous and channels_last inputs of rank 2 to 5 (the plane and the column reductions, with
// and without the 16-byte loads), training with the running statistics updated in place, eval,
// the backward with every output_mask, and the layout of the results.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "anatomy/testing/layouts.h"
#include "gpu_test_util.h"

using namespace anatomy;
using anatomy::testing::channels_last_copy;
using gpu_test::close_values;
using gpu_test::kCuda;

namespace {

std::optional<Tensor> opt(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }
Tensor cuda_of(const Tensor& t) { return t.defined() ? gpu_test::to_cuda_same_layout(t) : t; }

double rtol_of(DType d) { return gpu_test::float_rtol(d, 2e-5, 1e-11); }

void check_close(const Tensor& got, const Tensor& want, double rtol, const char* what) {
  const std::string diff = close_values(got, want, rtol);
  CHECK_MESSAGE(diff.empty(), what, ": ", diff);
}

// One forward and backward on both devices; running statistics of `stat` dtype.
void check_batch_norm(const Tensor& x, DType param, bool training, bool affine, const std::string& what) {
  CAPTURE(what);
  CAPTURE(training);
  const int64_t C = x.size(1);
  const Tensor w = affine ? randn({C}).to(param) : Tensor(), b = affine ? randn({C}).to(param) : Tensor();
  const Tensor rm = randn({C}).to(param), rv = (rand({C}) + 0.5).to(param);
  const Tensor rm_g = cuda_of(rm), rv_g = cuda_of(rv), xg = cuda_of(x);
  auto [y, mean, invstd] = native_batch_norm(x, opt(w), opt(b), rm, rv, training, 0.1, 1e-5);
  auto [yg, mean_g, invstd_g] =
      native_batch_norm(xg, opt(cuda_of(w)), opt(cuda_of(b)), rm_g, rv_g, training, 0.1, 1e-5);
  const double rtol = rtol_of(x.dtype());
  check_close(yg, y, rtol, "output");
  check_close(mean_g, mean, rtol_of(mean.dtype()) * 10, "save_mean");
  check_close(invstd_g, invstd, rtol_of(mean.dtype()) * 10, "save_invstd");
  check_close(rm_g, rm, rtol_of(param) * 10, "running_mean");
  check_close(rv_g, rv, rtol_of(param) * 10, "running_var");
  CHECK(yg.strides() == y.strides());
  const Tensor g = randn(x.sizes()).to(x.dtype());
  for (const std::array<bool, 3>& mask :
       {std::array<bool, 3>{true, true, true}, std::array<bool, 3>{true, false, false},
        std::array<bool, 3>{false, true, true}}) {
    auto [dx, dw, db] = native_batch_norm_backward(g, x, opt(w), rm, rv, mean, invstd, training, 1e-5, mask);
    auto [dxg, dwg, dbg] =
        native_batch_norm_backward(cuda_of(g), xg, opt(cuda_of(w)), rm_g, rv_g, mean_g, invstd_g, training, 1e-5, mask);
    CHECK(dx.defined() == dxg.defined());
    if (dx.defined()) check_close(dxg, dx, rtol * 20, "grad_input");
    // The parameter gradients are sums over N * S values: compared relative to their size.
    if (dw.defined()) check_close(dwg, dw, rtol * 50, "grad_weight");
    if (db.defined()) check_close(dbg, db, rtol * 50, "grad_bias");
  }
}

}  // namespace

TEST_CASE("cuda batch_norm: every floating dtype, layout and rank matches the CPU") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(61);
  for (DType d : gpu_test::kFloatingDtypes) {
    CAPTURE(name(d));
    for (bool training : {true, false}) {
      check_batch_norm(randn({16, 5}).to(d), d, training, true, "2-d");
      check_batch_norm(randn({4, 3, 37}).to(d), d, training, false, "3-d, odd plane (scalar loads)");
      check_batch_norm(randn({4, 8, 6, 8}).to(d), d, training, true, "4-d contiguous (vector loads)");
      check_batch_norm(channels_last_copy(randn({4, 16, 5, 7})).to(d), d, training, true, "channels_last");
      check_batch_norm(channels_last_copy(randn({3, 5, 4, 3})).to(d), d, training, true,
                       "channels_last, C not a multiple of the vector");
      check_batch_norm(channels_last_copy(randn({2, 8, 3, 4, 5})).to(d), d, training, true, "channels_last 3-d");
      check_batch_norm(randn({64, 300, 4, 4}).to(d), d, training, true, "many rows and channels");
      check_batch_norm(channels_last_copy(randn({32, 256, 8, 8})).to(d), d, training, true, "many rows, NHWC");
      // apply's coefficients held in registers: C a multiple of a block's 256 vectors (two
      // blocks per row of channels), and C that neither divides nor is a multiple of them
      // (apply_kernel).
      check_batch_norm(channels_last_copy(randn({2, 4096, 2, 3})).to(d), d, training, true, "NHWC, C = 4096");
      check_batch_norm(channels_last_copy(randn({8, 24, 9, 9})).to(d), d, training, true, "NHWC, C = 24");
      if (d == DType::Float16 || d == DType::BFloat16) {
        check_batch_norm(channels_last_copy(randn({8, 64, 7, 7})).to(d), DType::Float32, training, true,
                         "mixed precision, channels_last");
        check_batch_norm(randn({8, 6, 9}).to(d), DType::Float32, training, true, "mixed precision, contiguous");
      }
    }
  }
}

TEST_CASE("cuda batch_norm: a large common offset keeps the variance (shifted sums)") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(62);
  const Tensor x = randn({64, 4, 8, 8}) + 1000.0;
  auto [y, m, r] = native_batch_norm(x, std::nullopt, std::nullopt, std::nullopt, std::nullopt, true, 0.1, 1e-5);
  auto [yg, mg, rg] =
      native_batch_norm(x.to(kCuda), std::nullopt, std::nullopt, std::nullopt, std::nullopt, true, 0.1, 1e-5);
  check_close(rg, r, 1e-3, "invstd");
  check_close(yg, y, 1e-3, "output");
}

TEST_CASE("cuda batch_norm: zero-size batches and strided running statistics") {
  ANATOMY_REQUIRE_GPU();
  const Tensor x = randn({0, 3, 4}).to(kCuda);
  const Tensor rm = zeros({3}).to(kCuda), rv = ones({3}).to(kCuda);
  auto [y, m, r] = native_batch_norm(x, std::nullopt, std::nullopt, rm, rv, false, 0.1, 1e-5);
  CHECK(y.sizes() == x.sizes());
  check_close(m, zeros({3}), 0, "eval save_mean");
  // Running statistics that the kernel cannot update in place (a strided view) take the
  // operators' path.
  const Tensor base = zeros({3, 2}).to(kCuda), xs = randn({5, 3}).to(kCuda);
  const Tensor view = base.select(1, 0);
  batch_norm(xs, std::nullopt, std::nullopt, view, ones({3}).to(kCuda), true, 1.0, 1e-5);
  check_close(view, xs.to(kCPU).mean({0}), 1e-5, "running_mean through a view");
}

TEST_CASE("cuda group_norm: the composites match the CPU, channels_last in, channels_last out") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(63);
  for (DType d : gpu_test::kFloatingDtypes) {
    CAPTURE(name(d));
    for (const Tensor& x : {randn({4, 6, 5, 5}).to(d), channels_last_copy(randn({4, 6, 5, 5})).to(d)}) {
      const Tensor w = randn({6}).to(d), b = randn({6}).to(d);
      const Tensor y = group_norm(x, 3, w, b), yg = group_norm(cuda_of(x), 3, cuda_of(w), cuda_of(b));
      check_close(yg, y, rtol_of(d) * 10, "group_norm");
      CHECK(yg.strides() == y.strides());
    }
  }
}

TEST_CASE("cuda batch_norm: gradients through autograd match the CPU") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(64);
  const Tensor base = channels_last_copy(randn({8, 16, 4, 4}, DType::Float64));
  const Tensor go = randn({8, 16, 4, 4}, DType::Float64);
  Tensor x = base.clone().requires_grad_(), w = randn({16}, DType::Float64).requires_grad_();
  Tensor xg = cuda_of(base).requires_grad_(), wg = cuda_of(w.detach()).requires_grad_();
  (batch_norm(x, w, std::nullopt, std::nullopt, std::nullopt, true, 0.1, 1e-5) * go).sum().backward();
  (batch_norm(xg, wg, std::nullopt, std::nullopt, std::nullopt, true, 0.1, 1e-5) * go.to(kCuda)).sum().backward();
  check_close(xg.grad(), x.grad(), 1e-9, "input gradient");
  check_close(wg.grad(), w.grad(), 1e-9, "weight gradient");
}
