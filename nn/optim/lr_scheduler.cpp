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
                       double final_div_factor)
    : LRScheduler(optimizer),
      max_lr_(max_lr),
      total_(total_steps),
      pct_start_(pct_start),
      div_factor_(div_factor),
      final_div_factor_(final_div_factor) {
  ANATOMY_CHECK(
      max_lr > 0 && total_steps > 1 && pct_start > 0 && pct_start < 1 && div_factor > 0 && final_div_factor > 0,
      ValueError,
      "OneCycleLR: needs max_lr ({}) > 0, total_steps ({}) > 1, pct_start ({}) in (0, 1) and positive "
      "div_factor ({}) and final_div_factor ({})",
      max_lr, total_steps, pct_start, div_factor, final_div_factor);
  apply();
}

double OneCycleLR::rate(double /*base*/, int64_t step) const {
  // PyTorch's phases: up over pct_start * total - 1 steps, down to the last step (total - 1).
  const double initial = max_lr_ / div_factor_, final_lr = initial / final_div_factor_;
  const double up_end = pct_start_ * static_cast<double>(total_) - 1, down_end = static_cast<double>(total_) - 1;
  auto cosine = [](double from, double to, double pct) {
    return to + (from - to) / 2 * (std::cos(std::numbers::pi * pct) + 1);
  };
  const auto s = static_cast<double>(step);
  if (s <= up_end) return cosine(initial, max_lr_, up_end > 0 ? s / up_end : 1.0);
  return cosine(max_lr_, final_lr, std::min(1.0, (s - up_end) / (down_end - up_end)));
}

LambdaLR::LambdaLR(Optimizer& optimizer, std::function<double(int64_t)> factor)
    : LRScheduler(optimizer), factor_(std::move(factor)) {
  ANATOMY_CHECK(factor_ != nullptr, ValueError, "LambdaLR: the factor function is empty");
  apply();
}

double LambdaLR::rate(double base, int64_t step) const { return base * factor_(step); }

}  // namespace anatomy::optim
