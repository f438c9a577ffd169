// Renaming a composite's out-of-memory errors (see composite_errors.h).
#include "anatomy/dispatch/ops/composite_errors.h"

#include <string_view>

namespace anatomy {

void throw_oom_as(const char* op, const OutOfMemoryError& e) {
  std::string_view msg = e.what();
  // An operator's name has no spaces ("empty: ..."); an allocator's does ("cpu allocator: ...").
  const size_t colon = msg.find(": ");
  if (colon != std::string_view::npos && msg.substr(0, colon).find(' ') == std::string_view::npos) {
    msg.remove_prefix(colon + 2);
  }
  throw OutOfMemoryError(fmt::format("{}: {}", op, msg));
}

}  // namespace anatomy
