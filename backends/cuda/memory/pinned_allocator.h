// Page-locked (pinned) host memory for asynchronous copies: `pin_memory(t)`, `is_pinned(t)`, and
// the caching allocator behind them. A copy between the device and pinned memory runs
// asynchronously (non_blocking=true), which pageable memory cannot do.
//
// Blocks come in power-of-two size classes from cudaHostAlloc (or, with
// pinned_use_cuda_host_register:True in the ALLOC_CONF, from malloc registered with
// cudaHostRegister) and are cached when freed. A copy that reads or writes a pinned block
// records an event on its stream; a freed block is handed out again only once every such event
// has completed, so the next user cannot overwrite bytes a queued copy still reads.
//
//   Tensor host = cuda::pin_memory(randn({1024}));
//   Tensor dev = empty({1024}, cuda_options);
//   dev.copy_(host, /*non_blocking=*/true);   // returns before the copy is done
#pragma once

#include <cstdint>

#include "anatomy/core/allocator.h"
#include "anatomy/core/tensor.h"
#include "anatomy/cuda.h"

namespace anatomy::cuda {

Allocator* pinned_allocator();

// pin_memory(t) (a contiguous copy of CPU tensor t in pinned memory) and is_pinned(t) are
// declared in <anatomy/cuda.h>. Whether `ptr` is page-locked host memory (from pin_memory or any
// cudaHostAlloc):
bool is_pinned(const void* ptr);

// The pinned block holding `ptr` (if it is one of this allocator's) is used by work queued on
// `stream` (a cudaStream_t) of the current device: it is not handed out again before that work
// is done.
void record_pinned_use(const void* ptr, void* stream);

struct PinnedMemoryStats {
  int64_t allocated_bytes = 0;  // blocks in use (size-class bytes)
  int64_t reserved_bytes = 0;   // every block held, in use, waiting on events, or cached
  int64_t allocations = 0;      // blocks handed out so far
  int64_t host_allocs = 0;      // cudaHostAlloc / cudaHostRegister calls
};
PinnedMemoryStats pinned_memory_stats();
// Gives cached pinned blocks whose events have completed back to the system.
void empty_pinned_cache();

}  // namespace anatomy::cuda
