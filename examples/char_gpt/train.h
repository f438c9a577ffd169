// The training run: the model on its device, AdamW in two parameter groups (weight decay on the
// matrices and embeddings, none on biases and norm weights), the cosine schedule with linear
// warm-up, gradient clipping, and the step:
//   zero_grad; loss = next_char_loss(model(inputs), targets) [under bf16 autocast with
//   --autocast]; backward; clip_grad_norm_; AdamW step; schedule step.
#pragma once

#include <memory>
#include <string>

#include "anatomy/examples/char_gpt/model.h"
#include "anatomy/examples/char_gpt/options.h"
#include "anatomy/examples/char_gpt/text_data.h"

namespace char_gpt {

class Trainer {
 public:
  // Draws the initial weights from the generators as they are (seed them first).
  Trainer(const Options& options, const TextData& data);

  // Continues from a checkpoint (checkpoint.h): the model, optimizer, generators and step.
  void resume(const std::string& path);
  void save(const std::string& path) const;
  // Steps until step() == last_step, printing the loss every --log-every steps and at the last,
  // then the time taken.
  void train_until(int64_t last_step);

  int64_t step() const { return step_; }
  CharGpt& model() { return *model_; }

 private:
  const Options options_;
  const TextData& data_;
  const anatomy::Device device_;
  std::shared_ptr<CharGpt> model_;
  std::unique_ptr<anatomy::optim::AdamW> optimizer_;
  std::unique_ptr<anatomy::optim::CosineWithWarmup> schedule_;
  int64_t step_ = 0;
};

}  // namespace char_gpt
