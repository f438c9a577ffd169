// gpu-anatomy c06 overhead: what the dispatcher costs the host for one small operator call, by
// path. First the dispatch trace of one `a + b` (each step: operator, key set, winning key,
// kernel), then the host time of one call of `a + b` on one-element tensors: on the CPU; with an
// input that requires grad (the call records an AddBackward0 node); the same under no_grad (the
// autograd kernel's fast path, Note [Autograd kernel fast path]); with the dispatch trace on
// (every step formatted into a line); and on a CUDA device (the launch, queued, no wait) with and
// without autograd. Each sample is a batch of calls divided by its size; the result tensors are
// freed as in a loop, so the allocator's reuse is part of the cost. With --peer torch, PyTorch's
// a + b on its own one-element tensors is timed the same way on each path it has (all but the
// trace), beside ours.
#include <fmt/format.h>

#include <chrono>
#include <functional>
#include <memory>

#include "anatomy/cuda.h"
#include "anatomy/tools/chapters.h"
#include "anatomy/tools/experiment.h"
#include "anatomy/tools/peer.h"
#include "anatomy/tools/timing.h"

namespace anatomy::tools {
namespace {

struct Options {
  CommonOptions common;
  int batch = 1000;
};

struct Path {
  std::string name;
  Device device;
  bool requires_grad = false;
  bool no_grad = false;
  bool trace = false;
};

// Host milliseconds per call of `call`: `iters` batches of `batch` calls, after `warmup` batches;
// what `scope` returns (when given) is held around each batch, untimed.
std::vector<double> per_call(const Options& o, Device device, const std::function<void()>& call,
                             const std::function<std::shared_ptr<void>()>& scope = {}) {
  std::vector<double> samples;
  auto batch = [&] {
    const std::shared_ptr<void> held = scope ? scope() : nullptr;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < o.batch; ++i) call();
    const auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::milli>(t1 - t0).count() / o.batch;
  };
  for (int i = 0; i < o.common.warmup; ++i) (void)batch();
  for (int i = 0; i < o.common.iters; ++i) samples.push_back(batch());
  if (device.is_cuda()) cuda::synchronize(device.index());
  return samples;
}

// Our a + b on the path.
std::vector<double> per_call(const Options& o, const Path& p) {
  Tensor a = ones({1}, TensorOptions().device(p.device)), b = ones({1}, TensorOptions().device(p.device));
  if (p.requires_grad) a.requires_grad_(true);
  // The mode and the trace, fresh for each batch (a trace holds every line it caught).
  struct Scope {
    std::unique_ptr<autograd::NoGradGuard> no_grad;
    std::unique_ptr<dispatch::TraceCapture> trace;
  };
  return per_call(
      o, p.device,
      [&] {
        Tensor c = a + b;
        (void)c;
      },
      [&p] {
        auto s = std::make_shared<Scope>();
        if (p.no_grad) s->no_grad = std::make_unique<autograd::NoGradGuard>();
        if (p.trace) s->trace = std::make_unique<dispatch::TraceCapture>();
        return std::shared_ptr<void>(s);
      });
}

void run(const Options& o) {
  check_positive("--batch", o.batch);
  const Device device = resolve_device(o.common.device, o.common.quiet);
  const std::unique_ptr<Peer> peer = open_peer(o.common.peer);
  Report report("c06", "overhead", o.common, device);
  report.set_option("batch", o.batch);
  {
    const Tensor a = ones({1}, TensorOptions().device(device)), b = ones({1}, TensorOptions().device(device));
    dispatch::TraceCapture capture(dispatch::TraceDetail::KernelFiles);
    const Tensor c = a + b;
    fmt::print("=== The dispatch trace of one a + b on {} ===\n{}\n", device.str(), capture.text());
    report.results()["trace"] = capture.lines();
  }
  std::vector<Path> paths = {{"cpu", kCPU},
                             {"cpu, an input requires grad", kCPU, true},
                             {"cpu, requires grad, under no_grad", kCPU, true, true},
                             {"cpu, dispatch trace on", kCPU, false, false, true}};
  if (device.is_cuda()) {
    paths.push_back({device.str() + " (queued)", device});
    paths.push_back({device.str() + ", an input requires grad", device, true});
  }
  Progress progress("c06 overhead", o.common.quiet);
  fmt::print("=== Host time of one a + b on one-element fp32 tensors (batches of {}) ===\n", o.batch);
  std::map<std::string, double> medians;
  for (const Path& p : paths) {
    progress.update(p.name);
    std::vector<double> s = per_call(o, p);
    medians[p.name] = median(s);
    const std::string line = fmt::format("{:<40}{:>10.0f} ns/call   (p10-p90 {:.0f}-{:.0f})", p.name, median(s) * 1e6,
                                         quantile(s, 0.1) * 1e6, quantile(s, 0.9) * 1e6);
    if (peer && !p.trace) {
      const std::unique_ptr<PeerCall> call = peer->small_add(p.device, p.requires_grad, p.no_grad);
      const std::vector<double> ps = per_call(o, p.device, [&] { call->run(); });
      fmt::print("{}   {} {:.0f} ns ({:.2f}x)\n", line, peer->engine(), median(ps) * 1e6, median(ps) / median(s));
      report.add_measurement("a + b", p.name, std::move(s), peer->engine(), ps);
    } else {
      fmt::print("{}\n", line);
      report.add_measurement("a + b", p.name, std::move(s));
    }
  }
  const double base = medians["cpu"];
  report.add_note(fmt::format(
      "recording the autograd node costs {:.0f} ns per call on the CPU ({:.2f}x the plain call)",
      (medians["cpu, an input requires grad"] - base) * 1e6, medians["cpu, an input requires grad"] / base));
  report.add_note(
      fmt::format("under no_grad the call takes {:.2f}x the plain one: the autograd kernel only checks the "
                  "mode and redispatches",
                  medians["cpu, requires grad, under no_grad"] / base));
  report.add_note(
      fmt::format("the dispatch trace costs {:.1f}x: every step is formatted into a line; off, it costs "
                  "one relaxed load per call",
                  medians["cpu, dispatch trace on"] / base));
  if (device.is_cuda()) {
    report.add_note(
        fmt::format("on {} the host's part of the call is {:.0f} ns: the same dispatch plus a kernel "
                    "launch, queued without waiting",
                    device.str(), medians[device.str() + " (queued)"] * 1e6));
  }
  report.print_notes();
  report.write_json();
}

}  // namespace

void add_c06_overhead(CLI::App& chapter) {
  CLI::App* cmd = chapter.add_subcommand("overhead", "Host time of one small operator call, by dispatch path");
  auto o = std::make_shared<Options>();
  CommonDefaults defaults{std::nullopt, {}, 30, 3};
  defaults.peer = true;
  add_common_options(cmd, o->common, defaults);
  cmd->add_option("--batch", o->batch, "calls per timed sample")->capture_default_str();
  cmd->callback([o] { run(*o); });
}

}  // namespace anatomy::tools
