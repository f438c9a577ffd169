// Learning-rate schedules, as torch.optim.lr_scheduler: each sets every group's learning rate of
// an optimizer from the group's base rate (its rate when the scheduler was made) and the number of
// steps taken. Call step() once per optimizer step, after it.
//
//   optim::AdamW opt(params, {.lr = 3e-4});
//   optim::CosineWithWarmup schedule(opt, /*warmup_steps=*/100, /*total_steps=*/5000);
//   for (...) { ...; opt.step(); schedule.step(); }
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "anatomy/nn/optim/optim.h"

namespace anatomy::optim {

class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  // One more step: every group's rate becomes its rate at the new step count.
  void step();
  int64_t last_step() const { return step_; }
  // The rates set last, per group (PyTorch's get_last_lr).
  std::vector<double> last_lr() const;
  // Resumes at `step` (a checkpoint's last_step): sets the rates for it.
  void set_last_step(int64_t step);

 protected:
  // Remembers each group's rate as its base rate. The subclass's constructor calls apply() once its
  // own fields are set, so that the rates are the schedule's at step 0.
  explicit LRScheduler(Optimizer& optimizer);
  void apply();
  // The rate of a group whose base rate is `base` after `step` steps.
  virtual double rate(double base, int64_t step) const = 0;
  // Sets what else the schedule varies at `step` (OneCycleLR: the momentum); apply() calls it.
  virtual void apply_momentum(int64_t /*step*/) {}

  Optimizer& optimizer_;
  std::vector<double> base_;
  int64_t step_ = 0;
};

// base * gamma^(step / step_size), as StepLR.
class StepLR final : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);

 private:
  double rate(double base, int64_t step) const override;
  int64_t step_size_;
  double gamma_;
};

// A linear warm-up from 0 to the base rate over `warmup_steps`, then a cosine from the base rate to
// base * min_ratio at `total_steps` (held there after): what GPT training uses.
class CosineWithWarmup final : public LRScheduler {
 public:
  CosineWithWarmup(Optimizer& optimizer, int64_t warmup_steps, int64_t total_steps, double min_ratio = 0.0);

 private:
  double rate(double base, int64_t step) const override;
  int64_t warmup_, total_;
  double min_ratio_;
};

// torch.optim.lr_scheduler.OneCycleLR with cosine annealing: from max_lr / div_factor up to
// max_lr over pct_start of total_steps, then down to max_lr / (div_factor * final_div_factor). The
// groups' base rates are not used: max_lr is every group's peak. With cycle_momentum (the default,
// as PyTorch's) the momentum goes the other way on the same cosines: from max_momentum down to
// base_momentum while the rate rises, then back up to max_momentum; it is SGD's and RMSprop's
// momentum and Adam's and AdamW's beta1 (Optimizer::set_momentum), set to max_momentum when the
// schedule is made. An optimizer without one is a ValueError unless cycle_momentum is false.
class OneCycleLR final : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, double max_lr, int64_t total_steps, double pct_start = 0.3, double div_factor = 25.0,
             double final_div_factor = 1e4, bool cycle_momentum = true, double base_momentum = 0.85,
             double max_momentum = 0.95);

 private:
  // Which phase `step` is in (the rise of the rate, or its fall) and how far along it, 0 to 1.
  struct Phase {
    bool rising;
    double pct;
  };
  Phase phase(int64_t step) const;
  double rate(double base, int64_t step) const override;
  void apply_momentum(int64_t step) override;
  double max_lr_;
  int64_t total_;
  double pct_start_, div_factor_, final_div_factor_;
  bool cycle_momentum_;
  double base_momentum_, max_momentum_;
};

// base * factor(step), as LambdaLR.
class LambdaLR final : public LRScheduler {
 public:
  LambdaLR(Optimizer& optimizer, std::function<double(int64_t)> factor);

 private:
  double rate(double base, int64_t step) const override;
  std::function<double(int64_t)> factor_;
};

}  // namespace anatomy::optim
