// A memory snapshot without a GPU: a fixed workload on the caching allocator over the simulated
// device (alloc/simulated_provider.h) that leaves every block state in the picture. `gpu-anatomy
// memory-snapshot --simulated` draws it (docs/allocator.md shows the result); the tool reaches
// the allocator's internals only through this file.
#pragma once

#include <string>

#include "anatomy/cuda.h"

namespace anatomy::testing {

// Runs the workload once per process (its blocks stay allocated: they are the picture) and
// returns the allocator's snapshot, with its memory_summary() in `summary`.
alloc::MemorySnapshot simulated_snapshot(std::string& summary);

}  // namespace anatomy::testing
