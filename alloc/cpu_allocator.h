// The CPU allocator: 64-byte aligned blocks (a cache line, and the widest vector register), with
// counters of live bytes and blocks so tests can assert that nothing leaks. Blocks of up to 1 KiB
// are recycled through a small per-thread free list (alloc/cpu_allocator.cpp); the counters count
// blocks handed out, so a cached block is not live.
//
// The counters (live bytes and blocks, the bytes held from the system and their peak) are in
// alloc/cpu_memory_stats.h, which <anatomy/anatomy.h> includes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "anatomy/alloc/cpu_memory_stats.h"
#include "anatomy/core/allocator.h"

namespace anatomy::alloc {

inline constexpr size_t kCpuAlignment = 64;

Allocator* cpu_allocator();

}  // namespace anatomy::alloc
