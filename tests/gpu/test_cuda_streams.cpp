// GPU tests of streams and events: the pools, the per-thread and per-device current stream,
// StreamGuard, ops and copies running on the current stream, events (query, synchronize,
// elapsed_time, block), wait_stream ordering two streams, and record_stream holding a block back
// from reuse until the other stream's work is done.
//
// Long device work comes from repeated in-place adds over 256 MiB tensors (about 0.25 ms each on
// an H100, so 200 of them keep a stream busy for tens of milliseconds after the host has queued
// them). Pool streams are non-blocking, so the legacy default stream does not wait for them.
#include <cuda_runtime_api.h>

#include <set>
#include <thread>
#include <vector>

#include "anatomy/backends/cuda/memory/cuda_allocator.h"
#include "anatomy/backends/cuda/memory/cuda_memory_provider.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;

namespace {

constexpr int64_t kBig = int64_t{1} << 26;  // fp32 elements: 256 MiB
constexpr int kLongRepeats = 200;

// x += y, `times` times, on the current stream.
void keep_busy(const Tensor& x, const Tensor& y, int times) {
  for (int i = 0; i < times; ++i) x.add_(y);
}

// Every element of CUDA tensor t equals v (checked by its min and max, on t's current stream).
bool all_equal(const Tensor& t, double v) { return t.min().item<double>() == v && t.max().item<double>() == v; }

}  // namespace

TEST_CASE("cuda streams: pool streams differ from the default and repeat round-robin") {
  ANATOMY_REQUIRE_GPU();
  const cuda::Stream def = cuda::default_stream();
  CHECK(def.is_default());
  CHECK(def == cuda::default_stream(0));
  CHECK(def.handle() == cudaStreamLegacy);
  CHECK(def.str() == "cuda:0 default stream");

  std::vector<cuda::Stream> normal, high;
  for (int i = 0; i < 64; ++i) normal.push_back(cuda::get_stream_from_pool());
  for (int i = 0; i < 64; ++i) high.push_back(cuda::get_stream_from_pool(/*high_priority=*/true));
  std::set<cudaStream_t> normal_handles, high_handles;
  for (int i = 0; i < 32; ++i) {
    CHECK_FALSE(normal[i].is_default());
    CHECK_FALSE(high[i].is_default());
    CHECK(normal[i].device_index() == 0);
    CHECK(normal[i] != def);
    CHECK(normal[i + 32] == normal[i]);  // 32 per pool, handed out in turn
    CHECK(high[i + 32] == high[i]);
    normal_handles.insert(normal[i].handle());
    high_handles.insert(high[i].handle());
  }
  CHECK(normal_handles.size() == 32);
  CHECK(high_handles.size() == 32);
  for (cudaStream_t h : high_handles) CHECK(normal_handles.count(h) == 0);

  int least = 0, greatest = 0;
  REQUIRE(cudaDeviceGetStreamPriorityRange(&least, &greatest) == cudaSuccess);
  CHECK(normal[0].priority() == least);
  CHECK(high[0].priority() == greatest);
  CHECK(normal[0].str().find("cuda:0 stream 0x") == 0);

  // A user's stream, wrapped without ownership.
  cudaStream_t own = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking) == cudaSuccess);
  {
    const cuda::Stream ext = cuda::external_stream(own);
    CHECK(ext.handle() == own);
    CHECK(ext.device_index() == 0);
    CHECK(ext.query());
  }
  CHECK(cudaStreamDestroy(own) == cudaSuccess);  // still ours to destroy
  CHECK(cuda::external_stream(nullptr).is_default());
}

