// memory_summary: the caching allocator's counters as a table for people, laid out like PyTorch's
// torch.cuda.memory_summary(): one row per stat (and per pool under it), with its current, peak,
// total allocated and total freed values, bytes in binary units.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "anatomy/alloc/memory_stats.h"
#include "anatomy/alloc/private_pool.h"

namespace anatomy::alloc {

// The table for `stats`; `title` names what it describes (e.g. "device cuda:0"). Each of `pools`
// (the allocator's private pools) gets a line at the end: its users, reserved and allocated bytes.
std::string format_memory_summary(const MemoryStats& stats, std::string_view title,
                                  const std::vector<PoolStats>& pools = {});

// "2.00 MiB", "512 B": `bytes` in the largest binary unit that keeps it at or above 1.
std::string format_bytes(int64_t bytes);

}  // namespace anatomy::alloc
