// The driver functions of driver_api.h, fetched from the runtime by name and ABI version.
#include "anatomy/backends/cuda/runtime/driver_api.h"

#include <cuda_runtime_api.h>

#include "anatomy/core/error.h"

namespace anatomy::cuda {
namespace {

// The ABI the typedefs above were written for: every function here kept its 10.2 (or older)
// signature through CUDA 12, so asking for 12.0's version gets exactly those.
constexpr unsigned kDriverAbiVersion = 12000;

template <typename Fn>
bool lookup(const char* symbol, Fn& fn) {
  void* ptr = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t err = cudaGetDriverEntryPointByVersion(symbol, &ptr, kDriverAbiVersion, cudaEnableDefault, &status);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();  // no driver: not an error of whatever runs next
    return false;
  }
  if (status != cudaDriverEntryPointSuccess || ptr == nullptr) return false;
  fn = reinterpret_cast<Fn>(ptr);
  return true;
}

DriverApi load() {
  DriverApi api;
  bool ok = true;
  ok = ok && lookup("cuGetErrorName", api.cuGetErrorName);
  ok = ok && lookup("cuDeviceGet", api.cuDeviceGet);
  ok = ok && lookup("cuDeviceGetAttribute", api.cuDeviceGetAttribute);
  ok = ok && lookup("cuMemGetAllocationGranularity", api.cuMemGetAllocationGranularity);
  ok = ok && lookup("cuMemAddressReserve", api.cuMemAddressReserve);
  ok = ok && lookup("cuMemAddressFree", api.cuMemAddressFree);
  ok = ok && lookup("cuMemCreate", api.cuMemCreate);
  ok = ok && lookup("cuMemRelease", api.cuMemRelease);
  ok = ok && lookup("cuMemMap", api.cuMemMap);
  ok = ok && lookup("cuMemUnmap", api.cuMemUnmap);
  ok = ok && lookup("cuMemSetAccess", api.cuMemSetAccess);
  ok = ok && lookup("cuCtxGetCurrent", api.cuCtxGetCurrent);
  ok = ok && lookup("cuCtxGetId", api.cuCtxGetId);
  if (!ok) return DriverApi{};
  api.available = true;
  return api;
}

}  // namespace

const DriverApi& driver_api() {
  static const DriverApi api = load();
  return api;
}

namespace detail {

void throw_driver_error(CUresult err, const char* call, const char* file, int line) {
  const char* name = nullptr;
  if (driver_api().cuGetErrorName == nullptr || driver_api().cuGetErrorName(err, &name) != CUDA_SUCCESS) name = "?";
  std::string msg =
      fmt::format("CUDA driver error: {} ({}) in {} at {}:{}", name, static_cast<int>(err), call, file, line);
  if (err == CUDA_ERROR_OUT_OF_MEMORY) throw OutOfMemoryError(msg);
  throw DeviceError(msg);
}

}  // namespace detail
}  // namespace anatomy::cuda
