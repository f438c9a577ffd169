// out= forms of differentiable operators refuse to record (autograd/out_forms.cpp), as PyTorch's
// do, and every such form is covered: the second test pairs each out= schema with its
// functional overload (same arguments without `out`) and requires an autograd kernel on the out=
// form whenever the functional one has a derivative.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "anatomy/anatomy.h"

using namespace anatomy;

namespace {

bool same(const Tensor& a, const Tensor& b) { return (a - b).abs().amax().item<double>() == 0.0; }

}  // namespace

TEST_CASE("out= forms: inputs that require grad raise, others compute, no_grad computes") {
  const Tensor a = randn({3}).requires_grad_(true);
  const Tensor b = randn({3});
  Tensor out = empty({3});
  CHECK_THROWS_AS(add_out(out, a, b), NotImplementedError);
  CHECK_THROWS_AS(exp_out(out, a), NotImplementedError);
  CHECK_THROWS_AS(mm_out(empty({1, 1}), a.view({1, 3}), b.view({3, 1})), NotImplementedError);
  try {
    add_out(out, b, a);
  } catch (const NotImplementedError& e) {
    CHECK(std::string(e.what()).find("add.out") != std::string::npos);
  }
  // Nothing requires grad: the out= form runs (through the refusing kernel).
  add_out(out, b, b);
  CHECK(same(out, b * Scalar(2)));
  {
    autograd::NoGradGuard no_grad;
    add_out(out, a, b);
    CHECK(same(out, a.detach() + b));
  }
  CHECK_FALSE(out.requires_grad());
}

TEST_CASE("out= forms: addcmul and addcdiv refuse under their own names, and compute without grad") {
  const Tensor a = randn({3}).requires_grad_(true);
  const Tensor b = randn({3}), c = randn({3}).abs() + 1;
  Tensor out = empty({3});
  CHECK_THROWS_WITH_AS(addcmul_out(out, b, a, c, 2), doctest::Contains("addcmul.out"), NotImplementedError);
  CHECK_THROWS_WITH_AS(addcdiv_out(out, b, c, a, 2), doctest::Contains("addcdiv.out"), NotImplementedError);
  addcmul_out(out, b, b, c, 2);
  CHECK(same(out, b + b * c * Scalar(2)));
  addcdiv_out(out, b, b, c, 2);
  CHECK(same(out, b + b / c * Scalar(2)));
  {
    autograd::NoGradGuard no_grad;
    addcmul_out(out, a, b, c, 2);
    CHECK(same(out, a.detach() + b * c * Scalar(2)));
  }
}

namespace {

const dispatch::Argument* written_argument(const dispatch::Schema& s) {
  for (size_t i = 1; i < s.arguments.size(); ++i) {
    if (s.arguments[i].alias && s.arguments[i].alias->is_write) return &s.arguments[i];
  }
  return nullptr;
}

std::vector<std::string> argument_names(const dispatch::Schema& s, bool drop_written) {
  std::vector<std::string> names;
  for (const auto& a : s.arguments) {
    if (drop_written && a.alias && a.alias->is_write) continue;
    names.push_back(a.name);
  }
  return names;
}

}  // namespace

TEST_CASE("out= forms: every out= form of a differentiable operator has the refusing kernel") {
  auto& d = dispatch::Dispatcher::singleton();
  std::vector<const dispatch::OperatorEntry*> entries;
  for (const std::string& name : d.list_ops()) {
    if (name.rfind("aten::", 0) != 0) continue;
    const dispatch::OperatorEntry& e = d.find_or_throw(name).entry();
    if (e.has_schema()) entries.push_back(&e);
  }
  int checked = 0;
  for (const dispatch::OperatorEntry* out_form : entries) {
    const dispatch::Schema& o = out_form->schema();
    if (written_argument(o) == nullptr) continue;
    for (const dispatch::OperatorEntry* functional : entries) {
      const dispatch::Schema& f = functional->schema();
      if (f.name != o.name || f.is_inplace_or_out()) continue;
      if (argument_names(f, false) != argument_names(o, true)) continue;
      if (!functional->registered(dispatch::RegKey::Autograd)) continue;
      CAPTURE(o.full_name());
      CHECK(out_form->registered(dispatch::RegKey::Autograd).has_value());
      ++checked;
    }
  }
  CHECK(checked >= 40);
}
