// memory_summary(): the table of the caching allocator's stats, on the simulated device, with
// numbers a known sequence of allocations must produce.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "anatomy/alloc/caching_allocator.h"
#include "anatomy/alloc/memory_summary.h"
#include "anatomy/alloc/simulated_provider.h"
#include "anatomy/anatomy.h"

using namespace anatomy::alloc;

namespace {

// The table's row whose first cell is `name` (after the leading "| "), split into its cells.
std::vector<std::string> row(const std::string& table, const std::string& name) {
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| " + name + " ", 0) != 0) continue;
    std::vector<std::string> cells;
    std::istringstream cols(line);
    for (std::string cell; std::getline(cols, cell, '|');) {
      size_t b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
      if (b != std::string::npos) cells.push_back(cell.substr(b, e - b + 1));
    }
    return cells;
  }
  return {};
}

}  // namespace

TEST_CASE("caching allocator memory_summary: bytes in binary units") {
  CHECK(format_bytes(0) == "0 B");
  CHECK(format_bytes(1023) == "1023 B");
  CHECK(format_bytes(1536) == "1.50 KiB");
  CHECK(format_bytes(2 * static_cast<int64_t>(kMB)) == "2.00 MiB");
  CHECK(format_bytes(int64_t{3} << 30) == "3.00 GiB");
}

TEST_CASE("caching allocator memory_summary: rows, pools and columns of a known sequence") {
  SimulatedProvider p(64 * kMB);
  CachingAllocator a(p, AllocConf{});
  void* x = a.raw_alloc(1000, 0);     // small pool: a 2 MiB segment, a 1024-byte block
  void* y = a.raw_alloc(3 * kMB, 0);  // large pool: a 20 MiB segment, split
  a.raw_free(x);
  void* z = a.raw_alloc(512, 0);  // reuses x's place
  const std::string t = a.memory_summary();
  INFO(t);
  CHECK(t.find("device " + p.device().str()) != std::string::npos);  // privateuse1:0, or its renamed backend
  CHECK(t.find("OOMs: 0") != std::string::npos);
  CHECK(t.find("alloc retries: 0") != std::string::npos);
  // Every line is as wide as the frame.
  std::istringstream in(t);
  for (std::string line; std::getline(in, line);) CHECK(line.size() == 81);
  // A row's unit comes from its peak, and moves up once that is 768 of it (PyTorch's rule): the
  // 3 MiB allocations read in KiB. Allocated now 512 B + 3 MiB, peak 1024 B + 3 MiB, ever
  // allocated 1024 B + 512 B + 3 MiB, freed 1024 B.
  CHECK(row(t, "Allocated memory") ==
        std::vector<std::string>{"Allocated memory", "3072 KiB", "3073 KiB", "3073 KiB", "1024 B"});
  CHECK(row(t, "Requested memory") ==
        std::vector<std::string>{"Requested memory", "3072 KiB", "3072 KiB", "3073 KiB", "1000 B"});
  CHECK(row(t, "Reserved memory") ==
        std::vector<std::string>{"Reserved memory", "22528 KiB", "22528 KiB", "22528 KiB", "0 B"});
  CHECK(row(t, "Allocations") == std::vector<std::string>{"Allocations", "2", "2", "3", "1"});
  CHECK(row(t, "Reserved segments") == std::vector<std::string>{"Reserved segments", "2", "2", "2", "0"});
  // The pools' rows under each stat: the reserved 2 MiB small and 20 MiB large segments.
  size_t reserved = t.find("| Reserved memory ");
  CHECK(t.find("|       from large pool |   20480 KiB |", reserved) != std::string::npos);
  CHECK(t.find("|       from small pool |    2048 KiB |", reserved) != std::string::npos);
  // Non-releasable: the small segment's tail after z, and the large segment's 17 MiB tail.
  CHECK(row(t, "Non-releasable allocs")[1] == "2");
  a.raw_free(y);
  a.raw_free(z);
  CHECK(row(a.memory_summary(), "Allocations")[1] == "0");
  a.empty_cache();
  CHECK(row(a.memory_summary(), "Reserved memory")[1] == "0 KiB");      // in the unit of...
  CHECK(row(a.memory_summary(), "Reserved memory")[2] == "22528 KiB");  // ...the peak, which stays
}

TEST_CASE("caching allocator memory_summary: out-of-memory errors and retries are counted") {
  SimulatedProvider p(4 * kMB);
  CachingAllocator a(p, AllocConf{});
  CHECK_THROWS_AS(a.raw_alloc(8 * kMB, 0), anatomy::OutOfMemoryError);
  const std::string t = a.memory_summary();
  CHECK(t.find("OOMs: 1") != std::string::npos);
  CHECK(t.find("alloc retries: 1") != std::string::npos);
  CHECK(t.find("device-wide synchronizations: 1") != std::string::npos);
}
