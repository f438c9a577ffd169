// The containers: nn::Sequential (children applied in order), nn::ModuleList (an indexed list)
// and nn::ModuleDict (an ordered name -> module map), as torch.nn's; their children are named
// "0", "1", ... (Sequential, ModuleList) or by key (ModuleDict), so state_dict keys read
// "0.weight", "blocks.3.attn.in_proj_bias".
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "anatomy/nn/module.h"

namespace anatomy::nn {

// The children of Sequential and ModuleList, named by position.
class IndexedModules : public Module {
 public:
  void push_back(std::shared_ptr<Module> module);
  size_t size() const { return modules_.size(); }
  // Index i, negative from the end; IndexError outside.
  std::shared_ptr<Module> operator[](int64_t index) const;
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }

 protected:
  using Module::Module;
  template <typename... M>
  void push_all(std::shared_ptr<M>... modules) {
    (push_back(std::move(modules)), ...);
  }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

class Sequential : public IndexedModules {
 public:
  Sequential() : IndexedModules("Sequential") {}
  // Sequential(std::make_shared<Linear>(4, 8), std::make_shared<ReLU>()).
  template <typename First, typename... Rest>
  explicit Sequential(std::shared_ptr<First> first, std::shared_ptr<Rest>... rest) : Sequential() {
    push_all(std::move(first), std::move(rest)...);
  }
  // The input through each child's forward, in order.
  Tensor forward(const Tensor& input) override;
};

// Holds modules; it has no forward of its own (NotImplementedError), as PyTorch's.
class ModuleList : public IndexedModules {
 public:
  ModuleList() : IndexedModules("ModuleList") {}
  template <typename First, typename... Rest>
  explicit ModuleList(std::shared_ptr<First> first, std::shared_ptr<Rest>... rest) : ModuleList() {
    push_all(std::move(first), std::move(rest)...);
  }
};

class ModuleDict : public Module {
 public:
  ModuleDict() : Module("ModuleDict") {}
  ModuleDict(std::initializer_list<std::pair<std::string, std::shared_ptr<Module>>> modules);
  // A new key (names as register_module's: no '.', not taken).
  void insert(const std::string& key, std::shared_ptr<Module> module);
  bool contains(const std::string& key) const;
  // ValueError naming the key when absent.
  std::shared_ptr<Module> operator[](const std::string& key) const { return child(key); }
  std::vector<std::string> keys() const;
  size_t size() const { return named_children().size(); }
};

}  // namespace anatomy::nn
