// The CUDA graph captures underway in the process, and the check that every call which cannot be
// captured makes first (docs/cuda-graphs.md, "What cannot be captured").
//
// CUDA records the work a capturing stream is given instead of running it. A call that makes the
// host wait (item(), printing, a copy to pageable host memory, synchronize(), an event query), a
// copy from pageable host memory, or a cuBLAS workspace allocation cannot be recorded: CUDA would
// fail it and invalidate the capture, and the host would get a CUDA error from some later call.
// Each such call asks check_not_capturing first. While the calling thread has a capture underway
// (any mode), or another thread has one in global mode (the mode in which CUDA forbids every
// thread's unsafe calls), it throws DeviceError naming the call; the calling thread's own captures
// are abandoned first (ended, their partial graphs destroyed, their pools' routes ended), so the
// engine stays usable and the graph can capture again.
//
// The graph room (backends/cuda/graph/) registers each capture here around cudaStreamBeginCapture
// and cudaStreamEndCapture. With no capture underway, the check is one relaxed atomic load.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <functional>

#include "anatomy/core/macros.h"
#include "anatomy/cuda.h"

namespace anatomy::cuda {

// Note [Random numbers in CUDA graphs]
// A random kernel captured with the generator's seed and offset as arguments would give the same
// numbers on every replay. As PyTorch's graph-safe generator: while a graph captures, each random
// op takes its counters from the graph (CaptureRng::reserve, positions within the graph from 0)
// and reads the seed and a base offset from `device_state` at run time. Before each replay the
// graph reserves as many counters from the default generator as the capture used and writes
// {seed, base} there with a one-thread kernel on the replay stream, so replays give fresh numbers,
// in the order an eager run seeded the same way would give them, and the generator moves on.
struct CaptureRng {
  uint64_t* device_state = nullptr;  // {seed, base offset}, 16 bytes of device memory
  uint64_t used = 0;                 // counters reserved by the capture so far
  uint64_t reserve(uint64_t n) {
    const uint64_t first = used;
    used += n;
    return first;
  }
};

// One capture underway. `abandon` ends it without a graph (noexcept; it unregisters it).
struct CaptureRecord {
  cudaStream_t stream = nullptr;
  int device = -1;
  CaptureMode mode = CaptureMode::Global;
  unsigned long long id = 0;  // cudaStreamGetCaptureInfo's id of the capture
  CaptureRng* rng = nullptr;  // owned by the graph
  std::function<void()> abandon;
};

// Registers a capture begun by the calling thread; returns its token for unregister_capture.
uint64_t register_capture(CaptureRecord record);
void unregister_capture(uint64_t token) noexcept;

namespace detail {
extern std::atomic<int> g_captures_underway;
void check_not_capturing_slow(const char* op, const char* what);
}  // namespace detail

// Whether any thread of the process has a capture underway (a relaxed load).
inline bool captures_underway() noexcept { return detail::g_captures_underway.load(std::memory_order_relaxed) > 0; }
// Whether the calling thread has a capture underway.
bool thread_is_capturing() noexcept;
// The random-number counters of the capture that `stream` is part of (the capture stream or a
// stream forked into it), or nullptr when it is not being captured by a Graph.
CaptureRng* capture_rng(cudaStream_t stream);
// The cudaStreamCaptureMode of a CaptureMode.
cudaStreamCaptureMode to_cuda(CaptureMode mode) noexcept;

// Throws DeviceError "<op>: <what> cannot be captured in a CUDA graph ..." when the call would
// break a capture (see above), after abandoning the calling thread's captures. `what` says what
// the call does ("a copy from the device to host memory").
inline void check_not_capturing(const char* op, const char* what) {
  if (ANATOMY_UNLIKELY(captures_underway())) detail::check_not_capturing_slow(op, what);
}

// Makes the calling thread's capture mode relaxed for a scope (cudaThreadExchangeStreamCaptureMode),
// as PyTorch's CUDAStreamCaptureModeGuard: the caching allocator's cudaMalloc while a capture
// grows its private pool is an "unsafe" call in global and thread-local modes.
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode();
  ~RelaxedCaptureMode();
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  cudaStreamCaptureMode previous_ = cudaStreamCaptureModeRelaxed;
};

}  // namespace anatomy::cuda
