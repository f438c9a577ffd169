// Autocast: mixed precision by dispatch, as torch.autocast does it. Inside a scope, operators
// that profit from a lower precision (the matrix products) cast their floating inputs to fp16
// or bf16, operators that need range or accuracy (reductions, softmax, norms, exp/log) cast
// them up to fp32, and operators that combine tensors (cat, stack, where, ...) cast them to the
// widest dtype among them. Every other operator runs as it would outside the scope.
//
//   {
//     autocast::AutocastGuard amp(DeviceType::CPU, DType::BFloat16);
//     Tensor y = mm(x, w);          // bf16, even though x and w are fp32
//     Tensor p = softmax(y, -1);    // fp32
//   }                               // the previous state is back
//
// The scope adds the Autocast key to the thread's included keys; the kernels at that key
// (amp/autocast_kernels.cpp) cast with ordinary `to()` calls, which autograd records, so
// gradients flow back to fp32 parameters in fp32. docs/autograd.md ("Autocast and the loss
// scaler") lists the operators of each policy.
#pragma once

#include <optional>

#include "anatomy/core/device.h"
#include "anatomy/core/dispatch_key_set.h"
#include "anatomy/core/dtype.h"

namespace anatomy::autocast {

// Whether autocast is on for tensors of `device_type` on this thread.
bool is_enabled(DeviceType device_type);
// The lower-precision dtype for `device_type`: what the last enclosing scope chose, else the
// default (bf16 for the CPU, fp16 for every other device, as PyTorch).
DType get_dtype(DeviceType device_type);

// Turns autocast on (or, with enabled = false, off) for tensors of one device type for its
// lifetime, on this thread. Scopes nest; each restores on exit exactly the state it found, so
// an inner disabled scope turns autocast off for a region and the outer scope resumes after it.
// Scopes for different device types are independent (a CUDA fp16 scope and a CPU bf16 scope
// can be active together). `dtype` must be fp16 or bf16; without one, the current dtype of the
// device type is kept.
class AutocastGuard {
 public:
  explicit AutocastGuard(DeviceType device_type, std::optional<DType> dtype = std::nullopt, bool enabled = true);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  DeviceType device_type_;
  bool saved_enabled_;
  DType saved_dtype_;
  bool saved_key_included_;
};

// The device type whose tensors a backend key holds (CPU for DispatchKey::CPU, ...); nullopt
// for a key that is not a backend key. The Autocast kernels use it to find the call's device.
std::optional<DeviceType> device_type_of_backend_key(DispatchKey key);

}  // namespace anatomy::autocast
