// See options.h.
#include "anatomy/examples/char_gpt/options.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <iostream>

#include "anatomy/anatomy.h"
#include "anatomy/cuda.h"

#ifndef CHAR_GPT_DATA
#error "CHAR_GPT_DATA (the shipped text's path) is set by examples/char_gpt/CMakeLists.txt"
#endif

namespace char_gpt {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw UsageError(message);
}

// CLI11 reads an integer with strtoll and keeps its clamped value when the text is out of range.
const CLI::Validator kInt64(
    [](std::string& text) {
      int64_t value = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec == std::errc::result_out_of_range) return std::string("out of the range of a 64-bit integer");
      (void)end;
      return std::string();
    },
    "");

void require_positive(int64_t v, const char* flag) {
  require(v > 0, fmt::format("{} must be positive, got {}", flag, v));
}

void require_finite(double v, const char* flag) {
  require(std::isfinite(v), fmt::format("{} must be finite, got {}", flag, v));
}

// --device: "cpu", or "cuda" / "cuda:N" naming a device this machine has.
void check_device(const Options& o) {
  anatomy::Device device(anatomy::DeviceType::CPU);
  try {
    device = anatomy::Device(o.device);
  } catch (const anatomy::Error& e) {
    throw UsageError(fmt::format("--device '{}' is not a device (cpu, cuda:0, ...): {}", o.device, e.what()));
  }
  require(device.is_cpu() || device.is_cuda(), fmt::format("--device '{}': char-gpt trains on cpu or cuda", o.device));
  if (device.is_cuda()) {
    require(anatomy::cuda::is_available(),
            fmt::format("--device {}: no CUDA device ({})", o.device, anatomy::cuda::unavailable_reason()));
    require(device.index() < anatomy::cuda::device_count(),
            fmt::format("--device {}: this machine has {} CUDA device(s)", o.device, anatomy::cuda::device_count()));
  }
  require(o.autocast.empty() || device.is_cuda(),
          fmt::format("--autocast {} runs on CUDA only; on the CPU the model trains in fp32", o.autocast));
  require(o.sync_debug.empty() || device.is_cuda(),
          fmt::format("--sync-debug {} runs on CUDA only: the CPU has no device to wait for", o.sync_debug));
}

// Each value on its own.
void check_values(const Options& o) {
  require_positive(o.steps, "--steps");
  require_positive(o.batch, "--batch");
  require_positive(o.seq, "--seq");
  require_positive(o.layers, "--layers");
  require_positive(o.d_model, "--d-model");
  require_positive(o.heads, "--heads");
  require_positive(o.log_every, "--log-every");
  for (auto [v, flag] : {std::pair{o.lr, "--lr"},
                         {o.dropout, "--dropout"},
                         {o.weight_decay, "--weight-decay"},
                         {o.clip, "--clip"},
                         {o.temperature, "--temperature"}}) {
    require_finite(v, flag);
  }
  require(o.lr > 0, fmt::format("--lr must be positive, got {}", o.lr));
  require(o.dropout >= 0 && o.dropout < 1, fmt::format("--dropout must be in [0, 1), got {}", o.dropout));
  require(o.weight_decay >= 0, fmt::format("--weight-decay must not be negative, got {}", o.weight_decay));
  require(o.clip >= 0, fmt::format("--clip must not be negative (0: no clipping), got {}", o.clip));
  require(o.temperature >= 0, fmt::format("--temperature must not be negative (0: greedy), got {}", o.temperature));
  require(o.warmup >= 0, fmt::format("--warmup must not be negative, got {}", o.warmup));
  require(o.stop_after >= 0, fmt::format("--stop-after must not be negative (0: none), got {}", o.stop_after));
  require(o.sample >= 0, fmt::format("--sample must not be negative, got {}", o.sample));
  require(!o.prompt || !o.prompt->empty(), "--prompt must not be empty");
  check_device(o);
}

// The values together (with --resume, once the checkpoint's options are in).
void check_combinations(const Options& o) {
  require(o.d_model % o.heads == 0, fmt::format("--d-model {} is not divisible by --heads {}", o.d_model, o.heads));
  require(o.warmup < o.steps, fmt::format("--warmup {} must be less than --steps {}", o.warmup, o.steps));
  require(o.stop_after <= o.steps, fmt::format("--stop-after {} is past --steps {}", o.stop_after, o.steps));
}

// One recorded option: its flag, its value as text, and how to read the text back.
struct Field {
  const char* flag;
  std::function<std::string(const Options&)> get;
  std::function<void(Options&, const std::string&)> set;
};

Field int_field(const char* flag, int64_t Options::*member) {
  return {flag, [member](const Options& o) { return std::to_string(o.*member); },
          [member](Options& o, const std::string& s) { o.*member = std::stoll(s); }};
}

// fmt's shortest representation reads back to the same double.
Field double_field(const char* flag, double Options::*member) {
  return {flag, [member](const Options& o) { return fmt::format("{}", o.*member); },
          [member](Options& o, const std::string& s) { o.*member = std::stod(s); }};
}

