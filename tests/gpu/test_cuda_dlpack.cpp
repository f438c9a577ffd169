// DLPack on a GPU (interop/dlpack.h): CUDA tensors both ways with their device index, pinned
// host memory (kDLCUDAHost) imported as a CPU tensor, and the stream handshake making a
// consumer's stream wait for the producer's without the host waiting.
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <cstdint>
#include <iostream>
#include <vector>

#include "anatomy/anatomy.h"
#include "anatomy/cuda.h"
#include "anatomy/interop/dlpack.h"
#include "gpu_test_util.h"
#include "stream_gate.h"

using namespace anatomy;
using gpu_test::same_values;

namespace {

// The devices a test runs on: cuda:0, and cuda:1 where there is one (an index other than 0).
std::vector<int> test_devices() { return cuda::device_count() > 1 ? std::vector<int>{0, 1} : std::vector<int>{0}; }

std::intptr_t protocol_value(const cuda::Stream& stream) { return reinterpret_cast<std::intptr_t>(stream.handle()); }

}  // namespace

TEST_CASE("cuda dlpack: a CUDA tensor round-trips on its device without a copy") {
  ANATOMY_REQUIRE_GPU();
  for (int d : test_devices()) {
    CAPTURE(d);
    const Device device(DeviceType::CUDA, static_cast<Device::Index>(d));
    const Tensor t = randn({5, 6}, TensorOptions().device(device));
    const Tensor v = t.t().slice(1, 1, std::nullopt, 2);  // strided, at an offset
    DLManagedTensorVersioned* m = interop::to_dlpack_versioned(v);
    const DLTensor& dl = m->dl_tensor;
    CHECK(dl.device.device_type == kDLCUDA);
    CHECK(dl.device.device_id == d);
    CHECK(dl.data == v.data_ptr());
    CHECK(dl.byte_offset == 0);
    REQUIRE(dl.ndim == 2);
    CHECK(dl.strides[0] == v.stride(0));
    CHECK(dl.strides[1] == v.stride(1));
    const Tensor u = interop::from_dlpack(m);
    CHECK(u.device() == device);
    CHECK(u.data_ptr() == v.data_ptr());
    CHECK(u.strides() == v.strides());
    CHECK(same_values(u, v));
    // The legacy ABI, and a kernel writing through the import.
    const Tensor w = interop::from_dlpack(interop::to_dlpack(t));
    w.mul_(2);
    CHECK(same_values(t, w));
    CHECK(t.device() == device);
  }
}

TEST_CASE("cuda dlpack: a tensor on \"cuda\" without an index exports the current device") {
  ANATOMY_REQUIRE_GPU();
  for (int d : test_devices()) {
    CAPTURE(d);
    const Tensor t = ones({4}, TensorOptions().device(Device(DeviceType::CUDA, static_cast<Device::Index>(d))));
    cuda::DeviceGuard guard(d);
    // Memory of the current device, described without an index (from_blob over "cuda").
    const Tensor bare = from_blob(t.data_ptr(), {4}, TensorOptions().device(Device("cuda")));
    REQUIRE_FALSE(bare.device().has_index());
    DLManagedTensor* m = interop::to_dlpack(bare);
    CHECK(m->dl_tensor.device.device_type == kDLCUDA);
    CHECK(m->dl_tensor.device.device_id == d);
    m->deleter(m);
  }
}

TEST_CASE("cuda dlpack: pinned host memory is kDLCPU on export and a pinned CPU tensor on import") {
  ANATOMY_REQUIRE_GPU();
  const Tensor pinned = cuda::pin_memory(arange(6, TensorOptions().dtype(DType::Float32)));
  REQUIRE(cuda::is_pinned(pinned));
  DLManagedTensor* m = interop::to_dlpack(pinned);
  CHECK(m->dl_tensor.device.device_type == kDLCPU);
  // The same memory as a producer that says what it is: page-locked memory of CUDA's.
  m->dl_tensor.device = DLDevice{kDLCUDAHost, 0};
  const Tensor u = interop::from_dlpack(m);
  CHECK(u.device() == kCPU);
  CHECK(u.data_ptr() == pinned.data_ptr());
  CHECK(cuda::is_pinned(u));
  // Pinned, it copies to the device without the host waiting.
  Tensor dev = empty({6}, TensorOptions().device(gpu_test::kCuda));
  dev.copy_(u, /*non_blocking=*/true);
  cuda::synchronize();
  CHECK(same_values(dev, pinned));
}

TEST_CASE("cuda dlpack: a kDLCUDA import of a device that does not exist is a DeviceError") {
  ANATOMY_REQUIRE_GPU();
  const Tensor t = ones({2}, TensorOptions().device(gpu_test::kCuda));
  DLManagedTensor* m = interop::to_dlpack(t);
  m->dl_tensor.device.device_id = cuda::device_count();
  CHECK_THROWS_WITH_AS(interop::from_dlpack(m), doctest::Contains("from_dlpack: dl_tensor.device.device_id is"),
                       DeviceError);
  m->dl_tensor.device.device_id = 0;
  CHECK(interop::from_dlpack(m).device() == gpu_test::kCuda);  // the refused tensor was still the caller's
}

