// See synthetic_images.h.
#include "anatomy/examples/resnet/synthetic_images.h"

namespace resnet {

using anatomy::Tensor;

SyntheticImages::SyntheticImages(int64_t classes, int64_t size, double noise, anatomy::Device device)
    : patterns_(anatomy::randn({classes, 3, size, size})), noise_(noise), device_(device) {}

std::pair<Tensor, Tensor> SyntheticImages::batch(int64_t batch) const {
  const Tensor labels = anatomy::randint(0, classes(), {batch});
  const Tensor images =
      patterns_.index_select(0, labels) + anatomy::randn({batch, 3, patterns_.size(2), patterns_.size(3)}) * noise_;
  return {images.to(device_), labels.to(device_)};
}

}  // namespace resnet
