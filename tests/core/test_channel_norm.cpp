// batch_norm and group_norm: what the op table does not express. The running statistics'
// in-place update, the layout of the results (channels_last in, channels_last out), devices that
// differ, Meta, and mixed-precision gradients.
#include <array>

#include "anatomy/anatomy.h"
#include "anatomy/dispatch/operator_entry.h"
#include "anatomy/testing/layouts.h"
#include "test_util.h"

using namespace anatomy;
using anatomy::testing::channels_last_copy;
using namespace anatomy_test;

namespace {

bool same_strides(const Tensor& a, const Tensor& b) { return vec(a.strides()) == vec(b.strides()); }

}  // namespace

TEST_CASE("batch_norm: training updates the running statistics in place, eval leaves them") {
  const Tensor x = randn({4, 3, 5}, DType::Float64);
  const Tensor rm = tensor({0.5, -1.0, 2.0}, DType::Float64), rv = tensor({1.0, 2.0, 0.5}, DType::Float64);
  const D rm0 = values(rm), rv0 = values(rv);
  const uint32_t version = rm.version();
  const double momentum = 0.2;
  auto [y, mean, invstd] = native_batch_norm(x, std::nullopt, std::nullopt, rm, rv, true, momentum, 1e-5);
  CHECK(rm.version() > version);
  const D xs = values(x), m = values(mean), r = values(invstd), rm1 = values(rm), rv1 = values(rv);
  for (int64_t c = 0; c < 3; ++c) {
    double s = 0, sq = 0;
    for (int64_t n = 0; n < 4; ++n)
      for (int64_t i = 0; i < 5; ++i) s += xs[(n * 3 + c) * 5 + i];
    const double mu = s / 20;
    for (int64_t n = 0; n < 4; ++n)
      for (int64_t i = 0; i < 5; ++i) sq += (xs[(n * 3 + c) * 5 + i] - mu) * (xs[(n * 3 + c) * 5 + i] - mu);
    CHECK(m[c] == doctest::Approx(mu).epsilon(1e-12));
    CHECK(r[c] == doctest::Approx(1 / std::sqrt(sq / 20 + 1e-5)).epsilon(1e-12));
    CHECK(rm1[c] == doctest::Approx((1 - momentum) * rm0[c] + momentum * mu).epsilon(1e-12));
    // The running variance is unbiased: n / (n - 1).
    CHECK(rv1[c] == doctest::Approx((1 - momentum) * rv0[c] + momentum * sq / 19).epsilon(1e-12));
  }
  const uint32_t after = rm.version();
  batch_norm(x, std::nullopt, std::nullopt, rm, rv, false, momentum, 1e-5);
  CHECK(rm.version() == after);
  CHECK(values(rm) == rm1);
  // The composite updates them too; so do running statistics that are strided views, and
  // float32 statistics of a bfloat16 input.
  const Tensor big = zeros({3, 2}, DType::Float64);
  const Tensor rm_view = big.select(1, 0), rv_view = ones({6}, DType::Float64).slice(0, 0, 6, 2);
  batch_norm(x, std::nullopt, std::nullopt, rm_view, rv_view, true, 1.0, 1e-5);
  for (int64_t c = 0; c < 3; ++c) CHECK(values(big)[c * 2] == doctest::Approx(m[c]).epsilon(1e-12));
  CHECK(values(big)[1] == 0.0);
  const Tensor rm32 = zeros({3}), rv32 = ones({3});
  batch_norm(x.to(DType::BFloat16), std::nullopt, std::nullopt, rm32, rv32, true, 1.0, 1e-5);
  for (int64_t c = 0; c < 3; ++c) CHECK(values(rm32)[c] == doctest::Approx(m[c]).epsilon(2e-2));
}

