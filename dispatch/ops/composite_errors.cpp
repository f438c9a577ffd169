// Renaming a composite's errors after it (see composite_errors.h).
#include "anatomy/dispatch/ops/composite_errors.h"

#include <string_view>

namespace anatomy {

std::string renamed_message(const char* op, std::string_view msg) {
  // An operator's name has no spaces ("empty: ..."); an allocator's does ("cpu allocator: ...").
  const size_t colon = msg.find(": ");
  if (colon != std::string_view::npos && msg.substr(0, colon).find(' ') == std::string_view::npos) {
    msg.remove_prefix(colon + 2);
  }
  return fmt::format("{}: {}", op, msg);
}

void throw_oom_as(const char* op, const OutOfMemoryError& e) { throw OutOfMemoryError(renamed_message(op, e.what())); }

}  // namespace anatomy
