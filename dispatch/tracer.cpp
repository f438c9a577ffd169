// The Tracer's boxed fallback, and the fallthrough fallbacks of the layers that have no work
// for an operator unless it registers some (BackendSelect, autocast).
#include "anatomy/dispatch/tracer.h"

#include <chrono>

#include <fmt/format.h>

#include "anatomy/dispatch/library.h"

namespace anatomy::dispatch {
namespace {
thread_local Tracer* t_tracer = nullptr;
thread_local int t_tracer_depth = 0;
}  // namespace

struct TracerAccess {
  static std::vector<TracedCall>& calls(Tracer& t) { return t.calls_; }
};

Tracer::Tracer() : previous_(t_tracer), include_(DispatchKey::Tracer) { t_tracer = this; }
Tracer::~Tracer() { t_tracer = previous_; }

std::string Tracer::to_string() const {
  std::string s;
  for (const auto& c : calls_) {
    s += fmt::format("{:{}}{}({}) {:.1f} us\n", "", 2 * c.depth, c.op, fmt::join(c.args, ", "), c.host_ns / 1e3);
  }
  return s;
}

namespace {

void tracer_fallback(const OperatorHandle& op, DispatchKeySet ks, Stack& stack, void*) {
  Tracer* tracer = t_tracer;
  if (tracer == nullptr) {  // the key was included by hand, without a Tracer to record into
    op.redispatch_boxed(ks & DispatchKeySet::below(DispatchKey::Tracer), stack);
    return;
  }
  auto& calls = TracerAccess::calls(*tracer);
  size_t nargs = op.schema().arguments.size();
  TracedCall call{op.name(), {}, t_tracer_depth, 0};
  for (size_t i = stack.size() - nargs; i < stack.size(); ++i) call.args.push_back(stack[i].to_string());
  size_t index = calls.size();
  calls.push_back(std::move(call));
  auto start = std::chrono::steady_clock::now();
  ++t_tracer_depth;
  try {
    op.redispatch_boxed(ks & DispatchKeySet::below(DispatchKey::Tracer), stack);
  } catch (...) {
    --t_tracer_depth;
    throw;
  }
  --t_tracer_depth;
  calls[index].host_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

ANATOMY_LIBRARY_IMPL(_, Tracer, m) { m.fallback(&tracer_fallback, "tracer_fallback"); }
ANATOMY_LIBRARY_IMPL(_, BackendSelect, m) { m.fallback_fallthrough(); }
ANATOMY_LIBRARY_IMPL(_, Autocast, m) { m.fallback_fallthrough(); }
// The autograd keys' fallback is autograd's (autograd/autograd_fallback.h): an operator
// without an autograd kernel must not silently drop the graph of inputs that require grad.

}  // namespace anatomy::dispatch