TEST_CASE("batch_norm and group_norm keep the input's layout") {
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{2, 4, 3, 5}, std::vector<int64_t>{2, 4, 2, 3, 2}}) {
    const Tensor x = randn(shape), xl = channels_last_copy(x);
    const Tensor w = randn({4}), b = randn({4});
    const Tensor y = batch_norm(x, w, b, std::nullopt, std::nullopt, true, 0.1, 1e-5);
    const Tensor yl = batch_norm(xl, w, b, std::nullopt, std::nullopt, true, 0.1, 1e-5);
    CHECK(y.is_contiguous());
    CHECK(same_strides(yl, xl));
    CHECK(allclose(y, yl, 1e-5, 1e-6));
    const Tensor g = group_norm(x, 2, w, b), gl = group_norm(xl, 2, w, b);
    CHECK(same_strides(gl, xl));
    CHECK(allclose(g, gl, 1e-5, 1e-6));
    // Meta computes the same layout.
    const Tensor xm = empty_strided(xl.sizes(), xl.strides(), TensorOptions().device(kMeta));
    CHECK(same_strides(batch_norm(xm, std::nullopt, std::nullopt, std::nullopt, std::nullopt, true, 0.1, 1e-5), xl));
    CHECK(same_strides(group_norm(xm, 2), xl));
  }
  CHECK(batch_norm(randn({2, 3, 4}), std::nullopt, std::nullopt, std::nullopt, std::nullopt, true, 0.1, 1e-5)
            .is_contiguous());
}

TEST_CASE(
    "batch_norm of a channels_last input over many row blocks: the contiguous values, the same bits for any thread "
    "count") {
  // 6 * 15 * 13 = 1170 rows of 40 channels: five blocks of the column sums, the last one partial.
  const Tensor x = randn({6, 40, 15, 13}).mul(3).add(100), xl = channels_last_copy(x);
  const Tensor w = randn({40}), b = randn({40});
  const int threads = get_num_threads();
  const Tensor y = batch_norm(x, w, b, std::nullopt, std::nullopt, true, 0.1, 1e-5);
  const auto [yl, mean, invstd] = native_batch_norm(xl, w, b, std::nullopt, std::nullopt, true, 0.1, 1e-5);
  CHECK(same_strides(yl, xl));
  CHECK(allclose(y, yl, 1e-5, 1e-5));
  set_num_threads(1);
  const auto [yl1, mean1, invstd1] = native_batch_norm(xl, w, b, std::nullopt, std::nullopt, true, 0.1, 1e-5);
  set_num_threads(threads);
  CHECK(equal(yl1, yl));
  CHECK(equal(mean1, mean));
  CHECK(equal(invstd1, invstd));
  // The backward kernel's column sums too: against the contiguous input's, and at 1 thread.
  const Tensor g = randn(x.sizes()), gl = channels_last_copy(g);
  const std::array<bool, 3> all{true, true, true};
  const auto [dx, dw, db] =
      native_batch_norm_backward(g, x, w, std::nullopt, std::nullopt, mean, invstd, true, 1e-5, all);
  const auto [dxl, dwl, dbl] =
      native_batch_norm_backward(gl, xl, w, std::nullopt, std::nullopt, mean, invstd, true, 1e-5, all);
  CHECK(same_strides(dxl, xl));
  CHECK(allclose(dx, dxl, 1e-5, 1e-5));
  CHECK(allclose(dw, dwl, 1e-5, 1e-5));
  CHECK(allclose(db, dbl, 1e-5, 1e-5));
  set_num_threads(1);
  const auto [dxl1, dwl1, dbl1] =
      native_batch_norm_backward(gl, xl, w, std::nullopt, std::nullopt, mean, invstd, true, 1e-5, all);
  set_num_threads(threads);
  CHECK(equal(dxl1, dxl));
  CHECK(equal(dwl1, dwl));
  CHECK(equal(dbl1, dbl));
}

