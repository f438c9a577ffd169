// StreamGate: a host function queued on a stream that holds the stream until the test opens the
// gate, so work queued after it waits however fast the device is. Tests that need "this copy or
// kernel is still queued" use it instead of keeping the device busy with large products, which a
// fast device or a slow host can finish early.
#pragma once

#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <atomic>
#include <thread>

namespace anatomy::gpu_test {

class StreamGate {
 public:
  explicit StreamGate(cudaStream_t stream) { REQUIRE(cudaLaunchHostFunc(stream, &wait, this) == cudaSuccess); }
  StreamGate(const StreamGate&) = delete;
  StreamGate& operator=(const StreamGate&) = delete;
  // Opens the gate if the test did not, and waits for the host function to return, so it never
  // reads a gate that is gone. No CUDA call: the test may have destroyed the stream by now.
  ~StreamGate() {
    open();
    while (!done_.load()) std::this_thread::yield();
  }
  void open() { open_.store(true); }

 private:
  static void CUDART_CB wait(void* self) {
    // A host function must not call CUDA; it only waits for the flag.
    auto* gate = static_cast<StreamGate*>(self);
    while (!gate->open_.load()) std::this_thread::yield();
    gate->done_.store(true);
  }
  std::atomic<bool> open_{false};
  std::atomic<bool> done_{false};
};

}  // namespace anatomy::gpu_test