const std::vector<Field>& fields() {
  static const std::vector<Field> all = {
      int_field("--steps", &Options::steps),     int_field("--batch", &Options::batch),
      int_field("--seq", &Options::seq),         int_field("--layers", &Options::layers),
      int_field("--d-model", &Options::d_model), int_field("--heads", &Options::heads),
      int_field("--warmup", &Options::warmup),   double_field("--dropout", &Options::dropout),
      double_field("--lr", &Options::lr),        double_field("--weight-decay", &Options::weight_decay),
      double_field("--clip", &Options::clip),
  };
  return all;
}

}  // namespace

bool Options::was_given(const std::string& flag) const {
  return std::find(given.begin(), given.end(), flag) != given.end();
}

std::optional<Options> parse_options(int argc, char** argv) {
  Options o;
  int64_t seed = static_cast<int64_t>(o.seed);
  CLI::App app{"char-gpt: trains a character-level GPT on a text file, samples from it, saves and resumes"};
  app.add_option("--device", o.device, "cpu or cuda:N")->capture_default_str();
  app.add_option("--steps", o.steps, "optimizer steps: the schedule's length")->check(kInt64)->capture_default_str();
  app.add_option("--stop-after", o.stop_after, "stop after this step (0: at --steps), to resume later")
      ->check(kInt64)
      ->capture_default_str();
  app.add_option("--batch", o.batch, "windows per step")->check(kInt64)->capture_default_str();
  app.add_option("--seq", o.seq, "characters per window (the context)")->check(kInt64)->capture_default_str();
  app.add_option("--layers", o.layers, "transformer layers")->check(kInt64)->capture_default_str();
  app.add_option("--d-model", o.d_model, "the model's width")->check(kInt64)->capture_default_str();
  app.add_option("--heads", o.heads, "attention heads (dividing --d-model)")->check(kInt64)->capture_default_str();
  app.add_option("--dropout", o.dropout, "dropout probability")->capture_default_str();
  app.add_option("--lr", o.lr, "peak learning rate (AdamW)")->capture_default_str();
  app.add_option("--weight-decay", o.weight_decay, "AdamW's decoupled weight decay (not on biases and norms)")
      ->capture_default_str();
  app.add_option("--warmup", o.warmup, "linear warm-up steps before the cosine decay")
      ->check(kInt64)
      ->capture_default_str();
  app.add_option("--clip", o.clip, "gradient norm clipping (0: none)")->capture_default_str();
  app.add_flag("--checkpointing", o.checkpointing, "activation checkpointing per layer");
  app.add_option("--autocast", o.autocast, "bf16: autocast on CUDA")->check(CLI::IsMember({"bf16"}));
  app.add_option("--data", o.data, "the training text (default: the shipped GPL-3 text)");
  app.add_option("--save", o.save, "write a checkpoint here at the end (and <path>.train.safetensors)");
  app.add_option("--resume", o.resume, "continue from a checkpoint written by --save");
  app.add_option("--sample", o.sample, "characters to generate after training")->check(kInt64)->capture_default_str();
  app.add_option("--prompt", o.prompt, "the sample's start (default: the text's first character)");
  app.add_option("--temperature", o.temperature, "sampling temperature (0: greedy)")->capture_default_str();
  app.add_option("--seed", seed, "the generators' seed")->check(kInt64)->capture_default_str();
  app.add_option("--log-every", o.log_every, "print the loss every this many steps")
      ->check(kInt64)
      ->capture_default_str();
  app.add_option("--sync-debug", o.sync_debug,
                 "warn: report every wait for the device inside a step (error: stop at the first), as "
                 "torch.cuda.set_sync_debug_mode; the log's loss read is outside it")
      ->check(CLI::IsMember({"warn", "error"}));
  app.add_flag("--breakdown", o.breakdown,
               "after training, the host's and the device's milliseconds per step in each phase of the step "
               "(the run's first 20 steps left out)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
  require(seed >= 0, fmt::format("--seed must not be negative, got {}", seed));
  o.seed = static_cast<uint64_t>(seed);
  if (o.data.empty()) o.data = CHAR_GPT_DATA;
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->count() > 0) o.given.push_back(opt->get_name());
  }
  check_values(o);
  if (o.resume.empty()) check_combinations(o);
  return o;
}

std::map<std::string, std::string> trajectory_options(const Options& o) {
  std::map<std::string, std::string> out;
  for (const Field& f : fields()) out[f.flag] = f.get(o);
  return out;
}

void adopt_trajectory_options(Options& o, const std::map<std::string, std::string>& recorded) {
  for (const Field& f : fields()) {
    const auto it = recorded.find(f.flag);
    require(it != recorded.end(), fmt::format("--resume: the checkpoint does not record {}", f.flag));
    if (!o.was_given(f.flag)) {
      try {
        f.set(o, it->second);
      } catch (const std::exception&) {
        throw UsageError(fmt::format("--resume: the checkpoint's {} '{}' is not a number", f.flag, it->second));
      }
    } else if (f.get(o) != it->second && std::string(f.flag) != "--steps") {
      throw UsageError(fmt::format("--resume: {} {} differs from the checkpoint's {} (leave it out to continue)",
                                   f.flag, f.get(o), it->second));
    }
  }
  check_combinations(o);
}

}  // namespace char_gpt
