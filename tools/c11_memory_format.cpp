// gpu-anatomy c11 memory-format: seed 001's "channels last is 20-30% faster on Tensor Cores"
// (seed 002: 1.1-1.3x for CNNs), measured. Two workloads, each forward and backward (the gradients
// of the input, of every convolution weight and of every batch-norm weight and bias, through
// autograd::grad): a single 3x3 convolution, 64 -> 64 channels, and a ResNet-50 bottleneck block
// (1x1 256 -> 64, BN, ReLU, 3x3 64 -> 64, BN, ReLU, 1x1 64 -> 256, BN, + identity, ReLU), written
// with the engine's operators. Each runs in fp32, tf32 (fp32 with allow_tf32_cudnn on; fp32 has
// it off), fp16 and bf16, once with NCHW (contiguous) tensors and once with channels_last (NHWC)
// ones: the input and the 4-d weights converted, as PyTorch's x.to(memory_format=...) and
// model.to(memory_format=...). Device time per iteration (CUDA events; a steady clock on the CPU),
// and the NHWC/NCHW speed-up per row next to the seeds' claims. Before anything is timed, each
// layout's output and gradients must match the other's within the precision's tolerance (exit
// status 1 otherwise; layout_agreement says how). On the CPU (oneDNN) the chapter runs fp32 only.
// With --peer torch, PyTorch runs each row's forward and backward on the same tensors in both
// layouts (its output checked against ours as the layouts are checked against each other), its
// times beside ours; without, bench/python/memory_format.py measures the same rows in PyTorch.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>

#include "anatomy/cuda.h"
#include "anatomy/tools/chapters.h"
#include "anatomy/tools/checks.h"
#include "anatomy/tools/experiment.h"
#include "anatomy/tools/peer.h"
#include "anatomy/tools/timing.h"

namespace anatomy::tools {
namespace {

constexpr double kBnEps = 1e-5, kBnMomentum = 0.1;
// The seeds' claims about the NHWC/NCHW speed-up: seed 001 "20-30% on Tensor Cores" and seed
// 002's table "1.1-1.3x" for CNNs.
constexpr double kSeed001Low = 1.2, kSeed001High = 1.3, kSeed002Low = 1.1, kSeed002High = 1.3;
// The fraction of a result's elements that may differ between the layouts by more than the
// tolerance: a ReLU input within rounding of zero can fall on different sides in the two runs,
// which switches that element's gradient on in one and off in the other; a layout read wrongly
// changes nearly every element.
constexpr double kMismatchAllowed = 0.01;

struct Options {
  CommonOptions common;
  int64_t batch = 0;  // unless given: the device's default (32 on CUDA, 2 on the CPU; --quick smaller)
  int64_t size = 0;   // height and width; unless given: 56 (--quick on the CPU: 16)
  bool batch_given = false, size_given = false;
  std::string precisions;
  bool quick = false;
  bool cudnn_benchmark = false;
};

struct Precision {
  std::string name;
  DType dtype;
  bool tf32;
};

// --precisions as a list of known names; on the CPU only fp32 (oneDNN's fp32 convolutions).
std::vector<Precision> parse_precisions(const std::string& text, Device device) {
  const std::vector<Precision> known = {{"fp32", DType::Float32, false},
                                        {"tf32", DType::Float32, true},
                                        {"fp16", DType::Float16, false},
                                        {"bf16", DType::BFloat16, false}};
  std::vector<Precision> out;
  std::stringstream in(text);
  std::string word;
  while (std::getline(in, word, ',')) {
    auto it = std::find_if(known.begin(), known.end(), [&](const Precision& p) { return p.name == word; });
    if (it == known.end()) {
      throw UsageError(fmt::format("--precisions: '{}' is not one of fp32, tf32, fp16, bf16 (in '{}')", word, text));
    }
    if (!device.is_cuda() && it->name != "fp32") {
      throw UsageError(
          fmt::format("--precisions: '{}' needs a CUDA device: on the CPU the chapter runs fp32 (oneDNN)", it->name));
    }
    if (std::none_of(out.begin(), out.end(), [&](const Precision& p) { return p.name == it->name; })) {
      out.push_back(*it);
    }
  }
  if (out.empty()) throw UsageError(fmt::format("--precisions: '{}' names no precision", text));
  return out;
}

// Sets the cuDNN switches for the run and puts back what was there before, whatever happens.
class CudnnSwitches {
 public:
  explicit CudnnSwitches(bool benchmark) : tf32_(allow_tf32_cudnn()), benchmark_(cudnn_benchmark()) {
    set_cudnn_benchmark(benchmark);
  }
  ~CudnnSwitches() {
    set_allow_tf32_cudnn(tf32_);
    set_cudnn_benchmark(benchmark_);
  }
  CudnnSwitches(const CudnnSwitches&) = delete;
  CudnnSwitches& operator=(const CudnnSwitches&) = delete;

