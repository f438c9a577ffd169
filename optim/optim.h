// Optimizers: SGD (with momentum, dampening, weight decay, Nesterov) and AdamW, updating
// parameters in place under no-grad, as torch.optim does.
//
//   optim::SGD opt({w1, b1, w2, b2}, {.lr = 0.1, .momentum = 0.9});
//   for (...) { opt.zero_grad(); loss(...).backward(); opt.step(); }
#pragma once

#include <vector>

#include "anatomy/core/tensor.h"

namespace anatomy::optim {

class Optimizer {
 public:
  explicit Optimizer(std::vector<Tensor> params);
  virtual ~Optimizer() = default;
  // Clears every parameter's .grad (set_to_none, PyTorch's default) or zeroes it in place.
  void zero_grad(bool set_to_none = true);
  virtual void step() = 0;
  const std::vector<Tensor>& params() const { return params_; }

 protected:
  std::vector<Tensor> params_;
};

struct SGDOptions {
  double lr = 0.01;
  double momentum = 0;
  double dampening = 0;
  double weight_decay = 0;
  bool nesterov = false;
};

class SGD final : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, SGDOptions options);
  void step() override;

 private:
  SGDOptions opt_;
  std::vector<Tensor> momentum_;  // one buffer per parameter, made at its first step
};

struct AdamWOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 1e-2;
  // As PyTorch's capturable=True: each parameter's step count is a 0-d fp64 tensor on its device
  // and the bias corrections are computed there, so a step can be captured into a CUDA graph and
  // each replay advances the count (a few more kernels per parameter). Without it the count is a
  // host integer and a step refuses a capture (a replay would repeat the captured correction).
  // Either way the state is made at a parameter's first step, which must run before a capture.
  bool capturable = false;
};

class AdamW final : public Optimizer {
 public:
  AdamW(std::vector<Tensor> params, AdamWOptions options);
  void step() override;

 private:
  AdamWOptions opt_;
  std::vector<Tensor> exp_avg_, exp_avg_sq_;
  std::vector<Tensor> step_counts_;  // capturable: per parameter, on its device
  int64_t steps_ = 0;

  void capturable_step();
};

}  // namespace anatomy::optim
