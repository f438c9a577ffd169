// Autocast on the CPU: the three cast policies, scopes (nesting, disabling, other device types),
// gradients through the casts, and what the dispatcher's dump and traces show of the layer.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "anatomy/anatomy.h"

using namespace anatomy;
using autocast::AutocastGuard;

namespace {

double max_abs_diff(const Tensor& a, const Tensor& b) {
  return (a.to(DType::Float64) - b.to(DType::Float64)).abs().max().item<double>();
}
double max_abs(const Tensor& a) { return a.to(DType::Float64).abs().max().item<double>(); }

bool autocast_key_included() { return dispatch::tls_local_key_set.included.has(DispatchKey::Autocast); }

// The casts to bf16 in a Tracer's record. (The CPU kernels of bf16 matrix products make casts
// of their own, to fp32 and back, which this does not count.)
int count_casts_to_bf16(const dispatch::Tracer& tracer) {
  return static_cast<int>(
      std::count_if(tracer.calls().begin(), tracer.calls().end(), [](const dispatch::TracedCall& c) {
        return c.op == "aten::_to_copy" && c.args.size() > 1 && c.args[1] == "bf16";
      }));
}

}  // namespace

TEST_CASE("autocast: the matrix products run in bf16 inside a CPU bf16 scope, in fp32 outside") {
  manual_seed(1);
  Tensor a = randn({4, 8}), b = randn({8, 3}), bias = randn({3});
  Tensor a3 = randn({2, 4, 8}), b3 = randn({2, 8, 3}), v = randn({8}), w = randn({5});
  Tensor ref = mm(a, b);
  {
    AutocastGuard amp(DeviceType::CPU, DType::BFloat16);
    CHECK(autocast::is_enabled(DeviceType::CPU));
    CHECK(autocast::get_dtype(DeviceType::CPU) == DType::BFloat16);
    Tensor c = mm(a, b);
    CHECK(c.dtype() == DType::BFloat16);
    CHECK(max_abs_diff(c, ref) <= 0.02 * max_abs(ref) + 1e-2);
    CHECK(matmul(a, b).dtype() == DType::BFloat16);
    CHECK(linear(a, b.t(), bias).dtype() == DType::BFloat16);
    CHECK(addmm(bias, a, b).dtype() == DType::BFloat16);
    CHECK(bmm(a3, b3).dtype() == DType::BFloat16);
    CHECK(baddbmm(bias, a3, b3).dtype() == DType::BFloat16);
    CHECK(dot(v, v).dtype() == DType::BFloat16);
    CHECK(outer(v, w).dtype() == DType::BFloat16);
    CHECK(scaled_dot_product_attention(a3, a3, a3).dtype() == DType::BFloat16);
    // fp64 is not autocast's business, as in PyTorch; integers neither.
    CHECK(mm(a.to(DType::Float64), b.to(DType::Float64)).dtype() == DType::Float64);
    CHECK(mm(ones({2, 2}, DType::Int64), ones({2, 2}, DType::Int64)).dtype() == DType::Int64);
  }
  CHECK_FALSE(autocast::is_enabled(DeviceType::CPU));
  CHECK_FALSE(autocast_key_included());
  CHECK(mm(a, b).dtype() == DType::Float32);
  CHECK(matmul(a, b).dtype() == DType::Float32);
  CHECK(linear(a, b.t(), bias).dtype() == DType::Float32);
}

TEST_CASE("autocast: softmax, norms, reductions and exp/log of bf16 inputs give fp32") {
  manual_seed(2);
  Tensor x = randn({3, 5}).to(DType::BFloat16);
  Tensor p_ref = softmax(x.to(DType::Float32), 1);
  AutocastGuard amp(DeviceType::CPU, DType::BFloat16);
  Tensor p = softmax(x, 1);
  CHECK(p.dtype() == DType::Float32);
  CHECK(max_abs_diff(p, p_ref) < 1e-6);
  CHECK(log_softmax(x, 0).dtype() == DType::Float32);
  CHECK(layer_norm(x, {5}).dtype() == DType::Float32);
  CHECK(rms_norm(x, {5}).dtype() == DType::Float32);
  CHECK(x.sum().dtype() == DType::Float32);
  CHECK(x.mean().dtype() == DType::Float32);
  CHECK(x.exp().dtype() == DType::Float32);
  CHECK(x.abs().log().dtype() == DType::Float32);
  CHECK(pow(x, 2.0).dtype() == DType::Float32);
  CHECK(cumsum(x, 1).dtype() == DType::Float32);
  // An explicit dtype argument is the caller's choice and wins.
  CHECK(softmax(x, 1, DType::BFloat16).dtype() == DType::BFloat16);
  // Operators on no list keep the input's dtype.
  CHECK(x.tanh().dtype() == DType::BFloat16);
  CHECK(x.relu().dtype() == DType::BFloat16);
}

