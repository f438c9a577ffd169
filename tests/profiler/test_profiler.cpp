// The profiler on the CPU (profiler/profiler.h, docs/profiler.md): what each event holds (names,
// shapes, keys, nesting, order, threads, autograd nodes, memory), the table, the Chrome trace and
// the JSON parsed back, ranges, start and stop, and that nothing is recorded without a profile.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "../core/test_util.h"
#include "anatomy/profiler/profiler.h"

using namespace anatomy;
using profiler::Event;
using profiler::Profile;

namespace {

std::vector<const Event*> named(const std::vector<Event>& events, const std::string& name) {
  std::vector<const Event*> out;
  for (const Event& e : events) {
    if (e.name == name) out.push_back(&e);
  }
  return out;
}

}  // namespace

TEST_CASE("profiler: operators with their shapes, dtypes, key, nesting and host time") {
  const Tensor a = ones({2, 3}), b = ones({3}, TensorOptions().dtype(DType::Float64));
  Profile p;
  CHECK(p.active());
  Tensor c = a + b;
  Tensor m = a.matmul(ones({3, 4}));
  p.stop();
  CHECK_FALSE(p.active());
  const std::vector<Event>& events = p.events();
  const auto adds = named(events, "aten::add.Tensor");
  REQUIRE(adds.size() == 1);
  const Event& add = *adds[0];
  CHECK(add.input_shapes == std::vector<std::string>{"[2, 3] float32", "[3] float64"});
  CHECK(add.key == "CPU");
  CHECK(add.depth == 0);
  CHECK(add.parent == -1);
  CHECK(add.thread == 1);
  CHECK(add.cpu_end_us >= add.cpu_start_us);
  CHECK(add.cpu_start_us >= 0);
  CHECK(add.device_start_us == -1);
  // matmul is a composite: the operators it calls nest under it, in order.
  const auto matmuls = named(events, "aten::matmul");
  REQUIRE(matmuls.size() == 1);
  const auto matmul_index = static_cast<int64_t>(matmuls[0] - events.data());
  int children = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].parent != matmul_index) continue;
    ++children;
    CHECK(events[i].depth == 1);
    CHECK(events[i].cpu_start_us >= matmuls[0]->cpu_start_us);
    CHECK(events[i].cpu_end_us <= matmuls[0]->cpu_end_us);
  }
  CHECK(children >= 1);
  for (size_t i = 1; i < events.size(); ++i) CHECK(events[i].cpu_start_us >= events[i - 1].cpu_start_us);
}

TEST_CASE("profiler: counts, ranges and the table") {
  const Tensor x = ones({8});
  Profile p({.record_shapes = true});
  {
    profiler::Range step("step");
    for (int i = 0; i < 5; ++i) (void)(x * 2.0);
  }
  (void)x.sum();
  p.stop();
  const auto steps = named(p.events(), "step");
  REQUIRE(steps.size() == 1);
  CHECK(steps[0]->is_range);
  CHECK(steps[0]->depth == 0);
  const auto muls = named(p.events(), "aten::mul.Tensor");
  REQUIRE(muls.size() == 5);
  for (const Event* e : muls) CHECK(e->parent == steps[0] - p.events().data());
  const std::string table = p.table(profiler::SortBy::Count);
  CHECK_MESSAGE(table.find("aten::mul.Tensor") != std::string::npos, table);
  CHECK(table.find("step") != std::string::npos);
  CHECK(table.find("Self CPU time total") != std::string::npos);
  CHECK(table.find("CUDA") == std::string::npos);  // no device time, no CUDA columns
  // The mul row counts five calls and comes first by count.
  const size_t mul_row = table.find("aten::mul.Tensor");
  const std::string row = table.substr(mul_row, table.find('\n', mul_row) - mul_row);
  CHECK_MESSAGE(row.substr(row.size() - 2) == " 5", row);
  // Self % is of the sum of every event's self time: the column adds up to 100.
  double percent = 0;
  std::istringstream words(table);
  for (std::string word; words >> word;) {
    if (word.size() > 1 && word.back() == '%') percent += std::stod(word);  // the header's "%" stands alone
  }
  CHECK_MESSAGE(percent == doctest::Approx(100.0).epsilon(0.001), table);
  const std::string shaped = p.table(profiler::SortBy::CpuTotal, /*group_by_shape=*/true, /*row_limit=*/2);
  CHECK(shaped.find("Input shapes") != std::string::npos);
  CHECK(std::count(shaped.begin(), shaped.end(), '\n') == 3 + 1 + 2 + 1);  // rules, header, 2 rows, total
}

