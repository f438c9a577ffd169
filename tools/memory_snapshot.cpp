// gpu-anatomy memory-snapshot: runs a small workload with the caching allocator's memory history
// recording, then prints memory_summary() and writes the snapshot as JSON, HTML and/or SVG.
// On CUDA the workload is a few tensor ops on cuda:0, whose events name the operators; with
// --simulated it is testing/simulated_snapshot.h's, on the simulated device, and needs no GPU.
#include <fmt/format.h>

#include <fstream>
#include <memory>
#include <string>

#include "anatomy/anatomy.h"
#include "anatomy/cuda.h"
#include "anatomy/testing/simulated_snapshot.h"
#include "anatomy/tools/chapters.h"

namespace anatomy::tools {
namespace {

struct Options {
  bool simulated = false;
  std::string html, json, svg;
};

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  ANATOMY_CHECK(out.good(), ValueError, "memory-snapshot: cannot write '{}'", path);
  out << text;
  ANATOMY_CHECK(out.good(), ValueError, "memory-snapshot: writing '{}' failed", path);
}

alloc::MemorySnapshot cuda_workload(std::string& summary) {
  ANATOMY_CHECK(cuda::is_available(), DeviceError,
                "memory-snapshot: no CUDA device is available ({}); run with --simulated for the simulated device",
                cuda::unavailable_reason());
  cuda::record_memory_history(true, 1000, 0);
  Device dev("cuda:0");
  Tensor a = ones({512, 512}, dev), b = ones({512, 512}, dev);
  Tensor c = a.add(b);
  Tensor d = matmul(a, c);
  {
    Tensor t = d.mul(c).sum();
    (void)t;
  }
  Tensor e = ones({4096, 1024}, dev);  // 16 MiB: the large pool
  summary = cuda::memory_summary(0);
  alloc::MemorySnapshot s = cuda::memory_snapshot(0);
  cuda::record_memory_history(false, 1000, 0);
  return s;
}

void run(const Options& o) {
  std::string summary;
  alloc::MemorySnapshot snapshot;
  if (o.simulated) {
    snapshot = testing::simulated_snapshot(summary);
  } else {
    snapshot = cuda_workload(summary);
  }
  fmt::print("{}", summary);
  if (!o.json.empty()) write_file(o.json, alloc::to_json(snapshot));
  if (!o.html.empty()) write_file(o.html, alloc::snapshot_to_html(snapshot));
  if (!o.svg.empty()) write_file(o.svg, alloc::snapshot_to_svg(snapshot));
  for (const std::string* p : {&o.json, &o.html, &o.svg}) {
    if (!p->empty()) fmt::print("wrote {}\n", *p);
  }
}

}  // namespace

void add_memory_snapshot(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("memory-snapshot",
                                     "Run a small workload recording the caching allocator's history; print its "
                                     "summary and write the snapshot");
  auto o = std::make_shared<Options>();
  cmd->add_flag("--simulated", o->simulated, "Use the simulated device (no GPU needed) instead of cuda:0");
  cmd->add_option("--html", o->html, "Write a self-contained HTML picture of the snapshot here");
  cmd->add_option("--json", o->json, "Write the snapshot as JSON (PyTorch's snapshot shape) here");
  cmd->add_option("--svg", o->svg, "Write the SVG picture alone here");
  cmd->callback([o] { run(*o); });
}

}  // namespace anatomy::tools