TEST_CASE("autocast: cat, stack and where cast to the widest floating dtype, add keeps its promotion") {
  Tensor f32 = ones({2, 3}), bf16 = ones({2, 3}, DType::BFloat16);
  Tensor mask = ones({2, 3}, DType::Bool);
  AutocastGuard amp(DeviceType::CPU, DType::BFloat16);
  CHECK(cat({f32, bf16}).dtype() == DType::Float32);
  CHECK(cat({bf16, bf16}).dtype() == DType::BFloat16);
  CHECK(stack({bf16, f32}).dtype() == DType::Float32);
  CHECK(where(mask, bf16, f32).dtype() == DType::Float32);
  CHECK(where(mask, bf16, 0.0).dtype() == DType::BFloat16);  // a wrapped number does not widen
  // add is on no list: PyTorch's type promotion decides, and fp32 + fp32 stays fp32.
  CHECK((bf16 + f32).dtype() == DType::Float32);
  CHECK((bf16 + bf16).dtype() == DType::BFloat16);
  CHECK((f32 + f32).dtype() == DType::Float32);
}

TEST_CASE("autocast: scopes nest, an inner disabled scope turns autocast off, and each restores its state") {
  Tensor a = ones({2, 2}), b = ones({2, 2});
  CHECK(autocast::get_dtype(DeviceType::CPU) == DType::BFloat16);  // the defaults, as PyTorch
  CHECK(autocast::get_dtype(DeviceType::CUDA) == DType::Float16);
  {
    AutocastGuard outer(DeviceType::CPU, DType::BFloat16);
    CHECK(mm(a, b).dtype() == DType::BFloat16);
    {
      AutocastGuard off(DeviceType::CPU, std::nullopt, /*enabled=*/false);
      CHECK_FALSE(autocast::is_enabled(DeviceType::CPU));
      CHECK_FALSE(autocast_key_included());
      CHECK(mm(a, b).dtype() == DType::Float32);
      {
        AutocastGuard fp16(DeviceType::CPU, DType::Float16);
        CHECK(mm(a, b).dtype() == DType::Float16);
      }
      CHECK(mm(a, b).dtype() == DType::Float32);
    }
    CHECK(autocast::is_enabled(DeviceType::CPU));
    CHECK(autocast::get_dtype(DeviceType::CPU) == DType::BFloat16);
    CHECK(mm(a, b).dtype() == DType::BFloat16);
  }
  CHECK_FALSE(autocast_key_included());
  CHECK(mm(a, b).dtype() == DType::Float32);
}

TEST_CASE("autocast: a scope for one device type leaves tensors of another alone") {
  Tensor a = ones({2, 2}), b = ones({2, 2});
  AutocastGuard cuda_amp(DeviceType::CUDA, DType::Float16);
  CHECK(autocast_key_included());  // the key is on, but the CPU call finds CPU autocast off
  CHECK(mm(a, b).dtype() == DType::Float32);
  CHECK(softmax(a.to(DType::BFloat16), 0).dtype() == DType::BFloat16);
  {
    AutocastGuard cpu_off(DeviceType::CPU, std::nullopt, false);
    CHECK(autocast_key_included());  // CUDA autocast still needs it
  }
  AutocastGuard cpu_amp(DeviceType::CPU, DType::BFloat16);
  CHECK(mm(a, b).dtype() == DType::BFloat16);
}

TEST_CASE("autocast: a dtype other than fp16 or bf16 is refused") {
  CHECK_THROWS_WITH_AS(AutocastGuard(DeviceType::CPU, DType::Float32),
                       "autocast: the lower-precision dtype must be fp16 or bf16, got fp32 (device type cpu)",
                       TypeError);
  CHECK_FALSE(autocast::is_enabled(DeviceType::CPU));
  CHECK_FALSE(autocast_key_included());
}

