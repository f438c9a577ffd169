// The CUDA pieces both sides share (peer.h): whether a row can run, device synchronization, and
// CUDA events. anatomy queues on cudaStreamLegacy and torch on its default stream (the same
// legacy stream unless told otherwise), so events recorded there bracket either side's work.
#include <torch/cuda.h>

#include "peer.h"

#if ANATOMY_WITH_CUDA
#include <cuda_runtime_api.h>

#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/backends/cuda/runtime/device.h"
#endif

namespace peer {

#if ANATOMY_WITH_CUDA

std::string cuda_unavailable_reason() {
  if (!anatomy::cuda::is_available()) return "anatomy sees no CUDA device: " + anatomy::cuda::unavailable_reason();
  if (!torch::cuda::is_available()) return "torch sees no CUDA device (a CPU-only torch, or no driver)";
  return {};
}

void cuda_synchronize() { ANATOMY_CUDA_CHECK(cudaDeviceSynchronize()); }

void cuda_memcpy_device(void* dst, const void* src, size_t bytes) {
  ANATOMY_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, cudaStreamLegacy));
}

CudaEventTimer::CudaEventTimer() {
  cudaEvent_t start = nullptr, stop = nullptr;
  ANATOMY_CUDA_CHECK(cudaEventCreate(&start));
  ANATOMY_CUDA_CHECK(cudaEventCreate(&stop));
  start_ = start;
  stop_ = stop;
}

CudaEventTimer::~CudaEventTimer() {
  cudaEventDestroy(static_cast<cudaEvent_t>(start_));
  cudaEventDestroy(static_cast<cudaEvent_t>(stop_));
}

void CudaEventTimer::start() {
  ANATOMY_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(start_), cudaStreamLegacy));
}

double CudaEventTimer::stop_seconds() {
  auto* stop = static_cast<cudaEvent_t>(stop_);
  ANATOMY_CUDA_CHECK(cudaEventRecord(stop, cudaStreamLegacy));
  ANATOMY_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  ANATOMY_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start_), stop));
  return ms / 1e3;
}

#else  // anatomy without its CUDA backend: every CUDA row is skipped with this reason.

std::string cuda_unavailable_reason() { return "anatomy was built without its CUDA backend (ANATOMY_CUDA=OFF)"; }

void cuda_synchronize() { ANATOMY_THROW(DeviceError, "cuda_synchronize: anatomy was built without CUDA"); }

void cuda_memcpy_device(void*, const void*, size_t) {
  ANATOMY_THROW(DeviceError, "cuda_memcpy_device: anatomy was built without CUDA");
}

CudaEventTimer::CudaEventTimer() { ANATOMY_THROW(DeviceError, "CudaEventTimer: anatomy was built without CUDA"); }
CudaEventTimer::~CudaEventTimer() = default;
void CudaEventTimer::start() {}
double CudaEventTimer::stop_seconds() { return 0; }

#endif

}  // namespace peer
