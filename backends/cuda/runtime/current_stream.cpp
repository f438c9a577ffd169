// The per-thread, per-device current streams and StreamGuard (see current_stream.h).
#include "anatomy/backends/cuda/runtime/current_stream.h"

#include <array>
#include <memory>

#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/core/error.h"
#include "anatomy/core/macros.h"

namespace anatomy::cuda {
namespace {

constexpr int kMaxDevices = 64;

// A thread's current stream per device; nullptr stands for the default stream. The array is
// made the first time the thread sets a stream and is absent (every device on the default
// stream) before: on the heap, because 512 bytes of thread_local would count against the few
// hundred bytes of static TLS a dlopen'd libanatomy may have (core/macros.h, ANATOMY_TLS_FAST).
struct ThreadStreams {
  std::array<cudaStream_t, kMaxDevices> streams{};
};
thread_local std::unique_ptr<ThreadStreams> t_streams;

// The thread's stream of `device` (valid), without making the array.
cudaStream_t thread_stream(int device) noexcept { return t_streams ? t_streams->streams[device] : nullptr; }
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

// Makes the thread's array (the first time a stream other than the default is set).
void make_thread_streams() {
  if (!t_streams) t_streams = std::make_unique<ThreadStreams>();
}

// `device` is valid, and the array exists unless `handle` is the default stream. Cannot fail,
// so StreamGuard can restore from its destructor.
void set_thread_stream(int device, cudaStream_t handle) noexcept {
  const cudaStream_t value = handle == cudaStreamLegacy ? nullptr : handle;
  if (!t_streams) return;  // only the default stream was ever set: nothing to record
  cudaStream_t& slot = t_streams->streams[device];
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
  const cudaStream_t s = device >= 0 && device < kMaxDevices ? thread_stream(device) : nullptr;
  return s != nullptr ? s : cudaStreamLegacy;
}

Stream current_stream(int device) {
  device = checked_device(device, "current_stream");
  return Stream(device, thread_stream(device));  // nullptr: the default stream
}

bool default_streams_current() noexcept { return t_non_default == 0; }

void set_current_stream(const Stream& stream) {
  const int device = stream_device(stream, "set_current_stream");
  make_thread_streams();
  set_thread_stream(device, stream.handle());
}

StreamGuard::StreamGuard(const Stream& stream)
    : device_guard_(stream_device(stream, "StreamGuard")),
      original_(current_stream(stream.device_index())),
      current_(stream) {
  make_thread_streams();
  set_thread_stream(stream.device_index(), stream.handle());
}

StreamGuard::~StreamGuard() { set_thread_stream(original_.device_index(), original_.handle()); }

}  // namespace anatomy::cuda
