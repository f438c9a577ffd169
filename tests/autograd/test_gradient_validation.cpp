// Every gradient is checked against the tensor it belongs to, as PyTorch's engine checks them
// (validate_outputs): a hook's or a seed's gradient of another shape or device is an error that
// names the hook or node, another dtype is cast, and hooks may register hooks during backward.
#include <doctest/doctest.h>

#include "../core/test_util.h"

using namespace anatomy;
using anatomy_test::D;

namespace {

Tensor leaf3() { return ones({3}).requires_grad_(); }

std::vector<double> as_doubles(const Tensor& t) { return anatomy_test::values(t); }

}  // namespace

TEST_CASE("gradient validation: a leaf hook's result of another shape is an error naming the hook") {
  Tensor x = leaf3();
  x.register_hook([](const Tensor&) { return ones({5}); });
  EXPECT_ERROR(ValueError, (x * 2).sum().backward(), "hook 0 of a leaf", "invalid gradient", "[5]", "[3]");
  CHECK(!x.grad().defined());
}

TEST_CASE("gradient validation: a leaf hook's result of another dtype is cast to the leaf's") {
  Tensor x = leaf3();
  x.register_hook([](const Tensor& g) { return (g * 3).to(DType::Int64); });
  (x * 2).sum().backward();
  REQUIRE(x.grad().defined());
  CHECK(x.grad().dtype() == DType::Float32);
  CHECK(as_doubles(x.grad()) == D{6, 6, 6});
}

TEST_CASE("gradient validation: a leaf hook's result that broadcasts to the leaf is summed back") {
  Tensor x = ones({2, 3}).requires_grad_();
  x.register_hook([](const Tensor& g) { return g.unsqueeze(0).expand({4, 2, 3}); });
  x.sum().backward();
  CHECK(as_doubles(x.grad()) == D{4, 4, 4, 4, 4, 4});
}

TEST_CASE("gradient validation: a non-leaf hook's result of the same element count but another shape is an error") {
  Tensor x = ones({2, 3}).requires_grad_();
  Tensor y = x * 2;
  y.register_hook([](const Tensor& g) { return g.reshape({6}); });
  EXPECT_ERROR(ValueError, y.sum().backward(), "a hook on output 0 of MulBackward0", "[6]", "[2, 3]");
  CHECK(!x.grad().defined());
}

TEST_CASE("gradient validation: backward's gradient of another dtype is cast, of another device refused") {
  Tensor x = leaf3();
  (x * 2).backward(full({3}, 1, TensorOptions().dtype(DType::Int64)));
  REQUIRE(x.grad().defined());
  CHECK(x.grad().dtype() == DType::Float32);
  CHECK(x.grad().device() == kCPU);
  CHECK(as_doubles(x.grad()) == D{2, 2, 2});

  Tensor z = leaf3();
  EXPECT_ERROR(ValueError, (z * 2).backward(empty({3}, TensorOptions().device(kMeta))), "backward", "meta", "cpu");
  CHECK(!z.grad().defined());
}

TEST_CASE("hooks during backward: a tensor hook that registers another hook runs once; the new one from the next") {
  Tensor x = leaf3();
  Tensor y = x * 2;
  int first = 0, second = 0;
  y.register_hook([&](const Tensor&) {
    ++first;
    for (int i = 0; i < 16; ++i)
      y.register_hook([&](const Tensor&) {
        ++second;
        return Tensor();
      });
    return Tensor();
  });
  y.sum().backward(Tensor(), /*retain_graph=*/true);
  CHECK(first == 1);
  CHECK(second == 0);
  y.sum().backward();
  CHECK(first == 2);
  CHECK(second == 16);
}

TEST_CASE("hooks during backward: a leaf hook that registers another hook") {
  Tensor x = leaf3();
  int added = 0;
  x.register_hook([&](const Tensor&) {
    for (int i = 0; i < 16; ++i)
      x.register_hook([&](const Tensor& g) {
        ++added;
        return g;
      });
    return Tensor();
  });
  (x * 2).sum().backward();
  CHECK(added == 0);
  CHECK(as_doubles(x.grad()) == D{2, 2, 2});
}