TEST_CASE("cuda streams: the current stream is per thread and per device") {
  ANATOMY_REQUIRE_GPU();
  CHECK(cuda::current_stream() == cudaStreamLegacy);
  CHECK(cuda::current_stream(-1).is_default());
  const cuda::Stream s = cuda::get_stream_from_pool();
  cuda::set_current_stream(s);
  CHECK(cuda::current_stream(0) == s);
  CHECK(cuda::current_stream(-1) == s);
  CHECK(cuda::current_stream() == s.handle());
  CHECK(cuda::current_stream_handle(0) == s.handle());

  cudaStream_t seen_handle = nullptr, seen_unchecked = nullptr;
  bool seen_default = false;
  std::thread other([&] {
    seen_handle = cuda::current_stream();
    seen_unchecked = cuda::current_stream_handle(0);
    seen_default = cuda::current_stream(0).is_default();
  });
  other.join();
  CHECK(seen_handle == cudaStreamLegacy);
  CHECK(seen_unchecked == cudaStreamLegacy);
  CHECK(seen_default);
  CHECK(cuda::current_stream() == s.handle());  // the other thread changed nothing here

  const int last = cuda::device_count() - 1;
  if (last > 0) {
    CHECK(cuda::current_stream(last).is_default());
    const cuda::Stream t = cuda::get_stream_from_pool(false, last);
    CHECK(t.device_index() == last);
    cuda::set_current_stream(t);  // does not change the current device
    CHECK(cuda::current_device() == 0);
    CHECK(cuda::current_stream() == s.handle());
    CHECK(cuda::current_stream_handle(last) == t.handle());
    CHECK(cuda::current_stream_handle(0) == s.handle());
    {
      cuda::DeviceGuard guard(last);
      CHECK(cuda::current_stream() == t.handle());
    }
    cuda::set_current_stream(cuda::default_stream(last));
  }
  cuda::set_current_stream(cuda::default_stream());
  CHECK(cuda::current_stream() == cudaStreamLegacy);
  CHECK(cuda::current_stream_handle(0) == cudaStreamLegacy);
  CHECK(cuda::current_stream(0).is_default());
}

TEST_CASE("cuda streams: StreamGuard sets and restores the stream and the device") {
  ANATOMY_REQUIRE_GPU();
  const cuda::Stream a = cuda::get_stream_from_pool(), b = cuda::get_stream_from_pool(true);
  {
    cuda::StreamGuard outer(a);
    CHECK(outer.original_stream().is_default());
    CHECK(cuda::current_stream(0) == a);
    {
      cuda::StreamGuard inner(b);
      CHECK(inner.original_stream() == a);
      CHECK(cuda::current_stream() == b.handle());
    }
    CHECK(cuda::current_stream() == a.handle());
  }
  CHECK(cuda::current_stream() == cudaStreamLegacy);

  const int last = cuda::device_count() - 1;
  if (last > 0) {
    const cuda::Stream t = cuda::get_stream_from_pool(false, last);
    {
      cuda::StreamGuard guard(t);
      CHECK(cuda::current_device() == last);
      CHECK(cuda::current_stream() == t.handle());
      CHECK(cuda::current_stream(0).is_default());
      Tensor x = ones({4}, Device("cuda"));  // the current device, on its current stream
      CHECK(x.device().index() == last);
    }
    CHECK(cuda::current_device() == 0);
    CHECK(cuda::current_stream(last).is_default());
  }
}

TEST_CASE("cuda streams: ops under a StreamGuard run on that stream, not the default one") {
  ANATOMY_REQUIRE_GPU();
  Tensor x = ones({kBig}, kCuda), y = ones({kBig}, kCuda);
  x.add_(y);  // loads the kernel before anything is timed: x is 2
  cuda::synchronize();
  const cuda::Stream side = cuda::get_stream_from_pool();
  {
    cuda::StreamGuard guard(side);
    keep_busy(x, y, kLongRepeats);
  }
  CHECK_FALSE(side.query());
  CHECK(cuda::default_stream().query());
  side.synchronize();
  CHECK(side.query());
  CHECK(all_equal(x, 2 + kLongRepeats));
}

TEST_CASE("cuda streams: allocations belong to the current stream") {
  ANATOMY_REQUIRE_GPU();
  const cuda::Stream side = cuda::get_stream_from_pool();
  Tensor on_side, on_default = empty({1 << 20}, kCuda);
  {
    cuda::StreamGuard guard(side);
    on_side = empty({1 << 20}, kCuda);
  }
  auto stream_of_block = [](const void* p) {
    for (const alloc::SegmentInfo& seg : cuda::caching_allocator(0).segments()) {
      for (const alloc::BlockInfo& b : seg.blocks) {
        if (b.ptr == p && b.allocated) return seg.stream;
      }
    }
    return alloc::StreamId{-1};
  };
  CHECK(stream_of_block(on_side.data_ptr()) == cuda::stream_id(side.handle()));
  CHECK(stream_of_block(on_default.data_ptr()) == 0);
}

