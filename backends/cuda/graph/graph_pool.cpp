// GraphPool, graph_pool_handle and graph_capture_stream (declared in cuda.h): the shared private
// pools of CUDA graphs and the per-device capture streams.
#include <cuda_runtime_api.h>

#include <array>
#include <cstdio>
#include <mutex>

#include "anatomy/backends/cuda/memory/cuda_allocator.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/core/error.h"
#include "anatomy/cuda.h"

namespace anatomy::cuda {

GraphPool::GraphPool(const GraphPool& other) : device_(other.device_), id_(other.id_) {
  if (id_ != 0) retain_pool(alloc::PoolId{id_}, device_);
}

GraphPool& GraphPool::operator=(const GraphPool& other) {
  if (this != &other) {
    if (other.id_ != 0) retain_pool(alloc::PoolId{other.id_}, other.device_);
    release();
    device_ = other.device_;
    id_ = other.id_;
  }
  return *this;
}

GraphPool::GraphPool(GraphPool&& other) noexcept
    : device_(std::exchange(other.device_, -1)), id_(std::exchange(other.id_, 0)) {}

GraphPool& GraphPool::operator=(GraphPool&& other) noexcept {
  if (this != &other) {
    release();
    device_ = std::exchange(other.device_, -1);
    id_ = std::exchange(other.id_, 0);
  }
  return *this;
}

GraphPool::~GraphPool() { release(); }

void GraphPool::release() noexcept {
  if (id_ == 0) return;
  try {
    release_pool(alloc::PoolId{id_}, device_);
  } catch (const std::exception& e) {  // a destructor must not throw; the pool then leaks
    std::fprintf(stderr, "anatomy: warning: releasing CUDA graph pool %llu failed: %s\n",
                 static_cast<unsigned long long>(id_), e.what());
  }
  id_ = 0;
  device_ = -1;
}

GraphPool graph_pool_handle(int device) {
  const int d = resolve_device_index(device, "cuda::graph_pool_handle");
  return GraphPool(d, create_pool(d).value);
}

Stream graph_capture_stream(int device) {
  const int d = resolve_device_index(device, "cuda::graph_capture_stream");
  // Made once per device and never destroyed, like the stream pools: a stream of its own, so that
  // no other user of a pool stream queues work into a capture.
  static std::mutex mutex;
  static std::array<cudaStream_t, 64> streams{};
  std::lock_guard<std::mutex> lock(mutex);
  ANATOMY_CHECK(static_cast<size_t>(d) < streams.size(), DeviceError,
                "cuda::graph_capture_stream: device {} is past the {} devices anatomy supports", d, streams.size());
  if (streams[d] == nullptr) {
    DeviceGuard guard(d);
    ANATOMY_CUDA_CHECK(cudaStreamCreateWithFlags(&streams[d], cudaStreamNonBlocking));
  }
  return Stream(d, streams[d]);
}

}  // namespace anatomy::cuda
