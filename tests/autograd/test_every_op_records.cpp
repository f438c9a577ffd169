// Every operator either records autograd history or is declared here as having no derivative:
// an operator that takes and returns tensors and reaches its backend through the autograd keys'
// fallthrough would silently drop the graph of an input that requires grad (unfold did). A new
// operator without a derivative fails this test until it gets one or joins the list, with why.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "anatomy/anatomy.h"
#include "anatomy/dispatch/operator_entry.h"

using namespace anatomy;

namespace {

constexpr const char* kBoolOrInt = "results are bool or integer: nothing to differentiate";
constexpr const char* kLike = "a factory: reads only the input's shape, dtype and device";
constexpr const char* kFused =
    "a backward's fused kernel, called by its formula only when no graph is recorded; with create_graph the "
    "formula uses differentiable operators (Note [Fused backward unless create_graph], autograd/derivatives_nn.cpp)";

// Operators whose results carry no gradient, with why.
const std::map<std::string, std::string> kNoDerivative = {
    {"aten::all", kBoolOrInt},
    {"aten::all.dims", kBoolOrInt},
    {"aten::any", kBoolOrInt},
    {"aten::any.dims", kBoolOrInt},
    {"aten::argmax", kBoolOrInt},
    {"aten::argmin", kBoolOrInt},
    {"aten::count_nonzero.dim_IntList", kBoolOrInt},
    {"aten::nonzero", kBoolOrInt},
    {"aten::one_hot", kBoolOrInt},
    {"aten::isfinite", kBoolOrInt},
    {"aten::isinf", kBoolOrInt},
    {"aten::isnan", kBoolOrInt},
    {"aten::eq.Tensor", kBoolOrInt},
    {"aten::eq.Tensor_out", kBoolOrInt},
    {"aten::eq_.Tensor", kBoolOrInt},
    {"aten::ne.Tensor", kBoolOrInt},
    {"aten::ne.Tensor_out", kBoolOrInt},
    {"aten::ne_.Tensor", kBoolOrInt},
    {"aten::lt.Tensor", kBoolOrInt},
    {"aten::lt.Tensor_out", kBoolOrInt},
    {"aten::lt_.Tensor", kBoolOrInt},
    {"aten::le.Tensor", kBoolOrInt},
    {"aten::le.Tensor_out", kBoolOrInt},
    {"aten::le_.Tensor", kBoolOrInt},
    {"aten::gt.Tensor", kBoolOrInt},
    {"aten::gt.Tensor_out", kBoolOrInt},
    {"aten::gt_.Tensor", kBoolOrInt},
    {"aten::ge.Tensor", kBoolOrInt},
    {"aten::ge.Tensor_out", kBoolOrInt},
    {"aten::ge_.Tensor", kBoolOrInt},
    {"aten::logical_and", kBoolOrInt},
    {"aten::logical_and.out", kBoolOrInt},
    {"aten::logical_and_", kBoolOrInt},
    {"aten::logical_or", kBoolOrInt},
    {"aten::logical_or.out", kBoolOrInt},
    {"aten::logical_or_", kBoolOrInt},
    {"aten::logical_xor", kBoolOrInt},
    {"aten::logical_xor.out", kBoolOrInt},
    {"aten::logical_xor_", kBoolOrInt},
    {"aten::logical_not", kBoolOrInt},
    {"aten::logical_not.out", kBoolOrInt},
    {"aten::logical_not_", kBoolOrInt},
    {"aten::bitwise_and.Tensor", kBoolOrInt},
    {"aten::bitwise_and.Tensor_out", kBoolOrInt},
    {"aten::bitwise_and_.Tensor", kBoolOrInt},
    {"aten::bitwise_or.Tensor", kBoolOrInt},
    {"aten::bitwise_or.Tensor_out", kBoolOrInt},
    {"aten::bitwise_or_.Tensor", kBoolOrInt},
    {"aten::bitwise_xor.Tensor", kBoolOrInt},
    {"aten::bitwise_xor.Tensor_out", kBoolOrInt},
    {"aten::bitwise_xor_.Tensor", kBoolOrInt},
    {"aten::bitwise_not", kBoolOrInt},
    {"aten::bitwise_not.out", kBoolOrInt},
    {"aten::bitwise_not_", kBoolOrInt},
    {"aten::bitwise_left_shift.Tensor", kBoolOrInt},
    {"aten::bitwise_left_shift.Tensor_out", kBoolOrInt},
    {"aten::bitwise_left_shift_.Tensor", kBoolOrInt},
    {"aten::bitwise_right_shift.Tensor", kBoolOrInt},
    {"aten::bitwise_right_shift.Tensor_out", kBoolOrInt},
    {"aten::bitwise_right_shift_.Tensor", kBoolOrInt},
    {"aten::empty_like", kLike},
    {"aten::full_like", kLike},
    {"aten::ones_like", kLike},
    {"aten::zeros_like", kLike},
    {"aten::rand_like", kLike},
    {"aten::randn_like", kLike},
    {"aten::_softmax_backward_data", kFused},
    {"aten::_log_softmax_backward_data", kFused},
    {"aten::native_layer_norm_backward", kFused},
    {"aten::_rms_norm_backward", kFused},
};

bool takes_tensor(const dispatch::Schema& s) {
  for (const dispatch::Argument& a : s.arguments) {
    if (a.type == dispatch::ArgType::Tensor || a.type == dispatch::ArgType::OptionalTensor ||
        a.type == dispatch::ArgType::TensorList) {
      return true;
    }
  }
  return false;
}

bool returns_tensor(const dispatch::Schema& s) {
  for (const dispatch::Return& r : s.returns) {
    if (r.type == dispatch::ArgType::Tensor || r.type == dispatch::ArgType::TensorList) return true;
  }
  return false;
}

// Whether a call at AutogradCPU records: an autograd kernel of its own, or a composite that
// autograd differentiates through.
bool records(const dispatch::OperatorEntry& e) {
  using dispatch::RegKey;
  return e.registered(RegKey::Autograd) || e.registered(RegKey::AutogradCPU) ||
         e.registered(RegKey::CompositeImplicitAutograd);
}

}  // namespace

TEST_CASE("every aten operator that takes and returns tensors records autograd history or says why not") {
  std::vector<std::string> silent, stale;
  for (const std::string& name : dispatch::list_ops()) {
    if (name.rfind("aten::", 0) != 0) continue;  // other tests' operators
    const dispatch::OperatorEntry& e = dispatch::Dispatcher::singleton().find_or_throw(name).entry();
    if (!e.has_schema() || !takes_tensor(e.schema()) || !returns_tensor(e.schema())) continue;
    const bool listed = kNoDerivative.count(name) > 0;
    if (!records(e) && !listed) silent.push_back(name);
    if (records(e) && listed) stale.push_back(name);
  }
  CHECK_MESSAGE(silent.empty(), "no derivative and not listed: ", fmt::format("{}", fmt::join(silent, ", ")));
  CHECK_MESSAGE(stale.empty(), "listed but records: ", fmt::format("{}", fmt::join(stale, ", ")));
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
