// GPU tests of the multi-tensor Adam step (_fused_adam_, optim options foreach) against the
// single-tensor step on the CPU: over 100 parameters (more than one launch's table of 32 tensors),
// one parameter larger than one launch's 320 chunks (it continues into the next launch), a
// transposed parameter (the operators' path), fp16 and bf16 against the single-tensor step on
// CUDA, and the launch count that makes it worth having; the capturable step (counts on the device)
// likewise, eagerly and replayed from a CUDA graph.
#include <memory>
#include <vector>

#include "anatomy/profiler/profiler.h"
#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;

namespace {

std::unique_ptr<optim::Optimizer> adamw(std::vector<Tensor> ps, bool foreach, bool capturable = false) {
  return std::make_unique<optim::AdamW>(
      std::move(ps),
      optim::AdamWOptions{.lr = 0.01, .weight_decay = 0.1, .capturable = capturable, .foreach = foreach});
}

double max_rel_diff(const Tensor& a, const Tensor& b) {
  const Tensor x = a.detach().cpu().to(DType::Float64), y = b.detach().cpu().to(DType::Float64);
  return ((x - y).abs() / (y.abs() + 1e-3)).max().item<double>();
}

}  // namespace

TEST_CASE("cuda fused adam: 100 parameters and a 22M-element one match the CPU's single-tensor step") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(31);
  std::vector<std::vector<int64_t>> shapes;
  for (int i = 0; i < 100; ++i) shapes.push_back({1 + (i * 37) % 300, 1 + (i * 11) % 40});
  shapes.push_back({22 * 1024 * 1024 + 5});  // more than 320 chunks of 65536
  std::vector<Tensor> cpu, gpu;
  for (const auto& s : shapes) {
    const Tensor init = randn(s);
    cpu.push_back(init.clone().requires_grad_());
    gpu.push_back(init.to(kCuda).requires_grad_());
  }
  const Tensor t = randn({7, 9});
  cpu.push_back(t.t().clone().requires_grad_());    // contiguous on the CPU
  gpu.push_back(t.to(kCuda).t().requires_grad_());  // transposed on CUDA: the operators' path
  auto a = adamw(cpu, false), b = adamw(gpu, true);
  for (int step = 0; step < 3; ++step) {
    for (size_t i = 0; i < cpu.size(); ++i) {
      const Tensor g = randn(cpu[i].sizes());
      cpu[i].set_grad(g);
      gpu[i].set_grad(i + 1 == cpu.size() ? g.to(kCuda).t().contiguous().t() : g.to(kCuda));
    }
    a->step();
    b->step();
  }
  for (size_t i = 0; i < cpu.size(); ++i) {
    const double diff = max_rel_diff(gpu[i], cpu[i]);
    CHECK_MESSAGE(diff < 1e-5, "parameter ", i, " of shape [", fmt::format("{}", fmt::join(cpu[i].sizes(), ", ")),
                  "]: ", diff);
  }
}

TEST_CASE("cuda fused adam: fp16 and bf16 parameters match the single-tensor step on CUDA") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(32);
  // Gradients of magnitude 0.5 to 1.5: (1 - beta2) * g^2 stays far above fp16's smallest normal,
  // so neither step divides by an eps that fp16 rounds to zero (both would give inf, and inf -
  // inf compares as NaN).
  auto gradient = [](int64_t n, DType dtype) {
    const Tensor u = rand({n}, kCuda);
    return ((u * 2 - 1).sign() * (u + 0.5)).to(dtype);
  };
  for (DType dtype : {DType::Float16, DType::BFloat16}) {
    std::vector<Tensor> single, fused;
    for (int64_t n : {5, 4096, 70000}) {
      const Tensor init = randn({n}, kCuda).to(dtype);
      single.push_back(init.clone().requires_grad_());
      fused.push_back(init.clone().requires_grad_());
    }
    auto a = adamw(single, false), b = adamw(fused, true);
    for (int step = 0; step < 3; ++step) {
      for (size_t i = 0; i < single.size(); ++i) {
        const Tensor g = gradient(single[i].numel(), dtype);
        single[i].set_grad(g);
        fused[i].set_grad(g.clone());
      }
      a->step();
      b->step();
    }
    // Rounding apart (the kernel computes in fp32 and rounds where the operators round; a
    // product rounded once instead of twice can move a bf16 value by one unit in the last place,
    // 2^-8 relative): relative to the value plus 0.1, so a parameter near zero is held to
    // 0.002 absolute, well under one step's update of lr = 0.01.
    for (size_t i = 0; i < single.size(); ++i) {
      const Tensor x = fused[i].detach().cpu().to(DType::Float64), y = single[i].detach().cpu().to(DType::Float64);
      const double worst = ((x - y).abs() / (y.abs() + 0.1)).max().item<double>();
      CHECK_MESSAGE(worst < 2e-2, name(dtype), " parameter ", i, ": ", worst);
    }
  }
}

