// gradcheck and gradgradcheck: compare the gradients autograd computes with finite differences
// in fp64. Each output element's gradient row (one backward per element) is checked against
// the central difference (f(x + eps) - f(x - eps)) / 2eps of every input element.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "anatomy/core/tensor.h"

namespace anatomy::autograd {

using GradcheckFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
};

// Empty when autograd's Jacobian matches the numerical one for every input that requires
// grad (fp64 tensors; others are passed through); otherwise a description of the first
// mismatch (input, output, element, both values).
std::string gradcheck_report(const GradcheckFn& fn, const std::vector<Tensor>& inputs, GradcheckOptions opts = {});
bool gradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs, GradcheckOptions opts = {});

// gradcheck of the first derivative: the function (inputs, output gradients) -> input
// gradients built with create_graph, so the second derivatives are checked.
std::string gradgradcheck_report(const GradcheckFn& fn, const std::vector<Tensor>& inputs, GradcheckOptions opts = {});
bool gradgradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs, GradcheckOptions opts = {});

}  // namespace anatomy::autograd
