// GPU tests of the CUDA caching allocator: blocks are reused instead of going back to the
// driver, the stats follow tensors, record_stream on a second stream defers reuse until that
// stream's work is done, empty_cache gives cached segments back, and an impossible request
// throws OutOfMemoryError with the allocator's message and leaves the allocator working; the
// memory history attributes a CUDA add's output to aten::add, and the summary shows the stats;
// the randomized suite of the simulated device (tests/alloc/random_allocator_run.h) runs over the
// CUDA provider; expandable segments grow by pages of the driver's virtual memory, keep data
// across page boundaries and shrink on empty_cache, also in the middle of a segment, whose pages
// are mapped again for a later request; a private pool takes a side stream's
// allocations and keeps its blocks from other requests.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "../alloc/random_allocator_run.h"
#include "anatomy/alloc/mem_pool.h"
#include "anatomy/backends/cuda/memory/cuda_allocator.h"
#include "anatomy/backends/cuda/memory/cuda_memory_provider.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;

TEST_CASE("cuda allocator: a freed block is reused without another cudaMalloc") {
  ANATOMY_REQUIRE_GPU();
  cuda::empty_cache();
  const int64_t mallocs_before = cuda::memory_stats().num_provider_allocs;
  void* first = nullptr;
  {
    Tensor t = empty({1 << 18}, TensorOptions().device(kCuda));  // 1 MiB: the small pool
    first = t.data_ptr();
    CHECK(cuda::memory_allocated() >= int64_t{1} << 20);
  }
  const int64_t allocated_after_free = cuda::memory_allocated();
  for (int i = 0; i < 100; ++i) {
    Tensor t = empty({1 << 18}, TensorOptions().device(kCuda));
    CHECK(t.data_ptr() == first);
  }
  const alloc::MemoryStats s = cuda::memory_stats();
  CHECK(s.num_provider_allocs == mallocs_before + 1);  // one 2 MiB segment for all 101 tensors
  CHECK(cuda::memory_allocated() == allocated_after_free);
  CHECK(cuda::memory_reserved() >= 2 * 1024 * 1024);
}

TEST_CASE("cuda allocator: peak stats, empty_cache, and the values survive reuse") {
  ANATOMY_REQUIRE_GPU();
  cuda::empty_cache();
  cuda::reset_peak_memory_stats();
  const int64_t base = cuda::memory_allocated();
  {
    Tensor a = full({1 << 20}, 3.0, TensorOptions().device(kCuda));  // 4 MiB
    Tensor b = a + 1;
    CHECK(cuda::memory_stats().allocated_bytes[alloc::StatType::All].peak >= base + (int64_t{8} << 20));
    CHECK(gpu_test::same_values(b, full({1 << 20}, 4.0)));
  }
  CHECK(cuda::memory_allocated() == base);
  CHECK(cuda::memory_reserved() > 0);
  cuda::empty_cache();
  // Nothing alive is held by this test: every segment without a live block went back.
  CHECK(cuda::memory_stats().num_provider_frees > 0);
}

TEST_CASE("cuda allocator: record_stream holds a block until the other stream's work is done") {
  ANATOMY_REQUIRE_GPU();
  alloc::CachingAllocator& a = cuda::caching_allocator();
  cudaStream_t side = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) == cudaSuccess);
  void* p = a.raw_alloc(1 << 20, 0);
  // Keep the side stream busy long enough that the block cannot be reused before it finishes.
  REQUIRE(cudaMemsetAsync(p, 0, 1 << 20, side) == cudaSuccess);
  a.record_stream(p, cuda::stream_id(side));
  a.raw_free(p);
  REQUIRE(cudaStreamSynchronize(side) == cudaSuccess);
  // The event has completed: the next allocation of that size on stream 0 may take it again.
  void* q = a.raw_alloc(1 << 20, 0);
  CHECK(q == p);
  a.raw_free(q);
  CHECK(cudaStreamDestroy(side) == cudaSuccess);
}

