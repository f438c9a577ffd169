// nn::Sequential, nn::ModuleList and nn::ModuleDict (see container.h).
#include "anatomy/nn/container.h"

namespace anatomy::nn {

void IndexedModules::push_back(std::shared_ptr<Module> module) {
  add_child(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
}

std::shared_ptr<Module> IndexedModules::operator[](int64_t index) const {
  const auto n = static_cast<int64_t>(modules_.size());
  ANATOMY_CHECK(index >= -n && index < n, IndexError, "{}: index {} is out of range for {} modules", type_name(), index,
                n);
  return modules_[static_cast<size_t>(index < 0 ? index + n : index)];
}

Tensor Sequential::forward(const Tensor& input) {
  Tensor x = input;
  for (const auto& m : *this) x = m->forward(x);
  return x;
}

ModuleDict::ModuleDict(std::initializer_list<std::pair<std::string, std::shared_ptr<Module>>> modules) : ModuleDict() {
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
