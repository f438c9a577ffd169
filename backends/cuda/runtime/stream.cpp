// cuda::Stream and the per-device stream pools (see stream.h).
#include "anatomy/backends/cuda/runtime/stream.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>

#include "anatomy/backends/cuda/runtime/capture.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/backends/cuda/runtime/event.h"
#include "anatomy/backends/cuda/runtime/index_error.h"
#include "anatomy/core/error.h"

namespace anatomy::cuda {
namespace {

constexpr int kMaxDevices = 64;
constexpr int kStreamsPerPool = 32;  // PyTorch's kStreamsPerPool

// One device's streams. Never destroyed: a stream handed out may be in use until the process
// ends, and destroying streams after the runtime has torn its context down would fail.
struct DevicePool {
  std::once_flag created;
  std::array<cudaStream_t, kStreamsPerPool> normal{};
  std::array<cudaStream_t, kStreamsPerPool> high{};
  std::atomic<uint32_t> next_normal{0};
  std::atomic<uint32_t> next_high{0};
};

DevicePool& device_pool(int device) {
  static auto* pools = new std::array<DevicePool, kMaxDevices>;
  return (*pools)[device];
}

// The device index a stream function works on: `device`, or the current one for -1.
int checked_device(int device, const char* op) {
  device = resolve_device_index(device, op);
  ANATOMY_CHECK(device < kMaxDevices, DeviceError, "{}: device index {} is beyond the {} supported", op, device,
                kMaxDevices);
  return device;
}

void create_pool(DevicePool& pool, int device) {
  DeviceGuard guard(device);
  // Lower numbers are higher priorities: `greatest` is the most urgent the device offers, and
  // `least` (0) is what streams get by default.
  int least = 0, greatest = 0;
  ANATOMY_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  for (int i = 0; i < kStreamsPerPool; ++i) {
    ANATOMY_CUDA_CHECK(cudaStreamCreateWithPriority(&pool.normal[i], cudaStreamNonBlocking, least));
    ANATOMY_CUDA_CHECK(cudaStreamCreateWithPriority(&pool.high[i], cudaStreamNonBlocking, greatest));
  }
}

}  // namespace

void Stream::synchronize() const {
  check_available("Stream::synchronize");
  check_not_capturing("Stream::synchronize", "a wait for a stream");
  DeviceGuard guard(device_);
  ANATOMY_CUDA_CHECK(cudaStreamSynchronize(handle_));
  raise_pending_index_error(device_);
}

bool Stream::query() const {
  check_available("Stream::query");
  check_not_capturing("Stream::query", "a stream query");
  DeviceGuard guard(device_);
  const cudaError_t err = cudaStreamQuery(handle_);
  if (err == cudaErrorNotReady) {
    (void)cudaGetLastError();  // "not yet" is an answer, not an error for the next check
    return false;
  }
  if (err != cudaSuccess) detail::throw_cuda_error(err, "cudaStreamQuery", __FILE__, __LINE__);
  return true;
}

void Stream::wait(const Event& event) const { event.block(*this); }

void Stream::wait_stream(const Stream& other) const {
  check_available("Stream::wait_stream");
  if (other == *this) return;
  Event ready;
  ready.record(other);
  wait(ready);
  // Destroying an event whose wait is queued is fine: CUDA keeps it until the wait is done.
}

int Stream::priority() const {
  check_available("Stream::priority");
  DeviceGuard guard(device_);
  int p = 0;
  ANATOMY_CUDA_CHECK(cudaStreamGetPriority(handle_, &p));
  return p;
}

Stream default_stream(int device) { return Stream(checked_device(device, "default_stream"), cudaStreamLegacy); }

Stream get_stream_from_pool(bool high_priority, int device) {
  device = checked_device(device, "get_stream_from_pool");
  DevicePool& pool = device_pool(device);
  std::call_once(pool.created, create_pool, pool, device);
  std::atomic<uint32_t>& next = high_priority ? pool.next_high : pool.next_normal;
  const uint32_t i = next.fetch_add(1, std::memory_order_relaxed) % kStreamsPerPool;
  return Stream(device, high_priority ? pool.high[i] : pool.normal[i]);
}

Stream external_stream(cudaStream_t handle, int device) {
  device = checked_device(device, "external_stream");
  if (handle == nullptr || handle == cudaStreamLegacy) return Stream(device, cudaStreamLegacy);
  int owner = -1;
  ANATOMY_CUDA_CHECK(cudaStreamGetDevice(handle, &owner));
  ANATOMY_CHECK(owner == device, DeviceError, "external_stream: stream {} belongs to cuda:{}, not to cuda:{}",
                fmt::ptr(handle), owner, device);
  return Stream(device, handle);
}

}  // namespace anatomy::cuda
