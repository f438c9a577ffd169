// Whether InferenceMode is on for this thread. It lives in core because TensorImpl reads it when a
// tensor is made: a tensor made in inference mode gets no version counter (an inference tensor,
// docs/autograd.md). autograd::InferenceMode (autograd/grad_mode.h) is the guard that sets it.
#pragma once

#include "anatomy/core/macros.h"

namespace anatomy::detail {

inline thread_local bool tls_inference_mode ANATOMY_TLS_FAST = false;

}  // namespace anatomy::detail
