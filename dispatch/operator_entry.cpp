// Table computation and signature checks for one operator (Note [Computing the dispatch table]).
#include "anatomy/dispatch/operator_entry.h"

#include <fmt/format.h>

#include "anatomy/core/error.h"

namespace anatomy::dispatch {

std::string_view to_string(RegKey k) {
  switch (k) {
#define ANATOMY_REGKEY_NAME_DK(key, kind) \
  case RegKey::key:                       \
    return #key;
    ANATOMY_FORALL_DISPATCH_KEYS(ANATOMY_REGKEY_NAME_DK)
#undef ANATOMY_REGKEY_NAME_DK
#define ANATOMY_REGKEY_NAME_ALIAS(key) \
  case RegKey::key:                    \
    return #key;
    ANATOMY_FORALL_ALIAS_KEYS(ANATOMY_REGKEY_NAME_ALIAS)
#undef ANATOMY_REGKEY_NAME_ALIAS
    default:
      return "?";
  }
}

const Schema& OperatorEntry::schema() const {
  ANATOMY_CHECK(schema_.has_value(), NotImplementedError,
                "{}: kernels are registered but the operator was never defined with a schema (ANATOMY_LIBRARY def)",
                name_);
  return *schema_;
}

namespace {
std::string types_to_string(const std::vector<ArgType>& ts) {
  std::string s;
  for (size_t i = 0; i < ts.size(); ++i) s += (i ? ", " : "") + std::string(arg_type_name(ts[i]));
  return s;
}
}  // namespace

void OperatorEntry::check_signature(RegKey k, const RegisteredKernel& kernel) const {
  if (!schema_ || !kernel.has_signature) return;
  std::vector<ArgType> want_args, want_returns;
  for (const auto& a : schema_->arguments) want_args.push_back(a.type);
  for (const auto& r : schema_->returns) want_returns.push_back(r.type);
  ANATOMY_CHECK(kernel.arg_types == want_args && kernel.return_types == want_returns, TypeError,
                "{}: the {} kernel '{}' has signature ({}) -> ({}) but the schema '{}' needs ({}) -> ({})", name_,
                to_string(k), kernel.name, types_to_string(kernel.arg_types), types_to_string(kernel.return_types),
                schema_->to_string(), types_to_string(want_args), types_to_string(want_returns));
}

void OperatorEntry::set_schema(Schema s, std::string where) {
  ANATOMY_CHECK(!schema_, ValueError, "{}: defined twice (first as '{}')", name_, schema_->to_string());
  schema_ = std::move(s);
  try {
    for (int k = 0; k < kNumRegKeys; ++k) {
      if (kernels_[k]) check_signature(static_cast<RegKey>(k), *kernels_[k]);
    }
  } catch (...) {
    schema_.reset();  // a refused definition leaves the operator undefined
    throw;
  }
  defined_at_ = std::move(where);
}

void OperatorEntry::set_kernel(RegKey k, RegisteredKernel kernel) {
  auto& slot = kernels_[static_cast<int>(k)];
  ANATOMY_CHECK(!slot, ValueError, "{}: a kernel for {} is already registered ('{}'); cannot add '{}'", name_,
                to_string(k), slot->name, kernel.name);
  check_signature(k, kernel);
  if (kernel.cpp_signature) {
    ANATOMY_CHECK(!cpp_signature_ || *cpp_signature_ == *kernel.cpp_signature, TypeError,
                  "{}: the {} kernel '{}' has C++ type {} but the operator's other kernels have {}; parameter types "
                  "must match exactly (const Tensor& vs Tensor, double vs const double&, ...)",
                  name_, to_string(k), kernel.name, kernel.cpp_signature->name(), cpp_signature_->name());
    cpp_signature_ = kernel.cpp_signature;
  }
  slot = std::move(kernel);
}

void OperatorEntry::clear_table() {
  for (auto& e : table_) e = KernelFunction();
  for (auto& n : table_names_) n = "missing";
  for (auto& f : table_files_) f.clear();
  from_fallback_.fill(false);
  non_fallthrough_ = DispatchKeySet::all();
}

void OperatorEntry::recompute(const std::array<std::optional<RegisteredKernel>, kNumDispatchKeys>& fallbacks) {
  clear_table();
  const auto& implicit = kernels_[static_cast<int>(RegKey::CompositeImplicitAutograd)];
  const auto& explicit_ = kernels_[static_cast<int>(RegKey::CompositeExplicitAutograd)];
  const auto& autograd_alias = kernels_[static_cast<int>(RegKey::Autograd)];
  DispatchKeySet mask;
  for (int i = 0; i < kNumDispatchKeys; ++i) {
    auto key = static_cast<DispatchKey>(i);
    const RegisteredKernel* chosen = nullptr;
    std::string label;
    if (kernels_[i]) {
      chosen = &*kernels_[i];
    } else if (is_autograd_key(key) && autograd_alias) {
      chosen = &*autograd_alias;
      label = " [Autograd]";
    } else if (is_backend_key(key) && explicit_) {
      chosen = &*explicit_;
      label = " [CompositeExplicitAutograd]";
    } else if (implicit &&
               (is_backend_key(key) ||
                (is_autograd_key(key) && !kernels_[static_cast<int>(backend_of_autograd_key(key))] && !explicit_))) {
      chosen = &*implicit;
      label = " [CompositeImplicitAutograd]";
    } else if (fallbacks[i]) {
      chosen = &*fallbacks[i];
      label = " [fallback]";
    }
    if (chosen) {
      table_[1 + i] = chosen->kernel;
      table_names_[1 + i] = chosen->kernel.is_fallthrough() ? "fallthrough" + label : chosen->name + label;
      if (!chosen->kernel.is_fallthrough()) table_files_[1 + i] = chosen->file;
      from_fallback_[1 + i] = fallbacks[i].has_value() && chosen == &*fallbacks[i];
    }
    if (!table_[1 + i].is_fallthrough()) mask = mask.add(key);
  }
  non_fallthrough_ = mask;
}

std::vector<DispatchKey> OperatorEntry::keys_with_kernels() const {
  std::vector<DispatchKey> keys;
  for (int i = 0; i < kNumDispatchKeys; ++i) {
    if (!table_[1 + i].is_missing() && !table_[1 + i].is_fallthrough() && !from_fallback_[1 + i]) {
      keys.push_back(static_cast<DispatchKey>(i));
    }
  }
  return keys;
}

}  // namespace anatomy::dispatch
