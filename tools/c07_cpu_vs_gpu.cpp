// gpu-anatomy c07 cpu-vs-gpu: seed 003's claim "GPU beneficial above 500x500", measured. A matmul
// and an element-wise add of n x n tensors for n from 64 to 4096, on the CPU (host time), on the
// GPU (device time, CUDA events), and on the GPU counting the copies (host time of copying both
// inputs in, the op, and the result back). The crossover is the smallest n from which the GPU
// with its copies stays faster than the CPU. Without a GPU (or with --device cpu) only the CPU
// column is measured, which the run says. With --peer torch, PyTorch runs each column's workload
// on the same tensors, and a second table gives its times beside ours.
#include <fmt/format.h>

#include <memory>

#include "anatomy/cuda.h"
#include "anatomy/tools/chapters.h"
#include "anatomy/tools/checks.h"
#include "anatomy/tools/experiment.h"
#include "anatomy/tools/peer.h"
#include "anatomy/tools/timing.h"

namespace anatomy::tools {
namespace {

struct Options {
  CommonOptions common;
  std::string sizes = "64,128,256,512,1024,2048,4096";
};

struct Op {
  std::string name;
  std::function<Tensor(const Tensor&, const Tensor&)> fn;
};

struct Row {
  int64_t n;
  double cpu = -1, gpu = -1, copies = -1;
  double peer_cpu = -1, peer_gpu = -1, peer_copies = -1;  // --peer: its medians; < 0: none
};

void run(const Options& o) {
  const std::vector<int64_t> sizes = parse_sizes("--sizes", o.sizes);
  const Device device = resolve_device(o.common.device, o.common.quiet);
  const DType dtype = resolve_dtype(o.common.dtype);
  const bool gpu = device.is_cuda();
  const std::unique_ptr<Peer> peer = open_peer(o.common.peer);
  Report report("c07", "cpu-vs-gpu", o.common, device);
  report.set_option("sizes", sizes);
  manual_seed(0);
  const std::vector<Op> ops = {{"matmul", [](const Tensor& a, const Tensor& b) { return a.matmul(b); }},
                               {"add", [](const Tensor& a, const Tensor& b) { return a.add(b); }}};
  Progress progress("c07 cpu-vs-gpu", o.common.quiet);
  nlohmann::json crossovers = nlohmann::json::object();
  for (const Op& op : ops) {
    fmt::print("=== {} of {} x {} {} tensors: cpu{} ===\n", op.name, "n", "n", long_dtype_name(dtype),
               gpu ? " against " + device.str() : " only (no GPU)");
    fmt::print("{:>6} {:>12} {:>12} {:>14} {:>12} {:>12}\n", "n", "cpu ms", "gpu ms", "gpu+copies ms", "gpu speedup",
               "with copies");
    std::vector<Row> rows;
    for (int64_t n : sizes) {
      progress.update(fmt::format("{} n={}", op.name, n));
      const Tensor a = random_tensor({n, n}, dtype, kCPU), b = random_tensor({n, n}, dtype, kCPU);
      Row r{n};
      Tensor out = op.fn(a, b);
      const double tol = product_tolerance(dtype);
      const bool product = op.name == "matmul";
      const Tensor sum64 = product ? Tensor() : a.to(DType::Float64).add(b.to(DType::Float64));
      // The error of a result of a + b or a @ b (on any device) against the fp64 reference.
      const auto error = [&](const Tensor& x, const Tensor& y, const Tensor& result) {
        return product ? matmul_error(x, y, result) : relative_error(result.to(kCPU), sum64);
      };
      const double err = error(a, b, out);
      if (err > tol)
        throw ExperimentFailed(fmt::format("c07 {} n={}: the CPU's result differs ({:.3g})", op.name, n, err));
      // Our samples into the report, and with --peer the peer's on the same tensors (checked as
      // ours were); returns our median, the peer's into `peer_ms`.
      const auto record = [&](const std::string& column, std::vector<double> s, Device timing_device,
                              const std::function<std::unique_ptr<PeerCall>()>& make, const Tensor& x, const Tensor& y,
                              double& peer_ms) {
        const std::string name = fmt::format("{} n={}", column, n);
        const double ms = median(s);
        if (!peer) {
          report.add_measurement(op.name, name, std::move(s));
          return ms;
        }
        const std::unique_ptr<PeerCall> call = make();
        const std::vector<double> ps = time_peer(
            op.name, name, *call, *peer, o.common, timing_device,
            [&](const Tensor& result) { return error(x, y, result); }, tol);
        peer_ms = median(ps);
        report.add_measurement(op.name, name, std::move(s), peer->engine(), ps);
        return ms;
      };
      const auto peer_op = [&](const Tensor& x, const Tensor& y) {
        return [&peer, &x, &y, product] { return product ? peer->matmul(x, y) : peer->add(x, y); };
      };
      r.cpu = record("cpu", time_iterations(kCPU, o.common.warmup, o.common.iters, [&] { out = op.fn(a, b); }), kCPU,
                     peer_op(a, b), a, b, r.peer_cpu);
      if (gpu) {
        const Tensor da = a.to(device), db = b.to(device);
        Tensor dout = op.fn(da, db);
        const double gerr = error(da, db, dout);
        if (gerr > tol) {
          throw ExperimentFailed(fmt::format("c07 {} n={}: the GPU's result differs ({:.3g})", op.name, n, gerr));
        }
        r.gpu = record("gpu", time_iterations(device, o.common.warmup, o.common.iters, [&] { dout = op.fn(da, db); }),
                       device, peer_op(da, db), da, db, r.peer_gpu);
        // With the copies: host time, the result back on the CPU (which waits for the device).
        r.copies = record(
            "gpu+copies",
            time_iterations(kCPU, o.common.warmup, o.common.iters,
                            [&] { out = op.fn(a.to(device), b.to(device)).to(kCPU); }),
            kCPU, [&] { return peer->with_copies(op.name, a, b, device); }, a, b, r.peer_copies);
      }
      auto cell = [](double v) { return v < 0 ? std::string("-") : fmt::format("{:.4f}", v); };
      auto ratio = [](double a, double b) { return b < 0 ? std::string("-") : fmt::format("{:.2f}x", a / b); };
      fmt::print("{:>6} {:>12} {:>12} {:>14} {:>12} {:>12}\n", n, cell(r.cpu), cell(r.gpu), cell(r.copies),
                 ratio(r.cpu, r.gpu), ratio(r.cpu, r.copies));
      rows.push_back(r);
    }
    fmt::print("\n");
    if (peer) {
      fmt::print("=== {}: {} ms beside anatomy's (its time / ours) ===\n", op.name, peer->engine());
      fmt::print("{:>6} {:>20} {:>20} {:>20}\n", "n", "cpu", "gpu", "gpu+copies");
      for (const Row& r : rows) {
        fmt::print("{:>6} {:>20} {:>20} {:>20}\n", r.n, peer_cell(r.cpu, r.peer_cpu), peer_cell(r.gpu, r.peer_gpu),
                   peer_cell(r.copies, r.peer_copies));
      }
      fmt::print("\n");
    }
    if (gpu) {
      // The smallest n from which the GPU with its copies beats the CPU at every larger size.
      int64_t from = -1;
      for (auto it = rows.rbegin(); it != rows.rend() && it->copies < it->cpu; ++it) from = it->n;
      crossovers[op.name] = from;
      report.add_note(from < 0 ? fmt::format("{}: the GPU with its copies is not faster than the CPU at the largest "
                                             "size measured ({})",
                                             op.name, rows.back().n)
                               : fmt::format("{}: the GPU with its copies is faster from n = {} on (seed 003: 'GPU "
                                             "beneficial above 500x500')",
                                             op.name, from));
    }
  }
  report.results()["crossover_n"] = crossovers;
  if (!gpu) report.add_note("no GPU in this run: the CPU column alone; run with --device cuda:0 on a GPU machine");
  report.add_note(
      "an element-wise add reads two tensors and writes one: copying them costs more than computing them, "
      "so the copies decide where the GPU pays off for it, and the arithmetic decides it for matmul");
  report.print_notes(false);
  report.write_json();
}

}  // namespace

void add_c07_cpu_vs_gpu(CLI::App& chapter) {
  CLI::App* cmd = chapter.add_subcommand("cpu-vs-gpu", "Matmul and add over sizes on the CPU and the GPU");
  auto o = std::make_shared<Options>();
  CommonDefaults defaults{"fp32", {"fp32", "fp16", "bf16", "fp64"}, 10, 2};
  defaults.peer = true;
  add_common_options(cmd, o->common, defaults);
  cmd->add_option("--sizes", o->sizes, "comma-separated n of the n x n tensors")->capture_default_str();
  cmd->callback([o] { run(*o); });
}

}  // namespace anatomy::tools
