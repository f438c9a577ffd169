// Registration: ANATOMY_LIBRARY defines operators, ANATOMY_LIBRARY_IMPL registers kernels for
// one key, from any translation unit (anatomy's own or a user's program).
//
//   ANATOMY_LIBRARY(myops, m) {
//     m.def("scale(Tensor self, float factor) -> Tensor");
//   }
//   ANATOMY_LIBRARY_IMPL(myops, CPU, m) {
//     m.impl("scale", ANATOMY_KERNEL(scale_cpu));
//   }
//   ANATOMY_LIBRARY_IMPL(_, Tracer, m) {      // a fallback for every operator
//     m.fallback(...);
//   }
//
// The key of an IMPL block is a DispatchKey (CPU, CUDA, Meta, PrivateUse1, BackendSelect,
// AutogradCPU, ...) or an alias: CompositeImplicitAutograd, CompositeExplicitAutograd,
// Autograd. A kernel's C++ signature is checked against the schema when both are known.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <typeindex>

#include "anatomy/dispatch/dispatcher.h"

namespace anatomy::dispatch {

// A typed function with the name dumps and traces show. ANATOMY_KERNEL(fn) makes one.
template <typename F>
struct NamedKernel {
  F* fn;
  const char* name;
};
template <typename F>
NamedKernel<F> named_kernel(F* fn, const char* name) {
  return {fn, name};
}
#define ANATOMY_KERNEL(fn) ::anatomy::dispatch::named_kernel(&(fn), #fn)

namespace detail {
template <typename Sig>
struct strip_key_set {
  using type = Sig;
};
template <typename Ret, typename... Args>
struct strip_key_set<Ret(DispatchKeySet, Args...)> {
  using type = Ret(Args...);
};

template <typename F>
RegisteredKernel make_registered(F* fn, std::string name) {
  using Sig = typename strip_key_set<F>::type;
  RegisteredKernel r;
  r.kernel = KernelFunction::from_unboxed(fn);
  r.name = std::move(name);
  r.arg_types = signature_traits<Sig>::arg_types();
  r.return_types = signature_traits<Sig>::return_types();
  r.has_signature = true;
  r.cpp_signature = std::type_index(typeid(Sig));
  return r;
}
}  // namespace detail

// `file` (a __FILE__) relative to the source tree: "backends/cpu/binary_cpu.cpp". A file outside
// it (a user's program) stays as the compiler named it.
std::string source_path(const char* file);

class Library {
 public:
  enum class Kind { Def, Impl };
  Library(Kind kind, std::string ns, std::optional<RegKey> key, const char* file, int line);

  // Defines an operator from its schema string (parsed and checked now).
  Library& def(std::string_view schema);
  // Defines an operator and registers `fn` as its CompositeImplicitAutograd kernel.
  template <typename F>
  Library& def(std::string_view schema, NamedKernel<F> k) {
    OperatorHandle h = def_handle(schema);
    RegisteredKernel r = detail::make_registered(k.fn, k.name);
    r.file = source_path(file_);
    Dispatcher::singleton().impl(h.name(), RegKey::CompositeImplicitAutograd, std::move(r), where());
    return *this;
  }

  // Registers a typed kernel for this block's key (or `key` for a Def block).
  template <typename F>
  Library& impl(std::string_view op_name, NamedKernel<F> k) {
    return impl_registered(op_name, detail::make_registered(k.fn, k.name));
  }
  template <typename F>
  Library& impl(std::string_view op_name, F* fn) {
    return impl_registered(op_name, detail::make_registered(fn, where()));
  }
  // Registers a boxed kernel (one function for any signature) for one operator.
  Library& impl_boxed(std::string_view op_name, BoxedKernelFn fn, std::string name, void* ctx = nullptr);
  // Makes this block's key a fallthrough for one operator: calls skip the key at no cost.
  Library& impl_fallthrough(std::string_view op_name);
  // Registers a boxed fallback for every operator, for this block's (non-alias) key.
  Library& fallback(BoxedKernelFn fn, std::string name, void* ctx = nullptr);
  // Makes this block's key a fallthrough for every operator that has no kernel for it.
  Library& fallback_fallthrough();

  const std::string& ns() const { return ns_; }

 private:
  OperatorHandle def_handle(std::string_view schema);
  Library& impl_registered(std::string_view op_name, RegisteredKernel k);
  std::string qualify(std::string_view op_name) const;
  std::string where() const;

  Kind kind_;
  std::string ns_;
  std::optional<RegKey> key_;
  const char* file_;
  int line_;
};

// Runs a registration function at load time.
class LibraryInit {
 public:
  using InitFn = void (*)(Library&);
  LibraryInit(InitFn fn, Library::Kind kind, const char* ns, std::optional<RegKey> key, const char* file, int line) {
    Library lib(kind, ns, key, file, line);
    fn(lib);
  }
};

}  // namespace anatomy::dispatch

#define ANATOMY_CONCAT_INNER(a, b) a##b
#define ANATOMY_CONCAT(a, b) ANATOMY_CONCAT_INNER(a, b)
#define ANATOMY_UID(prefix) ANATOMY_CONCAT(prefix, __COUNTER__)

#define ANATOMY_LIBRARY(ns, m) ANATOMY_LIBRARY_IMPL_HELPER_(ns, m, ANATOMY_UID(anatomy_library_def_), Def, std::nullopt)
#define ANATOMY_LIBRARY_IMPL(ns, key, m) \
  ANATOMY_LIBRARY_IMPL_HELPER_(ns, m, ANATOMY_UID(anatomy_library_impl_), Impl, ::anatomy::dispatch::RegKey::key)

#define ANATOMY_LIBRARY_IMPL_HELPER_(ns, m, uid, kind, key) ANATOMY_LIBRARY_IMPL_HELPER2_(ns, m, uid, kind, key)
#define ANATOMY_LIBRARY_IMPL_HELPER2_(ns, m, uid, kind, key)                                              \
  static void ANATOMY_CONCAT(uid, _fn)(::anatomy::dispatch::Library&);                                    \
  static const ::anatomy::dispatch::LibraryInit ANATOMY_CONCAT(uid, _init)(                               \
      &ANATOMY_CONCAT(uid, _fn), ::anatomy::dispatch::Library::Kind::kind, #ns, key, __FILE__, __LINE__); \
  static void ANATOMY_CONCAT(uid, _fn)(::anatomy::dispatch::Library & m)
