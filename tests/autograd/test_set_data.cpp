// Tensor::set_data (PyTorch's `t.data = new_data`): every handle to the tensor takes the new
// data, its autograd state stays, a graph recorded before keeps the accumulator it had while a
// new one accumulates in the new data's dtype and sizes, and what it refuses.
#include <doctest/doctest.h>

#include "anatomy/anatomy.h"

using namespace anatomy;

TEST_CASE("set_data: every handle takes the new data; requires_grad, .grad and the version counter stay") {
  Tensor w = randn({2, 3}).requires_grad_();
  const Tensor handle = w;
  w.set_grad(ones({2, 3}));
  const uint32_t version = w.version();
  const Tensor d = arange(6, TensorOptions().dtype(DType::Float64)).view({3, 2});
  w.set_data(d);
  CHECK(handle.dtype() == DType::Float64);
  CHECK(handle.sizes() == IntArrayRef{3, 2});
  CHECK(handle.data_ptr() == d.data_ptr());
  CHECK(handle.requires_grad());
  CHECK(handle.is_leaf());
  CHECK(handle.grad().dtype() == DType::Float32);  // .grad is left as it was, as in PyTorch
  CHECK(w.version() == version);
  // The memory is shared: a write through either is seen by the other.
  d.select(0, 0).select(0, 0).fill_(7.0);
  CHECK(handle.select(0, 0).select(0, 0).item<double>() == 7.0);
  // The data of a tensor that does not require grad changes alike.
  Tensor plain = zeros({4});
  plain.set_data(ones({2}, TensorOptions().dtype(DType::Int32)));
  CHECK(plain.dtype() == DType::Int32);
  CHECK(plain.sum().item<int64_t>() == 2);
}

TEST_CASE("set_data: a graph recorded before keeps its accumulator, the next backward uses the new data's") {
  Tensor w = randn({3}).requires_grad_();
  const Tensor before = (w * 2).sum();  // holds w's accumulator, made for [3] fp32
  w.set_data(randn({2, 2}, TensorOptions().dtype(DType::Float64)));
  (w * 3).sum().backward();
  REQUIRE(w.grad().defined());
  CHECK(w.grad().dtype() == DType::Float64);
  CHECK(w.grad().sizes() == IntArrayRef{2, 2});
  CHECK(w.grad().allclose(full({2, 2}, 3.0, TensorOptions().dtype(DType::Float64))));
  // The old graph's gradient is the old data's ([3] fp32): it does not fit the new .grad.
  CHECK_THROWS(before.backward());
}

TEST_CASE("set_data: the device moves with the data, and dispatch follows it") {
  Tensor w = randn({2});
  w.set_data(empty({5}, TensorOptions().device(kMeta)));
  CHECK(w.is_meta());
  CHECK((w + 1).is_meta());
  CHECK((w + 1).sizes() == IntArrayRef{5});
}

TEST_CASE("set_data: an undefined tensor, undefined data and a view are refused, and so is integer data for grad") {
  CHECK_THROWS_WITH_AS(Tensor().set_data(ones({1})), "set_data: the tensor is undefined", ValueError);
  CHECK_THROWS_WITH_AS(ones({1}).set_data(Tensor()), "set_data: the new data is undefined", ValueError);
  const Tensor base = randn({4}).requires_grad_();
  const Tensor view = base.view({2, 2});
  CHECK_THROWS_WITH_AS(view.set_data(zeros({2, 2})), doctest::Contains("the tensor is a view"), ValueError);
  CHECK(view.sizes() == IntArrayRef{2, 2});  // unchanged
  // A leaf that requires grad keeps to floating-point data, as requires_grad_ does.
  Tensor w = randn({2}).requires_grad_();
  CHECK_THROWS_WITH_AS(w.set_data(ones({2}, TensorOptions().dtype(DType::Int64))),
                       doctest::Contains("takes floating-point data only, got int64"), TypeError);
  CHECK(w.dtype() == DType::Float32);
}
