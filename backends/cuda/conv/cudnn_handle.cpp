// The per-thread cuDNN handles (see cudnn_handle.h).
#if defined(ANATOMY_WITH_CUDNN)
#include "anatomy/backends/cuda/conv/cudnn_handle.h"

#include <array>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/core/error.h"
#include "anatomy/cuda.h"

namespace anatomy::cuda {
namespace {

constexpr int kMaxDevices = 64;

// Every handle made, for the exit hook. Never destroyed itself: a thread may still hold a
// handle while static destructors run.
struct Registry {
  std::mutex mutex;
  std::vector<cudnnHandle_t> handles;
  bool hooked = false;
};
Registry& registry() {
  static auto* r = new Registry;
  return *r;
}
void release_at_exit() {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mutex);
  for (cudnnHandle_t h : r.handles) cudnnDestroy(h);
  r.handles.clear();
}

// On the heap (see cublas_handles.cpp: static TLS is scarce for a dlopen'd library).
thread_local std::unique_ptr<std::array<cudnnHandle_t, kMaxDevices>> t_handles;

}  // namespace

namespace detail {
void throw_cudnn_error(cudnnStatus_t status, const char* call, const char* file, int line) {
  if (status == CUDNN_STATUS_ALLOC_FAILED)
    throw OutOfMemoryError(fmt::format("cuDNN: out of memory in {} ({}:{})", call, file, line));
  throw DeviceError(fmt::format("cuDNN error {} ({}) in {} ({}:{})", static_cast<int>(status),
                                cudnnGetErrorString(status), call, file, line));
}
}  // namespace detail

cudnnHandle_t cudnn_handle() {
  const int device = current_device();
  ANATOMY_CHECK(device >= 0 && device < kMaxDevices, DeviceError, "cuDNN: device index {} is beyond the {} supported",
                device, kMaxDevices);
  if (!t_handles) {
    t_handles = std::make_unique<std::array<cudnnHandle_t, kMaxDevices>>();
    t_handles->fill(nullptr);
  }
  cudnnHandle_t& h = (*t_handles)[static_cast<size_t>(device)];
  if (h == nullptr) {
    ANATOMY_CUDNN_CHECK(cudnnCreate(&h));
    Registry& r = registry();
    std::lock_guard<std::mutex> g(r.mutex);
    r.handles.push_back(h);
    if (!r.hooked) r.hooked = std::atexit(&release_at_exit) == 0;
  }
  ANATOMY_CUDNN_CHECK(cudnnSetStream(h, current_stream()));
  return h;
}

}  // namespace anatomy::cuda
#endif  // ANATOMY_WITH_CUDNN
