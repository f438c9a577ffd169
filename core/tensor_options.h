// TensorOptions: the dtype, device and requires_grad a factory is asked for.
#pragma once

#include <optional>

#include "anatomy/core/device.h"
#include "anatomy/core/dtype.h"

namespace anatomy {

// Reads like PyTorch's keyword arguments: zeros({2, 3}, TensorOptions().dtype(DType::Float16)
// .device("cuda")). A DType or a Device converts to TensorOptions, so zeros({2}, DType::Int64)
// and zeros({2}, Device("cuda")) work too.
class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(DType d) : dtype_(d) {}
  TensorOptions(Device d) : device_(d) {}
  TensorOptions(DeviceType t) : device_(Device(t)) {}

  TensorOptions dtype(DType d) const {
    auto o = *this;
    o.dtype_ = d;
    return o;
  }
  TensorOptions device(Device d) const {
    auto o = *this;
    o.device_ = d;
    return o;
  }
  TensorOptions requires_grad(bool r) const {
    auto o = *this;
    o.requires_grad_ = r;
    return o;
  }

  std::optional<DType> dtype_opt() const { return dtype_; }
  std::optional<Device> device_opt() const { return device_; }
  DType dtype_or(DType fallback) const { return dtype_.value_or(fallback); }
  bool requires_grad() const { return requires_grad_; }

 private:
  std::optional<DType> dtype_;
  std::optional<Device> device_;
  bool requires_grad_ = false;
};

}  // namespace anatomy
