// The dispatch trace: one indented line per call and redispatch, naming the operator, the key
// set, the key that won and its kernel, and with TraceDetail::KernelFiles the source file that
// registered that kernel:
//   [dispatch]   redispatch aten::add.Tensor [CPU] -> CPU (add, backends/cpu/binary_cpu.cpp)
//
// Turned on by ANATOMY_DISPATCH_TRACE=1 (=files for the files) in the environment or
// set_trace_enabled(true). It is compiled into release builds; when off it costs the dispatcher
// one predictable branch.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "anatomy/core/dispatch_key_set.h"

namespace anatomy::dispatch {

class OperatorHandle;

namespace detail {
// Bit 0: the user's switch. Bits 1-23: how many TraceCaptures are alive on any thread. Bits 24-31:
// op-name listeners (current_op.h). The dispatcher only asks whether any bit is set.
extern std::atomic<uint32_t> g_trace_state;
}  // namespace detail

inline bool trace_enabled() { return detail::g_trace_state.load(std::memory_order_relaxed) != 0; }
// What a line names after the kernel: nothing, or the file that registered it (relative to the
// source tree; a user's own file as its compiler named it).
enum class TraceDetail : uint8_t { Kernels, KernelFiles };

// The user's switch: trace lines go to the sink. A TraceCapture collects its own thread's lines
// whatever the switch says.
void set_trace_enabled(bool on, TraceDetail detail = TraceDetail::Kernels);

// Where trace lines go (stderr by default). Pass an empty function to restore stderr.
using TraceSink = std::function<void(const std::string& line)>;
void set_trace_sink(TraceSink sink);

// "[AutogradCPU, CPU]"
std::string to_string(DispatchKeySet ks);

// Collects the calling thread's trace lines while alive, for tests and tools. Captures nest
// (the inner one collects until it ends) and do not affect other threads.
class TraceCapture {
 public:
  explicit TraceCapture(TraceDetail detail = TraceDetail::Kernels);
  ~TraceCapture();
  TraceCapture(const TraceCapture&) = delete;
  TraceCapture& operator=(const TraceCapture&) = delete;
  const std::vector<std::string>& lines() const { return lines_; }
  std::string text() const;

 private:
  std::vector<std::string> lines_;
  std::vector<std::string>* previous_;
  TraceDetail previous_detail_;
};

// Emits the line for one call and indents the calls made inside it.
class TraceScope {
 public:
  TraceScope(const OperatorHandle& op, DispatchKeySet ks, bool is_redispatch);
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  bool pushed_range_ = false;  // an op-range hook (current_op.h) opened a range for this call
};

}  // namespace anatomy::dispatch
