// The stream handshake of DLPack's Python protocol: order_for_consumer and order_after_producer
// (interop/dlpack.h). The consumer's stream waits for the producer's through an event, on the
// device; the host never waits.
#include <cstdint>

#include "anatomy/cuda.h"
#include "anatomy/interop/dlpack.h"

namespace anatomy::interop {
namespace {

// The protocol's spellings of a CUDA stream (the array API's __dlpack__): -1 asks for no
// ordering, 1 is the legacy default stream, 2 the per-thread default stream (CUDA's
// cudaStreamPerThread handle is 0x2), and 0 is refused as ambiguous.
constexpr std::intptr_t kNoOrdering = -1;
constexpr std::intptr_t kLegacyDefaultStream = 1;
constexpr std::intptr_t kPerThreadDefaultStream = 2;

int device_of(const Tensor& t) { return t.device().has_index() ? t.device().index() : cuda::current_device(); }

// A stream named by its protocol spelling: the two default streams are handles of every device;
// any other is someone's own stream, which external_stream checks belongs to `device`.
cuda::Stream stream_of(std::intptr_t spelled, int device) {
  const auto handle = reinterpret_cast<cuda::StreamHandle>(spelled);
  return spelled <= kPerThreadDefaultStream ? cuda::Stream(device, handle) : cuda::external_stream(handle, device);
}

}  // namespace

void order_for_consumer(const Tensor& t, std::intptr_t consumer_stream) {
  ANATOMY_CHECK(t.defined(), ValueError, "order_for_consumer: the tensor is undefined");
  if (!t.is_cuda() || consumer_stream == kNoOrdering) return;
  ANATOMY_CHECK(consumer_stream > 0, ValueError,
                "order_for_consumer: stream {} is not one the protocol allows for CUDA (-1, 1 for the legacy default "
                "stream, 2 for the per-thread default stream, or a cudaStream_t; 0 is ambiguous)",
                consumer_stream);
  const int device = device_of(t);
  const cuda::Stream producer = cuda::current_stream(device);
  if (producer.handle() == reinterpret_cast<cuda::StreamHandle>(consumer_stream)) return;  // one queue: in order
  stream_of(consumer_stream, device).wait_stream(producer);
}

void order_after_producer(const Tensor& t, std::intptr_t producer_stream) {
  ANATOMY_CHECK(t.defined(), ValueError, "order_after_producer: the tensor is undefined");
  if (!t.is_cuda()) return;
  ANATOMY_CHECK(producer_stream >= 0, ValueError,
                "order_after_producer: stream {} is not a CUDA stream (0 or 1 for the legacy default stream, 2 for "
                "the per-thread default stream, or a cudaStream_t)",
                producer_stream);
  // CUDA spells the legacy default stream 0 (the null stream) as well as 1 (cudaStreamLegacy).
  if (producer_stream == 0) producer_stream = kLegacyDefaultStream;
  const int device = device_of(t);
  const cuda::Stream consumer = cuda::current_stream(device);
  if (consumer.handle() == reinterpret_cast<cuda::StreamHandle>(producer_stream)) return;  // one queue: in order
  consumer.wait_stream(stream_of(producer_stream, device));
}

}  // namespace anatomy::interop
