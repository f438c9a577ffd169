// The registry of CUDA graph captures underway and the check of uncapturable calls (capture.h).
#include "anatomy/backends/cuda/runtime/capture.h"

#include <mutex>
#include <thread>
#include <vector>

#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/core/error.h"

namespace anatomy::cuda {
namespace detail {
std::atomic<int> g_captures_underway{0};
}  // namespace detail

namespace {

struct Entry {
  uint64_t token;
  std::thread::id thread;
  CaptureRecord record;
};

struct Registry {
  std::mutex mutex;
  uint64_t next_token = 1;
  std::vector<Entry> entries;
};

Registry& registry() {
  static auto* r = new Registry;  // never destroyed: captures may end during static destruction
  return *r;
}

constinit thread_local int t_captures = 0;

const char* mode_name(CaptureMode mode) {
  switch (mode) {
    case CaptureMode::Global:
      return "global";
    case CaptureMode::ThreadLocal:
      return "thread_local";
    case CaptureMode::Relaxed:
      break;
  }
  return "relaxed";
}

}  // namespace

cudaStreamCaptureMode to_cuda(CaptureMode mode) noexcept {
  switch (mode) {
    case CaptureMode::Global:
      return cudaStreamCaptureModeGlobal;
    case CaptureMode::ThreadLocal:
      return cudaStreamCaptureModeThreadLocal;
    case CaptureMode::Relaxed:
      break;
  }
  return cudaStreamCaptureModeRelaxed;
}

uint64_t register_capture(CaptureRecord record) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const uint64_t token = r.next_token++;
  r.entries.push_back({token, std::this_thread::get_id(), std::move(record)});
  ++t_captures;
  detail::g_captures_underway.fetch_add(1, std::memory_order_relaxed);
  return token;
}

void unregister_capture(uint64_t token) noexcept {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto it = r.entries.begin(); it != r.entries.end(); ++it) {
    if (it->token != token) continue;
    if (it->thread == std::this_thread::get_id()) --t_captures;
    r.entries.erase(it);
    detail::g_captures_underway.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
}

bool thread_is_capturing() noexcept { return t_captures > 0; }

CaptureRng* capture_rng(cudaStream_t stream) {
  // The legacy default stream is never captured, and asking about it during a global capture is
  // an implicit synchronization that would invalidate that capture.
  if (stream == nullptr || stream == cudaStreamLegacy) return nullptr;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  if (cudaStreamGetCaptureInfo(stream, &status, &id) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  if (status != cudaStreamCaptureStatusActive) return nullptr;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const Entry& e : r.entries) {
    if (e.record.id == id) return e.record.rng;
  }
  return nullptr;
}

namespace detail {

void check_not_capturing_slow(const char* op, const char* what) {
  Registry& r = registry();
  const std::thread::id self = std::this_thread::get_id();
  std::vector<std::function<void()>> abandon;
  std::string where;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    for (const Entry& e : r.entries) {
      const bool own = e.thread == self;
      if (!own && e.record.mode != CaptureMode::Global) continue;
      if (where.empty()) {
        where = fmt::format("cuda:{} stream {} in {} mode{}", e.record.device, fmt::ptr(e.record.stream),
                            mode_name(e.record.mode), own ? "" : ", by another thread");
      }
      if (own) abandon.push_back(e.record.abandon);
    }
  }
  if (where.empty()) return;          // other threads' thread-local or relaxed captures allow this call
  for (const auto& a : abandon) a();  // outside the lock: each unregisters itself
  throw DeviceError(
      fmt::format("{}: {} cannot be captured in a CUDA graph, and a capture is underway ({}); {}(docs/cuda-graphs.md, "
                  "\"What cannot be captured\")",
                  op, what, where, abandon.empty() ? "" : "this thread's capture was ended without a graph "));
}

}  // namespace detail

RelaxedCaptureMode::RelaxedCaptureMode() {
  previous_ = cudaStreamCaptureModeRelaxed;
  ANATOMY_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&previous_));
}

RelaxedCaptureMode::~RelaxedCaptureMode() {
  cudaStreamCaptureMode mode = previous_;
  (void)cudaThreadExchangeStreamCaptureMode(&mode);
}

}  // namespace anatomy::cuda
