// Library: the object an ANATOMY_LIBRARY block registers through.
#include "anatomy/dispatch/library.h"

#include <cstring>

namespace anatomy::dispatch {

Library::Library(Kind kind, std::string ns, std::optional<RegKey> key, const char* file, int line)
    : kind_(kind), ns_(std::move(ns)), key_(key), file_(file), line_(line) {}

// __FILE__ is absolute, or relative to the build folder when ccache rewrites paths under its base
// folder ("../backends/cpu/binary_cpu.cpp"); traces print it relative to the source tree.
std::string source_path(const char* file) {
  std::string_view f(file);
  while (f.starts_with("../") || f.starts_with("./")) f.remove_prefix(f[1] == '.' ? 3 : 2);
  constexpr std::string_view root = ANATOMY_SOURCE_ROOT "/";
  if (f.starts_with(root)) f.remove_prefix(root.size());
  return std::string(f);
}

std::string Library::where() const {
  const char* base = std::strrchr(file_, '/');
  return fmt::format("{}:{}", base ? base + 1 : file_, line_);
}

std::string Library::qualify(std::string_view op_name) const {
  if (op_name.find("::") != std::string_view::npos) return std::string(op_name);
  return fmt::format("{}::{}", ns_, op_name);
}

OperatorHandle Library::def_handle(std::string_view schema) {
  ANATOMY_CHECK(kind_ == Kind::Def, ValueError,
                "def at {}: operators are defined in ANATOMY_LIBRARY blocks, not IMPL blocks", where());
  return Dispatcher::singleton().def(ns_, schema, where());
}

Library& Library::def(std::string_view schema) {
  def_handle(schema);
  return *this;
}

Library& Library::impl_registered(std::string_view op_name, RegisteredKernel k) {
  k.file = source_path(file_);
  ANATOMY_CHECK(key_.has_value(), ValueError,
                "impl at {}: a kernel needs a key; register it in an ANATOMY_LIBRARY_IMPL(ns, Key, m) block", where());
  Dispatcher::singleton().impl(qualify(op_name), *key_, std::move(k), where());
  return *this;
}

Library& Library::impl_boxed(std::string_view op_name, BoxedKernelFn fn, std::string name, void* ctx) {
  RegisteredKernel r;
  r.kernel = KernelFunction::from_boxed(fn, ctx);
  r.name = std::move(name);
  return impl_registered(op_name, std::move(r));
}

Library& Library::impl_fallthrough(std::string_view op_name) {
  RegisteredKernel r;
  r.kernel = KernelFunction::fallthrough();
  r.name = "fallthrough";
  return impl_registered(op_name, std::move(r));
}

Library& Library::fallback(BoxedKernelFn fn, std::string name, void* ctx) {
  ANATOMY_CHECK(key_.has_value() && static_cast<int>(*key_) < kNumDispatchKeys, ValueError,
                "fallback at {}: a fallback is registered for one dispatch key, not an alias", where());
  RegisteredKernel r;
  r.kernel = KernelFunction::from_boxed(fn, ctx);
  r.name = std::move(name);
  r.file = source_path(file_);
  Dispatcher::singleton().fallback(static_cast<DispatchKey>(*key_), std::move(r), where());
  return *this;
}

Library& Library::fallback_fallthrough() {
  ANATOMY_CHECK(key_.has_value() && static_cast<int>(*key_) < kNumDispatchKeys, ValueError,
                "fallback at {}: a fallback is registered for one dispatch key, not an alias", where());
  RegisteredKernel r;
  r.kernel = KernelFunction::fallthrough();
  r.name = "fallthrough";
  r.file = source_path(file_);
  Dispatcher::singleton().fallback(static_cast<DispatchKey>(*key_), std::move(r), where());
  return *this;
}

}  // namespace anatomy::dispatch
