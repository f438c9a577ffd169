// GPU tests of pinned host memory (backends/cuda/memory/pinned_allocator.h): pin_memory / is_pinned,
// asynchronous copies in both directions, the size-class cache, and a freed block that a queued
// copy still reads not being handed out again before the copy is done.
#include <cuda_runtime_api.h>

#include <vector>

#include "anatomy/backends/cuda/memory/pinned_allocator.h"
#include "gpu_test_util.h"
#include "stream_gate.h"

using namespace anatomy;
using gpu_test::kCuda;
using gpu_test::same_values;

TEST_CASE("cuda pinned: pin_memory copies into page-locked memory, is_pinned tells them apart") {
  ANATOMY_REQUIRE_GPU();
  const Tensor t = randn({3, 5}).t();  // non-contiguous source
  const Tensor p = cuda::pin_memory(t);
  CHECK(p.is_cpu());
  CHECK(p.is_contiguous());
  CHECK(cuda::is_pinned(p));
  CHECK_FALSE(cuda::is_pinned(t));
  CHECK(same_values(p, t));
  CHECK_THROWS_AS(cuda::pin_memory(t.to(kCuda)), ValueError);
}

TEST_CASE("cuda pinned: a non_blocking copy from pinned memory returns before the device is done") {
  ANATOMY_REQUIRE_GPU();
  const TensorOptions cuda = TensorOptions().device(kCuda);
  const Tensor host = cuda::pin_memory(randn({1 << 20}));
  Tensor dev = empty({1 << 20}, cuda);
  cudaEvent_t done = nullptr;
  REQUIRE(cudaEventCreateWithFlags(&done, cudaEventDisableTiming) == cudaSuccess);
  gpu_test::StreamGate gate(cudaStreamLegacy);  // the stream waits until the gate opens
  dev.copy_(host, /*non_blocking=*/true);
  REQUIRE(cudaEventRecord(done, cudaStreamLegacy) == cudaSuccess);
  // The host is back while the copy is still queued behind the gate.
  CHECK(cudaEventQuery(done) == cudaErrorNotReady);
  cudaGetLastError();
  gate.open();
  cuda::synchronize();
  CHECK(same_values(dev, host));
  // Back to pinned memory without waiting, read after a synchronize.
  Tensor back = cuda::pin_memory(zeros({1 << 20}));
  back.copy_(dev * 2, /*non_blocking=*/true);
  cuda::synchronize();
  CHECK(same_values(back, host * 2));
  cudaEventDestroy(done);
}

TEST_CASE("cuda pinned: a freed block is reused only after the copies that used it are done") {
  ANATOMY_REQUIRE_GPU();
  const cuda::PinnedMemoryStats before = cuda::pinned_memory_stats();
  void* first = nullptr;
  Tensor dev = empty({1 << 18}, TensorOptions().device(kCuda));
  gpu_test::StreamGate gate(cudaStreamLegacy);  // holds the stream: the copy below stays queued
  {
    Tensor host = cuda::pin_memory(ones({1 << 18}));
    first = host.data_ptr();
    dev.copy_(host, /*non_blocking=*/true);
  }  // host freed while its copy is still queued
  Tensor again = cuda::pin_memory(zeros({1 << 18}));
  CHECK(again.data_ptr() != first);  // the queued copy's block is not handed out
  gate.open();
  cuda::synchronize();
  CHECK(gpu_test::values_of(dev.sum()) == std::vector<double>{double(1 << 18)});
  const int64_t host_allocs = cuda::pinned_memory_stats().host_allocs;
  Tensor third = cuda::pin_memory(zeros({1 << 18}));
  // Its copy done, the first block is back in the cache: no new page-locked allocation.
  CHECK(cuda::pinned_memory_stats().host_allocs == host_allocs);
  const cuda::PinnedMemoryStats after = cuda::pinned_memory_stats();
  CHECK(after.allocations >= before.allocations + 3);
  CHECK(after.reserved_bytes >= after.allocated_bytes);
}
