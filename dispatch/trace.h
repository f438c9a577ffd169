// The dispatch trace: one indented line per call and redispatch, naming the operator, the key
// set, the key that won and its kernel.
//
// Turned on by ANATOMY_DISPATCH_TRACE=1 in the environment or set_trace_enabled(true). It is
// compiled into release builds; when off it costs the dispatcher one predictable branch.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "anatomy/dispatch/key_set.h"

namespace anatomy::dispatch {

class OperatorHandle;

namespace detail {
extern std::atomic<bool> g_trace_enabled;
}

inline bool trace_enabled() { return detail::g_trace_enabled.load(std::memory_order_relaxed); }
void set_trace_enabled(bool on);

// Where trace lines go (stderr by default). Pass an empty function to restore stderr.
using TraceSink = std::function<void(const std::string& line)>;
void set_trace_sink(TraceSink sink);

// "[AutogradCPU, CPU]"
std::string to_string(DispatchKeySet ks);

// Collects trace lines while alive (turning the trace on), for tests and tools.
class TraceCapture {
 public:
  TraceCapture();
  ~TraceCapture();
  TraceCapture(const TraceCapture&) = delete;
  TraceCapture& operator=(const TraceCapture&) = delete;
  const std::vector<std::string>& lines() const { return lines_; }
  std::string text() const;

 private:
  std::vector<std::string> lines_;
  bool was_enabled_;
};

// Emits the line for one call and indents the calls made inside it.
class TraceScope {
 public:
  TraceScope(const OperatorHandle& op, DispatchKeySet ks, bool is_redispatch);
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;
};

}  // namespace anatomy::dispatch