TEST_CASE("cuda fused adam: a step over 100 parameters is one _fused_adam_ call, not several per parameter") {
  ANATOMY_REQUIRE_GPU();
  std::vector<Tensor> ps;
  for (int i = 0; i < 100; ++i) ps.push_back(randn({64, 64}, kCuda).requires_grad_());
  auto opt = adamw(ps, true);
  for (const Tensor& p : ps) p.set_grad(ones_like(p));
  opt->step();  // the state is made here
  cuda::synchronize();
  profiler::Profile prof;
  opt->step();
  prof.stop();
  int fused_calls = 0, calls = 0;
  for (const profiler::Event& e : prof.events()) {
    if (e.is_range || e.depth != 0 || e.key != "CUDA") continue;  // the host step counts aside
    ++calls;
    if (e.name == "aten::_fused_adam_") ++fused_calls;
  }
  CHECK(fused_calls == 1);
  CHECK(calls == 1);
}

TEST_CASE("cuda fused adam: the capturable step matches the CPU's, eagerly and replayed from a CUDA graph") {
  ANATOMY_REQUIRE_GPU();
  manual_seed(33);
  // 40 parameters (two tables of 32), one of more than 320 chunks (it continues into the next
  // launch, its count read there too), one transposed (the operators' path).
  std::vector<std::vector<int64_t>> shapes;
  for (int i = 0; i < 40; ++i) shapes.push_back({1 + (i * 37) % 300, 1 + (i * 11) % 40});
  shapes.push_back({330 * 65536 + 7});
  std::vector<Tensor> cpu, gpu, grads;
  for (const auto& s : shapes) {
    const Tensor init = randn(s);
    cpu.push_back(init.clone().requires_grad_());
    gpu.push_back(init.to(kCuda).requires_grad_());
  }
  const Tensor t = randn({7, 9});
  cpu.push_back(t.t().clone().requires_grad_());
  gpu.push_back(t.to(kCuda).t().requires_grad_());
  for (const Tensor& p : gpu) {  // the gradients stay where they are: a graph reads them from there
    grads.push_back(p.is_contiguous() ? zeros_like(p) : zeros_like(p).t().contiguous().t());
    p.set_grad(grads.back());
  }
  auto a = adamw(cpu, false, true), b = adamw(gpu, true, true);
  auto new_gradients = [&] {
    for (size_t i = 0; i < cpu.size(); ++i) {
      const Tensor g = randn(cpu[i].sizes());
      cpu[i].set_grad(g);
      grads[i].copy_(g.to(kCuda));
    }
  };
  auto compare = [&](const char* when) {
    for (size_t i = 0; i < cpu.size(); ++i) {
      const double diff = max_rel_diff(gpu[i], cpu[i]);
      CHECK_MESSAGE(diff < 1e-5, when, ": parameter ", i, ": ", diff);
    }
  };
  for (int step = 0; step < 2; ++step) {
    new_gradients();
    a->step();
    b->step();
  }
  compare("eager");
  cuda::synchronize();
  cuda::Graph graph;
  {
    cuda::GraphCapture capture(graph);
    b->step();
  }
  for (int replay = 0; replay < 3; ++replay) {
    new_gradients();
    a->step();
    graph.replay();
  }
  compare("replayed");
  const auto state = b->state_dict();
  for (size_t i = 0; i < gpu.size(); ++i) CHECK(state.at(fmt::format("state.{}.step", i)).item<double>() == 5.0);
}

TEST_CASE("cuda fused adam: a capturable step over 100 parameters is one operator call") {
  ANATOMY_REQUIRE_GPU();
  std::vector<Tensor> ps;
  for (int i = 0; i < 100; ++i) ps.push_back(randn({64, 64}, kCuda).requires_grad_());
  auto opt = adamw(ps, true, true);
  for (const Tensor& p : ps) p.set_grad(ones_like(p));
  opt->step();
  cuda::synchronize();
  profiler::Profile prof;
  opt->step();
  prof.stop();
  std::vector<std::string> calls;
  for (const profiler::Event& e : prof.events()) {
    if (!e.is_range && e.depth == 0 && e.key == "CUDA") calls.push_back(e.name);
  }
  CHECK(calls == std::vector<std::string>{"aten::_fused_adam_capturable_"});
}
