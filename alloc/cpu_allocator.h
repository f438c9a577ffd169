// The CPU allocator: 64-byte aligned blocks (a cache line, and the widest vector register), with
// counters of live bytes and blocks so tests can assert that nothing leaks. Blocks of up to 1 KiB
// are recycled through a small per-thread free list (alloc/cpu_allocator.cpp); the counters count
// blocks handed out, so a cached block is not live.
//
// The memory held from the system (blocks handed out plus blocks on the free lists, each with
// its header line) is counted exactly, across threads, with its peak: that is what a program's
// footprint is, and what activation checkpointing lowers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "anatomy/core/allocator.h"

namespace anatomy::alloc {

inline constexpr size_t kCpuAlignment = 64;

Allocator* cpu_allocator();

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
