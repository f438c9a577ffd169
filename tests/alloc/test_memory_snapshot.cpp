// The caching allocator's memory history and snapshot on the simulated device: segments, blocks
// and their states after a known sequence; the ring buffer keeping the last N events; operator
// names from a CurrentOpScope and from the dispatcher itself; the JSON, parsed back.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "anatomy/alloc/caching_allocator.h"
#include "anatomy/alloc/simulated_provider.h"
#include "anatomy/anatomy.h"
#include "anatomy/cuda.h"
#include "anatomy/dispatch/current_op.h"

using namespace anatomy::alloc;
using anatomy::Tensor;
using anatomy::dispatch::CurrentOpScope;

namespace {

std::vector<std::string> actions(const std::vector<TraceEntry>& trace) {
  std::vector<std::string> out;
  for (const TraceEntry& e : trace) out.emplace_back(to_string(e.action));
  return out;
}

std::string op_of(const TraceEntry& e) { return e.op ? e.op : "(none)"; }

// What the kernel of test_memory::sim_alloc saw: the allocator it allocates from, the operator
// named inside it before and after it dispatched another operator.
CachingAllocator* g_sim = nullptr;
std::string g_op_before, g_op_after;

Tensor sim_alloc_cpu(const Tensor& self) {
  g_op_before = anatomy::dispatch::current_op_name() ? anatomy::dispatch::current_op_name() : "(none)";
  Tensor copy = self.clone();  // a nested operator: the outer one keeps the name
  g_op_after = anatomy::dispatch::current_op_name() ? anatomy::dispatch::current_op_name() : "(none)";
  g_sim->raw_free(g_sim->raw_alloc(4096, 0));
  return copy;
}

}  // namespace

ANATOMY_LIBRARY(test_memory, m) { m.def("sim_alloc(Tensor self) -> Tensor"); }
ANATOMY_LIBRARY_IMPL(test_memory, CPU, m) { m.impl("sim_alloc", ANATOMY_KERNEL(sim_alloc_cpu)); }

TEST_CASE("caching allocator snapshot: segments, blocks and their states after a known sequence") {
  SimulatedProvider p(64 * kMB);
  CachingAllocator a(p, AllocConf{});
  char* x = static_cast<char*>(a.raw_alloc(1000, 0));
  char* y = static_cast<char*>(a.raw_alloc(700, 0));
  char* z = static_cast<char*>(a.raw_alloc(3 * kMB, 0));
  a.record_stream(y, 1);
  a.raw_free(y);  // waits for stream 1's event: active_pending_free
  MemorySnapshot s = a.memory_snapshot();
  CHECK(s.trace.empty());  // the history is off by default
  CHECK(s.trace_max_entries == 0);
  REQUIRE(s.segments.size() == 2);
  const SegmentInfo& small = s.segments[0].is_small ? s.segments[0] : s.segments[1];
  const SegmentInfo& large = s.segments[0].is_small ? s.segments[1] : s.segments[0];
  CHECK(small.size == kSmallBuffer);
  REQUIRE(small.blocks.size() == 3);
  CHECK(small.blocks[0].ptr == x);
  CHECK(block_state(small.blocks[0]) == "active_allocated");
  CHECK(small.blocks[0].requested == 1000);
  CHECK(small.blocks[1].ptr == y);
  CHECK(block_state(small.blocks[1]) == "active_pending_free");
  CHECK(small.blocks[1].requested == 700);  // still known while the free waits
  CHECK(block_state(small.blocks[2]) == "inactive");
  CHECK(small.blocks[2].size == kSmallBuffer - 2048);
  CHECK(large.size == 20 * kMB);
  REQUIRE(large.blocks.size() == 2);
  CHECK(large.blocks[0].ptr == z);
  CHECK(block_state(large.blocks[1]) == "inactive");
  p.complete_all(1);
  a.raw_free(x);
  a.raw_free(z);
  a.raw_free(a.raw_alloc(1, 0));  // processes the completed event
  for (const SegmentInfo& seg : a.memory_snapshot().segments) {
    REQUIRE(seg.blocks.size() == 1);
    CHECK(block_state(seg.blocks[0]) == "inactive");
    CHECK(seg.blocks[0].requested == 0);
  }
}

