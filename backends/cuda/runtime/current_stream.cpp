// The per-thread, per-device current streams and StreamGuard (see current_stream.h).
#include "anatomy/backends/cuda/runtime/current_stream.h"

#include <array>

#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/core/error.h"
#include "anatomy/core/macros.h"

namespace anatomy::cuda {
namespace {

constexpr int kMaxDevices = 64;

// A thread's current stream per device; nullptr stands for the default stream, so a thread
// starts with the default everywhere without any initialization. constinit: zero-initialized
// at load, no guard on access.
struct ThreadStreams {
  std::array<cudaStream_t, kMaxDevices> streams{};
};
constinit thread_local ThreadStreams t_streams;
// How many devices have another stream than the default current: while 0 (most threads, always)
// the answer is the default stream without reading t_streams. Apart, and in the initial-exec
// model (a few bytes), so that this first read costs no call to __tls_get_addr.
constinit thread_local int t_non_default ANATOMY_TLS_FAST = 0;

int checked_device(int device, const char* op) {
  device = resolve_device_index(device, op);
  ANATOMY_CHECK(device < kMaxDevices, DeviceError, "{}: device index {} is beyond the {} supported", op, device,
                kMaxDevices);
  return device;
}

// The device of a Stream someone built: it must name one (a Stream is never "the current device").
int stream_device(const Stream& stream, const char* op) {
  ANATOMY_CHECK(stream.device_index() >= 0, DeviceError, "{}: the stream names no device ({})", op, stream.str());
  return checked_device(stream.device_index(), op);
}

// `device` is valid. Cannot fail, so StreamGuard can restore from its destructor.
void set_thread_stream(int device, cudaStream_t handle) noexcept {
  cudaStream_t& slot = t_streams.streams[device];
  const cudaStream_t value = handle == cudaStreamLegacy ? nullptr : handle;
  t_non_default += (value != nullptr) - (slot != nullptr);
  slot = value;
}

}  // namespace

cudaStream_t current_stream() {
  // The common case, and the only one before a thread sets a stream: the default stream, which
  // is the same handle on every device, so the current device does not matter.
  if (t_non_default == 0) return cudaStreamLegacy;
  return current_stream_handle(current_device());
}

cudaStream_t current_stream_handle(int device) noexcept {
  if (t_non_default == 0) return cudaStreamLegacy;
  const cudaStream_t s = device >= 0 && device < kMaxDevices ? t_streams.streams[device] : nullptr;
  return s != nullptr ? s : cudaStreamLegacy;
}

Stream current_stream(int device) {
  device = checked_device(device, "current_stream");
  return Stream(device, t_streams.streams[device]);  // nullptr: the default stream
}

void set_current_stream(const Stream& stream) {
  set_thread_stream(stream_device(stream, "set_current_stream"), stream.handle());
}

StreamGuard::StreamGuard(const Stream& stream)
    : device_guard_(stream_device(stream, "StreamGuard")),
      original_(current_stream(stream.device_index())),
      current_(stream) {
  set_thread_stream(stream.device_index(), stream.handle());
}

StreamGuard::~StreamGuard() { set_thread_stream(original_.device_index(), original_.handle()); }

}  // namespace anatomy::cuda
