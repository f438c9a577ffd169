// The CPU allocator's counters, public through <anatomy/anatomy.h>: the CPU's counterpart of
// cuda::memory_allocated and cuda::max_memory_reserved (<anatomy/cuda.h>). The allocator itself
// is alloc/cpu_allocator.h.
//
// Live bytes and blocks count blocks handed out, so a block cached on a per-thread free list is
// not live. The memory held from the system (blocks handed out plus blocks on the free lists,
// each with its header line) is counted exactly, across threads, with its peak: that is what a
// program's footprint is, and what activation checkpointing lowers (docs/autograd.md, "Measuring
// peak memory"). Tensors of up to 256 bytes live inside their storage object and are counted as
// live, not as reserved (docs/tensor.md, "Allocators").
#pragma once

#include <cstdint>

namespace anatomy::alloc {

struct CpuAllocatorStats {
  int64_t live_bytes;      // bytes handed out and not yet freed
  int64_t live_blocks;     // blocks handed out and not yet freed
  int64_t total_allocs;    // blocks ever handed out
  int64_t reserved_bytes;  // bytes held from the system now: live and cached blocks, headers included
  int64_t peak_bytes;      // the most reserved_bytes since the start or reset_cpu_peak_stats()
};
CpuAllocatorStats cpu_allocator_stats();
// Starts a new peak at the bytes held now.
void reset_cpu_peak_stats();

}  // namespace anatomy::alloc
