// The pairing machinery of anatomy_peer_torch: one case describes an operation once, for both
// libraries, and is registered as two benchmarks with the same name under the prefixes
// "anatomy/" and "torch/", which scripts/peer-report.py pairs into one row.
//
// A case is a struct with
//   kName                        "add_tiny_cpu"
//   kTiming                      how an iteration is timed (Timing below)
//   kUnit                        the time unit Google Benchmark reports in
//   kBytes                       bytes read plus written per call, for bytes/s (0: not a bandwidth row)
//   kFlops                       floating-point operations per call, for GFLOP/s (0: none)
//   kTol                         how close anatomy's result must be to torch's
//   run_anatomy(), run_torch()   one call of the timed operation, returning its result (by
//                                value; a case whose result is a fixed marker returns a const
//                                reference to it, so the loop times no tensor copy)
//   report_anatomy(state), report_torch(state)   optional: run once after timing, they add
//                                counters for figures that are not times (peak memory)
// (CaseDefaults holds the defaults). Its constructor makes the inputs, random and the same for
// both sides. Before timing, both functions run once and their results are compared, so a wrong
// anatomy result fails the row (SkipWithError) instead of producing a figure; the case is made
// once per row and shared by both sides (prepare, below).
#pragma once

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include <chrono>
#include <exception>
#include <memory>
#include <string>
#include <thread>

#include "anatomy/anatomy.h"

namespace peer {

constexpr int64_t k64MiBFloats = int64_t{64} << 18;  // 64 MiB of fp32: larger than any L2/L3 here

enum class Timing {
  kHost,        // wall-clock time per call (CPU work, whatever threads it uses)
  kHostSynced,  // host time per call of queued CUDA work, with one device synchronize at the end
                // of the timing loop counted in (the queue cannot run ahead of the device unseen)
  kCudaEvents,  // device time per call between two CUDA events on the default stream
};

// |anatomy - torch| <= atol + rtol * |torch|, elementwise, compared in fp64.
struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

struct CaseDefaults {
  static constexpr Timing kTiming = Timing::kHost;
  static constexpr benchmark::TimeUnit kUnit = benchmark::kNanosecond;
  static constexpr int64_t kBytes = 0;
  static constexpr double kFlops = 0;
  static constexpr Tolerance kTol{0, 1e-6};
};

// A copy of a contiguous anatomy CPU tensor (fp32 or int64) as a torch CPU tensor.
at::Tensor to_torch(const anatomy::Tensor& t);
// Empty when `got` (any device) matches `want` within `tol`; otherwise what differs.
std::string compare(const anatomy::Tensor& got, const at::Tensor& want, Tolerance tol);

// CUDA, shared by both sides (both libraries queue on the legacy default stream). Empty when
// anatomy was built with its CUDA backend and both libraries see a device; otherwise why not.
std::string cuda_unavailable_reason();
void cuda_synchronize();
// cudaMemcpyAsync device to device on that stream: the copy baseline both sides share.
void cuda_memcpy_device(void* dst, const void* src, size_t bytes);
struct CudaEventPair;  // cuda_support.cpp: two anatomy::cuda::Events with timing
class CudaEventTimer {
 public:
  CudaEventTimer();
  ~CudaEventTimer();
  CudaEventTimer(const CudaEventTimer&) = delete;
  CudaEventTimer& operator=(const CudaEventTimer&) = delete;
  void start();
  // Records the stop event, waits for it, and returns the seconds between the two.
  double stop_seconds();

