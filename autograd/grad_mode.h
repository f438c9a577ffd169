// Grad mode: whether operators record the autograd graph on this thread. NoGradGuard turns it
// off for a scope (optimizer steps, evaluation), EnableGradGuard turns it back on inside one.
// InferenceMode turns it off too and says so (InferenceMode::is_enabled()); skipping version
// counting for tensors made inside it is still to come.
#pragma once

#include "anatomy/core/macros.h"

namespace anatomy::autograd {

namespace detail {
struct GradModeState {
  bool grad_enabled = true;
  bool inference = false;
};
inline thread_local GradModeState tls_grad_mode ANATOMY_TLS_FAST;
}  // namespace detail

class GradMode {
 public:
  static bool is_enabled() { return detail::tls_grad_mode.grad_enabled; }
  static void set_enabled(bool on) { detail::tls_grad_mode.grad_enabled = on; }
};

class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : saved_(GradMode::is_enabled()) { GradMode::set_enabled(enabled); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;
  ~AutoGradMode() { GradMode::set_enabled(saved_); }

 private:
  bool saved_;
};

class NoGradGuard : public AutoGradMode {
 public:
  NoGradGuard() : AutoGradMode(false) {}
};

class EnableGradGuard : public AutoGradMode {
 public:
  EnableGradGuard() : AutoGradMode(true) {}
};

// No graph for the scope: for pure inference, where nothing will be differentiated.
class InferenceMode {
 public:
  InferenceMode() : saved_(detail::tls_grad_mode) { detail::tls_grad_mode = {false, true}; }
  InferenceMode(const InferenceMode&) = delete;
  InferenceMode& operator=(const InferenceMode&) = delete;
  ~InferenceMode() { detail::tls_grad_mode = saved_; }
  static bool is_enabled() { return detail::tls_grad_mode.inference; }

 private:
  detail::GradModeState saved_;
};

}  // namespace anatomy::autograd
