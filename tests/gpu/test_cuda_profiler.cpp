// GPU tests of the profiler (profiler/profiler.h, docs/profiler.md): CUDA operators get device
// times that are positive and ordered on their stream, factories making CUDA tensors too, the top-level device times of
// a region of large kernels add up to within 10% of its synchronized wall time, the Chrome trace holds a device row
// with the spans and their flows, and profiling makes the host wait nowhere (the sync-debug mode in error mode stays
// quiet until the profile stops); later profiles, which record into the events the first one made
// (profiler/span_pool.cpp), time alike, and an operator that throws gets no device time rather than an earlier
// profile's.
#include <nlohmann/json.hpp>

#include <chrono>

#include "anatomy/cuda.h"
#include "anatomy/profiler/profiler.h"
#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;

TEST_CASE("cuda profiler: device times are positive, ordered per stream, and never waited for while recording") {
  ANATOMY_REQUIRE_GPU();
  Tensor a = randn({512, 512}).to(kCuda), b = randn({512, 512}).to(kCuda);
  cuda::synchronize();
  profiler::Profile p;
  {
    gpu_test::SyncDebugScope strict(cuda::SyncDebugMode::Error);  // any wait would throw
    for (int i = 0; i < 5; ++i) a = (a.matmul(b) * 0.01).relu();
  }
  p.stop();
  double last_end = -1;
  int cuda_ops = 0;
  for (const profiler::Event& e : p.events()) {
    if (e.key != "CUDA" || e.depth != 0) continue;
    ++cuda_ops;
    CHECK(e.device == 0);
    CHECK(e.device_start_us >= 0);
    CHECK(e.device_end_us > e.device_start_us);
    CHECK(e.device_start_us >= last_end - 1e-3);  // one stream: spans in launch order
    last_end = e.device_end_us;
  }
  CHECK(cuda_ops == 15);
  const std::string table = p.table(profiler::SortBy::CudaTotal);
  CHECK_MESSAGE(table.find("CUDA total") != std::string::npos, table);
  CHECK(table.find("aten::matmul") != std::string::npos);
}

TEST_CASE("cuda profiler: a factory on CUDA gets the CUDA key, a device span and its bytes") {
  ANATOMY_REQUIRE_GPU();
  cuda::synchronize();
  profiler::Profile p({.profile_memory = true});
  Tensor z = zeros({1 << 20}, TensorOptions().device(kCuda));  // 4 MiB and a fill kernel
  Tensor f = full({1 << 20}, 3.0, TensorOptions().device(kCuda));
  p.stop();
  int found = 0;
  for (const profiler::Event& e : p.events()) {
    if (e.depth != 0) continue;
    CAPTURE(e.name);
    ++found;
    CHECK(e.key == "CUDA");
    CHECK(e.device == 0);
    CHECK(e.device_start_us >= 0);
    CHECK(e.device_end_us > e.device_start_us);
    CHECK(e.memory_delta >= (4 << 20));
  }
  CHECK(found == 2);  // zeros and full, each with its empty and fill_ below it
}

TEST_CASE("cuda profiler: the device times of large kernels add up to the region's wall time") {
  ANATOMY_REQUIRE_GPU();
  Tensor a = randn({4096, 4096}).to(kCuda), b = randn({4096, 4096}).to(kCuda);
  (void)a.matmul(b);
  cuda::synchronize();
  profiler::Profile p;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 10; ++i) (void)a.matmul(b);
  cuda::synchronize();  // after the profile's work: its wait is outside the measured kernels
  const double wall_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  p.stop();
  double device_us = 0;
  for (const profiler::Event& e : p.events()) {
    if (e.depth == 0 && e.name == "aten::matmul") device_us += e.device_us();
  }
  CAPTURE(wall_us);
  CAPTURE(device_us);
  CHECK(device_us > 0.9 * wall_us);
  CHECK(device_us < 1.1 * wall_us);
}

TEST_CASE("cuda profiler: the Chrome trace has a device row with each CUDA operator's span and its flow") {
  ANATOMY_REQUIRE_GPU();
  Tensor x = ones({1 << 20}, TensorOptions().device(kCuda));
  profiler::Profile p({.profile_memory = true});
  {
    profiler::Range r("region");
    x = (x * 2.0).exp();
  }
  p.stop();
  const nlohmann::json trace = nlohmann::json::parse(p.chrome_trace());
  int device_spans = 0, flow_starts = 0, flow_ends = 0;
  bool device_named = false;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["pid"] == 1) {
      ++device_spans;
      CHECK(e["dur"].get<double>() > 0);
    }
    flow_starts += e["ph"] == "s";
    flow_ends += e["ph"] == "f";
    if (e["ph"] == "M" && e["pid"] == 1) device_named = e["args"]["name"] == "cuda:0";
  }
  CHECK(device_spans >= 2);
  CHECK(flow_starts == device_spans);
  CHECK(flow_ends == device_spans);
  CHECK(device_named);
  for (const profiler::Event& e : p.events()) {
    if (e.name == "aten::mul.Tensor") CHECK(e.memory_delta >= (4 << 20));
  }
}

TEST_CASE(
    "cuda profiler: later profiles record into the first one's events; an operator that throws has no device time") {
  ANATOMY_REQUIRE_GPU();
  Tensor a = randn({256, 256}).to(kCuda), b = randn({256, 256}).to(kCuda), wrong = randn({3, 5}).to(kCuda);
  cuda::synchronize();
  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    profiler::Profile p;
    Tensor c = a.matmul(b).relu();
    // Its span begins (the call reaches the CUDA key) and never ends; in the later rounds the
    // span's events hold the earlier profile's records.
    CHECK_THROWS_AS(a.mm(wrong), ValueError);
    c = c + 1.0;
    p.stop();
    double last_end = -1;
    int timed = 0, thrown = 0;
    for (const profiler::Event& e : p.events()) {
      if (e.key != "CUDA" || e.depth != 0) continue;
      if (e.name == "aten::mm" && e.device_start_us < 0) {
        ++thrown;
        CHECK(e.device_us() == 0);
        continue;
      }
      ++timed;
      CHECK(e.device_end_us > e.device_start_us);
      CHECK(e.device_start_us >= last_end - 1e-3);
      last_end = e.device_end_us;
    }
    CHECK(thrown == 1);
    CHECK(timed == 3);  // matmul, relu, add
  }
}
