// CudaMemoryProvider (see cuda_memory_provider.h). Each call makes the provider's device current
// for its duration, since the caching allocator may call from a thread whose current device is
// another one (a tensor freed there).
#include "anatomy/backends/cuda/memory/cuda_memory_provider.h"

#include <cstdint>
#include <optional>

#include "anatomy/backends/cuda/runtime/capture.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/backends/cuda/runtime/driver_api.h"

namespace anatomy::cuda {
namespace {

// Pinned device memory of `device`, the only kind the allocator maps.
CUmemAllocationProp device_allocation(int device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  return prop;
}

// The device's cuMemCreate granularity, or 0 when the driver or the device lacks virtual memory
// management (the allocator then refuses expandable_segments:True).
size_t vmm_granularity(int device) {
  const DriverApi& api = driver_api();
  if (!api.available) return 0;
  CUdevice dev = 0;
  int supported = 0;
  if (api.cuDeviceGet(&dev, device) != CUDA_SUCCESS ||
      api.cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev) !=
          CUDA_SUCCESS ||
      supported == 0) {
    return 0;
  }
  const CUmemAllocationProp prop = device_allocation(device);
  size_t granularity = 0;
  if (api.cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS) {
    return 0;
  }
  return granularity;
}

CUdeviceptr device_ptr(void* ptr) { return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(ptr)); }

}  // namespace

alloc::StreamId stream_id(cudaStream_t stream) {
  return stream == cudaStreamLegacy || stream == nullptr
             ? 0
             : static_cast<alloc::StreamId>(reinterpret_cast<intptr_t>(stream));
}

cudaStream_t stream_of(alloc::StreamId id) {
  return id == 0 ? cudaStreamLegacy : reinterpret_cast<cudaStream_t>(static_cast<intptr_t>(id));
}

CudaMemoryProvider::CudaMemoryProvider(int device)
    : index_(device), device_(DeviceType::CUDA, static_cast<Device::Index>(device)) {
  DeviceGuard guard(index_);
  size_t free_bytes = 0;
  ANATOMY_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_));
  granularity_ = vmm_granularity(index_);
}

void* CudaMemoryProvider::reserve(size_t nbytes) {
  DeviceGuard guard(index_);
  // A capture on this thread grows its private pool with cudaMalloc, which global and
  // thread-local capture modes forbid: the thread's mode is relaxed for the call, as PyTorch's
  // cudaMallocMaybeCapturing does. Another thread's global capture forbids it outright.
  std::optional<RelaxedCaptureMode> relaxed;
  if (ANATOMY_UNLIKELY(captures_underway())) {
    if (thread_is_capturing()) relaxed.emplace();
    else check_not_capturing("the CUDA caching allocator", "a cudaMalloc to grow the cache");
  }
  void* ptr = nullptr;
  const cudaError_t err = cudaMalloc(&ptr, nbytes);
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // clear it: the allocator frees cache and retries
    return nullptr;
  }
  if (err != cudaSuccess) detail::throw_cuda_error(err, "cudaMalloc", __FILE__, __LINE__);
  return ptr;
}

void CudaMemoryProvider::release(void* ptr, size_t /*nbytes*/) {
  DeviceGuard guard(index_);
  std::optional<RelaxedCaptureMode> relaxed;  // as reserve: the ladder may release while this thread captures
  if (ANATOMY_UNLIKELY(captures_underway()) && thread_is_capturing()) relaxed.emplace();
  ANATOMY_CUDA_CHECK(cudaFree(ptr));
}

void* CudaMemoryProvider::reserve_address(size_t nbytes) {
  DeviceGuard guard(index_);
  CUdeviceptr ptr = 0;
  const CUresult err = driver_api().cuMemAddressReserve(&ptr, nbytes, granularity_, 0, 0);
  if (err == CUDA_ERROR_OUT_OF_MEMORY) return nullptr;  // address space exhausted
  if (err != CUDA_SUCCESS) detail::throw_driver_error(err, "cuMemAddressReserve", __FILE__, __LINE__);
  return reinterpret_cast<void*>(static_cast<uintptr_t>(ptr));
}

void CudaMemoryProvider::release_address(void* ptr, size_t nbytes) {
  DeviceGuard guard(index_);
  ANATOMY_CU_CHECK(driver_api().cuMemAddressFree(device_ptr(ptr), nbytes));
}

