// The Dispatcher: the registry of operators, and the call path that picks a kernel.
//
// A call computes its key set (the union of its tensor arguments' keys, the thread's included
// keys and BackendSelect, minus the thread's excluded keys, masked by the operator's
// non-fallthrough keys) and runs the kernel of the highest key. The lookup is an array index;
// no lock is taken on this path (registration, which is locked, happens at load time).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <typeinfo>
#include <unordered_map>
#include <vector>

#include "anatomy/core/call_path.h"
#include "anatomy/core/error.h"
#include "anatomy/dispatch/local_key_set.h"
#include "anatomy/dispatch/operator_entry.h"
#include "anatomy/dispatch/trace.h"

namespace anatomy::dispatch {

template <typename Sig>
class TypedOperatorHandle;

// Computes the key set contributed by a call's arguments (only tensors contribute).
namespace detail {
inline DispatchKeySet arg_keys(const Tensor& t) { return t.defined() ? t.key_set() : DispatchKeySet(); }
inline DispatchKeySet arg_keys(const std::optional<Tensor>& t) {
  return t && t->defined() ? t->key_set() : DispatchKeySet();
}
inline DispatchKeySet arg_keys(TensorList ts) {
  DispatchKeySet ks;
  for (const auto& t : ts) ks = ks | arg_keys(t);
  return ks;
}
inline DispatchKeySet arg_keys(const std::vector<Tensor>& ts) { return arg_keys(TensorList(ts)); }
template <typename T>
inline DispatchKeySet arg_keys(const T&) {
  return DispatchKeySet();
}

inline DispatchKeySet call_key_set(DispatchKeySet from_args, DispatchKeySet mask) {
  const LocalDispatchKeySet& local = tls_local_key_set;
  return ((from_args | local.included).add(DispatchKey::BackendSelect) - local.excluded) & mask;
}
}  // namespace detail

class OperatorHandle {
 public:
  explicit OperatorHandle(OperatorEntry* e) : entry_(e) {}

  const std::string& name() const { return entry_->name(); }
  const Schema& schema() const { return entry_->schema(); }
  OperatorEntry& entry() const { return *entry_; }

  // Calls through the boxed convention: arguments on the stack, returns left there.
  void call_boxed(Stack& stack) const;
  // Calls the kernel for `ks` (masked by the operator's mask) with a boxed stack.
  void redispatch_boxed(DispatchKeySet ks, Stack& stack) const { dispatch_boxed(ks, stack, /*is_redispatch=*/true); }

  // A typed view; throws TypeError when Sig does not match the schema.
  template <typename Sig>
  TypedOperatorHandle<Sig> typed() const;

 protected:
  OperatorEntry* entry_;

 private:
  void dispatch_boxed(DispatchKeySet ks, Stack& stack, bool is_redispatch) const;
};

template <typename Ret, typename... Args>
class TypedOperatorHandle<Ret(Args...)> : public OperatorHandle {
 public:
  explicit TypedOperatorHandle(OperatorEntry* e) : OperatorHandle(e) {}

  Ret call(Args... args) const {
    DispatchKeySet ks =
        detail::call_key_set((DispatchKeySet() | ... | detail::arg_keys(args)), entry_->non_fallthrough());
    return call_kernel(ks, /*is_redispatch=*/false, std::forward<Args>(args)...);
  }

  // Runs the kernel for `ks` (already narrowed by the caller, usually to the keys below its
  // own) without recomputing the key set from the arguments.
  Ret redispatch(DispatchKeySet ks, Args... args) const {
    return call_kernel(ks & entry_->non_fallthrough(), /*is_redispatch=*/true, std::forward<Args>(args)...);
  }

 private:
  Ret call_kernel(DispatchKeySet ks, bool is_redispatch, Args... args) const {
    const KernelFunction& k = entry_->lookup(ks);
    if (ANATOMY_UNLIKELY(trace_enabled())) {
      ANATOMY_CALL_PATH_STEP();  // Note [Recording the path of a call]
      TraceScope scope(*this, ks, is_redispatch);
      return invoke(k, ks, std::forward<Args>(args)...);
    }
    return invoke(k, ks, std::forward<Args>(args)...);
  }

