// Deep graphs: a chain of 100000 recorded operators backwards and is destroyed without
// recursing once per node (a recursion that deep overflows the stack, an ASan build's first).
#include <doctest/doctest.h>

#include <cmath>

#include "anatomy/anatomy.h"

using namespace anatomy;

TEST_CASE("autograd: a chain of 100000 multiplications backwards, then is freed, without deep recursion") {
  constexpr int kDepth = 100000;
  constexpr double kW = 1.0001;
  auto opts = TensorOptions().dtype(DType::Float64);
  Tensor x0 = full({}, 1.0, opts).requires_grad_();
  Tensor w = full({}, kW, opts).requires_grad_();
  Tensor x = x0;
  // Each node saves both operands, so a node is owned through its successor's edge and through
  // the successor's saved input alike.
  for (int i = 0; i < kDepth; ++i) x = x * w;
  CHECK(x.grad_fn()->name() == "MulBackward0");
  CHECK(x.item<double>() == doctest::Approx(std::pow(kW, kDepth)).epsilon(1e-9));
  // Saved tensors kept, so freeing below goes through them too.
  x.backward(Tensor(), /*retain_graph=*/true);
  REQUIRE(x0.grad().defined());
  CHECK(x0.grad().item<double>() == doctest::Approx(std::pow(kW, kDepth)).epsilon(1e-9));
  CHECK(w.grad().item<double>() == doctest::Approx(kDepth * std::pow(kW, kDepth - 1)).epsilon(1e-9));
  x = Tensor();  // drops the last owner of the whole chain
  CHECK(x0.grad().defined());
  CHECK(w.requires_grad());
}

TEST_CASE("autograd: freeing a chain keeps the nodes other tensors still own") {
  constexpr int kDepth = 2000;
  Tensor x0 = full({}, 1.0, TensorOptions().dtype(DType::Float64)).requires_grad_();
  Tensor x = x0;
  Tensor middle;
  for (int i = 0; i < kDepth; ++i) {
    x = x * 1.0001;
    if (i == kDepth / 2) middle = x;
  }
  x = Tensor();
  // The first half of the chain is still alive, owned by `middle`, and backwards.
  REQUIRE(middle.grad_fn() != nullptr);
  middle.backward();
  CHECK(x0.grad().item<double>() == doctest::Approx(std::pow(1.0001, kDepth / 2 + 1)).epsilon(1e-9));
}
