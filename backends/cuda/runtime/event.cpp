// cuda::Event (see event.h).
#include "anatomy/backends/cuda/runtime/event.h"

#include <cstdio>

#include "anatomy/backends/cuda/runtime/capture.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/backends/cuda/runtime/index_error.h"
#include "anatomy/core/error.h"

namespace anatomy::cuda {

void Event::release() noexcept {
  if (event_ == nullptr) return;
  // A destructor must not throw. cudaEventDestroy of a recorded, unfinished event is allowed
  // (CUDA frees it once the event completes); a failure here means the context is already gone.
  int previous = -1;
  const bool switched =
      cudaGetDevice(&previous) == cudaSuccess && previous != device_ && cudaSetDevice(device_) == cudaSuccess;
  const cudaError_t err = cudaEventDestroy(event_);
  if (switched) (void)cudaSetDevice(previous);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    std::fprintf(stderr, "anatomy: warning: destroying a CUDA event failed: %s\n", cudaGetErrorString(err));
  }
  event_ = nullptr;
  device_ = -1;
}

void Event::record() {
  check_available("Event::record");
  record(current_stream(-1));
}

void Event::record(const Stream& stream) {
  check_available("Event::record");
  ANATOMY_CHECK(event_ == nullptr || device_ == stream.device_index(), DeviceError,
                "Event::record: the event belongs to cuda:{} and cannot be recorded on {}", device_, stream.str());
  DeviceGuard guard(stream.device_index());
  if (event_ == nullptr) {
    unsigned flags = enable_timing_ ? cudaEventDefault : cudaEventDisableTiming;
    if (blocking_) flags |= cudaEventBlockingSync;
    ANATOMY_CUDA_CHECK(cudaEventCreateWithFlags(&event_, flags));
    device_ = stream.device_index();
  }
  ANATOMY_CUDA_CHECK(cudaEventRecord(event_, stream.handle()));
}

bool Event::query() const {
  if (event_ == nullptr) return true;
  check_not_capturing("Event::query", "an event query");
  const cudaError_t err = cudaEventQuery(event_);
  if (err == cudaErrorNotReady) {
    (void)cudaGetLastError();  // "not yet" is an answer, not an error for the next check
    return false;
  }
  if (err != cudaSuccess) detail::throw_cuda_error(err, "cudaEventQuery", __FILE__, __LINE__);
  return true;
}

void Event::synchronize() const {
  if (event_ == nullptr) return;
  check_not_capturing("Event::synchronize", "a wait for an event");
  ANATOMY_CUDA_CHECK(cudaEventSynchronize(event_));
  raise_pending_index_error(device_);
}

void Event::block(const Stream& stream) const {
  if (event_ == nullptr) return;
  // The stream's device must be current to queue on it; the event may be another device's.
  DeviceGuard guard(stream.device_index());
  ANATOMY_CUDA_CHECK(cudaStreamWaitEvent(stream.handle(), event_, 0));
}

float Event::elapsed_time(const Event& end) const {
  ANATOMY_CHECK(enable_timing_ && end.enable_timing_, DeviceError,
                "Event::elapsed_time: both events need enable_timing=true (this event: {}, end: {})", enable_timing_,
                end.enable_timing_);
  ANATOMY_CHECK(event_ != nullptr && end.event_ != nullptr, DeviceError,
                "Event::elapsed_time: both events must be recorded first (this event: {}, end: {})",
                event_ ? "recorded" : "not recorded", end.event_ ? "recorded" : "not recorded");
  // Asked first (a "not yet" from cudaEventQuery is an answer; from cudaEventElapsedTime it is an
  // API error that compute-sanitizer reports).
  ANATOMY_CHECK(query() && end.query(), DeviceError,
                "Event::elapsed_time: an event has not completed yet; call synchronize() on the later one first");
  float ms = 0;
  ANATOMY_CUDA_CHECK(cudaEventElapsedTime(&ms, event_, end.event_));
  return ms;
}

}  // namespace anatomy::cuda
