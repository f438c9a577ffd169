// The parts of cuda::Stream and cuda::Event that need no GPU: Stream values compare and print
// without touching CUDA, an unrecorded Event has nothing to wait for, elapsed_time's checks, and,
// where no GPU is present, every entry point that needs one throws DeviceError naming itself.
// A CPU test: it runs everywhere (the GPU tests cover the rest).
#include <doctest/doctest.h>

#include <iostream>
#include <sstream>

#include "anatomy/anatomy.h"
#if ANATOMY_WITH_CUDA
#include "anatomy/backends/cuda/memory/record_stream.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/event.h"
#include "anatomy/backends/cuda/runtime/stream.h"
#endif

using namespace anatomy;

#if ANATOMY_WITH_CUDA

TEST_CASE("cuda stream values: compare, print and convert without CUDA") {
  const cuda::Stream def(0, cudaStreamLegacy);
  CHECK(def.is_default());
  CHECK(cuda::Stream(0, nullptr) == def);  // CUDA's 0 stream is the legacy default stream
  CHECK(cuda::Stream(1, cudaStreamLegacy) != def);
  CHECK(cuda::Stream(1, cudaStreamLegacy).device() == Device("cuda:1"));
  CHECK(def.str() == "cuda:0 default stream");

  const auto handle = reinterpret_cast<cudaStream_t>(0x1234);
  const cuda::Stream s(2, handle);
  CHECK_FALSE(s.is_default());
  CHECK(s.device_index() == 2);
  CHECK(static_cast<cudaStream_t>(s) == handle);
  CHECK(s.str() == "cuda:2 stream 0x1234");
  std::ostringstream os;
  os << s;
  CHECK(os.str() == "cuda:2 stream 0x1234");
  CHECK(cuda::Stream(2, handle) == s);
  CHECK(cuda::Stream(3, handle) != s);
}

TEST_CASE("cuda events: an unrecorded event waits for nothing, and elapsed_time checks its events") {
  cuda::Event timed(/*enable_timing=*/true, /*blocking=*/true), plain;
  CHECK(timed.enable_timing());
  CHECK(timed.blocking());
  CHECK_FALSE(plain.enable_timing());
  CHECK_FALSE(plain.blocking());
  CHECK_FALSE(timed.was_recorded());
  CHECK(timed.device_index() == -1);
  CHECK(timed.query());
  timed.synchronize();
  timed.block(cuda::Stream(0, cudaStreamLegacy));  // nothing to wait for: touches no CUDA
  CHECK_THROWS_WITH_AS((void)timed.elapsed_time(plain), doctest::Contains("enable_timing"), DeviceError);
  cuda::Event other(/*enable_timing=*/true);
  CHECK_THROWS_WITH_AS((void)timed.elapsed_time(other), doctest::Contains("must be recorded"), DeviceError);

  cuda::Event moved = std::move(timed);
  CHECK(moved.enable_timing());
  CHECK_FALSE(moved.was_recorded());
}

TEST_CASE("cuda record_stream: a CPU tensor is a DeviceError") {
  CHECK_THROWS_WITH_AS(cuda::record_stream(ones({2}), cuda::Stream(0, cudaStreamLegacy)),
                       doctest::Contains("record_stream: expected a CUDA tensor, got one on cpu"), DeviceError);
}

TEST_CASE("cuda streams without a GPU: each entry point says CUDA is not available") {
  if (cuda::device_count() > 0) {
    std::cout << "[anatomy-skip] a CUDA device is present; the GPU tests cover it" << std::endl;
    return;
  }
  const cuda::Stream def(0, cudaStreamLegacy);
  // The ops' hot path never throws: it answers the default stream without asking CUDA.
  CHECK(cuda::current_stream() == cudaStreamLegacy);
  const auto unavailable = [](const char* op) {
    return doctest::Contains(fmt::format("{}: CUDA is not available", op).c_str());
  };
  CHECK_THROWS_WITH_AS(cuda::default_stream(), unavailable("default_stream"), DeviceError);
  CHECK_THROWS_WITH_AS(cuda::get_stream_from_pool(true), unavailable("get_stream_from_pool"), DeviceError);
  CHECK_THROWS_WITH_AS(cuda::external_stream(nullptr), unavailable("external_stream"), DeviceError);
  CHECK_THROWS_WITH_AS(cuda::current_stream(0), unavailable("current_stream"), DeviceError);
  CHECK_THROWS_WITH_AS(cuda::set_current_stream(def), unavailable("set_current_stream"), DeviceError);
  CHECK_THROWS_WITH_AS(cuda::StreamGuard{def}, unavailable("StreamGuard"), DeviceError);
  CHECK_THROWS_WITH_AS(def.synchronize(), unavailable("Stream::synchronize"), DeviceError);
  CHECK_THROWS_WITH_AS((void)def.query(), unavailable("Stream::query"), DeviceError);
  CHECK_THROWS_WITH_AS((void)def.priority(), unavailable("Stream::priority"), DeviceError);
  CHECK_THROWS_WITH_AS(def.wait_stream(cuda::Stream(0, reinterpret_cast<cudaStream_t>(0x10))),
                       unavailable("Stream::wait_stream"), DeviceError);
  cuda::Event event;
  CHECK_THROWS_WITH_AS(event.record(), unavailable("Event::record"), DeviceError);
  CHECK_THROWS_WITH_AS(event.record(def), unavailable("Event::record"), DeviceError);
  CHECK_FALSE(event.was_recorded());
  CHECK(cuda::current_stream() == cudaStreamLegacy);
}

#endif
