// gradcheck and gradgradcheck (see gradcheck.h).
#include "anatomy/autograd/gradcheck.h"

#include <fmt/format.h>

#include <cmath>

#include "anatomy/autograd/autograd.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy::autograd {
namespace {

// The address of element `i` (row-major order) of a CPU fp64 tensor with any strides.
double* element(const Tensor& t, int64_t i) {
  int64_t offset = 0;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    offset += (i % t.sizes()[d]) * t.strides()[d];
    i /= t.sizes()[d];
  }
  return t.data_ptr<double>() + offset;
}

std::vector<Tensor> flat_outputs(const GradcheckFn& fn, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> outs;
  // A copy: an output may alias an input (a view, or a gradient that is the seed itself), and
  // the input is restored after each evaluation.
  for (const Tensor& o : fn(inputs)) outs.push_back(o.defined() ? o.to(DType::Float64).contiguous().clone() : o);
  return outs;
}

bool close(double a, double b, const GradcheckOptions& o) { return std::abs(a - b) <= o.atol + o.rtol * std::abs(b); }

}  // namespace

std::string gradcheck_report(const GradcheckFn& fn, const std::vector<Tensor>& inputs, GradcheckOptions opts) {
  for (const Tensor& x : inputs) {
    if (x.defined() && x.requires_grad()) {
      ANATOMY_CHECK(x.dtype() == DType::Float64 && x.is_cpu(), TypeError,
                    "gradcheck: inputs that require grad must be fp64 CPU tensors, got {} on {}", name(x.dtype()),
                    x.device().str());
    }
  }
  const std::vector<Tensor> outputs = fn(inputs);
  std::vector<Tensor> diff_inputs;
  std::vector<size_t> diff_index;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].defined() && inputs[i].requires_grad()) {
      diff_inputs.push_back(inputs[i]);
      diff_index.push_back(i);
    }
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    const Tensor& out = outputs[o];
    if (!out.defined() || !out.requires_grad()) continue;
    // Analytical: one backward per output element.
    std::vector<std::vector<Tensor>> rows;
    for (int64_t j = 0; j < out.numel(); ++j) {
      Tensor seed = zeros(out.sizes(), out.options());
      {
        NoGradGuard no_grad;
        seed.view({-1}).select(0, j).fill_(1);
      }
      rows.push_back(grad({out}, diff_inputs, {seed}, /*retain_graph=*/true, false, /*allow_unused=*/true));
    }
    // Numerical: central differences, one input element at a time.
    for (size_t k = 0; k < diff_inputs.size(); ++k) {
      const Tensor& x = diff_inputs[k];
      for (int64_t e = 0; e < x.numel(); ++e) {
        std::vector<Tensor> plus, minus;
        {
          NoGradGuard no_grad;
          double* p = element(x, e);
          const double saved = *p;
          *p = saved + opts.eps;
          plus = flat_outputs(fn, inputs);
          *p = saved - opts.eps;
          minus = flat_outputs(fn, inputs);
          *p = saved;
        }
        for (int64_t j = 0; j < out.numel(); ++j) {
          const double numerical = (plus[o].data_ptr<double>()[j] - minus[o].data_ptr<double>()[j]) / (2 * opts.eps);
          const Tensor& g = rows[j][k];
          const double analytical = g.defined() ? *element(g.contiguous().to(DType::Float64), e) : 0.0;
          if (!close(analytical, numerical, opts)) {
            return fmt::format(
                "gradcheck: d(output {}[{}]) / d(input {}[{}]): autograd gives {}, finite differences {}", o, j,
                diff_index[k], e, analytical, numerical);
          }
        }
      }
    }
  }
  return {};
}

bool gradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs, GradcheckOptions opts) {
  return gradcheck_report(fn, inputs, opts).empty();
}

std::string gradgradcheck_report(const GradcheckFn& fn, const std::vector<Tensor>& inputs, GradcheckOptions opts) {
  // Random output gradients (fixed for the check) join the inputs of the first-derivative
  // function, whose outputs are the input gradients.
  std::vector<Tensor> all = inputs;
  for (const Tensor& o : fn(inputs)) {
    if (o.defined() && o.requires_grad()) all.push_back(randn(o.sizes(), o.options()).requires_grad_());
  }
  const size_t n_in = inputs.size();
  GradcheckFn first = [&fn, n_in](const std::vector<Tensor>& xs) {
    // gradcheck evaluates without grad mode for finite differences; the first derivative
    // needs a graph either way, and keeps one (create_graph) only when gradcheck asks.
    const bool keep = GradMode::is_enabled();
    EnableGradGuard enable;
    const std::vector<Tensor> ins(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(n_in));
    const std::vector<Tensor> seeds(xs.begin() + static_cast<std::ptrdiff_t>(n_in), xs.end());
    std::vector<Tensor> outs, diff;
    for (const Tensor& o : fn(ins)) {
      if (o.defined() && o.requires_grad()) outs.push_back(o);
    }
    for (const Tensor& x : ins) {
      if (x.defined() && x.requires_grad()) diff.push_back(x);
    }
    std::vector<Tensor> grads = grad(outs, diff, seeds, true, /*create_graph=*/keep, /*allow_unused=*/true);
    for (size_t i = 0; i < grads.size(); ++i) {
      if (!grads[i].defined()) grads[i] = zeros_like(diff[i]);
    }
    return grads;
  };
  return gradcheck_report(first, all, opts);
}

bool gradgradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs, GradcheckOptions opts) {
  return gradgradcheck_report(fn, inputs, opts).empty();
}

}  // namespace anatomy::autograd
