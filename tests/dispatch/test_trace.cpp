// Tests for the dispatch trace (dispatch/trace.h): the exact lines of known calls, the global
// switch and sink, the per-thread TraceCapture, and that nothing is emitted while it is off.
#include <doctest/doctest.h>

#include <future>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "anatomy/anatomy.h"

using namespace anatomy;
using namespace anatomy::dispatch;

namespace {

// Trace lines, printable by doctest when a check fails.
struct Lines : std::vector<std::string> {
  using std::vector<std::string>::vector;
  Lines(std::vector<std::string> v) : std::vector<std::string>(std::move(v)) {}
};
std::ostream& operator<<(std::ostream& os, const Lines& lines) {
  for (const auto& l : lines) os << "\n  " << l;
  return os;
}

// Collects what reaches the sink (from any thread); restores stderr and the switch when done.
struct SinkCollector {
  std::mutex mutex;
  Lines lines;
  bool was_enabled = trace_enabled();
  SinkCollector() {
    set_trace_sink([this](const std::string& line) {
      std::lock_guard<std::mutex> g(mutex);
      lines.push_back(line);
    });
  }
  ~SinkCollector() {
    set_trace_sink({});
    set_trace_enabled(was_enabled);
  }
  Lines take() {
    std::lock_guard<std::mutex> g(mutex);
    return std::exchange(lines, {});
  }
};

const Lines kZeros2 = {
    "[dispatch] aten::zeros [BackendSelect] -> BackendSelect (backend_select)",
    "[dispatch]   redispatch aten::zeros [CPU] -> CPU (zeros_composite [CompositeExplicitAutograd])",
    "[dispatch]     aten::empty.memory_format [BackendSelect] -> BackendSelect (backend_select)",
    "[dispatch]       redispatch aten::empty.memory_format [CPU] -> CPU (empty_cpu)",
    "[dispatch]     aten::fill_.Scalar [AutogradCPU, CPU] -> AutogradCPU (FillBackward0 [Autograd])",
    "[dispatch]       redispatch aten::fill_.Scalar [CPU] -> CPU (fill_cpu)",
};

}  // namespace

TEST_CASE("trace: zeros({2}) is BackendSelect, a redispatch to CPU, and the nested empty and fill_") {
  TraceCapture capture;
  zeros({2});
  CHECK(Lines(capture.lines()) == kZeros2);
  std::string text;
  for (const auto& l : kZeros2) text += l + "\n";
  CHECK(capture.text() == text);
}

TEST_CASE(
    "trace: clone of a CPU tensor passes its autograd kernel, then the CompositeExplicitAutograd kernels to copy_") {
  // clone is differentiable: the call reaches its autograd kernel first, which (nothing requires
  // grad) redispatches below autograd. empty_like has no autograd kernel, so its AutogradCPU
  // entry falls through and the trace does not show that key for it; copy_ has one (CopyBackwards).
  Tensor x = zeros({2, 3});
  TraceCapture capture;
  x.clone();
  CHECK(Lines(capture.lines()) ==
        Lines{
            "[dispatch] aten::clone [AutogradCPU, CPU] -> AutogradCPU (CloneBackward0 [Autograd])",
            "[dispatch]   redispatch aten::clone [CPU] -> CPU (clone_composite [CompositeExplicitAutograd])",
            "[dispatch]     aten::empty_like [CPU] -> CPU (empty_like_composite [CompositeExplicitAutograd])",
            "[dispatch]       aten::empty_strided [BackendSelect] -> BackendSelect (backend_select)",
            "[dispatch]         redispatch aten::empty_strided [CPU] -> CPU (empty_strided_cpu)",
            "[dispatch]     aten::copy_ [AutogradCPU, CPU] -> AutogradCPU (CopyBackwards [Autograd])",
            "[dispatch]       redispatch aten::copy_ [CPU] -> CPU (copy_cpu)",
        });
}

TEST_CASE("trace: a Tracer adds its key on top, and the boxed redispatch shows below it") {
  Tracer tracer;
  TraceCapture capture;
  zeros({2});
  REQUIRE(capture.lines().size() == 9);
  CHECK(capture.lines()[0] == "[dispatch] aten::zeros [Tracer, BackendSelect] -> Tracer (tracer_fallback [fallback])");
  CHECK(capture.lines()[1] == "[dispatch]   redispatch aten::zeros [BackendSelect] -> BackendSelect (backend_select)");
  CHECK(capture.lines()[2] ==
        "[dispatch]     redispatch aten::zeros [CPU] -> CPU (zeros_composite [CompositeExplicitAutograd])");
  CHECK(capture.lines()[3] ==
        "[dispatch]       aten::empty.memory_format [Tracer, BackendSelect] -> Tracer (tracer_fallback [fallback])");
}

