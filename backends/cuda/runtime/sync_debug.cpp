// The sync-debug mode's switch and its report (see sync_debug.h).
#include "anatomy/backends/cuda/runtime/sync_debug.h"

#include "anatomy/backends/cuda/runtime/capture.h"

#include <atomic>
#include <cstdio>

#include "anatomy/core/error.h"

namespace anatomy::cuda {
namespace {

std::atomic<SyncDebugMode> g_mode{SyncDebugMode::Off};

}  // namespace

void set_sync_debug_mode(SyncDebugMode mode) noexcept { g_mode.store(mode, std::memory_order_relaxed); }

SyncDebugMode sync_debug_mode() noexcept { return g_mode.load(std::memory_order_relaxed); }

void check_synchronization(const char* op, const char* what) {
  check_not_capturing(op, what);  // a wait cannot be captured in a CUDA graph
  if (ANATOMY_LIKELY(sync_debug_mode() == SyncDebugMode::Off)) return;
  detail::report_synchronization(op, what);
}

namespace detail {

void report_synchronization(const char* op, const char* what) {
  const std::string msg = fmt::format("{}: called a synchronizing CUDA operation ({})", op, what);
  if (sync_debug_mode() == SyncDebugMode::Error) {
    throw DeviceError(msg + "; sync debug mode is 'error' (cuda::set_sync_debug_mode)");
  }
  std::fprintf(stderr, "anatomy: warning: %s\n", msg.c_str());
}

}  // namespace detail
}  // namespace anatomy::cuda
