// The CUDA driver functions anatomy calls: the virtual memory management API behind the caching
// allocator's expandable segments (cuMemAddressReserve, cuMemCreate, cuMemMap, ...), and
// cuCtxGetCurrent and cuCtxGetId. They are looked up at run time through the runtime's
// cudaGetDriverEntryPointByVersion instead of linking libcuda, so that libanatomy still loads on
// a machine with the toolkit but no driver (a build machine without a GPU), as it does with the
// runtime alone.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include "anatomy/core/macros.h"

namespace anatomy::cuda {

struct DriverApi {
  // False when the runtime found no driver, or a driver without one of the functions below; the
  // pointers are then null.
  bool available = false;
  PFN_cuGetErrorName_v6000 cuGetErrorName = nullptr;
  PFN_cuDeviceGet_v2000 cuDeviceGet = nullptr;
  PFN_cuDeviceGetAttribute_v2000 cuDeviceGetAttribute = nullptr;
  PFN_cuMemGetAllocationGranularity_v10020 cuMemGetAllocationGranularity = nullptr;
  PFN_cuMemAddressReserve_v10020 cuMemAddressReserve = nullptr;
  PFN_cuMemAddressFree_v10020 cuMemAddressFree = nullptr;
  PFN_cuMemCreate_v10020 cuMemCreate = nullptr;
  PFN_cuMemRelease_v10020 cuMemRelease = nullptr;
  PFN_cuMemMap_v10020 cuMemMap = nullptr;
  PFN_cuMemUnmap_v10020 cuMemUnmap = nullptr;
  PFN_cuMemSetAccess_v10020 cuMemSetAccess = nullptr;
  // The calling thread's current context and its process-unique id: how current_device() sees a
  // device change without cudaGetDevice (Note [The current device outside a guard], device.cpp).
  PFN_cuCtxGetCurrent_v4000 cuCtxGetCurrent = nullptr;
  PFN_cuCtxGetId_v12000 cuCtxGetId = nullptr;
};

// The functions, looked up once (thread-safe).
const DriverApi& driver_api();

namespace detail {
// Throws OutOfMemoryError for CUDA_ERROR_OUT_OF_MEMORY, DeviceError for the rest, naming the call
// and the driver's name of the error.
[[noreturn]] void throw_driver_error(CUresult err, const char* call, const char* file, int line);
}  // namespace detail

}  // namespace anatomy::cuda

// ANATOMY_CUDA_CHECK's twin for driver calls: ANATOMY_CU_CHECK(driver_api().cuMemUnmap(ptr, n)).
#define ANATOMY_CU_CHECK(expr)                                                                 \
  do {                                                                                         \
    const CUresult anatomy_cu_err_ = (expr);                                                   \
    if (ANATOMY_UNLIKELY(anatomy_cu_err_ != CUDA_SUCCESS)) {                                   \
      ::anatomy::cuda::detail::throw_driver_error(anatomy_cu_err_, #expr, __FILE__, __LINE__); \
    }                                                                                          \
  } while (0)
