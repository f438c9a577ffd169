// The thread's current operator name and its listeners (see current_op.h).
#include "anatomy/dispatch/current_op.h"

#include "anatomy/core/error.h"
#include "anatomy/dispatch/trace.h"

namespace anatomy::dispatch {
namespace {
thread_local const char* t_current_op = nullptr;
// The dispatch depth at which the dispatcher set t_current_op; -1 when it did not.
thread_local int t_op_depth = -1;
}  // namespace

const char* current_op_name() { return t_current_op; }

CurrentOpScope::CurrentOpScope(const char* name) : previous_(t_current_op) {
  if (t_current_op == nullptr) t_current_op = name;
}

CurrentOpScope::~CurrentOpScope() { t_current_op = previous_; }

void add_op_name_listener() {
  uint32_t before = detail::g_trace_state.fetch_add(detail::kOpNameListener, std::memory_order_relaxed);
  if (before >= ~(detail::kOpNameListener - 1)) {  // the count would wrap
    detail::g_trace_state.fetch_sub(detail::kOpNameListener, std::memory_order_relaxed);
    ANATOMY_INTERNAL_ASSERT(false, "more than 255 op-name listeners");
  }
}

void remove_op_name_listener() { detail::g_trace_state.fetch_sub(detail::kOpNameListener, std::memory_order_relaxed); }

namespace detail {

void enter_dispatched_op(const char* name, int depth) {
  if (t_current_op != nullptr) return;  // the outermost operator keeps the name
  if ((g_trace_state.load(std::memory_order_relaxed) & ~(kOpNameListener - 1)) == 0) return;
  t_current_op = name;
  t_op_depth = depth;
}

void leave_dispatched_op(int depth) {
  if (t_op_depth != depth) return;
  t_current_op = nullptr;
  t_op_depth = -1;
}

}  // namespace detail
}  // namespace anatomy::dispatch