TEST_CASE("batch_norm and group_norm: gradients of a channels_last input match the contiguous ones") {
  const Tensor base = randn({2, 4, 3, 3}, DType::Float64);
  const Tensor go = randn({2, 4, 3, 3}, DType::Float64);
  for (bool training : {true, false}) {
    Tensor x = base.clone().requires_grad_(), xl = channels_last_copy(base).requires_grad_();
    Tensor w = randn({4}, DType::Float64).requires_grad_();
    const Tensor rm = zeros({4}, DType::Float64), rv = ones({4}, DType::Float64);
    (batch_norm(x, w, std::nullopt, rm, rv, training, 0.1, 1e-5) * go).sum().backward();
    (batch_norm(xl, w, std::nullopt, rm, rv, training, 0.1, 1e-5) * go).sum().backward();
    CHECK(allclose(x.grad(), xl.grad(), 1e-10, 1e-10));
  }
  Tensor x = base.clone().requires_grad_(), xl = channels_last_copy(base).requires_grad_();
  (group_norm(x, 2) * go).sum().backward();
  (group_norm(xl, 2) * go).sum().backward();
  CHECK(allclose(x.grad(), xl.grad(), 1e-10, 1e-10));
}

TEST_CASE("batch_norm: mixed precision gradients take each input's dtype") {
  const Tensor x64 = randn({3, 4, 5}, DType::Float64), w64 = randn({4}, DType::Float64);
  const Tensor go = randn({3, 4, 5}, DType::Float64);
  Tensor x = x64.to(DType::BFloat16).requires_grad_(), w = w64.to(DType::Float32).requires_grad_();
  Tensor b = zeros({4}).requires_grad_();
  const Tensor y = batch_norm(x, w, b, zeros({4}), ones({4}), true, 0.1, 1e-5);
  CHECK(y.dtype() == DType::BFloat16);
  (y.to(DType::Float64) * go).sum().backward();
  CHECK(x.grad().dtype() == DType::BFloat16);
  CHECK(w.grad().dtype() == DType::Float32);
  CHECK(b.grad().dtype() == DType::Float32);
  Tensor xr = x.detach().to(DType::Float64).requires_grad_(), wr = w.detach().to(DType::Float64).requires_grad_();
  (batch_norm(xr, wr, std::nullopt, std::nullopt, std::nullopt, true, 0.1, 1e-5) * go).sum().backward();
  // The output's gradient reaches the kernels rounded to bfloat16 (y's dtype).
  CHECK(allclose(x.grad().to(DType::Float64), xr.grad(), 3e-2, 3e-2));
  CHECK(allclose(w.grad().to(DType::Float64), wr.grad(), 3e-2, 3e-2));
}

TEST_CASE("batch_norm and group_norm: a parameter on another device is a DeviceError, nothing changes") {
  const Tensor x = randn({2, 3, 4}), rm = zeros({3}), rv = ones({3});
  const Tensor w_meta = empty({3}, TensorOptions().device(kMeta));
  EXPECT_ERROR_UNCHANGED(rm, DeviceError, batch_norm(x, w_meta, std::nullopt, rm, rv, true, 0.1, 1e-5),
                         "native_batch_norm", "weight", "meta", "cpu");
  EXPECT_ERROR_UNCHANGED(rm, ValueError, batch_norm(x, randn({4}), std::nullopt, rm, rv, true, 0.1, 1e-5),
                         "native_batch_norm", "weight should be a vector of 3 elements, got shape [4]");
  // C elements in another shape: PyTorch's kernels fail on it, so it is refused up front.
  EXPECT_ERROR_UNCHANGED(rm, ValueError, batch_norm(x, randn({3, 1}), std::nullopt, rm, rv, true, 0.1, 1e-5),
                         "native_batch_norm", "weight should be a vector of 3 elements, got shape [3, 1]");
  EXPECT_ERROR(ValueError, group_norm(randn({1, 2}), 1, std::nullopt, randn({2, 1})), "native_group_norm",
               "bias should be a vector of 2 elements, got shape [2, 1]");
  EXPECT_ERROR(ValueError, group_norm(randn({3, 0, 4}), 2), "native_group_norm", "expected an input with channels");
  EXPECT_ERROR(DeviceError, group_norm(randn({2, 4, 3}), 2, empty({4}, TensorOptions().device(kMeta))),
               "native_group_norm", "weight", "meta", "cpu");
  EXPECT_ERROR(ValueError, native_group_norm(randn({2, 4, 3}), std::nullopt, std::nullopt, 2, 4, 5, 2, 1e-5),
               "native_group_norm", "HxW=5");
}