// The handle is released as soon as it is mapped: the driver keeps the memory until the mapping
// goes (cuMemUnmap), so the provider needs no table of handles.
bool CudaMemoryProvider::map(void* ptr, size_t nbytes) {
  DeviceGuard guard(index_);
  const DriverApi& api = driver_api();
  const CUmemAllocationProp prop = device_allocation(index_);
  CUmemGenericAllocationHandle handle = 0;
  const CUresult err = api.cuMemCreate(&handle, nbytes, &prop, 0);
  if (err == CUDA_ERROR_OUT_OF_MEMORY) return false;  // the allocator frees cache and retries
  if (err != CUDA_SUCCESS) detail::throw_driver_error(err, "cuMemCreate", __FILE__, __LINE__);
  const CUresult mapped = api.cuMemMap(device_ptr(ptr), nbytes, 0, handle, 0);
  if (mapped != CUDA_SUCCESS) {
    (void)api.cuMemRelease(handle);  // the error to report is the map's
    detail::throw_driver_error(mapped, "cuMemMap", __FILE__, __LINE__);
  }
  ANATOMY_CU_CHECK(api.cuMemRelease(handle));  // the mapping holds the memory from here on
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  const CUresult granted = api.cuMemSetAccess(device_ptr(ptr), nbytes, &access, 1);
  if (granted != CUDA_SUCCESS) {
    (void)api.cuMemUnmap(device_ptr(ptr), nbytes);  // the error to report is the access's
    detail::throw_driver_error(granted, "cuMemSetAccess", __FILE__, __LINE__);
  }
  return true;
}

// Unlike cudaFree, cuMemUnmap does not wait for work still using the memory, and the allocator
// unmaps blocks freed in stream order, so wait for the device first (unmapping happens only when
// cache is released: empty_cache, the out-of-memory path, garbage collection).
void CudaMemoryProvider::unmap(void* ptr, size_t nbytes) {
  DeviceGuard guard(index_);
  ANATOMY_CUDA_CHECK(cudaDeviceSynchronize());
  ANATOMY_CU_CHECK(driver_api().cuMemUnmap(device_ptr(ptr), nbytes));
}

alloc::EventId CudaMemoryProvider::create_event() {
  DeviceGuard guard(index_);
  cudaEvent_t event = nullptr;
  ANATOMY_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  return static_cast<alloc::EventId>(reinterpret_cast<uintptr_t>(event));
}

void CudaMemoryProvider::record_event(alloc::EventId event, alloc::StreamId stream) {
  DeviceGuard guard(index_);
  ANATOMY_CUDA_CHECK(cudaEventRecord(reinterpret_cast<cudaEvent_t>(static_cast<uintptr_t>(event)), stream_of(stream)));
}

bool CudaMemoryProvider::query_event(alloc::EventId event) {
  const cudaError_t err = cudaEventQuery(reinterpret_cast<cudaEvent_t>(static_cast<uintptr_t>(event)));
  if (err == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  if (err != cudaSuccess) detail::throw_cuda_error(err, "cudaEventQuery", __FILE__, __LINE__);
  return true;
}

void CudaMemoryProvider::destroy_event(alloc::EventId event) {
  DeviceGuard guard(index_);
  ANATOMY_CUDA_CHECK(cudaEventDestroy(reinterpret_cast<cudaEvent_t>(static_cast<uintptr_t>(event))));
}

void CudaMemoryProvider::synchronize() {
  DeviceGuard guard(index_);
  ANATOMY_CUDA_CHECK(cudaDeviceSynchronize());
}

// The calling thread's current stream of this provider's device (a thread-local read): a block
// belongs to the stream that allocates it.
// On every allocation: the provider's device is valid, so no checks (current_stream(int) resolves
// and checks the index, a third of a cached pair's time).
alloc::StreamId CudaMemoryProvider::current_stream() const { return stream_id(current_stream_handle(index_)); }

size_t CudaMemoryProvider::total_memory() const { return total_; }

size_t CudaMemoryProvider::free_memory() const {
  DeviceGuard guard(index_);
  size_t free_bytes = 0, total_bytes = 0;
  ANATOMY_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes;
}

}  // namespace anatomy::cuda
