// The thread-local autocast state (one entry per device type) and the scope guard that sets it
// and the Autocast key of the thread's included set together.
#include "anatomy/amp/autocast_mode.h"

#include <array>

#include "anatomy/core/error.h"
#include "anatomy/core/tensor_impl.h"
#include "anatomy/dispatch/local_key_set.h"

namespace anatomy::autocast {
namespace {

struct DeviceState {
  bool enabled = false;
  std::optional<DType> dtype;  // nullopt: the device type's default
};

thread_local std::array<DeviceState, kNumDeviceTypes> t_state;

DeviceState& state_of(DeviceType t) { return t_state[static_cast<size_t>(t)]; }

DType default_dtype(DeviceType t) { return t == DeviceType::CPU ? DType::BFloat16 : DType::Float16; }

bool any_enabled() {
  for (const auto& s : t_state) {
    if (s.enabled) return true;
  }
  return false;
}

}  // namespace

bool is_enabled(DeviceType device_type) { return state_of(device_type).enabled; }

DType get_dtype(DeviceType device_type) { return state_of(device_type).dtype.value_or(default_dtype(device_type)); }

AutocastGuard::AutocastGuard(DeviceType device_type, std::optional<DType> dtype, bool enabled)
    : device_type_(device_type),
      saved_enabled_(state_of(device_type).enabled),
      saved_dtype_(get_dtype(device_type)),
      saved_key_included_(dispatch::tls_local_key_set.included.has(DispatchKey::Autocast)) {
  ANATOMY_CHECK(!dtype || *dtype == DType::Float16 || *dtype == DType::BFloat16, TypeError,
                "autocast: the lower-precision dtype must be fp16 or bf16, got {} (device type {})", name(*dtype),
                device_type_name(device_type));
  DeviceState& s = state_of(device_type);
  s.enabled = enabled;
  if (dtype) s.dtype = *dtype;
  auto& included = dispatch::tls_local_key_set.included;
  included = any_enabled() ? included.add(DispatchKey::Autocast) : included.remove(DispatchKey::Autocast);
}

AutocastGuard::~AutocastGuard() {
  DeviceState& s = state_of(device_type_);
  s.enabled = saved_enabled_;
  s.dtype = saved_dtype_;
  auto& included = dispatch::tls_local_key_set.included;
  included = saved_key_included_ ? included.add(DispatchKey::Autocast) : included.remove(DispatchKey::Autocast);
}

std::optional<DeviceType> device_type_of_backend_key(DispatchKey key) {
  for (DeviceType t : {DeviceType::CPU, DeviceType::CUDA, DeviceType::Meta, DeviceType::PrivateUse1}) {
    if (backend_dispatch_key(t) == key) return t;
  }
  return std::nullopt;
}

}  // namespace anatomy::autocast
