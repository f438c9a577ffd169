// GPU tests of the backend:cudaMallocAsync allocator (backends/cuda/memory/async_allocator.h). The backend
// is chosen at a device's first allocation and this binary allocates through the caching allocator,
// so most tests use an AsyncAllocator of their own over the device's default memory pool: data
// round trips, the stats follow allocations (and the pool's reserved and used memory),
// record_stream makes a free wait for a busy stream, empty_cache trims the pool, and an impossible
// request throws OutOfMemoryError and the next one works, and the memory history records
// allocations and frees with the operator. The wiring test checks the device's
// allocator against the setting; tests/CMakeLists.txt runs it a second time in a process of its own
// with ANATOMY_CUDA_ALLOC_CONF=backend:cudaMallocAsync, where tensors get their memory from it.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "anatomy/backends/cuda/memory/async_allocator.h"
#include "anatomy/backends/cuda/memory/cuda_allocator.h"
#include "anatomy/backends/cuda/memory/cuda_memory_provider.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/dispatch/current_op.h"
#include "gpu_test_util.h"
#include "stream_gate.h"

using namespace anatomy;
using alloc::StatType;
using gpu_test::kCuda;

namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

cudaStream_t new_stream() {
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  return s;
}

std::vector<unsigned char> read_back(const void* ptr, size_t n) {
  std::vector<unsigned char> host(n);
  REQUIRE(cudaMemcpy(host.data(), ptr, n, cudaMemcpyDeviceToHost) == cudaSuccess);
  return host;
}

