// DispatchKey and DispatchKeySet: which layers and backends a call goes through.
//
// A DispatchKeySet is a 64-bit bitset; a key's priority is its bit position, so the key that
// handles a call is the highest bit of the call's set. Backends sit at the bottom, then
// BackendSelect (factories choosing a backend), the autograd keys, Autocast, the Tracer, and the
// Profiler on top. This header is a leaf: TensorImpl includes it, and it includes nothing of the project.
#pragma once

#include <bit>
#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace anatomy {

// _(key, kind) in priority order, lowest first. The kinds: Backend keys hold kernels that
// compute; Autograd keys (one per backend, in the same order) record graphs; Functionality
// keys are layers every backend shares.
#define ANATOMY_FORALL_DISPATCH_KEYS(_) \
  _(CPU, Backend)                       \
  _(CUDA, Backend)                      \
  _(Meta, Backend)                      \
  _(PrivateUse1, Backend)               \
  _(BackendSelect, Functionality)       \
  _(AutogradCPU, Autograd)              \
  _(AutogradCUDA, Autograd)             \
  _(AutogradMeta, Autograd)             \
  _(AutogradPrivateUse1, Autograd)      \
  _(Autocast, Functionality)            \
  _(Tracer, Functionality)              \
  _(Profiler, Functionality)

enum class DispatchKey : uint8_t {
#define ANATOMY_DK_ENUM(k, kind) k,
  ANATOMY_FORALL_DISPATCH_KEYS(ANATOMY_DK_ENUM)
#undef ANATOMY_DK_ENUM
      NumKeys,
  Undefined = 255,
};

inline constexpr int kNumDispatchKeys = static_cast<int>(DispatchKey::NumKeys);
inline constexpr int kNumBackendKeys = 4;
static_assert(kNumDispatchKeys <= 64, "a DispatchKeySet is 64 bits wide");

constexpr std::string_view to_string(DispatchKey k) {
  switch (k) {
#define ANATOMY_DK_NAME(k, kind) \
  case DispatchKey::k:           \
    return #k;
    ANATOMY_FORALL_DISPATCH_KEYS(ANATOMY_DK_NAME)
#undef ANATOMY_DK_NAME
    default:
      return "Undefined";
  }
}

constexpr bool is_backend_key(DispatchKey k) { return static_cast<int>(k) < kNumBackendKeys; }
constexpr bool is_autograd_key(DispatchKey k) {
  return k >= DispatchKey::AutogradCPU && k <= DispatchKey::AutogradPrivateUse1;
}
// AutogradCPU for CPU, and so on.
constexpr DispatchKey autograd_key_of(DispatchKey backend) {
  return static_cast<DispatchKey>(static_cast<int>(DispatchKey::AutogradCPU) + static_cast<int>(backend));
}
// CPU for AutogradCPU, and so on.
constexpr DispatchKey backend_of_autograd_key(DispatchKey autograd) {
  return static_cast<DispatchKey>(static_cast<int>(autograd) - static_cast<int>(DispatchKey::AutogradCPU));
}

class DispatchKeySet {
 public:
  constexpr DispatchKeySet() = default;
  constexpr explicit DispatchKeySet(DispatchKey k) : bits_(bit(k)) {}
  constexpr DispatchKeySet(std::initializer_list<DispatchKey> ks) {
    for (auto k : ks) bits_ |= bit(k);
  }
  static constexpr DispatchKeySet from_bits(uint64_t b) {
    DispatchKeySet s;
    s.bits_ = b;
    return s;
  }
  // Every key strictly below `k` in priority: what a kernel at `k` redispatches into.
  static constexpr DispatchKeySet below(DispatchKey k) { return from_bits(bit(k) - 1); }
  static constexpr DispatchKeySet all() { return from_bits((uint64_t{1} << kNumDispatchKeys) - 1); }

  constexpr bool has(DispatchKey k) const { return (bits_ & bit(k)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr uint64_t raw() const { return bits_; }
  constexpr DispatchKeySet add(DispatchKey k) const { return from_bits(bits_ | bit(k)); }
  constexpr DispatchKeySet remove(DispatchKey k) const { return from_bits(bits_ & ~bit(k)); }

  // The key that handles a call with this set; Undefined for an empty set.
  constexpr DispatchKey highest() const {
    return bits_ == 0 ? DispatchKey::Undefined : static_cast<DispatchKey>(63 - std::countl_zero(bits_));
  }
  // The highest backend key in the set (which device the call is for).
  constexpr DispatchKey highest_backend() const {
    return from_bits(bits_ & ((uint64_t{1} << kNumBackendKeys) - 1)).highest();
  }

  constexpr DispatchKeySet operator|(DispatchKeySet o) const { return from_bits(bits_ | o.bits_); }
  constexpr DispatchKeySet operator&(DispatchKeySet o) const { return from_bits(bits_ & o.bits_); }
  constexpr DispatchKeySet operator-(DispatchKeySet o) const { return from_bits(bits_ & ~o.bits_); }
  constexpr bool operator==(const DispatchKeySet&) const = default;

  // Iterates keys from the highest priority down.
  template <typename F>
  constexpr void for_each_high_to_low(F&& f) const {
    for (uint64_t b = bits_; b;) {
      int i = 63 - std::countl_zero(b);
      f(static_cast<DispatchKey>(i));
      b &= ~(uint64_t{1} << i);
    }
  }

 private:
  static constexpr uint64_t bit(DispatchKey k) { return uint64_t{1} << static_cast<int>(k); }
  uint64_t bits_ = 0;
};

// The keys a tensor on a backend carries: the backend and its autograd key.
constexpr DispatchKeySet tensor_key_set_for_backend(DispatchKey backend) {
  return DispatchKeySet{backend, autograd_key_of(backend)};
}

}  // namespace anatomy
