// nn::Sequential, nn::ModuleList and nn::ModuleDict (see container.h).
#include "anatomy/nn/container.h"

namespace anatomy::nn {

namespace {

std::shared_ptr<Module> at(const std::vector<std::shared_ptr<Module>>& modules, int64_t index, const char* type) {
  const auto n = static_cast<int64_t>(modules.size());
  ANATOMY_CHECK(index >= -n && index < n, IndexError, "{}: index {} is out of range for {} modules", type, index, n);
  return modules[static_cast<size_t>(index < 0 ? index + n : index)];
}

}  // namespace

void Sequential::push_back(std::shared_ptr<Module> module) {
  add_child(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
}

std::shared_ptr<Module> Sequential::operator[](int64_t index) const { return at(modules_, index, "Sequential"); }

Tensor Sequential::forward(const Tensor& input) {
  Tensor x = input;
  for (const auto& m : modules_) x = m->forward(x);
  return x;
}

void ModuleList::push_back(std::shared_ptr<Module> module) {
  add_child(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
}

std::shared_ptr<Module> ModuleList::operator[](int64_t index) const { return at(modules_, index, "ModuleList"); }

ModuleDict::ModuleDict(std::initializer_list<std::pair<std::string, std::shared_ptr<Module>>> modules)
    : ModuleDict() {
  for (const auto& [key, m] : modules) insert(key, m);
}

void ModuleDict::insert(const std::string& key, std::shared_ptr<Module> module) { add_child(key, std::move(module)); }

bool ModuleDict::contains(const std::string& key) const {
  for (const auto& [name, _] : named_children()) {
    if (name == key) return true;
  }
  return false;
}

std::vector<std::string> ModuleDict::keys() const {
  std::vector<std::string> out;
  for (const auto& [name, _] : named_children()) out.push_back(name);
  return out;
}

}  // namespace anatomy::nn
