// CUDA devices: how many there are, what each one is, and which one is current.
//
// This header is plain C++ (no CUDA headers), so tools and tests use it without the CUDA
// Toolkit on their include path. Nothing here touches CUDA until it is called: loading the
// library never initializes the driver.
#pragma once

#include <cstdint>
#include <string>

#include "anatomy/core/device.h"

namespace anatomy::cuda {

// The number of visible CUDA devices, queried once per process (as the runtime reads
// CUDA_VISIBLE_DEVICES once). 0, never an error, when there is no driver or no GPU.
int device_count() noexcept;
bool is_available() noexcept;
// Why device_count() is 0, as "cudaGetDeviceCount: <CUDA's message>"; empty when devices exist.
std::string unavailable_reason();

// Throws DeviceError "<op>: CUDA is not available: no CUDA device was found (cudaGetDeviceCount:
// ...)" when device_count() is 0.
void check_available(const char* op);
// The index a CUDA Device stands for: its own, or the current device's for "cuda" (-1). Throws
// DeviceError when CUDA is not available or the index is not below device_count().
int resolve_device_index(Device device, const char* op);
// The same for an index: `index`, or the current device's for -1.
int resolve_device_index(int index, const char* op);

// The driver's and the runtime's CUDA versions as 1000 * major + 10 * minor (13000 is 13.0);
// 0 when there is no driver.
int driver_version() noexcept;
int runtime_version() noexcept;

struct DeviceProperties {
  int index = 0;
  std::string name;              // "NVIDIA H100 80GB HBM3"
  int major = 0, minor = 0;      // compute capability (9.0 for Hopper)
  int multiprocessor_count = 0;  // SMs
  uint64_t total_memory = 0;     // global memory, bytes
  int l2_cache_size = 0;         // bytes
  int memory_clock_khz = 0;      // peak memory clock
  int memory_bus_width = 0;      // bits
  int clock_khz = 0;             // peak SM clock
  int driver_version = 0;        // as driver_version()
  int runtime_version = 0;       // as runtime_version()
};
// Throws DeviceError when `index` is not a visible device.
DeviceProperties get_device_properties(int index);

// The calling thread's current device, and changing it (DeviceError when out of range).
int current_device();
void set_device(int index);
// Waits until all work queued on a device (the current one for -1) is done.
void synchronize(int index = -1);

// Makes `index` the current device for a scope and restores the previous one on exit. -1
// leaves the current device alone (and touches no CUDA API), so a guard over a "cuda" device
// costs nothing. Inside a guard, current_device() needs no runtime call (Note [The device a
// DeviceGuard set], device.cpp).
class DeviceGuard {
 public:
  explicit DeviceGuard(int index);
  explicit DeviceGuard(Device device) : DeviceGuard(static_cast<int>(device.index())) {}
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

  // The device that was current when the guard was made (-1 when the guard did nothing).
  int original_device() const { return original_; }

 private:
  int original_ = -1;
  int outer_guard_device_ = -1;  // what an enclosing guard had made current (Note [The device a DeviceGuard set])
  bool changed_ = false;
  bool active_ = false;
};

}  // namespace anatomy::cuda