TEST_CASE("cuda streams: copies wait for the current stream, and non_blocking into pinned memory does not") {
  ANATOMY_REQUIRE_GPU();
  Tensor x = zeros({kBig}, kCuda), y = ones({kBig}, kCuda);
  x.add_(y);
  cuda::synchronize();
  const cuda::Stream side = cuda::get_stream_from_pool();
  {
    cuda::StreamGuard guard(side);
    keep_busy(x, y, 50);
    // To pageable memory: waits for `side`, so it sees every add.
    Tensor head = x.slice(0, 0, 1 << 20).cpu();
    CHECK(all_equal(head, 51));
  }

  void* pinned = nullptr;
  REQUIRE(cudaMallocHost(&pinned, kBig * sizeof(float)) == cudaSuccess);
  {
    Tensor host = from_blob(pinned, {kBig}, TensorOptions().dtype(DType::Float32));
    {
      cuda::StreamGuard guard(side);
      keep_busy(x, y, kLongRepeats);
      host.copy_(x, /*non_blocking=*/true);
      CHECK_FALSE(side.query());  // the host did not wait
    }
    side.synchronize();
    CHECK(all_equal(host, 51 + kLongRepeats));
    // Back up from pinned memory on `side`, after `side`'s own work.
    Tensor z = empty({kBig}, kCuda);
    {
      cuda::StreamGuard guard(side);
      z.copy_(host);
    }
    side.synchronize();
    CHECK(all_equal(z, 51 + kLongRepeats));
  }
  CHECK(cudaFreeHost(pinned) == cudaSuccess);
}

TEST_CASE("cuda streams: copies between devices follow both devices' current streams") {
  ANATOMY_REQUIRE_GPU();
  const int last = cuda::device_count() - 1;
  if (last == 0) {
    MESSAGE("one device: nothing to copy between");
    return;
  }
  const Device other(DeviceType::CUDA, static_cast<Device::Index>(last));
  Tensor x = zeros({kBig}, kCuda), y = ones({kBig}, kCuda);
  cuda::synchronize();
  const cuda::Stream side = cuda::get_stream_from_pool(false, 0);
  Tensor moved;
  {
    cuda::StreamGuard guard(side);
    keep_busy(x, y, 50);
    moved = x.to(other);  // queued after the adds on `side`
  }
  CHECK(moved.device() == other);
  CHECK(all_equal(moved, 50));  // on `last`'s default stream, which waited for the copy
}

TEST_CASE("cuda events: query, synchronize, elapsed_time, and misuse") {
  ANATOMY_REQUIRE_GPU();
  Tensor x = ones({kBig}, kCuda), y = ones({kBig}, kCuda);
  x.add_(y);
  cuda::synchronize();

  cuda::Event start(/*enable_timing=*/true), stop(/*enable_timing=*/true);
  CHECK_FALSE(start.was_recorded());
  CHECK(start.query());  // nothing to wait for
  start.synchronize();
  CHECK_THROWS_WITH_AS((void)start.elapsed_time(stop), doctest::Contains("recorded"), DeviceError);

  const cuda::Stream side = cuda::get_stream_from_pool();
  {
    cuda::StreamGuard guard(side);
    start.record();  // on `side`, the current stream
    keep_busy(x, y, kLongRepeats);
    stop.record();
  }
  CHECK(stop.device_index() == 0);
  CHECK_FALSE(stop.query());
  CHECK_THROWS_WITH_AS((void)start.elapsed_time(stop), doctest::Contains("not completed"), DeviceError);
  stop.synchronize();
  CHECK(stop.query());
  CHECK(side.query());  // nothing was queued after `stop`
  const float ms = start.elapsed_time(stop);
  CHECK(ms > 0);
  MESSAGE(kLongRepeats << " adds of 256 MiB: " << ms << " ms");

  cuda::Event untimed;
  untimed.record(side);
  untimed.synchronize();
  CHECK_THROWS_WITH_AS((void)start.elapsed_time(untimed), doctest::Contains("enable_timing"), DeviceError);

  // Moving hands the cudaEvent_t over; the moved-from event is unrecorded again.
  cuda::Event moved = std::move(stop);
  CHECK(moved.was_recorded());
  CHECK_FALSE(stop.was_recorded());  // NOLINT(bugprone-use-after-move)
  CHECK(start.elapsed_time(moved) == ms);

  const int last = cuda::device_count() - 1;
  if (last > 0) {
    CHECK_THROWS_WITH_AS(moved.record(cuda::get_stream_from_pool(false, last)), doctest::Contains("belongs to cuda:0"),
                         DeviceError);
  }
}

