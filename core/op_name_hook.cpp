// The op-name hooks and the listeners registered before them (see op_name_hook.h).
#include "anatomy/core/op_name_hook.h"

#include <atomic>
#include <mutex>

#include "anatomy/core/error.h"

namespace anatomy::op_name_hook {
namespace {
// Constant-initialized (Note [Installing the op-name hooks]).
constinit std::atomic<const char* (*)()> g_current{nullptr};
constinit std::mutex g_mutex;
constinit Hooks g_hooks{};  // guarded by g_mutex
constinit int g_listeners = 0;
}  // namespace

void install(const Hooks& hooks) {
  ANATOMY_INTERNAL_ASSERT(hooks.current && hooks.add_listener && hooks.remove_listener,
                          "op_name_hook::install: a hook is null");
  std::lock_guard<std::mutex> g(g_mutex);
  ANATOMY_INTERNAL_ASSERT(g_hooks.current == nullptr, "op_name_hook::install: the hooks are installed already");
  g_hooks = hooks;
  for (int i = 0; i < g_listeners; ++i) g_hooks.add_listener();
  g_current.store(hooks.current, std::memory_order_release);
}

const char* current() {
  const auto fn = g_current.load(std::memory_order_acquire);
  return fn ? fn() : nullptr;
}

void add_listener() {
  std::lock_guard<std::mutex> g(g_mutex);
  if (g_hooks.add_listener) g_hooks.add_listener();  // may throw: counted only once it is added
  ++g_listeners;
}

void remove_listener() {
  std::lock_guard<std::mutex> g(g_mutex);
  if (g_listeners == 0) return;  // unbalanced: nothing to remove (callers are destructors, which must not throw)
  --g_listeners;
  if (g_hooks.remove_listener) g_hooks.remove_listener();
}

}  // namespace anatomy::op_name_hook
