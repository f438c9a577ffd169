// The operator registry: definitions, kernel and fallback registration, boxed calls.
#include "anatomy/dispatch/dispatcher.h"

#include <algorithm>
#include <stdexcept>

namespace anatomy::dispatch {

Dispatcher& Dispatcher::singleton() {
  // Leaked on purpose: kernels may be called from other static destructors.
  static Dispatcher* d = new Dispatcher();
  return *d;
}

Dispatcher::Dispatcher() = default;

OperatorHandle Dispatcher::find_or_create(std::string_view qualified_name) {
  std::lock_guard<std::mutex> g(mutex_);
  auto it = ops_.find(std::string(qualified_name));
  if (it == ops_.end()) {
    auto entry = std::make_unique<OperatorEntry>(std::string(qualified_name));
    entry->recompute(fallbacks_);
    it = ops_.emplace(std::string(qualified_name), std::move(entry)).first;
  }
  return OperatorHandle(it->second.get());
}

std::optional<OperatorHandle> Dispatcher::find(std::string_view qualified_name) const {
  std::lock_guard<std::mutex> g(mutex_);
  auto it = ops_.find(std::string(qualified_name));
  if (it == ops_.end() || !it->second->has_schema()) return std::nullopt;
  return OperatorHandle(it->second.get());
}

namespace {
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}
}  // namespace

OperatorHandle Dispatcher::find_or_throw(std::string_view qualified_name) const {
  if (auto h = find(qualified_name)) return *h;
  // Suggest operators whose name (without the overload) starts the same or is a typo away.
  auto base_of = [](std::string_view n) { return n.substr(0, n.find('.')); };
  std::string_view base = base_of(qualified_name);
  std::vector<std::string> close;
  for (const auto& n : list_ops()) {
    if (n.rfind(base, 0) == 0 || edit_distance(base_of(n), base) <= 2) close.push_back(n);
  }
  ANATOMY_THROW(ValueError, "no operator named '{}'{}{}", qualified_name,
                close.empty() ? "" : "; did you mean: ", fmt::join(close, ", "));
}

OperatorHandle Dispatcher::def(std::string_view ns, std::string_view schema_text, std::string_view where) {
  Schema schema;
  try {
    schema = parse_schema(schema_text);
  } catch (const std::invalid_argument& e) {
    ANATOMY_THROW(ValueError, "def at {}: {}", where, e.what());
  }
  std::string qualified = fmt::format("{}::{}", ns, schema.full_name());
  OperatorHandle h = find_or_create(qualified);
  std::lock_guard<std::mutex> g(mutex_);
  try {
    h.entry().set_schema(std::move(schema), std::string(where));
  } catch (const TypeError& e) {
    ANATOMY_THROW(TypeError, "def at {}: {}", where, e.what());
  }
  h.entry().recompute(fallbacks_);
  return h;
}

void Dispatcher::impl(std::string_view qualified_name, RegKey key, RegisteredKernel kernel, std::string_view where) {
  OperatorHandle h = find_or_create(qualified_name);
  std::lock_guard<std::mutex> g(mutex_);
  try {
    h.entry().set_kernel(key, std::move(kernel));
  } catch (const TypeError& e) {
    ANATOMY_THROW(TypeError, "impl at {}: {}", where, e.what());
  } catch (const Error& e) {
    ANATOMY_THROW(ValueError, "impl at {}: {}", where, e.what());
  }
  h.entry().recompute(fallbacks_);
}

void Dispatcher::fallback(DispatchKey key, RegisteredKernel kernel, std::string_view where) {
  std::lock_guard<std::mutex> g(mutex_);
  auto& slot = fallbacks_[static_cast<int>(key)];
  ANATOMY_CHECK(!slot, ValueError, "fallback at {}: {} already has a fallback ('{}')", where, to_string(key),
                slot->name);
  slot = std::move(kernel);
  for (auto& [name, entry] : ops_) entry->recompute(fallbacks_);
}