TEST_CASE("cuda streams: wait_stream and Event::block order work across streams") {
  ANATOMY_REQUIRE_GPU();
  Tensor x = zeros({kBig}, kCuda), y = ones({kBig}, kCuda);
  x.add_(y);
  cuda::synchronize();
  const cuda::Stream producer = cuda::get_stream_from_pool(), consumer = cuda::get_stream_from_pool();
  REQUIRE(producer != consumer);

  {
    cuda::StreamGuard guard(producer);
    keep_busy(x, y, 100);  // x = 101 when done
  }
  consumer.wait_stream(producer);
  Tensor doubled;
  {
    cuda::StreamGuard guard(consumer);
    doubled = x * 2;
  }
  consumer.synchronize();
  CHECK(producer.query());
  CHECK(all_equal(doubled, 202));

  // The same through an event the consumer waits on.
  cuda::Event done;
  {
    cuda::StreamGuard guard(producer);
    keep_busy(x, y, 100);  // x = 201
    done.record();
  }
  consumer.wait(done);
  {
    cuda::StreamGuard guard(consumer);
    doubled = x * 2;
  }
  consumer.synchronize();
  CHECK(all_equal(doubled, 402));
}

TEST_CASE("cuda streams: record_stream holds a freed block until the other stream's work is done") {
  ANATOMY_REQUIRE_GPU();
  const int64_t n = int64_t{1} << 24;  // 64 MiB: a block of its own in the large pool
  Tensor acc = zeros({n}, kCuda);
  acc.add_(acc);
  cuda::synchronize();

  // Without record_stream, a freed block goes straight back to the next request of its size.
  void* reused = nullptr;
  {
    Tensor t = empty({n}, kCuda);
    reused = t.data_ptr();
  }
  {
    Tensor again = empty({n}, kCuda);
    CHECK(again.data_ptr() == reused);
  }

  const cuda::Stream side = cuda::get_stream_from_pool();
  void* held = nullptr;
  {
    Tensor t = ones({n}, kCuda);  // on the default stream
    held = t.data_ptr();
    side.wait_stream(cuda::default_stream());
    {
      cuda::StreamGuard guard(side);
      keep_busy(acc, t, 4 * kLongRepeats);  // `side` reads t for a while
    }
    cuda::record_stream(t, side);
  }  // t is freed while `side` still reads it
  CHECK_FALSE(side.query());
  CHECK(cuda::memory_stats().active_bytes[alloc::StatType::All].current >= n * 4 * 2);  // acc and the held block
  Tensor during = empty({n}, kCuda);
  CHECK(during.data_ptr() != held);
  side.synchronize();
  // The event has completed: the block is free again (handed out on the next request).
  Tensor after = empty({n}, kCuda);
  CHECK(after.data_ptr() == held);
  CHECK(all_equal(acc, 4 * kLongRepeats));

  CHECK_THROWS_WITH_AS(cuda::record_stream(ones({2}), side), doctest::Contains("record_stream"), DeviceError);
  const int last = cuda::device_count() - 1;
  if (last > 0) {
    CHECK_THROWS_WITH_AS(cuda::record_stream(acc, cuda::get_stream_from_pool(false, last)),
                         doctest::Contains("record_stream"), DeviceError);
  }
}
