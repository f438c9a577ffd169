// Every operator that takes a tensor either records autograd history or is declared not
// differentiable (autograd/not_differentiable.cpp, a fallthrough at its Autograd key, with why):
// one that reached the autograd fallback would record a NotImplemented node, and a built-in
// never should (Note [Autograd fallback] in autograd/autograd_fallback.h). A new operator
// without a derivative fails this test until it gets one or a declaration.
#include <doctest/doctest.h>

#include <string>

#include "anatomy/anatomy.h"
#include "anatomy/dispatch/operator_entry.h"

using namespace anatomy;

namespace {

bool takes_tensor(const dispatch::Schema& s) {
  for (const dispatch::Argument& a : s.arguments) {
    if (a.type == dispatch::ArgType::Tensor || a.type == dispatch::ArgType::OptionalTensor ||
        a.type == dispatch::ArgType::TensorList) {
      return true;
    }
  }
  return false;
}

}  // namespace

TEST_CASE("every aten operator that takes tensors records autograd history or is declared not differentiable") {
  std::vector<std::string> undeclared;
  for (const std::string& name : dispatch::list_ops()) {
    if (name.rfind("aten::", 0) != 0) continue;  // other tests' operators
    const dispatch::OperatorEntry& e = dispatch::Dispatcher::singleton().find_or_throw(name).entry();
    if (!e.has_schema() || !takes_tensor(e.schema())) continue;
    // The table says what a CPU call meets at its autograd key: an autograd kernel, a
    // composite differentiated through, a declared fallthrough, or the fallback.
    if (e.kernel_name(DispatchKey::AutogradCPU) == "autograd_fallback [fallback]") undeclared.push_back(name);
  }
  CHECK_MESSAGE(undeclared.empty(), "no derivative and not declared in autograd/not_differentiable.cpp: ",
                fmt::format("{}", fmt::join(undeclared, ", ")));
  // The declarations are fallthroughs at the Autograd key.
  const dispatch::OperatorEntry& eq = dispatch::Dispatcher::singleton().find_or_throw("aten::eq.Tensor").entry();
  CHECK(eq.kernel_name(DispatchKey::AutogradCPU) == "fallthrough [Autograd]");
  CHECK_FALSE(eq.non_fallthrough().has(DispatchKey::AutogradCUDA));
}

TEST_CASE("the random fills overwrite a tensor's history: the old values get a zero gradient") {
  for (int which = 0; which < 3; ++which) {
    INFO("fill ", which);
    Tensor x = ones({4}, TensorOptions().dtype(DType::Float64)).requires_grad_();
    Tensor y = x * 2;
    if (which == 0) y.uniform_(0, 1);
    if (which == 1) y.normal_(0, 1);
    if (which == 2) random_(y, 0, 5);
    (y + x).sum().backward();
    CHECK(x.grad().sum().item<double>() == 4);  // only the `+ x` term
  }
}