 private:
  bool tf32_, benchmark_;
};

// A workload's parameters, made once in fp32 on the device and converted per row: 4-d tensors
// are convolution weights, 1-d ones batch-norm weights and biases.
struct Workload {
  std::string key, description;
  int64_t in_channels = 0;
  std::vector<Tensor> params;
  std::function<Tensor(const Tensor& x, const std::vector<Tensor>& p)> forward;
};

// A convolution weight (out, in, k, k) with Kaiming's scale 1/sqrt(fan_in), so that activations
// stay of order one in every precision.
Tensor conv_weight(int64_t out, int64_t in, int64_t k, Device device) {
  return random_tensor({out, in, k, k}, DType::Float32, device) * (1.0 / std::sqrt(static_cast<double>(in * k * k)));
}

Tensor bn(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  return batch_norm(x, weight, bias, std::nullopt, std::nullopt, /*training=*/true, kBnMomentum, kBnEps);
}

Workload conv3x3(Device device) {
  Workload w{"conv3x3", "3x3 conv 64->64", 64, {conv_weight(64, 64, 3, device)}, {}};
  w.forward = [](const Tensor& x, const std::vector<Tensor>& p) { return conv2d(x, p[0], std::nullopt, {1}, {1}); };
  return w;
}

// ResNet-50's first-stage bottleneck (torchvision's Bottleneck with stride 1 and no downsample).
Workload bottleneck(Device device) {
  Workload w{"bottleneck", "ResNet-50 bottleneck 256-64-256", 256, {}, {}};
  auto bn_params = [&](int64_t c) {
    w.params.push_back(random_tensor({c}, DType::Float32, device) * 0.1 + 1.0);
    w.params.push_back(random_tensor({c}, DType::Float32, device) * 0.1);
  };
  w.params.push_back(conv_weight(64, 256, 1, device));
  bn_params(64);
  w.params.push_back(conv_weight(64, 64, 3, device));
  bn_params(64);
  w.params.push_back(conv_weight(256, 64, 1, device));
  bn_params(256);
  w.forward = [](const Tensor& x, const std::vector<Tensor>& p) {
    Tensor y = bn(conv2d(x, p[0]), p[1], p[2]).relu();
    y = bn(conv2d(y, p[3], std::nullopt, {1}, {1}), p[4], p[5]).relu();
    y = bn(conv2d(y, p[6]), p[7], p[8]);
    return (y + x).relu();
  };
  return w;
}

// One layout of one row: the inputs in that layout and precision, and a forward + backward.
struct Step {
  Tensor x, grad_out;
  std::vector<Tensor> params;
  const Workload* workload = nullptr;

