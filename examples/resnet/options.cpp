// See options.h.
#include "anatomy/examples/resnet/options.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cmath>
#include <iostream>

#include "anatomy/anatomy.h"
#include "anatomy/cuda.h"

namespace resnet {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw UsageError(message);
}

void check(Options& o) {
  for (auto [v, flag] : {std::pair{o.steps, "--steps"},
                         {o.batch, "--batch"},
                         {o.image_size, "--image-size"},
                         {o.blocks, "--blocks"},
                         {o.log_every, "--log-every"}}) {
    require(v > 0, fmt::format("{} must be positive, got {}", flag, v));
  }
  // Two stride-2 stages: 4x4 is the smallest image whose last stage is still 1x1 or more.
  require(o.image_size >= 4, fmt::format("--image-size must be at least 4, got {}", o.image_size));
  require(std::isfinite(o.lr) && o.lr >= 0,
          fmt::format("--lr must be a positive number (0: the default), got {}", o.lr));
  require(std::isfinite(o.noise) && o.noise >= 0,
          fmt::format("--noise must be a number, not negative, got {}", o.noise));
  require(o.optimizer == "sgd" || o.optimizer == "adamw",
          fmt::format("--optimizer must be sgd or adamw, got '{}'", o.optimizer));
  require(o.autocast.empty() || o.autocast == "bf16", fmt::format("--autocast must be bf16, got '{}'", o.autocast));
  if (o.lr == 0) o.lr = o.optimizer == "sgd" ? 0.05 : 2e-3;
  anatomy::Device device(anatomy::DeviceType::CPU);
  try {
    device = anatomy::Device(o.device);
  } catch (const anatomy::Error& e) {
    throw UsageError(fmt::format("--device '{}' is not a device (cpu, cuda, cuda:1, ...): {}", o.device, e.what()));
  }
  require(device.is_cpu() || device.is_cuda(), fmt::format("--device '{}': resnet trains on cpu or cuda", o.device));
  require(!device.is_cuda() || device.index() < anatomy::cuda::device_count(),
          fmt::format("--device {}: this machine has {} CUDA device(s){}", o.device, anatomy::cuda::device_count(),
                      anatomy::cuda::is_available() ? "" : " (" + anatomy::cuda::unavailable_reason() + ")"));
}

}  // namespace

std::optional<Options> parse_options(int argc, char** argv) {
  Options o;
  CLI::App app("resnet: a small ResNet trained on synthetic images (examples/resnet/README.md)");
  app.add_option("--device", o.device, "cpu, cuda or cuda:N")->capture_default_str();
  app.add_flag("--channels-last", o.channels_last, "feed the images in channels_last (NHWC) memory format");
  app.add_option("--autocast", o.autocast, "bf16: run the forward pass under autocast to bfloat16");
  app.add_option("--optimizer", o.optimizer, "sgd (momentum 0.9, weight decay 5e-4) or adamw")->capture_default_str();
  app.add_option("--steps", o.steps, "training steps")->capture_default_str();
  app.add_option("--batch", o.batch, "images per step")->capture_default_str();
  app.add_option("--lr", o.lr, "learning rate (default: sgd 0.05, adamw 2e-3)");
  app.add_option("--image-size", o.image_size, "image height and width")->capture_default_str();
  app.add_option("--blocks", o.blocks, "BasicBlocks per stage")->capture_default_str();
  app.add_option("--noise", o.noise, "standard deviation of the noise on the class patterns")->capture_default_str();
  app.add_option("--seed", o.seed, "seed of the patterns, the batches and the initialisation")->capture_default_str();
  app.add_option("--log-every", o.log_every, "print the loss every N steps")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
  check(o);
  return o;
}

}  // namespace resnet
