// Out-of-line formatting for internal assertion failures.
#include "anatomy/core/error.h"

namespace anatomy::detail {

void throw_internal(const char* cond, const char* file, int line, const std::string& msg) {
  throw InternalError(
      fmt::format("internal assert failed: {} at {}:{}{}{} (this is a bug in anatomy; please report it)", cond, file,
                  line, msg.empty() ? "" : ": ", msg));
}

}  // namespace anatomy::detail
