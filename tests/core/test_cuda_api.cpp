// <anatomy/cuda.h> without a device: the public device API compiles and links in every build
// (with and without the CUDA backend), reports no device where there is none, and each function
// that needs one throws a typed error naming itself: DeviceError "CUDA is not available" in a
// CUDA build without a GPU, NotImplementedError "built without CUDA" in a build without CUDA.
// A CPU test: where a GPU is present it checks only what holds everywhere (the GPU tests cover
// the rest, tests/gpu/test_cuda_api.cpp).
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <iostream>
#include <sstream>
#include <string>

#include "anatomy/anatomy.h"
#include "anatomy/cuda.h"
#include "anatomy/graphed/make_graphed.h"

using namespace anatomy;

namespace {

#if ANATOMY_WITH_CUDA
constexpr const char* kNoDevice = "CUDA is not available";
// A CUDA build's guard asks for the current device first (its hot path makes no other check).
constexpr const char* kGuardError = "current_device";
#else
constexpr const char* kNoDevice = "anatomy was built without CUDA (-DANATOMY_CUDA=OFF)";
constexpr const char* kGuardError = "DeviceGuard";
#endif

// Checks that `call` throws the build's no-device error, whose message names `function`.
template <typename F>
void check_needs_device(const char* function, F&& call) {
  CAPTURE(function);
  const std::string expected = fmt::format("{}: {}", function, kNoDevice);
  bool threw = false;
  try {
    call();
  } catch (const Error& e) {
    threw = true;
    CHECK(std::string(e.what()).find(expected) != std::string::npos);
#if ANATOMY_WITH_CUDA
    CHECK(dynamic_cast<const DeviceError*>(&e) != nullptr);
#else
    CHECK(dynamic_cast<const NotImplementedError*>(&e) != nullptr);
#endif
  }
  CHECK(threw);
}

}  // namespace

TEST_CASE("cuda api: values that need no device") {
  // A Stream is a value: comparing and printing it touch no CUDA API in any build.
  const cuda::Stream def(0, nullptr);
  CHECK(def.is_default());
  CHECK(def.handle() == cuda::legacy_stream_handle());
  CHECK(def == cuda::Stream(0, cuda::legacy_stream_handle()));
  CHECK(def != cuda::Stream(1, nullptr));
  CHECK(def.device() == Device("cuda:0"));
  CHECK(def.str() == "cuda:0 default stream");
  const cuda::Stream other(2, reinterpret_cast<cuda::StreamHandle>(uintptr_t{0x1234}));
  CHECK_FALSE(other.is_default());
  std::ostringstream os;
  os << other;
  CHECK(os.str() == "cuda:2 stream 0x1234");

  // An Event before its first record has nothing to wait for.
  cuda::Event timed(/*enable_timing=*/true);
  CHECK(timed.enable_timing());
  CHECK_FALSE(timed.blocking());
  CHECK_FALSE(timed.was_recorded());
  CHECK(timed.device_index() == -1);
  CHECK(timed.handle() == nullptr);
  CHECK(timed.query());
  timed.synchronize();
  cuda::Event moved = std::move(timed);
  CHECK(moved.enable_timing());

  // A DeviceGuard over "cuda" (-1) leaves the current device alone and needs none.
  { cuda::DeviceGuard guard(-1); }

  // The sync-debug mode is a setting in every build.
  CHECK(cuda::sync_debug_mode() == cuda::SyncDebugMode::Off);
  cuda::set_sync_debug_mode(cuda::SyncDebugMode::Warn);
  CHECK(cuda::sync_debug_mode() == cuda::SyncDebugMode::Warn);
  cuda::set_sync_debug_mode(cuda::SyncDebugMode::Off);

  // Nothing is pinned that pin_memory did not make.
  CHECK_FALSE(cuda::is_pinned(ones({2})));
#if !ANATOMY_WITH_CUDA
  CHECK_FALSE(cuda::is_available());
  CHECK(cuda::device_count() == 0);
  CHECK(cuda::driver_version() == 0);
  CHECK(cuda::runtime_version() == 0);
  CHECK(cuda::unavailable_reason() == kNoDevice);
#endif
}

TEST_CASE("cuda api: without a device, each function that needs one names itself") {
  if (cuda::is_available()) {
    std::cout << "[anatomy-skip] a CUDA device is present; tests/gpu/test_cuda_api.cpp covers it" << std::endl;
    return;
  }
  CHECK(cuda::device_count() == 0);
  CHECK_FALSE(cuda::unavailable_reason().empty());
  const cuda::Stream s(0, nullptr);
  check_needs_device("current_device", [] { (void)cuda::current_device(); });
  check_needs_device("set_device", [] { cuda::set_device(0); });
  check_needs_device("get_device_properties", [] { (void)cuda::get_device_properties(0); });
  check_needs_device("synchronize", [] { cuda::synchronize(); });
  check_needs_device(kGuardError, [] { cuda::DeviceGuard guard(0); });
  check_needs_device("default_stream", [] { (void)cuda::default_stream(); });
  check_needs_device("get_stream_from_pool", [] { (void)cuda::get_stream_from_pool(/*high_priority=*/true); });
  check_needs_device("current_stream", [] { (void)cuda::current_stream(-1); });
  check_needs_device("Stream::synchronize", [&] { s.synchronize(); });
  check_needs_device("Stream::query", [&] { (void)s.query(); });
  check_needs_device("Event::record", [] {
    cuda::Event e;
    e.record();
  });
  check_needs_device("memory_allocated", [] { (void)cuda::memory_allocated(); });
  check_needs_device("max_memory_reserved", [] { (void)cuda::max_memory_reserved(); });
  check_needs_device("memory_stats", [] { (void)cuda::memory_stats(); });
  check_needs_device("memory_snapshot", [] { (void)cuda::memory_snapshot(); });
  check_needs_device("pin_memory", [] { (void)cuda::pin_memory(ones({2})); });
  check_needs_device("graph_pool_handle", [] { (void)cuda::graph_pool_handle(); });
  check_needs_device("graph_capture_stream", [] { (void)cuda::graph_capture_stream(); });
  cuda::Graph graph;  // a Graph needs no device until it captures
  CHECK_FALSE(graph.is_capturing());
  CHECK_FALSE(graph.has_graph());
  CHECK(graph.pool().is_none());
  graph.reset();
  check_needs_device("Graph::capture_begin", [&] { graph.capture_begin(); });
  check_needs_device("Graph::capture_end", [&] { graph.capture_end(); });
  check_needs_device("Graph::replay", [&] { graph.replay(); });
  check_needs_device("graph_capture_stream", [&] { cuda::GraphCapture capture(graph); });
  CHECK_FALSE(graph.is_capturing());
  // Freeing a cache no device holds is nothing to do.
  cuda::empty_cache();
  // Nothing was left half-done: the CPU still works.
  CHECK(to_string(ones({2})) == "tensor([1., 1.])");
}

TEST_CASE("make_graphed: its arguments are checked before any device work") {
  auto fn = [](const std::vector<Tensor>& in) { return in; };
  CHECK_THROWS_WITH_AS(cuda::make_graphed(fn, {}), doctest::Contains("make_graphed: no sample inputs"), ValueError);
  CHECK_THROWS_WITH_AS(cuda::make_graphed(fn, {ones({2})}), doctest::Contains("must be a CUDA tensor, got one on cpu"),
                       ValueError);
}
