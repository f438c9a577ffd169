// The current device's fixed limits that kernels' launch shapes depend on (SM count, shared
// memory), asked of the runtime once per device and then read from a table: they cannot change
// while the process runs, and cudaDeviceGetAttribute costs a call per launch otherwise.
//
// Plain C++ (no CUDA headers).
#pragma once

#include <cstdint>

namespace anatomy::cuda {

struct DeviceLimits {
  int device = -1;  // the index these are of
  int multiprocessors = 0;
  int shared_memory_per_multiprocessor = 0;  // bytes, all blocks resident on one SM together
  int shared_memory_per_block_optin = 0;     // bytes one block may ask for (static + dynamic)
  int reserved_shared_memory_per_block = 0;  // bytes the system keeps per resident block
  int max_threads_per_multiprocessor = 0;
  int64_t l2_bytes = 0;         // the L2 cache
  bool cluster_launch = false;  // thread block clusters (compute capability 9.0 and later)
  // Programmatic dependent launch (Note [Programmatic dependent launch]): compute capability 9.0
  // and later, unless the environment sets ANATOMY_CUDA_PDL=0.
  bool dependent_launch = false;
};

// Devices the table holds: current_device_limits raises DeviceError beyond them.
inline constexpr int kDeviceLimitsDevices = 64;

// The limits of the calling thread's current device.
const DeviceLimits& current_device_limits();

}  // namespace anatomy::cuda
