// The public device API (<anatomy/cuda.h>) on a GPU, used as a program embedding anatomy uses
// it: this file includes the public headers only. Devices and their properties, streams from the
// pool with a guard, events timing work, the memory statistics following allocations, and a
// snapshot with its history. Each test makes cuda:0 current: its tensors are there, and the calls
// without a device index ask for the current device.
#include <doctest/doctest.h>

#include <iostream>
#include <string>

#include "anatomy/anatomy.h"
#include "anatomy/cuda.h"

using namespace anatomy;

#define ANATOMY_REQUIRE_GPU_PUBLIC()                                                                    \
  do {                                                                                                  \
    if (!cuda::is_available()) {                                                                        \
      std::cout << "[anatomy-skip] no CUDA device (" << cuda::unavailable_reason() << ")" << std::endl; \
      return;                                                                                           \
    }                                                                                                   \
  } while (0)

TEST_CASE("cuda api: devices and their properties") {
  ANATOMY_REQUIRE_GPU_PUBLIC();
  CHECK(cuda::device_count() > 0);
  CHECK(cuda::unavailable_reason().empty());
  CHECK(cuda::runtime_version() > 0);
  CHECK(cuda::driver_version() >= cuda::runtime_version() / 1000 * 1000);
  const cuda::DeviceProperties p = cuda::get_device_properties(0);
  CHECK(p.index == 0);
  CHECK_FALSE(p.name.empty());
  CHECK(p.major >= 3);
  CHECK(p.multiprocessor_count > 0);
  CHECK(p.total_memory > (uint64_t{1} << 30));
  CHECK_THROWS_AS(cuda::get_device_properties(cuda::device_count()), DeviceError);
  CHECK_THROWS_AS(cuda::set_device(-2), DeviceError);

  const int last = cuda::device_count() - 1;
  cuda::set_device(0);
  {
    cuda::DeviceGuard guard(last);
    CHECK(cuda::current_device() == last);
    CHECK(guard.original_device() == 0);
  }
  CHECK(cuda::current_device() == 0);
  cuda::synchronize();
}

TEST_CASE("cuda api: streams, the current stream and a guard") {
  ANATOMY_REQUIRE_GPU_PUBLIC();
  cuda::set_device(0);
  const cuda::Stream def = cuda::default_stream();
  CHECK(def.is_default());
  CHECK(cuda::current_stream(-1) == def);

  const cuda::Stream high = cuda::get_stream_from_pool(/*high_priority=*/true);
  const cuda::Stream normal = cuda::get_stream_from_pool();
  CHECK_FALSE(high.is_default());
  CHECK(high.device_index() == cuda::current_device());
  CHECK(high.priority() < normal.priority());  // lower numbers run first
  CHECK(normal.priority() == 0);

  Tensor a = ones({1024}, Device("cuda:0"));
  Tensor b;
  {
    cuda::StreamGuard guard(normal);
    CHECK(cuda::current_stream(-1) == normal);
    CHECK(guard.original_stream() == def);
    normal.wait_stream(def);  // a was filled on the default stream
    b = a.mul(3);             // queued on `normal`
  }
  CHECK(cuda::current_stream(-1) == def);
  normal.synchronize();
  CHECK(normal.query());
  CHECK(b.sum().item<float>() == 3 * 1024);

  cuda::set_current_stream(high);
  CHECK(cuda::current_stream(-1) == high);
  cuda::set_current_stream(def);
  CHECK(cuda::current_stream(-1) == def);
}

