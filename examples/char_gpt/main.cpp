// char-gpt: trains a character-level GPT on a text file (examples/char_gpt/README.md), then
// optionally saves a checkpoint and prints a sample. Exit status: 0 done; 1 an engine error
// while training; 2 bad usage (a flag, a file, a checkpoint that does not fit), with one line on
// stderr saying why.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "anatomy/anatomy.h"
#include "anatomy/examples/char_gpt/checkpoint.h"
#include "anatomy/examples/char_gpt/options.h"
#include "anatomy/examples/char_gpt/sample.h"
#include "anatomy/examples/char_gpt/text_data.h"
#include "anatomy/examples/char_gpt/train.h"

namespace {

using char_gpt::UsageError;

void require(bool ok, const std::string& message) {
  if (!ok) throw UsageError(message);
}

// The checkpoint's recorded options and vocabulary; its problems are the user's input's.
char_gpt::CheckpointHeader read_header(const std::string& path) {
  require(std::filesystem::is_regular_file(path), fmt::format("--resume: no checkpoint file '{}'", path));
  require(std::filesystem::is_regular_file(char_gpt::train_state_path(path)),
          fmt::format("--resume: no training state '{}' beside the model", char_gpt::train_state_path(path)));
  try {
    return char_gpt::read_checkpoint_header(path);
  } catch (const anatomy::Error& e) {
    throw UsageError(fmt::format("--resume: {}", e.what()));
  }
}

int run(char_gpt::Options o) {
  char_gpt::CheckpointHeader header;
  if (!o.resume.empty()) {
    header = read_header(o.resume);
    char_gpt::adopt_trajectory_options(o, header.options);
  }
  std::string error;
  const std::optional<char_gpt::TextData> data = char_gpt::TextData::read(o.data, error);
  require(data.has_value(), "--data: " + error);
  require(o.resume.empty() || data->chars() == header.vocab,
          fmt::format("--resume: the checkpoint's vocabulary ({} characters) is not that of '{}' ({})",
                      header.vocab.size(), o.data, data->vocab_size()));
  require(static_cast<int64_t>(data->text().size()) > o.seq,
          fmt::format("--seq {} needs a text of at least {} characters; '{}' has {}", o.seq, o.seq + 1, o.data,
                      data->text().size()));
  const std::string prompt = o.prompt.value_or(data->text().substr(0, 1));
  if (const std::optional<char> c = data->first_unknown(prompt)) {
    throw UsageError(
        fmt::format("--prompt: the character 0x{:02x} does not occur in '{}'", static_cast<unsigned char>(*c), o.data));
  }
  const int64_t last_step = o.stop_after > 0 ? o.stop_after : o.steps;
  require(header.step <= last_step,
          fmt::format("--resume: the checkpoint is at step {}, past the last step {}", header.step, last_step));

  const anatomy::Device device(o.device);
  anatomy::default_generator(anatomy::DeviceType::CPU).manual_seed(o.seed);
  if (device.is_cuda()) anatomy::default_generator(anatomy::DeviceType::CUDA).manual_seed(o.seed);
  char_gpt::Trainer trainer(o, *data);
  if (!o.resume.empty()) {
    try {
      trainer.resume(o.resume);
    } catch (const anatomy::Error& e) {
      throw UsageError(fmt::format("--resume: {}", e.what()));
    }
  }
  std::printf("char-gpt: %lld parameters, vocabulary %lld, text %zu characters, %s, from step %lld\n",
              static_cast<long long>(trainer.model().num_parameters()), static_cast<long long>(data->vocab_size()),
              data->text().size(), o.device.c_str(), static_cast<long long>(trainer.step()));
  trainer.train_until(last_step);
  if (!o.save.empty()) {
    trainer.save(o.save);
    std::printf("saved %s and %s at step %lld\n", o.save.c_str(), char_gpt::train_state_path(o.save).c_str(),
                static_cast<long long>(trainer.step()));
  }
  if (o.sample > 0) {
    const std::string text = char_gpt::generate(trainer.model(), *data, prompt, o.sample, o.temperature);
    std::printf("--- sample: the prompt, then %lld characters ---\n%s%s\n--- end of sample ---\n",
                static_cast<long long>(o.sample), prompt.c_str(), text.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::optional<char_gpt::Options> options = char_gpt::parse_options(argc, argv);
    return options ? run(*options) : 0;
  } catch (const UsageError& e) {
    std::cerr << "char-gpt: error: " << e.what() << "\n";
    return 2;
  } catch (const anatomy::Error& e) {
    std::cerr << "char-gpt: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {  // std::bad_alloc from a host allocation, ...
    std::cerr << "char-gpt: " << e.what() << "\n";
    return 1;
  }
}
