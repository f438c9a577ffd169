// Custom autograd functions and the autograd fallback on CUDA tensors: the function's node
// records the forward's stream and its backward runs there, zeros for an unused output are made
// on the device, a gradient on the wrong device is refused; an operator with only a CUDA kernel
// gets a NotImplemented node at AutogradCUDA.
#include <tuple>

#include "anatomy/cuda.h"
#include "gpu_test_util.h"

using namespace anatomy;
using gpu_test::kCuda;

namespace {

// (c x, x^2); backward notes the stream it ran on and whether grads[1] came as device zeros.
struct ScaleAndSquare : autograd::Function<ScaleAndSquare> {
  inline static uint64_t backward_stream = 0;
  inline static bool second_grad_on_device = false;
  static std::tuple<Tensor, Tensor> forward(autograd::AutogradContext* ctx, const Tensor& x, double c) {
    ctx->save_for_backward({x});
    ctx->saved_data["c"] = c;
    return {x * c, x * x};
  }
  static autograd::variable_list backward(autograd::AutogradContext* ctx, autograd::variable_list grads) {
    backward_stream = reinterpret_cast<uint64_t>(cuda::current_stream(0).handle());
    second_grad_on_device = grads[1].defined() && grads[1].device() == kCuda;
    const Tensor x = ctx->get_saved_variables()[0];
    return {grads[0] * ctx->saved_data["c"].get<double>() + grads[1] * x * 2.0, Tensor()};
  }
};

struct CpuGradient : autograd::Function<CpuGradient> {
  static Tensor forward(autograd::AutogradContext*, const Tensor& x) { return x * 2.0; }
  static autograd::variable_list backward(autograd::AutogradContext*, autograd::variable_list grads) {
    return {grads[0].cpu()};
  }
};

Tensor cuda_scale(const Tensor& self, double factor) { return self * factor; }

ANATOMY_LIBRARY(test_cuda_fallback, m) { m.def("scale(Tensor self, float factor) -> Tensor"); }
ANATOMY_LIBRARY_IMPL(test_cuda_fallback, CUDA, m) { m.impl("scale", ANATOMY_KERNEL(cuda_scale)); }

}  // namespace

TEST_CASE("cuda custom function: backward on the forward's stream, device zeros for an unused output") {
  ANATOMY_REQUIRE_GPU();
  const Tensor x_cpu = randn({1000});
  Tensor x = x_cpu.to(kCuda).requires_grad_();
  const cuda::Stream def = cuda::current_stream(0);
  const cuda::Stream side = cuda::get_stream_from_pool();
  side.wait_stream(def);
  Tensor a, b;
  {
    cuda::StreamGuard guard(side);
    std::tie(a, b) = ScaleAndSquare::apply(x, 3.0);
  }
  def.wait_stream(side);
  REQUIRE(a.grad_fn() != nullptr);
  CHECK(a.grad_fn()->name() == "ScaleAndSquare");
  CHECK(a.grad_fn()->stream_id() == reinterpret_cast<uint64_t>(side.handle()));
  a.sum().backward();
  CHECK(ScaleAndSquare::backward_stream == reinterpret_cast<uint64_t>(side.handle()));
  CHECK(ScaleAndSquare::second_grad_on_device);
  CHECK(x.grad().device() == kCuda);
  CHECK(x.grad().cpu().allclose(full({1000}, 3.0)));
  // Both outputs: d/dx (3x + x^2) = 3 + 2x.
  x.set_grad(Tensor());
  auto [c, d] = ScaleAndSquare::apply(x, 3.0);
  (c + d).sum().backward();
  CHECK(x.grad().cpu().allclose(x_cpu * 2.0 + 3.0, 1e-5, 1e-5));
}

TEST_CASE("cuda custom function: a gradient on the CPU for a CUDA input is a ValueError naming the function") {
  ANATOMY_REQUIRE_GPU();
  Tensor x = randn({4}, TensorOptions().device(kCuda)).requires_grad_();
  CHECK_THROWS_WITH_AS(CpuGradient::apply(x).sum().backward(),
                       doctest::Contains("CpuGradient returned an invalid gradient at index 0: expected device cuda:0"),
                       ValueError);
}

TEST_CASE("cuda autograd fallback: an operator with only a CUDA kernel gets a node that raises in backward") {
  ANATOMY_REQUIRE_GPU();
  autograd::WarningHandler previous = autograd::set_warning_handler([](const std::string&) {});
  Tensor x = randn({4}, TensorOptions().device(kCuda)).requires_grad_();
  Tensor y = dispatch::Dispatcher::singleton()
                 .find_or_throw("test_cuda_fallback::scale")
                 .typed<Tensor(const Tensor&, double)>()
                 .call(x, 2.0);
  autograd::set_warning_handler(previous);
  CHECK(y.cpu().allclose(x.detach().cpu() * 2.0));
  REQUIRE(y.grad_fn() != nullptr);
  CHECK(y.grad_fn()->name() == "NotImplemented(test_cuda_fallback::scale)");
  CHECK_THROWS_WITH_AS(y.sum().backward(), doctest::Contains("test_cuda_fallback::scale: backward reached"),
                       NotImplementedError);
}
