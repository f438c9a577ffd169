// Adam's and AdamW's step (optim.h): torch.optim's single-tensor update, per group, with the step
// count on the host, or on the device when capturable (then the step can be captured into a CUDA
// graph and each replay advances it).
#include <cmath>

#include "anatomy/autograd/grad_mode.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/fused_optim.h"
#include "anatomy/dispatch/ops/fused_optim_rules.h"
#include "anatomy/nn/optim/options_fields.h"

namespace anatomy::optim {

template <bool Decoupled>
AdamFamily<Decoupled>::AdamFamily(std::vector<Tensor> params, Options options)
    : AdamFamily(std::vector<ParamGroup<Options>>{{std::move(params), options}}) {}

template <bool Decoupled>
AdamFamily<Decoupled>::AdamFamily(std::vector<ParamGroup<Options>> groups)
    : GroupedOptimizer<Options>(std::move(groups), Decoupled ? "AdamW" : "Adam") {}

namespace {

// The moments' update, the same on both paths: weight decay, then the averages.
template <bool Decoupled>
Tensor update_moments(const AdamFamilyOptions<Decoupled>& o, const Tensor& p, const Tensor& g,
                      std::map<std::string, Tensor>& state) {
  adam_moments_with_ops(p, g, state.at("exp_avg"), state.at("exp_avg_sq"), o.lr, o.beta1, o.beta2, o.weight_decay,
                        Decoupled);
  if (!o.amsgrad) return state.at("exp_avg_sq");
  Tensor& max_sq = state.at("max_exp_avg_sq");
  maximum_out(max_sq, max_sq, state.at("exp_avg_sq"));
  return max_sq;
}

// A parameter's state at its first step: both moments (and the maximum with amsgrad) and the step
// count, a 0-d fp64 tensor on the parameter's device when capturable, else a host int64.
template <bool Decoupled>
void init_state(const AdamFamilyOptions<Decoupled>& o, const Tensor& p, std::map<std::string, Tensor>& state,
                const char* name) {
  check_state_outside_capture(p, name);
  state["exp_avg"] = zeros_like(p);
  state["exp_avg_sq"] = zeros_like(p);
  if (o.amsgrad) state["max_exp_avg_sq"] = zeros_like(p);
  state["step"] = o.capturable ? zeros({}, TensorOptions().dtype(DType::Float64).device(p.device()))
                               : zeros({}, TensorOptions().dtype(DType::Int64));
}

}  // namespace

template <bool Decoupled>
void AdamFamily<Decoupled>::step() {
  autograd::NoGradGuard no_grad;
  size_t n = 0;
  for (size_t gi = 0; gi < this->groups_.size(); ++gi) {
    const Options& o = this->groups_[gi].options;
    check_options(o, this->name_, gi);
    if (!o.capturable) {
      check_not_captured(this->groups_[gi].params, Decoupled ? "AdamW::step" : "Adam::step",
                         "its bias correction uses a step count kept on the host, which a replay would not advance "
                         "(the options' capturable keeps it on the device)");
    }
    if (o.foreach && !o.amsgrad) {
      foreach_step(gi, n);
      n += this->groups_[gi].params.size();
      continue;
    }
    for (const Tensor& p : this->groups_[gi].params) {
      std::map<std::string, Tensor>& state = this->state_[n++];
      const Tensor g = p.grad();
      if (!g.defined()) continue;
      if (state.empty()) init_state(o, p, state, this->name_);
      if (o.amsgrad && !state.count("max_exp_avg_sq")) state["max_exp_avg_sq"] = zeros_like(p);
      Tensor& count = state.at("step");
      if (!o.capturable) {
        count.add_(1);
        const auto t = static_cast<double>(count.item<int64_t>());
        const Tensor second = update_moments(o, p, g, state);
        const double bias1 = 1 - std::pow(o.beta1, t), bias2 = 1 - std::pow(o.beta2, t);
        const Tensor denom = (second.sqrt() / std::sqrt(bias2)).add_(o.eps);
        p.addcdiv_(state.at("exp_avg"), denom, -o.lr / bias1);
        continue;
      }
      // Capturable: the count and the corrections are 0-d fp64 tensors on the device.
      count.add_(1.0);
      const Tensor second = update_moments(o, p, g, state);
      adam_apply_with_device_count(p, state.at("exp_avg"), second, count, o.lr, o.beta1, o.beta2, o.eps);
    }
  }
}

// The group's parameters with gradients in one multi-tensor call. Capturable: one
// _fused_adam_capturable_, which advances the counts on the device. Else one _fused_adam_ per step
// count (they share one unless some skipped steps without a gradient), the counts kept on the host
// as the single-tensor step keeps them.
template <bool Decoupled>
void AdamFamily<Decoupled>::foreach_step(size_t group, size_t first_state) {
  const Options& o = this->groups_[group].options;
  struct Lists {
    std::vector<Tensor> params, grads, exp_avgs, exp_avg_sqs, steps;  // steps: capturable only
  };
  Lists counted_on_device;
  std::map<int64_t, Lists> by_step;
  size_t n = first_state;
  for (const Tensor& p : this->groups_[group].params) {
    std::map<std::string, Tensor>& state = this->state_[n++];
    const Tensor g = p.grad();
    if (!g.defined()) continue;
    if (state.empty()) init_state(o, p, state, this->name_);
    Tensor& count = state.at("step");
    if (!o.capturable) count.add_(1);
    Lists& l = o.capturable ? counted_on_device : by_step[count.item<int64_t>()];
    l.params.push_back(p);
    l.grads.push_back(g);
    l.exp_avgs.push_back(state.at("exp_avg"));
    l.exp_avg_sqs.push_back(state.at("exp_avg_sq"));
    if (o.capturable) l.steps.push_back(count);
  }
  if (o.capturable) {
    const Lists& l = counted_on_device;
    _fused_adam_capturable_(l.params, l.grads, l.exp_avgs, l.exp_avg_sqs, l.steps, o.lr, o.beta1, o.beta2,
                            o.weight_decay, o.eps, Decoupled);
    return;
  }
  for (const auto& [step, l] : by_step) {
    const auto t = static_cast<double>(step);
    _fused_adam_(l.params, l.grads, l.exp_avgs, l.exp_avg_sqs, o.lr, o.beta1, o.beta2, o.weight_decay, o.eps,
                 1 - std::pow(o.beta1, t), 1 - std::pow(o.beta2, t), Decoupled);
  }
}

template class AdamFamily<false>;
template class AdamFamily<true>;

}  // namespace anatomy::optim
