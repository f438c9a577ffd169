// gpu-anatomy c09 graphs: what CUDA graphs save the host, measured. Three workloads, each
// run eagerly (every kernel launched by the host through the dispatcher) and as the replay of
// its captured graph (docs/cuda-graphs.md): a chain of 100 dependent adds on a one-element
// tensor; a training step of bench/peer's MLP (10 linear layers 16 wide, batch 8, SGD with
// momentum); and a training step of testing/'s GPT-style transformer (dropout 0, one sequence
// length, AdamW with capturable and foreach: one multi-tensor call per step). The training
// steps are graphed two ways (testing/training_step.h): as docs/cuda-graphs.md's "Graphed forward
// and backward" writes them (make_graphed's forward and backward graphs, and the optimizer step
// captured after one eager step), and captured whole (the loss, backward and the optimizer step
// in one graph, as torch's whole-network capture). Device time per add or per step (CUDA
// events), the capture and instantiation cost of each graphed step (paid once), and the issue's
// targets as notes. Before anything is timed, a replay of the adds must give the eager chain's result for
// a new input, and the graphed steps' first losses the eager run's (exit status 1 otherwise).
// CUDA graphs need a CUDA device: on the CPU the run says so and measures nothing. With --peer
// torch, PyTorch's adds run the same way on the same tensor, eagerly and as the replay of its
// torch.cuda.CUDAGraph (checked against our eager chain's result first), beside ours, and so does
// the MLP and transformer steps from the same weights and batches (torch::optim::SGD; AdamW as
// torch's fused capturable kernel, _fused_adamw_), eagerly and as torch's whole-network capture
// of the step (beside our whole-step capture), their losses checked against our eager ones first.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "anatomy/cuda.h"
#include "anatomy/testing/training_step.h"
#include "anatomy/testing/transformer_step.h"
#include "anatomy/tools/chapters.h"
#include "anatomy/tools/checks.h"
#include "anatomy/tools/experiment.h"
#include "anatomy/tools/peer.h"
#include "anatomy/tools/timing.h"

