// FormulaNode: the backward node of a built-in operator, driven by its DerivativeEntry
// (autograd/derivative.h): what the forward call saved, and the formula that turns output
// gradients into input gradients.
//
// A node's inputs (the "slots") are the operator's tensor arguments in order, a Tensor[]
// argument giving one slot per element; the formula returns one gradient per slot (undefined
// where the slot needs none).
#pragma once

#include <vector>

#include "anatomy/autograd/node.h"
#include "anatomy/autograd/saved_tensor.h"
#include "anatomy/dispatch/ivalue.h"

namespace anatomy::autograd {

class BackwardContext;
using BackwardFormula = variable_list (*)(BackwardContext& ctx, const variable_list& grads);

struct DerivativeEntry {
  const char* op;         // "aten::add.Tensor"
  const char* node_name;  // PyTorch's name: "AddBackward0"
  uint32_t save_args;     // bit i: keep argument i's tensors (others keep sizes, dtype, device)
  uint32_t save_outputs;  // bit j: keep output j
  BackwardFormula formula;
};
constexpr uint32_t args_mask(std::initializer_list<int> args) {
  uint32_t m = 0;
  for (int a : args) m |= uint32_t{1} << a;
  return m;
}

// One forward argument as the node keeps it.
struct SavedArg {
  dispatch::IValue value;            // non-tensor arguments; None for tensors
  std::vector<SavedTensor> tensors;  // the tensor(s), when the entry keeps them
  std::vector<OutputInfo> infos;     // sizes, dtype, device of each tensor of the argument
  int first_slot = -1;               // the node input of the argument's first tensor, -1 if none
  bool is_tensor = false;
};

class FormulaNode final : public Node {
 public:
  FormulaNode(const DerivativeEntry& entry, std::vector<Edge> edges, std::vector<SavedArg> args);

  std::string name() const override { return entry_.node_name; }
  variable_list apply(variable_list&& grads) override;
  void release_saved() override;
  std::vector<std::string> saved_descriptions() const override;

  void save_output(int j, const Tensor& t) { saved_outputs_.emplace_back(j, SavedTensor(t, true, j)); }

 private:
  friend class BackwardContext;
  const DerivativeEntry& entry_;
  std::vector<SavedArg> args_;
  std::vector<std::pair<int, SavedTensor>> saved_outputs_;
};

// What a formula reads: the saved arguments and outputs of its forward call.
class BackwardContext {
 public:
  explicit BackwardContext(FormulaNode& node, std::vector<bool> zero_filled = {})
      : node_(node), zero_filled_(std::move(zero_filled)) {}

  // The entry the node was made from (its operator and node names).
  const DerivativeEntry& entry() const { return node_.entry_; }
  // The saved tensor of argument `arg` (the entry must keep it); element `k` of a Tensor[].
  Tensor input(int arg, int k = 0) const;
  std::vector<Tensor> input_list(int arg) const;
  // A non-tensor argument (int64_t, double, bool, Scalar, std::vector<int64_t>, ...).
  template <typename T>
  const T& arg(int i) const {
    return node_.args_.at(i).value.get<T>();
  }
  bool is_none(int arg) const { return node_.args_.at(arg).value.is_none() && !node_.args_.at(arg).is_tensor; }
  IntArrayRef input_sizes(int arg, int k = 0) const { return node_.args_.at(arg).infos.at(k).sizes; }
  DType input_dtype(int arg, int k = 0) const { return node_.args_.at(arg).infos.at(k).dtype; }
  Device input_device(int arg, int k = 0) const { return node_.args_.at(arg).infos.at(k).device; }
  int list_size(int arg) const { return static_cast<int>(node_.args_.at(arg).infos.size()); }
  // A saved output.
  Tensor output(int j) const;
  // Whether the slot of argument `arg` (element `k`) needs a gradient.
  bool needs_grad(int arg, int k = 0) const;

  // A gradient list of the node's size; set(arg, g) fills an argument's slot.
  variable_list grads() const { return variable_list(node_.next_edges().size()); }
  void set(variable_list& out, int arg, Tensor g, int k = 0) const;
  // Whether output j's gradient is the zeros the node made because none arrived (a formula may
  // skip the terms it feeds).
  bool grad_zero_filled(int j) const { return j < static_cast<int>(zero_filled_.size()) && zero_filled_[j]; }

 private:
  FormulaNode& node_;
  std::vector<bool> zero_filled_;
};

}  // namespace anatomy::autograd
