// The per-device-type registry of DeviceStreams (see device_streams.h).
#include "anatomy/core/device_streams.h"

#include <atomic>

namespace anatomy {
namespace {
std::atomic<const DeviceStreams*> g_streams[kNumDeviceTypes];
}

const DeviceStreams* device_streams(DeviceType type) {
  return g_streams[static_cast<int>(type)].load(std::memory_order_acquire);
}

void set_device_streams(DeviceType type, const DeviceStreams* streams) {
  g_streams[static_cast<int>(type)].store(streams, std::memory_order_release);
}

}  // namespace anatomy