TEST_CASE("profiler: the backward pass's operators carry their autograd node") {
  Tensor w = ones({3}).requires_grad_();
  Profile p;
  (w * w).sum().backward();
  p.stop();
  bool found = false;
  for (const Event& e : p.events()) {
    if (e.autograd_node == "MulBackward0") {
      found = true;
      CHECK(e.autograd_sequence_nr > 0);
    }
  }
  CHECK(found);
  for (const Event* e : named(p.events(), "aten::sum")) CHECK(e->autograd_node.empty());
}

TEST_CASE("profiler: profile_memory records the bytes each operator allocated") {
  const Tensor x = ones({1024});
  Profile p({.profile_memory = true});
  Tensor y = x * 2.0;  // 4 KiB kept
  p.stop();
  const auto muls = named(p.events(), "aten::mul.Tensor");
  REQUIRE(muls.size() == 1);
  CHECK(muls[0]->memory_delta >= 4096);
  CHECK(p.table().find("Memory") != std::string::npos);
}

TEST_CASE("profiler: a factory's key, memory and shapes come from its device argument") {
  Profile p({.profile_memory = true});
  Tensor e = empty({256});                                     // the CPU by default: 1 KiB kept
  Tensor z = zeros({512}, TensorOptions().device(kCPU));       // 2 KiB kept
  Tensor m = empty({1024}, TensorOptions().device(kMeta));     // no storage
  Tensor like = empty_like(z, TensorOptions().device(kMeta));  // a tensor argument: its device
  p.stop();
  const auto empties = named(p.events(), "aten::empty.memory_format");
  // zeros calls empty; the user's two empties are the top-level ones.
  std::vector<const Event*> top;
  for (const Event* x : empties) {
    if (x->depth == 0) top.push_back(x);
  }
  REQUIRE(top.size() == 2);
  CHECK(top[0]->key == "CPU");
  CHECK(top[0]->memory_delta >= 1024);
  CHECK(top[0]->input_shapes.empty());  // no tensor argument
  CHECK(top[1]->key == "Meta");
  CHECK(top[1]->memory_delta == 0);
  const auto zeros_calls = named(p.events(), "aten::zeros");
  REQUIRE(zeros_calls.size() == 1);
  CHECK(zeros_calls[0]->key == "CPU");
  CHECK(zeros_calls[0]->memory_delta >= 2048);
  for (const Event& x : p.events()) {
    CHECK_MESSAGE(!x.key.empty(), x.name);  // every call, factories included, names its backend
  }
  const auto likes = named(p.events(), "aten::empty_like");
  REQUIRE(likes.size() == 1);
  CHECK(likes[0]->key == "CPU");  // the kernel of its argument's backend makes the meta tensor
  CHECK(likes[0]->input_shapes == std::vector<std::string>{"[512] float32"});
  // The table's memory column holds the factories' bytes.
  const std::string table = p.table();
  const size_t row = table.find("aten::zeros");
  REQUIRE(row != std::string::npos);
  CHECK_MESSAGE(table.substr(row, table.find('\n', row) - row).find(" KiB") != std::string::npos, table);
}

