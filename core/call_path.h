// The path of a call, step by step: docs/architecture.md lists the files a call such as `a + b`
// passes through on its way to the CPU loop or the CUDA kernel, and a test records the real path
// and compares it with that listing.
//
// Note [Recording the path of a call]
// Each step of the path (the operator's function, the dispatcher's call, the autograd kernel, the
// kernel body, the plan, the loop, the launchers) starts with ANATOMY_CALL_PATH_STEP(), which
// names the file that defines it (__FILE__) and the function. While a CallPathRecorder lives on a
// thread, the steps that thread takes are appended to it in order; otherwise a step costs one
// relaxed load of a global counter and a branch not taken. The dispatcher's step is marked inside
// its traced branch (dispatch/dispatcher.h), so the recording also needs the dispatch trace on
// (dispatch::TraceCapture): the untraced dispatcher pays nothing.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "anatomy/core/macros.h"

namespace anatomy {

struct CallPathStep {
  std::string file;      // as the compiler spelled __FILE__ (an absolute path in the build)
  std::string function;  // __func__
};

namespace detail {
extern std::atomic<int> g_call_path_recorders;
void record_call_path_step(const char* file, const char* function);
}  // namespace detail

// Records the steps the current thread takes while it lives. Recorders do not nest.
class CallPathRecorder {
 public:
  CallPathRecorder();
  ~CallPathRecorder();
  CallPathRecorder(const CallPathRecorder&) = delete;
  CallPathRecorder& operator=(const CallPathRecorder&) = delete;

  const std::vector<CallPathStep>& steps() const { return steps_; }

 private:
  std::vector<CallPathStep> steps_;
};

}  // namespace anatomy

#define ANATOMY_CALL_PATH_STEP()                                                                    \
  do {                                                                                              \
    if (ANATOMY_UNLIKELY(::anatomy::detail::g_call_path_recorders.load(std::memory_order_relaxed))) \
      ::anatomy::detail::record_call_path_step(__FILE__, __func__);                                 \
  } while (0)
