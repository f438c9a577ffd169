// One case, run and judged (runner.h).
#include "runner.h"

#include <cxxabi.h>
#include <fmt/format.h>

#include <cstdlib>
#include <memory>
#include <typeinfo>
#include <unordered_map>

#include "checks.h"
#include "fixtures.h"

namespace anatomy_fuzz {
namespace {

using anatomy::Tensor;

bool shares_storage(const Tensor& a, const Tensor& b) { return a.storage().get() == b.storage().get(); }

// The gradient a sum over views must give each element of `root`: how many times the results
// read it. Empty when the oracle does not apply (root's elements overlap, or too many).
std::vector<double> view_gradient(const Tensor& root, const std::vector<Tensor>& results) {
  if (root.numel() > kReadLimit) return {};
  std::vector<int64_t> root_pos = positions(root);
  std::unordered_map<int64_t, double> reads;
  for (int64_t p : root_pos) {
    if (reads.count(p)) return {};  // an expanded root: one element stands for several
    reads[p] = 0;
  }
  for (const Tensor& r : results) {
    if (r.numel() > kReadLimit) return {};
    for (int64_t p : positions(r)) {
      if (auto it = reads.find(p); it != reads.end()) it->second += 1;
    }
  }
  std::vector<double> expected;
  for (int64_t p : root_pos) expected.push_back(reads[p]);
  return expected;
}

}  // namespace

std::string current_exception_type() {
  const std::type_info* type = abi::__cxa_current_exception_type();
  if (!type) return "an unknown type";
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(type->name(), nullptr, nullptr, &status), std::free);
  return status == 0 && name ? name.get() : type->name();
}

CaseRun::CaseRun() { anatomy::manual_seed(0); }

Outcome CaseRun::finding(std::string kind, std::string what) const {
  Outcome o;
  o.status = Outcome::Status::Finding;
  o.kind = std::move(kind);
  o.what = std::move(what);
  o.call = calls_ == 0 ? 0 : calls_ - 1;
  return o;
}

Outcome CaseRun::step(const Call& call) {
  const OpDef& op = *call.op;
  const size_t index = calls_++;
  std::vector<Tensor> tensors(call.args.size());
  std::vector<std::vector<Tensor>> lists(call.args.size());
  std::vector<Tensor> inputs;  // every tensor input; inputs[0] is self when the signature starts with T
  try {
    for (size_t k = 0; k < call.args.size(); ++k) {
      const Arg& arg = call.args[k];
      auto make = [&](const TensorSpec& spec) {
        Tensor t = materialize(spec);
        if (spec.requires_grad) leaves_.push_back(t);
        inputs.push_back(t);
        return t;
      };
      if (std::holds_alternative<Chained>(arg)) {
        if (!has_last()) throw BadCase{"a chained call without a previous result"};
        tensors[k] = last();
        inputs.push_back(tensors[k]);
      } else if (const auto* spec = std::get_if<TensorSpec>(&arg)) {
        tensors[k] = make(*spec);
        if (index == 0 && k == 0) root_ = tensors[k];
      } else if (const auto* list = std::get_if<TensorList>(&arg)) {
        for (const auto& entry : *list) lists[k].push_back(entry ? make(*entry) : Tensor());
      }
    }
  } catch (const BadCase&) {
    throw;
  } catch (const anatomy::Error& e) {
    throw BadCase{fmt::format("the engine refuses an input: {}", e.what())};
  } catch (const std::exception& e) {
    return finding("fixture", fmt::format("making an input threw {}: {}", current_exception_type(), e.what()));
  }
  std::vector<Snapshot> before;
  bool input_requires_grad = false;
  for (const Tensor& t : inputs) {
    before.push_back(snapshot(t));
    input_requires_grad = input_requires_grad || t.requires_grad();
  }
  const bool has_self = op.sig[0] == 'T';

  std::vector<Tensor> results;
  try {
    results = op.run(Bound(call, tensors, lists));
  } catch (const anatomy::InternalError& e) {
    return finding("internal error", fmt::format("InternalError: {}", e.what()));
  } catch (const anatomy::Error& e) {
    for (size_t k = 0; k < inputs.size(); ++k) {
      if (std::string c = changes(inputs[k], before[k], false); !c.empty()) {
        return finding("input changed by a failed call",
                       fmt::format("input {}: {} (the call threw: {})", k, c, e.what()));
      }
    }
    Outcome o;
    o.status = Outcome::Status::Error;
    o.what = e.what();
    o.call = index;
    return o;
  } catch (const std::exception& e) {
    return finding("exception type",
                   fmt::format("threw {}, not an anatomy::Error: {}", current_exception_type(), e.what()));
  } catch (...) {
    return finding("exception type", fmt::format("threw {}, not an anatomy::Error", current_exception_type()));
  }

  for (size_t r = 0; r < results.size(); ++r) {
    if (std::string m = check_metadata(results[r]); !m.empty())
      return finding("metadata", fmt::format("result {}: {}", r, m));
  }
  for (size_t k = 0; k < inputs.size(); ++k) {
    const bool writable = op.kind == Kind::InPlace && has_self && k == 0;
    if (std::string c = changes(inputs[k], before[k], writable); !c.empty()) {
      return finding("input changed", fmt::format("input {}: {} by a call that must not write it", k, c));
    }
  }
  if (op.kind == Kind::InPlace && has_self && inputs[0].numel() <= kReadLimit) {
    if (std::string c = changes_outside(inputs[0], before[0]); !c.empty()) return finding("input changed", c);
  }
  for (size_t r = 0; r < results.size(); ++r) {
    const Tensor& out = results[r];
    if ((op.kind == Kind::View || op.kind == Kind::InPlace) && !shares_storage(out, inputs[0])) {
      return finding("aliasing", fmt::format("result {} does not share self's storage", r));
    }
    if (op.kind == Kind::InPlace && out.sizes() != inputs[0].sizes()) {
      return finding("aliasing", "an in-place call returned a tensor of another shape than self");
    }
    for (size_t k = 0; op.kind == Kind::Fresh && k < inputs.size(); ++k) {
      if (inputs[k].defined() && shares_storage(out, inputs[k])) {
        return finding(
            "aliasing",
            fmt::format("result {} shares input {}'s storage (a later write to one changes the other)", r, k));
      }
    }
  }
  for (size_t r = 0; r < results.size() && !op.uninitialized; ++r) {
    if (std::string m = check_readable(results[r]); !m.empty())
      return finding("read", fmt::format("result {}: {}", r, m));
  }
  if (op.differentiable && input_requires_grad) {
    for (size_t r = 0; r < results.size(); ++r) {
      if (results[r].is_floating_point() && !results[r].requires_grad()) {
        return finding("autograd", fmt::format("result {} does not require grad although an input does", r));
      }
    }
  }
  last_ = std::move(results);
  if (op.uninitialized) last_.clear();  // nothing may read them
  views_only_ = views_only_ && op.kind == Kind::View && (index == 0 || std::string_view(op.name) != "as_strided");
  wrote_ = wrote_ || op.kind == Kind::InPlace;
  Outcome ok;
  ok.call = index;
  return ok;
}

