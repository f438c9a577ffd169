// The per-thread cuBLAS / cuBLASLt handles and the per-stream workspaces (see cublas_handles.h).
#include "anatomy/backends/cuda/blas/cublas_handles.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "anatomy/backends/cuda/memory/cuda_allocator.h"
#include "anatomy/backends/cuda/memory/cuda_memory_provider.h"
#include "anatomy/backends/cuda/runtime/capture.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/core/error.h"

namespace anatomy::cuda {
namespace {

constexpr int kMaxDevices = 64;

// Everything made here, so the exit hook can give it back. Never destroyed itself: a thread may
// still hold a handle while static destructors run.
struct Registry {
  std::mutex mutex;
  std::vector<cublasHandle_t> blas;
  std::vector<cublasLtHandle_t> lt;
  std::map<std::pair<int, cudaStream_t>, BlasWorkspace> workspaces;
  bool hooked = false;
};

Registry& registry() {
  static auto* r = new Registry;
  return *r;
}

// Registered after the first workspace came from the device's allocator, so after the
// allocator's own exit hook: it runs first, and the workspaces are back before the cache is
// emptied. Handles go before the runtime's exit handler (registered earlier still) runs.
void release_at_exit() {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mutex);
  for (cublasHandle_t h : r.blas) cublasDestroy(h);
  for (cublasLtHandle_t h : r.lt) cublasLtDestroy(h);
  r.blas.clear();
  r.lt.clear();
  for (auto& [key, ws] : r.workspaces) {
    try {
      raw_free(ws.data, key.first);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "anatomy: warning: releasing a cuBLAS workspace at exit failed: %s\n", e.what());
    }
  }
  r.workspaces.clear();
}

size_t workspace_bytes(int device) {
  const int major = get_device_properties(device).major;
  return (major >= 9 ? 32u : 4u) << 20;
}

// A thread's handles, per device, and the stream its cuBLAS handle was last bound to (only this
// file binds it, so skipping a repeated bind is safe).
struct ThreadHandles {
  cublasHandle_t blas = nullptr;
  cublasLtHandle_t lt = nullptr;
  cudaStream_t bound_stream = nullptr;
  bool bound = false;
};
// On the heap, made at the thread's first cuBLAS call: 2 KiB of thread_local would not fit the
// static TLS a dlopen'd libanatomy may have (core/macros.h, ANATOMY_TLS_FAST).
thread_local std::unique_ptr<std::array<ThreadHandles, kMaxDevices>> t_handles;

ThreadHandles& thread_handles(int device) {
  ANATOMY_CHECK(device >= 0 && device < kMaxDevices, DeviceError, "cuBLAS: device index {} is beyond the {} supported",
                device, kMaxDevices);
  if (!t_handles) t_handles = std::make_unique<std::array<ThreadHandles, kMaxDevices>>();
  return (*t_handles)[device];
}

}  // namespace

BlasWorkspace blas_workspace() {
  const int device = current_device();
  const cudaStream_t stream = current_stream();
  // The last answer of this thread: a training step asks for the same one hundreds of times.
  thread_local int last_device = -1;
  thread_local cudaStream_t last_stream = nullptr;
  thread_local BlasWorkspace last;
  if (device == last_device && stream == last_stream) return last;
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mutex);
  auto it = r.workspaces.find({device, stream});
  if (it == r.workspaces.end()) {
    // A graph would keep the capture's workspace block for ever; run a product on the stream
    // once before capturing (docs/cuda-graphs.md, "Warm-up").
    check_not_capturing("cuBLAS", "allocating the stream's cuBLAS workspace");
    const size_t bytes = workspace_bytes(device);
    BlasWorkspace ws{raw_alloc(bytes, stream_id(stream), device), bytes};
    it = r.workspaces.emplace(std::make_pair(device, stream), ws).first;
    if (!r.hooked) r.hooked = std::atexit(&release_at_exit) == 0;
  }
  last_device = device;
  last_stream = stream;
  last = it->second;
  return last;
}

cublasHandle_t cublas_handle() {
  const int device = current_device();
  ThreadHandles& t = thread_handles(device);
  if (t.blas == nullptr) {
    cublasHandle_t h = nullptr;
    ANATOMY_CUBLAS_CHECK(cublasCreate(&h));
    Registry& r = registry();
    std::lock_guard<std::mutex> g(r.mutex);
    r.blas.push_back(h);
    t.blas = h;
  }
  const cudaStream_t stream = current_stream();
  if (!t.bound || t.bound_stream != stream) {
    // cublasSetStream resets the workspace to cuBLAS's own pool: set ours after it.
    const BlasWorkspace ws = blas_workspace();
    ANATOMY_CUBLAS_CHECK(cublasSetStream(t.blas, stream));
    ANATOMY_CUBLAS_CHECK(cublasSetWorkspace(t.blas, ws.data, ws.bytes));
    t.bound_stream = stream;
    t.bound = true;
  }
  return t.blas;
}

cublasLtHandle_t cublaslt_handle() {
  ThreadHandles& t = thread_handles(current_device());
  if (t.lt == nullptr) {
    cublasLtHandle_t h = nullptr;
    ANATOMY_CUBLAS_CHECK(cublasLtCreate(&h));
    Registry& r = registry();
    std::lock_guard<std::mutex> g(r.mutex);
    r.lt.push_back(h);
    t.lt = h;
  }
  return t.lt;
}

namespace detail {

void throw_cublas_error(int status, const char* call, const char* file, int line) {
  const auto s = static_cast<cublasStatus_t>(status);
  std::string msg = fmt::format("cuBLAS error: {} ({}) in {} at {}:{}", cublasGetStatusString(s),
                                cublasGetStatusName(s), call, file, line);
  if (s == CUBLAS_STATUS_ALLOC_FAILED) throw OutOfMemoryError(msg);
  throw DeviceError(msg);
}

}  // namespace detail
}  // namespace anatomy::cuda
