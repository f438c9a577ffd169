// char-gpt's command line: the flags, their defaults and checks. A bad flag (unknown, without its
// value, not a number, a size that is zero or negative, a missing file, ...) is a UsageError,
// which main() reports with exit status 2.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace char_gpt {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Options {
  std::string device = "cpu";
  // The schedule's length and the step at which training ends; --stop-after ends it earlier (to
  // save and resume later on the same schedule).
  int64_t steps = 2000;
  int64_t stop_after = 0;  // 0: run to --steps
  int64_t batch = 32;
  int64_t seq = 128;
  int64_t layers = 4;
  int64_t d_model = 256;
  int64_t heads = 8;
  double dropout = 0.1;
  double lr = 1e-3;
  double weight_decay = 0.1;
  int64_t warmup = 100;
  double clip = 1.0;  // 0: no clipping
  bool checkpointing = false;
  std::string autocast;  // "" or "bf16"
  std::string data;      // the shipped text by default
  std::string save;
  std::string resume;
  int64_t sample = 0;
  std::optional<std::string> prompt;  // the text's first character by default
  double temperature = 0;             // 0: greedy
  uint64_t seed = 1337;
  int64_t log_every = 100;
  // Prints where the steps' time went, by phase, host and device (step_phases.h).
  bool breakdown = false;
  // "warn" or "error": each step runs under CUDA's sync-debug mode, which reports (or refuses)
  // every wait of the host for the device; "" leaves it off.
  std::string sync_debug;
  // The flags given on the command line (by their long names, "--lr").
  std::vector<std::string> given;
  bool was_given(const std::string& flag) const;
};

// The options from argv. Prints the help and returns std::nullopt for --help. Checks each value
// (sizes positive, numbers finite, the device present, --autocast only on CUDA) and, without
// --resume, the values together (heads dividing d_model, warmup below steps); UsageError otherwise.
std::optional<Options> parse_options(int argc, char** argv);

// The options that fix the model and its training trajectory, by flag name, as text that reads
// back exactly: what a checkpoint records.
std::map<std::string, std::string> trajectory_options(const Options& o);
// Takes a checkpoint's recorded options: a flag not given takes the recorded value, a flag given
// with another value is a UsageError naming both (--steps may differ: it extends the schedule).
// Then checks the values together, as parse_options does without --resume.
void adopt_trajectory_options(Options& o, const std::map<std::string, std::string>& recorded);

}  // namespace char_gpt
