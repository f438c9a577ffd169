// See checkpoint.h.
#include "anatomy/examples/char_gpt/checkpoint.h"

#include <fmt/format.h>

#include <cstdio>
#include <string_view>

namespace char_gpt {
namespace {

using anatomy::DType;
using anatomy::Tensor;

constexpr const char* kVocab = "vocab";
constexpr const char* kStep = "step";
constexpr const char* kStepTensor = "train.step";

// The vocabulary's bytes as hex: safetensors metadata must be UTF-8, and a text file's bytes need not be.
std::string to_hex(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) out += fmt::format("{:02x}", c);
  return out;
}

std::string from_hex(const std::string& hex, const std::string& path) {
  ANATOMY_CHECK(hex.size() % 2 == 0, ValueError, "{}: the vocabulary is not hex", path);
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    unsigned value = 0;
    ANATOMY_CHECK(std::sscanf(hex.c_str() + i, "%2x", &value) == 1, ValueError, "{}: the vocabulary is not hex", path);
    out.push_back(static_cast<char>(value));
  }
  return out;
}

// A uint64 as the bits of a one-element int64 tensor (safetensors' I64), and back.
Tensor u64_tensor(uint64_t v) { return anatomy::tensor(std::vector<int64_t>{static_cast<int64_t>(v)}, {1}); }

uint64_t u64_of(const std::map<std::string, Tensor>& tensors, const std::string& key, const std::string& path) {
  const auto it = tensors.find(key);
  ANATOMY_CHECK(it != tensors.end() && it->second.numel() == 1 && it->second.dtype() == DType::Int64, ValueError,
                "{}: expected a one-element int64 tensor '{}'", path, key);
  return static_cast<uint64_t>(it->second.item<int64_t>());
}

// The generators whose draws the run makes: the CPU's (batches, initialisation, sampling) and the
// device's (dropout), by the name of their keys.
std::vector<std::pair<std::string, anatomy::DeviceType>> generators(anatomy::Device device) {
  std::vector<std::pair<std::string, anatomy::DeviceType>> out = {{"cpu", anatomy::DeviceType::CPU}};
  if (device.is_cuda()) out.emplace_back("cuda", anatomy::DeviceType::CUDA);
  return out;
}

}  // namespace

std::string train_state_path(const std::string& path) { return path + ".train.safetensors"; }

void save_checkpoint(const std::string& path, const anatomy::nn::Module& model, const anatomy::optim::Optimizer& opt,
                     const std::map<std::string, std::string>& options, const std::string& vocab, int64_t step,
                     anatomy::Device device) {
  std::map<std::string, Tensor> train = opt.state_dict();
  train[kStepTensor] = u64_tensor(static_cast<uint64_t>(step));
  for (const auto& [name, type] : generators(device)) {
    const anatomy::Generator& g = anatomy::default_generator(type);
    train["rng." + name + ".seed"] = u64_tensor(g.seed());
    train["rng." + name + ".offset"] = u64_tensor(g.offset());
  }
  std::map<std::string, std::string> metadata = options;
  metadata["format"] = "pt";
  metadata[kVocab] = to_hex(vocab);
  metadata[kStep] = std::to_string(step);
  // Each file is written whole or not at all (nn::save renames a finished file into place); the
  // step recorded in both tells a matched pair.
  anatomy::nn::save(train_state_path(path), train);
  model.save(path, metadata);
}

CheckpointHeader read_checkpoint_header(const std::string& path) {
  const anatomy::nn::Loaded loaded = anatomy::nn::load(path);
  CheckpointHeader h;
  for (const auto& [key, value] : loaded.metadata) {
    if (key.rfind("--", 0) == 0) h.options[key] = value;
  }
  const auto vocab = loaded.metadata.find(kVocab);
  const auto step = loaded.metadata.find(kStep);
  ANATOMY_CHECK(vocab != loaded.metadata.end() && step != loaded.metadata.end(), ValueError,
                "{}: not a char-gpt checkpoint (its metadata has no vocab or step)", path);
  h.vocab = from_hex(vocab->second, path);
  try {
    h.step = std::stoll(step->second);
  } catch (const std::exception&) {
    ANATOMY_CHECK(false, ValueError, "{}: the step '{}' is not a number", path, step->second);
  }
  return h;
}

int64_t load_checkpoint(const std::string& path, anatomy::nn::Module& model, anatomy::optim::Optimizer& opt,
                        anatomy::Device device) {
  const CheckpointHeader header = read_checkpoint_header(path);
  const std::string train_path = train_state_path(path);
  std::map<std::string, Tensor> train = anatomy::nn::load(train_path).tensors;
  const uint64_t step = u64_of(train, kStepTensor, train_path);
  ANATOMY_CHECK(static_cast<int64_t>(step) == header.step, ValueError,
                "{} is at step {} but {} at step {}: they are not from one save", path, header.step, train_path, step);
  // A generator the checkpoint lacks (the CUDA one, for a checkpoint saved on the CPU) keeps its
  // seeding: the run goes on, but not bit for bit.
  std::vector<std::pair<anatomy::Generator*, std::pair<uint64_t, uint64_t>>> rng;
  for (const auto& [name, type] : generators(device)) {
    const std::string key = "rng." + name;
    if (name != "cpu" && train.count(key + ".seed") == 0) continue;
    rng.push_back({&anatomy::default_generator(type),
                   {u64_of(train, key + ".seed", train_path), u64_of(train, key + ".offset", train_path)}});
  }
  std::map<std::string, Tensor> optimizer_state;
  for (const auto& [key, t] : train) {
    if (key.rfind("rng.", 0) != 0 && key != kStepTensor) optimizer_state.emplace(key, t);
  }
  // Everything is read and checked before the generators move.
  model.load(path);
  opt.load_state_dict(optimizer_state);
  for (auto& [g, state] : rng) {
    g->manual_seed(state.first);
    g->set_offset(state.second);
  }
  return header.step;
}

}  // namespace char_gpt