bool all_bytes(const std::vector<unsigned char>& bytes, unsigned char value) {
  for (unsigned char b : bytes) {
    if (b != value) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("cuda async allocator: data round trips through stream-ordered memory") {
  ANATOMY_REQUIRE_GPU();
  cuda::AsyncAllocator a(0);
  CHECK(a.device() == kCuda);
  {
    DataPtr p = a.allocate(4096);  // on the current stream
    REQUIRE(p.get() != nullptr);
    CHECK(p.device() == kCuda);
    std::vector<unsigned char> pattern(4096);
    for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<unsigned char>(i * 7 + 3);
    REQUIRE(cudaMemcpy(p.get(), pattern.data(), pattern.size(), cudaMemcpyHostToDevice) == cudaSuccess);
    CHECK(read_back(p.get(), pattern.size()) == pattern);
  }
  CHECK(a.allocate(0).get() == nullptr);
  // On a stream of its own: written and read in that stream's order.
  cudaStream_t s = new_stream();
  void* q = a.raw_alloc(3 * kMiB, cuda::stream_id(s));
  REQUIRE(q != nullptr);
  REQUIRE(cudaMemsetAsync(q, 0x5a, 3 * kMiB, s) == cudaSuccess);
  std::vector<unsigned char> host(3 * kMiB);
  REQUIRE(cudaMemcpyAsync(host.data(), q, host.size(), cudaMemcpyDeviceToHost, s) == cudaSuccess);
  a.raw_free(q);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(all_bytes(host, 0x5a));
  CHECK_THROWS_AS(a.raw_free(q), ValueError);  // already freed
  CHECK(cudaStreamDestroy(s) == cudaSuccess);
}

TEST_CASE("cuda async allocator: the stats follow allocations and the pool") {
  ANATOMY_REQUIRE_GPU();
  cuda::AsyncAllocator a(0);
  a.empty_cache();
  a.reset_peak_stats();
  const alloc::MemoryStats s0 = a.stats();
  void* small = a.raw_alloc(1000, 0);
  void* large = a.raw_alloc(64 * kMiB, 0);
  const alloc::MemoryStats s1 = a.stats();
  CHECK(s1.allocation[StatType::All].current == s0.allocation[StatType::All].current + 2);
  CHECK(s1.allocation[StatType::Small].current == s0.allocation[StatType::Small].current + 1);
  CHECK(s1.allocation[StatType::Large].current == s0.allocation[StatType::Large].current + 1);
  const int64_t bytes = 1000 + 64 * kMiB;
  CHECK(s1.allocated_bytes[StatType::All].current == s0.allocated_bytes[StatType::All].current + bytes);
  CHECK(s1.allocated_bytes[StatType::Small].current == s0.allocated_bytes[StatType::Small].current + 1000);
  CHECK(s1.requested_bytes[StatType::All].current == s0.requested_bytes[StatType::All].current + bytes);
  CHECK(s1.num_provider_allocs == s0.num_provider_allocs + 2);
  // The pool holds at least what it handed out, and counts it as used.
  CHECK(s1.reserved_bytes[StatType::All].current >= s0.reserved_bytes[StatType::All].current + 64 * kMiB);
  CHECK(s1.reserved_bytes[StatType::All].peak >= s1.reserved_bytes[StatType::All].current);
  CHECK(s1.active_bytes[StatType::All].current >= s0.active_bytes[StatType::All].current + bytes);

  a.raw_free(large);
  a.raw_free(small);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);  // the frees are reached in stream order
  const alloc::MemoryStats s2 = a.stats();
  CHECK(s2.allocation[StatType::All].current == s0.allocation[StatType::All].current);
  CHECK(s2.allocated_bytes[StatType::All].current == s0.allocated_bytes[StatType::All].current);
  CHECK(s2.allocated_bytes[StatType::All].peak >= s0.allocated_bytes[StatType::All].current + bytes);
  CHECK(s2.allocated_bytes[StatType::All].freed == s0.allocated_bytes[StatType::All].freed + bytes);
  CHECK(s2.num_provider_frees == s0.num_provider_frees + 2);
  CHECK(s2.active_bytes[StatType::All].current == s0.active_bytes[StatType::All].current);
  // The release threshold keeps freed memory in the pool across synchronizations.
  CHECK(s2.reserved_bytes[StatType::All].current >= s0.reserved_bytes[StatType::All].current + 64 * kMiB);

  a.reset_peak_stats();
  const alloc::MemoryStats s3 = a.stats();
  CHECK(s3.allocated_bytes[StatType::All].peak == s3.allocated_bytes[StatType::All].current);
  CHECK(s3.reserved_bytes[StatType::All].peak == s3.reserved_bytes[StatType::All].current);
  CHECK(s3.active_bytes[StatType::All].peak == s3.active_bytes[StatType::All].current);

  const std::string summary = a.memory_summary();
  CHECK(summary.find("backend:cudaMallocAsync") != std::string::npos);
  CHECK(summary.find("Allocated memory") != std::string::npos);
}

// The side stream is held at a gate, then writes 0xab into the block; the block is freed on its
// allocation stream after record_stream(side), allocated again there (the pool reuses it on the
// same stream) and set to 0x11. Only if the free waited for the side stream does 0x11 come last:
// without record_stream the side stream's write would land after it.
TEST_CASE("cuda async allocator: record_stream makes the free wait for a busy stream") {
  ANATOMY_REQUIRE_GPU();
  cuda::AsyncAllocator a(0);
  cudaStream_t home = new_stream(), side = new_stream();
  const size_t n = 2 * kMiB;
  void* p = a.raw_alloc(n, cuda::stream_id(home));
  REQUIRE(cudaMemsetAsync(p, 0, n, home) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(home) == cudaSuccess);  // the side stream may use p from here
  gpu_test::StreamGate gate(side);
  REQUIRE(cudaMemsetAsync(p, 0xab, n, side) == cudaSuccess);
  a.record_stream(p, cuda::stream_id(side));
  a.record_stream(p, cuda::stream_id(home));  // the allocation stream itself adds nothing
  a.raw_free(p);
  void* q = a.raw_alloc(n, cuda::stream_id(home));
  CHECK(q == p);  // same size, same stream: the pool hands the freed block back
  REQUIRE(cudaMemsetAsync(q, 0x11, n, home) == cudaSuccess);
  gate.open();
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(all_bytes(read_back(q, n), 0x11));
  a.raw_free(q);
  CHECK_THROWS_AS(a.record_stream(q, cuda::stream_id(side)), ValueError);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(cudaStreamDestroy(home) == cudaSuccess);
  CHECK(cudaStreamDestroy(side) == cudaSuccess);
}

TEST_CASE("cuda async allocator: empty_cache trims the pool's reserved memory") {
  ANATOMY_REQUIRE_GPU();
  cuda::AsyncAllocator a(0);
  a.empty_cache();
  const int64_t r0 = a.stats().reserved_bytes[StatType::All].current;
  void* p = a.raw_alloc(256 * kMiB, 0);
  a.raw_free(p);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const alloc::MemoryStats cached = a.stats();
  CHECK(cached.reserved_bytes[StatType::All].current >= r0 + 256 * kMiB);
  a.empty_cache();
  const alloc::MemoryStats trimmed = a.stats();
  CHECK(trimmed.reserved_bytes[StatType::All].current <= cached.reserved_bytes[StatType::All].current - 256 * kMiB);
  CHECK(trimmed.num_sync_all_streams == cached.num_sync_all_streams + 1);
}

// The sanitizer steps of gpu-check.sh leave this test out by its name ("driver refuses"): the
// failing cudaMallocAsync is what it tests.
TEST_CASE("cuda async allocator: a request the driver refuses throws OutOfMemoryError and the next works") {
  ANATOMY_REQUIRE_GPU();
  cuda::AsyncAllocator a(0);
  const alloc::MemoryStats s0 = a.stats();
  std::string message;
  try {
    (void)a.raw_alloc(size_t{1} << 50, 0);  // 1 PiB: no device has it
  } catch (const OutOfMemoryError& e) {
    message = e.what();
  }
  CHECK(message.find("backend:cudaMallocAsync") != std::string::npos);
  CHECK(message.find("Tried to allocate 1.00 PiB") != std::string::npos);
  CHECK(message.find("cuda:0") != std::string::npos);
  const alloc::MemoryStats s1 = a.stats();
  CHECK(s1.num_ooms == s0.num_ooms + 1);
  CHECK(s1.num_alloc_retries == s0.num_alloc_retries + 1);  // trimmed and tried once more
  CHECK(s1.allocation[StatType::All].current == s0.allocation[StatType::All].current);
  CHECK(s1.allocated_bytes[StatType::All].current == s0.allocated_bytes[StatType::All].current);
  void* p = a.raw_alloc(kMiB, 0);
  REQUIRE(cudaMemset(p, 0x3c, kMiB) == cudaSuccess);
  CHECK(all_bytes(read_back(p, kMiB), 0x3c));
  a.raw_free(p);

  // per_process_memory_fraction bounds what this allocator hands out, without asking the driver.
  size_t free_bytes = 0, total = 0;
  REQUIRE(cudaMemGetInfo(&free_bytes, &total) == cudaSuccess);
  alloc::AllocConf conf;
  conf.per_process_memory_fraction = 0.25;
  cuda::AsyncAllocator limited(0, conf);
  CHECK_THROWS_WITH_AS(limited.raw_alloc(total / 2, 0), doctest::Contains("per_process_memory_fraction 0.25"),
                       OutOfMemoryError);
  CHECK(limited.stats().num_provider_allocs == 0);
  void* r = limited.raw_alloc(kMiB, 0);
  CHECK(r != nullptr);
  limited.raw_free(r);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
}

bool same_name(const char* a, const char* b) { return a != nullptr && b != nullptr && std::strcmp(a, b) == 0; }

TEST_CASE("cuda async allocator: the memory history records allocations, frees and OOMs with the operator") {
  ANATOMY_REQUIRE_GPU();
  size_t free_bytes = 0, total = 0;
  REQUIRE(cudaMemGetInfo(&free_bytes, &total) == cudaSuccess);
  alloc::AllocConf conf;
  conf.per_process_memory_fraction = 0.25;  // an OOM without a failing driver call
  cuda::AsyncAllocator a(0, conf);
  cudaStream_t s = new_stream();
  const alloc::StreamId sid = cuda::stream_id(s);
  CHECK(a.memory_snapshot().trace.empty());  // off by default
  a.record_memory_history(true, 100);
  void* p = nullptr;
  {
    dispatch::CurrentOpScope op("aten::mm");
    p = a.raw_alloc(3 * kMiB, sid);
  }
  void* q = a.raw_alloc(1000, 0);

  alloc::MemorySnapshot snap = a.memory_snapshot();
  CHECK(snap.device == kCuda);
  CHECK(snap.segments.empty());  // the pool's segments are not visible
  CHECK(snap.trace_max_entries == 100);
  CHECK(snap.stats.allocation[StatType::All].current == 2);
  REQUIRE(snap.allocations.size() == 2);
  CHECK(std::less<void*>()(snap.allocations[0].ptr, snap.allocations[1].ptr));
  const alloc::AllocationInfo& ap = snap.allocations[0].ptr == p ? snap.allocations[0] : snap.allocations[1];
  const alloc::AllocationInfo& aq = snap.allocations[0].ptr == q ? snap.allocations[0] : snap.allocations[1];
  CHECK(ap.ptr == p);
  CHECK(ap.size == 3 * kMiB);
  CHECK(ap.stream == sid);
  CHECK(same_name(ap.op, "aten::mm"));
  CHECK(aq.ptr == q);
  CHECK(aq.size == 1000);
  CHECK(aq.op == nullptr);

  a.record_stream(p, 0);  // the free waits for the default stream: still both events at the free
  a.raw_free(p);
  CHECK_THROWS_AS(a.raw_alloc(total / 2, 0), OutOfMemoryError);
  snap = a.memory_snapshot();
  REQUIRE(snap.allocations.size() == 1);
  CHECK(snap.allocations[0].ptr == q);
  using alloc::TraceAction;
  const std::vector<TraceAction> actions{TraceAction::Alloc, TraceAction::Alloc, TraceAction::FreeRequested,
                                         TraceAction::FreeCompleted, TraceAction::Oom};
  REQUIRE(snap.trace.size() == actions.size());
  for (size_t i = 0; i < actions.size(); ++i) {
    CHECK(snap.trace[i].action == actions[i]);
    CHECK(snap.trace[i].seq == i);
  }
  CHECK(snap.trace[0].address == reinterpret_cast<uintptr_t>(p));
  CHECK(snap.trace[0].size == 3 * kMiB);
  CHECK(snap.trace[0].stream == sid);
  CHECK(same_name(snap.trace[0].op, "aten::mm"));
  CHECK(snap.trace[1].address == reinterpret_cast<uintptr_t>(q));
  CHECK(snap.trace[1].op == nullptr);
  for (size_t i : {size_t{2}, size_t{3}}) {
    CHECK(snap.trace[i].address == reinterpret_cast<uintptr_t>(p));
    CHECK(snap.trace[i].size == 3 * kMiB);
    CHECK(snap.trace[i].stream == sid);
  }
  CHECK(snap.trace[4].address == 0);
  CHECK(snap.trace[4].size == total / 2);
  const std::string json = alloc::to_json(snap);
  CHECK(json.find("\"allocations\"") != std::string::npos);
  CHECK(json.find("\"free_completed\"") != std::string::npos);
  CHECK(json.find("\"oom\"") != std::string::npos);

  // The ring keeps the last events: 3 allocate + free pairs are 9 events.
  a.record_memory_history(true, 3);
  for (int i = 0; i < 3; ++i) a.raw_free(a.raw_alloc(kMiB, sid));
  snap = a.memory_snapshot();
  REQUIRE(snap.trace.size() == 3);
  CHECK(snap.trace[0].seq == 6);
  CHECK(snap.trace[0].action == TraceAction::Alloc);
  CHECK(snap.trace[2].action == TraceAction::FreeCompleted);

  a.record_memory_history(false);
  a.raw_free(q);
  CHECK(a.memory_snapshot().trace.empty());
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(cudaStreamDestroy(s) == cudaSuccess);
}

// In this binary's usual run the device uses the caching allocator; run again with
// ANATOMY_CUDA_ALLOC_CONF=backend:cudaMallocAsync (a CTest entry of its own does), its tensors come
// from the stream-ordered allocator and the cuda:: functions report it.
TEST_CASE("cuda async allocator: the device allocator follows the backend setting") {
  ANATOMY_REQUIRE_GPU();
  const bool async = alloc::alloc_conf_from_env().backend == alloc::AllocBackend::CudaMallocAsync;
  Tensor first = ones({4}, TensorOptions().device(kCuda));  // the device's allocator exists from here
  if (!async) {
    CHECK(cuda::allocator_backend(0) == alloc::AllocBackend::Native);
    // The device's history functions reach the caching allocator.
    cuda::record_memory_history(true, 10, 0);
    { Tensor h = ones({4}, TensorOptions().device(kCuda)); }
    CHECK_FALSE(cuda::memory_snapshot(0).trace.empty());
    CHECK_FALSE(cuda::memory_snapshot(0).segments.empty());
    cuda::record_memory_history(false, 0, 0);
    CHECK_THROWS_WITH_AS(cuda::async_allocator(0), doctest::Contains("backend:native"), NotImplementedError);
    return;
  }
  CHECK(cuda::allocator_backend(0) == alloc::AllocBackend::CudaMallocAsync);
  cuda::AsyncAllocator& a = cuda::async_allocator(0);
  CHECK(cuda::memory_allocated(0) >= 16);
  cuda::reset_peak_memory_stats(0);
  const int64_t base = cuda::memory_allocated(0);
  {
    Tensor t = full({1 << 20}, 3.0, TensorOptions().device(kCuda));  // 4 MiB
    Tensor u = t + 1;
    Tensor big = empty({64 << 20}, TensorOptions().device(kCuda));  // 256 MiB
    CHECK(gpu_test::same_values(u, full({1 << 20}, 4.0)));
    const int64_t bytes = 8 * kMiB + 256 * kMiB;
    CHECK(cuda::memory_allocated(0) == base + bytes);
    CHECK(cuda::memory_stats(0).allocated_bytes[StatType::All].peak >= base + bytes);
    CHECK(cuda::memory_reserved(0) >= bytes);
    CHECK(a.stats().allocation[StatType::All].current == 4);
    // record_stream reaches this backend: the free waits for the side stream.
    cuda::Stream side = cuda::get_stream_from_pool(false, 0);
    side.wait_stream(cuda::current_stream(0));
    REQUIRE(cudaMemsetAsync(t.data_ptr(), 0, 4 * kMiB, side) == cudaSuccess);
    cuda::record_stream(t, side);
  }
  CHECK(cuda::memory_allocated(0) == base);
  CHECK(cuda::memory_summary(0).find("backend:cudaMallocAsync") != std::string::npos);
  // The history through the device's functions: a CUDA add's output is attributed to aten::add.
  cuda::record_memory_history(true, 1000, 0);
  {
    Tensor x = ones({1000}, TensorOptions().device(kCuda)), y = ones({1000}, TensorOptions().device(kCuda));
    Tensor c = x.add(y);
    const alloc::MemorySnapshot snap = cuda::memory_snapshot(0);
    CHECK(snap.segments.empty());
    const auto is_add = [](const char* op) { return op != nullptr && std::string(op).rfind("aten::add", 0) == 0; };
    bool traced = false, listed = false;
    for (const alloc::TraceEntry& e : snap.trace) {
      if (e.action == alloc::TraceAction::Alloc && e.address == reinterpret_cast<uintptr_t>(c.data_ptr())) {
        CHECK(is_add(e.op));
        CHECK(e.size == 4000);
        traced = true;
      }
    }
    for (const alloc::AllocationInfo& info : snap.allocations) {
      if (info.ptr == c.data_ptr()) {
        CHECK(is_add(info.op));
        listed = true;
      }
    }
    CHECK(traced);
    CHECK(listed);
  }
  CHECK(cuda::memory_snapshot(0).trace.back().action == alloc::TraceAction::FreeCompleted);
  cuda::record_memory_history(false, 0, 0);
  // What only the caching allocator has names the backend.
  CHECK_THROWS_WITH_AS(cuda::caching_allocator(0), doctest::Contains("backend:cudaMallocAsync"), NotImplementedError);
  CHECK_THROWS_WITH_AS(cuda::create_pool(0), doctest::Contains("cuda::create_pool"), NotImplementedError);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const int64_t cached = cuda::memory_reserved(0);  // the freed 264 MiB stay in the pool
  cuda::empty_cache();
  CHECK(cuda::memory_reserved(0) <= cached - 256 * kMiB);
  CHECK_THROWS_AS(empty({int64_t{1} << 48}, TensorOptions().device(kCuda)), OutOfMemoryError);
  Tensor after = ones({16}, TensorOptions().device(kCuda)) * 2;
  CHECK(gpu_test::same_values(after, full({16}, 2.0)));
  // cuBLAS's workspace comes from the device's allocator too.
  Tensor m = matmul(ones({8, 8}, TensorOptions().device(kCuda)), ones({8, 8}, TensorOptions().device(kCuda)));
  CHECK(gpu_test::same_values(m, full({8, 8}, 8.0)));
}