TEST_CASE("caching allocator history: every event of a sequence, in order, with deferred frees") {
  SimulatedProvider p(64 * kMB);
  CachingAllocator a(p, AllocConf{});
  a.record_memory_history(true, 100);
  void* x = a.raw_alloc(1000, 0);
  a.record_stream(x, 2);
  a.raw_free(x);
  p.complete_all(2);
  a.raw_free(a.raw_alloc(600, 0));  // processes the completed event first
  CHECK_THROWS_AS(a.raw_alloc(100 * kMB, 0), anatomy::OutOfMemoryError);
  a.empty_cache();
  MemorySnapshot s = a.memory_snapshot();
  CHECK(actions(s.trace) == std::vector<std::string>{"segment_alloc", "alloc", "free_requested", "free_completed",
                                                     "alloc", "free_requested", "free_completed", "segment_free",
                                                     "oom"});  // the OOM ladder released the cache
  CHECK(s.trace[0].size == kSmallBuffer);
  CHECK(s.trace[1].address == reinterpret_cast<uintptr_t>(x));
  CHECK(s.trace[1].size == 1000);
  CHECK(s.trace[3].size == 1000);  // the deferred free still names the request
  CHECK(s.trace[7].size == kSmallBuffer);
  CHECK(s.trace[8].size == 100 * kMB);
  CHECK(s.trace[8].address == 0);
  for (size_t i = 0; i < s.trace.size(); ++i) {
    CHECK(s.trace[i].seq == i);
    CHECK(s.trace[i].stream == 0);
    if (i > 0) CHECK(s.trace[i].time_us >= s.trace[i - 1].time_us);
    CHECK(s.trace[i].op == nullptr);  // no operator was running
  }
  a.record_memory_history(false);
  a.raw_free(a.raw_alloc(1, 0));
  CHECK(a.memory_snapshot().trace.empty());  // stopping drops the events and records no more
}

TEST_CASE("caching allocator history: the ring keeps only the last N events") {
  SimulatedProvider p(64 * kMB);
  CachingAllocator a(p, AllocConf{});
  a.raw_free(a.raw_alloc(1, 0));  // the segment is cached before recording starts
  a.record_memory_history(true, 5);
  for (int i = 0; i < 7; ++i) a.raw_free(a.raw_alloc(512 * static_cast<size_t>(i + 1), 0));  // 21 events
  MemorySnapshot s = a.memory_snapshot();
  CHECK(s.trace_max_entries == 5);
  REQUIRE(s.trace.size() == 5);
  for (size_t i = 0; i < 5; ++i) CHECK(s.trace[i].seq == 16 + i);
  // The last three events are the seventh pair; before them, the end of the sixth.
  CHECK(actions(s.trace) ==
        std::vector<std::string>{"free_requested", "free_completed", "alloc", "free_requested", "free_completed"});
  CHECK(s.trace[2].size == 7 * 512);
  CHECK(s.trace[0].size == 6 * 512);
  CHECK_THROWS_AS(a.record_memory_history(true, 0), anatomy::ValueError);
}

TEST_CASE("caching allocator history: a CurrentOpScope names the operator, and the outermost one wins") {
  SimulatedProvider p(64 * kMB);
  CachingAllocator a(p, AllocConf{});
  a.record_memory_history(true, 100);
  void* x = nullptr;
  {
    CurrentOpScope outer("aten::add.Tensor");
    CurrentOpScope inner("aten::empty.memory_format");
    x = a.raw_alloc(1000, 0);
  }
  void* y = a.raw_alloc(1000, 0);
  MemorySnapshot s = a.memory_snapshot();
  REQUIRE(s.trace.size() == 3);
  CHECK(op_of(s.trace[0]) == "aten::add.Tensor");  // segment_alloc
  CHECK(op_of(s.trace[1]) == "aten::add.Tensor");  // alloc
  CHECK(op_of(s.trace[2]) == "(none)");
  REQUIRE(s.segments.size() == 1);
  CHECK(std::string(s.segments[0].blocks[0].op) == "aten::add.Tensor");
  CHECK(s.segments[0].blocks[1].op == nullptr);
  a.raw_free(x);
  a.raw_free(y);
}

TEST_CASE("caching allocator history: the dispatcher names the operator only while an allocator records") {
  SimulatedProvider p(64 * kMB);
  CachingAllocator a(p, AllocConf{});
  g_sim = &a;
  auto op =
      anatomy::dispatch::Dispatcher::singleton().find_or_throw("test_memory::sim_alloc").typed<Tensor(const Tensor&)>();
  Tensor t = anatomy::ones({4});
  const bool trace_was_on = anatomy::dispatch::trace_enabled();
  op.call(t);
  CHECK(g_op_before == "(none)");  // nobody listens: the dispatcher's fast path names nothing
  a.record_memory_history(true, 100);
  CHECK(anatomy::dispatch::trace_enabled());  // the dispatcher's one branch now takes the slow path
  op.call(t);
  CHECK(g_op_before == "test_memory::sim_alloc");
  CHECK(g_op_after == "test_memory::sim_alloc");           // aten::clone inside did not take the name
  CHECK(anatomy::dispatch::current_op_name() == nullptr);  // cleared when the call returned
  MemorySnapshot s = a.memory_snapshot();
  REQUIRE(s.trace.size() >= 2);
  for (const TraceEntry& e : s.trace) CHECK(op_of(e) == "test_memory::sim_alloc");
  a.record_memory_history(false);
  CHECK(anatomy::dispatch::trace_enabled() == trace_was_on);
  op.call(t);
  CHECK(g_op_before == "(none)");
  g_sim = nullptr;
}

