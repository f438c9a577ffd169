// clip_grad_norm_ (optim.h), as torch.nn.utils.clip_grad_norm_: the total norm and the scale are
// tensors, so nothing waits for the device.
#include <cmath>
#include <limits>

#include "anatomy/autograd/grad_mode.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/optim/optim.h"

namespace anatomy::optim {

Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type) {
  ANATOMY_CHECK(max_norm >= 0 && !std::isnan(max_norm), ValueError,
                "clip_grad_norm_: max_norm must be non-negative, got {}", max_norm);
  const bool inf = std::isinf(norm_type) && norm_type > 0;
  ANATOMY_CHECK(inf || norm_type == 1.0 || norm_type == 2.0, ValueError,
                "clip_grad_norm_: norm_type must be 1, 2 or inf, got {}", norm_type);
  autograd::NoGradGuard no_grad;
  std::vector<Tensor> grads;
  for (const Tensor& p : params) {
    if (p.defined() && p.grad().defined()) grads.push_back(p.grad());
  }
  if (grads.empty()) return zeros({});
  std::vector<Tensor> norms;
  norms.reserve(grads.size());
  const Device device = grads[0].device();
  for (const Tensor& g : grads) {
    const Tensor n = inf ? g.abs().amax() : norm(g, norm_type);
    norms.push_back(n.to(device, DType::Float32));
  }
  const Tensor stacked = stack(norms);
  const Tensor total = inf ? stacked.amax() : norm(stacked, norm_type);
  // min(1, max_norm / (total + 1e-6)), as a tensor.
  const Tensor scale = clamp(total.add(1e-6).reciprocal().mul(max_norm), std::nullopt, Scalar(1.0));
  for (const Tensor& g : grads) g.mul_(scale.to(g.device(), g.dtype()));
  return total;
}

}  // namespace anatomy::optim