TEST_CASE("cuda dlpack: order_for_consumer makes the consumer's stream wait, the host never") {
  ANATOMY_REQUIRE_GPU();
  const cuda::Stream producer = cuda::get_stream_from_pool();
  cuda::Stream consumer = cuda::get_stream_from_pool();
  if (consumer == producer) consumer = cuda::get_stream_from_pool();
  const cuda::Stream bystander = cuda::get_stream_from_pool();
  const cuda::Stream per_thread(0, reinterpret_cast<cuda::StreamHandle>(uintptr_t{2}));  // cudaStreamPerThread
  REQUIRE(per_thread.handle() == cudaStreamPerThread);

  cuda::StreamGuard guard(producer);  // the tensor's work is queued on `producer`
  const Tensor t = zeros({1024}, TensorOptions().device(gpu_test::kCuda));
  // Each consumer as the protocol spells it: a stream of the consumer's own, the legacy default
  // stream (1) and the per-thread default stream (2).
  const std::vector<std::pair<std::intptr_t, cuda::Stream>> consumers = {
      {protocol_value(consumer), consumer}, {1, cuda::default_stream(0)}, {2, per_thread}};
  for (const auto& [value, stream] : consumers) {
    CAPTURE(value);
    gpu_test::StreamGate gate(producer.handle());  // holds the producer's queue until opened
    t.fill_(1.0);                                  // queued behind the gate
    interop::order_for_consumer(t, value);         // returns at once: nothing waits on the host
    cuda::Event consumed;
    consumed.record(stream);
    CHECK_FALSE(consumed.query());  // the consumer's stream waits for the gated producer
    // A stream that was not ordered runs on.
    cuda::Event free_running;
    free_running.record(bystander);
    bystander.synchronize();
    CHECK(free_running.query());
    // -1 asks for no ordering: the bystander is still not held.
    interop::order_for_consumer(t, -1);
    interop::order_for_consumer(t, protocol_value(producer));  // the current stream: already in order
    gate.open();
    consumed.synchronize();
    CHECK(consumed.query());
  }
  CHECK(t.sum().item<float>() == 1024.0f);
}

TEST_CASE("cuda dlpack: order_after_producer makes the current stream wait for the producer's, the host never") {
  ANATOMY_REQUIRE_GPU();
  const cuda::Stream producer = cuda::get_stream_from_pool();
  cuda::Stream consumer = cuda::get_stream_from_pool();
  if (consumer == producer) consumer = cuda::get_stream_from_pool();
  const Tensor t = zeros({1024}, TensorOptions().device(gpu_test::kCuda));
  // The current stream here is `consumer`; the producer is a stream of its own, then the legacy
  // default stream as CUDA spells it (0) and as the protocol does (1).
  cuda::StreamGuard guard(consumer);
  const std::vector<std::pair<std::intptr_t, cuda::Stream>> producers = {
      {protocol_value(producer), producer}, {0, cuda::default_stream(0)}, {1, cuda::default_stream(0)}};
  for (const auto& [value, stream] : producers) {
    CAPTURE(value);
    gpu_test::StreamGate gate(stream.handle());  // holds the producer's queue until opened
    interop::order_after_producer(t, value);     // returns at once: nothing waits on the host
    cuda::Event consumed;
    consumed.record(consumer);
    CHECK_FALSE(consumed.query());                               // the current stream waits for the gated producer
    interop::order_after_producer(t, protocol_value(consumer));  // the current stream: already in order
    gate.open();
    consumed.synchronize();
    CHECK(consumed.query());
  }
  CHECK_THROWS_AS(interop::order_after_producer(t, -1), ValueError);
  // A CPU tensor has no stream to order.
  CHECK_NOTHROW(interop::order_after_producer(ones({2}), protocol_value(producer)));
}

TEST_CASE("cuda dlpack: order_for_consumer refuses a stream it cannot use") {
  ANATOMY_REQUIRE_GPU();
  const Tensor t = ones({2}, TensorOptions().device(Device("cuda:0")));
  // 0 names no stream in the protocol (1 is the legacy default), and below -1 nothing.
  CHECK_THROWS_AS(interop::order_for_consumer(t, 0), ValueError);
  CHECK_THROWS_AS(interop::order_for_consumer(t, -2), ValueError);
  if (cuda::device_count() < 2) return;  // a stream of another device needs a second device
  const cuda::Stream other = cuda::get_stream_from_pool(false, 1);
  CHECK_THROWS_AS(interop::order_for_consumer(t, protocol_value(other)), DeviceError);
}
