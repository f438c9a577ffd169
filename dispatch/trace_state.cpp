// The dispatcher's one watch word (trace.h): the trace switch, live TraceCaptures and op-name
// listeners. Defined apart from the trace itself so that the caching allocator's memory history
// (through current_op.cpp) links without the dispatcher: the allocator's ThreadSanitizer test
// builds alloc/ with only this, current_op.cpp and a few core files (tests/CMakeLists.txt).
#include <cstdlib>
#include <cstring>

#include "anatomy/dispatch/trace.h"

namespace anatomy::dispatch::detail {

std::atomic<uint32_t> g_trace_state{[] {
  const char* v = std::getenv("ANATOMY_DISPATCH_TRACE");
  return (v != nullptr && std::strcmp(v, "") != 0 && std::strcmp(v, "0") != 0) ? 1u : 0u;
}()};

}  // namespace anatomy::dispatch::detail
