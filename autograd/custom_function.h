// Custom autograd functions: a forward and a backward written by the user, as libtorch's
// torch::autograd::Function. docs/autograd.md, "Custom functions", has a complete example.
//
//   struct MulConstant : anatomy::autograd::Function<MulConstant> {
//     static Tensor forward(AutogradContext* ctx, const Tensor& x, double c) {
//       ctx->saved_data["c"] = c;                   // non-tensor state
//       return x * c;                               // runs with grad mode off
//     }
//     static variable_list backward(AutogradContext* ctx, variable_list grads) {
//       return {grads[0] * ctx->saved_data["c"].get<double>(), Tensor()};   // one per argument
//     }
//   };
//   Tensor y = MulConstant::apply(x, 2.0);          // y.grad_fn()->name() == "MulConstant"
//
// forward's arguments are any types. A Tensor (or std::optional<Tensor>) argument is one input
// *position*, and so is each element of a std::vector<Tensor>; any other argument is one
// position that gets no gradient. backward returns one gradient per position (an undefined
// Tensor where there is none); needs_input_grad(i) counts positions the same way. forward
// returns a Tensor, a std::vector<Tensor> or a std::tuple of Tensors; backward receives one
// gradient per output, in that order.
//
// Note [Custom function outputs]
// apply() makes the node only when grad mode is on and a tensor input requires grad; forward
// then runs with grad mode off, and each floating-point output that is not marked
// non-differentiable gets the node as grad_fn. An output that is an input (returned as is) comes
// back as a new alias with the node as grad_fn, so the input's history is untouched. Such an
// alias, and a view of an input made in forward, is a view of that input for autograd (PyTorch's
// CreationMeta::IN_CUSTOM_FUNCTION): changing it in place while recording raises, since the
// view + in-place logic would replace the function's backward (clone the output to change it),
// and after an in-place change of its base its history is regenerated from the base's like any
// view's (Note [View + in-place], view_info.h). An input
// marked dirty (modified in place by forward) gets the node as its new history, as a built-in
// in-place operator does (with the same errors for a leaf that requires grad and the same
// CopySlices for a view). Tensors passed to save_for_backward are saved after that, with their
// versions: a saved output is kept as a detached alias (the node must not own its own output),
// and changing a saved tensor in place before backward is the engine's usual ValueError.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <vector>

#include "anatomy/autograd/grad_mode.h"
#include "anatomy/autograd/node.h"
#include "anatomy/autograd/saved_tensor.h"
#include "anatomy/dispatch/ivalue.h"

namespace anatomy::autograd {

class CustomFunctionNode;
namespace detail {
class FunctionCall;
}

// What forward leaves for backward: saved tensors, named non-tensor values, and flags.
class AutogradContext {
 public:
  AutogradContext() = default;
  AutogradContext(const AutogradContext&) = delete;
  AutogradContext& operator=(const AutogradContext&) = delete;

  // Non-tensor state for backward (numbers, shapes, flags): ctx->saved_data["dim"] = int64_t{1}.
  // Tensors go through save_for_backward, which checks their versions; a tensor output stored
  // here is a ValueError (the node would own its own output and never be freed).
  std::unordered_map<std::string, dispatch::IValue> saved_data;

  // Keeps tensors (inputs, outputs or others) for backward; called at most once, in forward.
  void save_for_backward(variable_list to_save);
  // The saved tensors, in order. ValueError when one was modified in place since forward, when
  // a backward without retain_graph already freed them, or when called before forward returned.
  variable_list get_saved_variables() const;

  // Inputs that forward modified in place; each must also be returned as an output.
  void mark_dirty(const variable_list& inputs);
  // Outputs that get no gradient (indices, masks); backward still receives a gradient slot for
  // each (zeros, or undefined without materialized gradients).
  void mark_non_differentiable(const variable_list& outputs);
  // On (the default): an output that no gradient reached gets zeros in backward. Off: backward
  // sees an undefined Tensor there.
  void set_materialize_grads(bool value) { materialize_grads_ = value; }
  // Whether input position `index` needs a gradient (forward's argument order, see above).
  // IndexError naming the function when there is no such position.
  bool needs_input_grad(size_t index) const;

 private:
  friend class CustomFunctionNode;
  friend class detail::FunctionCall;

  std::string name_;  // the function's, for messages
  variable_list to_save_;
  bool save_called_ = false;
  std::vector<SavedTensor> saved_;
  bool saved_ready_ = false;  // forward returned and the tensors were saved
  variable_list dirty_;
  variable_list non_differentiable_;
  bool materialize_grads_ = true;
  std::vector<bool> needs_input_grad_;
  Node* node_ = nullptr;  // the node that owns this context, while it records
};

// The backward node of a custom function: runs the user's backward, then checks its gradients
// against the inputs (their count, and each one's shape, device and dtype, as the engine does).
class CustomFunctionNode final : public Node {
 public:
  using BackwardFn = variable_list (*)(AutogradContext*, variable_list);
  CustomFunctionNode(std::string name, BackwardFn backward, std::vector<Edge> edges, std::vector<int> slot_of_position,
                     std::vector<OutputInfo> input_infos);

