// Operators without an autograd kernel (Note [Autograd fallback] in autograd/autograd_fallback.h):
// a user's operator with only a CPU kernel, called on tensors that require grad, gets a node
// that raises in backward and warns once; the built-ins that are not differentiable keep
// working without a node or a warning.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "anatomy/anatomy.h"

using namespace anatomy;

namespace {

Tensor scale_cpu(const Tensor& self, double factor) { return self * factor; }
Tensor scale_again_cpu(const Tensor& self, double factor) { return self * factor; }
Tensor scale_meta(const Tensor& self, double) { return empty(self.sizes(), TensorOptions().device(Device("meta"))); }
Tensor scale_inplace_cpu(const Tensor& self, double factor) {
  self.mul_(factor);
  return self;
}
Tensor count_positive_cpu(const Tensor& self) { return (self > zeros_like(self)).sum(); }
std::vector<Tensor> halves_cpu(const Tensor& self) {
  const int64_t half = self.size(0) / 2;
  return {self.narrow(0, 0, half).clone(), self.narrow(0, half, self.size(0) - half).clone()};
}
// A kernel runs below a fallthrough with the autograd keys still on: it calls only operators
// that record nothing.
Tensor not_differentiable_cpu(const Tensor& self) { return full_like(self, 1.0); }

ANATOMY_LIBRARY(test_fallback, m) {
  m.def("scale(Tensor self, float factor) -> Tensor");
  m.def("scale_again(Tensor self, float factor) -> Tensor");
  m.def("scale_(Tensor(a!) self, float factor) -> Tensor(a!)");
  m.def("count_positive(Tensor self) -> Tensor");
  m.def("halves(Tensor self) -> Tensor[]");
  m.def("declared_not_differentiable(Tensor self) -> Tensor");
}
ANATOMY_LIBRARY_IMPL(test_fallback, CPU, m) {
  m.impl("scale", ANATOMY_KERNEL(scale_cpu));
  m.impl("scale_again", ANATOMY_KERNEL(scale_again_cpu));
  m.impl("scale_", ANATOMY_KERNEL(scale_inplace_cpu));
  m.impl("count_positive", ANATOMY_KERNEL(count_positive_cpu));
  m.impl("halves", ANATOMY_KERNEL(halves_cpu));
  m.impl("declared_not_differentiable", ANATOMY_KERNEL(not_differentiable_cpu));
}
ANATOMY_LIBRARY_IMPL(test_fallback, Meta, m) { m.impl("scale", ANATOMY_KERNEL(scale_meta)); }
// The way to say "not differentiable": a fallthrough at the Autograd key.
ANATOMY_LIBRARY_IMPL(test_fallback, Autograd, m) { m.impl_fallthrough("declared_not_differentiable"); }

Tensor call(const char* op, const Tensor& self, double factor) {
  return dispatch::Dispatcher::singleton().find_or_throw(op).typed<Tensor(const Tensor&, double)>().call(self, factor);
}
Tensor call1(const char* op, const Tensor& self) {
  return dispatch::Dispatcher::singleton().find_or_throw(op).typed<Tensor(const Tensor&)>().call(self);
}

// Collects autograd's warnings for the scope.
class CaptureWarnings {
 public:
  CaptureWarnings()
      : previous_(autograd::set_warning_handler([this](const std::string& m) { messages_.push_back(m); })) {}
  CaptureWarnings(const CaptureWarnings&) = delete;
  CaptureWarnings& operator=(const CaptureWarnings&) = delete;
  ~CaptureWarnings() { autograd::set_warning_handler(previous_); }
  const std::vector<std::string>& messages() const { return messages_; }

