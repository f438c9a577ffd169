// NVTX ranges (declared in cuda.h): user ranges, markers, and a range around every dispatched
// operator while op ranges are on (dispatch/current_op.h's op-range hooks).
#include <nvtx3/nvToolsExt.h>

#include <atomic>

#include "anatomy/cuda.h"
#include "anatomy/dispatch/current_op.h"

namespace anatomy::cuda::nvtx {
namespace {

std::atomic<bool> g_op_ranges{false};

void push_op(const char* name) { nvtxRangePushA(name); }
void pop_op() { nvtxRangePop(); }

}  // namespace

Range::Range(const char* name) { nvtxRangePushA(name); }
Range::~Range() { nvtxRangePop(); }

void mark(const char* message) { nvtxMarkA(message); }

void set_op_ranges_enabled(bool on) {
  if (g_op_ranges.exchange(on) == on) return;
  if (on) dispatch::set_op_range_hooks(&push_op, &pop_op);
  else dispatch::set_op_range_hooks(nullptr, nullptr);
}

bool op_ranges_enabled() { return g_op_ranges.load(); }

}  // namespace anatomy::cuda::nvtx
