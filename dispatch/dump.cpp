// dispatch::dump: what is registered for an operator and what its computed table says.
#include <fmt/format.h>

#include "anatomy/dispatch/dispatcher.h"

namespace anatomy::dispatch {

std::string dump(std::string_view qualified_name) {
  OperatorHandle op = Dispatcher::singleton().find_or_throw(qualified_name);
  const OperatorEntry& e = op.entry();
  std::string out = fmt::format("operator: {}\nschema:   {}\n", op.name(), op.schema().to_string());
  out += "registered kernels:\n";
  bool any = false;
  for (int k = 0; k < kNumRegKeys; ++k) {
    const auto& r = e.registered(static_cast<RegKey>(k));
    if (!r) continue;
    any = true;
    out += fmt::format("  {:<26} {}\n", to_string(static_cast<RegKey>(k)), r->name);
  }
  if (!any) out += "  (none)\n";
  out += "computed table (highest priority first):\n";
  for (int k = kNumDispatchKeys - 1; k >= 0; --k) {
    auto key = static_cast<DispatchKey>(k);
    out += fmt::format("  {:<26} {}\n", to_string(key), e.kernel_name(key));
  }
  return out;
}

}  // namespace anatomy::dispatch
