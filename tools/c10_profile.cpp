// gpu-anatomy c10 profile: issue 24's "where does the time of a step go", on the transformer of
// testing/transformer_step.h. One step (the loss and its backward, each in a profiler::Range) is
// profiled after a warm-up; the experiment prints the profiler's table (by CUDA time on a GPU,
// by CPU time on the CPU), writes the Chrome trace with --trace (scripts/plot-profile.py draws it),
// and measures what profiling costs: the step's host time with and without an active profile.
// The profile must have recorded the forward's and the backward's operators, the latter with
// their autograd nodes, or the run fails.
#include <fmt/format.h>

#include <chrono>
#include <memory>

#include "anatomy/profiler/profiler.h"
#include "anatomy/testing/transformer_step.h"
#include "anatomy/tools/chapters.h"
#include "anatomy/tools/experiment.h"
#include "anatomy/tools/timing.h"

namespace anatomy::tools {
namespace {

struct Options {
  CommonOptions common;
  std::string trace;  // write the Chrome trace here
  int rows = 15;
  bool quick = false;
};

void run(const Options& o) {
  const Device device = resolve_device(o.common.device, o.common.quiet);
  check_positive("--rows", o.rows);
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
  report.add_measurement("step", "without a profile", plain);
  report.add_measurement("step", "profiled", profiled);

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
    report.add_note(fmt::format("trace written to {} (scripts/plot-profile.py {} <name> draws it)", o.trace, o.trace));
  }
  report.add_note("torch.profiler's table beside this one (--peer torch) is still to come for this experiment");
  report.print_notes();
  report.write_json();
}

}  // namespace

void add_c10_profile(CLI::App& chapter) {
  CLI::App* cmd =
      chapter.add_subcommand("profile", "where a transformer step's time goes: the profiler's table and trace");
  auto o = std::make_shared<Options>();
  add_common_options(cmd, o->common, CommonDefaults{std::nullopt, {}, 10, 2});
  cmd->add_option("--trace", o->trace, "write the Chrome trace of the profiled step to this file");
  cmd->add_option("--rows", o->rows, "rows of the table")->capture_default_str();
  cmd->add_flag("--quick", o->quick, "a tiny model (1 layer, hidden 32, batch 2 x 16)");
  cmd->callback([o] { run(*o); });
}

}  // namespace anatomy::tools
