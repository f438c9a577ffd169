// The learning-rate schedules (lr_scheduler.h), with torch.optim.lr_scheduler's formulas.
#include "anatomy/nn/optim/lr_scheduler.h"

#include <cmath>
#include <numbers>

#include "anatomy/core/error.h"

namespace anatomy::optim {

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
  for (size_t g = 0; g < optimizer.num_groups(); ++g) base_.push_back(optimizer.lr(g));
}

void LRScheduler::apply() {
  for (size_t g = 0; g < base_.size(); ++g) optimizer_.set_lr(g, rate(base_[g], step_));
  apply_momentum(step_);
}

void LRScheduler::step() {
  ++step_;
  apply();
}

std::vector<double> LRScheduler::last_lr() const {
  std::vector<double> out;
  for (size_t g = 0; g < optimizer_.num_groups(); ++g) out.push_back(optimizer_.lr(g));
  return out;
}

void LRScheduler::set_last_step(int64_t step) {
  ANATOMY_CHECK(step >= 0, ValueError, "LRScheduler::set_last_step: the step must be non-negative, got {}", step);
  step_ = step;
  apply();
}

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  ANATOMY_CHECK(step_size > 0 && gamma >= 0, ValueError,
                "StepLR: step_size {} must be positive and gamma {} not negative", step_size, gamma);
  apply();
}

double StepLR::rate(double base, int64_t step) const {
  return base * std::pow(gamma_, static_cast<double>(step / step_size_));
}

CosineWithWarmup::CosineWithWarmup(Optimizer& optimizer, int64_t warmup_steps, int64_t total_steps, double min_ratio)
    : LRScheduler(optimizer), warmup_(warmup_steps), total_(total_steps), min_ratio_(min_ratio) {
  ANATOMY_CHECK(warmup_steps >= 0 && total_steps > warmup_steps && min_ratio >= 0 && min_ratio <= 1, ValueError,
                "CosineWithWarmup: needs 0 <= warmup_steps ({}) < total_steps ({}) and min_ratio ({}) in [0, 1]",
                warmup_steps, total_steps, min_ratio);
  apply();
}

double CosineWithWarmup::rate(double base, int64_t step) const {
  if (step < warmup_) return base * static_cast<double>(step) / static_cast<double>(warmup_);
  const double progress = std::min(1.0, static_cast<double>(step - warmup_) / static_cast<double>(total_ - warmup_));
  const double low = base * min_ratio_;
  return low + (base - low) * 0.5 * (1 + std::cos(std::numbers::pi * progress));
}

OneCycleLR::OneCycleLR(Optimizer& optimizer, double max_lr, int64_t total_steps, double pct_start, double div_factor,
                       double final_div_factor, bool cycle_momentum, double base_momentum, double max_momentum)
    : LRScheduler(optimizer),
      max_lr_(max_lr),
      total_(total_steps),
      pct_start_(pct_start),
      div_factor_(div_factor),
      final_div_factor_(final_div_factor),
      cycle_momentum_(cycle_momentum),
      base_momentum_(base_momentum),
      max_momentum_(max_momentum) {
  ANATOMY_CHECK(
      max_lr > 0 && total_steps > 1 && pct_start > 0 && pct_start < 1 && div_factor > 0 && final_div_factor > 0,
      ValueError,
      "OneCycleLR: needs max_lr ({}) > 0, total_steps ({}) > 1, pct_start ({}) in (0, 1) and positive "
      "div_factor ({}) and final_div_factor ({})",
      max_lr, total_steps, pct_start, div_factor, final_div_factor);
  if (cycle_momentum) {
    ANATOMY_CHECK(optimizer.momentum().has_value(), ValueError,
                  "OneCycleLR: the optimizer has no momentum or beta1 to cycle (pass cycle_momentum = false)");
    ANATOMY_CHECK(base_momentum >= 0 && base_momentum < 1 && max_momentum >= 0 && max_momentum < 1, ValueError,
                  "OneCycleLR: base_momentum ({}) and max_momentum ({}) must be in [0, 1)", base_momentum,
                  max_momentum);
  }
  apply();
}

OneCycleLR::Phase OneCycleLR::phase(int64_t step) const {
  // PyTorch's phases: up over pct_start * total - 1 steps, down to the last step (total - 1).
  const double up_end = pct_start_ * static_cast<double>(total_) - 1, down_end = static_cast<double>(total_) - 1;
  const auto s = static_cast<double>(step);
  if (s <= up_end) return {true, up_end > 0 ? s / up_end : 1.0};
  return {false, std::min(1.0, (s - up_end) / (down_end - up_end))};
}

namespace {
// PyTorch's _annealing_cos: from `from` at pct 0 to `to` at pct 1.
double anneal_cos(double from, double to, double pct) {
  return to + (from - to) / 2 * (std::cos(std::numbers::pi * pct) + 1);
}
}  // namespace

double OneCycleLR::rate(double /*base*/, int64_t step) const {
  const double initial = max_lr_ / div_factor_, final_lr = initial / final_div_factor_;
  const Phase p = phase(step);
  return p.rising ? anneal_cos(initial, max_lr_, p.pct) : anneal_cos(max_lr_, final_lr, p.pct);
}

void OneCycleLR::apply_momentum(int64_t step) {
  if (!cycle_momentum_) return;
  const Phase p = phase(step);
  const double m =
      p.rising ? anneal_cos(max_momentum_, base_momentum_, p.pct) : anneal_cos(base_momentum_, max_momentum_, p.pct);
  for (size_t g = 0; g < optimizer_.num_groups(); ++g) optimizer_.set_momentum(g, m);
}

LambdaLR::LambdaLR(Optimizer& optimizer, std::function<double(int64_t)> factor)
    : LRScheduler(optimizer), factor_(std::move(factor)) {
  ANATOMY_CHECK(factor_ != nullptr, ValueError, "LambdaLR: the factor function is empty");
  apply();
}

double LambdaLR::rate(double base, int64_t step) const { return base * factor_(step); }

}  // namespace anatomy::optim
