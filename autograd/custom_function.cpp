// Custom autograd functions (see custom_function.h): the context, the node, and the wrapping
// of a call's outputs (Note [Custom function outputs]).
#include "anatomy/autograd/custom_function.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "anatomy/autograd/accumulate_grad.h"
#include "anatomy/autograd/anomaly_mode.h"
#include "anatomy/autograd/autograd_meta.h"
#include "anatomy/autograd/copy_slices.h"
#include "anatomy/autograd/validate_gradient.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy::autograd {
namespace {

bool contains(const variable_list& list, const Tensor& t) {
  return std::any_of(list.begin(), list.end(), [&](const Tensor& x) { return x.impl() == t.impl(); });
}

OutputInfo info_of(const Tensor& t) { return {DimVector(t.sizes()), t.dtype(), t.device()}; }

// A function's name as a string that lives as long as the program, for the ViewInfo of its
// outputs that alias inputs (its creator outlives the node). One entry per function class.
const char* interned_name(const std::string& name) {
  static std::mutex mutex;
  static std::set<std::string> names;  // a set's elements never move
  std::lock_guard<std::mutex> lock(mutex);
  return names.insert(name).first->c_str();
}

// Makes `node` output `nr`'s history of `t` (a fresh output, or an alias of an input).
void set_history(const Tensor& t, const IntrusivePtr<CustomFunctionNode>& node, uint32_t nr) {
  AutogradMeta& m = meta_of(t);
  if (m.retains_grad_ && m.grad_fn_) m.grad_fn_->remove_retained(&m);
  m.grad_fn_ = IntrusivePtr<Node>(node.get());
  m.output_nr_ = nr;
  if (m.retains_grad_) node->add_retained(nr, &m);
}

}  // namespace

std::string detail::demangled_class_name(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> raw(abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), &std::free);
  std::string full = status == 0 && raw ? std::string(raw.get()) : std::string(type.name());
  // The last "::" outside template arguments starts the class name.
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i + 1 < full.size(); ++i) {
    if (full[i] == '<' || full[i] == '(') ++depth;
    if (full[i] == '>' || full[i] == ')') --depth;
    if (depth == 0 && full[i] == ':' && full[i + 1] == ':') start = i + 2;
  }
  return full.substr(start);
}

// ---- the context ----

void AutogradContext::save_for_backward(variable_list to_save) {
  ANATOMY_CHECK(!saved_ready_, ValueError, "{}: save_for_backward is called in forward, not after it", name_);
  ANATOMY_CHECK(!save_called_, ValueError,
                "{}: save_for_backward was called twice; pass every tensor backward needs in one call", name_);
  save_called_ = true;
  if (node_ == nullptr) return;  // nothing records: nothing will read them (inference tensors are fine)
  for (const Tensor& t : to_save) check_saveable(t, name_);
  to_save_ = std::move(to_save);
}

variable_list AutogradContext::get_saved_variables() const {
  ANATOMY_CHECK(saved_ready_, ValueError,
                "{}: get_saved_variables is for backward; in forward, use the tensors themselves", name_);
  variable_list out;
  out.reserve(saved_.size());
  for (const SavedTensor& s : saved_) out.push_back(s.unpack(node_));
  return out;
}

void AutogradContext::mark_dirty(const variable_list& inputs) {
  ANATOMY_CHECK(!saved_ready_, ValueError, "{}: mark_dirty is called in forward", name_);
  dirty_.insert(dirty_.end(), inputs.begin(), inputs.end());
}

void AutogradContext::mark_non_differentiable(const variable_list& outputs) {
  ANATOMY_CHECK(!saved_ready_, ValueError, "{}: mark_non_differentiable is called in forward", name_);
  non_differentiable_.insert(non_differentiable_.end(), outputs.begin(), outputs.end());
}

bool AutogradContext::needs_input_grad(size_t index) const {
  ANATOMY_CHECK(index < needs_input_grad_.size(), IndexError,
                "{}: needs_input_grad({}) is out of range: forward has {} input positions", name_, index,
                needs_input_grad_.size());
  return needs_input_grad_[index];
}

// ---- the node ----

CustomFunctionNode::CustomFunctionNode(std::string name, BackwardFn backward, std::vector<Edge> edges,
                                       std::vector<int> slot_of_position, std::vector<OutputInfo> input_infos)
    : Node(std::move(edges)),
      name_(std::move(name)),
      backward_(backward),
      slot_of_position_(std::move(slot_of_position)),
      input_infos_(std::move(input_infos)) {
  ctx_.name_ = name_;
  ctx_.node_ = this;
}