// The sanitizer steps of gpu-check.sh leave this test out by its name ("driver refuses"): the
// failing cudaMalloc is what it tests.
TEST_CASE("cuda allocator: a request the driver refuses throws OutOfMemoryError and changes nothing") {
  ANATOMY_REQUIRE_GPU();
  const int64_t before = cuda::memory_allocated();
  const int64_t ooms = cuda::memory_stats().num_ooms;
  // 1 PiB: no device has it.
  CHECK_THROWS_AS(empty({int64_t{1} << 48}, TensorOptions().device(kCuda)), OutOfMemoryError);
  try {
    (void)empty({int64_t{1} << 48}, TensorOptions().device(kCuda));
  } catch (const OutOfMemoryError& e) {
    CHECK(std::string(e.what()).find("cuda:0") != std::string::npos);
  }
  CHECK(cuda::memory_stats().num_ooms >= ooms + 1);
  CHECK(cuda::memory_allocated() == before);
  Tensor t = ones({16}, TensorOptions().device(kCuda)) * 2;
  CHECK(gpu_test::same_values(t, full({16}, 2.0)));
}

TEST_CASE("cuda allocator: the memory history attributes a CUDA add's output to aten::add") {
  ANATOMY_REQUIRE_GPU();
  Tensor a = ones({1000}, TensorOptions().device(kCuda)), b = ones({1000}, TensorOptions().device(kCuda));
  alloc::CachingAllocator& cache = cuda::caching_allocator();
  cache.record_memory_history(true, 100);
  Tensor c = a.add(b);
  alloc::MemorySnapshot s = cache.memory_snapshot();
  cache.record_memory_history(false);
  bool found = false;
  for (const alloc::TraceEntry& e : s.trace) {
    if (e.action == alloc::TraceAction::Alloc && e.address == reinterpret_cast<uintptr_t>(c.data_ptr())) {
      REQUIRE(e.op != nullptr);
      CHECK(std::string(e.op).rfind("aten::add", 0) == 0);
      CHECK(e.size == 4000);
      found = true;
    }
  }
  CHECK(found);
  const std::string summary = cuda::memory_summary();
  CHECK(summary.find("Allocated memory") != std::string::npos);
  CHECK(summary.find("device cuda:0") != std::string::npos);
}

namespace {

// The CUDA side of the randomized suite: each block is written on its stream as it is handed
// out, and a block passed to record_stream is written on the other stream too (after the
// allocating stream's work so far, as real code orders it), so the events its free records are
// really pending for a while and complete on their own.
class CudaRunDevice final : public anatomy_test::RandomRunDevice {
 public:
  CudaRunDevice() { REQUIRE(cudaEventCreateWithFlags(&ordered_, cudaEventDisableTiming) == cudaSuccess); }
  ~CudaRunDevice() override { (void)cudaEventDestroy(ordered_); }
  CudaRunDevice(const CudaRunDevice&) = delete;
  CudaRunDevice& operator=(const CudaRunDevice&) = delete;
  void use(void* ptr, size_t n, alloc::StreamId stream) override {
    REQUIRE(cudaMemsetAsync(ptr, ++byte_, n, cuda::stream_of(stream)) == cudaSuccess);
  }
  void use_also(void* ptr, size_t n, alloc::StreamId stream, alloc::StreamId other) override {
    REQUIRE(cudaEventRecord(ordered_, cuda::stream_of(stream)) == cudaSuccess);
    REQUIRE(cudaStreamWaitEvent(cuda::stream_of(other), ordered_, 0) == cudaSuccess);
    REQUIRE(cudaMemsetAsync(ptr, ++byte_, n, cuda::stream_of(other)) == cudaSuccess);
  }
  void finish() override { REQUIRE(cudaDeviceSynchronize() == cudaSuccess); }

 private:
  cudaEvent_t ordered_ = nullptr;
  unsigned char byte_ = 0;
};

}  // namespace

TEST_CASE("cuda allocator: the randomized suite over the CUDA provider, default stream and two pool streams") {
  ANATOMY_REQUIRE_GPU();
  // A fresh allocator of its own (not the device's), so the shadow model sees every block.
  cuda::CudaMemoryProvider provider(0);
  alloc::CachingAllocator a(provider, alloc::AllocConf{});
  anatomy_test::RandomRunOptions o;
  o.steps = 20000;
  o.seed = 4242;
  o.streams = {cuda::stream_id(cuda::default_stream(0)), cuda::stream_id(cuda::get_stream_from_pool(false, 0)),
               cuda::stream_id(cuda::get_stream_from_pool(false, 0))};
  REQUIRE(o.streams[0] == 0);
  REQUIRE(o.streams[1] != o.streams[2]);
  CudaRunDevice device;
  const anatomy_test::RandomRunResult r = anatomy_test::random_allocator_run(a, device, o);
  CHECK(r.ooms == 0);
  CHECK(r.record_streams > 100);
  MESSAGE("record_stream on another stream: " << r.record_streams
                                              << "; blocks found waiting for one: " << r.deferred_seen
                                              << "; cudaMalloc calls: " << a.stats().num_provider_allocs);
}

