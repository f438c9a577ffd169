// cuda::record_stream (see record_stream.h).
#include "anatomy/backends/cuda/memory/record_stream.h"

#include "anatomy/backends/cuda/memory/cuda_allocator.h"
#include "anatomy/backends/cuda/memory/cuda_memory_provider.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/core/error.h"

namespace anatomy::cuda {

void record_stream(const Tensor& tensor, const Stream& stream) {
  ANATOMY_CHECK(tensor.defined(), ValueError, "record_stream: the tensor is undefined");
  ANATOMY_CHECK(tensor.is_cuda(), DeviceError, "record_stream: expected a CUDA tensor, got one on {}",
                tensor.device().str());
  const int device = resolve_device_index(tensor.device(), "record_stream");
  ANATOMY_CHECK(stream.device_index() == device, DeviceError,
                "record_stream: the tensor is on cuda:{} but the stream is {}", device, stream.str());
  const Storage& storage = tensor.storage();
  if (!storage || storage->allocator() != cuda_allocator() || storage->data() == nullptr) return;
  record_stream_use(storage->data(), stream_id(stream.handle()), device);
}

}  // namespace anatomy::cuda
