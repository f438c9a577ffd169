// CUDA kernels of arange and linspace (see launch.h). Double products and sums use __dmul_rn and
// __dadd_rn so that nvcc does not fuse them into an FMA, which rounds once where the CPU's loop
// rounds twice: the two backends give the same bits.
#include "anatomy/backends/cuda/common/dtype_switch.h"
#include "anatomy/backends/cuda/common/launch_config.h"
#include "anatomy/backends/cuda/elementwise/launch.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/core/convert.h"

namespace anatomy::cuda {
namespace {

template <typename T>
__global__ void arange_integral_kernel(T* out, int64_t n, int64_t start, int64_t step) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    // Modulo 2^64: i * step alone may not fit int64 though the value does (range_cpu.cpp).
    out[i] = convert<T>(
        static_cast<int64_t>(static_cast<uint64_t>(start) + static_cast<uint64_t>(i) * static_cast<uint64_t>(step)));
  }
}

template <typename T>
__global__ void arange_floating_kernel(T* out, int64_t n, double start, double step) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = convert<T>(__dadd_rn(start, __dmul_rn(static_cast<double>(i), step)));
  }
}

template <typename T>
__global__ void linspace_kernel(T* out, int64_t steps, double a, double b, double step) {
  const int64_t half = (steps + 1) / 2;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < steps; i += stride) {
    const double v = i < half ? __dadd_rn(a, __dmul_rn(step, static_cast<double>(i)))
                              : __dsub_rn(b, __dmul_rn(step, static_cast<double>(steps - 1 - i)));
    out[i] = convert<T>(v);
  }
}

template <typename Launch>
void for_dtype(DType dtype, const char* op, Launch&& launch) {
  if (!dtype_switch(dtype, [&](auto tag) {
        launch(static_cast<typename decltype(tag)::type*>(nullptr));
        return true;
      })) {
    detail::throw_cuda_error(cudaErrorInvalidValue, op, __FILE__, __LINE__);
  }
  ANATOMY_CUDA_LAUNCH_CHECK();
}

}  // namespace

void launch_arange_integral(DType dtype, void* out, int64_t n, int64_t start, int64_t step, cudaStream_t stream) {
  for_dtype(dtype, "launch_arange_integral: unknown dtype", [&]<typename T>(T*) {
    arange_integral_kernel<T><<<grid_blocks(n), kBlockThreads, 0, stream>>>(static_cast<T*>(out), n, start, step);
  });
}

void launch_arange_floating(DType dtype, void* out, int64_t n, double start, double step, cudaStream_t stream) {
  for_dtype(dtype, "launch_arange_floating: unknown dtype", [&]<typename T>(T*) {
    arange_floating_kernel<T><<<grid_blocks(n), kBlockThreads, 0, stream>>>(static_cast<T*>(out), n, start, step);
  });
}

void launch_linspace(DType dtype, void* out, int64_t steps, double start, double end, double step,
                     cudaStream_t stream) {
  for_dtype(dtype, "launch_linspace: unknown dtype", [&]<typename T>(T*) {
    linspace_kernel<T><<<grid_blocks(steps), kBlockThreads, 0, stream>>>(static_cast<T*>(out), steps, start, end, step);
  });
}

}  // namespace anatomy::cuda
