// The stream handshake of DLPack's Python protocol: order_for_consumer (interop/dlpack.h). The
// consumer's stream waits for the producer's current stream through an event, on the device;
// the host never waits.
#include <cstdint>

#include "anatomy/cuda.h"
#include "anatomy/interop/dlpack.h"

namespace anatomy::interop {
namespace {

// The protocol's spellings of a CUDA stream (the array API's __dlpack__): -1 asks for no
// ordering, 1 is the legacy default stream, 2 the per-thread default stream (CUDA's
// cudaStreamPerThread handle is 0x2), and 0 is refused as ambiguous.
constexpr std::intptr_t kNoOrdering = -1;
constexpr std::intptr_t kPerThreadDefaultStream = 2;

}  // namespace

void order_for_consumer(const Tensor& t, std::intptr_t consumer_stream) {
  ANATOMY_CHECK(t.defined(), ValueError, "order_for_consumer: the tensor is undefined");
  if (!t.is_cuda() || consumer_stream == kNoOrdering) return;
  ANATOMY_CHECK(consumer_stream > 0, ValueError,
                "order_for_consumer: stream {} is not one the protocol allows for CUDA (-1, 1 for the legacy default "
                "stream, 2 for the per-thread default stream, or a cudaStream_t; 0 is ambiguous)",
                consumer_stream);
  const int device = t.device().has_index() ? t.device().index() : cuda::current_device();
  const cuda::Stream producer = cuda::current_stream(device);
  const auto handle = reinterpret_cast<cuda::StreamHandle>(consumer_stream);
  if (producer.handle() == handle) return;  // one queue: already in order
  // The two default streams are handles of every device; any other is the consumer's own
  // stream, which external_stream checks belongs to the tensor's device.
  const cuda::Stream consumer =
      consumer_stream <= kPerThreadDefaultStream ? cuda::Stream(device, handle) : cuda::external_stream(handle, device);
  consumer.wait_stream(producer);
}

}  // namespace anatomy::interop
