// gpu-anatomy c02 precision: seed 000's claims about reduced precision, measured. An n x n
// matmul in each precision the engine offers, at each size: its speed (TFLOP/s from the median
// time) and its error against an fp64 product of the same inputs (computed on the CPU from the
// inputs as rounded to the precision, so the error is the product's own). The configurations:
// fp64; fp32; tf32 (fp32 with set_allow_tf32_matmul); fp16 and bf16 with the reduced-precision
// reductions allowed (the default) and disallowed; fp16 accumulating in fp16
// (set_allow_fp16_accumulation); int8 (exact, error 0). The switches (core/precision_switches.h,
// docs/cuda.md) change only CUDA products: on the CPU the configurations they define are the same
// computation, so the CPU run measures fp64, fp32, fp16, bf16 and int8 and says so. With --peer
// torch, PyTorch multiplies the same tensors under the same switches (its allow_tf32,
// allow_fp16/bf16_reduced_precision_reduction and allow_fp16_accumulation), beside ours.
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <memory>

#include "anatomy/tools/chapters.h"
#include "anatomy/tools/checks.h"
#include "anatomy/tools/experiment.h"
#include "anatomy/tools/peer.h"
#include "anatomy/tools/timing.h"

namespace anatomy::tools {
namespace {

struct Options {
  CommonOptions common;
  std::string sizes;  // empty: by device
};

struct Config {
  std::string name;
  DType dtype;
  bool cuda_only;             // a switch that changes only CUDA products
  std::function<void()> set;  // sets the switches (after a reset to the defaults)
};

void run(const Options& o) {
  const Device device = resolve_device(o.common.device, o.common.quiet);
  const std::vector<int64_t> sizes = parse_sizes("--sizes", !o.sizes.empty()   ? o.sizes
                                                            : device.is_cuda() ? "1024,2048,4096,8192"
                                                                               : "128,256,512");
  const std::unique_ptr<Peer> peer = open_peer(o.common.peer);
  Report report("c02", "precision", o.common, device);
  report.set_option("sizes", sizes);
  const std::vector<Config> configs = {
      {"fp64", DType::Float64, false, [] {}},
      {"fp32", DType::Float32, false, [] {}},
      {"tf32", DType::Float32, true, [] { set_allow_tf32_matmul(true); }},
      {"fp16", DType::Float16, false, [] {}},
      {"fp16, fp32 reduction", DType::Float16, true, [] { set_allow_fp16_reduced_precision_reduction(false); }},
      {"fp16, fp16 accumulation", DType::Float16, true, [] { set_allow_fp16_accumulation(true); }},
      {"bf16", DType::BFloat16, false, [] {}},
      {"bf16, fp32 reduction", DType::BFloat16, true, [] { set_allow_bf16_reduced_precision_reduction(false); }},
      {"int8", DType::Int8, false, [] {}},
  };
  // Every switch back to its default, whatever happens.
  struct Reset {
    ~Reset() { reset_precision_switches(); }
  } reset;
  manual_seed(0);
  Progress progress("c02 precision", o.common.quiet);
  fmt::print("=== Matmul (n x n @ n x n) by precision on {} ===\n", device.str());
  fmt::print("{:<26} {:>6} {:>11} {:>10} {:>12}{}\n", "precision", "n", "ms/iter", "TFLOP/s", "rel. error",
             peer ? "   " + peer->engine() + " ms/iter (its time / ours)" : "");
  nlohmann::json table = nlohmann::json::array();
  std::map<std::string, std::pair<double, double>> largest;  // config -> (TFLOP/s, error) at the largest n
  for (const Config& c : configs) {
    if (c.cuda_only && !device.is_cuda()) continue;
    for (int64_t n : sizes) {
      progress.update(fmt::format("{} n={}", c.name, n));
      reset_precision_switches();
      c.set();
      const Tensor a = random_tensor({n, n}, c.dtype, device), b = random_tensor({n, n}, c.dtype, device);
      Tensor out = a.matmul(b);
      // fp16 accumulation loses far more than the check allows; the error is the finding there.
      const double err = matmul_error(a, b, out);
      const bool checked = c.name == "fp16, fp16 accumulation" || err <= product_tolerance(c.dtype);
      if (!checked) {
        throw ExperimentFailed(fmt::format("c02 {} n={}: the product differs from fp64 by {:.3g}", c.name, n, err));
      }
      std::vector<double> s = time_iterations(device, o.common.warmup, o.common.iters, [&] { out = a.matmul(b); });
      const double ms = median(s), tflops = 2.0 * static_cast<double>(n) * n * n / (ms * 1e-3) / 1e12;
      std::string beside;
      if (peer) {
        const std::unique_ptr<PeerCall> call = peer->matmul(a, b);
        const double tolerance = c.name == "fp16, fp16 accumulation" ? INFINITY : product_tolerance(c.dtype);
        const std::vector<double> ps = time_peer(
            c.name, fmt::format("n={}", n), *call, *peer, o.common, device,
            [&](const Tensor& r) { return matmul_error(a, b, r); }, tolerance);
        beside = "   " + peer_cell(ms, median(ps));
        report.add_measurement(c.name, fmt::format("n={}", n), std::move(s), peer->engine(), ps);
      } else {
        report.add_measurement(c.name, fmt::format("n={}", n), std::move(s));
      }
      fmt::print("{:<26} {:>6} {:>11.4f} {:>10.3f} {:>12.3e}{}\n", c.name, n, ms, tflops, err, beside);
      table.push_back({{"precision", c.name}, {"n", n}, {"tflops", tflops}, {"relative_error", err}});
      largest[c.name] = {tflops, err};
    }
  }
  report.results()["products"] = table;
  const int64_t n_max = sizes.back();
  auto note_pair = [&](const std::string& fast, const std::string& base) {
    if (!largest.count(fast) || !largest.count(base)) return;
    const auto [tf, ef] = largest[fast];
    const auto [tb, eb] = largest[base];
    report.add_note(fmt::format("n = {}: {} runs at {:.2f}x the speed of {}, with error {:.1e} against {:.1e}", n_max,
                                fast, tf / tb, base, ef, eb));
  };
  note_pair("tf32", "fp32");
  note_pair("fp16", "fp32");
  note_pair("bf16", "fp32");
  note_pair("fp16, fp16 accumulation", "fp16");
  note_pair("int8", "fp16");
  if (!device.is_cuda()) {
    report.add_note(
        "tf32, the reduced-precision reductions and fp16 accumulation are switches of CUDA's products; "
        "on the CPU they change nothing, so this run leaves them out");
  }
  report.print_notes();
  report.write_json();
}

}  // namespace

void add_c02_precision(CLI::App& chapter) {
  CLI::App* cmd = chapter.add_subcommand("precision", "Matmul speed and error in each precision, over sizes");
  auto o = std::make_shared<Options>();
  CommonDefaults defaults{std::nullopt, {}, 20, 3};
  defaults.peer = true;
  add_common_options(cmd, o->common, defaults);
  cmd->add_option("--sizes", o->sizes,
                  "comma-separated n (default: 1024,2048,4096,8192 on a GPU, 128,256,512 on "
                  "the CPU)");
  cmd->callback([o] { run(*o); });
}

}  // namespace anatomy::tools
