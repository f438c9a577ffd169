// What the --peer torch module's files share (peer_torch.cpp, peer_torch_training.cpp): torch's
// names for the engine's dtypes and devices, the engine's tensors as torch views of the same
// memory, torch's results copied back, torch's errors as the experiment's failures, and a
// PeerCall over a function. Compiled only into the module, with libtorch's flags.
#pragma once

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "anatomy/cuda.h"
#include "anatomy/tools/experiment.h"
#include "anatomy/tools/peer.h"

namespace anatomy::tools::torch_peer {

inline at::ScalarType scalar_type(DType t) {
  switch (t) {
    case DType::Float32:
      return at::kFloat;
    case DType::Float64:
      return at::kDouble;
    case DType::Float16:
      return at::kHalf;
    case DType::BFloat16:
      return at::kBFloat16;
    case DType::Int8:
      return at::kChar;
    case DType::UInt8:
      return at::kByte;
    case DType::Int32:
      return at::kInt;
    case DType::Int64:
      return at::kLong;
    case DType::Bool:
      return at::kBool;
  }
  throw UsageError(fmt::format("--peer torch: no torch dtype for {}", name(t)));
}

inline at::Device torch_device(Device d) {
  return d.is_cuda() ? at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(d.index())) : at::Device(at::kCPU);
}

inline std::vector<int64_t> vec(IntArrayRef v) { return {v.begin(), v.end()}; }
inline std::vector<int64_t> vec(c10::IntArrayRef v) { return {v.begin(), v.end()}; }

// The anatomy tensor's memory as a torch tensor: same pointer, sizes, strides and device. The
// deleter holds a reference to the anatomy tensor, so the memory lives as long as either.
inline at::Tensor view_of(const Tensor& t) {
  return at::from_blob(
      t.data_ptr(), vec(t.sizes()), vec(t.strides()), [keep = t](void*) {},
      at::TensorOptions().dtype(scalar_type(t.dtype())).device(torch_device(t.device())));
}

// A torch result copied (by torch, on its device) into a new anatomy tensor.
inline Tensor to_anatomy(const at::Tensor& r, DType dtype, Device device) {
  Tensor out = empty(vec(r.sizes()), TensorOptions().dtype(dtype).device(device));
  view_of(out).copy_(r);
  if (device.is_cuda()) cuda::synchronize(device.index());
  return out;
}

// torch's refusal of a workload (an operator it lacks for a dtype, a shape it does not take) as
// the experiment's failure, with torch's message without its C++ backtrace: exit status 1 and one
// line, not an exception the tool does not know.
template <class Fn>
auto as_experiment_failure(Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const c10::Error& e) {
    const std::string message = e.what_without_backtrace();
    throw ExperimentFailed(fmt::format("--peer torch: {}", message.substr(0, message.find('\n'))));
  }
}

// A call whose workload is a function of no arguments returning torch's result.
template <class Fn>
class Call final : public PeerCall {
 public:
  Call(Fn fn, DType dtype, Device device) : fn_(std::move(fn)), dtype_(dtype), device_(device) {}
  void run() override { last_ = as_experiment_failure(fn_); }
  Tensor result() override {
    if (!last_.defined()) run();
    return to_anatomy(last_, dtype_, device_);
  }

 private:
  Fn fn_;
  DType dtype_;
  Device device_;
  at::Tensor last_;
};

template <class Fn>
std::unique_ptr<PeerCall> make_call(Fn fn, DType dtype, Device device) {
  return std::make_unique<Call<Fn>>(std::move(fn), dtype, device);
}

}  // namespace anatomy::tools::torch_peer
