// clip_grad_norm_ (optim.h), as torch.nn.utils.clip_grad_norm_ with foreach: the gradients of one
// device and dtype take one _foreach_norm and one _foreach_mul_ (on CUDA a few launches for the
// whole list, not several per gradient), and the total norm and the scale are tensors, so nothing
// waits for the device.
#include <algorithm>
#include <cmath>

#include "anatomy/autograd/grad_mode.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/nn/optim/optim.h"

namespace anatomy::optim {

Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type) {
  ANATOMY_CHECK(max_norm >= 0 && !std::isnan(max_norm), ValueError,
                "clip_grad_norm_: max_norm must be non-negative, got {}", max_norm);
  ANATOMY_CHECK(norm_type > 0, ValueError, "clip_grad_norm_: norm_type must be positive or inf, got {}", norm_type);
  autograd::NoGradGuard no_grad;
  // The gradients by device and dtype, in the order they come.
  std::vector<std::vector<Tensor>> groups;
  for (const Tensor& p : params) {
    if (!p.defined() || !p.grad().defined()) continue;
    const Tensor& g = p.grad();
    auto same = [&](const std::vector<Tensor>& group) {
      return group[0].device() == g.device() && group[0].dtype() == g.dtype();
    };
    auto it = std::find_if(groups.begin(), groups.end(), same);
    if (it == groups.end()) groups.emplace_back(1, g);
    else it->push_back(g);
  }
  if (groups.empty()) return zeros({});
  const Device device = groups[0][0].device();
  std::vector<Tensor> norms;  // each group's gradients' norms, in fp32 on the first one's device
  norms.reserve(groups.size());
  for (const auto& group : groups) norms.push_back(stack(_foreach_norm(group, norm_type)).to(device, DType::Float32));
  const Tensor total = norm(norms.size() == 1 ? norms[0] : cat(norms), norm_type);
  // min(1, max_norm / (total + 1e-6)), as a tensor.
  const Tensor scale = clamp(total.add(1e-6).reciprocal().mul(max_norm), std::nullopt, Scalar(1.0));
  for (const auto& group : groups) _foreach_mul_(group, scale.to(group[0].device()));  // no copy on its own device
  return total;
}

}  // namespace anatomy::optim
