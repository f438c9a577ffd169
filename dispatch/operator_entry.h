// OperatorEntry: one operator's schema, its registered kernels, and its computed dispatch table.
//
// Note [Computing the dispatch table]
// For each dispatch key the table holds, in order of preference:
//   1. a kernel registered for that key (for an autograd key, also one registered for the
//      Autograd alias, which stands for every autograd key);
//   2. for a backend key, the CompositeExplicitAutograd kernel (written with other ops, serves
//      every backend, but is not differentiated through: autograd needs its own formula);
//   3. for a backend key, and for an autograd key whose backend has no kernel of its own, the
//      CompositeImplicitAutograd kernel (written with other ops; autograd differentiates
//      through the ops it calls);
//   4. the key's fallback (a boxed kernel shared by every operator, or a fallthrough);
//   5. a "missing" entry that raises NotImplementedError listing the keys that have kernels.
// Keys whose entry is a fallthrough are cleared from `non_fallthrough_`, the mask applied to
// every call's key set, so passing through them costs nothing. The table has one extra slot in
// front, for the empty key set, so the hot path indexes it without a branch.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <typeindex>
#include <vector>

#include "anatomy/dispatch/kernel_function.h"
#include "anatomy/dispatch/schema.h"

namespace anatomy::dispatch {

// Where a kernel can be registered: every DispatchKey, plus the alias keys that fill several
// table entries (Note [Computing the dispatch table]).
#define ANATOMY_FORALL_ALIAS_KEYS(_) \
  _(CompositeImplicitAutograd)       \
  _(CompositeExplicitAutograd)       \
  _(Autograd)

enum class RegKey : uint8_t {
#define ANATOMY_REGKEY_DK(k, kind) k,
  ANATOMY_FORALL_DISPATCH_KEYS(ANATOMY_REGKEY_DK)
#undef ANATOMY_REGKEY_DK
#define ANATOMY_REGKEY_ALIAS(k) k,
      ANATOMY_FORALL_ALIAS_KEYS(ANATOMY_REGKEY_ALIAS)
#undef ANATOMY_REGKEY_ALIAS
          NumRegKeys,
};
inline constexpr int kNumRegKeys = static_cast<int>(RegKey::NumRegKeys);
std::string_view to_string(RegKey k);
inline constexpr RegKey reg_key(DispatchKey k) { return static_cast<RegKey>(k); }

struct RegisteredKernel {
  KernelFunction kernel;
  std::string name;  // for dumps and traces: the C++ function, or where it was registered
  std::string file;  // the source file whose registration block registered it (traces with files)
  std::vector<ArgType> arg_types, return_types;  // the C++ signature in schema terms
  bool has_signature = false;                    // false for boxed kernels
  // The exact C++ function type (without a leading DispatchKeySet): every typed kernel and
  // typed handle of one operator must agree on it, since calls cast the kernel pointer to it.
  std::optional<std::type_index> cpp_signature;
};

class OperatorEntry {
 public:
  explicit OperatorEntry(std::string qualified_name) : name_(std::move(qualified_name)) { clear_table(); }

  const std::string& name() const { return name_; }
  bool has_schema() const { return schema_.has_value(); }
  const Schema& schema() const;
  // Where the schema was defined ("binary.cpp:12"); empty until it is.
  const std::string& defined_at() const { return defined_at_; }

  // The kernel that handles `ks` (already masked). ks empty gives the "no keys" entry.
  const KernelFunction& lookup(DispatchKeySet ks) const {
    return table_[1 + static_cast<int>(63 - std::countl_zero(ks.raw()))];
  }
  DispatchKeySet non_fallthrough() const { return non_fallthrough_; }
  // The C++ function type of the operator's typed kernels, once one is registered.
  const std::optional<std::type_index>& cpp_signature() const { return cpp_signature_; }
  const std::string& kernel_name(DispatchKey k) const { return table_names_[1 + static_cast<int>(k)]; }
  // The file that registered that kernel; empty for a missing or fallthrough entry.
  const std::string& kernel_file(DispatchKey k) const { return table_files_[1 + static_cast<int>(k)]; }
  const std::optional<RegisteredKernel>& registered(RegKey k) const { return kernels_[static_cast<int>(k)]; }
  // The keys that have a non-fallback kernel in the table, for error messages and dumps.
  std::vector<DispatchKey> keys_with_kernels() const;

  // Called by the Dispatcher with its registration lock held.
  void set_schema(Schema s, std::string where = {});
  void set_kernel(RegKey k, RegisteredKernel kernel);
  void recompute(const std::array<std::optional<RegisteredKernel>, kNumDispatchKeys>& fallbacks);

 private:
  void clear_table();
  void check_signature(RegKey k, const RegisteredKernel& kernel) const;

  std::string name_;
  std::optional<Schema> schema_;
  std::string defined_at_;
  std::array<std::optional<RegisteredKernel>, kNumRegKeys> kernels_;
  std::array<KernelFunction, kNumDispatchKeys + 1> table_;
  std::array<std::string, kNumDispatchKeys + 1> table_names_;
  std::array<std::string, kNumDispatchKeys + 1> table_files_;
  std::array<bool, kNumDispatchKeys + 1> from_fallback_{};
  DispatchKeySet non_fallthrough_;
  std::optional<std::type_index> cpp_signature_;
};

}  // namespace anatomy::dispatch
