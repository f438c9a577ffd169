// The per-device report slots of Note [Bad indices on the device] (index_error.h) and the host
// side that raises what a kernel reported.
#include "anatomy/backends/cuda/runtime/index_error.h"

#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <mutex>

#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/backends/cuda/runtime/index_error_host.h"
#include "anatomy/core/error.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy::cuda {
namespace {

constexpr int kMaxDevices = 64;

struct Slot {
  std::once_flag made;
  int32_t* claim = nullptr;
  IndexErrorRecord* record = nullptr;         // the host's address
  IndexErrorRecord* device_record = nullptr;  // the device's address of the same memory
  std::atomic<bool> ready{false};
};

std::array<Slot, kMaxDevices>& slots() {
  static std::array<Slot, kMaxDevices> s;  // never destroyed: kernels may report until exit
  return s;
}

std::atomic<bool> g_released{false};

// Gives the slots' memory back before the CUDA runtime tears down (registered after the runtime's
// own exit hook, so it runs first), so that leak checkers see every allocation freed. A sink asked
// for after this raises instead of handing out freed memory.
void release_at_exit() {
  g_released.store(true, std::memory_order_release);
  for (int device = 0; device < kMaxDevices; ++device) {
    Slot& s = slots()[device];
    if (!s.ready.exchange(false, std::memory_order_acq_rel)) continue;
    cudaFree(s.claim);  // errors ignored: the process is ending either way
    cudaFreeHost(s.record);
    s.claim = nullptr;
    s.record = s.device_record = nullptr;
  }
}

Slot& slot(int device) {
  ANATOMY_CHECK(device >= 0 && device < kMaxDevices, DeviceError, "index_error_sink: device {} is out of range",
                device);
  Slot& s = slots()[device];
  std::call_once(s.made, [&] {
    DeviceGuard guard(device);
    void* record = nullptr;
    ANATOMY_CUDA_CHECK(cudaHostAlloc(&record, sizeof(IndexErrorRecord), cudaHostAllocMapped | cudaHostAllocPortable));
    *static_cast<IndexErrorRecord*>(record) = IndexErrorRecord{};
    void* claim = nullptr;
    ANATOMY_CUDA_CHECK(cudaMalloc(&claim, sizeof(int32_t)));
    ANATOMY_CUDA_CHECK(cudaMemset(claim, 0, sizeof(int32_t)));
    s.claim = static_cast<int32_t*>(claim);
    s.record = static_cast<IndexErrorRecord*>(record);
    void* device_record = nullptr;
    ANATOMY_CUDA_CHECK(cudaHostGetDevicePointer(&device_record, record, 0));
    s.device_record = static_cast<IndexErrorRecord*>(device_record);
    s.ready.store(true, std::memory_order_release);
    static const bool hooked = std::atexit(&release_at_exit) == 0;
    (void)hooked;
  });
  ANATOMY_CHECK(!g_released.load(std::memory_order_acquire), DeviceError,
                "index_error_sink: called for cuda:{} after the process began to exit", device);
  return s;
}

}  // namespace

IndexErrorSink index_error_sink(int device, const char* op, int32_t* call_flag) {
  Slot& s = slot(device);
  IndexErrorSink sink;
  sink.claim = s.claim;
  sink.record = s.device_record;
  sink.call_flag = call_flag;
  sink.op = reinterpret_cast<uint64_t>(op);
  return sink;
}

void raise_pending_index_error(int device) {
  if (device < 0 || device >= kMaxDevices) return;
  Slot& s = slots()[device];
  if (!s.ready.load(std::memory_order_acquire)) return;  // no kernel there has had a sink
  volatile IndexErrorRecord* r = s.record;
  if (r->raised == 0) return;
  const IndexErrorRecord seen{1, r->kind, r->op, r->value, r->bound, r->dim};
  r->raised = 0;
  {
    // Release the claim behind the work already queued, so the next bad index reports again.
    DeviceGuard guard(device);
    ANATOMY_CUDA_CHECK(cudaMemsetAsync(s.claim, 0, sizeof(int32_t), current_stream()));
  }
  const char* op = reinterpret_cast<const char*>(seen.op);
  const std::string where = fmt::format(
      " (found by a kernel on cuda:{} and raised at the first wait for the device after it; results computed "
      "since then are not reliable)",
      device);
  if (seen.kind == IndexErrorKind::ClassOutOfRange) {
    throw ValueError(
        fmt::format("{}: class value {} is out of range for num_classes {}{}", op, seen.value, seen.bound, where));
  }
  throw IndexError(fmt::format("{}: index {} is out of bounds for dimension {} with size {}{}", op, seen.value,
                               seen.dim, seen.bound, where));
}

Tensor make_call_flag(int device) {
  Tensor flag = empty({1}, TensorOptions().dtype(DType::Int32).device(Device(DeviceType::CUDA, device)));
  DeviceGuard guard(device);
  ANATOMY_CUDA_CHECK(cudaMemsetAsync(flag.data_ptr(), 0, sizeof(int32_t), current_stream()));
  return flag;
}

}  // namespace anatomy::cuda
