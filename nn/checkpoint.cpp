// Module::save and Module::load (module.h): the state_dict through a safetensors file.
#include "anatomy/nn/module.h"
#include "anatomy/nn/safetensors.h"

namespace anatomy::nn {

void Module::save(const std::string& path, const std::map<std::string, std::string>& metadata) const {
  std::map<std::string, Tensor> tensors;
  for (const auto& [name, t] : state_dict()) tensors.emplace(name, t);
  nn::save(path, tensors, metadata);
}

LoadResult Module::load(const std::string& path, bool strict) {
  const Loaded loaded = nn::load(path);
  StateDict sd(loaded.tensors.begin(), loaded.tensors.end());
  return load_state_dict(sd, strict);
}

}  // namespace anatomy::nn
