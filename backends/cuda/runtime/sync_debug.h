// The sync-debug mode: every call that makes the host wait for the device reports itself, so a
// hidden synchronization in a training loop is found by running it once with the mode on.
//
//   cuda::set_sync_debug_mode(cuda::SyncDebugMode::Warn);   // one line on stderr per wait
//   cuda::set_sync_debug_mode(cuda::SyncDebugMode::Error);   // DeviceError instead, before waiting
//
// The waits (docs/cuda.md, "Where the host waits"): a copy into host memory (cpu(), item(),
// printing), a blocking copy from pinned host memory, cuda::synchronize() and empty_cache().
// As torch.cuda.set_sync_debug_mode. Process-wide; off by default, a relaxed atomic load when off.
#pragma once

#include <cstddef>

#include "anatomy/cuda.h"

namespace anatomy::cuda {

// SyncDebugMode, set_sync_debug_mode and sync_debug_mode are declared in <anatomy/cuda.h>.

namespace detail {
void report_synchronization(const char* op, const char* what);
}  // namespace detail

// Called by each synchronizing call before it waits. While a CUDA graph capture that the wait
// would break is underway, throws DeviceError first (check_not_capturing, capture.h). `op` names the operator or
// function that asked ("aten::_local_scalar_dense", "cuda::synchronize"), `what` the wait itself. Warn prints one line
// to stderr; Error throws DeviceError and nothing waits.
void check_synchronization(const char* op, const char* what);

}  // namespace anatomy::cuda
