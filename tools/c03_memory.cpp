// gpu-anatomy c03 fragmentation and c03 oom: seed 003's claims about the caching allocator,
// measured on its policy. fragmentation replays one workload (the synthetic transformer training
// trace of testing/alloc_trace.h) under two ALLOC_CONF settings and prints what each reserved at
// its peak against what it handed out; oom asks for blocks on a device limited by
// per_process_memory_fraction until the allocator refuses one, prints its message, frees them
// and asks again in the same process. Both run on the simulated device (testing/simulated_memory.h),
// whose allocator is the CUDA allocator's policy over host memory, so they need no GPU and give
// the figures the CUDA allocator gives for the same requests.
#include <fmt/format.h>

#include <memory>

#include "anatomy/testing/simulated_memory.h"
#include "anatomy/tools/chapters.h"
#include "anatomy/tools/experiment.h"

namespace anatomy::tools {
namespace {

struct FragmentationOptions {
  CommonOptions common;
  std::vector<std::string> confs = {"", "expandable_segments:True"};
};

void run_fragmentation(const FragmentationOptions& o) {
  Report report("c03", "fragmentation", o.common, Device("cpu"));
  report.set_option("conf", o.confs);
  fmt::print(
      "=== One transformer training trace under each ALLOC_CONF setting (simulated device, the CUDA "
      "allocator's policy) ===\n");
  fmt::print("{:<34} {:>14} {:>14} {:>14} {:>10} {:>9} {:>7}\n", "setting", "peak requested", "peak allocated",
             "peak reserved", "reserved /", "cudaMalloc", "maps");
  fmt::print("{:<34} {:>14} {:>14} {:>14} {:>10}\n", "", "", "", "", "allocated");
  nlohmann::json rows = nlohmann::json::array();
  std::vector<testing::SimulatedFragmentation> results;
  for (const std::string& conf : o.confs) {
    testing::SimulatedFragmentation f;
    try {
      f = testing::simulated_fragmentation(conf);
    } catch (const ValueError& e) {
      throw UsageError(e.what());
    }
    const std::string name = f.conf.empty() ? "(the defaults)" : f.conf;
    fmt::print("{:<34} {:>14} {:>14} {:>14} {:>10.3f} {:>9} {:>7}\n", name, bytes_string(f.peak_requested),
               bytes_string(f.peak_allocated), bytes_string(f.peak_reserved), f.reserved_over_allocated(),
               f.provider_allocs, f.provider_maps);
    rows.push_back({{"conf", f.conf},
                    {"allocations", f.allocations},
                    {"peak_requested_bytes", f.peak_requested},
                    {"peak_allocated_bytes", f.peak_allocated},
                    {"peak_reserved_bytes", f.peak_reserved},
                    {"reserved_over_allocated", f.reserved_over_allocated()},
                    {"provider_allocs", f.provider_allocs},
                    {"provider_maps", f.provider_maps}});
    results.push_back(f);
  }
  report.results()["settings"] = rows;
  if (!results.empty()) {
    report.add_note(fmt::format("the trace makes {} allocations; its live bytes peak at {}", results[0].allocations,
                                bytes_string(results[0].peak_requested)));
  }
  for (size_t i = 1; i < results.size(); ++i) {
    const auto& a = results[0];
    const auto& b = results[i];
    report.add_note(fmt::format(
        "{} reserves {:.1f}% {} than {} at the peak ({} against {})", b.conf.empty() ? "the defaults" : b.conf,
        100.0 * std::abs(static_cast<double>(b.peak_reserved - a.peak_reserved)) / static_cast<double>(a.peak_reserved),
        b.peak_reserved <= a.peak_reserved ? "less" : "more", a.conf.empty() ? "the defaults" : a.conf,
        bytes_string(b.peak_reserved), bytes_string(a.peak_reserved)));
  }
  report.print_notes();
  report.write_json();
}

struct OomOptions {
  CommonOptions common;
  int64_t device_mib = 4096, block_mib = 256;
  double fraction = 0.25;
};

void run_oom(const OomOptions& o) {
  check_positive("--device-mib", o.device_mib);
  check_positive("--block-mib", o.block_mib);
  if (!(o.fraction > 0 && o.fraction <= 1)) {
    throw UsageError(fmt::format("--fraction: must be in (0, 1], got {}", o.fraction));
  }
  Report report("c03", "oom", o.common, Device("cpu"));
  report.set_option("device_mib", o.device_mib);
  report.set_option("fraction", o.fraction);
  report.set_option("block_mib", o.block_mib);
  const testing::SimulatedOom r = testing::simulated_oom(o.device_mib, o.fraction, o.block_mib);
  fmt::print("=== Out of memory on purpose (simulated device of {} MiB, per_process_memory_fraction:{}) ===\n",
             o.device_mib, o.fraction);
  fmt::print("blocks of {} handed out before one was refused: {} (reserved then: {}; allowed: {})\n",
             bytes_string(r.block_bytes), r.blocks_before_oom, bytes_string(r.reserved_at_oom),
             bytes_string(r.allowed_bytes));
  fmt::print("the allocator's message:\n  {}\n", r.message.empty() ? "(none: the fraction never refused)" : r.message);
  fmt::print("after freeing them and empty_cache(), the same request {}\n\n{}",
             r.recovered ? "succeeds: the process goes on" : "FAILS", r.summary);
  report.results()["blocks_before_oom"] = r.blocks_before_oom;
  report.results()["message"] = r.message;
  report.results()["reserved_at_oom_bytes"] = r.reserved_at_oom;
  report.results()["allowed_bytes"] = r.allowed_bytes;
  report.results()["recovered"] = r.recovered;
  report.add_note(
      "an OutOfMemoryError is an exception like any other: what was allocated stays valid, and "
      "memory freed afterwards serves the next request (seed 003's catch, free, retry)");
  report.print_notes();
  report.write_json();
  if (r.message.empty() || !r.recovered) {
    throw ExperimentFailed("c03 oom: the allocator did not refuse and then recover as it should");
  }
}

}  // namespace

void add_c03_memory(CLI::App& chapter) {
  CLI::App* frag = chapter.add_subcommand("fragmentation", "One workload under two ALLOC_CONF settings");
  auto f = std::make_shared<FragmentationOptions>();
  frag->add_option("--conf", f->confs,
                   "an ALLOC_CONF setting to compare (repeat; default: the defaults, then "
                   "expandable_segments:True)");
  frag->add_option("--json", f->common.json, "write the report as JSON here (schema: docs/gpu-anatomy.schema.json)");
  frag->callback([f] { run_fragmentation(*f); });

  CLI::App* oom = chapter.add_subcommand("oom", "An out-of-memory provoked with a memory fraction, and recovered");
  auto m = std::make_shared<OomOptions>();
  oom->add_option("--device-mib", m->device_mib, "the simulated device's memory")->capture_default_str();
  oom->add_option("--fraction", m->fraction, "per_process_memory_fraction")->capture_default_str();
  oom->add_option("--block-mib", m->block_mib, "the size of each request")->capture_default_str();
  oom->add_option("--json", m->common.json, "write the report as JSON here (schema: docs/gpu-anatomy.schema.json)");
  oom->callback([m] { run_oom(*m); });
}

}  // namespace anatomy::tools