Outcome CaseRun::finish() {
  Outcome ok;
  ok.call = calls_ == 0 ? 0 : calls_ - 1;
  if (leaves_.empty()) return ok;
  Tensor loss;
  for (const Tensor& r : last_) {
    if (!r.defined() || !r.is_floating_point() || !r.requires_grad()) continue;
    if (r.numel() > kReadLimit) return ok;  // a sum over 2^62 broadcast elements would not end
    loss = loss.defined() ? loss + r.sum() : r.sum();
  }
  if (!loss.defined()) return ok;
  try {
    loss.backward();
  } catch (const anatomy::NotImplementedError&) {
    return ok;  // a derivative the engine says it lacks: a typed error, tracked as a feature gap
  } catch (const anatomy::OutOfMemoryError&) {
    // A gradient of an expanded input has the expanded shape: a forward of a few bytes can need
    // terabytes in backward (PyTorch's too). Refusing it with a typed error is right.
    return ok;
  } catch (const anatomy::Error& e) {
    // After an in-place write, backward rightly refuses a saved tensor that was modified.
    if (wrote_ && !dynamic_cast<const anatomy::InternalError*>(&e)) return ok;
    return finding("autograd",
                   fmt::format("backward of the sum of the results threw {}: {}", current_exception_type(), e.what()));
  } catch (const std::exception& e) {
    return finding("autograd",
                   fmt::format("backward of the sum of the results threw {}: {}", current_exception_type(), e.what()));
  }
  for (size_t k = 0; k < leaves_.size(); ++k) {
    const Tensor& leaf = leaves_[k];
    Tensor g = leaf.grad();
    if (!g.defined()) continue;
    if (g.sizes() != leaf.sizes() || g.dtype() != leaf.dtype() || g.device() != leaf.device()) {
      return finding("autograd", fmt::format("the gradient of leaf {} is {}[{}], the leaf {}[{}]", k,
                                             anatomy::name(g.dtype()), fmt::join(g.sizes(), ", "),
                                             anatomy::name(leaf.dtype()), fmt::join(leaf.sizes(), ", ")));
    }
    if (std::string m = check_metadata(g); !m.empty()) return finding("autograd", "a gradient's metadata: " + m);
  }
  if (views_only_ && root_.defined() && root_.requires_grad()) {
    std::vector<double> expected = view_gradient(root_, last_);
    Tensor g = root_.grad();
    const std::vector<int64_t> at = g.defined() ? positions(g) : std::vector<int64_t>();
    for (size_t j = 0; j < expected.size(); ++j) {
      const double got = g.defined() ? read_element(g, at[j]) : 0.0;
      if (got != expected[j]) {
        return finding("autograd", fmt::format("the gradient of self at element {} is {}; the views read it {} times",
                                               j, g.defined() ? fmt::format("{}", got) : "undefined", expected[j]));
      }
    }
  }
  return ok;
}

Outcome run_case(const Case& c) {
  CaseRun run;
  Outcome o;
  for (const Call& call : c.calls) {
    o = run.step(call);
    if (o.status != Outcome::Status::Ok) break;
  }
  if (o.status == Outcome::Status::Ok) o = run.finish();
  if (c.expect == Case::Expect::Error && o.status == Outcome::Status::Ok) {
    o.status = Outcome::Status::Finding;
    o.kind = "expectation";
    o.what = "expected a typed error, but the case succeeded";
  } else if (c.expect == Case::Expect::Ok && o.status == Outcome::Status::Error) {
    o.status = Outcome::Status::Finding;
    o.kind = "expectation";
    o.what = "expected success, but it threw: " + o.what;
  }
  return o;
}

}  // namespace anatomy_fuzz
