// char-gpt's checkpoint: two safetensors files.
//   <path>                      the model (Module::save), its metadata the options that fix the
//                               model and its trajectory (options.h), the vocabulary and the step
//   <path>.train.safetensors    the optimizer's state_dict, the step ("train.step") and the
//                               generators' state ("rng.cpu.seed", "rng.cpu.offset", and on CUDA
//                               "rng.cuda.*"): a generator is a Philox counter, so its seed and
//                               offset are all of it
// Resuming from them continues the run bit for bit: the same batches, dropout masks, learning
// rates and AdamW moments as a run that never stopped.
#pragma once

#include <map>
#include <string>

#include "anatomy/anatomy.h"
#include "anatomy/nn/nn.h"

namespace char_gpt {

// What the model file's metadata says.
struct CheckpointHeader {
  std::map<std::string, std::string> options;  // flag -> value
  std::string vocab;                           // the vocabulary's bytes
  int64_t step = 0;
};

std::string train_state_path(const std::string& path);

void save_checkpoint(const std::string& path, const anatomy::nn::Module& model, const anatomy::optim::Optimizer& opt,
                     const std::map<std::string, std::string>& options, const std::string& vocab, int64_t step,
                     anatomy::Device device);

// The model file's metadata; ValueError if the file is not a char-gpt checkpoint.
CheckpointHeader read_checkpoint_header(const std::string& path);

// Loads the model, the optimizer and the generators (the CPU's, and the device's where the file has
// it: a CPU checkpoint resumed on CUDA leaves the CUDA generator as seeded) from both files;
// returns the step. ValueError if they do not belong together or do not fit the model.
int64_t load_checkpoint(const std::string& path, anatomy::nn::Module& model, anatomy::optim::Optimizer& opt,
                        anatomy::Device device);

}  // namespace char_gpt