  Ret invoke(const KernelFunction& k, DispatchKeySet ks, Args... args) const {
    if (ANATOMY_LIKELY(k.unboxed != nullptr)) {
      if (k.takes_key_set) {
        return reinterpret_cast<Ret (*)(DispatchKeySet, Args...)>(k.unboxed)(ks, std::forward<Args>(args)...);
      }
      return reinterpret_cast<Ret (*)(Args...)>(k.unboxed)(std::forward<Args>(args)...);
    }
    return invoke_boxed(k, ks, args...);
  }

  ANATOMY_NOINLINE Ret invoke_boxed(const KernelFunction& k, DispatchKeySet ks,
                                    const std::remove_reference_t<Args>&... args) const {
    if (k.is_missing()) throw_missing_kernel(*this, ks);
    Stack stack;
    box_args(stack, args...);
    k.boxed(*this, ks, stack, k.ctx);
    if constexpr (!std::is_void_v<Ret>) return return_traits<Ret>::pop(stack);
  }
};

[[noreturn]] void throw_missing_kernel(const OperatorHandle& op, DispatchKeySet ks);

class Dispatcher {
 public:
  static Dispatcher& singleton();

  // The operator named "ns::name.overload"; creates an entry without a schema if none exists,
  // so kernels may be registered before the schema is defined.
  OperatorHandle find_or_create(std::string_view qualified_name);
  std::optional<OperatorHandle> find(std::string_view qualified_name) const;
  // Like find, but throws ValueError naming close matches when the operator does not exist.
  OperatorHandle find_or_throw(std::string_view qualified_name) const;

  // Registration (locked). `where` names the registration site for error messages.
  OperatorHandle def(std::string_view ns, std::string_view schema_text, std::string_view where);
  void impl(std::string_view qualified_name, RegKey key, RegisteredKernel kernel, std::string_view where);
  void fallback(DispatchKey key, RegisteredKernel kernel, std::string_view where);

  std::vector<std::string> list_ops() const;
  const std::optional<RegisteredKernel>& fallback_for(DispatchKey k) const { return fallbacks_[static_cast<int>(k)]; }

 private:
  Dispatcher();
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<OperatorEntry>> ops_;
  std::array<std::optional<RegisteredKernel>, kNumDispatchKeys> fallbacks_;
};

// Checks a typed signature against the operator's schema; TypeError naming both when they differ.
void check_typed_signature(const OperatorHandle& op, const std::vector<ArgType>& args,
                           const std::vector<ArgType>& returns, const char* what);

// Checks that Sig is the exact C++ type of the operator's typed kernels (when any exist).
void check_cpp_signature(const OperatorHandle& op, const std::type_info& sig);

template <typename Sig>
TypedOperatorHandle<Sig> OperatorHandle::typed() const {
  check_typed_signature(*this, signature_traits<Sig>::arg_types(), signature_traits<Sig>::return_types(), "typed()");
  check_cpp_signature(*this, typeid(Sig));
  return TypedOperatorHandle<Sig>(entry_);
}

// Text dumps for people: the registered kernels and computed table of one operator, and the
// names of all operators.
std::string dump(std::string_view qualified_name);
std::vector<std::string> list_ops();

}  // namespace anatomy::dispatch

// Inside an operator's function: a typed handle looked up once and cached.
//   Tensor add(...) { ANATOMY_OP(op, "aten::add.Tensor", Tensor(const Tensor&, ...)); return op.call(...); }
#define ANATOMY_OP(var, qualified_name, ...)                               \
  static const ::anatomy::dispatch::TypedOperatorHandle<__VA_ARGS__> var = \
      ::anatomy::dispatch::Dispatcher::singleton().find_or_throw(qualified_name).typed<__VA_ARGS__>()
