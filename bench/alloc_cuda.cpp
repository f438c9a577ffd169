// The cached 1 MiB allocate + free pair over CUDA, taken apart: the pair through the device's
// caching allocator as a tensor's storage asks for it (CudaAllocator::allocate: current device,
// the device's allocator, the provider's current stream), the same with the allocator in hand,
// raw_alloc/raw_free with the stream in hand (the policy alone), and each lookup on its own.
// What the pair costs above the policy is the sum of the lookups. bench/peer/alloc.cpp measures
// the whole pair next to torch's; bench/alloc.cpp the policy on the simulated device.
//
//   build/bench/anatomy_bench_alloc_cuda --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include "anatomy/alloc/caching_allocator.h"
#include "anatomy/backend.h"
#include "anatomy/backends/cuda/memory/cuda_allocator.h"
#include "anatomy/backends/cuda/memory/cuda_memory_provider.h"
#include "anatomy/backends/cuda/runtime/driver_api.h"
#include "anatomy/cuda.h"

namespace {

constexpr size_t kPairBytes = size_t{1} << 20;

bool skip_without_gpu(benchmark::State& state) {
  if (anatomy::cuda::device_count() > 0) return false;
  state.SkipWithError("no CUDA device");
  return true;
}

// The pair as a CUDA tensor's storage asks for it: the registered CUDA allocator.
void BM_CudaPairThroughDeviceAllocator(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  anatomy::Allocator* device = anatomy::get_allocator(anatomy::DeviceType::CUDA);
  { anatomy::DataPtr warm = device->allocate(kPairBytes); }
  for (auto _ : state) {
    anatomy::DataPtr p = device->allocate(kPairBytes);
    benchmark::DoNotOptimize(p.get());
  }
}
BENCHMARK(BM_CudaPairThroughDeviceAllocator);

// The pair with cuda:0's caching allocator in hand (what bench/peer's alloc_free_1mib_cuda does
// after its lookup): allocate still asks the provider for the current stream.
void BM_CudaPairCachingAllocator(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  anatomy::alloc::CachingAllocator& cache = anatomy::cuda::caching_allocator(0);
  { anatomy::DataPtr warm = cache.allocate(kPairBytes); }
  for (auto _ : state) {
    anatomy::DataPtr p = cache.allocate(kPairBytes);
    benchmark::DoNotOptimize(p.get());
  }
}
BENCHMARK(BM_CudaPairCachingAllocator);

// The policy alone: raw_alloc with the stream given, raw_free by pointer.
void BM_CudaPairRaw(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  anatomy::alloc::CachingAllocator& cache = anatomy::cuda::caching_allocator(0);
  const anatomy::alloc::StreamId stream = anatomy::cuda::stream_id(anatomy::cuda::current_stream(0).handle());
  cache.raw_free(cache.raw_alloc(kPairBytes, stream));
  for (auto _ : state) {
    void* p = cache.raw_alloc(kPairBytes, stream);
    benchmark::DoNotOptimize(p);
    cache.raw_free(p);
  }
}
BENCHMARK(BM_CudaPairRaw);

void BM_CudaGetDevice(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  for (auto _ : state) {
    int device = -1;
    cudaGetDevice(&device);
    benchmark::DoNotOptimize(device);
  }
}
BENCHMARK(BM_CudaGetDevice);

// What current_device() reads outside a guard instead (Note [The current device outside a guard]).
void BM_CudaCurrentContextAndId(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  const anatomy::cuda::DriverApi& api = anatomy::cuda::driver_api();
  for (auto _ : state) {
    CUcontext context = nullptr;
    unsigned long long id = 0;
    api.cuCtxGetCurrent(&context);
    api.cuCtxGetId(context, &id);
    benchmark::DoNotOptimize(id);
  }
}
BENCHMARK(BM_CudaCurrentContextAndId);

void BM_CudaCurrentDevice(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  for (auto _ : state) benchmark::DoNotOptimize(anatomy::cuda::current_device());
}
BENCHMARK(BM_CudaCurrentDevice);

void BM_CudaCurrentStreamOfDevice(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  for (auto _ : state) benchmark::DoNotOptimize(anatomy::cuda::current_stream(0).handle());
}
BENCHMARK(BM_CudaCurrentStreamOfDevice);

void BM_CudaCachingAllocatorLookup(benchmark::State& state) {
  if (skip_without_gpu(state)) return;
  for (auto _ : state) benchmark::DoNotOptimize(&anatomy::cuda::caching_allocator());
}
BENCHMARK(BM_CudaCachingAllocatorLookup);

}  // namespace

BENCHMARK_MAIN();
