// The CUDA pieces both sides share (peer.h): whether a row can run, device synchronization, and
// CUDA events. anatomy queues on cudaStreamLegacy and torch on its default stream (the same
// legacy stream unless told otherwise), so events recorded there bracket either side's work.
// anatomy's side goes through <anatomy/cuda.h>, which also answers (NotImplementedError) in a
// build without CUDA; the memcpy baseline is the CUDA runtime's own call.
#include <torch/cuda.h>

#include <memory>

#include "anatomy/cuda.h"
#include "peer.h"

#if ANATOMY_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace peer {

// The two timing events, recorded on the current device's default stream (the legacy stream).
struct CudaEventPair {
  anatomy::cuda::Event start{/*enable_timing=*/true};
  anatomy::cuda::Event stop{/*enable_timing=*/true};
};

std::string cuda_unavailable_reason() {
  if (!anatomy::cuda::is_available()) return "anatomy sees no CUDA device: " + anatomy::cuda::unavailable_reason();
  if (!torch::cuda::is_available()) return "torch sees no CUDA device (a CPU-only torch, or no driver)";
  return {};
}

void cuda_synchronize() { anatomy::cuda::synchronize(); }

void cuda_memcpy_device(void* dst, const void* src, size_t bytes) {
#if ANATOMY_WITH_CUDA
  const cudaError_t err = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, cudaStreamLegacy);
  ANATOMY_CHECK(err == cudaSuccess, DeviceError, "cuda_memcpy_device: cudaMemcpyAsync: {}", cudaGetErrorString(err));
#else
  (void)dst, (void)src, (void)bytes;
  ANATOMY_THROW(NotImplementedError, "cuda_memcpy_device: anatomy was built without CUDA");
#endif
}

CudaEventTimer::CudaEventTimer() : events_(std::make_unique<CudaEventPair>()) {}

CudaEventTimer::~CudaEventTimer() = default;

void CudaEventTimer::start() { events_->start.record(anatomy::cuda::default_stream()); }

double CudaEventTimer::stop_seconds() {
  events_->stop.record(anatomy::cuda::default_stream());
  events_->stop.synchronize();
  return events_->start.elapsed_time(events_->stop) / 1e3;
}

}  // namespace peer
