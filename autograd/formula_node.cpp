// FormulaNode and BackwardContext (see formula_node.h).
#include "anatomy/autograd/formula_node.h"

#include <fmt/format.h>

#include "anatomy/dispatch/ops.h"

namespace anatomy::autograd {

FormulaNode::FormulaNode(const DerivativeEntry& entry, std::vector<Edge> edges, std::vector<SavedArg> args)
    : Node(std::move(edges)), entry_(entry), args_(std::move(args)) {}

variable_list FormulaNode::apply(variable_list&& grads) {
  // Formulas see a gradient for every floating output: zeros where none arrived.
  bool any = false;
  for (const Tensor& g : grads) any = any || g.defined();
  if (!any) return variable_list(next_edges().size());
  std::vector<bool> zero_filled(grads.size(), false);
  for (size_t j = 0; j < grads.size(); ++j) {
    const OutputInfo& info = outputs().at(j);
    if (!grads[j].defined() && is_floating(info.dtype)) {
      grads[j] = zeros(info.sizes, TensorOptions().dtype(info.dtype).device(info.device));
      zero_filled[j] = true;
    }
  }
  BackwardContext ctx(*this, std::move(zero_filled));
  variable_list out = entry_.formula(ctx, grads);
  ANATOMY_INTERNAL_ASSERT(out.size() == next_edges().size(), "a derivative formula returned the wrong count");
  return out;
}

void FormulaNode::release_saved() {
  for (SavedArg& a : args_) {
    for (SavedTensor& t : a.tensors) t.release();
  }
  for (auto& [j, t] : saved_outputs_) t.release();
}

std::vector<std::string> FormulaNode::saved_descriptions() const {
  std::vector<std::string> lines;
  for (size_t i = 0; i < args_.size(); ++i) {
    for (size_t k = 0; k < args_[i].tensors.size(); ++k) {
      lines.push_back(fmt::format("arg {}{}: {}", i, args_[i].tensors.size() > 1 ? fmt::format("[{}]", k) : "",
                                  args_[i].tensors[k].describe()));
    }
  }
  for (const auto& [j, t] : saved_outputs_) lines.push_back(fmt::format("result {}: {}", j, t.describe()));
  return lines;
}

Tensor BackwardContext::input(int arg, int k) const {
  const SavedArg& a = node_.args_.at(arg);
  ANATOMY_INTERNAL_ASSERT(static_cast<size_t>(k) < a.tensors.size(), "a formula read an argument it did not save");
  return a.tensors[k].unpack(&node_);
}

std::vector<Tensor> BackwardContext::input_list(int arg) const {
  std::vector<Tensor> out;
  for (int k = 0; k < list_size(arg); ++k) out.push_back(input(arg, k));
  return out;
}

Tensor BackwardContext::output(int j) const {
  for (const auto& [nr, t] : node_.saved_outputs_) {
    if (nr == j) return t.unpack(&node_);
  }
  ANATOMY_INTERNAL_ASSERT(false, "a formula read an output it did not save");
  return {};
}

bool BackwardContext::needs_grad(int arg, int k) const {
  const SavedArg& a = node_.args_.at(arg);
  if (a.first_slot < 0) return false;
  return node_.next_edges().at(a.first_slot + k).is_valid();
}

void BackwardContext::set(variable_list& out, int arg, Tensor g, int k) const {
  const SavedArg& a = node_.args_.at(arg);
  ANATOMY_INTERNAL_ASSERT(a.first_slot >= 0, "a formula set the gradient of a non-tensor argument");
  if (!node_.next_edges().at(a.first_slot + k).is_valid()) return;
  out.at(a.first_slot + k) = std::move(g);
}

}  // namespace anatomy::autograd
