// KernelFunction: one entry of an operator's dispatch table.
//
// A kernel is reachable two ways: `unboxed`, a typed function pointer called directly on the
// hot path, and `boxed`, a function over a Stack. A typed kernel gets a boxed wrapper
// generated for it, so a boxed caller (a fallback redispatching, call_boxed) reaches it too; a
// boxed-only kernel (a fallback) is reached from a typed call by boxing the arguments.
#pragma once

#include <string>

#include "anatomy/core/dispatch_key_set.h"
#include "anatomy/dispatch/boxing.h"

namespace anatomy::dispatch {

class OperatorHandle;

using AnyFn = void (*)();
// A boxed kernel: the operator, the key set of the call, the stack, and the kernel's context
// (the typed function a generated wrapper calls, or a user's pointer).
using BoxedKernelFn = void (*)(const OperatorHandle& op, DispatchKeySet ks, Stack& stack, void* ctx);

struct KernelFunction {
  enum class Kind : uint8_t { Missing, Kernel, Fallthrough };

  AnyFn unboxed = nullptr;
  BoxedKernelFn boxed = nullptr;
  void* ctx = nullptr;
  bool takes_key_set = false;  // the typed function's first parameter is a DispatchKeySet
  Kind kind = Kind::Missing;

  bool is_fallthrough() const { return kind == Kind::Fallthrough; }
  bool is_missing() const { return kind == Kind::Missing; }

  // A typed kernel: `Ret(Args...)` or `Ret(DispatchKeySet, Args...)`.
  template <typename Ret, typename... Args>
  static KernelFunction from_unboxed(Ret (*fn)(Args...));
  template <typename Ret, typename... Args>
  static KernelFunction from_unboxed(Ret (*fn)(DispatchKeySet, Args...));
  static KernelFunction from_boxed(BoxedKernelFn fn, void* ctx = nullptr) {
    KernelFunction k;
    k.boxed = fn;
    k.ctx = ctx;
    k.kind = Kind::Kernel;
    return k;
  }
  // A key whose kernel passes the call to the next key down, at no cost: its bit is cleared
  // from the operator's mask.
  static KernelFunction fallthrough() {
    KernelFunction k;
    k.kind = Kind::Fallthrough;
    return k;
  }
};

namespace detail {
template <typename Ret, typename... Args>
void boxed_wrapper(const OperatorHandle&, DispatchKeySet, Stack& stack, void* ctx) {
  auto fn = reinterpret_cast<Ret (*)(Args...)>(reinterpret_cast<AnyFn>(ctx));
  call_with_stack<Ret, Args...>(stack, [fn](auto&&... a) -> Ret { return fn(a...); });
}
template <typename Ret, typename... Args>
void boxed_wrapper_ks(const OperatorHandle&, DispatchKeySet ks, Stack& stack, void* ctx) {
  auto fn = reinterpret_cast<Ret (*)(DispatchKeySet, Args...)>(reinterpret_cast<AnyFn>(ctx));
  call_with_stack<Ret, Args...>(stack, [fn, ks](auto&&... a) -> Ret { return fn(ks, a...); });
}
}  // namespace detail

template <typename Ret, typename... Args>
KernelFunction KernelFunction::from_unboxed(Ret (*fn)(Args...)) {
  KernelFunction k;
  k.unboxed = reinterpret_cast<AnyFn>(fn);
  k.boxed = &detail::boxed_wrapper<Ret, Args...>;
  k.ctx = reinterpret_cast<void*>(reinterpret_cast<AnyFn>(fn));
  k.kind = Kind::Kernel;
  return k;
}

template <typename Ret, typename... Args>
KernelFunction KernelFunction::from_unboxed(Ret (*fn)(DispatchKeySet, Args...)) {
  KernelFunction k;
  k.unboxed = reinterpret_cast<AnyFn>(fn);
  k.boxed = &detail::boxed_wrapper_ks<Ret, Args...>;
  k.ctx = reinterpret_cast<void*>(reinterpret_cast<AnyFn>(fn));
  k.takes_key_set = true;
  k.kind = Kind::Kernel;
  return k;
}

}  // namespace anatomy::dispatch
