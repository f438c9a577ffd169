// gpu-anatomy c01 autograd-inspect: seed 004's third experiment. A transformer block built from
// the engine's operators (layer norm, the QKV projection, multi-head scaled dot-product attention,
// the output projection and its residual, a GELU MLP and its residual), run forward and backward
// once. It prints the grad_fn tree (nodes named as PyTorch names them: AddBackward0,
// NativeLayerNormBackward0, ...), each parameter's gradient (shape and statistics), and the
// graph's structure: nodes by type, the memory the graph holds between forward and backward
// (saved tensors and the intermediate results they keep), and the step's peak. --dot writes the
// graph as Graphviz source, --svg renders it with Graphviz's `dot` when it is installed.
#include <fmt/format.h>

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <set>

#include "anatomy/anatomy.h"
#include "anatomy/cuda.h"
#include "anatomy/tools/chapters.h"
#include "anatomy/tools/experiment.h"
#include "anatomy/tools/run_program.h"

namespace anatomy::tools {
namespace {

struct Options {
  CommonOptions common;
  int64_t batch = 2, seq = 128, dmodel = 768, nhead = 12;
  std::string dot, svg;
};

// Bytes the engine's allocator holds for live tensors on the device (the CPU's allocator on cpu).
int64_t live_bytes(Device d) {
  return d.is_cuda() ? cuda::memory_allocated(d.index()) : alloc::cpu_allocator_stats().live_bytes;
}
int64_t peak_bytes(Device d) {
  return d.is_cuda() ? cuda::max_memory_allocated(d.index()) : alloc::cpu_allocator_stats().peak_bytes;
}
void reset_peak(Device d) {
  if (d.is_cuda()) cuda::reset_peak_memory_stats(d.index());
  else alloc::reset_cpu_peak_stats();
}

struct Block {
  std::vector<std::pair<std::string, Tensor>> params;
  const Tensor& get(const std::string& name) const {
    for (const auto& [n, t] : params) {
      if (n == name) return t;
    }
    throw std::logic_error(name);
  }
};

Block make_block(const Options& o, DType dtype, Device device) {
  const TensorOptions opts = TensorOptions().device(device);
  const int64_t d = o.dmodel;
  auto weight = [&](int64_t out, int64_t in) { return randn({out, in}, opts).mul(1.0 / std::sqrt(in)).to(dtype); };
  Block b;
  b.params = {{"ln1.weight", ones({d}, opts.dtype(dtype))},
              {"ln1.bias", zeros({d}, opts.dtype(dtype))},
              {"qkv.weight", weight(3 * d, d)},
              {"qkv.bias", zeros({3 * d}, opts.dtype(dtype))},
              {"out.weight", weight(d, d)},
              {"out.bias", zeros({d}, opts.dtype(dtype))},
              {"ln2.weight", ones({d}, opts.dtype(dtype))},
              {"ln2.bias", zeros({d}, opts.dtype(dtype))},
              {"mlp.fc1.weight", weight(4 * d, d)},
              {"mlp.fc1.bias", zeros({4 * d}, opts.dtype(dtype))},
              {"mlp.fc2.weight", weight(d, 4 * d)},
              {"mlp.fc2.bias", zeros({d}, opts.dtype(dtype))}};
  for (auto& [n, t] : b.params) t.requires_grad_(true);
  return b;
}

// The block's output for x of shape (batch, seq, dmodel).
Tensor forward(const Block& b, const Tensor& x, const Options& o) {
  const int64_t d = o.dmodel, hd = o.dmodel / o.nhead;
  const std::vector<int64_t> last{d};
  const Tensor h = layer_norm(x, last, b.get("ln1.weight"), b.get("ln1.bias"));
  const std::vector<Tensor> qkv = linear(h, b.get("qkv.weight"), b.get("qkv.bias")).chunk(3, -1);
  auto heads = [&](const Tensor& t) { return t.reshape({o.batch, o.seq, o.nhead, hd}).transpose(1, 2); };
  const Tensor attn = scaled_dot_product_attention(heads(qkv[0]), heads(qkv[1]), heads(qkv[2]));
  const Tensor merged = attn.transpose(1, 2).reshape({o.batch, o.seq, d});
  const Tensor x1 = x.add(linear(merged, b.get("out.weight"), b.get("out.bias")));
  const Tensor h2 = layer_norm(x1, last, b.get("ln2.weight"), b.get("ln2.bias"));
  const Tensor mlp = linear(gelu(linear(h2, b.get("mlp.fc1.weight"), b.get("mlp.fc1.bias"))), b.get("mlp.fc2.weight"),
                            b.get("mlp.fc2.bias"));
  return x1.add(mlp);
}

// Every node reachable from root, each once, with its type's count.
std::map<std::string, int> count_nodes(autograd::Node* root) {
  std::map<std::string, int> counts;
  std::set<autograd::Node*> seen;
  std::vector<autograd::Node*> todo{root};
  while (!todo.empty()) {
    autograd::Node* n = todo.back();
    todo.pop_back();
    if (!n || !seen.insert(n).second) continue;
    ++counts[n->name()];
    for (const autograd::Edge& e : n->next_edges()) todo.push_back(e.function.get());
  }
  return counts;
}

// Graphviz's dot, run directly (no shell, so any file name is passed as it is).
void render_svg(const std::string& dot, const std::string& svg) {
  const std::string src = svg + ".dot.partial";
  write_file_atomically(src, dot, "--svg");
  std::string error;
  const int rc = run_program({"dot", "-Tsvg", src, "-o", svg}, /*quiet=*/false, error);
  std::remove(src.c_str());
  if (rc == 127 && !error.empty()) {
    throw UsageError(
        fmt::format("--svg: cannot run Graphviz's dot ({}); install graphviz, or write the source with "
                    "--dot",
                    error));
  }
  if (rc != 0) {
    std::remove(svg.c_str());
    throw UsageError(fmt::format("--svg: dot could not write '{}'", svg));
  }
}

void run(const Options& o) {
  for (auto [name, v] : {std::pair{"--batch", o.batch}, {"--seq", o.seq}, {"--dmodel", o.dmodel}, {"--nhead", o.nhead}})
    check_positive(name, v);
  if (o.dmodel % o.nhead != 0) {
    throw UsageError(fmt::format("--dmodel {} is not a multiple of --nhead {}", o.dmodel, o.nhead));
  }
  const Device device = resolve_device(o.common.device, o.common.quiet);
  const DType dtype = resolve_dtype(o.common.dtype);
  Report report("c01", "autograd-inspect", o.common, device);
  for (auto [name, v] : {std::pair{"batch", o.batch}, {"seq", o.seq}, {"dmodel", o.dmodel}, {"nhead", o.nhead}})
    report.set_option(name, v);
  manual_seed(0);
  const Block block = make_block(o, dtype, device);
  const Tensor x = randn({o.batch, o.seq, o.dmodel}, TensorOptions().device(device)).to(dtype);

  if (device.is_cuda()) cuda::synchronize(device.index());
  const int64_t before = live_bytes(device);
  reset_peak(device);
  const Tensor y = forward(block, x, o);
  // The loss in fp32, as a mixed-precision step computes it.
  const Tensor loss = y.to(DType::Float32).square().mean();
  const int64_t held = live_bytes(device) - before;
  const std::map<std::string, int> counts = count_nodes(loss.grad_fn());
  const std::string graph = autograd::print_graph(loss);
  loss.backward();
  if (device.is_cuda()) cuda::synchronize(device.index());
  const int64_t peak = peak_bytes(device) - before;

  fmt::print("=== grad_fn tree of the loss (batch {}, seq {}, dmodel {}, nhead {}, {}, {}) ===\n{}\n", o.batch, o.seq,
             o.dmodel, o.nhead, long_dtype_name(dtype), device.str(), graph);
  fmt::print("=== Parameter gradients ===\n");
  fmt::print("{:<16} {:<14} {:>12} {:>12} {:>12} {:>12}\n", "parameter", "shape", "mean", "std", "max |g|", "norm");
  nlohmann::json grads = nlohmann::json::array();
  bool all_finite = true;
  for (const auto& [name, p] : block.params) {
    const Tensor g = p.grad().to(kCPU, DType::Float64);
    const double mean = g.mean().item<double>(), sd = g.numel() > 1 ? g.std().item<double>() : 0.0;
    const double amax = g.abs().max().item<double>(), norm = g.norm().item<double>();
    all_finite = all_finite && std::isfinite(mean) && std::isfinite(sd) && std::isfinite(norm);
    const std::vector<int64_t> shape(p.sizes().begin(), p.sizes().end());
    fmt::print("{:<16} {:<14} {:>12.4e} {:>12.4e} {:>12.4e} {:>12.4e}\n", name,
               fmt::format("{}", fmt::join(shape, "x")), mean, sd, amax, norm);
    grads.push_back(
        {{"parameter", name}, {"shape", shape}, {"mean", mean}, {"std", sd}, {"max_abs", amax}, {"norm", norm}});
  }
  int total = 0;
  for (const auto& [n, c] : counts) total += c;
  fmt::print("\n=== Graph structure ===\nnodes: {} of {} types\n", total, counts.size());
  for (const auto& [n, c] : counts) fmt::print("  {:<34}{:>4}\n", n, c);
  fmt::print(
      "held by the graph between forward and backward: {}\npeak of the step (above the parameters and "
      "input): {}\n",
      bytes_string(held), bytes_string(peak));
  report.results()["gradients"] = grads;
  report.results()["node_counts"] = counts;
  report.results()["graph_held_bytes"] = held;
  report.results()["step_peak_bytes"] = peak;

  if (!o.dot.empty() || !o.svg.empty()) {
    const std::string dot = autograd::to_dot(loss);
    if (!o.dot.empty()) write_file_atomically(o.dot, dot, "--dot");
    if (!o.svg.empty()) render_svg(dot, o.svg);
  }
  const auto attention = counts.find("ScaledDotProductAttentionBackward0");
  report.add_note(fmt::format(
      "{} nodes for {} parameters: one per recorded operator of the forward, one AccumulateGrad per parameter; {}",
      total, block.params.size(),
      attention != counts.end() ? "attention is one node of its own (its backward is one kernel call)"
                                : "attention is recorded through the operators it is made of"));
  report.add_note(fmt::format("the graph holds {} until backward frees it: {:.1f}x the {} of the block's input",
                              bytes_string(held), static_cast<double>(held) / static_cast<double>(x.nbytes()),
                              bytes_string(x.nbytes())));
  report.print_notes();
  report.write_json();
  if (!all_finite) throw ExperimentFailed("c01 autograd-inspect: a gradient is not finite");
}

}  // namespace

void add_c01_autograd_inspect(CLI::App& chapter) {
  CLI::App* cmd = chapter.add_subcommand("autograd-inspect", "The autograd graph of a transformer block");
  auto o = std::make_shared<Options>();
  add_common_options(cmd, o->common, CommonDefaults{"fp16", {"fp16", "bf16", "fp32", "fp64"}, std::nullopt});
  cmd->add_option("--batch", o->batch, "batch size")->capture_default_str();
  cmd->add_option("--seq", o->seq, "sequence length")->capture_default_str();
  cmd->add_option("--dmodel", o->dmodel, "model width")->capture_default_str();
  cmd->add_option("--nhead", o->nhead, "attention heads (dmodel must be a multiple)")->capture_default_str();
  cmd->add_option("--dot", o->dot, "write the graph as Graphviz source here");
  cmd->add_option("--svg", o->svg, "render the graph as SVG here (needs Graphviz's dot)");
  cmd->callback([o] { run(*o); });
}

}  // namespace anatomy::tools