variable_list CustomFunctionNode::apply(variable_list&& grads) {
  if (ctx_.materialize_grads_) {
    for (size_t j = 0; j < grads.size() && j < outputs().size(); ++j) {
      if (grads[j].defined()) continue;
      const OutputInfo& info = outputs()[j];
      grads[j] = zeros(info.sizes, TensorOptions().dtype(info.dtype).device(info.device));
    }
  }
  variable_list result;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    result = backward_(&ctx_, std::move(grads));
  }
  const size_t positions = slot_of_position_.size();
  // Extra trailing undefined gradients are allowed (as in libtorch): they say nothing.
  if (result.size() > positions && std::none_of(result.begin() + static_cast<std::ptrdiff_t>(positions), result.end(),
                                                [](const Tensor& g) { return g.defined(); })) {
    result.resize(positions);
  }
  ANATOMY_CHECK(result.size() == positions, ValueError,
                "{}: backward returned {} gradients, but forward has {} input positions (return one per position, "
                "an undefined Tensor where there is none)",
                name_, result.size(), positions);
  variable_list out(next_edges().size());
  for (size_t i = 0; i < positions; ++i) {
    const int slot = slot_of_position_[i];
    if (slot < 0) {
      ANATOMY_CHECK(!result[i].defined(), ValueError,
                    "{}: backward returned a gradient at index {}, but forward's input {} is not a tensor", name_, i,
                    i);
      continue;
    }
    if (!result[i].defined() || !next_edges()[slot].is_valid()) continue;
    const OutputInfo& want = input_infos_[i];
    out[slot] = fits(result[i], want) ? std::move(result[i]) : validated_gradient(std::move(result[i]), want, name_, i);
  }
  return out;
}

void CustomFunctionNode::release_saved() {
  for (SavedTensor& s : ctx_.saved_) s.release();
}

std::vector<std::string> CustomFunctionNode::saved_descriptions() const {
  std::vector<std::string> lines;
  for (size_t i = 0; i < ctx_.saved_.size(); ++i)
    lines.push_back(fmt::format("tensor {}: {}", i, ctx_.saved_[i].describe()));
  std::vector<std::string> data;  // sorted by name: the map's order is not fixed
  for (const auto& [key, value] : ctx_.saved_data) data.push_back(fmt::format("data {}: {}", key, value.to_string()));
  std::sort(data.begin(), data.end());
  lines.insert(lines.end(), data.begin(), data.end());
  return lines;
}

// ---- one call ----

detail::FunctionCall::FunctionCall(const std::string& name, CustomFunctionNode::BackwardFn backward,
                                   std::vector<FunctionInput> inputs)
    : inputs_(std::move(inputs)) {
  bool records = false;
  if (GradMode::is_enabled()) {
    for (const FunctionInput& in : inputs_) {
      if (in.is_tensor && in.tensor.defined() && in.tensor.requires_grad()) records = true;
    }
  }
  std::vector<bool> needs(inputs_.size(), false);
  if (records) {
    std::vector<Edge> edges;
    std::vector<int> slots(inputs_.size(), -1);
    std::vector<OutputInfo> infos(inputs_.size());
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const FunctionInput& in = inputs_[i];
      if (!in.is_tensor) continue;
      slots[i] = static_cast<int>(edges.size());
      edges.push_back(in.tensor.defined() ? gradient_edge(in.tensor) : Edge{});
      if (in.tensor.defined()) infos[i] = info_of(in.tensor);
      needs[i] = edges.back().is_valid();
    }
    node_ =
        IntrusivePtr<CustomFunctionNode>::make(name, backward, std::move(edges), std::move(slots), std::move(infos));
    if (AnomalyMode::is_enabled()) node_->set_forward_op(name);
  } else {
    local_ctx_.name_ = name;
  }
  context()->needs_input_grad_ = std::move(needs);
}

