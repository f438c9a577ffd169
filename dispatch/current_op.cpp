// The thread's current operator name and its listeners (see current_op.h).
#include "anatomy/dispatch/current_op.h"

#include <atomic>
#include <mutex>

#include "anatomy/core/error.h"
#include "anatomy/core/op_name_hook.h"
#include "anatomy/dispatch/trace.h"

namespace anatomy::dispatch {
namespace {
thread_local const char* t_current_op = nullptr;
// The dispatch depth at which the dispatcher set t_current_op; -1 when it did not.
thread_local int t_op_depth = -1;
}  // namespace

const char* current_op_name() { return t_current_op; }

namespace {
// Code below the dispatcher (the caching allocator's memory history) reaches the name through
// core's hooks (Note [Installing the op-name hooks] in core/op_name_hook.h).
[[maybe_unused]] const bool g_op_name_hooks_installed = [] {
  op_name_hook::install({&current_op_name, &add_op_name_listener, &remove_op_name_listener});
  return true;
}();
}  // namespace

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

namespace {
std::atomic<OpRangePush> g_push{nullptr};
std::atomic<OpRangePop> g_pop{nullptr};
std::mutex g_hooks_mutex;
}  // namespace

void set_op_range_hooks(OpRangePush push, OpRangePop pop) {
  std::lock_guard<std::mutex> g(g_hooks_mutex);
  const bool had = g_push.load() != nullptr, has = push != nullptr && pop != nullptr;
  g_pop.store(has ? pop : nullptr);
  g_push.store(has ? push : nullptr);
  if (has && !had) add_op_name_listener();
  if (!has && had) remove_op_name_listener();
}

namespace detail {

bool push_op_range(const char* name) {
  const OpRangePush push = g_push.load(std::memory_order_acquire);
  if (push == nullptr) return false;
  push(name);
  return true;
}

void pop_op_range() {
  // Hooks removed while this call ran: its range is left for the tool to close.
  if (const OpRangePop pop = g_pop.load(std::memory_order_acquire)) pop();
}

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
