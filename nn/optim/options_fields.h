// Each optimizer's options by name, for state_dict's "param_groups.<g>.<option>" entries and the
// checks of every step. Internal to nn/optim/.
#pragma once

#include <string_view>

#include "anatomy/nn/optim/optim.h"

namespace anatomy::optim {

// Calls f(name, double&) for each numeric option and f(name, bool&) for each flag.
template <typename F>
void for_each_option(SGDOptions& o, F&& f) {
  f("lr", o.lr);
  f("momentum", o.momentum);
  f("dampening", o.dampening);
  f("weight_decay", o.weight_decay);
  f("nesterov", o.nesterov);
}

template <bool Decoupled, typename F>
void for_each_option(AdamFamilyOptions<Decoupled>& o, F&& f) {
  f("lr", o.lr);
  f("beta1", o.beta1);
  f("beta2", o.beta2);
  f("eps", o.eps);
  f("weight_decay", o.weight_decay);
  f("amsgrad", o.amsgrad);
  f("capturable", o.capturable);
  f("foreach", o.foreach);
}

template <typename F>
void for_each_option(RMSpropOptions& o, F&& f) {
  f("lr", o.lr);
  f("alpha", o.alpha);
  f("eps", o.eps);
  f("weight_decay", o.weight_decay);
  f("momentum", o.momentum);
  f("centered", o.centered);
}

// The options' checks (ValueError naming the optimizer, the group and the values).
void check_options(const SGDOptions& o, const char* name, size_t group);
template <bool Decoupled>
void check_options(const AdamFamilyOptions<Decoupled>& o, const char* name, size_t group);
void check_options(const RMSpropOptions& o, const char* name, size_t group);

// Whether a parameter's "step" is a 0-d fp64 tensor on its device (else a 0-d int64 CPU tensor).
inline bool keeps_step_on_device(const SGDOptions&) { return false; }
template <bool Decoupled>
bool keeps_step_on_device(const AdamFamilyOptions<Decoupled>& o) {
  return o.capturable;
}
inline bool keeps_step_on_device(const RMSpropOptions&) { return false; }

// The names of a parameter's state tensors this optimizer kind keeps.
bool is_state_name(const SGDOptions&, std::string_view name);
template <bool Decoupled>
bool is_state_name(const AdamFamilyOptions<Decoupled>&, std::string_view name);
bool is_state_name(const RMSpropOptions&, std::string_view name);

// Whether the calling thread's current stream of `device` is being captured into a CUDA graph;
// ValueError "<op>: cannot be captured ..." when one of `params`' devices is (optimizer.cpp).
bool is_captured(Device device);
void check_not_captured(const std::vector<Tensor>& params, const char* op, const char* why);
// A parameter's state is made at its first step, which a capture cannot do (a replay would make
// it again every time): ValueError when `p`'s device is being captured.
void check_state_outside_capture(const Tensor& p, const char* name);

}  // namespace anatomy::optim
