// The pool of device spans (recording.h). Making a CUDA event (cudaEventCreate, on its first
// record) and destroying it are driver calls of about a microsecond each, and a profile records
// two events per CUDA operator: a pool that outlives the profiles lets the second profile of a
// program (and every later one) record into events the earlier ones made.
#include <map>
#include <mutex>

#include "anatomy/profiler/recording.h"

namespace anatomy::profiler {

namespace {

// Spans kept per device: beyond these (a profile of more CUDA operators) they are destroyed.
constexpr size_t kMaxPooledSpans = 1 << 16;

struct SpanPool {
  std::mutex mutex;
  std::map<int, std::vector<std::unique_ptr<DeviceSpan>>> free;  // by device
};

SpanPool& pool() {
  // Never destroyed: spans returned by a profile that stops during exit stay valid.
  static auto* p = new SpanPool;
  return *p;
}

}  // namespace

std::unique_ptr<DeviceSpan> take_span(int device) {
  SpanPool& p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    auto it = p.free.find(device);
    if (it != p.free.end() && !it->second.empty()) {
      std::unique_ptr<DeviceSpan> span = std::move(it->second.back());
      it->second.pop_back();
      span->ended = false;
      return span;
    }
  }
  auto span = std::make_unique<DeviceSpan>();
  span->device = device;
  return span;
}

void return_spans(std::vector<std::unique_ptr<DeviceSpan>>& spans) {
  SpanPool& p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    for (auto& span : spans) {
      auto& free = p.free[span->device];
      if (free.size() < kMaxPooledSpans) free.push_back(std::move(span));
    }
  }
  spans.clear();  // those past the bound: their events destroyed outside the lock
}

}  // namespace anatomy::profiler
