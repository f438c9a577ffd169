// A building block elementwise/ shares with norm/ (not a launcher: the room's is launch.h).
// Launching a kernel that may start before the kernel ahead of it on its stream has finished
// (Note [Programmatic dependent launch]), and the two instructions such a kernel runs.
//
// Device code only: included by .cu files, never by host .cpp files.
#pragma once

#include <cuda_runtime.h>

#include <utility>

#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/backends/cuda/runtime/device_limits.h"

namespace anatomy::cuda {

// Note [Programmatic dependent launch]
// A kernel launched with CUDA's programmatic-stream-serialization attribute (compute capability
// 9.0 and later) may be scheduled before the kernel ahead of it on the stream has completed:
// once every block of that kernel has run griddepcontrol.launch_dependents (or exited). Its
// blocks then stop in griddepcontrol.wait until the kernel ahead has completed and its writes
// are visible, so stream order holds for memory as it always does; what overlaps is the
// launch: the grid's setup and block scheduling happen while the kernel ahead runs. A stream
// capture keeps the relation as a programmatic edge of the graph. For a chain of small kernels,
// whose time is mostly their launch (a replayed graph of one-element adds), this is most of the
// time. The element-wise kernels are launched this way: each first lets its successor launch,
// then waits, before touching memory. Releasing first lets the successor be scheduled while this
// kernel still waits for the one ahead, so a chain's launches run several kernels ahead (a
// captured chain of one-element adds runs faster a node releasing first than waiting first or
// without the attribute: docs/perf.md, "A whole training step in one graph", "Element-wise
// kernels release their successor before they wait"). It cannot deadlock: a kernel is
// scheduled only once every block of the one ahead has run its release, so the one ahead has no
// block left to place, and its wait orders memory as a plain launch does (the one ahead completes only after
// its own wait, so completion is transitive). A kernel ahead that never triggers (cuBLAS's, a
// copy) just makes the wait last until it has finished, as without the attribute. The kernels of
// other families launch plainly; ANATOMY_CUDA_PDL=0 launches the element-wise ones plainly too
// (to compare).

// Run by every kernel launched by launch_dependent before it touches memory: nothing before it
// may read or write memory that the kernel ahead on the stream touches.
__device__ __forceinline__ void wait_for_prior_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Lets the next kernel on the stream be scheduled (it still waits for this one to finish).
__device__ __forceinline__ void release_next_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}

// kernel<<<grid, block, 0, stream>>>(args...), with programmatic stream serialization where the
// current device has it. `kernel` must run wait_for_prior_kernel() before it touches memory.
template <typename... Params, typename... Args>
void launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream, Args&&... args) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = current_device_limits().dependent_launch ? 1 : 0;
  ANATOMY_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
}

}  // namespace anatomy::cuda