 private:
  std::vector<std::string> messages_;
  autograd::WarningHandler previous_;
};

std::string table(const char* op, DispatchKey k) {
  return dispatch::Dispatcher::singleton().find_or_throw(op).entry().kernel_name(k);
}

TEST_CASE("autograd fallback: an operator with only a CPU kernel gets a node that raises in backward") {
  CaptureWarnings warnings;
  Tensor x = randn({3}).requires_grad_();
  Tensor y = call("test_fallback::scale", x, 2.0);
  CHECK(y.allclose(x.detach() * 2.0));  // the forward runs as before
  REQUIRE(y.grad_fn() != nullptr);
  CHECK(y.grad_fn()->name() == "NotImplemented(test_fallback::scale)");
  CHECK(y.requires_grad());
  REQUIRE(warnings.messages().size() == 1);
  CHECK(warnings.messages()[0].find("test_fallback::scale: an input requires grad, but the operator has no autograd "
                                    "kernel") == 0);
  CHECK(warnings.messages()[0].find("ANATOMY_LIBRARY_IMPL(test_fallback, Autograd, m)") != std::string::npos);
  call("test_fallback::scale", x, 3.0);
  CHECK(warnings.messages().size() == 1);  // once per operator

  CHECK_THROWS_WITH_AS(y.sum().backward(),
                       doctest::Contains("test_fallback::scale: backward reached an operator that has no autograd "
                                         "kernel"),
                       NotImplementedError);
  CHECK_FALSE(x.grad().defined());
  // Through another operator, and into the inputs' history (the edges are real).
  Tensor h = x * 1.0;
  Tensor z = call("test_fallback::scale", h, 2.0).exp();
  CHECK(z.grad_fn()->next_edges()[0].function->name() == "NotImplemented(test_fallback::scale)");
  CHECK(z.grad_fn()->next_edges()[0].function->next_edges()[0].function->name() == "MulBackward0");
  CHECK_THROWS_AS(z.sum().backward(), NotImplementedError);
}

TEST_CASE("autograd fallback: a gradient that never reaches the node is not an error") {
  Tensor x = randn({3}).requires_grad_();
  Tensor unused = call("test_fallback::scale", x, 2.0);  // evaluated, never differentiated
  (x * 3.0).sum().backward();
  CHECK(x.grad().allclose(full({3}, 3.0)));
  // grad() of another path, while the node exists.
  CHECK(autograd::grad({(x * x).sum()}, {x})[0].allclose(x.detach() * 2.0));
}

TEST_CASE("autograd fallback: nothing records or warns without grad mode or an input that requires grad") {
  CaptureWarnings warnings;
  Tensor x = randn({3}).requires_grad_();
  {
    autograd::NoGradGuard no_grad;
    CHECK(call("test_fallback::scale_again", x, 2.0).grad_fn() == nullptr);
  }
  Tensor plain = randn({3});
  Tensor y = call("test_fallback::scale_again", plain, 2.0);
  CHECK(y.grad_fn() == nullptr);
  CHECK_FALSE(y.requires_grad());
  CHECK(y.allclose(plain * 2.0));
  CHECK(warnings.messages().empty());
  // Integer outputs need no node, and get no warning.
  Tensor n = call1("test_fallback::count_positive", x);
  CHECK(n.grad_fn() == nullptr);
  CHECK(warnings.messages().empty());
  // A fallthrough at the Autograd key declares an operator not differentiable.
  Tensor f = call1("test_fallback::declared_not_differentiable", x);
  CHECK(f.grad_fn() == nullptr);
  CHECK(warnings.messages().empty());
  CHECK(table("test_fallback::declared_not_differentiable", DispatchKey::AutogradCPU) == "fallthrough [Autograd]");
  CHECK(table("test_fallback::scale", DispatchKey::AutogradCPU) == "autograd_fallback [fallback]");
}

TEST_CASE("autograd fallback: several outputs, an in-place operator, a Meta call") {
  CaptureWarnings warnings;
  Tensor x = randn({4}).requires_grad_();
  auto parts = dispatch::Dispatcher::singleton()
                   .find_or_throw("test_fallback::halves")
                   .typed<std::vector<Tensor>(const Tensor&)>()
                   .call(x);
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].grad_fn() == parts[1].grad_fn());
  CHECK(parts[1].grad_fn()->name() == "NotImplemented(test_fallback::halves)");
  CHECK_THROWS_AS(parts[1].sum().backward(), NotImplementedError);

  // In place on a tensor with history: the history is replaced (the old one would be wrong).
  Tensor a = x * 1.0;
  call("test_fallback::scale_", a, 2.0);
  CHECK(a.grad_fn()->name() == "NotImplemented(test_fallback::scale_)");
  CHECK_THROWS_AS(a.sum().backward(), NotImplementedError);
  // In place on a leaf that requires grad: the built-ins' error, before anything changes.
  const Tensor before = x.detach().clone();
  CHECK_THROWS_WITH_AS(call("test_fallback::scale_", x, 2.0),
                       doctest::Contains("scale_: a leaf tensor that requires grad is being used in an "
                                         "in-place operation"),
                       ValueError);
  CHECK(x.detach().equal(before));

  Tensor m = empty({2}, TensorOptions().device(Device("meta"))).requires_grad_();
  Tensor my = call("test_fallback::scale", m, 2.0);
  CHECK(my.grad_fn()->name() == "NotImplemented(test_fallback::scale)");
}

TEST_CASE("autograd fallback: the built-ins that are not differentiable keep working, without a node or a warning") {
  CaptureWarnings warnings;
  Tensor x = randn({2, 3}).requires_grad_();
  Tensor y = randn({2, 3}).requires_grad_();
  for (const Tensor& r : {x.eq(y), x.lt(y), x.argmax(), x.isnan(), x.any(), x.logical_not(), zeros_like(x),
                          ones_like(x), empty_like(x), full_like(x, 2.0), rand_like(x), randn_like(x)}) {
    CHECK(r.grad_fn() == nullptr);
    CHECK_FALSE(r.requires_grad());
  }
  CHECK(warnings.messages().empty());
  // In place into a floating tensor: its old history goes, and no gradient flows back.
  Tensor h = x * 1.0;
  h.eq_(y);
  CHECK(h.grad_fn()->name() == "EqBackward1");
  (h + x).sum().backward();
  CHECK(x.grad().allclose(ones({2, 3})));  // only the direct path
  CHECK_FALSE(y.grad().defined());
  CHECK(warnings.messages().empty());
  // The fused backward operators are not differentiable themselves: called on tensors that
  // require grad, they raise at the call.
  Tensor s = x.detach().softmax(1);
  CHECK_THROWS_WITH_AS(_softmax_backward_data(y, s, 1, DType::Float32),
                       doctest::Contains("_softmax_backward_data: the derivative is not implemented"),
                       NotImplementedError);
}

}  // namespace
