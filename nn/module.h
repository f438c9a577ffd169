// nn::Module: a tree of named parameters, buffers and submodules, as torch.nn.Module.
//
//   struct Mlp : nn::Module {
//     std::shared_ptr<nn::Linear> fc = register_module("fc", std::make_shared<nn::Linear>(4, 8));
//     Mlp() : Module("Mlp") {}
//     Tensor forward(const Tensor& x) override { return fc->forward(x).relu(); }
//   };
//
// Names are PyTorch's: a parameter "weight" of the child "fc" is "fc.weight" in
// named_parameters() and state_dict(), in registration order. A module is shared through
// std::shared_ptr and is not copyable (its layers hold references into its registry).
//
// Note [Module::to converts the registered tensors in place]: to(device) and to(dtype) convert
// each parameter and buffer and give the result to the registered tensor itself
// (Tensor::set_data, as PyTorch's default `param.data = fn(param)`), so every handle to it (the
// layers' members, model.parameters() given to an optimizer before the call) sees the converted
// data; a parameter stays a leaf that requires grad, its .grad converted too (a new .grad). Every
// conversion is made before any tensor changes, so one that fails changes nothing. A call that
// changes nothing (same device and dtype) leaves every tensor as it is.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <map>

#include "anatomy/anatomy.h"

namespace anatomy::nn {

// An ordered name -> tensor map (state_dict's keys in registration order).
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
using StateDict = NamedTensors;

// load_state_dict's report (PyTorch's _IncompatibleKeys).
struct LoadResult {
  std::vector<std::string> missing_keys;
  std::vector<std::string> unexpected_keys;
};

class Module {
 public:
  // type_name: the class name shown in repr and in error messages ("Linear").
  explicit Module(std::string type_name);
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& type_name() const { return type_name_; }

  // The module's computation on one input; a module without one raises NotImplementedError.
  virtual Tensor forward(const Tensor& input);
  Tensor operator()(const Tensor& input) { return forward(input); }

  // ---- registration: names are non-empty, without '.', unique across parameters, buffers and
  // submodules (ValueError otherwise). An undefined tensor registers an absent slot (PyTorch's
  // None: Linear(bias=false)'s bias), left out of the listings and the state_dict. The returned
  // reference stays valid for the module's lifetime (to() converts the tensor in place).
  // A parameter is a leaf that requires grad (unless requires_grad is false): a leaf with that
  // setting is registered as it is (so passing another module's parameter ties the two, listed
  // once by named_parameters), any other tensor is detached first.
  Tensor& register_parameter(const std::string& name, const Tensor& tensor, bool requires_grad = true);
  Tensor& register_buffer(const std::string& name, const Tensor& tensor, bool persistent = true);
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    add_child(name, module);
    return module;
  }

  // ---- listings, depth first in registration order, with dotted names ----
  NamedTensors named_parameters(bool recurse = true) const;
  NamedTensors named_buffers(bool recurse = true) const;
  std::vector<Tensor> parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  // This module (name "") first, then every descendant; a module reached twice is listed once.
  // (A module cannot contain itself: register_module refuses a cycle.)
  std::vector<std::pair<std::string, Module*>> named_modules();
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const;
  std::vector<std::shared_ptr<Module>> children() const;
  // The sum of the parameters' numel (trainable_only: those that require grad).
  int64_t num_parameters(bool trainable_only = false) const;

  // ---- mode ----
  Module& train(bool on = true);
  Module& eval() { return train(false); }
  bool is_training() const { return training_; }

  // ---- conversions (Note [Module::to converts the registered tensors in place]) ----
  // to(dtype) converts floating parameters and buffers only, as PyTorch's (an integer buffer stays).
  Module& to(Device device);
  Module& to(DType dtype);
  Module& to(Device device, DType dtype);

  // Clears every parameter's .grad (set_to_none) or zeroes it in place.
  void zero_grad(bool set_to_none = true);
  // fn on every descendant, children before their parent, then on this module (PyTorch's order).
  Module& apply(const std::function<void(Module&)>& fn);

  // ---- state ----
  // Persistent buffers and parameters by dotted name, detached (same storage, no history).
  StateDict state_dict() const;
  // Copies each value into the registered tensor (no-grad copy_, keeping its device and dtype).
  // A shape mismatch, or a value that cannot be converted to its tensor's device and dtype, always
  // fails; strict also fails on a missing or unexpected key. A failure is one ValueError naming
  // every problem, and changes nothing (the values are converted before the first copy).
  // Returns the missing and unexpected keys (both empty after a strict load).
  LoadResult load_state_dict(const StateDict& state_dict, bool strict = true);
  // The state_dict as a safetensors file (nn/safetensors.h), and back: load reads the file on the
  // CPU (views of its mapping) and load_state_dict copies them in, so a file that PyTorch's
  // safetensors.torch.save_file(model.state_dict()) wrote loads too (nn/checkpoint.cpp).
  void save(const std::string& path, const std::map<std::string, std::string>& metadata = {}) const;
  LoadResult load(const std::string& path, bool strict = true);

  // ---- printing ----
  // PyTorch's repr: "Sequential(\n  (0): Linear(in_features=4, out_features=8, bias=True)\n)".
  std::string repr() const;
  // repr, then a line per parameter (dotted name, shape, element count, "frozen" where it does
  // not require grad; the columns aligned), then the total and trainable counts.
  std::string summary() const;
  // The text inside the parentheses of this module's own line ("in_features=4, ...").
  virtual std::string extra_repr() const { return {}; }

 protected:
  // The child registered as name (ValueError if none); for containers.
  const std::shared_ptr<Module>& child(const std::string& name) const;
  void add_child(const std::string& name, std::shared_ptr<Module> module);

 private:
  struct Slot {
    std::string name;
    Tensor tensor;
    bool persistent = true;
  };

  std::string type_name_;
  bool training_ = true;
  // deques: a layer's reference into a slot stays valid as more are registered.
  std::deque<Slot> parameters_;
  std::deque<Slot> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;

  void check_new_name(const std::string& name, const char* what) const;
  // The defined tensors of `list` in this module (and its descendants), each once, dotted names.
  NamedTensors named_slots(bool recurse, std::deque<Slot> Module::*list) const;
  void convert(std::optional<Device> device, std::optional<DType> dtype);
  // Persistent slots of this module and its descendants, with dotted names, as references.
  void collect_state(const std::string& prefix, std::vector<std::pair<std::string, Tensor*>>& out);
};

std::ostream& operator<<(std::ostream& os, const Module& module);

}  // namespace anatomy::nn
