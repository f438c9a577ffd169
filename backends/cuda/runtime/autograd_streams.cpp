// The CUDA streams behind core's DeviceStreams (core/device_streams.h), registered when the
// library loads: through them the autograd engine runs each node's backward on its forward's
// stream and orders the streams a backward uses (docs/autograd.md, "CUDA streams"). An id is
// the stream's cudaStream_t, 0 for the legacy default stream.
#include <cstdint>

#include "anatomy/backends/cuda/memory/record_stream.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/stream.h"
#include "anatomy/core/device_streams.h"

namespace anatomy::cuda {
namespace {

uint64_t id_of(const Stream& stream) { return stream.is_default() ? 0 : reinterpret_cast<uint64_t>(stream.handle()); }

Stream stream_of(Device device, uint64_t id) {
  return Stream(device.index(), id == 0 ? nullptr : reinterpret_cast<cudaStream_t>(id));
}

uint64_t current_stream_id(Device device) { return id_of(current_stream(device.index())); }

// The ids come from current_stream_id, so the device is valid and this cannot throw.
void set_current_stream_id(Device device, uint64_t id) noexcept { set_current_stream(stream_of(device, id)); }

void wait_stream_id(Device device, uint64_t waiter, uint64_t producer) {
  stream_of(device, waiter).wait_stream(stream_of(device, producer));
}

void record_stream_id(const Tensor& tensor, uint64_t id) { record_stream(tensor, stream_of(tensor.device(), id)); }

bool is_capturing(Device device) {
  const Stream s = current_stream(device.index());
  if (s.is_default()) return false;  // never captured; asking could break another thread's capture
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  ANATOMY_CUDA_CHECK(cudaStreamIsCapturing(s.handle(), &status));
  return status != cudaStreamCaptureStatusNone;
}

constexpr DeviceStreams kCudaStreams{&current_stream_id, &set_current_stream_id, &wait_stream_id, &record_stream_id,
                                     &is_capturing};

const bool registered = [] {
  set_device_streams(DeviceType::CUDA, &kCudaStreams);
  return true;
}();

}  // namespace
}  // namespace anatomy::cuda
