// Shared helpers of the gradcheck tests: fp64 leaves (random, transposed, in a range), the
// first-and-second-order check, and adapters from plain functions to autograd::GradcheckFn.
#pragma once

#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "anatomy/anatomy.h"

namespace anatomy::gradcheck_test {

inline const TensorOptions kF64 = TensorOptions().dtype(DType::Float64);

inline Tensor input(IntArrayRef sizes) { return randn(sizes, kF64).requires_grad_(); }
// A transposed (non-contiguous) leaf of the given final shape.
inline Tensor transposed_input(int64_t rows, int64_t cols) { return randn({cols, rows}, kF64).t().requires_grad_(); }
// Uniform in [lo, lo + 1).
inline Tensor uniform_input(IntArrayRef sizes, double lo) {
  Tensor t = rand(sizes, kF64);
  {
    autograd::NoGradGuard no_grad;
    t.add_(full(sizes, lo, kF64));
  }
  return t.requires_grad_();
}
// Values in [0.5, 1.5): away from zero (log, sqrt, division).
inline Tensor positive_input(IntArrayRef sizes) { return uniform_input(sizes, 0.5); }

// gradcheck and gradgradcheck both pass; `what` names the case in a failure.
inline void check_both(const char* what, const autograd::GradcheckFn& fn, const std::vector<Tensor>& inputs) {
  INFO(std::string(what));
  CHECK(autograd::gradcheck_report(fn, inputs) == "");
  CHECK(autograd::gradgradcheck_report(fn, inputs) == "");
}

inline autograd::GradcheckFn one(std::function<Tensor(const Tensor&)> f) {
  return [f](const std::vector<Tensor>& x) { return std::vector<Tensor>{f(x[0])}; };
}
inline autograd::GradcheckFn two(std::function<Tensor(const Tensor&, const Tensor&)> f) {
  return [f](const std::vector<Tensor>& x) { return std::vector<Tensor>{f(x[0], x[1])}; };
}

// An fp64 tensor's values in row-major order.
inline std::vector<double> values(const Tensor& t) {
  Tensor c = t.contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}
// d sum(y) / dx, after one backward.
inline std::vector<double> grad_of_sum(const Tensor& x, const Tensor& y) {
  y.sum().backward();
  return values(x.grad());
}

}  // namespace anatomy::gradcheck_test
