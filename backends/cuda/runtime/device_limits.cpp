// The per-device table behind current_device_limits().
#include "anatomy/backends/cuda/runtime/device_limits.h"

#include <cuda_runtime_api.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/core/error.h"

namespace anatomy::cuda {
namespace {

DeviceLimits query(int device) {
  auto attribute = [device](cudaDeviceAttr a) {
    int v = 0;
    ANATOMY_CUDA_CHECK(cudaDeviceGetAttribute(&v, a, device));
    return v;
  };
  DeviceLimits l;
  l.device = device;
  l.multiprocessors = attribute(cudaDevAttrMultiProcessorCount);
  l.shared_memory_per_multiprocessor = attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor);
  l.shared_memory_per_block_optin = attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin);
  l.reserved_shared_memory_per_block = attribute(cudaDevAttrReservedSharedMemoryPerBlock);
  l.max_threads_per_multiprocessor = attribute(cudaDevAttrMaxThreadsPerMultiProcessor);
  l.l2_bytes = attribute(cudaDevAttrL2CacheSize);
  l.cluster_launch = attribute(cudaDevAttrClusterLaunch) != 0;
  const char* pdl = std::getenv("ANATOMY_CUDA_PDL");
  l.dependent_launch =
      attribute(cudaDevAttrComputeCapabilityMajor) >= 9 && (pdl == nullptr || std::strcmp(pdl, "0") != 0);
  return l;
}

}  // namespace

const DeviceLimits& current_device_limits() {
  static std::array<DeviceLimits, kDeviceLimitsDevices> table{};
  static std::array<std::once_flag, kDeviceLimitsDevices> once;
  const int device = current_device();
  ANATOMY_CHECK(device >= 0 && device < kDeviceLimitsDevices, DeviceError,
                "current_device_limits: device {} is beyond the {} this table holds", device, kDeviceLimitsDevices);
  std::call_once(once[device], [&] { table[device] = query(device); });
  return table[device];
}

}  // namespace anatomy::cuda
