// The multi-tensor operators behind clip_grad_norm_ (_foreach_norm, _foreach_mul_) on the CPU and
// Meta: each tensor's result against its single-tensor operator, empty tensors and lists, the
// argument errors (which change nothing), and the refusal to run unrecorded on tensors that
// require grad. CUDA's kernels: tests/gpu/test_cuda_foreach.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "../core/test_util.h"
#include "anatomy/anatomy.h"

using namespace anatomy;

TEST_CASE("_foreach_norm: each tensor's norm, as norm of the whole tensor, for every order") {
  manual_seed(5);
  const std::vector<Tensor> list = {randn({3, 4}), randn({7}, DType::Float64), randn({2, 5}).t(),
                                    randn({4}).to(DType::BFloat16), zeros({0, 3})};
  const double inf = std::numeric_limits<double>::infinity();
  for (double ord : {2.0, 1.0, inf, 0.0, 3.0, 0.5}) {
    CAPTURE(ord);
    const std::vector<Tensor> norms = _foreach_norm(list, ord);
    REQUIRE(norms.size() == list.size());
    for (size_t i = 0; i + 1 < list.size(); ++i) {
      CHECK(norms[i].dim() == 0);
      CHECK(norms[i].dtype() == list[i].dtype());
      CHECK(equal(norms[i], norm(list[i], ord)));
    }
    CHECK(norms.back().item<double>() == 0.0);  // an empty tensor's
  }
  const std::vector<Tensor> min_abs = _foreach_norm({list[0]}, -inf);
  CHECK(equal(min_abs[0], list[0].abs().amin()));
  EXPECT_ERROR(ValueError, _foreach_norm({}, 2.0), "_foreach_norm", "at least one tensor");
  const std::vector<Tensor> meta = _foreach_norm({empty({3, 4}, TensorOptions().device("meta"))}, 2.0);
  CHECK(meta[0].device().is_meta());
  CHECK(meta[0].dim() == 0);
}

TEST_CASE("_foreach_norm: NaN propagates; bad orders and tensors are errors") {
  const Tensor with_nan = tensor({1.0f, NAN, 2.0f});
  CHECK(std::isnan(_foreach_norm({with_nan}, 2.0)[0].item<double>()));
  CHECK(std::isnan(_foreach_norm({with_nan}, INFINITY)[0].item<double>()));
  const Tensor x = ones({3});
  EXPECT_ERROR(ValueError, _foreach_norm({x}, NAN), "_foreach_norm", "ord must be >= 0", "nan");
  EXPECT_ERROR(ValueError, _foreach_norm({x}, -1.0), "_foreach_norm", "-1");
  EXPECT_ERROR(TypeError, _foreach_norm({x, ones({2}, DType::Int64)}, 2.0), "_foreach_norm", "tensor 1", "floating",
               "int64");
  EXPECT_ERROR(ValueError, _foreach_norm({x, zeros({0})}, -INFINITY), "_foreach_norm", "tensor 1", "empty");
  EXPECT_ERROR(ValueError, _foreach_norm({x, Tensor()}, 2.0), "_foreach_norm", "tensor 1", "undefined");
}

TEST_CASE("_foreach_mul_: each tensor times a 0-dim tensor, as mul_") {
  manual_seed(6);
  const std::vector<Tensor> list = {randn({3, 4}), randn({5}, DType::Float64), randn({2, 6}).t(),
                                    randn({4}).to(DType::Float16), zeros({0})};
  std::vector<Tensor> expected;
  for (const Tensor& t : list) expected.push_back(t.clone());
  const Tensor scale = scalar_tensor(0.37);
  _foreach_mul_(list, scale);
  for (size_t i = 0; i < list.size(); ++i) {
    CAPTURE(i);
    expected[i].mul_(scale);
    CHECK(equal(list[i], expected[i]));
  }
  EXPECT_ERROR(ValueError, _foreach_mul_({}, scale), "_foreach_mul_", "at least one tensor");
  const Tensor x = ones({3});
  EXPECT_ERROR_UNCHANGED(x, ValueError, _foreach_mul_({x}, ones({2})), "_foreach_mul_", "0-dim", "(2,)");
  EXPECT_ERROR_UNCHANGED(x, ValueError, _foreach_mul_({x, Tensor()}, scale), "_foreach_mul_", "tensor 1", "undefined");
  // An integer tensor cannot take a float product: refused before x (first in the list) is scaled.
  EXPECT_ERROR_UNCHANGED(x, TypeError, _foreach_mul_({x, ones({2}, DType::Int64)}, scale), "_foreach_mul_", "tensor 1",
                         "int64");
  // A factor that is an element of a tensor it scales is read before anything is written.
  const Tensor y = arange(4, DType::Float32).add_(1.0);
  _foreach_mul_({y, y.narrow(0, 0, 2)}, y.select(0, 1));
  CHECK(anatomy_test::values(y) == anatomy_test::D{4, 8, 6, 8});
}

TEST_CASE("_foreach_norm and _foreach_mul_ refuse tensors that require grad in grad mode") {
  const Tensor p = ones({3}).requires_grad_();
  EXPECT_ERROR(NotImplementedError, _foreach_norm({p}, 2.0), "_foreach_norm", "no-grad");
  EXPECT_ERROR_UNCHANGED(p, NotImplementedError, _foreach_mul_({p}, scalar_tensor(2.0)), "_foreach_mul_", "no-grad");
  autograd::NoGradGuard no_grad;
  CHECK(_foreach_norm({p}, 1.0)[0].item<double>() == 3.0);
  _foreach_mul_({p}, scalar_tensor(2.0));
  CHECK(p.sum().item<double>() == 6.0);
}
