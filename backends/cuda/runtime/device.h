// CUDA devices, the backend's side: the checks every device entry point makes. The public half
// (device_count, is_available, properties, the current device, DeviceGuard, synchronize) is
// declared in <anatomy/cuda.h> and implemented in device.cpp.
//
// Plain C++ (no CUDA headers). Nothing here touches CUDA until it is called: loading the library
// never initializes the driver.
#pragma once

#include "anatomy/core/device.h"
#include "anatomy/cuda.h"

namespace anatomy::cuda {

// Throws DeviceError "<op>: CUDA is not available: no CUDA device was found (cudaGetDeviceCount:
// ...)" when device_count() is 0.
void check_available(const char* op);
// The index a CUDA Device stands for: its own, or the current device's for "cuda" (-1). Throws
// DeviceError when CUDA is not available or the index is not below device_count().
int resolve_device_index(Device device, const char* op);
// The same for an index: `index`, or the current device's for -1.
int resolve_device_index(int index, const char* op);

}  // namespace anatomy::cuda