// Expandable segments over the driver's virtual memory API: a private allocator on a provider of
// device 0, so that its stats and segments are this test's alone.
TEST_CASE("cuda allocator: expandable segments grow by pages, keep data across pages and shrink") {
  ANATOMY_REQUIRE_GPU();
  cuda::CudaMemoryProvider provider(0);
  REQUIRE(provider.supports_virtual_memory());  // every GPU the project targets has it
  const size_t granularity = provider.page_size();
  REQUIRE(granularity > 0);
  const size_t page = (alloc::kLargeBuffer + granularity - 1) / granularity * granularity;
  alloc::AllocConf conf;
  conf.expandable_segments = true;
  alloc::CachingAllocator a(provider, conf);

  const std::vector<size_t> sizes = {3 * alloc::kMB, 7 * alloc::kMB, 13 * alloc::kMB, 21 * alloc::kMB, 31 * alloc::kMB};
  std::vector<char*> ptrs;
  size_t total = 0;
  for (size_t n : sizes) {
    ptrs.push_back(static_cast<char*>(a.raw_alloc(n, 0)));
    total += n;
    const alloc::MemoryStats s = a.stats();
    const int64_t reserved = s.reserved_bytes[alloc::StatType::All].current;
    CHECK(reserved % static_cast<int64_t>(page) == 0);
    CHECK(reserved == static_cast<int64_t>((total + page - 1) / page * page));
    CHECK(s.num_provider_maps == reserved / static_cast<int64_t>(page));
    CHECK(s.num_provider_allocs == 0);  // no cudaMalloc
  }
  for (size_t i = 1; i < ptrs.size(); ++i) CHECK(ptrs[i] == ptrs[i - 1] + sizes[i - 1]);  // contiguous
  std::vector<alloc::SegmentInfo> segs = a.segments();
  REQUIRE(segs.size() == 1);
  CHECK(segs[0].is_expandable);

  // One pattern over all five blocks (75 MiB, across three page boundaries), written from the
  // host, then a device-side memset across the first page boundary, read back whole.
  std::vector<uint32_t> host(total / sizeof(uint32_t));
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<uint32_t>(i * 2654435761u);
  REQUIRE(cudaMemcpy(ptrs[0], host.data(), total, cudaMemcpyHostToDevice) == cudaSuccess);
  const size_t set_from = page - 512 * 1024, set_bytes = 1 * alloc::kMB;
  REQUIRE(cudaMemset(ptrs[0] + set_from, 0xab, set_bytes) == cudaSuccess);
  std::memset(reinterpret_cast<char*>(host.data()) + set_from, 0xab, set_bytes);
  std::vector<uint32_t> back(host.size());
  REQUIRE(cudaMemcpy(back.data(), ptrs[0], total, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(back == host);
  // Device to device across a page boundary too: the last block's start into the first block.
  REQUIRE(cudaMemcpy(ptrs[0], ptrs[4], sizes[0], cudaMemcpyDeviceToDevice) == cudaSuccess);
  std::vector<uint32_t> first(sizes[0] / sizeof(uint32_t));
  REQUIRE(cudaMemcpy(first.data(), ptrs[0], sizes[0], cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(std::equal(first.begin(), first.end(), host.begin() + static_cast<ptrdiff_t>((total - sizes[4]) / 4)));

  // Everything after the first block freed: empty_cache unmaps all but the first page.
  for (size_t i = 1; i < ptrs.size(); ++i) a.raw_free(ptrs[i]);
  a.empty_cache();
  alloc::MemoryStats s = a.stats();
  CHECK(s.reserved_bytes[alloc::StatType::All].current == static_cast<int64_t>(page));
  CHECK(s.num_provider_unmaps == s.num_provider_maps - 1);
  segs = a.segments();
  REQUIRE(segs.size() == 1);
  CHECK(segs[0].size == page);
  REQUIRE(cudaMemcpy(first.data(), ptrs[0], sizes[0], cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(std::equal(first.begin(), first.end(), host.begin() + static_cast<ptrdiff_t>((total - sizes[4]) / 4)));
  a.raw_free(ptrs[0]);
  a.empty_cache();
  CHECK(a.stats().reserved_bytes[alloc::StatType::All].current == 0);
  CHECK(a.segments().empty());
}

// The free pages in the middle of a segment: empty_cache unmaps them while the blocks on both
// sides stay in use (their data intact), and a later request maps them again (cuMemMap) and its
// bytes round trip.
TEST_CASE("cuda allocator: expandable segments unmap free pages in the middle and map them again") {
  ANATOMY_REQUIRE_GPU();
  cuda::CudaMemoryProvider provider(0);
  REQUIRE(provider.supports_virtual_memory());
  const size_t granularity = provider.page_size();
  const size_t page = (alloc::kLargeBuffer + granularity - 1) / granularity * granularity;
  alloc::AllocConf conf;
  conf.expandable_segments = true;
  alloc::CachingAllocator a(provider, conf);
  // A [0, P/4), M [P/4, 3P + 3P/4), B [3P + 3P/4, 4P): M holds pages 1 and 2 whole.
  const size_t quarter = page / 4;
  char* first = static_cast<char*>(a.raw_alloc(quarter, 0));
  char* middle = static_cast<char*>(a.raw_alloc(3 * page + 2 * quarter, 0));
  char* last = static_cast<char*>(a.raw_alloc(quarter, 0));
  REQUIRE(middle == first + quarter);
  REQUIRE(last == first + 3 * page + 3 * quarter);
  std::vector<uint8_t> host_first(quarter, 0x5a), host_last(quarter, 0xa5), back(quarter);
  REQUIRE(cudaMemcpy(first, host_first.data(), quarter, cudaMemcpyHostToDevice) == cudaSuccess);
  REQUIRE(cudaMemcpy(last, host_last.data(), quarter, cudaMemcpyHostToDevice) == cudaSuccess);
  a.raw_free(middle);
  a.empty_cache();
  alloc::MemoryStats s = a.stats();
  CHECK(s.reserved_bytes[alloc::StatType::All].current == static_cast<int64_t>(2 * page));
  CHECK(s.num_provider_unmaps == 2);
  std::vector<alloc::SegmentInfo> segs = a.segments();
  REQUIRE(segs.size() == 1);
  CHECK(segs[0].size == 2 * page);
  CHECK(segs[0].unmapped_size == 2 * page);
  REQUIRE(cudaMemcpy(back.data(), first, quarter, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(back == host_first);
  REQUIRE(cudaMemcpy(back.data(), last, quarter, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(back == host_last);

  // P + P/2 fits no free block: the free part of page 0 and page 1, mapped again, serve it.
  const size_t n = page + 2 * quarter;
  char* again = static_cast<char*>(a.raw_alloc(n, 0));
  CHECK(again == first + quarter);
  CHECK(a.stats().num_provider_maps == 5);
  CHECK(a.stats().reserved_bytes[alloc::StatType::All].current == static_cast<int64_t>(3 * page));
  std::vector<uint32_t> pattern(n / sizeof(uint32_t)), read(pattern.size());
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<uint32_t>(i * 2654435761u);
  REQUIRE(cudaMemcpy(again, pattern.data(), n, cudaMemcpyHostToDevice) == cudaSuccess);
  // A device memset across the boundary of page 0 (kept mapped) and page 1 (mapped again).
  REQUIRE(cudaMemset(again + 2 * quarter, 0x11, 2 * quarter) == cudaSuccess);
  std::memset(reinterpret_cast<char*>(pattern.data()) + 2 * quarter, 0x11, 2 * quarter);
  REQUIRE(cudaMemcpy(read.data(), again, n, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(read == pattern);
  REQUIRE(cudaMemcpy(back.data(), last, quarter, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(back == host_last);
  for (void* p : {static_cast<void*>(first), static_cast<void*>(again), static_cast<void*>(last)}) a.raw_free(p);
  a.empty_cache();
  CHECK(a.stats().reserved_bytes[alloc::StatType::All].current == 0);
  CHECK(a.stats().num_provider_maps == a.stats().num_provider_unmaps);
  CHECK(a.segments().empty());
}

TEST_CASE("cuda allocator: expandable segments switched on at run time serve growing tensors") {
  ANATOMY_REQUIRE_GPU();
  alloc::CachingAllocator& cache = cuda::caching_allocator();
  const alloc::AllocConf saved = cache.conf();
  alloc::AllocConf conf = saved;
  conf.expandable_segments = true;
  cache.set_conf(conf);
  cuda::empty_cache();
  const int64_t mallocs = cuda::memory_stats().num_provider_allocs;
  {
    std::vector<Tensor> held;
    for (int64_t i = 1; i <= 6; ++i) {  // 12, 24, ... 72 MiB of float: the large pool
      held.push_back(full({i * 3 * (1 << 20)}, static_cast<double>(i), TensorOptions().device(kCuda)));
      Tensor sum = held.back() + 1;
      CHECK(gpu_test::same_values(sum, full({i * 3 * (1 << 20)}, static_cast<double>(i + 1))));
    }
    for (int64_t i = 1; i <= 6; ++i)
      CHECK(gpu_test::same_values(held[i - 1], full({i * 3 * (1 << 20)}, static_cast<double>(i))));
    CHECK(cuda::memory_stats().num_provider_allocs == mallocs);  // grown by pages, never cudaMalloc
    int expandable = 0;
    for (const alloc::SegmentInfo& seg : cache.segments()) expandable += seg.is_expandable;
    CHECK(expandable >= 1);
  }
  cache.set_conf(saved);
  cuda::empty_cache();
  for (const alloc::SegmentInfo& seg : cache.segments()) CHECK_FALSE(seg.is_expandable);  // all unmapped
}

TEST_CASE("cuda allocator: private pools route a side stream's allocations and keep their blocks") {
  ANATOMY_REQUIRE_GPU();
  alloc::CachingAllocator& cache = cuda::caching_allocator();
  const cuda::Stream def = cuda::current_stream(0);
  const cuda::Stream side = cuda::get_stream_from_pool();
  auto pool_of = [&](const void* ptr) {
    for (const alloc::SegmentInfo& seg : cache.segments()) {
      const char* begin = static_cast<const char*>(seg.address);
      if (ptr >= begin && ptr < begin + seg.size) return seg.pool;
    }
    return alloc::PoolId{~uint64_t{0}};
  };
  alloc::PoolId id;
  {
    alloc::MemPool pool(cache);
    id = pool.id();
    void* routed_ptr = nullptr;
    {
      side.wait_stream(def);
      cuda::StreamGuard guard(side);
      cuda::begin_allocate_current_thread_to_pool(id, side);
      Tensor inside = full({1 << 18}, 2.0, TensorOptions().device(kCuda));  // 1 MiB, filled on `side`
      Tensor bigger = inside * 3;                                           // also on `side`
      cuda::end_allocate_to_pool(id);
      Tensor after = full({1 << 18}, 1.0, TensorOptions().device(kCuda));  // the route has ended
      routed_ptr = inside.data_ptr();
      CHECK(pool_of(inside.data_ptr()) == id);
      CHECK(pool_of(bigger.data_ptr()) == id);
      CHECK(pool_of(after.data_ptr()).is_default());
      const alloc::PoolStats ps = cuda::pool_stats(id);
      CHECK(ps.allocations == 2);
      CHECK(ps.allocated_bytes == int64_t{2} << 20);
      CHECK(ps.reserved_bytes >= int64_t{2} << 20);
      side.synchronize();
      CHECK(gpu_test::same_values(bigger, full({1 << 18}, 6.0)));
    }
    // Freed on `side`, the pool's blocks stay in the pool: an ordinary request on `side` does not
    // get them, a routed one does.
    {
      cuda::StreamGuard guard(side);
      Tensor ordinary = empty({1 << 18}, TensorOptions().device(kCuda));
      CHECK(ordinary.data_ptr() != routed_ptr);
      CHECK(pool_of(ordinary.data_ptr()).is_default());
      alloc::UseMemPool route(pool, cuda::stream_id(side.handle()));
      Tensor again = empty({1 << 18}, TensorOptions().device(kCuda));
      CHECK(again.data_ptr() == routed_ptr);
      Tensor on_default;
      {
        cuda::StreamGuard back(def);
        on_default = empty({1 << 18}, TensorOptions().device(kCuda));  // another stream: not routed
      }
      CHECK(pool_of(on_default.data_ptr()).is_default());
    }
    side.synchronize();
  }
  // The handle is gone and nothing of the pool is allocated: the pool went, its segments became
  // ordinary cache, and empty_cache gives them back.
  const std::vector<alloc::PoolStats> pools = cache.pools();
  CHECK(std::none_of(pools.begin(), pools.end(), [&](const alloc::PoolStats& p) { return p.id == id; }));
  CHECK_THROWS_AS(cuda::pool_stats(id), ValueError);
  cuda::empty_cache();
  for (const alloc::SegmentInfo& seg : cache.segments()) CHECK(seg.pool != id);
}
