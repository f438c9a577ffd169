// The per-device-type default generators.
#include "anatomy/core/generator.h"

namespace anatomy {

Generator& default_generator(DeviceType type) {
  static Generator generators[kNumDeviceTypes];
  return generators[static_cast<int>(type)];
}

}  // namespace anatomy
