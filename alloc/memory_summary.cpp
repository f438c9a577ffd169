// The text table of memory_summary() (see memory_summary.h). Each row's unit is chosen from the
// row's peak, as PyTorch does, so the current and peak columns of one row read in the same unit.
#include "anatomy/alloc/memory_summary.h"

#include <fmt/format.h>

#include <array>

#include "anatomy/alloc/caching_allocator.h"

namespace anatomy::alloc {
namespace {

constexpr int kWidth = 79;  // characters between the outer bars

// `value` in the unit suited to `scale` (a row's peak), right-aligned in 7 characters plus unit.
std::string format_scaled_bytes(int64_t value, int64_t scale) {
  static constexpr std::array<const char*, 6> kUnits = {"B  ", "KiB", "MiB", "GiB", "TiB", "PiB"};
  size_t unit = 0;
  while (unit + 1 < kUnits.size() && scale >= 768 * 1024) {
    value /= 1024;
    scale /= 1024;
    ++unit;
  }
  return fmt::format("{:>7} {}", value, kUnits[unit]);
}

std::string format_scaled_count(int64_t value, int64_t scale) {
  static constexpr std::array<const char*, 4> kUnits = {" ", "K", "M", "G"};
  size_t unit = 0;
  while (unit + 1 < kUnits.size() && scale >= 750 * 1000) {
    value /= 1000;
    scale /= 1000;
    ++unit;
  }
  return fmt::format("{:>9} {}", value, kUnits[unit]);
}

std::string rule(char c) { return "|" + std::string(kWidth, c) + "|\n"; }

std::string centered(std::string_view text) { return fmt::format("|{:^{}}|\n", text, kWidth); }

// A stat's three rows: all pools, then the large and the small pool.
std::string stat_rows(std::string_view name, const StatArray& stat, bool bytes) {
  std::string out;
  const std::array<std::pair<StatType, const char*>, 3> rows = {
      {{StatType::All, ""}, {StatType::Large, "      from large pool"}, {StatType::Small, "      from small pool"}}};
  for (const auto& [type, label] : rows) {
    const Stat& s = stat[type];
    auto cell = [&](int64_t v, int64_t scale) {
      return bytes ? format_scaled_bytes(v, scale) : format_scaled_count(v, scale);
    };
    std::string head = type == StatType::All ? std::string(name) : std::string(label);
    out += fmt::format("| {:<21} | {} | {} | {} | {} |\n", head, cell(s.current, s.peak), cell(s.peak, s.peak),
                       cell(s.allocated, s.allocated), cell(s.freed, s.freed));
  }
  return out;
}

}  // namespace

std::string format_bytes(int64_t bytes) {
  static constexpr std::array<const char*, 6> kUnits = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024 && bytes > -1024) return fmt::format("{} B", bytes);
  double v = static_cast<double>(bytes);
  size_t unit = 0;
  while (unit + 1 < kUnits.size() && (v >= 1024 || v <= -1024)) {
    v /= 1024;
    ++unit;
  }
  return fmt::format("{:.2f} {}", v, kUnits[unit]);
}

std::string format_memory_summary(const MemoryStats& s, std::string_view title, const std::vector<PoolStats>& pools) {
  std::string out = rule('=');
  out += centered(fmt::format("anatomy caching allocator memory summary, {}", title));
  out += rule('-');
  out += fmt::format("| {:^37}|{:^39} |\n", fmt::format("OOMs: {}", s.num_ooms),
                     fmt::format("alloc retries: {}", s.num_alloc_retries));
  out += rule('=');
  out += "|        Metric         | Cur Usage   | Peak Usage  | Tot Alloc   | Tot Freed   |\n";
  const std::array<std::tuple<const char*, const StatArray*, bool>, 9> stats = {{
      {"Allocated memory", &s.allocated_bytes, true},
      {"Active memory", &s.active_bytes, true},
      {"Requested memory", &s.requested_bytes, true},
      {"Reserved memory", &s.reserved_bytes, true},
      {"Non-releasable memory", &s.inactive_split_bytes, true},
      {"Allocations", &s.allocation, false},
      {"Active allocs", &s.active, false},
      {"Reserved segments", &s.segment, false},
      {"Non-releasable allocs", &s.inactive_split, false},
  }};
  for (const auto& [name, stat, bytes] : stats) {
    out += rule('-');
    out += stat_rows(name, *stat, bytes);
  }
  out += rule('-');
  out += fmt::format("| {:<77} |\n", fmt::format("provider reservations (cudaMalloc): {}, releases (cudaFree): {}",
                                                 s.num_provider_allocs, s.num_provider_frees));
  if (s.num_provider_maps > 0) {  // expandable segments
    out += fmt::format("| {:<77} |\n", fmt::format("provider page maps (cuMemMap): {}, unmaps (cuMemUnmap): {}",
                                                   s.num_provider_maps, s.num_provider_unmaps));
  }
  out += fmt::format("| {:<77} |\n", fmt::format("device-wide synchronizations: {}", s.num_sync_all_streams));
  for (const PoolStats& p : pools) {
    out += fmt::format("| {:<77} |\n", fmt::format("private pool {} ({} users{}): {} reserved, {} allocated",
                                                   p.id.value, p.use_count, p.routing ? ", routing" : "",
                                                   format_bytes(p.reserved_bytes), format_bytes(p.allocated_bytes)));
  }
  out += rule('=');
  return out;
}

std::string CachingAllocator::memory_summary() const {
  return format_memory_summary(stats(), fmt::format("device {}", device().str()), pools());
}

}  // namespace anatomy::alloc