  // The output, then the gradients of x and of every parameter.
  std::vector<Tensor> operator()() const {
    const Tensor out = workload->forward(x, params);
    std::vector<Tensor> inputs = {x};
    inputs.insert(inputs.end(), params.begin(), params.end());
    std::vector<Tensor> results = {out};
    for (Tensor& g : autograd::grad({out}, inputs, {grad_out})) results.push_back(std::move(g));
    return results;
  }
};

Step make_step(const Workload& w, const Tensor& x32, const Tensor& grad32, DType dtype, MemoryFormat format) {
  Step s;
  s.workload = &w;
  // detach(): a conversion that changes nothing returns the fp32 tensor itself, which must stay
  // without requires_grad for the next row's conversions.
  auto convert = [&](const Tensor& t) {
    const Tensor c = t.to(dtype);
    return (c.dim() == 4 ? c.contiguous(format) : c.contiguous()).detach().requires_grad_();
  };
  s.x = convert(x32);
  for (const Tensor& p : w.params) s.params.push_back(convert(p));
  s.grad_out = grad32.to(dtype).contiguous(format);
  return s;
}

// Two independent computations in `p` may differ by the tolerance of each: twice a product's.
double layout_tolerance(const Precision& p) { return 2 * product_tolerance(p.dtype); }

// How far one layout's result is from the other's: the fraction of elements whose difference
// exceeds `tolerance` times the reference's largest magnitude, and the largest difference so scaled.
struct Agreement {
  double mismatched = 0, max_error = 0;
};

Agreement layout_agreement(const Tensor& got, const Tensor& want, double tolerance) {
  const Tensor g = got.to(kCPU, DType::Float64), w = want.to(kCPU, DType::Float64);
  const double scale = std::max(w.abs().max().item<double>(), 1e-30);
  const Tensor diff = g.sub(w).abs();
  return {gt(diff, Scalar(tolerance * scale)).to(DType::Float64).mean().item<double>(),
          diff.max().item<double>() / scale};
}

std::string result_name(const Workload& w, size_t i) {
  if (i == 0) return "the output";
  if (i == 1) return "the input's gradient";
  const Tensor& p = w.params[i - 2];
  return fmt::format("the gradient of parameter {} ({} {})", i - 2, p.dim() == 4 ? "conv weight" : "batch-norm",
                     shape_tuple(p.sizes()));
}

struct Row {
  std::string workload, description, precision;
  std::vector<double> nchw, nhwc;
  std::vector<double> peer_nchw, peer_nhwc;  // --peer: the peer's samples (empty: none)
  double max_error = 0, mismatched = 0, tolerance = 0;
  bool output_channels_last = false, grad_input_channels_last = false;
};

// The peer's forward and backward of one layout: its output checked against ours, then timed.
std::vector<double> time_peer_step(Peer& peer, const Step& s, const Tensor& our_output, const Precision& p,
                                   const Options& o, Device device, double tolerance, const char* layout) {
  const std::unique_ptr<PeerCall> call = peer.conv_workload(s.workload->key, s.x, s.params, s.grad_out);
  const Agreement e = layout_agreement(call->result(), our_output, tolerance);
  if (!(e.mismatched <= kMismatchAllowed)) {
    throw ExperimentFailed(fmt::format(
        "c11 memory-format: {}, {}, {}: {}'s output differs from ours: {:.2f}% of its elements by more "
        "than {:.3g} of the largest magnitude, the largest by {:.3g}",
        s.workload->description, p.name, layout, peer.engine(), 100 * e.mismatched, tolerance, e.max_error));
  }
  return time_iterations(device, o.common.warmup, o.common.iters, [&] { call->run(); });
}

Row run_row(const Workload& w, const Precision& p, const Options& o, Device device, int64_t batch, int64_t size,
            Peer* peer) {
  set_allow_tf32_cudnn(p.tf32);
  // Both workloads give an output of their input's shape (the conv keeps 64 channels, the block
  // adds its input back).
  const Tensor x32 = random_tensor({batch, w.in_channels, size, size}, DType::Float32, device);
  const Tensor grad32 = random_tensor(x32.sizes(), DType::Float32, device);
  const Step nchw = make_step(w, x32, grad32, p.dtype, MemoryFormat::Contiguous);
  const Step nhwc = make_step(w, x32, grad32, p.dtype, MemoryFormat::ChannelsLast);
  Row r{w.key, w.description, p.name, {}, {}, {}, {}, 0, 0, layout_tolerance(p)};
  const std::vector<Tensor> a = nchw(), b = nhwc();
  for (size_t i = 0; i < a.size(); ++i) {
    const Agreement e = layout_agreement(b[i], a[i], r.tolerance);
    if (!(e.mismatched <= kMismatchAllowed)) {
      throw ExperimentFailed(fmt::format(
          "c11 memory-format: {}, {}: {} differs between the layouts: {:.2f}% of its elements differ by more than "
          "{:.3g} of its largest magnitude (at most {}% may), the largest by {:.3g}",
          w.description, p.name, result_name(w, i), 100 * e.mismatched, r.tolerance, 100 * kMismatchAllowed,
          e.max_error));
    }
    r.max_error = std::max(r.max_error, e.max_error);
    r.mismatched = std::max(r.mismatched, e.mismatched);
  }
  r.output_channels_last = b[0].is_contiguous(MemoryFormat::ChannelsLast);
  r.grad_input_channels_last = b[1].is_contiguous(MemoryFormat::ChannelsLast);
  r.nchw = time_iterations(device, o.common.warmup, o.common.iters, [&] { nchw(); });
  r.nhwc = time_iterations(device, o.common.warmup, o.common.iters, [&] { nhwc(); });
  if (peer) {
    r.peer_nchw = time_peer_step(*peer, nchw, a[0], p, o, device, r.tolerance, "NCHW");
    r.peer_nhwc = time_peer_step(*peer, nhwc, b[0], p, o, device, r.tolerance, "NHWC");
  }
  return r;
}

bool within(double v, double lo, double hi) { return v >= lo && v <= hi; }

std::string claim_verdict(double speedup) {
  if (speedup > kSeed001High) return "above both claims";
  if (within(speedup, kSeed001Low, kSeed001High)) return "supports seed 001 and seed 002";
  if (within(speedup, kSeed002Low, kSeed002High)) return "supports seed 002, below seed 001";
  return "supports neither";
}

// The command that measures the same rows with PyTorch (bench/python/memory_format.py).
std::string torch_twin(const Options& o, Device device, int64_t batch, int64_t size, const std::string& precisions) {
  return fmt::format(
      "python3 bench/python/memory_format.py --device {} --batch {} --size {} --precisions {} --iters {} --warmup {}{} "
      "--json memory-format-torch.json",
      device.is_cuda() ? "cuda" : "cpu", batch, size, precisions, o.common.iters, o.common.warmup,
      o.cudnn_benchmark ? " --cudnn-benchmark" : "");
}

void add_claim_notes(Report& report, const std::vector<Row>& rows, Device device) {
  if (!device.is_cuda()) {
    report.add_note(
        "the seeds' claims (seed 001: 20-30% faster on Tensor Cores; seed 002: 1.1-1.3x for CNNs) are about GPUs: "
        "this CPU run (oneDNN, fp32) neither supports nor refutes them");
    return;
  }
  for (const char* workload : {"conv3x3", "bottleneck"}) {
    std::vector<std::string> parts;
    int tensor_core = 0, in_001 = 0, in_002 = 0;
    std::string description;
    for (const Row& r : rows) {
      if (r.workload != workload) continue;
      description = r.description;
      const double s = median(r.nchw) / median(r.nhwc);
      parts.push_back(fmt::format("{} {:.2f}x", r.precision, s));
      if (r.precision == "fp32") continue;  // no Tensor Cores in fp32 proper
      ++tensor_core;
      in_001 += within(s, kSeed001Low, kSeed001High);
      in_002 += within(s, kSeed002Low, kSeed002High);
    }
    if (parts.empty()) continue;
    std::string verdict = tensor_core == 0 ? "no Tensor Core precision was run, so it says nothing of the claims"
                          : in_001 == tensor_core
                              ? "this run supports seed 001's 20-30% (and seed 002's 1.1-1.3x) on every Tensor Core "
                                "precision"
                          : in_002 == tensor_core
                              ? "this run supports seed 002's 1.1-1.3x on every Tensor Core precision, not everywhere "
                                "seed 001's 20-30%"
                              : fmt::format(
                                    "this run does not support the claims as stated: {} of {} Tensor Core rows within "
                                    "seed 001's 1.2-1.3x, {} within seed 002's 1.1-1.3x",
                                    in_001, tensor_core, in_002);
    report.add_note(fmt::format("{}: NHWC/NCHW speed-up {}; {}", description, fmt::join(parts, ", "), verdict));
  }
}

void run(const Options& o) {
  const Device device = resolve_device(o.common.device, o.common.quiet);
  const bool gpu = device.is_cuda();
  const int64_t batch = o.batch_given ? o.batch : gpu ? (o.quick ? 8 : 32) : 2;
  const int64_t size = o.size_given ? o.size : (o.quick && !gpu) ? 16 : 56;
  check_positive("--batch", batch);
  check_positive("--size", size);
  const std::string precisions = o.precisions.empty() ? (gpu ? "fp32,tf32,fp16,bf16" : "fp32") : o.precisions;
  const std::vector<Precision> chosen = parse_precisions(precisions, device);
  const std::unique_ptr<Peer> peer = open_peer(o.common.peer);
  Report report("c11", "memory-format", o.common, device);
  report.set_option("batch", batch);
  report.set_option("size", size);
  report.set_option("precisions", precisions);
  report.set_option("quick", o.quick);
  report.set_option("cudnn_benchmark", o.cudnn_benchmark);
  std::optional<cuda::DeviceGuard> on_device;
  if (gpu) on_device.emplace(device);
  const CudnnSwitches switches(o.cudnn_benchmark);
  manual_seed(0);
  const std::vector<Workload> workloads = {conv3x3(device), bottleneck(device)};
  Progress progress("c11 memory-format", o.common.quiet);
  std::vector<Row> rows;
  for (const Workload& w : workloads) {
    for (const Precision& p : chosen) {
      progress.update(fmt::format("{}, {}", w.description, p.name));
      rows.push_back(run_row(w, p, o, device, batch, size, peer.get()));
    }
  }

  fmt::print("=== Memory formats on {}: forward + backward, batch {}, {}x{}, {} per iteration (ms) ===\n", device.str(),
             batch, size, size, gpu ? "device time" : "host time");
  fmt::print("{:<32} {:<9} {:>10} {:>10} {:>10}   {}\n", "workload", "precision", "NCHW", "NHWC", "speed-up",
             "the seeds' claims");
  nlohmann::json table = nlohmann::json::array();
  for (const Row& r : rows) {
    const double a = median(r.nchw), b = median(r.nhwc), s = a / b;
    fmt::print("{:<32} {:<9} {:>10.3f} {:>10.3f} {:>9.2f}x   {}\n", r.description, r.precision, a, b, s,
               claim_verdict(s));
    table.push_back({{"workload", r.workload},
                     {"description", r.description},
                     {"precision", r.precision},
                     {"nchw_ms", a},
                     {"nhwc_ms", b},
                     {"speedup", s},
                     {"seed_001", within(s, kSeed001Low, kSeed001High)},
                     {"seed_002", within(s, kSeed002Low, kSeed002High)},
                     {"max_layout_error", r.max_error},
                     {"mismatched_fraction", r.mismatched},
                     {"tolerance", r.tolerance},
                     {"nhwc_output_channels_last", r.output_channels_last},
                     {"nhwc_grad_input_channels_last", r.grad_input_channels_last}});
    const std::string group = fmt::format("{}, {}", r.description, r.precision);
    if (peer) {
      report.add_measurement(group, "NCHW", r.nchw, peer->engine(), r.peer_nchw);
      report.add_measurement(group, "NHWC", r.nhwc, peer->engine(), r.peer_nhwc);
    } else {
      report.add_measurement(group, "NCHW", r.nchw);
      report.add_measurement(group, "NHWC", r.nhwc);
    }
  }
  report.results()["rows"] = table;
  if (peer) {
    fmt::print("\n=== The same rows in {} (ms; its time / ours) ===\n", peer->engine());
    fmt::print("{:<32} {:<9} {:>18} {:>18} {:>10}\n", "workload", "precision", "NCHW", "NHWC", "speed-up");
    for (const Row& r : rows) {
      const double a = median(r.peer_nchw), b = median(r.peer_nhwc);
      fmt::print("{:<32} {:<9} {:>18} {:>18} {:>9.2f}x\n", r.description, r.precision, peer_cell(median(r.nchw), a),
                 peer_cell(median(r.nhwc), b), a / b);
    }
  }
  report.results()["claims"] = {{"seed_001", {kSeed001Low, kSeed001High}}, {"seed_002", {kSeed002Low, kSeed002High}}};
  const std::string twin = torch_twin(o, device, batch, size, precisions);
  report.results()["torch_twin"] = twin;

  add_claim_notes(report, rows, device);
  const bool propagated = std::all_of(
      rows.begin(), rows.end(), [](const Row& r) { return r.output_channels_last && r.grad_input_channels_last; });
  report.add_note(propagated ? "channels_last propagated: every NHWC row's output and input gradient are channels_last"
                             : "channels_last did NOT propagate everywhere: see nhwc_output_channels_last and "
                               "nhwc_grad_input_channels_last in the JSON rows");
  report.add_note(
      fmt::format("checked before timing: each row's output and gradients (input, conv weights, batch-norm weights "
                  "and biases) agree between the layouts within twice the precision's product tolerance (relative to "
                  "the largest magnitude) on at least {}% of their elements (ReLU's near-ties may differ)",
                  100 * (1 - kMismatchAllowed)));
  if (!peer) {
    report.add_note(fmt::format(
        "PyTorch on the same rows (channels_last against contiguous, timed as here): --peer torch, or {}", twin));
  }
  report.print_notes();
  report.write_json();
}

}  // namespace

void add_c11_memory_format(CLI::App& chapter) {
  CLI::App* cmd = chapter.add_subcommand(
      "memory-format", "NCHW against channels_last: a 3x3 conv and a ResNet-50 bottleneck, forward and backward");
  auto o = std::make_shared<Options>();
  CommonDefaults defaults{std::nullopt, {}, 20, 5};
  defaults.peer = true;
  add_common_options(cmd, o->common, defaults);
  cmd->add_option("--batch", o->batch, "the batch (default 32 on CUDA, 8 with --quick; 2 on the CPU)");
  cmd->add_option("--size", o->size, "the height and width (default 56; 16 with --quick on the CPU)");
  cmd->add_option("--precisions", o->precisions,
                  "comma-separated, of fp32, tf32, fp16, bf16 (default all four on CUDA, fp32 on the CPU)");
  cmd->add_flag("--quick", o->quick, "small sizes (the suite's quick run)");
  cmd->add_flag("--cudnn-benchmark", o->cudnn_benchmark,
                "time every cuDNN algorithm on a shape's first call and keep the fastest (as "
                "torch.backends.cudnn.benchmark)");
  cmd->callback([o, cmd] {
    o->batch_given = cmd->count("--batch") > 0;
    o->size_given = cmd->count("--size") > 0;
    run(*o);
  });
}

}  // namespace anatomy::tools
