// The optimizers' shared part (optim.h): parameters, zero_grad, groups and their learning rates,
// state_dict and load_state_dict, the options' checks, and the CUDA graph capture check.
#include <fmt/format.h>

#include <cstdio>
#include <set>

#include "anatomy/autograd/grad_mode.h"
#include "anatomy/core/device_streams.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/nn/optim/options_fields.h"

namespace anatomy::optim {

Optimizer::Optimizer(std::vector<Tensor> params, const char* name) : params_(std::move(params)), name_(name) {
  for (size_t i = 0; i < params_.size(); ++i) {
    ANATOMY_CHECK(params_[i].defined() && params_[i].is_leaf() && params_[i].requires_grad(), ValueError,
                  "{}: parameter {} must be a leaf tensor that requires grad", name_, i);
  }
}

void Optimizer::zero_grad(bool set_to_none) {
  autograd::NoGradGuard no_grad;
  for (const Tensor& p : params_) {
    if (set_to_none) {
      p.set_grad(Tensor());
    } else if (Tensor g = p.grad(); g.defined()) {
      g.zero_();
    }
  }
}

void Optimizer::set_momentum(size_t group, double momentum) {
  ANATOMY_THROW(ValueError, "{}: has no momentum to set (group {}, momentum {})", name_, group, momentum);
}

void Optimizer::set_lr(double lr) {
  for (size_t g = 0; g < num_groups(); ++g) set_lr(g, lr);
}

namespace {

std::vector<Tensor> all_params(const auto& groups) {
  std::vector<Tensor> out;
  for (const auto& g : groups) out.insert(out.end(), g.params.begin(), g.params.end());
  return out;
}

}  // namespace

template <typename Options>
GroupedOptimizer<Options>::GroupedOptimizer(std::vector<ParamGroup<Options>> groups, const char* name)
    : Optimizer(all_params(groups), name), groups_(std::move(groups)) {
  ANATOMY_CHECK(!groups_.empty(), ValueError, "{}: no parameter groups", name_);
  for (size_t g = 0; g < groups_.size(); ++g) check_options(groups_[g].options, name_, g);
  std::set<const void*> seen;
  for (const Tensor& p : params_) {
    ANATOMY_CHECK(seen.insert(p.impl()).second, ValueError, "{}: a parameter appears more than once", name_);
  }
  state_.resize(params_.size());
}

template <typename Options>
const ParamGroup<Options>& GroupedOptimizer<Options>::group_at(size_t group) const {
  ANATOMY_CHECK(group < groups_.size(), IndexError, "{}: group {} out of range (it has {})", name_, group,
                groups_.size());
  return groups_[group];
}

template <typename Options>
void GroupedOptimizer<Options>::set_lr(size_t group, double lr) {
  group_at(group);
  ANATOMY_CHECK(lr >= 0, ValueError, "{}: the learning rate must be non-negative, got {}", name_, lr);
  groups_[group].options.lr = lr;
}

template <typename Options>
std::optional<double> GroupedOptimizer<Options>::momentum(size_t group) const {
  const Options& o = group_at(group).options;
  if constexpr (requires { o.beta1; }) {
    return o.beta1;
  } else {
    return o.momentum;
  }
}

template <typename Options>
void GroupedOptimizer<Options>::set_momentum(size_t group, double momentum) {
  group_at(group);
  ANATOMY_CHECK(momentum >= 0 && momentum < 1, ValueError, "{}: the momentum must be in [0, 1), got {}", name_,
                momentum);
  Options& o = groups_[group].options;
  if constexpr (requires { o.beta1; }) {
    o.beta1 = momentum;
  } else {
    o.momentum = momentum;
  }
}

template <typename Options>
std::map<std::string, Tensor> GroupedOptimizer<Options>::state_dict() const {
  std::map<std::string, Tensor> out;
  for (size_t n = 0; n < state_.size(); ++n) {
    for (const auto& [name, t] : state_[n]) out[fmt::format("state.{}.{}", n, name)] = t.detach();
  }
  for (size_t g = 0; g < groups_.size(); ++g) {
    Options o = groups_[g].options;
    for_each_option(o, [&](const char* name, auto& v) {
      out[fmt::format("param_groups.{}.{}", g, name)] =
          scalar_tensor(static_cast<double>(v), TensorOptions().dtype(DType::Float64));
    });
  }
  return out;
}

template <typename Options>
void GroupedOptimizer<Options>::load_state_dict(const std::map<std::string, Tensor>& state) {
  std::vector<std::string> problems;
  // The groups' options, read from their keys; every such key, to tell unexpected ones apart.
  std::vector<Options> options;
  std::set<std::string> option_keys;
  for (size_t g = 0; g < groups_.size(); ++g) {
    Options o = groups_[g].options;
    for_each_option(o, [&](const char* name, auto& v) {
      const std::string key = fmt::format("param_groups.{}.{}", g, name);
      option_keys.insert(key);
      auto it = state.find(key);
      if (it == state.end()) {
        problems.push_back(fmt::format("missing key '{}'", key));
      } else if (!it->second.defined() || it->second.numel() != 1) {
        problems.push_back(fmt::format("'{}' must hold one number", key));
      } else {
        v = static_cast<std::remove_reference_t<decltype(v)>>(it->second.to(kCPU, DType::Float64).item<double>());
      }
    });
    options.push_back(o);
  }
  std::vector<size_t> group_of;  // per parameter number
  for (size_t g = 0; g < groups_.size(); ++g) group_of.insert(group_of.end(), groups_[g].params.size(), g);
  std::vector<std::map<std::string, Tensor>> loaded(params_.size());
  for (const auto& [key, value] : state) {
    if (option_keys.count(key)) continue;
    size_t n = 0;
    int consumed = 0;
    if (key.rfind("state.", 0) != 0 || std::sscanf(key.c_str(), "state.%zu.%n", &n, &consumed) != 1 || consumed == 0 ||
        n >= params_.size() || !is_state_name(groups_[0].options, key.substr(static_cast<size_t>(consumed)))) {
      problems.push_back(fmt::format("unexpected key '{}'", key));
      continue;
    }
    const std::string name = key.substr(static_cast<size_t>(consumed));
    const Tensor& p = params_[n];
    if (name == "step") {
      // Where the options keep it: on the device (capturable Adam) or the host.
      if (!value.defined() || value.numel() != 1) problems.push_back(fmt::format("'{}' must hold one number", key));
      else if (keeps_step_on_device(options[group_of[n]]))
        loaded[n][name] = value.detach().to(p.device(), DType::Float64).clone();
      else loaded[n][name] = value.detach().to(kCPU, DType::Int64).clone();
      continue;
    }
    if (!value.defined() || value.sizes() != p.sizes()) {
      problems.push_back(fmt::format("'{}' has shape [{}] but parameter {} has shape [{}]", key,
                                     value.defined() ? fmt::format("{}", fmt::join(value.sizes(), ", ")) : "", n,
                                     fmt::join(p.sizes(), ", ")));
      continue;
    }
    loaded[n][name] = value.detach().to(p.device(), p.dtype()).clone();
  }
  for (size_t g = 0; g < options.size() && problems.empty(); ++g) check_options(options[g], name_, g);
  ANATOMY_CHECK(problems.empty(), ValueError, "{}: load_state_dict: {}", name_, fmt::join(problems, "; "));
  for (size_t g = 0; g < groups_.size(); ++g) groups_[g].options = options[g];
  state_ = std::move(loaded);
}

void check_options(const SGDOptions& o, const char* name, size_t group) {
  ANATOMY_CHECK(o.lr >= 0 && o.momentum >= 0 && o.weight_decay >= 0, ValueError,
                "{}: group {}: lr {}, momentum {} and weight_decay {} must be non-negative", name, group, o.lr,
                o.momentum, o.weight_decay);
  ANATOMY_CHECK(!o.nesterov || (o.momentum > 0 && o.dampening == 0), ValueError,
                "{}: group {}: Nesterov momentum requires a momentum and zero dampening", name, group);
}

template <bool Decoupled>
void check_options(const AdamFamilyOptions<Decoupled>& o, const char* name, size_t group) {
  ANATOMY_CHECK(
      o.lr >= 0 && o.eps >= 0 && o.beta1 >= 0 && o.beta1 < 1 && o.beta2 >= 0 && o.beta2 < 1 && o.weight_decay >= 0,
      ValueError, "{}: group {}: invalid hyperparameters lr {}, betas ({}, {}), eps {}, weight_decay {}", name, group,
      o.lr, o.beta1, o.beta2, o.eps, o.weight_decay);
}

void check_options(const RMSpropOptions& o, const char* name, size_t group) {
  ANATOMY_CHECK(o.lr >= 0 && o.eps >= 0 && o.alpha >= 0 && o.weight_decay >= 0 && o.momentum >= 0, ValueError,
                "{}: group {}: invalid hyperparameters lr {}, alpha {}, eps {}, weight_decay {}, momentum {}", name,
                group, o.lr, o.alpha, o.eps, o.weight_decay, o.momentum);
}

bool is_state_name(const SGDOptions&, std::string_view name) { return name == "momentum_buffer"; }

template <bool Decoupled>
bool is_state_name(const AdamFamilyOptions<Decoupled>&, std::string_view name) {
  return name == "step" || name == "exp_avg" || name == "exp_avg_sq" || name == "max_exp_avg_sq";
}

bool is_state_name(const RMSpropOptions&, std::string_view name) {
  return name == "step" || name == "square_avg" || name == "momentum_buffer" || name == "grad_avg";
}

bool is_captured(Device device) {
  const DeviceStreams* streams = device_streams(device.type());
  return streams != nullptr && streams->is_capturing != nullptr && streams->is_capturing(device);
}

void check_not_captured(const std::vector<Tensor>& params, const char* op, const char* why) {
  for (size_t i = 0; i < params.size(); ++i) {
    if (i > 0 && params[i].device() == params[i - 1].device()) continue;
    ANATOMY_CHECK(!is_captured(params[i].device()), ValueError, "{}: cannot be captured in a CUDA graph: {}", op, why);
  }
}

void check_state_outside_capture(const Tensor& p, const char* name) {
  ANATOMY_CHECK(!is_captured(p.device()), ValueError,
                "{}: the first step makes the optimizer's state, which a CUDA graph capture cannot: run one step "
                "before capturing",
                name);
}

template class GroupedOptimizer<SGDOptions>;
template class GroupedOptimizer<AdamOptions>;
template class GroupedOptimizer<AdamWOptions>;
template class GroupedOptimizer<RMSpropOptions>;

}  // namespace anatomy::optim
