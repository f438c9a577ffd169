// GradScaler (see grad_scaler.h): torch.amp.GradScaler's unscale / skip / update rules.
#include "anatomy/amp/grad_scaler.h"

#include <cmath>

#include "anatomy/autograd/grad_mode.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy::autocast {
namespace {

// Whether an unscaled optimizer saw an inf or NaN: reads the device flags (the sync).
bool read_found_inf(const std::vector<Tensor>& all_finite) {
  bool found = false;
  for (const Tensor& f : all_finite) found = found || !f.item<bool>();
  return found;
}

}  // namespace

GradScaler::GradScaler(GradScalerOptions options)
    : opt_(options), enabled_(options.enabled), scale_(options.init_scale) {
  ANATOMY_CHECK(opt_.init_scale > 0 && std::isfinite(opt_.init_scale), ValueError,
                "GradScaler: init_scale must be positive and finite, got {}", opt_.init_scale);
  ANATOMY_CHECK(opt_.growth_factor > 1, ValueError, "GradScaler: growth_factor must be > 1, got {}",
                opt_.growth_factor);
  ANATOMY_CHECK(opt_.backoff_factor > 0 && opt_.backoff_factor < 1, ValueError,
                "GradScaler: backoff_factor must be in (0, 1), got {}", opt_.backoff_factor);
  ANATOMY_CHECK(opt_.growth_interval > 0, ValueError, "GradScaler: growth_interval must be positive, got {}",
                opt_.growth_interval);
}

Tensor GradScaler::scale(const Tensor& loss) const {
  if (!enabled_) return loss;
  return loss * scale_;
}

void GradScaler::unscale_(const optim::Optimizer& optimizer) {
  if (!enabled_) return;
  OptimizerState& state = per_optimizer_[&optimizer];
  ANATOMY_CHECK(!state.unscaled, ValueError,
                "GradScaler.unscale_: already called on this optimizer since the last update()");
  ANATOMY_CHECK(!state.stepped, ValueError, "GradScaler.unscale_: called after step() and before update()");
  // The inverse in fp32, as PyTorch computes it; a power-of-two scale divides exactly.
  const double inv_scale = static_cast<float>(1.0 / scale_);
  autograd::NoGradGuard no_grad;
  const auto& params = optimizer.params();
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor g = params[i].grad();
    if (!g.defined()) continue;
    // fp16 parameters would make fp16 gradients, which the unscaled values may not fit: under
    // autocast the parameters stay fp32 and only the computation is fp16.
    ANATOMY_CHECK(g.dtype() != DType::Float16, TypeError,
                  "GradScaler.unscale_: parameter {} has an fp16 gradient; keep parameters in fp32 and let "
                  "autocast lower the precision of the computation",
                  i);
    g.mul_(scalar_tensor(inv_scale, TensorOptions().dtype(g.dtype())));
    Tensor finite = g.isfinite().all();
    bool merged = false;
    for (Tensor& f : state.all_finite) {
      if (f.device() == finite.device()) {
        f = logical_and(f, finite);
        merged = true;
      }
    }
    if (!merged) state.all_finite.push_back(finite);
  }
  state.unscaled = true;
}

bool GradScaler::step(optim::Optimizer& optimizer) {
  if (!enabled_) {
    optimizer.step();
    return true;
  }
  OptimizerState& state = per_optimizer_[&optimizer];
  ANATOMY_CHECK(!state.stepped, ValueError,
                "GradScaler.step: already called on this optimizer since the last update()");
  if (!state.unscaled) unscale_(optimizer);
  state.found_inf = read_found_inf(state.all_finite);
  state.stepped = true;
  if (state.found_inf) return false;
  optimizer.step();
  return true;
}

void GradScaler::update() {
  if (!enabled_) return;
  bool checked = false, found_inf = false;
  for (auto& [opt, state] : per_optimizer_) {
    if (!state.unscaled) continue;
    checked = true;
    found_inf = found_inf || (state.stepped ? state.found_inf : read_found_inf(state.all_finite));
  }
  ANATOMY_CHECK(checked, ValueError,
                "GradScaler.update: no inf checks were recorded; call step() or unscale_() before update()");
  per_optimizer_.clear();
  if (found_inf) {
    scale_ *= opt_.backoff_factor;
    growth_tracker_ = 0;
    return;
  }
  if (++growth_tracker_ == opt_.growth_interval) {
    const double grown = scale_ * opt_.growth_factor;
    if (std::isfinite(grown)) scale_ = grown;
    growth_tracker_ = 0;
  }
}

}  // namespace anatomy::autocast
