// The dispatch trace's sink and line format (its switch, the state word, is in trace_state.cpp).
#include "anatomy/dispatch/trace.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "anatomy/dispatch/current_op.h"
#include "anatomy/dispatch/dispatcher.h"

namespace anatomy::dispatch {
namespace {
thread_local int t_depth = 0;
thread_local std::vector<std::string>* t_capture = nullptr;
thread_local TraceDetail t_capture_detail = TraceDetail::Kernels;
// The switch's detail (the sink's lines); captures carry their own.
std::atomic<TraceDetail> g_detail{[] {
  const char* v = std::getenv("ANATOMY_DISPATCH_TRACE");
  return v != nullptr && std::strcmp(v, "files") == 0 ? TraceDetail::KernelFiles : TraceDetail::Kernels;
}()};

std::mutex& sink_mutex() {
  static std::mutex m;
  return m;
}
TraceSink& sink() {
  static TraceSink s;
  return s;
}

void emit(const std::string& line) {
  if (t_capture) {
    t_capture->push_back(line);
    return;
  }
  // Only another thread's capture is on: this thread's calls are not traced.
  if ((detail::g_trace_state.load(std::memory_order_relaxed) & 1u) == 0) return;
  std::lock_guard<std::mutex> g(sink_mutex());
  if (sink()) {
    sink()(line);
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}
}  // namespace

void set_trace_enabled(bool on, TraceDetail detail) {
  g_detail.store(detail, std::memory_order_relaxed);
  if (on) {
    detail::g_trace_state.fetch_or(1u, std::memory_order_relaxed);
  } else {
    detail::g_trace_state.fetch_and(~1u, std::memory_order_relaxed);
  }
}

void set_trace_sink(TraceSink s) {
  std::lock_guard<std::mutex> g(sink_mutex());
  sink() = std::move(s);
}

std::string to_string(DispatchKeySet ks) {
  std::string s = "[";
  bool first = true;
  ks.for_each_high_to_low([&](DispatchKey k) {
    s += first ? "" : ", ";
    s += to_string(k);
    first = false;
  });
  return s + "]";
}

TraceCapture::TraceCapture(TraceDetail detail) : previous_(t_capture), previous_detail_(t_capture_detail) {
  t_capture = &lines_;
  t_capture_detail = detail;
  detail::g_trace_state.fetch_add(2u, std::memory_order_relaxed);
}

TraceCapture::~TraceCapture() {
  t_capture = previous_;
  t_capture_detail = previous_detail_;
  detail::g_trace_state.fetch_sub(2u, std::memory_order_relaxed);
}

std::string TraceCapture::text() const {
  std::string s;
  for (const auto& l : lines_) s += l + "\n";
  return s;
}

// Note [Op names on the slow path]
// The dispatcher has one branch for everything that watches calls: any bit of g_trace_state
// sends the call through a TraceScope. So naming the current operator for the memory history
// (current_op.h) costs the tiny-op path nothing when no one listens, and the scope formats a
// trace line only when the trace itself is on for this thread.
TraceScope::TraceScope(const OperatorHandle& op, DispatchKeySet ks, bool is_redispatch) {
  detail::enter_dispatched_op(op.name().c_str(), t_depth);
  if (!is_redispatch) pushed_range_ = detail::push_op_range(op.name().c_str());
  if (t_capture != nullptr || (detail::g_trace_state.load(std::memory_order_relaxed) & 1u) != 0) {
    DispatchKey k = ks.highest();
    std::string kernel = ks.empty() ? "missing" : op.entry().kernel_name(k);
    const TraceDetail detail = t_capture != nullptr ? t_capture_detail : g_detail.load(std::memory_order_relaxed);
    if (detail == TraceDetail::KernelFiles && !ks.empty() && !op.entry().kernel_file(k).empty()) {
      kernel += ", " + op.entry().kernel_file(k);
    }
    emit(fmt::format("[dispatch] {:{}}{}{} {} -> {} ({})", "", 2 * t_depth, is_redispatch ? "redispatch " : "",
                     op.name(), to_string(ks), to_string(k), kernel));
  }
  ++t_depth;
}

TraceScope::~TraceScope() {
  --t_depth;
  detail::leave_dispatched_op(t_depth);
  if (pushed_range_) detail::pop_op_range();
}

}  // namespace anatomy::dispatch
