// Synthetic images to classify: class k is a fixed random pattern (3 x size x size, N(0, 1), drawn
// once from the seed) plus fresh Gaussian noise of standard deviation `noise` in every sample. A
// model that has learnt the patterns classifies them; the loss of one that has not stays near
// ln(classes).
#pragma once

#include <utility>

#include "anatomy/anatomy.h"

namespace resnet {

class SyntheticImages {
 public:
  SyntheticImages(int64_t classes, int64_t size, double noise, anatomy::Device device);
  // A batch of images [batch, 3, size, size] (float32) and their labels [batch] (int64), uniform
  // over the classes, from the CPU generator.
  std::pair<anatomy::Tensor, anatomy::Tensor> batch(int64_t batch) const;
  int64_t classes() const { return patterns_.size(0); }

 private:
  anatomy::Tensor patterns_;  // [classes, 3, size, size] on the CPU
  double noise_;
  anatomy::Device device_;
};

}  // namespace resnet