namespace {

// The CompositeExplicitAutograd kernel of `name` (the forward that backends without a kernel of
// their own run: CUDA's group_norm), called directly on CPU tensors.
template <typename... Args>
std::vector<Tensor> call_composite(const char* name, const Args&... args) {
  const dispatch::OperatorHandle op = dispatch::Dispatcher::singleton().find_or_throw(name);
  const auto& k = op.entry().registered(dispatch::RegKey::CompositeExplicitAutograd);
  REQUIRE(k.has_value());
  dispatch::Stack stack;
  dispatch::box_args(stack, args...);
  k->kernel.boxed(op, DispatchKeySet(), stack, k->kernel.ctx);
  std::vector<Tensor> out;
  for (const dispatch::IValue& v : stack) out.push_back(v.get<Tensor>());
  return out;
}

}  // namespace

TEST_CASE("batch_norm and group_norm: the composite forwards match the CPU kernels") {
  using OptT = std::optional<Tensor>;
  for (DType d : {DType::Float32, DType::Float16, DType::BFloat16}) {
    CAPTURE(name(d));
    const double tol = d == DType::Float32 ? 1e-5 : 2e-2;
    for (const Tensor& x : {randn({3, 4, 5, 2}).to(d), channels_last_copy(randn({3, 4, 5, 2})).to(d)}) {
      const Tensor w = randn({4}).to(d), b = randn({4}).to(d);
      auto [y, m, r] = native_group_norm(x, w, b, 3, 4, 10, 2, 1e-5);
      const std::vector<Tensor> c = call_composite("aten::native_group_norm", x, OptT(w), OptT(b), int64_t{3},
                                                   int64_t{4}, int64_t{10}, int64_t{2}, 1e-5);
      REQUIRE(c.size() == 3);
      CHECK(c[0].dtype() == d);
      CHECK(vec(c[0].strides()) == vec(y.strides()));
      CHECK(allclose(c[0].to(DType::Float64), y.to(DType::Float64), tol, tol));
      CHECK(allclose(c[1].to(DType::Float64), m.to(DType::Float64), tol, tol));
      CHECK(allclose(c[2].to(DType::Float64), r.to(DType::Float64), tol, tol));
      for (bool training : {true, false}) {
        const Tensor rm = zeros({4}), rv = ones({4}), rm_c = zeros({4}), rv_c = ones({4});
        auto [yb, mb, rb] = native_batch_norm(x, w, b, rm, rv, training, 0.1, 1e-5);
        const std::vector<Tensor> cb =
            call_composite("aten::native_batch_norm", x, OptT(w), OptT(b), OptT(rm_c), OptT(rv_c), training, 0.1, 1e-5);
        REQUIRE(cb.size() == 3);
        CHECK(vec(cb[0].strides()) == vec(yb.strides()));
        CHECK(allclose(cb[0].to(DType::Float64), yb.to(DType::Float64), tol, tol));
        CHECK(allclose(cb[1].to(DType::Float64), mb.to(DType::Float64), tol, tol));
        CHECK(allclose(cb[2].to(DType::Float64), rb.to(DType::Float64), tol, tol));
        CHECK(allclose(rm_c, rm, 1e-5, 1e-5));
        CHECK(allclose(rv_c, rv, 1e-5, 1e-5));
      }
    }
  }
}
