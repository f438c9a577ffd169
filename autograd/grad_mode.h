// Grad mode: whether operators record the autograd graph on this thread. NoGradGuard turns it
// off for a scope (optimizer steps, evaluation), EnableGradGuard turns it back on inside one.
// InferenceMode turns it off too, and tensors made inside it are inference tensors, with no
// version counter (docs/autograd.md, "Inference mode").
#pragma once

#include "anatomy/core/inference_mode_state.h"
#include "anatomy/core/macros.h"

namespace anatomy::autograd {

namespace detail {
struct GradModeState {
  bool grad_enabled = true;
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

// No graph and no version counting for the scope: for pure inference, where nothing will be
// differentiated. InferenceMode(false) turns it off again inside one (and grad mode on), as
// PyTorch's.
class InferenceMode {
 public:
  explicit InferenceMode(bool enabled = true)
      : saved_grad_(GradMode::is_enabled()), saved_inference_(anatomy::detail::tls_inference_mode) {
    GradMode::set_enabled(!enabled);
    anatomy::detail::tls_inference_mode = enabled;
  }
  InferenceMode(const InferenceMode&) = delete;
  InferenceMode& operator=(const InferenceMode&) = delete;
  ~InferenceMode() {
    GradMode::set_enabled(saved_grad_);
    anatomy::detail::tls_inference_mode = saved_inference_;
  }
  static bool is_enabled() { return anatomy::detail::tls_inference_mode; }

 private:
  bool saved_grad_;
  bool saved_inference_;
};

}  // namespace anatomy::autograd
