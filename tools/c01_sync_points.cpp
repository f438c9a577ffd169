// gpu-anatomy c01 sync-points: seed 004's second experiment. What a wait for the device costs:
// a loop of small steps queued with one wait at the end against the same loop waiting after
// every step; then the calls that wait without saying so (item(), printing a tensor, a copy to
// the CPU), each timed; then the same calls under the sync-debug mode, which catches each wait
// and names the operator that made it (cuda::set_sync_debug_mode, docs/cuda.md).
//
// A step is y = relu(x @ w) on (size, size) tensors. Everything here is host time (a steady clock
// around the loop or the call), because a wait is host time. On the CPU nothing is queued: the
// two loops cost the same and the sync-debug mode has nothing to catch, which the run says.
#include <fmt/format.h>

#include <chrono>
#include <memory>

#include "anatomy/cuda.h"
#include "anatomy/tools/chapters.h"
#include "anatomy/tools/experiment.h"
#include "anatomy/tools/timing.h"

namespace anatomy::tools {
namespace {

struct Options {
  CommonOptions common;
  int64_t size = 1024;
};

// Host milliseconds per call of a loop of `iters` calls with one wait at its end, after `warmup`
// calls: one sample per loop, five loops.
std::vector<double> queued_times(Device device, int warmup, int iters, const std::function<void()>& fn) {
  for (int i = 0; i < warmup; ++i) fn();
  wait_for(device);
  std::vector<double> samples;
  using clock = std::chrono::steady_clock;
  for (int r = 0; r < 5; ++r) {
    const auto t0 = clock::now();
    for (int i = 0; i < iters; ++i) fn();
    wait_for(device);
    samples.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count() / iters);
  }
  return samples;
}

void print_row(const std::string& name, const std::vector<double>& s, const char* unit) {
  fmt::print("{:<34}{:>10.4f} {}   (p10-p90 {:.4f}-{:.4f})\n", name, median(s), unit, quantile(s, 0.1),
             quantile(s, 0.9));
}

void run(const Options& o) {
  check_positive("--size", o.size);
  const Device device = resolve_device(o.common.device, o.common.quiet);
  const DType dtype = resolve_dtype(o.common.dtype);
  Report report("c01", "sync-points", o.common, device);
  report.set_option("size", o.size);
  manual_seed(0);
  const TensorOptions opts = TensorOptions().device(device);
  const Tensor x = randn({o.size, o.size}, opts).to(dtype), w = randn({o.size, o.size}, opts).to(dtype);
  Tensor y;
  auto step = [&] { y = x.matmul(w).relu(); };
  const int warmup = o.common.warmup, iters = o.common.iters;
  Progress progress("c01 sync-points", o.common.quiet);

  fmt::print("=== Queued vs synchronized (y = relu(x @ w), {} x {} {}, {}) ===\n", o.size, o.size,
             long_dtype_name(dtype), device.str());
  progress.update("the queued loop");
  const std::vector<double> queued = queued_times(device, warmup, iters, step);
  progress.update("the synchronized loop");
  const std::vector<double> synced = host_times_with_wait(device, warmup, iters, step);
  print_row("async (one wait after the loop)", queued, "ms/iter");
  print_row("sync after every step", synced, "ms/iter");
  report.add_measurement("loop", "queued", queued);
  report.add_measurement("loop", "synchronized", synced);

  // The calls that wait, each after a queued step, so each has work to wait for.
  struct Call {
    const char* name;
    std::function<void()> fn;
  };
  const std::vector<Call> calls = {
      {"item() of a sum", [&] { (void)y.sum().item<double>(); }},
      {"printing y[0, :4]",
       [&] {
         (void)to_string(y.index({0, indexing::Slice(0, 4)}));
       }},
      {"copy to the CPU (.to(cpu))", [&] { (void)y.to(kCPU); }},
  };
  fmt::print("\n=== Calls that wait for the device (after one queued step each) ===\n");
  for (const Call& c : calls) {
    progress.update(c.name);
    std::vector<double> s = host_times_with_wait(device, warmup, iters, [&] {
      step();
      c.fn();
    });
    print_row(c.name, s, "ms/call");
    report.add_measurement("waiting call", c.name, std::move(s));
  }

  fmt::print("\n=== The same calls under the sync-debug mode ===\n");
  nlohmann::json caught = nlohmann::json::array();
  if (!device.is_cuda()) {
    fmt::print("on the CPU nothing is queued, so nothing waits: the sync-debug mode watches CUDA devices\n");
  } else {
    // Error mode stops each call at its wait with a DeviceError that names the operator; the
    // mode is restored whatever happens.
    struct Restore {
      cuda::SyncDebugMode old = cuda::sync_debug_mode();
      ~Restore() { cuda::set_sync_debug_mode(old); }
    } restore;
    for (const Call& c : calls) {
      step();
      std::string message = "(no wait caught)";
      cuda::set_sync_debug_mode(cuda::SyncDebugMode::Error);
      try {
        c.fn();
      } catch (const DeviceError& e) {
        message = e.what();
        message = message.substr(0, message.find("; sync debug mode"));
      }
      cuda::set_sync_debug_mode(cuda::SyncDebugMode::Off);
      fmt::print("{:<34}{}\n", c.name, message);
      caught.push_back({{"call", c.name}, {"caught", message}});
    }
    wait_for(device);
  }
  report.results()["sync_debug"] = caught;

  const double q = median(queued), s = median(synced);
  if (device.is_cuda()) {
    report.add_note(
        fmt::format("waiting after every step costs {:.2f}x the queued loop: {:.4f} ms per step that the "
                    "host spends waiting instead of queuing the next step",
                    s / q, s - q));
  } else {
    report.add_note(
        fmt::format("on the CPU each step finishes before the call returns: the synchronized loop takes "
                    "{:.2f}x the queued one, which is noise, not waiting",
                    s / q));
  }
  report.add_note(std::string(device.is_cuda() ? "" : "on a CUDA device, ") +
                  "item(), printing and copies to the CPU read device memory on the host, so each waits for every "
                  "queued step before it; keep them out of a training loop's steps");
  report.print_notes();
  report.write_json();
}

}  // namespace

void add_c01_sync_points(CLI::App& chapter) {
  CLI::App* cmd = chapter.add_subcommand("sync-points", "What waiting for the device costs, and where it hides");
  auto o = std::make_shared<Options>();
  add_common_options(cmd, o->common, CommonDefaults{"fp16", {"fp16", "bf16", "fp32", "fp64"}, 50});
  cmd->add_option("--size", o->size, "rows and columns of the step's matrices")->capture_default_str();
  cmd->callback([o] { run(*o); });
}

}  // namespace anatomy::tools