TEST_CASE("cuda api: events order streams and time device work") {
  ANATOMY_REQUIRE_GPU_PUBLIC();
  cuda::set_device(0);
  const cuda::Stream side = cuda::get_stream_from_pool();
  cuda::Event start(/*enable_timing=*/true), stop(/*enable_timing=*/true);
  Tensor x = ones({4096, 4096}, Device("cuda:0"));
  Tensor y;
  {
    cuda::StreamGuard guard(side);
    side.wait_stream(cuda::default_stream());
    start.record();
    for (int i = 0; i < 4; ++i) y = matmul(x, x);
    stop.record();
  }
  CHECK(start.was_recorded());
  CHECK(stop.device_index() == 0);
  CHECK(stop.handle() != nullptr);
  // The default stream waits for `side` through the event before it reads y.
  cuda::default_stream().wait(stop);
  stop.synchronize();
  CHECK(stop.query());
  const float ms = start.elapsed_time(stop);
  CHECK(ms > 0);
  CHECK(ms < 60000);
  CHECK(y[0][0].item<float>() == 4096.0f);  // a row of ones times a column of ones
  cuda::record_stream(x, side);             // x was read on `side`: its free waits for that work

  cuda::Event untimed;
  untimed.record();
  untimed.synchronize();
  CHECK_THROWS_WITH_AS((void)untimed.elapsed_time(stop), doctest::Contains("enable_timing"), DeviceError);
}

TEST_CASE("cuda api: memory statistics follow allocations") {
  ANATOMY_REQUIRE_GPU_PUBLIC();
  cuda::set_device(0);
  cuda::synchronize();
  cuda::empty_cache();
  cuda::reset_peak_memory_stats();
  const int64_t before = cuda::memory_allocated();
  const int64_t bytes = int64_t{64} << 20;  // 64 MiB: a large-pool block of exactly this size
  {
    Tensor t = empty({bytes / 4}, Device("cuda:0"));
    CHECK(cuda::memory_allocated() == before + bytes);
    CHECK(cuda::max_memory_allocated() >= before + bytes);
    CHECK(cuda::memory_reserved() >= cuda::memory_allocated());
    const cuda::MemoryStats s = cuda::memory_stats();
    CHECK(s.allocated_bytes[alloc::StatType::All].current == before + bytes);
    CHECK(cuda::memory_summary().find("Allocated memory") != std::string::npos);
  }
  CHECK(cuda::memory_allocated() == before);
  CHECK(cuda::max_memory_allocated() >= before + bytes);  // the peak stays until a reset
  CHECK(cuda::max_memory_reserved() >= bytes);
  cuda::reset_peak_memory_stats();
  CHECK(cuda::max_memory_allocated() == before);
  const int64_t reserved = cuda::memory_reserved();
  cuda::empty_cache();  // the freed 64 MiB segment goes back to the driver
  CHECK(cuda::memory_reserved() <= reserved - bytes);
  CHECK_THROWS_AS((void)cuda::memory_allocated(cuda::device_count()), DeviceError);

  Tensor host = cuda::pin_memory(ones({16}));
  CHECK(cuda::is_pinned(host));
  CHECK_FALSE(cuda::is_pinned(ones({16})));
}

TEST_CASE("cuda api: a memory snapshot with its history") {
  ANATOMY_REQUIRE_GPU_PUBLIC();
  cuda::set_device(0);
  cuda::record_memory_history(true, 1000);
  Tensor a = ones({256, 256}, Device("cuda:0"));
  Tensor b = a.add(a);
  const cuda::MemorySnapshot s = cuda::memory_snapshot();
  cuda::record_memory_history(false);
  CHECK(s.device == Device("cuda:0"));
  CHECK(s.trace_max_entries == 1000);
  bool saw_alloc = false;
  for (const alloc::TraceEntry& e : s.trace) saw_alloc |= e.action == alloc::TraceAction::Alloc;
  CHECK(saw_alloc);
  CHECK(s.stats.allocated_bytes[alloc::StatType::All].current >= 2 * 256 * 256 * 4);
  const std::string json = alloc::to_json(s);
  CHECK(json.find("\"device_traces\"") != std::string::npos);
  const std::string html = alloc::snapshot_to_html(s);
  CHECK(html.find("<svg") != std::string::npos);
  CHECK(cuda::memory_snapshot().trace.empty());  // stopping the history dropped it
}
