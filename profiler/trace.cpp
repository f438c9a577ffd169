// Profile::chrome_trace, export_chrome_trace and to_json (profiler.h), written by hand as the
// allocator's snapshot is: the library has no JSON dependency.
#include <fmt/format.h>

#include <fstream>
#include <map>
#include <set>

#include "anatomy/core/json_string.h"
#include "anatomy/profiler/profiler.h"
#include "anatomy/profiler/recording.h"

namespace anatomy::profiler {
namespace {

std::string shapes_json(const Event& e) {
  std::string out = "[";
  for (size_t i = 0; i < e.input_shapes.size(); ++i) out += (i ? ", " : "") + json_string(e.input_shapes[i]);
  return out + "]";
}

}  // namespace

// The trace event format: "X" events (complete spans) with ts and dur in microseconds; pid 0 is
// the host with a tid per thread, pid 1 + d is CUDA device d with a tid per stream; "s"/"f"
// pairs are the flows from an operator to its device span. Every pid and tid is a small integer,
// as in torch's (Kineto's) traces: Perfetto's JSON importer reads no other kind of id. A stream's
// tid numbers it on its device (1, 2, ... in the order its first span appears), and
// "process_name" and "thread_name" metadata events name the rows ("host", "thread 1", "cuda:0",
// "stream 0x...", the stream's handle).
std::string Profile::chrome_trace() const {
  const std::vector<Event>& events = this->events();
  std::vector<std::string> items;
  std::set<int> threads;
  std::map<std::pair<int, uint64_t>, int> stream_tids;  // (device, stream) -> tid
  std::map<int, int> streams_on_device;
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    threads.insert(e.thread);
    std::string args =
        fmt::format("\"input_shapes\": {}, \"key\": {}, \"depth\": {}", shapes_json(e), json_string(e.key), e.depth);
    if (!e.autograd_node.empty()) {
      args += fmt::format(", \"autograd_node\": {}, \"sequence_nr\": {}", json_string(e.autograd_node),
                          e.autograd_sequence_nr);
    }
    if (recording_->options.profile_memory) args += fmt::format(", \"memory_delta\": {}", e.memory_delta);
    items.push_back(fmt::format(
        "{{\"name\": {}, \"cat\": \"{}\", \"ph\": \"X\", \"pid\": 0, \"tid\": {}, \"ts\": {:.3f}, \"dur\": {:.3f}, "
        "\"args\": {{{}}}}}",
        json_string(e.name), e.is_range ? "user_range" : "operator", e.thread, e.cpu_start_us, e.cpu_us(), args));
    if (e.device_start_us < 0) continue;
    auto [row, first] = stream_tids.try_emplace({e.device, e.stream}, 0);
    if (first) row->second = ++streams_on_device[e.device];
    const int tid = row->second;
    const int pid = 1 + e.device;
    items.push_back(
        fmt::format("{{\"name\": {}, \"cat\": \"device\", \"ph\": \"X\", \"pid\": {}, \"tid\": {}, \"ts\": {:.3f}, "
                    "\"dur\": {:.3f}, "
                    "\"args\": {{\"operator\": {}}}}}",
                    json_string(e.name), pid, tid, e.device_start_us, e.device_us(), i));
    items.push_back(
        fmt::format("{{\"name\": \"launch\", \"cat\": \"flow\", \"ph\": \"s\", \"id\": {}, \"pid\": 0, \"tid\": {}, "
                    "\"ts\": {:.3f}}}",
                    i, e.thread, e.cpu_start_us));
    items.push_back(
        fmt::format("{{\"name\": \"launch\", \"cat\": \"flow\", \"ph\": \"f\", \"bp\": \"e\", \"id\": {}, \"pid\": {}, "
                    "\"tid\": {}, "
                    "\"ts\": {:.3f}}}",
                    i, pid, tid, e.device_start_us));
  }
  // Names for the rows: the host, its threads, each device.
  items.push_back(R"({"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "host"}})");
  for (int t : threads) {
    items.push_back(fmt::format(
        R"({{"name": "thread_name", "ph": "M", "pid": 0, "tid": {}, "args": {{"name": "thread {}"}}}})", t, t));
  }
  for (const auto& [d, count] : streams_on_device) {
    items.push_back(
        fmt::format(R"({{"name": "process_name", "ph": "M", "pid": {}, "args": {{"name": "cuda:{}"}}}})", 1 + d, d));
  }
  for (const auto& [at, tid] : stream_tids) {
    items.push_back(fmt::format(
        R"({{"name": "thread_name", "ph": "M", "pid": {}, "tid": {}, "args": {{"name": "stream 0x{:x}"}}}})",
        1 + at.first, tid, at.second));
  }
  return fmt::format("{{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n{}\n]}}\n", fmt::join(items, ",\n"));
}

void Profile::export_chrome_trace(const std::string& path) const {
  const std::string text = chrome_trace();
  std::ofstream out(path, std::ios::binary);
  ANATOMY_CHECK(out.good(), ValueError, "Profile::export_chrome_trace: cannot write '{}'", path);
  out << text;
  out.close();
  ANATOMY_CHECK(out.good(), ValueError, "Profile::export_chrome_trace: writing '{}' failed", path);
}

std::string Profile::to_json() const {
  const std::vector<Event>& events = this->events();
  std::vector<std::string> items;
  items.reserve(events.size());
  for (const Event& e : events) {
    items.push_back(fmt::format(
        "{{\"name\": {}, \"is_range\": {}, \"input_shapes\": {}, \"key\": {}, \"thread\": {}, \"depth\": {}, "
        "\"parent\": {}, \"cpu_start_us\": {:.3f}, \"cpu_end_us\": {:.3f}, \"device\": {}, \"stream\": {}, "
        "\"device_start_us\": {:.3f}, \"device_end_us\": {:.3f}, \"autograd_node\": {}, \"sequence_nr\": {}, "
        "\"memory_delta\": {}}}",
        json_string(e.name), e.is_range, shapes_json(e), json_string(e.key), e.thread, e.depth, e.parent,
        e.cpu_start_us, e.cpu_end_us, e.device, e.stream, e.device_start_us, e.device_end_us,
        json_string(e.autograd_node), e.autograd_sequence_nr, e.memory_delta));
  }
  return fmt::format("{{\"events\": [\n{}\n]}}\n", fmt::join(items, ",\n"));
}

}  // namespace anatomy::profiler