TEST_CASE("trace: a failing call is traced, and the indentation recovers after the exception") {
  Tensor x = zeros({2, 3});
  TraceCapture capture;
  CHECK_THROWS_AS(x.view({4}), ValueError);
  CHECK_THROWS_AS(x.uniform_(0.0, -1.0), ValueError);
  zeros({2});
  Lines want{
      "[dispatch] aten::view [AutogradCPU, CPU] -> AutogradCPU (ViewBackward0 [Autograd])",
      "[dispatch]   redispatch aten::view [CPU] -> CPU (views::view [CompositeExplicitAutograd])",
      "[dispatch] aten::uniform_ [AutogradCPU, CPU] -> AutogradCPU (UniformBackward0 [Autograd])",
      "[dispatch]   redispatch aten::uniform_ [CPU] -> CPU (uniform_cpu)",
  };
  want.insert(want.end(), kZeros2.begin(), kZeros2.end());
  CHECK(Lines(capture.lines()) == want);
}

TEST_CASE("trace: set_trace_enabled and set_trace_sink, and nothing is emitted while off") {
  SinkCollector sink;
  set_trace_enabled(false);
  CHECK_FALSE(trace_enabled());
  zeros({2});
  CHECK(sink.take().empty());

  set_trace_enabled(true);
  CHECK(trace_enabled());
  zeros({2});
  CHECK(sink.take() == kZeros2);

  set_trace_enabled(false);
  zeros({2});
  empty({3}).clone();
  CHECK(sink.take().empty());

  // A TraceCapture turns the trace on for its lifetime and restores the switch after; what it
  // captures does not reach the sink.
  {
    TraceCapture capture;
    CHECK(trace_enabled());
    zeros({2});
    CHECK(Lines(capture.lines()) == kZeros2);
  }
  CHECK_FALSE(trace_enabled());
  CHECK(sink.take().empty());
}

TEST_CASE("trace: TraceCapture collects only its own thread's calls") {
  SinkCollector sink;
  TraceCapture capture;
  // Another thread's calls are not captured, and with the user switch off they reach no sink.
  std::thread other([] { zeros({2}); });
  other.join();
  CHECK(capture.lines().empty());
  CHECK(sink.take().empty());
  zeros({2});
  CHECK(Lines(capture.lines()) == kZeros2);
  CHECK(sink.take().empty());
}

TEST_CASE("trace: call_boxed from a user is traced as a call, a fallback's redispatch as a redispatch") {
  // call_boxed and redispatch_boxed share their path; only the latter is a redispatch.
  Tensor x = zeros({2, 3});
  TraceCapture capture;
  Stack stack{IValue(x), IValue(std::vector<int64_t>{6})};
  Dispatcher::singleton().find_or_throw("aten::view").call_boxed(stack);
  CHECK(Lines(capture.lines()) ==
        Lines{"[dispatch] aten::view [AutogradCPU, CPU] -> AutogradCPU (ViewBackward0 [Autograd])",
              "[dispatch]   redispatch aten::view [CPU] -> CPU (views::view [CompositeExplicitAutograd])"});
}

// ~TraceCapture must restore the capture that was active when it was made, so an outer
// TraceCapture keeps collecting.
TEST_CASE("trace: TraceCaptures nest") {
  SinkCollector sink;
  TraceCapture outer;
  {
    TraceCapture inner;
    zeros({2});
    CHECK(Lines(inner.lines()) == kZeros2);
  }
  zeros({2});
  CHECK(Lines(outer.lines()) == kZeros2);
  CHECK(sink.take().empty());
}

// The trace switch is global: a capture ending on one thread must not turn the trace off under
// a capture still alive on another.
TEST_CASE("trace: a TraceCapture ending on one thread does not stop another thread's") {
  SinkCollector sink;
  set_trace_enabled(false);
  std::promise<void> b_capturing, a_ended;
  Lines b_lines;
  std::optional<TraceCapture> a;
  a.emplace();
  std::thread b([&] {
    TraceCapture capture;
    b_capturing.set_value();
    a_ended.get_future().wait();
    zeros({2});
    b_lines = capture.lines();
  });
  b_capturing.get_future().wait();
  a.reset();
  a_ended.set_value();
  b.join();
  CHECK(b_lines == kZeros2);
}

TEST_CASE("trace: to_string(DispatchKeySet) lists keys from the highest down") {
  CHECK(to_string(DispatchKeySet{DispatchKey::CPU, DispatchKey::BackendSelect, DispatchKey::AutogradCPU}) ==
        "[AutogradCPU, BackendSelect, CPU]");
  CHECK(to_string(DispatchKeySet::below(DispatchKey::BackendSelect)) == "[PrivateUse1, Meta, CUDA, CPU]");
}