std::vector<std::string> Dispatcher::list_ops() const {
  std::lock_guard<std::mutex> g(mutex_);
  std::vector<std::string> names;
  for (const auto& [name, entry] : ops_) {
    if (entry->has_schema()) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> list_ops() { return Dispatcher::singleton().list_ops(); }

// ---- boxed calls ----

void OperatorHandle::call_boxed(Stack& stack) const {
  size_t nargs = schema().arguments.size();
  ANATOMY_CHECK(stack.size() >= nargs, ValueError, "{}: call_boxed needs {} arguments on the stack, found {}", name(),
                nargs, stack.size());
  DispatchKeySet from_args;
  for (size_t i = stack.size() - nargs; i < stack.size(); ++i) {
    const IValue& v = stack[i];
    if (v.is<Tensor>()) from_args = from_args | detail::arg_keys(v.get<Tensor>());
    else if (v.is<std::vector<Tensor>>()) from_args = from_args | detail::arg_keys(v.get<std::vector<Tensor>>());
  }
  dispatch_boxed(detail::call_key_set(from_args, entry_->non_fallthrough()), stack, /*is_redispatch=*/false);
}

void OperatorHandle::dispatch_boxed(DispatchKeySet ks, Stack& stack, bool is_redispatch) const {
  ks = ks & entry_->non_fallthrough();
  const KernelFunction& k = entry_->lookup(ks);
  if (k.is_missing()) throw_missing_kernel(*this, ks);
  if (ANATOMY_UNLIKELY(trace_enabled())) {
    TraceScope scope(*this, ks, is_redispatch);
    k.boxed(*this, ks, stack, k.ctx);
    return;
  }
  k.boxed(*this, ks, stack, k.ctx);
}

void throw_missing_kernel(const OperatorHandle& op, DispatchKeySet ks) {
  std::vector<std::string> have;
  for (DispatchKey k : op.entry().keys_with_kernels()) have.emplace_back(to_string(k));
  if (ks.empty()) {
    ANATOMY_THROW(NotImplementedError,
                  "{}: the call has no dispatch keys (no tensor arguments and no BackendSelect kernel); kernels "
                  "exist for: {}",
                  op.name(), have.empty() ? std::string("none") : fmt::format("{}", fmt::join(have, ", ")));
  }
  ANATOMY_THROW(NotImplementedError,
                "{}: no kernel for {} (call key set {}); kernels exist for: {}. Register one with "
                "ANATOMY_LIBRARY_IMPL or see dispatch::dump(\"{}\")",
                op.name(), to_string(ks.highest()), to_string(ks),
                have.empty() ? std::string("none") : fmt::format("{}", fmt::join(have, ", ")), op.name());
}

void check_cpp_signature(const OperatorHandle& op, const std::type_info& sig) {
  const auto& have = op.entry().cpp_signature();
  ANATOMY_CHECK(!have || *have == std::type_index(sig), TypeError,
                "{}: typed() asked for C++ type {} but the operator's kernels have {}; parameter types must match "
                "exactly",
                op.name(), sig.name(), have->name());
}

void check_typed_signature(const OperatorHandle& op, const std::vector<ArgType>& args,
                           const std::vector<ArgType>& returns, const char* what) {
  const Schema& s = op.schema();
  std::vector<ArgType> want_args, want_returns;
  for (const auto& a : s.arguments) want_args.push_back(a.type);
  for (const auto& r : s.returns) want_returns.push_back(r.type);
  auto join = [](const std::vector<ArgType>& ts) {
    std::string out;
    for (size_t i = 0; i < ts.size(); ++i) out += (i ? ", " : "") + std::string(arg_type_name(ts[i]));
    return out;
  };
  ANATOMY_CHECK(args == want_args && returns == want_returns, TypeError,
                "{}: {} asked for ({}) -> ({}) but the schema '{}' is ({}) -> ({})", op.name(), what, join(args),
                join(returns), s.to_string(), join(want_args), join(want_returns));
}

}  // namespace anatomy::dispatch
