// See model.h.
#include "anatomy/examples/resnet/model.h"

namespace resnet {

namespace {

std::shared_ptr<nn::Conv2d> conv3x3(int64_t in, int64_t out, int64_t stride) {
  return std::make_shared<nn::Conv2d>(in, out, 3, nn::ConvArgs{.stride = stride, .padding = 1, .bias = false});
}

std::shared_ptr<nn::Sequential> stage(int64_t in, int64_t channels, int64_t blocks, int64_t stride) {
  auto out = std::make_shared<nn::Sequential>();
  for (int64_t i = 0; i < blocks; ++i)
    out->push_back(std::make_shared<BasicBlock>(i == 0 ? in : channels, channels, i == 0 ? stride : 1));
  return out;
}

}  // namespace

BasicBlock::BasicBlock(int64_t in_channels, int64_t channels, int64_t stride) : Module("BasicBlock") {
  conv1_ = register_module("conv1", conv3x3(in_channels, channels, stride));
  bn1_ = register_module("bn1", std::make_shared<nn::BatchNorm2d>(channels));
  conv2_ = register_module("conv2", conv3x3(channels, channels, 1));
  bn2_ = register_module("bn2", std::make_shared<nn::BatchNorm2d>(channels));
  if (stride != 1 || in_channels != channels) {
    downsample_ = register_module(
        "downsample",
        std::make_shared<nn::Sequential>(
            std::make_shared<nn::Conv2d>(in_channels, channels, 1, nn::ConvArgs{.stride = stride, .bias = false}),
            std::make_shared<nn::BatchNorm2d>(channels)));
  }
}

Tensor BasicBlock::forward(const Tensor& x) {
  Tensor out = bn1_->forward(conv1_->forward(x)).relu();
  out = bn2_->forward(conv2_->forward(out));
  return (out + (downsample_ ? downsample_->forward(x) : x)).relu();
}

ResNet::ResNet(int64_t num_classes, int64_t blocks) : Module("ResNet") {
  conv1_ = register_module("conv1", conv3x3(3, 16, 1));
  bn1_ = register_module("bn1", std::make_shared<nn::BatchNorm2d>(16));
  layer1_ = register_module("layer1", stage(16, 16, blocks, 1));
  layer2_ = register_module("layer2", stage(16, 32, blocks, 2));
  layer3_ = register_module("layer3", stage(32, 64, blocks, 2));
  avgpool_ = register_module("avgpool", std::make_shared<nn::AdaptiveAvgPool2d>(1));
  flatten_ = register_module("flatten", std::make_shared<nn::Flatten>());
  fc_ = register_module("fc", std::make_shared<nn::Linear>(64, num_classes));
}

Tensor ResNet::forward(const Tensor& x) {
  Tensor h = bn1_->forward(conv1_->forward(x)).relu();
  h = layer3_->forward(layer2_->forward(layer1_->forward(h)));
  return fc_->forward(flatten_->forward(avgpool_->forward(h)));
}

}  // namespace resnet