TEST_CASE("profiler: the Chrome trace and the JSON parse back with every event") {
  const Tensor x = ones({4});
  Profile p;
  {
    profiler::Range r("region \"quoted\"\n");
    (void)(x + 1.0);
  }
  p.stop();
  const nlohmann::json trace = nlohmann::json::parse(p.chrome_trace());
  int operators = 0, ranges = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    CHECK(e["pid"] == 0);
    CHECK(e["dur"].get<double>() >= 0);
    operators += e["cat"] == "operator";
    ranges += e["cat"] == "user_range";
  }
  CHECK(ranges == 1);
  CHECK(operators >= 1);
  CHECK(operators + ranges == static_cast<int>(p.events().size()));
  // Every pid and tid is an integer (Perfetto's JSON importer reads no other), and metadata
  // events name the host's process and each of its threads' rows.
  std::map<std::pair<int, int>, std::string> thread_names;
  std::map<int, std::string> process_names;
  for (const auto& e : trace["traceEvents"]) {
    CHECK_MESSAGE(e["pid"].is_number_integer(), e.dump());
    if (e.contains("tid")) CHECK_MESSAGE(e["tid"].is_number_integer(), e.dump());
    if (e["ph"] != "M") continue;
    const std::string name = e["args"]["name"];
    if (e["name"] == "process_name") process_names[e["pid"]] = name;
    if (e["name"] == "thread_name") thread_names[{e["pid"].get<int>(), e["tid"].get<int>()}] = name;
  }
  CHECK(process_names == std::map<int, std::string>{{0, "host"}});
  CHECK(thread_names == std::map<std::pair<int, int>, std::string>{{{0, 1}, "thread 1"}});
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X") CHECK(thread_names.count({e["pid"].get<int>(), e["tid"].get<int>()}) == 1);
  }
  const nlohmann::json doc = nlohmann::json::parse(p.to_json());
  REQUIRE(doc["events"].size() == p.events().size());
  CHECK(doc["events"][0]["name"] == "region \"quoted\"\n");
  CHECK(doc["events"][0]["is_range"] == true);
  const std::string path = "test_profiler_trace.json";
  p.export_chrome_trace(path);
  std::ifstream in(path);
  CHECK(nlohmann::json::parse(in)["traceEvents"].size() == trace["traceEvents"].size());
  std::remove(path.c_str());
  EXPECT_ERROR(ValueError, p.export_chrome_trace("/nonexistent/dir/trace.json"), "cannot write",
               "/nonexistent/dir/trace.json");
}

TEST_CASE("profiler: nothing is recorded outside a profile; start drops the last recording") {
  const Tensor x = ones({4});
  Profile p;
  p.stop();
  (void)(x + 1.0);  // after stop: not recorded
  CHECK(p.events().empty());
  p.start();
  EXPECT_ERROR(ValueError, p.events(), "still recording");
  EXPECT_ERROR(ValueError, p.start(), "already recording");
  (void)(x * 3.0);
  p.stop();
  CHECK(named(p.events(), "aten::mul.Tensor").size() == 1);
  CHECK(named(p.events(), "aten::add.Tensor").empty());
  p.stop();  // nothing
  {
    Profile outer;
    EXPECT_ERROR(ValueError, Profile(), "already records into a profile");
  }
}

TEST_CASE("profiler: another thread joins with a ThreadScope and gets its own number") {
  const Tensor x = ones({4});
  Profile p;
  (void)(x + 1.0);
  std::thread worker([&] {
    profiler::ThreadScope scope(p);
    (void)(x * 2.0);
  });
  worker.join();
  p.stop();
  const auto muls = named(p.events(), "aten::mul.Tensor");
  REQUIRE(muls.size() == 1);
  CHECK(muls[0]->thread == 2);
  CHECK(named(p.events(), "aten::add.Tensor")[0]->thread == 1);
}

TEST_CASE("profiler: an operator that throws still ends its event, and the profile goes on") {
  Profile p;
  EXPECT_ERROR(ValueError, ones({2, 3}).view({5}), "view");
  (void)ones({2});
  p.stop();
  const auto views = named(p.events(), "aten::view");
  REQUIRE(views.size() == 1);
  CHECK(views[0]->cpu_end_us >= views[0]->cpu_start_us);
  for (const Event& e : p.events()) {
    if (e.name == "aten::ones") CHECK(e.depth == 0);
  }
}
