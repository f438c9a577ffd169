// Optimizers, as torch.optim: SGD (momentum, dampening, weight decay, Nesterov), Adam and AdamW
// (optionally capturable into a CUDA graph), RMSprop. Each updates its parameters in place under
// no-grad, per parameter group: a group is a list of parameters with its own options, whose
// learning rate (and any other option) can change between steps (the LR schedulers of
// nn/optim/lr_scheduler.h do). state_dict() gives the optimizer's state and options as a flat map of
// tensors, ready for a safetensors checkpoint; load_state_dict() puts them back.
//
//   optim::SGD opt({w1, b1, w2, b2}, {.lr = 0.1, .momentum = 0.9});
//   optim::AdamW opt2({{.params = {w1, w2}, .options = {.lr = 1e-3}},
//                      {.params = {b1, b2}, .options = {.lr = 1e-3, .weight_decay = 0}}});
//   for (...) { opt.zero_grad(); loss(...).backward(); opt.step(); }
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "anatomy/core/tensor.h"

namespace anatomy::optim {

// Every optimizer's interface. Parameters are numbered across the groups in order (the numbers
// of state_dict's "state.<n>." keys, as PyTorch's).
class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // Clears every parameter's .grad (set_to_none, PyTorch's default) or zeroes it in place.
  void zero_grad(bool set_to_none = true);
  virtual void step() = 0;
  // Every parameter, over the groups in order.
  const std::vector<Tensor>& params() const { return params_; }
  virtual size_t num_groups() const = 0;
  virtual double lr(size_t group = 0) const = 0;
  // The learning rate of one group (IndexError for a group that does not exist), or of all.
  virtual void set_lr(size_t group, double lr) = 0;
  void set_lr(double lr);
  // The momentum a one-cycle schedule varies (SGD's and RMSprop's momentum, Adam's and AdamW's
  // beta1), or nullopt for an optimizer without one; set_momentum sets it (ValueError outside
  // [0, 1), IndexError for a group that does not exist).
  virtual std::optional<double> momentum(size_t /*group*/ = 0) const { return std::nullopt; }
  virtual void set_momentum(size_t group, double momentum);
  // "state.<n>.<name>" per parameter n that has state (its step count as a 0-d int64 or fp64
  // tensor, its buffers) and "param_groups.<g>.<option>" per group option (0-d fp64 CPU tensors).
  virtual std::map<std::string, Tensor> state_dict() const = 0;
  // Puts back what state_dict gave (from this optimizer or one built alike): every problem
  // (a missing or unexpected key, a shape that differs) is reported in one ValueError and
  // nothing changes. Buffers are copied to their parameter's device and dtype.
  virtual void load_state_dict(const std::map<std::string, Tensor>& state) = 0;

 protected:
  explicit Optimizer(std::vector<Tensor> params, const char* name);
  std::vector<Tensor> params_;
  const char* name_;
};

// A group of parameters with their options.
template <typename Options>
struct ParamGroup {
  std::vector<Tensor> params;
  Options options;
};

struct SGDOptions {
  double lr = 0.01;
  double momentum = 0;
  double dampening = 0;
  double weight_decay = 0;
  bool nesterov = false;
};

// Adam's (Decoupled = false) and AdamW's options: the same, but for weight decay's default and
// meaning (Adam: L2, added to the gradient; AdamW: decoupled, shrinking the parameter).
template <bool Decoupled>
struct AdamFamilyOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = Decoupled ? 1e-2 : 0.0;
  bool amsgrad = false;  // divide by the running maximum of the second moment
  // As PyTorch's capturable=True: each parameter's step count is a 0-d fp64 tensor on its device
  // and the bias corrections are computed there, so a step can be captured into a CUDA graph and
  // each replay advances the count (a few more kernels per parameter). Without it the count is a
  // host integer and a step refuses a capture (a replay would repeat the captured correction).
  // Either way the state is made at a parameter's first step, which must run before a capture.
  bool capturable = false;
  // Update the group's parameters with one multi-tensor operator (_fused_adam_, or with capturable
  // _fused_adam_capturable_: a few CUDA launches for the whole group instead of several kernels per
  // parameter), as PyTorch's foreach=True. Not with amsgrad, which takes the single-tensor step.
  // fp32 results are those of the single-tensor step up to rounding.
  bool foreach = false;
};
using AdamOptions = AdamFamilyOptions<false>;
using AdamWOptions = AdamFamilyOptions<true>;

struct RMSpropOptions {
  double lr = 1e-2;
  double alpha = 0.99;  // smoothing of the squared gradient's average
  double eps = 1e-8;
  double weight_decay = 0;
  double momentum = 0;
  bool centered = false;  // divide by the gradient's estimated variance, not its raw second moment
};

// The per-parameter state, and the groups, of one optimizer kind.
template <typename Options>
class GroupedOptimizer : public Optimizer {
 public:
  size_t num_groups() const override { return groups_.size(); }
  double lr(size_t group = 0) const override { return group_at(group).options.lr; }
  void set_lr(size_t group, double lr) override;
  using Optimizer::set_lr;
  std::optional<double> momentum(size_t group = 0) const override;
  void set_momentum(size_t group, double momentum) override;
  // The groups, whose options may be changed between steps (checked at the next step).
  std::vector<ParamGroup<Options>>& param_groups() { return groups_; }
  const std::vector<ParamGroup<Options>>& param_groups() const { return groups_; }
  std::map<std::string, Tensor> state_dict() const override;
  void load_state_dict(const std::map<std::string, Tensor>& state) override;

 protected:
  GroupedOptimizer(std::vector<ParamGroup<Options>> groups, const char* name);
  const ParamGroup<Options>& group_at(size_t group) const;
  // Each parameter's named state tensors ("exp_avg", "step", ...), by parameter number.
  std::vector<std::map<std::string, Tensor>> state_;
  std::vector<ParamGroup<Options>> groups_;
};

class SGD final : public GroupedOptimizer<SGDOptions> {
 public:
  SGD(std::vector<Tensor> params, SGDOptions options);
  explicit SGD(std::vector<ParamGroup<SGDOptions>> groups);
  void step() override;
};

// Adam and AdamW (decoupled weight decay), as torch.optim's.
template <bool Decoupled>
class AdamFamily final : public GroupedOptimizer<AdamFamilyOptions<Decoupled>> {
 public:
  using Options = AdamFamilyOptions<Decoupled>;
  AdamFamily(std::vector<Tensor> params, Options options);
  explicit AdamFamily(std::vector<ParamGroup<Options>> groups);
  void step() override;

 private:
  void foreach_step(size_t group, size_t first_state);  // options.foreach: one _fused_adam_ per step count
};
using Adam = AdamFamily<false>;
using AdamW = AdamFamily<true>;

class RMSprop final : public GroupedOptimizer<RMSpropOptions> {
 public:
  RMSprop(std::vector<Tensor> params, RMSpropOptions options);
  explicit RMSprop(std::vector<ParamGroup<RMSpropOptions>> groups);
  void step() override;
};

// Scales every gradient of `params` by min(1, max_norm / (total + 1e-6)), total being the
// norm_type-norm of all their gradients together (any positive order, or infinity), and returns
// total as a 0-d fp32 tensor on the first gradient's device. Nothing waits for the device: the
// factor is a tensor. The gradients of one device and dtype take one _foreach_norm and one
// _foreach_mul_ (dispatch/ops/foreach.h): on CUDA a few launches for the whole list. ValueError
// for a negative max_norm or a norm type that is not positive.
Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type = 2.0);

}  // namespace anatomy::optim
