#include "anatomy/core/call_path.h"

#include "anatomy/core/error.h"

namespace anatomy {

namespace detail {

std::atomic<int> g_call_path_recorders{0};

namespace {
thread_local std::vector<CallPathStep>* t_call_path = nullptr;
}

void record_call_path_step(const char* file, const char* function) {
  if (t_call_path != nullptr) t_call_path->push_back({file, function});
}

}  // namespace detail

CallPathRecorder::CallPathRecorder() {
  ANATOMY_CHECK(detail::t_call_path == nullptr, ValueError,
                "CallPathRecorder: this thread already records its call path; recorders do not nest");
  detail::t_call_path = &steps_;
  detail::g_call_path_recorders.fetch_add(1, std::memory_order_relaxed);
}

CallPathRecorder::~CallPathRecorder() {
  detail::t_call_path = nullptr;
  detail::g_call_path_recorders.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace anatomy