variable_list detail::FunctionCall::finish(variable_list outputs) {
  AutogradContext& ctx = *context();
  const std::string& name = ctx.name_;
  const auto is_input = [&](const Tensor& t) {
    return std::any_of(inputs_.begin(), inputs_.end(),
                       [&](const FunctionInput& in) { return in.is_tensor && in.tensor.impl() == t.impl(); });
  };
  // The input whose storage `t` shares (`t` itself, or a view forward made of it), or none.
  const auto aliased_input = [&](const Tensor& t) -> const Tensor* {
    for (const FunctionInput& in : inputs_) {
      if (in.is_tensor && in.tensor.defined() && t.is_alias_of(in.tensor)) return &in.tensor;
    }
    return nullptr;
  };
  // Every check first, so that a refused call changes no tensor's history.
  for (size_t j = 0; j < outputs.size(); ++j) {
    ANATOMY_CHECK(outputs[j].defined(), ValueError, "{}: forward returned an undefined tensor as output {}", name, j);
  }
  for (const Tensor& t : ctx.dirty_) {
    ANATOMY_CHECK(t.defined() && is_input(t), ValueError,
                  "{}: only input tensors may be passed to mark_dirty (a tensor forward made needs no marking)", name);
    ANATOMY_CHECK(contains(outputs, t), ValueError,
                  "{}: a tensor marked dirty in forward was not returned as an output (return every input that "
                  "forward modified in place)",
                  name);
  }
  for (const Tensor& t : ctx.non_differentiable_) {
    ANATOMY_CHECK(t.defined() && contains(outputs, t), ValueError,
                  "{}: mark_non_differentiable takes outputs of forward, and this tensor was not returned", name);
  }
  const auto differentiable = [&](const Tensor& t) {
    return node_ && is_floating(t.dtype()) && !contains(ctx.non_differentiable_, t);
  };
  for (const Tensor& out : outputs) {
    if (!node_ || !differentiable(out) || !contains(ctx.dirty_, out)) continue;
    const AutogradMeta* m = meta_or_null(out);
    if (m && m->view_info_) check_inplace_on_view(*m, name);
    ANATOMY_CHECK(!(m && m->requires_grad_ && !m->grad_fn_), ValueError,
                  "{}: a leaf tensor that requires grad is being used in an in-place operation (marked dirty)", name);
  }

  // A differentiable output kept in saved_data would own the node that is its own grad_fn.
  const auto holds_output = [&](const dispatch::IValue& value) {
    const auto is_output = [&](const Tensor& t) { return differentiable(t) && contains(outputs, t); };
    if (value.is<Tensor>()) return is_output(value.get<Tensor>());
    if (value.is<std::vector<Tensor>>()) {
      const auto& ts = value.get<std::vector<Tensor>>();
      return std::any_of(ts.begin(), ts.end(), is_output);
    }
    return false;
  };
  for (const auto& [key, value] : ctx.saved_data) {
    ANATOMY_CHECK(!holds_output(value), ValueError,
                  "{}: saved_data[\"{}\"] holds an output of the function; save it with save_for_backward (a "
                  "node that owns its own output is never freed)",
                  name, key);
  }

  std::vector<const TensorImpl*> wrapped;  // outputs already given a history (one returned twice)
  for (size_t j = 0; j < outputs.size(); ++j) {
    Tensor& out = outputs[j];
    if (node_) node_->add_output(out);
    const bool dirty = contains(ctx.dirty_, out);
    const bool seen = std::find(wrapped.begin(), wrapped.end(), out.impl()) != wrapped.end();
    if (!differentiable(out)) {
      // Returned inputs come back as aliases, so that the input keeps its own requires_grad;
      // an output that requires grad (a tensor from outside) comes back detached.
      if ((is_input(out) && !dirty) || out.requires_grad()) out = detach(out);
      continue;
    }
    if (dirty && !seen) {
      set_history(out, node_, static_cast<uint32_t>(j));
      const AutogradMeta* m = meta_or_null(out);
      if (m && m->view_info_) rebase_view_history(out, IntrusivePtr<Node>(node_.get()));
    } else {
      // An input returned as is, an output returned twice, and a view made in forward become
      // new aliases with the node as history (Note [Custom function outputs]).
      const AutogradMeta* m = meta_or_null(out);
      if (is_input(out) || seen || (m && (m->view_info_ || m->grad_fn_ || m->requires_grad_))) out = detach(out);
      set_history(out, node_, static_cast<uint32_t>(j));
      if (const Tensor* input = aliased_input(out)) {
        track_custom_function_view(interned_name(name), *input, out, static_cast<uint32_t>(j));
      }
    }
    wrapped.push_back(out.impl());
  }

  if (node_) {
    // Saved after the outputs have their history, so that a saved output (or a dirty input,
    // now an output) is recognised as one, with the version forward left it at.
    for (const Tensor& t : ctx.to_save_) {
      const AutogradMeta* m = meta_or_null(t);
      const bool is_output = m && m->grad_fn_.get() == node_.get();
      ctx.saved_.emplace_back(t, is_output, is_output ? m->output_nr_ : 0);
    }
  }
  ctx.to_save_.clear();
  ctx.dirty_.clear();
  ctx.non_differentiable_.clear();
  ctx.saved_ready_ = true;
  return outputs;
}

}  // namespace anatomy::autograd