namespace anatomy::tools {
namespace {

constexpr int kAdds = 100;
// bench/peer/mlp.cpp's MLP: 10 linear layers 16 wide with relu between them, batch 8.
constexpr int64_t kMlpLayers = 10, kMlpWidth = 16, kMlpBatch = 8;
constexpr int64_t kSeqLen = 32;  // the transformer's one sequence length (static inputs)
constexpr int kBatches = 4;      // batches the timed steps go round, each copied into the static inputs
constexpr int kCheckedSteps = 5;
constexpr double kLossRtol = 1e-4;
constexpr double kMlpLr = 0.01, kMlpMomentum = 0.9;  // SGD's
// The targets: a replayed add at most 1.0 us and 4x faster than the eager loop; the
// graphed MLP step 2x faster than the eager step and faster than PyTorch's graphed step.
constexpr double kAddTargetUs = 1.0, kAddTargetRatio = 4.0, kMlpTargetRatio = 2.0;

using Batch = std::vector<Tensor>;
using clock = std::chrono::steady_clock;

struct Options {
  CommonOptions common;
};

// One workload's figures: samples in ms per add or per step.
struct Row {
  Row(std::string w, std::string p) : workload(std::move(w)), per(std::move(p)) {}
  std::string workload, per;
  std::vector<double> eager, replay;
  std::vector<double> peer_eager, peer_replay;             // --peer: the peer's samples (empty: none)
  double make_graphed_ms = -1, optimizer_capture_ms = -1;  // training steps only
  std::vector<double> whole;                               // training steps: the whole step's replays
  double whole_capture_ms = -1;                            // its warm-up, eager first step and capture
  std::vector<double> eager_losses;                        // training steps: the checked steps' losses
  std::string peer_graph;                                  // what the peer's replay is
};

double ms_since(clock::time_point t0) { return std::chrono::duration<double, std::milli>(clock::now() - t0).count(); }
double us(const std::vector<double>& samples_ms) { return median(samples_ms) * 1e3; }

std::vector<double> divided(std::vector<double> samples, double by) {
  for (double& s : samples) s /= by;
  return samples;
}

Row time_adds(const CommonOptions& c, Device device, Peer* peer) {
  Tensor x = random_tensor({1}, DType::Float32, device);
  auto chain = [&x] {
    Tensor y = x;
    for (int i = 0; i < kAdds; ++i) y = y + 1.0;
    return y;
  };
  {
    // The warm-up docs/cuda-graphs.md asks for, on the capture stream.
    cuda::StreamGuard warm(cuda::graph_capture_stream());
    chain();
  }
  wait_for(device);
  cuda::Graph graph;
  Tensor out;
  {
    cuda::GraphCapture capture(graph);
    out = chain();
  }
  // A replay reads x as it is when it runs: a new value must give the eager chain's result for it.
  x.add_(1.0);
  graph.replay();
  const Tensor want = chain();
  if (!out.cpu().equal(want.cpu())) {
    throw ExperimentFailed(fmt::format("c09 graphs: {} dependent adds: the replay gave {}, the eager chain {}", kAdds,
                                       out.cpu().item<double>(), want.cpu().item<double>()));
  }
  Tensor y;
  Row r(fmt::format("{} dependent adds", kAdds), "add");
  r.eager = divided(time_iterations(device, c.warmup, c.iters, [&] { y = chain(); }), kAdds);
  r.replay = divided(time_iterations(device, c.warmup, c.iters, [&] { graph.replay(); }), kAdds);
  if (peer) {
    r.peer_graph = "torch.cuda.CUDAGraph";
    // The peer's chain on the same x, checked against our eager result for that x.
    const auto exact = [&](const Tensor& got) { return relative_error(got, want); };
    for (const bool graphed : {false, true}) {
      const std::unique_ptr<PeerCall> call = peer->add_chain(x, kAdds, graphed);
      if (graphed) call->run();
      std::vector<double> s =
          time_peer(r.workload, graphed ? "graph replay" : "eager", *call, *peer, c, device, exact, 0.0);
      (graphed ? r.peer_replay : r.peer_eager) = divided(std::move(s), kAdds);
    }
  }
  return r;
}

testing::TrainingStep mlp_step(Device device) {
  manual_seed(1);
  struct Mlp {
    std::vector<Tensor> w, b;
  };
  auto m = std::make_shared<Mlp>();
  testing::TrainingStep s;
  // Scaled by 1/sqrt(width), as bench/peer's, so that the activations stay of order one.
  for (int64_t i = 0; i < kMlpLayers; ++i) {
    m->w.push_back((randn({kMlpWidth, kMlpWidth}) * 0.25).to(device).requires_grad_());
    m->b.push_back((randn({kMlpWidth}) * 0.25).to(device).requires_grad_());
    s.params.push_back(m->w.back());
    s.params.push_back(m->b.back());
  }
  s.loss = [m](const Batch& batch) {
    Tensor h = batch[0];
    for (int64_t i = 0; i < kMlpLayers; ++i) {
      h = linear(h, m->w[i], m->b[i]);
      if (i + 1 < kMlpLayers) h = relu(h);
    }
    return (h - batch[1]).pow(2).mean();
  };
  s.optimizer = std::make_unique<optim::SGD>(s.params, optim::SGDOptions{.lr = kMlpLr, .momentum = kMlpMomentum});
  return s;
}

testing::TransformerStepConfig transformer_config(Device device) {
  testing::TransformerStepConfig c;  // 2 layers, hidden 64, 4 heads, vocab 128, batch 2
  c.device = device;
  c.seq_lens = {kSeqLen};
  c.dropout = 0;  // the eager and graphed losses compared without the generator's order
  c.adamw.capturable = true;
  c.adamw.foreach = true;  // one multi-tensor call, as torch's fused AdamW beside it
  return c;
}

// The first losses of a graphed form against the eager ones: ExperimentFailed when apart.
void check_losses(const Row& r, const char* form, const std::vector<double>& eager,
                  const std::vector<double>& graphed) {
  for (size_t i = 0; i < eager.size(); ++i) {
    const double e = eager[i], g = graphed[i];
    if (!(std::abs(g - e) <= kLossRtol * std::abs(e))) {
      throw ExperimentFailed(fmt::format("c09 graphs: {}: step {}'s loss is {} {}, {} eager: more than {} apart",
                                         r.workload, i, g, form, e, kLossRtol));
    }
  }
}

// The eager step, the graphed one and the one captured whole, of one model from the same start:
// the first losses compared, the captures timed, then the steps timed over the batches in turn.
Row time_training(Row r, const std::function<testing::TrainingStep()>& make, const std::vector<Batch>& batches,
                  const CommonOptions& c, Device device) {
  auto batch = [&](int i) -> const Batch& { return batches[static_cast<size_t>(i) % batches.size()]; };
  testing::TrainingStep eager = make();
  std::vector<double> eager_losses, graphed_losses;
  for (int i = 0; i < kCheckedSteps; ++i) eager_losses.push_back(testing::eager_step(eager, batch(i)).item<double>());
  wait_for(device);
  clock::time_point t0 = clock::now();
  testing::GraphedStep graphed(make(), batch(0));
  wait_for(device);
  r.make_graphed_ms = ms_since(t0);
  graphed_losses.push_back(graphed.first_step(batch(0)).item<double>());
  t0 = clock::now();
  graphed.capture_optimizer();
  wait_for(device);
  r.optimizer_capture_ms = ms_since(t0);
  for (int i = 1; i < kCheckedSteps; ++i) graphed_losses.push_back(graphed.step(batch(i)).item<double>());
  check_losses(r, "graphed", eager_losses, graphed_losses);
  t0 = clock::now();
  testing::CapturedStep whole(make(), batch(0));
  wait_for(device);
  r.whole_capture_ms = ms_since(t0);
  std::vector<double> whole_losses = {whole.first_loss().item<double>()};
  for (int i = 1; i < kCheckedSteps; ++i) whole_losses.push_back(whole.step(batch(i)).item<double>());
  check_losses(r, "captured whole", eager_losses, whole_losses);
  r.eager_losses = eager_losses;
  int next = kCheckedSteps;
  r.eager = time_iterations(device, c.warmup, c.iters, [&] { testing::eager_step(eager, batch(next++)); });
  next = kCheckedSteps;
  r.replay = time_iterations(device, c.warmup, c.iters, [&] { graphed.step(batch(next++)); });
  next = kCheckedSteps;
  r.whole = time_iterations(device, c.warmup, c.iters, [&] { whole.step(batch(next++)); });
  return r;
}

// The peer's eager and graphed steps (make_call(graphed) makes either), each timed after a check:
// its eager first step's loss against our first, its first replay's (the second step) against our
// second.
void time_peer_training(Row& r, const std::function<std::unique_ptr<PeerCall>(bool graphed)>& make_call, Peer& peer,
                        const CommonOptions& c, Device device) {
  r.peer_graph = "its whole step captured into a torch.cuda.CUDAGraph";
  for (const bool graphed : {false, true}) {
    const double want = r.eager_losses[graphed ? 1 : 0];
    const auto loss_error = [want](const Tensor& got) { return std::abs(got.item<double>() - want) / std::abs(want); };
    const std::unique_ptr<PeerCall> call = make_call(graphed);
    std::vector<double> s =
        time_peer(r.workload, graphed ? "graph replay" : "eager", *call, peer, c, device, loss_error, kLossRtol);
    (graphed ? r.peer_replay : r.peer_eager) = std::move(s);
  }
}

Row time_mlp(const CommonOptions& c, Device device, Peer* peer) {
  std::vector<Batch> batches;
  for (int i = 0; i < kBatches; ++i) {
    batches.push_back({random_tensor({kMlpBatch, kMlpWidth}, DType::Float32, device),
                       random_tensor({kMlpBatch, kMlpWidth}, DType::Float32, device)});
  }
  Row r(fmt::format("MLP step ({} x {}, batch {}, SGD)", kMlpLayers, kMlpWidth, kMlpBatch), "step");
  r = time_training(
      std::move(r), [device] { return mlp_step(device); }, batches, c, device);
  if (peer) {
    // From the same first weights (mlp_step seeds its own).
    const std::vector<Tensor> start = mlp_step(device).params;
    time_peer_training(
        r, [&](bool graphed) { return peer->mlp_training_step(start, batches, kMlpLr, kMlpMomentum, graphed); }, *peer,
        c, device);
  }
  return r;
}

Row time_transformer(const CommonOptions& c, Device device, Peer* peer) {
  const testing::TransformerStepConfig config = transformer_config(device);
  std::vector<Batch> batches;
  for (int i = 0; i < kBatches; ++i) {
    const testing::TransformerBatch b = testing::transformer_batch(config, kSeqLen);
    batches.push_back({b.tokens, b.targets});
  }
  Row r(fmt::format("transformer step ({} x {}, seq {}, AdamW)", config.layers, config.hidden, kSeqLen), "step");
  r = time_training(
      std::move(r), [&config] { return testing::transformer_training_step(config); }, batches, c, device);
  if (peer) {
    // From the same first weights (transformer_training_step seeds the generator), with torch's
    // fused capturable AdamW under the same options.
    const std::vector<Tensor> start = testing::transformer_training_step(config).params;
    time_peer_training(
        r,
        [&](bool graphed) {
          return peer->transformer_training_step(start, config.heads, batches, config.adamw, graphed);
        },
        *peer, c, device);
  }
  return r;
}

// On the CPU: the reason, a note, and a report without measurements.
void needs_cuda(Report& report, Device device) {
  fmt::print("=== CUDA graphs: eager launches against one replay of the captured work ===\n");
  const std::string why = cuda::is_available() ? fmt::format("this run's device is {}", device.str())
                                               : fmt::format("no CUDA device here: {}", cuda::unavailable_reason());
  fmt::print(
      "c09 graphs needs a CUDA device ({}): a graph is the work queued on a CUDA stream, captured and replayed; "
      "run it with --device cuda:0 on a GPU machine\n",
      why);
  report.results()["rows"] = nlohmann::json::array();
  report.add_note("nothing measured: CUDA graphs capture work queued on a CUDA stream, and the CPU has none");
}

std::string verdict(bool met) { return met ? "met" : "MISSED"; }

void run(const Options& o) {
  const Device device = resolve_device(o.common.device, o.common.quiet);
  const std::unique_ptr<Peer> peer = open_peer(o.common.peer);
  Report report("c09", "graphs", o.common, device);
  if (!device.is_cuda()) {
    needs_cuda(report, device);
    if (peer)
      report.add_note(fmt::format("--peer {}: nothing to time beside it without a CUDA device", peer->engine()));
    report.print_notes();
    report.write_json();
    return;
  }
  const cuda::DeviceGuard on_device(device);  // the capture stream and the graphs' pools are this device's
  manual_seed(0);
  Progress progress("c09 graphs", o.common.quiet);
  progress.update("100 dependent adds");
  std::vector<Row> rows;
  rows.push_back(time_adds(o.common, device, peer.get()));
  progress.update("the MLP step");
  rows.push_back(time_mlp(o.common, device, peer.get()));
  progress.update("the transformer step");
  rows.push_back(time_transformer(o.common, device, peer.get()));

  fmt::print("=== CUDA graphs on {}: eager launches against one replay of the captured work (device time, us) ===\n",
             device.str());
  fmt::print("{:<42} {:>5} {:>12} {:>12} {:>13}\n", "workload", "per", "eager", "replay", "eager/replay");
  nlohmann::json table = nlohmann::json::array();
  for (const Row& r : rows) {
    const double e = us(r.eager), g = us(r.replay);
    fmt::print("{:<42} {:>5} {:>12.3f} {:>12.3f} {:>12.2f}x\n", r.workload, r.per, e, g, e / g);
    nlohmann::json row = {
        {"workload", r.workload}, {"per", r.per}, {"eager_us", e}, {"replay_us", g}, {"eager_over_replay", e / g}};
    if (r.make_graphed_ms >= 0) {
      row["make_graphed_ms"] = r.make_graphed_ms;
      row["optimizer_capture_ms"] = r.optimizer_capture_ms;
    }
    if (!r.whole.empty()) {
      const double w = us(r.whole);
      fmt::print("{:<42} {:>5} {:>12.3f} {:>12.3f} {:>12.2f}x\n", "  captured whole", r.per, e, w, e / w);
      row["whole_step_replay_us"] = w;
      row["whole_step_capture_ms"] = r.whole_capture_ms;
    }
    table.push_back(row);
    const std::string group = r.workload + ", per " + r.per;
    const bool with_peer = !r.peer_eager.empty();
    // The peer's replay stands beside ours of the same form: its adds' graph, its whole step.
    if (with_peer) report.add_measurement(group, "eager", r.eager, peer->engine(), r.peer_eager);
    else report.add_measurement(group, "eager", r.eager);
    if (with_peer && r.whole.empty())
      report.add_measurement(group, "graph replay", r.replay, peer->engine(), r.peer_replay);
    else report.add_measurement(group, "graph replay", r.replay);
    if (with_peer && !r.whole.empty()) {
      report.add_measurement(group, "whole-step replay", r.whole, peer->engine(), r.peer_replay);
    } else if (!r.whole.empty()) {
      report.add_measurement(group, "whole-step replay", r.whole);
    }
  }
  for (const Row& r : rows) {
    if (r.peer_eager.empty()) continue;
    const double e = us(r.peer_eager), g = us(r.peer_replay);
    const double ours = us(r.whole.empty() ? r.replay : r.whole);
    fmt::print("{:<42} {:>5} {:>12.3f} {:>12.3f} {:>12.2f}x   ({}; its time / ours: eager {:.2f}x, replay {:.2f}x)\n",
               r.workload + ", " + peer->engine(), r.per, e, g, e / g, r.peer_graph, e / us(r.eager), g / ours);
  }
  fmt::print("\n=== Capture and instantiation of the graphed steps (host time, paid once) ===\n");
  for (const Row& r : rows) {
    if (r.make_graphed_ms < 0) continue;
    fmt::print(
        "{:<42} make_graphed {:.1f} ms (its {} warm-up runs included), optimizer step {:.1f} ms; captured whole {:.1f} "
        "ms (its {} warm-up runs and eager first step included)\n",
        r.workload, r.make_graphed_ms, cuda::GraphedOptions{}.warmup_iters, r.optimizer_capture_ms, r.whole_capture_ms,
        testing::CapturedStep::kWarmupSteps);
  }
  report.results()["rows"] = table;

  const Row &adds = rows[0], &mlp = rows[1], &transformer = rows[2];
  const double add_us = us(adds.replay), add_ratio = us(adds.eager) / add_us;
  const bool adds_met = add_us <= kAddTargetUs && add_ratio >= kAddTargetRatio;
  report.add_note(fmt::format(
      "{}: a replay costs {:.3f} us per add, {:.2f}x less than the eager loop's {:.3f} us (target: at most {} us "
      "per add and at least {}x faster: {})",
      adds.workload, add_us, add_ratio, us(adds.eager), kAddTargetUs, kAddTargetRatio, verdict(adds_met)));
  const double mlp_ratio = us(mlp.eager) / us(mlp.replay), mlp_whole_ratio = us(mlp.eager) / us(mlp.whole);
  const double mlp_capture_ms = mlp.make_graphed_ms + mlp.optimizer_capture_ms;
  report.add_note(fmt::format(
      "{}: the graphed step is {:.2f}x faster than the eager one, the step captured whole {:.2f}x (target: "
      "at least {}x: {}); capturing and instantiating them took {:.1f} and {:.1f} ms, as long as {:.0f} "
      "and {:.0f} eager steps",
      mlp.workload, mlp_ratio, mlp_whole_ratio, kMlpTargetRatio,
      verdict(std::max(mlp_ratio, mlp_whole_ratio) >= kMlpTargetRatio), mlp_capture_ms, mlp.whole_capture_ms,
      mlp_capture_ms / (us(mlp.eager) * 1e-3), mlp.whole_capture_ms / (us(mlp.eager) * 1e-3)));
  report.add_note(fmt::format(
      "{}: the graphed step is {:.2f}x faster than the eager one, the step captured whole {:.2f}x (no target "
      "is set); capturing and instantiating them took {:.1f} and {:.1f} ms",
      transformer.workload, us(transformer.eager) / us(transformer.replay),
      us(transformer.eager) / us(transformer.whole), transformer.make_graphed_ms + transformer.optimizer_capture_ms,
      transformer.whole_capture_ms));
  if (!mlp.peer_replay.empty()) {
    const double theirs = us(mlp.peer_replay), ours = us(mlp.whole);
    report.add_note(fmt::format("{}: the step captured whole replays in {:.1f} us, {} {:.1f} (target: faster: {})",
                                mlp.workload, ours, peer->engine(), theirs, verdict(ours < theirs)));
  }
  nlohmann::json targets = nlohmann::json::array();
  auto target = [&](const std::string& what, double value, bool met) {
    targets.push_back({{"target", what}, {"value", value}, {"met", met}});
  };
  target(fmt::format("a replayed add at most {} us", kAddTargetUs), add_us, add_us <= kAddTargetUs);
  target(fmt::format("replayed adds at least {}x faster than eager", kAddTargetRatio), add_ratio,
         add_ratio >= kAddTargetRatio);
  target(fmt::format("the graphed MLP step at least {}x faster than eager", kMlpTargetRatio),
         std::max(mlp_ratio, mlp_whole_ratio), std::max(mlp_ratio, mlp_whole_ratio) >= kMlpTargetRatio);
  if (!mlp.peer_replay.empty()) {
    target(fmt::format("the graphed MLP step faster than {}'s (their time over ours)", peer->engine()),
           us(mlp.peer_replay) / us(mlp.whole), us(mlp.whole) < us(mlp.peer_replay));
  }
  report.results()["targets"] = targets;
  report.add_note(fmt::format(
      "checked before timing: a replay of the adds gave the eager chain's result for a new input, and the first {} "
      "losses of each graphed step (both forms) equal the eager run's within {} (relative)",
      kCheckedSteps, kLossRtol));
  report.add_note(
      "a graphed step still does some work eagerly: it copies the batch into the static inputs, runs the autograd "
      "node whose backward replays the backward graph, and adds each parameter's gradient into .grad; the optimizer "
      "step and the zeroing of .grad are one replay. A step captured whole copies the batch in and replays one graph "
      "(the loss, backward and the optimizer step), as torch's whole-network capture");
  if (!peer) {
    report.add_note(
        "--peer torch times PyTorch's adds on the same tensor and its MLP step from the same weights and batches, "
        "eagerly and as a torch.cuda.CUDAGraph replay");
  }
  report.print_notes();
  report.write_json();
}

}  // namespace

void add_c09_graphs(CLI::App& chapter) {
  CLI::App* cmd = chapter.add_subcommand(
      "graphs", "Eager against CUDA graph replay: 100 dependent adds, an MLP and a transformer training step");
  auto o = std::make_shared<Options>();
  CommonDefaults defaults{std::nullopt, {}, 50, 5};
  defaults.peer = true;
  add_common_options(cmd, o->common, defaults);
  cmd->callback([o] { run(*o); });
}

}  // namespace anatomy::tools
