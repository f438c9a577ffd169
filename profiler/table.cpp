// Profile::table (profiler.h): torch.profiler's key_averages().table(), from the merged events.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "anatomy/profiler/profiler.h"
#include "anatomy/profiler/recording.h"

namespace anatomy::profiler {
namespace {

struct Row {
  std::string name;
  std::string shapes;  // with group_by_shape
  int64_t count = 0;
  double cpu_total = 0, cpu_self = 0, cuda_total = 0, cuda_self = 0;
  int64_t memory = 0;
};

std::string time_string(double us) {
  if (us >= 1e6) return fmt::format("{:.3f}s", us / 1e6);
  if (us >= 1e3) return fmt::format("{:.3f}ms", us / 1e3);
  return fmt::format("{:.3f}us", us);
}

std::string bytes_string(int64_t b) {
  const double a = static_cast<double>(b < 0 ? -b : b);
  const char* sign = b < 0 ? "-" : "";
  if (a >= 1 << 30) return fmt::format("{}{:.2f} GiB", sign, a / (1 << 30));
  if (a >= 1 << 20) return fmt::format("{}{:.2f} MiB", sign, a / (1 << 20));
  if (a >= 1 << 10) return fmt::format("{}{:.2f} KiB", sign, a / (1 << 10));
  return fmt::format("{}{} B", sign, b);
}

}  // namespace

std::string Profile::table(SortBy sort_by, bool group_by_shape, int row_limit) const {
  const std::vector<Event>& events = this->events();
  // Self time: total minus the direct children's totals (host and device).
  std::vector<double> child_cpu(events.size(), 0), child_cuda(events.size(), 0);
  for (const Event& e : events) {
    if (e.parent < 0) continue;
    child_cpu[static_cast<size_t>(e.parent)] += e.cpu_us();
    child_cuda[static_cast<size_t>(e.parent)] += e.device_us();
  }
  std::map<std::pair<std::string, std::string>, Row> rows;
  bool any_cuda = false;
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    const std::string shapes = group_by_shape ? fmt::format("{}", fmt::join(e.input_shapes, ", ")) : "";
    Row& r = rows[{e.name, shapes}];
    r.name = e.name;
    r.shapes = shapes;
    ++r.count;
    r.cpu_total += e.cpu_us();
    r.cpu_self += std::max(0.0, e.cpu_us() - child_cpu[i]);
    r.cuda_total += e.device_us();
    r.cuda_self += std::max(0.0, e.device_us() - child_cuda[i]);
    r.memory += e.memory_delta;
    any_cuda = any_cuda || e.device_start_us >= 0;
  }
  std::vector<Row> sorted;
  for (auto& [k, r] : rows) sorted.push_back(std::move(r));
  std::stable_sort(sorted.begin(), sorted.end(), [&](const Row& a, const Row& b) {
    switch (sort_by) {
      case SortBy::CudaTotal:
        return a.cuda_total > b.cuda_total;
      case SortBy::Count:
        return a.count > b.count;
      case SortBy::CpuTotal:
        break;
    }
    return a.cpu_total > b.cpu_total;
  });
  // The sums of every event's self time, the percentages' base (as torch's table): the top-level
  // events' totals would miss the device time under a user scope that records none of its own.
  double cpu_all = 0, cuda_all = 0;
  for (const Row& r : sorted) {
    cpu_all += r.cpu_self;
    cuda_all += r.cuda_self;
  }
  if (row_limit >= 0 && sorted.size() > static_cast<size_t>(row_limit)) sorted.resize(static_cast<size_t>(row_limit));

  const bool memory = recording_->options.profile_memory;
  size_t name_width = 4;
  for (const Row& r : sorted) name_width = std::max(name_width, std::min<size_t>(r.name.size(), 50));
  std::string header = fmt::format("{:<{}}  {:>12}  {:>8}  {:>12}  {:>12}", "Name", name_width, "Self CPU", "Self %",
                                   "CPU total", "CPU avg");
  if (any_cuda) header += fmt::format("  {:>12}  {:>12}  {:>12}", "Self CUDA", "CUDA total", "CUDA avg");
  if (memory) header += fmt::format("  {:>12}", "Memory");
  header += fmt::format("  {:>8}", "# Calls");
  if (group_by_shape) header += "  Input shapes";
  const std::string rule(header.size(), '-');
  std::string out = rule + "\n" + header + "\n" + rule + "\n";
  for (const Row& r : sorted) {
    const std::string name = r.name.size() > 50 ? r.name.substr(0, 47) + "..." : r.name;
    std::string line = fmt::format("{:<{}}  {:>12}  {:>7.2f}%  {:>12}  {:>12}", name, name_width,
                                   time_string(r.cpu_self), cpu_all > 0 ? 100.0 * r.cpu_self / cpu_all : 0.0,
                                   time_string(r.cpu_total), time_string(r.cpu_total / static_cast<double>(r.count)));
    if (any_cuda) {
      line += fmt::format("  {:>12}  {:>12}  {:>12}", time_string(r.cuda_self), time_string(r.cuda_total),
                          time_string(r.cuda_total / static_cast<double>(r.count)));
    }
    if (memory) line += fmt::format("  {:>12}", bytes_string(r.memory));
    line += fmt::format("  {:>8}", r.count);
    if (group_by_shape) line += "  [" + r.shapes + "]";
    out += line + "\n";
  }
  out += rule + "\n";
  out += fmt::format("Self CPU time total: {}\n", time_string(cpu_all));
  if (any_cuda) out += fmt::format("Self CUDA time total: {}\n", time_string(cuda_all));
  return out;
}

}  // namespace anatomy::profiler
