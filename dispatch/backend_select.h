// BackendSelect kernels for factories: operators without tensor arguments learn their backend
// from their `device` argument, and this kernel redispatches to that backend's key.
#pragma once

#include <algorithm>
#include <optional>

#include "anatomy/dispatch/dispatcher.h"

namespace anatomy::dispatch {

// A string usable as a template argument, so each factory gets its own cached handle.
template <size_t N>
struct FixedString {
  char text[N];
  constexpr FixedString(const char (&s)[N]) { std::copy_n(s, N, text); }
  constexpr std::string_view view() const { return std::string_view(text, N - 1); }
};

namespace detail {
inline std::optional<Device> find_device() { return std::nullopt; }
template <typename First, typename... Rest>
std::optional<Device> find_device(const First& first, const Rest&... rest) {
  if constexpr (std::is_same_v<std::remove_cvref_t<First>, std::optional<Device>>) {
    if (first) return first;
  }
  return find_device(rest...);
}
}  // namespace detail

template <FixedString Name, typename Sig>
struct BackendSelectKernel;

template <FixedString Name, typename Ret, typename... Args>
struct BackendSelectKernel<Name, Ret(Args...)> {
  static Ret call(DispatchKeySet ks, Args... args) {
    static const TypedOperatorHandle<Ret(Args...)> op =
        Dispatcher::singleton().find_or_throw(Name.view()).template typed<Ret(Args...)>();
    Device device = detail::find_device(args...).value_or(Device(DeviceType::CPU));
    DispatchKeySet next =
        (ks & DispatchKeySet::below(DispatchKey::BackendSelect)).add(backend_dispatch_key(device.type()));
    return op.redispatch(next, std::forward<Args>(args)...);
  }
};

}  // namespace anatomy::dispatch

// Registers the BackendSelect kernel of factory `name` ("aten::empty.memory_format") whose C++
// signature is the rest of the arguments.
#define ANATOMY_BACKEND_SELECT(m, name, ...)                                                                           \
  (m).impl(name, ::anatomy::dispatch::named_kernel(&::anatomy::dispatch::BackendSelectKernel<name, __VA_ARGS__>::call, \
                                                   "backend_select"))
