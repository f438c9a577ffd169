// Out-of-place composites return fresh tensors: they never write into their inputs, never share
// an input's memory, and never bump an input's version, whatever the broadcast (an expand that
// only adds size-1 dims is already contiguous, so contiguous() would return a view).
#include <doctest/doctest.h>

#include <cmath>

#include "test_util.h"

using namespace anatomy;
using namespace anatomy_test;

TEST_CASE("masked_fill out of place: a mask with leading size-1 dims leaves the input alone") {
  for (const V& mask_shape : {V{1, 3}, V{1, 1, 3}, V{2, 3}, V{3}, V{1}}) {
    INFO("mask shape ", mask_shape);
    Tensor x = zeros({3});
    const Snapshot before = snapshot(x);
    const Tensor y = x.masked_fill(ones(mask_shape, TensorOptions().dtype(DType::Bool)), 5.0);
    check_unchanged(x, before);
    CHECK(y.storage().get() != x.storage().get());
    CHECK(values(y) == D(static_cast<size_t>(y.numel()), 5.0));
  }
}

TEST_CASE("masked_fill out of place: a backward after it still sees the input's version") {
  Tensor x = ones({3}, TensorOptions().dtype(DType::Float64)).requires_grad_();
  const Tensor y = x.exp();  // exp saves its output
  const Tensor z = y.masked_fill(tensor(std::vector<double>{1, 0, 0}, {1, 3}).to(DType::Bool), 0.0);
  z.sum().backward();
  const double e = std::exp(1.0);
  CHECK(values(x.grad()) == D{0, e, e});
}
