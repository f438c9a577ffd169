// A memory history turned into an allocation trace (see alloc_trace_record.h).
#include "anatomy/testing/alloc_trace_record.h"

#include <fstream>
#include <sstream>
#include <unordered_map>

#include "anatomy/alloc/memory_snapshot.h"
#include "anatomy/core/error.h"

namespace anatomy::testing {

RecordedTrace trace_from_history(const std::vector<alloc::TraceEntry>& entries) {
  RecordedTrace out;
  out.events = entries.size();
  if (entries.empty()) return out;
  ANATOMY_CHECK(entries.front().seq == 0, ValueError,
                "trace_from_history: the memory history dropped its {} oldest events (the ring kept {}): record with "
                "max_entries of at least {}",
                entries.front().seq, entries.size(), entries.front().seq + entries.size());
  std::unordered_map<uintptr_t, uint32_t> live;  // address -> allocation id
  std::vector<bool> freed;
  uint32_t next_id = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const alloc::TraceEntry& e = entries[i];
    ANATOMY_CHECK(e.seq == i, ValueError, "trace_from_history: event {} has seq {}: the history is not contiguous", i,
                  e.seq);
    if (e.action == alloc::TraceAction::Alloc) {
      const auto [it, inserted] = live.emplace(e.address, next_id);
      ANATOMY_CHECK(inserted, ValueError,
                    "trace_from_history: event {} allocates {:#x}, which allocation {} still holds", i, e.address,
                    it->second);
      out.trace.push_back({true, next_id, e.size});
      freed.push_back(false);
      ++next_id;
    } else if (e.action == alloc::TraceAction::FreeRequested) {
      const auto it = live.find(e.address);
      if (it == live.end()) {
        ++out.earlier_frees;
        continue;
      }
      out.trace.push_back({false, it->second, 0});
      freed[it->second] = true;
      live.erase(it);
    }
  }
  for (uint32_t id = 0; id < next_id; ++id) {
    if (!freed[id]) {
      out.trace.push_back({false, id, 0});
      ++out.closed;
    }
  }
  return out;
}

RecordedTrace record_trace(alloc::CachingAllocator& allocator, size_t max_entries, const std::function<void()>& run) {
  allocator.record_memory_history(true, max_entries);
  std::vector<alloc::TraceEntry> entries;
  try {
    run();
    entries = allocator.memory_snapshot().trace;
  } catch (...) {
    allocator.record_memory_history(false);
    throw;
  }
  allocator.record_memory_history(false);
  return trace_from_history(entries);
}

namespace {
constexpr const char* kTraceHeader = "anatomy-alloc-trace 1";
}  // namespace

void write_trace(const std::string& path, const AllocTrace& trace) {
  std::ofstream out(path);
  ANATOMY_CHECK(out.good(), ValueError, "write_trace: cannot open {} for writing", path);
  out << kTraceHeader << '\n';
  for (const AllocTraceEvent& e : trace) {
    if (e.is_alloc) {
      out << "a " << e.id << ' ' << e.size << '\n';
    } else {
      out << "f " << e.id << '\n';
    }
  }
  out.flush();
  ANATOMY_CHECK(out.good(), ValueError, "write_trace: writing {} failed", path);
}

AllocTrace read_trace(const std::string& path) {
  std::ifstream in(path);
  ANATOMY_CHECK(in.good(), ValueError, "read_trace: cannot open {}", path);
  std::string line;
  ANATOMY_CHECK(std::getline(in, line) && line == kTraceHeader, ValueError, "read_trace: {} does not start with \"{}\"",
                path, kTraceHeader);
  AllocTrace trace;
  for (size_t number = 2; std::getline(in, line); ++number) {
    std::istringstream fields(line);
    std::string kind, rest;
    AllocTraceEvent e{false, 0, 0};
    fields >> kind >> e.id;
    if (kind == "a") {
      e.is_alloc = true;
      fields >> e.size;
    }
    ANATOMY_CHECK((kind == "a" || kind == "f") && !fields.fail() && !(fields >> rest), ValueError,
                  "read_trace: line {} of {} is \"{}\", expected \"a ID SIZE\" or \"f ID\"", number, path, line);
    trace.push_back(e);
  }
  return trace;
}

}  // namespace anatomy::testing
