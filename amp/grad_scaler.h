// GradScaler: dynamic loss scaling for fp16 training, as torch.amp.GradScaler. Small fp16
// gradients underflow to zero; multiplying the loss by a large factor before backward keeps
// them representable, and the factor is divided out of the fp32 gradients before the step.
// When a scaled gradient overflows (inf or NaN), the step is skipped and the factor halved;
// after `growth_interval` clean steps in a row it is doubled again.
//
//   autocast::GradScaler scaler;
//   for (...) {
//     opt.zero_grad();
//     Tensor loss;
//     { autocast::AutocastGuard amp(DeviceType::CUDA, DType::Float16); loss = model(x, y); }
//     scaler.scale(loss).backward();
//     scaler.step(opt);    // unscale_ (if not done already), then opt.step() unless inf/NaN
//     scaler.update();     // adjust the scale for the next iteration
//   }
//
// The scale lives on the host. The inf/NaN check stays on the device until step() reads it:
// that read is step()'s one synchronization, as in PyTorch.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "anatomy/core/tensor.h"
#include "anatomy/nn/optim/optim.h"

namespace anatomy::autocast {

struct GradScalerOptions {
  double init_scale = 65536.0;  // 2^16
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
  bool enabled = true;  // false: scale() returns the loss, step() just steps, update() does nothing
};

class GradScaler {
 public:
  explicit GradScaler(GradScalerOptions options = {});

  // loss * scale.
  Tensor scale(const Tensor& loss) const;
  // Divides the gradients of the optimizer's parameters by the scale, in place, and records
  // whether any of them holds an inf or NaN. At most once per optimizer between updates; call it
  // before step() to clip or inspect the true gradients.
  void unscale_(const optim::Optimizer& optimizer);
  // Unscales (unless unscale_ already did), then runs optimizer.step() unless an inf or NaN was
  // found. Returns whether the step ran.
  bool step(optim::Optimizer& optimizer);
  // Ends the iteration: halves the scale (backoff_factor) if any optimizer saw an inf or NaN,
  // else counts a clean step and multiplies it by growth_factor after growth_interval of them.
  void update();

  double get_scale() const { return enabled_ ? scale_ : 1.0; }
  // Clean steps since the scale last changed.
  int64_t growth_tracker() const { return growth_tracker_; }
  bool is_enabled() const { return enabled_; }

 private:
  struct OptimizerState {
    bool unscaled = false;
    bool stepped = false;
    std::vector<Tensor> all_finite;  // one 0-dim bool per device that holds gradients
    bool found_inf = false;          // read by step()
  };

  GradScalerOptions opt_;
  bool enabled_;
  double scale_;
  int64_t growth_tracker_ = 0;
  std::unordered_map<const optim::Optimizer*, OptimizerState> per_optimizer_;
};

}  // namespace anatomy::autocast
