// gpu-anatomy memory-snapshot: runs a small workload with the caching allocator's memory history
// recording, then prints memory_summary() and writes the snapshot as JSON, HTML and/or SVG.
// On CUDA the workload is a few tensor ops on cuda:0, whose events name the operators; with
// --simulated it runs on the simulated device (alloc/simulated_provider.h), needs no GPU, and
// names its requests with CurrentOpScope as a dispatched operator would.
#include <fmt/format.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "anatomy/alloc/memory_snapshot.h"
#include "anatomy/alloc/simulated_provider.h"
#include "anatomy/alloc/snapshot_html.h"
#include "anatomy/anatomy.h"
#include "anatomy/dispatch/current_op.h"
#include "anatomy/tools/commands.h"
#if ANATOMY_WITH_CUDA
#include "anatomy/backends/cuda/memory/cuda_allocator.h"
#include "anatomy/backends/cuda/runtime/device.h"
#endif

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

// A fixed sequence that leaves every block state in the picture: small and large segments,
// holes left by frees, a block waiting for another stream (record_stream), and its events; and
// an expandable segment whose free middle empty_cache unmapped (the hatched range).
alloc::MemorySnapshot simulated_workload(std::string& summary) {
  using alloc::kMB;
  static alloc::SimulatedProvider device(256 * kMB);  // static: the allocator's blocks live in it
  static alloc::CachingAllocator cache(device, alloc::AllocConf{});
  cache.record_memory_history(true, 1000);
  auto alloc_in = [&](const char* op, size_t n, alloc::StreamId s = 0) {
    dispatch::CurrentOpScope scope(op);
    return cache.raw_alloc(n, s);
  };
  alloc::AllocConf expandable;
  expandable.expandable_segments = true;
  cache.set_conf(expandable);
  void* kv = alloc_in("aten::empty.memory_format", 5 * kMB, 2);
  void* scratch = alloc_in("aten::cat", 50 * kMB, 2);
  void* kv2 = alloc_in("aten::empty.memory_format", 5 * kMB, 2);
  cache.raw_free(scratch);
  cache.empty_cache();  // the pages [20, 40) MiB of stream 2's segment go back
  cache.set_conf(alloc::AllocConf{});
  (void)kv, (void)kv2;
  std::vector<void*> small;
  for (int i = 0; i < 12; ++i)
    small.push_back(alloc_in(i % 2 ? "aten::add.Tensor" : "aten::mul.Tensor", 40000 + 9000 * i));
  for (int i = 0; i < 12; i += 3) cache.raw_free(small[i]);  // holes in the small segment
  void* weight = alloc_in("aten::randn", 6 * kMB);
  void* act = alloc_in("aten::mm", 4 * kMB);
  void* tmp = alloc_in("aten::softmax", 3 * kMB);
  void* grad = alloc_in("aten::mm", 24 * kMB);  // a segment of its own size
  cache.raw_free(tmp);
  void* shared = alloc_in("aten::copy_", 2 * kMB, 0);
  cache.record_stream(shared, 1);  // stream 1 still reads it:
  cache.raw_free(shared);          // freed, pending until stream 1's event completes
  void* side = alloc_in("aten::empty.memory_format", 500000, 1);
  (void)weight, (void)act, (void)grad, (void)side;  // kept alive: they are the picture
  summary = cache.memory_summary();
  return cache.memory_snapshot();
}

#if ANATOMY_WITH_CUDA
alloc::MemorySnapshot cuda_workload(std::string& summary) {
  ANATOMY_CHECK(cuda::is_available(), DeviceError,
                "memory-snapshot: no CUDA device is available; run with --simulated for the simulated device");
  alloc::CachingAllocator& cache = cuda::caching_allocator(0);
  cache.record_memory_history(true, 1000);
  Device dev("cuda:0");
  Tensor a = ones({512, 512}, dev), b = ones({512, 512}, dev);
  Tensor c = a.add(b);
  Tensor d = matmul(a, c);
  {
    Tensor t = d.mul(c).sum();
    (void)t;
  }
  Tensor e = ones({4096, 1024}, dev);  // 16 MiB: the large pool
  summary = cache.memory_summary();
  alloc::MemorySnapshot s = cache.memory_snapshot();
  cache.record_memory_history(false);
  return s;
}
#endif

void run(const Options& o) {
  std::string summary;
  alloc::MemorySnapshot snapshot;
  if (o.simulated) {
    snapshot = simulated_workload(summary);
  } else {
#if ANATOMY_WITH_CUDA
    snapshot = cuda_workload(summary);
#else
    ANATOMY_THROW(DeviceError, "memory-snapshot: anatomy was built without CUDA; run with --simulated");
#endif
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
