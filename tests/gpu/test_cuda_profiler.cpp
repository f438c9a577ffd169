// GPU tests of the profiler (profiler/profiler.h, docs/profiler.md): CUDA operators get device
// times that are positive and ordered on their stream, factories making CUDA tensors too, work on
// two streams gets a trace row per stream (integer ids, named by metadata events), the top-level
// device times of a region of large kernels add up to within 10% of its synchronized wall time,
// the Chrome trace holds a device row with the spans and their flows, and profiling makes the host
// wait nowhere (the sync-debug mode in error mode stays quiet until the profile stops); later
// profiles, which record into the events the first one made (profiler/span_pool.cpp), time alike,
// and an operator that throws gets no device time rather than an earlier profile's.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <map>
#include <set>

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
    if (e["ph"] == "M" && e["pid"] == 1 && e["name"] == "process_name") device_named = e["args"]["name"] == "cuda:0";
  }
  CHECK(device_spans >= 2);
  CHECK(flow_starts == device_spans);
  CHECK(flow_ends == device_spans);
  CHECK(device_named);
  for (const profiler::Event& e : p.events()) {
    if (e.name == "aten::mul.Tensor") CHECK(e.memory_delta >= (4 << 20));
  }
}

TEST_CASE("cuda profiler: work on two streams gets a trace row each, with integer ids and names, spans in order") {
  ANATOMY_REQUIRE_GPU();
  Tensor a = randn({1024, 1024}).to(kCuda), b = randn({1024, 1024}).to(kCuda);
  const cuda::Stream side = cuda::get_stream_from_pool();
  const cuda::Stream main_stream = cuda::current_stream(0);
  REQUIRE(side != main_stream);
  cuda::synchronize();
  profiler::Profile p;
  Tensor x = (a.matmul(b) * 0.5).relu();  // three operators on the current stream
  {
    cuda::StreamGuard guard(side);
    Tensor y = (a.matmul(b) + 1.0).relu();  // three on the side stream
  }
  p.stop();
  // The events: three top-level CUDA spans per stream, one after another on each.
  std::map<uint64_t, std::vector<const profiler::Event*>> by_stream;
  for (const profiler::Event& e : p.events()) {
    if (e.key == "CUDA" && e.depth == 0) by_stream[e.stream].push_back(&e);
  }
  REQUIRE(by_stream.size() == 2);
  CHECK(by_stream.count(reinterpret_cast<uint64_t>(side.handle())) == 1);
  CHECK(by_stream.count(reinterpret_cast<uint64_t>(main_stream.handle())) == 1);
  for (const auto& [stream, spans] : by_stream) {
    CAPTURE(stream);
    CHECK(spans.size() == 3);
    double last_end = -1;
    for (const profiler::Event* e : spans) {
      CHECK(e->device_end_us > e->device_start_us);
      CHECK(e->device_start_us >= last_end - 1e-3);
      last_end = e->device_end_us;
    }
  }
  // The trace: device 0's spans on two rows of pid 1, each an integer tid named after its stream
  // by a thread_name event; on each row the spans in the order of their launches, none overlapping.
  const nlohmann::json trace = nlohmann::json::parse(p.chrome_trace());
  std::map<int64_t, std::string> row_names;
  std::map<int64_t, std::vector<std::pair<double, double>>> rows;  // tid -> (ts, end)
  int flow_ends = 0;
  for (const auto& e : trace["traceEvents"]) {
    REQUIRE_MESSAGE(e["pid"].is_number_integer(), e.dump());
    if (e.contains("tid")) REQUIRE_MESSAGE(e["tid"].is_number_integer(), e.dump());
    if (e["pid"] != 1) continue;
    if (e["ph"] == "M" && e["name"] == "thread_name") row_names[e["tid"].get<int64_t>()] = e["args"]["name"];
    if (e["ph"] == "X" && e["cat"] == "device" && e["args"]["operator"].is_number_integer()) {
      const auto& op = p.events()[e["args"]["operator"].get<size_t>()];
      if (op.depth != 0) continue;
      const double ts = e["ts"].get<double>();
      rows[e["tid"].get<int64_t>()].push_back({ts, ts + e["dur"].get<double>()});
    }
    flow_ends += e["ph"] == "f";
  }
  CHECK(flow_ends > 0);
  REQUIRE(rows.size() == 2);
  for (const auto& [tid, spans] : rows) {
    CAPTURE(tid);
    CHECK(spans.size() == 3);
    for (size_t i = 1; i < spans.size(); ++i) CHECK(spans[i].first >= spans[i - 1].second - 1e-3);
    REQUIRE(row_names.count(tid) == 1);
    CHECK(row_names[tid].rfind("stream 0x", 0) == 0);
  }
  std::set<std::string> names;
  for (const auto& [tid, name] : row_names) names.insert(name);
  CHECK(names == std::set<std::string>{fmt::format("stream 0x{:x}", reinterpret_cast<uint64_t>(side.handle())),
                                       fmt::format("stream 0x{:x}", reinterpret_cast<uint64_t>(main_stream.handle()))});
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