TEST_CASE("caching allocator snapshot: the JSON has PyTorch's shape and escapes names") {
  SimulatedProvider p(64 * kMB);
  CachingAllocator a(p, AllocConf{});
  a.record_memory_history(true, 100);
  void* x = nullptr;
  {
    CurrentOpScope scope("odd::\"name\"\\with\ttab");
    x = a.raw_alloc(1000, 3);
  }
  void* y = a.raw_alloc(5 * kMB, 3);
  a.raw_free(y);
  MemorySnapshot s = a.memory_snapshot();
  nlohmann::json j = nlohmann::json::parse(to_json(s));
  REQUIRE(j["segments"].size() == 2);
  const auto& seg = j["segments"][0]["segment_type"] == "small" ? j["segments"][0] : j["segments"][1];
  CHECK(seg["address"].get<uintptr_t>() == reinterpret_cast<uintptr_t>(x));
  CHECK(seg["total_size"] == kSmallBuffer);
  CHECK(seg["allocated_size"] == 1024);
  CHECK(seg["requested_size"] == 1000);
  CHECK(seg["stream"] == 3);
  CHECK(seg["device"] == 0);
  REQUIRE(seg["blocks"].size() == 2);
  CHECK(seg["blocks"][0]["state"] == "active_allocated");
  CHECK(seg["blocks"][0]["size"] == 1024);
  CHECK(seg["blocks"][0]["requested_size"] == 1000);
  CHECK(seg["blocks"][0]["op"] == "odd::\"name\"\\with\ttab");
  CHECK(seg["blocks"][0]["frames"][0]["name"] == "odd::\"name\"\\with\ttab");
  CHECK(seg["blocks"][1]["state"] == "inactive");
  CHECK(seg["blocks"][1]["frames"].empty());
  REQUIRE(j["device_traces"].size() == 1);
  const auto& trace = j["device_traces"][0];
  REQUIRE(trace.size() == s.trace.size());
  CHECK(trace[1]["action"] == "alloc");
  CHECK(trace[1]["addr"].get<uintptr_t>() == reinterpret_cast<uintptr_t>(x));
  CHECK(trace[1]["size"] == 1000);
  CHECK(trace[1]["stream"] == 3);
  CHECK(trace[1]["op"] == "odd::\"name\"\\with\ttab");
  CHECK(trace.back()["action"] == "free_completed");
  CHECK_FALSE(trace.back().contains("op"));
  CHECK(j["trace_max_entries"] == 100);
  CHECK(json_string("a\x01z") == "\"a\\u0001z\"");
  a.raw_free(x);
}

// The backend:cudaMallocAsync allocator's snapshot has live allocations and no segments; its JSON
// adds "allocations" (tests/gpu/test_cuda_async_allocator.cpp makes one on a GPU).
TEST_CASE("memory snapshot: live allocations without segments go to the JSON's allocations") {
  int a = 0, b = 0;
  MemorySnapshot s{anatomy::Device(anatomy::DeviceType::CUDA, 1), {}, {}, 0, {}, {}};
  s.allocations.push_back({&a, 1000, 7, "aten::mm"});
  s.allocations.push_back({&b, 3 * kMB, 0, nullptr});
  nlohmann::json j = nlohmann::json::parse(to_json(s));
  CHECK(j["segments"].empty());
  REQUIRE(j["allocations"].size() == 2);
  CHECK(j["allocations"][0]["address"].get<uintptr_t>() == reinterpret_cast<uintptr_t>(&a));
  CHECK(j["allocations"][0]["size"] == 1000);
  CHECK(j["allocations"][0]["requested_size"] == 1000);
  CHECK(j["allocations"][0]["stream"] == 7);
  CHECK(j["allocations"][0]["op"] == "aten::mm");
  CHECK(j["allocations"][0]["frames"][0]["name"] == "aten::mm");
  CHECK(j["allocations"][1]["size"] == 3 * kMB);
  CHECK_FALSE(j["allocations"][1].contains("op"));
  CHECK(j["allocations"][1]["frames"].empty());
  REQUIRE(j["device_traces"].size() == 2);  // indexed by device: cuda:1's is the second
  CHECK(j["device_traces"][1].empty());
  // The caching allocator's snapshot has no such key.
  s.allocations.clear();
  CHECK_FALSE(nlohmann::json::parse(to_json(s)).contains("allocations"));
}