TEST_CASE("autocast: gradients flow through the casts to fp32 leaves, close to the fp32 run") {
  manual_seed(3);
  Tensor x = randn({16, 8}), y = randn({16, 1});
  Tensor w1 = (randn({32, 8}) * 0.3).requires_grad_(), b1 = zeros({32}).requires_grad_();
  Tensor w2 = (randn({1, 32}) * 0.2).requires_grad_(), b2 = zeros({1}).requires_grad_();
  auto loss_fn = [&] {
    Tensor out = linear(linear(x, w1, b1).tanh(), w2, b2);
    Tensor diff = out - y;
    return (diff * diff).mean();
  };
  std::vector<Tensor> params{w1, b1, w2, b2};

  loss_fn().backward();
  std::vector<Tensor> ref;
  for (Tensor& p : params) {
    ref.push_back(p.grad());
    p.set_grad(Tensor());
  }

  Tensor loss;
  {
    AutocastGuard amp(DeviceType::CPU, DType::BFloat16);
    loss = loss_fn();
  }
  CHECK(loss.dtype() == DType::Float32);  // mean is on the fp32 list
  loss.backward();
  for (size_t i = 0; i < params.size(); ++i) {
    CAPTURE(i);
    REQUIRE(params[i].grad().defined());
    CHECK(params[i].grad().dtype() == DType::Float32);
    CHECK(max_abs_diff(params[i].grad(), ref[i]) <= 0.03 * max_abs(ref[i]) + 1e-3);
  }
}

TEST_CASE("autocast: the graph records the casts, and a composite is cast once, at the top") {
  Tensor a = ones({2, 3}).requires_grad_(), b = ones({3, 4});
  Tensor c;
  {
    AutocastGuard amp(DeviceType::CPU, DType::BFloat16);
    dispatch::Tracer tracer;
    dispatch::TraceCapture trace;
    c = matmul(a, b);
    CHECK(count_casts_to_bf16(tracer) == 2);
    CHECK(trace.text().find("aten::matmul [Autocast, AutogradCPU, CPU] -> Autocast") != std::string::npos);
    CHECK(trace.text().find("aten::mm [Autocast") == std::string::npos);  // the inner mm skips the layer
    // An input already in bf16 is not copied.
    Tensor d = mm(c, ones({4, 2}, DType::BFloat16));
    CHECK(d.dtype() == DType::BFloat16);
  }
  std::string graph = autograd::print_graph(c);
  CHECK(graph.find("MmBackward0") != std::string::npos);
  CHECK(graph.find("ToCopyBackward0") != std::string::npos);
  {
    AutocastGuard amp(DeviceType::CPU, DType::BFloat16);
    Tensor b16 = ones({3, 4}, DType::BFloat16), a16 = ones({2, 3}, DType::BFloat16);
    dispatch::Tracer tracer;
    mm(a16, b16);
    CHECK(count_casts_to_bf16(tracer) == 0);
  }
}

TEST_CASE("autocast: the trace and the dump show the Autocast layer for mm") {
  Tensor a = ones({2, 3}), b = ones({3, 4});
  std::string table = dispatch::dump("aten::mm");
  CHECK(table.find("  Autocast                   autocast_lower_precision\n") != std::string::npos);
  CHECK(dispatch::dump("aten::softmax.int").find("  Autocast                   autocast_fp32\n") != std::string::npos);
  CHECK(dispatch::dump("aten::cat").find("  Autocast                   autocast_promote\n") != std::string::npos);
  CHECK(dispatch::dump("aten::add.Tensor").find("  Autocast                   fallthrough [fallback]\n") !=
        std::string::npos);

  AutocastGuard amp(DeviceType::CPU, DType::BFloat16);
  dispatch::TraceCapture trace;
  mm(a, b);
  const auto& lines = trace.lines();
  REQUIRE(!lines.empty());
  CHECK(lines.front() == "[dispatch] aten::mm [Autocast, AutogradCPU, CPU] -> Autocast (autocast_lower_precision)");
  auto has = [&](const std::string& s) {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string& l) { return l.find(s) != std::string::npos; });
  };
  CHECK(has("[dispatch]   aten::_to_copy [AutogradCPU, CPU]"));  // the casts, with Autocast excluded
  CHECK(has("[dispatch]   redispatch aten::mm [AutogradCPU, CPU] -> AutogradCPU"));
}

TEST_CASE("autocast: the scope is per thread, and index_put and lerp promote too") {
  Tensor a = ones({2, 2}), b = ones({2, 2});
  AutocastGuard amp(DeviceType::CPU, DType::BFloat16);
  DType in_other_thread = DType::Bool;
  std::thread([&] { in_other_thread = mm(a, b).dtype(); }).join();
  CHECK(in_other_thread == DType::Float32);
  CHECK(mm(a, b).dtype() == DType::BFloat16);

  Tensor bf16 = zeros({4}, DType::BFloat16);
  Tensor index = tensor({1, 3});
  CHECK(index_put(bf16, {index}, ones({2})).dtype() == DType::Float32);
  CHECK(lerp(bf16, ones({4}), 0.5).dtype() == DType::Float32);
}
