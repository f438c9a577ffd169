// gpu-anatomy c10 profile: "where does the time of a step go", on the transformer of
// testing/transformer_step.h. One step (the loss and its backward, each in a profiler::Range) is
// profiled after a warm-up; the experiment prints the profiler's table (by CUDA time on a GPU,
// by CPU time on the CPU), writes the Chrome trace with --trace and its timeline picture beside
// it (scripts/plot-profile.py, run by the project's virtual environment: plot_script.h), and
// measures what profiling costs: the step's host time with and without an active profile. The
// profile must have recorded the forward's and the backward's operators, the latter with their
// autograd nodes, or the run fails. With --peer torch, the same model in torch's terms (the same
// weights and batch, ATen's operators; its loss checked against ours first) is timed the same
// way, without and with torch's profiler (Kineto), and torch's table of the profiled step is
// printed beside ours: its CPU events by name, with self and total time, as torch.profiler's
// key_averages() sums them.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "anatomy/profiler/profiler.h"
#include "anatomy/testing/transformer_step.h"
#include "anatomy/tools/chapters.h"
#include "anatomy/tools/experiment.h"
#include "anatomy/tools/peer.h"
#include "anatomy/tools/plot_script.h"
#include "anatomy/tools/timing.h"

namespace anatomy::tools {
namespace {

constexpr double kLossRtol = 1e-4;  // the peer's loss against ours

struct Options {
  CommonOptions common;
  std::string trace;  // write the Chrome trace here, and its picture beside it
  bool no_picture = false;
  int rows = 15;
  bool quick = false;
};

// The peer's table of one profiled step, as torch.profiler's key_averages().table() would sort it
// on this device's run: by total CPU time.
void print_peer_table(const Peer& peer, const std::vector<PeerOperator>& ops, double device_us, int rows) {
  double self_sum = 0;
  for (const PeerOperator& op : ops) self_sum += op.cpu_self_us;
  fmt::print("\n=== The same step in {} under its profiler (Kineto): CPU events by name, by total CPU time ===\n",
             peer.engine());
  fmt::print("{:<48} {:>8} {:>14} {:>14} {:>8}\n", "name", "calls", "self CPU us", "CPU total us", "self %");
  for (int i = 0; i < rows && i < static_cast<int>(ops.size()); ++i) {
    const PeerOperator& op = ops[static_cast<size_t>(i)];
    fmt::print("{:<48} {:>8} {:>14.1f} {:>14.1f} {:>7.1f}%\n", op.name.substr(0, 48), op.calls, op.cpu_self_us,
               op.cpu_total_us, self_sum > 0 ? 100.0 * op.cpu_self_us / self_sum : 0.0);
  }
  fmt::print("self CPU total: {:.1f} us over {} names{}\n", self_sum, ops.size(),
             device_us > 0 ? fmt::format("; the kernels' device time: {:.1f} us", device_us) : "");
}

void run(const Options& o) {
  const Device device = resolve_device(o.common.device, o.common.quiet);
  check_positive("--rows", o.rows);
  // The picture's interpreter and script are looked for first: a machine without them fails now.
  std::optional<PlotScript> plot;
  if (!o.trace.empty() && !o.no_picture) plot = find_plot_script("plot-profile.py", "c10 profile", "--no-picture");
  const std::unique_ptr<Peer> peer = open_peer(o.common.peer);
  Report report("c10", "profile", o.common, device);
  testing::TransformerStepConfig config;
  config.device = device;
  config.dropout = 0.0;
  config.layers = o.quick ? 1 : 2;
  config.hidden = o.quick ? 32 : 256;
  config.heads = 4;
  config.vocab = o.quick ? 64 : 1024;
  config.batch = o.quick ? 2 : 8;
  const int64_t seq = o.quick ? 16 : 128;
  config.seq_lens = {seq};
  report.set_option("config", {{"layers", config.layers},
                               {"hidden", config.hidden},
                               {"heads", config.heads},
                               {"vocab", config.vocab},
                               {"batch", config.batch},
                               {"seq_len", seq}});
  manual_seed(config.seed);
  const testing::TransformerModel model(config);
  const testing::TransformerBatch batch = testing::transformer_batch(config, seq);
  auto step = [&] {
    Tensor loss;
    {
      profiler::Range forward("forward");
      loss = model.loss(batch.tokens, batch.targets);
    }
    profiler::Range backward("backward");
    loss.backward();
  };
  // What profiling costs: the step's host time (waiting for the device) without, then with.
  std::vector<double> plain = host_times_with_wait(device, o.common.warmup, o.common.iters, step);
  std::vector<double> profiled = host_times_with_wait(device, 0, o.common.iters, [&] {
    profiler::Profile p;
    step();
    p.stop();
  });
  // The peer's step from the same weights and batch: its loss against ours first, then timed the
  // same way, and profiled once for its table.
  std::unique_ptr<PeerCall> peer_step;
  std::vector<double> peer_plain, peer_profiled;
  std::vector<PeerOperator> peer_ops;
  double peer_device_us = 0;
  if (peer) {
    const double want = model.loss(batch.tokens, batch.targets).item<double>();
    peer_step = peer->transformer_loss_backward(model.parameters(), config.heads, batch.tokens, batch.targets);
    const double got = peer_step->result().item<double>();
    if (!(std::abs(got - want) <= kLossRtol * std::abs(want))) {
      throw ExperimentFailed(fmt::format("c10 profile: {}'s loss is {}, ours {}: more than {} apart", peer->engine(),
                                         got, want, kLossRtol));
    }
    peer_plain = host_times_with_wait(device, o.common.warmup, o.common.iters, [&] { peer_step->run(); });
    peer_profiled = host_times_with_wait(device, 0, o.common.iters, [&] {
      double ignored = 0;
      (void)peer->profile(*peer_step, device, ignored);
    });
    peer_ops = peer->profile(*peer_step, device, peer_device_us);
    report.add_measurement("step", "without a profile", plain, peer->engine(), peer_plain);
    report.add_measurement("step", "profiled", profiled, peer->engine(), peer_profiled);
  } else {
    report.add_measurement("step", "without a profile", plain);
    report.add_measurement("step", "profiled", profiled);
  }

  profiler::Profile p;
  step();
  p.stop();
  const std::vector<profiler::Event>& events = p.events();
  int forward_ops = 0, backward_ops = 0, with_node = 0;
  for (const profiler::Event& e : events) {
    if (e.is_range) continue;
    if (e.autograd_node.empty()) ++forward_ops;
    else ++backward_ops;
    with_node += !e.autograd_node.empty();
  }
  if (forward_ops == 0 || backward_ops == 0) {
    throw ExperimentFailed(fmt::format("c10 profile: the profile recorded {} forward and {} backward operators",
                                       forward_ops, backward_ops));
  }
  const bool on_gpu = device.is_cuda();
  fmt::print("=== One training step of the transformer ({} layers, hidden {}, batch {} x {}) on {} ===\n",
             config.layers, config.hidden, config.batch, seq, device.str());
  fmt::print("{}", p.table(on_gpu ? profiler::SortBy::CudaTotal : profiler::SortBy::CpuTotal, false, o.rows));
  const double plain_ms = median(plain), profiled_ms = median(profiled);
  const auto ops = static_cast<double>(forward_ops + backward_ops);
  const double per_op_us = (profiled_ms - plain_ms) * 1e3 / ops;
  report.results()["operators"] = {{"forward", forward_ops}, {"backward", backward_ops}, {"events", events.size()}};
  report.results()["overhead_us_per_operator"] = per_op_us;
  report.add_note(fmt::format("{} operators in the forward, {} in the backward (each with its autograd node)",
                              forward_ops, backward_ops));
  report.add_note(
      fmt::format("the step takes {:.3f} ms, {:.3f} ms profiled: {:.2f} us per operator (target: at most "
                  "1 us on the CPU)",
                  plain_ms, profiled_ms, per_op_us));
  if (!o.trace.empty()) {
    write_file_atomically(o.trace, p.chrome_trace(), "--trace");
    if (plot) {
      // The picture beside the trace: trace.json -> trace.svg and trace.png.
      const std::string base = std::filesystem::path(o.trace).replace_extension().string();
      run_plot_script(*plot, {o.trace, base}, "c10 profile");
      for (const char* ext : {".svg", ".png"}) {
        std::error_code ec;
        if (std::filesystem::file_size(base + ext, ec) == 0 || ec) {
          throw ExperimentFailed(fmt::format("c10 profile: {} wrote no {}{}", plot->script, base, ext));
        }
      }
      report.add_note(fmt::format("trace written to {}, its timeline to {}.svg and {}.png", o.trace, base, base));
    } else {
      report.add_note(fmt::format("trace written to {}", o.trace));
    }
  }
  if (peer) {
    print_peer_table(*peer, peer_ops, peer_device_us, o.rows);
    int64_t peer_events = 0;
    for (const PeerOperator& op : peer_ops) peer_events += op.calls;
    const double peer_plain_ms = median(peer_plain), peer_profiled_ms = median(peer_profiled);
    report.results()["peer_events"] = peer_events;
    report.add_note(fmt::format(
        "{}: the step takes {:.3f} ms, {:.3f} ms profiled (its profiler started and stopped each time), {} CPU "
        "events recorded: {:.2f} us per event",
        peer->engine(), peer_plain_ms, peer_profiled_ms, peer_events,
        (peer_profiled_ms - peer_plain_ms) * 1e3 / static_cast<double>(std::max<int64_t>(peer_events, 1))));
  } else {
    report.add_note("--peer torch times the same step in torch, without and with torch.profiler, and prints its table");
  }
  report.print_notes();
  report.write_json();
}

}  // namespace

void add_c10_profile(CLI::App& chapter) {
  CLI::App* cmd = chapter.add_subcommand(
      "profile", "where a transformer step's time goes: the profiler's table, trace and picture");
  auto o = std::make_shared<Options>();
  CommonDefaults defaults{std::nullopt, {}, 10, 2};
  defaults.peer = true;
  add_common_options(cmd, o->common, defaults);
  cmd->add_option("--trace", o->trace,
                  "write the Chrome trace of the profiled step to this file, and its timeline beside it (.svg, .png)");
  cmd->add_flag("--no-picture", o->no_picture, "with --trace: the trace alone, no timeline picture");
  cmd->add_option("--rows", o->rows, "rows of the table")->capture_default_str();
  cmd->add_flag("--quick", o->quick, "a tiny model (1 layer, hidden 32, batch 2 x 16)");
  cmd->callback([o] { run(*o); });
}

}  // namespace anatomy::tools