 private:
  std::unique_ptr<CudaEventPair> events_;
};

struct AnatomySide {
  template <class Case>
  static decltype(auto) call(Case& c) {
    return c.run_anatomy();
  }
  static int threads() { return anatomy::get_num_threads(); }
  template <class Case>
  static void report(Case& c, benchmark::State& state) {
    if constexpr (requires { c.report_anatomy(state); }) c.report_anatomy(state);
  }
};

struct TorchSide {
  template <class Case>
  static decltype(auto) call(Case& c) {
    return c.run_torch();
  }
  static int threads() { return at::get_num_threads(); }
  template <class Case>
  static void report(Case& c, benchmark::State& state) {
    if constexpr (requires { c.report_torch(state); }) c.report_torch(state);
  }
};

template <class Case>
constexpr bool is_cuda_case() {
  return Case::kTiming != Timing::kHost;
}

// The one case alive: Google Benchmark calls a row's function several times (one iteration
// first, then the counts it predicts from it) and runs the two sides one after the other, and
// making a case (random inputs, often hundreds of MiB, both sides run and compared) costs far
// more than timing it. So a case is made and checked once, kept for every call of either side,
// and freed when a call for another case comes (before that one is made: the large rows hold
// gigabytes each).
struct PreparedCase {
  const void* kind = nullptr;   // the address of prepare<Case>'s tag
  std::shared_ptr<void> value;  // null when the case was skipped
  std::string skip_reason;
};
inline PreparedCase& prepared_case() {
  static PreparedCase current;
  return current;
}

// Makes the case and compares both sides, the first time either side asks; null (the row
// skipped with the reason) when something is missing, throws, or disagrees.
template <class Case>
Case* prepare(benchmark::State& state) {
  static const char tag = 0;
  PreparedCase& p = prepared_case();
  if (p.kind != &tag) {
    p = PreparedCase{};  // frees the last case first
    p.kind = &tag;
    try {
      if constexpr (is_cuda_case<Case>()) p.skip_reason = cuda_unavailable_reason();
      if (p.skip_reason.empty()) {
        auto c = std::make_shared<Case>();
        std::string diff = compare(c->run_anatomy(), c->run_torch(), Case::kTol);
        if (diff.empty()) p.value = std::move(c);
        else p.skip_reason = "anatomy and torch disagree: " + diff;
      }
    } catch (const std::exception& e) {
      p.skip_reason = e.what();
    }
  }
  if (!p.value) {
    state.SkipWithError(p.skip_reason.c_str());
    return nullptr;
  }
  return static_cast<Case*>(p.value.get());
}

// Note [Settling before a CPU row]
// torch's OpenMP threads spin on their cores for milliseconds after each of its parallel regions
// (libgomp's GOMP_SPINCOUNT, 300,000 pauses while OMP_WAIT_POLICY is unset), and the engine's
// pool spins for 50 us. A CPU row timed right after the other library's calls (prepare's
// comparison runs both sides, and the rows alternate) would share every core with that
// library's spinning team, so each host-timed row starts after kSettle of sleep.
inline constexpr auto kSettle = std::chrono::milliseconds(100);

template <class Case, class Side>
void run_case(benchmark::State& state) {
  Case* c = prepare<Case>(state);
  if (c == nullptr) return;
  if constexpr (Case::kTiming == Timing::kHost) {
    std::this_thread::sleep_for(kSettle);
    for (auto _ : state) {
      auto&& r = Side::call(*c);
      benchmark::DoNotOptimize(r.data_ptr());
    }
    state.counters["num_threads"] = Side::threads();
  } else if constexpr (Case::kTiming == Timing::kHostSynced) {
    cuda_synchronize();
    benchmark::IterationCount i = 0;
    for (auto _ : state) {
      auto&& r = Side::call(*c);
      benchmark::DoNotOptimize(r.data_ptr());
      if (++i == state.max_iterations) cuda_synchronize();
    }
  } else {
    CudaEventTimer timer;
    for (auto _ : state) {
      timer.start();
      auto&& r = Side::call(*c);
      benchmark::DoNotOptimize(r.data_ptr());
      state.SetIterationTime(timer.stop_seconds());
    }
  }
  try {
    Side::report(*c, state);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  if (Case::kBytes > 0) state.SetBytesProcessed(state.iterations() * Case::kBytes);
  if (Case::kFlops > 0) {
    state.counters["GFLOP/s"] =
        benchmark::Counter(Case::kFlops * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
  }
}

template <class Case>
void configure(benchmark::internal::Benchmark* b) {
  b->Unit(Case::kUnit);
  if constexpr (Case::kTiming == Timing::kCudaEvents) {
    b->UseManualTime();
  } else {
    b->UseRealTime();  // CPU time would count only the calling thread of a multi-threaded kernel
  }
}

// Registers the pair; used as `const int registered_x = peer::register_pair<X>();` so it runs
// during static initialization, before main reads the command line.
template <class Case>
int register_pair() {
  configure<Case>(
      benchmark::RegisterBenchmark((std::string("anatomy/") + Case::kName).c_str(), run_case<Case, AnatomySide>));
  configure<Case>(
      benchmark::RegisterBenchmark((std::string("torch/") + Case::kName).c_str(), run_case<Case, TorchSide>));
  return 0;
}

}  // namespace peer
