// The precision switches' storage (see precision_switches.h).
#include "anatomy/core/precision_switches.h"

#include <atomic>

#include "anatomy/core/error.h"

namespace anatomy {
namespace {

constexpr bool kTf32Default = false;
constexpr bool kFp16ReducedDefault = true;
constexpr bool kBf16ReducedDefault = true;
constexpr bool kFp16AccumulationDefault = false;
constexpr bool kCudnnTf32Default = true;
constexpr bool kCudnnBenchmarkDefault = false;

std::atomic<bool> g_tf32{kTf32Default};
std::atomic<bool> g_fp16_reduced{kFp16ReducedDefault};
std::atomic<bool> g_bf16_reduced{kBf16ReducedDefault};
std::atomic<bool> g_fp16_accumulation{kFp16AccumulationDefault};
std::atomic<bool> g_cudnn_tf32{kCudnnTf32Default};
std::atomic<bool> g_cudnn_benchmark{kCudnnBenchmarkDefault};
std::atomic<CpuBlasLibrary> g_cpu_blas{CpuBlasLibrary::Default};

}  // namespace

bool allow_tf32_matmul() noexcept { return g_tf32.load(std::memory_order_relaxed); }
void set_allow_tf32_matmul(bool allow) noexcept { g_tf32.store(allow, std::memory_order_relaxed); }

bool allow_fp16_reduced_precision_reduction() noexcept { return g_fp16_reduced.load(std::memory_order_relaxed); }
void set_allow_fp16_reduced_precision_reduction(bool allow) noexcept {
  g_fp16_reduced.store(allow, std::memory_order_relaxed);
}

bool allow_bf16_reduced_precision_reduction() noexcept { return g_bf16_reduced.load(std::memory_order_relaxed); }
void set_allow_bf16_reduced_precision_reduction(bool allow) noexcept {
  g_bf16_reduced.store(allow, std::memory_order_relaxed);
}

bool allow_fp16_accumulation() noexcept { return g_fp16_accumulation.load(std::memory_order_relaxed); }
void set_allow_fp16_accumulation(bool allow) noexcept { g_fp16_accumulation.store(allow, std::memory_order_relaxed); }

bool allow_tf32_cudnn() noexcept { return g_cudnn_tf32.load(std::memory_order_relaxed); }
void set_allow_tf32_cudnn(bool allow) noexcept { g_cudnn_tf32.store(allow, std::memory_order_relaxed); }

bool cudnn_benchmark() noexcept { return g_cudnn_benchmark.load(std::memory_order_relaxed); }
void set_cudnn_benchmark(bool enabled) noexcept { g_cudnn_benchmark.store(enabled, std::memory_order_relaxed); }

CpuBlasLibrary preferred_cpu_blas_library() noexcept { return g_cpu_blas.load(std::memory_order_relaxed); }
bool cpu_blas_library_available(CpuBlasLibrary library) noexcept {
#if defined(ANATOMY_WITH_ONEDNN)
  constexpr bool kHaveOneDnn = true;
#else
  constexpr bool kHaveOneDnn = false;
#endif
  return library != CpuBlasLibrary::OneDNN || kHaveOneDnn;
}
void set_preferred_cpu_blas_library(CpuBlasLibrary library) {
  ANATOMY_CHECK(cpu_blas_library_available(library), ValueError,
                "set_preferred_cpu_blas_library: this build of anatomy has no oneDNN (libdnnl-dev was not found when "
                "it was configured)");
  g_cpu_blas.store(library, std::memory_order_relaxed);
}

void reset_precision_switches() noexcept {
  set_allow_tf32_matmul(kTf32Default);
  set_allow_fp16_reduced_precision_reduction(kFp16ReducedDefault);
  set_allow_bf16_reduced_precision_reduction(kBf16ReducedDefault);
  set_allow_fp16_accumulation(kFp16AccumulationDefault);
  set_allow_tf32_cudnn(kCudnnTf32Default);
  set_cudnn_benchmark(kCudnnBenchmarkDefault);
  g_cpu_blas.store(CpuBlasLibrary::Default, std::memory_order_relaxed);
}

}  // namespace anatomy
