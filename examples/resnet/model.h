// A small ResNet for 3-channel images: a 3x3 stem, three stages of BasicBlocks at 16, 32 and 64
// channels (the second and third halve the resolution), global average pooling and a linear
// classifier, as torchvision's resnet for CIFAR-sized inputs, with fewer channels.
#pragma once

#include <memory>

#include "anatomy/anatomy.h"
#include "anatomy/nn/nn.h"

namespace resnet {

namespace nn = anatomy::nn;
using anatomy::Tensor;

// conv3x3-BN-ReLU, conv3x3-BN, plus the shortcut, then ReLU. Where the block changes the
// resolution or the channels, the shortcut is a strided conv1x1-BN ("downsample"), else the input.
class BasicBlock : public nn::Module {
 public:
  BasicBlock(int64_t in_channels, int64_t channels, int64_t stride);
  Tensor forward(const Tensor& x) override;

 private:
  std::shared_ptr<nn::Conv2d> conv1_;
  std::shared_ptr<nn::BatchNorm2d> bn1_;
  std::shared_ptr<nn::Conv2d> conv2_;
  std::shared_ptr<nn::BatchNorm2d> bn2_;
  std::shared_ptr<nn::Sequential> downsample_;  // null: the identity
};

// blocks: BasicBlocks per stage. The parameters' names are torchvision's ("layer2.0.downsample.0.weight").
class ResNet : public nn::Module {
 public:
  ResNet(int64_t num_classes, int64_t blocks);
  // [N, 3, H, W] images -> [N, num_classes] logits.
  Tensor forward(const Tensor& x) override;

 private:
  std::shared_ptr<nn::Conv2d> conv1_;
  std::shared_ptr<nn::BatchNorm2d> bn1_;
  std::shared_ptr<nn::Sequential> layer1_, layer2_, layer3_;
  std::shared_ptr<nn::AdaptiveAvgPool2d> avgpool_;
  std::shared_ptr<nn::Flatten> flatten_;
  std::shared_ptr<nn::Linear> fc_;
};

}  // namespace resnet
