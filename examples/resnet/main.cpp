// resnet: trains a small ResNet on synthetic images (examples/resnet/README.md) and reports the
// loss, the speed and the accuracy on fresh images in eval mode. Exit status: 0 done; 1 an engine
// error; 2 bad usage, with one line on stderr saying why.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "anatomy/anatomy.h"
#include "anatomy/examples/resnet/model.h"
#include "anatomy/examples/resnet/options.h"
#include "anatomy/examples/resnet/synthetic_images.h"

namespace {

using anatomy::Tensor;
namespace optim = anatomy::optim;

constexpr int64_t kClasses = 10;
constexpr int64_t kEvalImages = 512;

std::unique_ptr<optim::Optimizer> make_optimizer(const resnet::ResNet& model, const resnet::Options& o) {
  if (o.optimizer == "sgd")
    return std::make_unique<optim::SGD>(model.parameters(),
                                        optim::SGDOptions{.lr = o.lr, .momentum = 0.9, .weight_decay = 5e-4});
  return std::make_unique<optim::AdamW>(model.parameters(), optim::AdamWOptions{.lr = o.lr, .weight_decay = 0.05});
}

// The images as the model takes them: in channels_last layout with --channels-last.
Tensor as_input(const Tensor& images, const resnet::Options& o) {
  return o.channels_last ? images.contiguous(anatomy::MemoryFormat::ChannelsLast) : images;
}

int run(const resnet::Options& o) {
  const anatomy::Device device(o.device);
  anatomy::manual_seed(o.seed);
  const resnet::SyntheticImages data(kClasses, o.image_size, o.noise, device);
  resnet::ResNet model(kClasses, o.blocks);
  model.to(device);
  // Made after the model moved to its device (docs/nn.md, "Conversions").
  const std::unique_ptr<optim::Optimizer> optimizer = make_optimizer(model, o);
  std::printf("resnet: %lld parameters, 3x%lldx%lld images of %lld classes, %s%s%s, %s\n",
              static_cast<long long>(model.num_parameters()), static_cast<long long>(o.image_size),
              static_cast<long long>(o.image_size), static_cast<long long>(kClasses), o.device.c_str(),
              o.channels_last ? ", channels_last" : "", o.autocast.empty() ? "" : ", autocast bf16",
              o.optimizer.c_str());
  std::printf("ln(%lld classes) = %.4f\n", static_cast<long long>(kClasses), std::log(static_cast<double>(kClasses)));

  const auto start = std::chrono::steady_clock::now();
  model.train();
  for (int64_t step = 1; step <= o.steps; ++step) {
    const auto [images, labels] = data.batch(o.batch);
    Tensor loss;
    {
      anatomy::autocast::AutocastGuard amp(device.type(), anatomy::DType::BFloat16, !o.autocast.empty());
      loss = anatomy::cross_entropy(model.forward(as_input(images, o)), labels);
    }
    optimizer->zero_grad();
    loss.backward();  // outside the autocast scope, as PyTorch advises
    optimizer->step();
    if (step % o.log_every == 0 || step == o.steps || step == 1)
      std::printf("step %lld/%lld  loss %.6f\n", static_cast<long long>(step), static_cast<long long>(o.steps),
                  loss.item<double>());
    std::fflush(stdout);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("trained %lld steps in %.2f s: %.2f steps/s\n", static_cast<long long>(o.steps), seconds,
              static_cast<double>(o.steps) / seconds);

  // Fresh images, normalized by the running statistics.
  model.eval();
  anatomy::autograd::NoGradGuard no_grad;
  const auto [images, labels] = data.batch(kEvalImages);
  const Tensor predicted = model.forward(as_input(images, o)).argmax(1);
  const double accuracy = predicted.eq(labels).to(anatomy::DType::Float64).mean().item<double>();
  std::printf("eval: accuracy %.4f on %lld fresh images\n", accuracy, static_cast<long long>(kEvalImages));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::optional<resnet::Options> options = resnet::parse_options(argc, argv);
    return options ? run(*options) : 0;
  } catch (const resnet::UsageError& e) {
    std::cerr << "resnet: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {  // anatomy::Error, std::bad_alloc, ...
    std::cerr << "resnet: " << e.what() << "\n";
    return 1;
  }
}
