// The operator this thread is running, for code that wants to say which operator asked for
// something: the caching allocator's memory history names it in each event (through
// core/op_name_hook.h, which current_op.cpp installs: alloc does not include dispatch).
//
// The dispatcher names the outermost operator dispatched on the thread (the one the user called:
// an aten::add whose output comes from aten::empty is attributed to aten::add) only while at
// least one listener is registered. Listeners share the dispatch trace's switch (trace.h), so
// with none the dispatcher pays nothing beyond the one relaxed load it already does for the
// trace; with one, each call takes the trace's slow path (see Note [Op names on the slow path]
// in trace.cpp).
#pragma once

#include <cstdint>

namespace anatomy::dispatch {

// The outermost operator being dispatched on this thread ("aten::add.Tensor"), or the name of
// the innermost-begun CurrentOpScope outside any; nullptr when neither is active or no listener
// is registered. The string lives as long as the process.
const char* current_op_name();

// While alive, names `name` as the current operator when none is (code outside the dispatcher
// that wants its allocations attributed; tests). `name` must outlive every use of it: a string
// literal or an operator's name.
class CurrentOpScope {
 public:
  explicit CurrentOpScope(const char* name);
  ~CurrentOpScope();
  CurrentOpScope(const CurrentOpScope&) = delete;
  CurrentOpScope& operator=(const CurrentOpScope&) = delete;

 private:
  const char* previous_;
};

// Counted: the dispatcher names operators while any listener is registered.
void add_op_name_listener();
void remove_op_name_listener();

// Functions the dispatcher calls around every operator call (nested calls included, redispatches
// to a lower key not): push(name) as it starts, pop() as it ends. The CUDA backend's NVTX op
// ranges use them (backends/cuda/runtime/nvtx.cpp). Setting them registers an op-name listener, so every
// call takes the dispatcher's slow path; set_op_range_hooks(nullptr, nullptr) removes them.
using OpRangePush = void (*)(const char* name);
using OpRangePop = void (*)();
void set_op_range_hooks(OpRangePush push, OpRangePop pop);

namespace detail {
// The hooks' side of the slow path: push for a call (not a redispatch) that starts; whether it
// pushed, so that its end pops.
bool push_op_range(const char* name);
void pop_op_range();

// One listener in the dispatch trace's state word (trace.h): bits 24 to 31 count them.
inline constexpr uint32_t kOpNameListener = 1u << 24;
// The dispatcher's slow path (TraceScope) around each call, at nesting `depth`.
void enter_dispatched_op(const char* name, int depth);
void leave_dispatched_op(int depth);
}  // namespace detail

}  // namespace anatomy::dispatch
