// resnet's command line. A bad flag (unknown, without its value, not a number, out of range, a
// device this machine lacks) is a UsageError, which main() reports with exit status 2.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace resnet {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Options {
  std::string device = "cpu";
  bool channels_last = false;
  std::string autocast;           // "" or "bf16"
  std::string optimizer = "sgd";  // "sgd" (momentum 0.9) or "adamw"
  int64_t steps = 200;
  int64_t batch = 64;
  double lr = 0;  // 0: the optimizer's default here (sgd 0.05, adamw 2e-3)
  int64_t image_size = 32;
  int64_t blocks = 1;  // BasicBlocks per stage
  double noise = 1.0;
  uint64_t seed = 0;
  int64_t log_every = 10;
};

// The options from argv, each value checked; std::nullopt after printing --help.
std::optional<Options> parse_options(int argc, char** argv);

}  // namespace resnet