  std::string name() const override { return name_; }
  variable_list apply(variable_list&& grads) override;
  void release_saved() override;
  std::vector<std::string> saved_descriptions() const override;

  AutogradContext& context() { return ctx_; }

 private:
  std::string name_;
  BackwardFn backward_;
  std::vector<int> slot_of_position_;    // the edge of each input position; -1: not a tensor
  std::vector<OutputInfo> input_infos_;  // each tensor position's sizes, dtype, device
  AutogradContext ctx_;
  std::mutex mutex_;  // one backward at a time: the user's code may keep state in the context
};

namespace detail {

// One input position of a call: a tensor, or a non-tensor argument.
struct FunctionInput {
  Tensor tensor;
  bool is_tensor = false;
};

inline void collect_input(std::vector<FunctionInput>& in, const Tensor& t) { in.push_back({t, true}); }
inline void collect_input(std::vector<FunctionInput>& in, const std::optional<Tensor>& t) {
  in.push_back({t ? *t : Tensor(), t.has_value() && t->defined()});
}
inline void collect_input(std::vector<FunctionInput>& in, const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts) in.push_back({t, true});
}
template <typename T>
void collect_input(std::vector<FunctionInput>& in, const T&) {
  in.push_back({Tensor(), false});
}

// One apply(): the node (when it records), the context, and the wrapping of the outputs
// (custom_function.cpp).
class FunctionCall {
 public:
  FunctionCall(const std::string& name, CustomFunctionNode::BackwardFn backward, std::vector<FunctionInput> inputs);
  AutogradContext* context() { return node_ ? &node_->context() : &local_ctx_; }
  // The outputs as apply() returns them (Note [Custom function outputs]).
  variable_list finish(variable_list outputs);

 private:
  std::vector<FunctionInput> inputs_;
  IntrusivePtr<CustomFunctionNode> node_;  // null when nothing records
  AutogradContext local_ctx_;
};

// The class name of `type` without its namespaces: "MulConstant" for a::(anonymous)::MulConstant.
std::string demangled_class_name(const std::type_info& type);

template <typename T>
const std::string& function_name() {
  static const std::string name = [] {
    if constexpr (requires { std::string(T::name()); }) {
      return std::string(T::name());
    } else {
      return demangled_class_name(typeid(T));
    }
  }();
  return name;
}

// Outputs of forward, flattened into a list and rebuilt in the same shape.
template <typename Out>
struct ForwardOutput;
template <>
struct ForwardOutput<Tensor> {
  static variable_list flatten(Tensor&& t) { return {std::move(t)}; }
  static Tensor rebuild(variable_list&& v) { return std::move(v[0]); }
};
template <>
struct ForwardOutput<std::vector<Tensor>> {
  static variable_list flatten(std::vector<Tensor>&& v) { return std::move(v); }
  static std::vector<Tensor> rebuild(variable_list&& v) { return std::move(v); }
};
template <typename... Ts>
struct ForwardOutput<std::tuple<Ts...>> {
  static_assert((std::is_same_v<Ts, Tensor> && ...),
                "autograd::Function: forward returns a Tensor, a std::vector<Tensor> or a std::tuple of Tensors");
  static variable_list flatten(std::tuple<Ts...>&& t) {
    return std::apply([](Ts&... x) { return variable_list{std::move(x)...}; }, t);
  }
  static std::tuple<Ts...> rebuild(variable_list&& v) { return rebuild_at(v, std::index_sequence_for<Ts...>{}); }
  template <size_t... I>
  static std::tuple<Ts...> rebuild_at(variable_list& v, std::index_sequence<I...>) {
    return std::tuple<Ts...>(std::move(v[I])...);
  }
};

}  // namespace detail

// The base of a custom function (CRTP): T declares
//   static <Tensor | std::vector<Tensor> | std::tuple<Tensor, ...>> forward(AutogradContext*, Args...);
//   static variable_list backward(AutogradContext*, variable_list grad_outputs);
// and, optionally, static std::string name() (default: the class name) for graph dumps,
// anomaly mode and error messages.
template <class T>
struct Function {
  template <typename... Args>
  static auto apply(Args&&... args) {
    using Out =
        std::remove_cvref_t<decltype(T::forward(static_cast<AutogradContext*>(nullptr), std::forward<Args>(args)...))>;
    std::vector<detail::FunctionInput> inputs;
    (detail::collect_input(inputs, std::as_const(args)), ...);
    detail::FunctionCall call(
        detail::function_name<T>(),
        [](AutogradContext* ctx, variable_list grads) -> variable_list { return T::backward(ctx, std::move(grads)); },
        std::move(inputs));
    variable_list outputs;
    {
      AutoGradMode forward_mode(false);
      outputs = detail::ForwardOutput<Out>::flatten(T::forward(call.context(), std::forward<Args>(args)...));
    }
    return detail::ForwardOutput<Out>::rebuild(call.finish(std::move(outputs)));
  }
};

}  // namespace anatomy::autograd
