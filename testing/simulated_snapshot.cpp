// The simulated device's snapshot workload (see simulated_snapshot.h).
#include "anatomy/testing/simulated_snapshot.h"

#include <vector>

#include "anatomy/alloc/caching_allocator.h"
#include "anatomy/alloc/simulated_provider.h"
#include "anatomy/dispatch/current_op.h"

namespace anatomy::testing {

// A fixed sequence that leaves every block state in the picture: small and large segments,
// holes left by frees, a block waiting for another stream (record_stream), and its events; and
// an expandable segment whose free middle empty_cache unmapped (the hatched range). Requests are
// named with CurrentOpScope, as a dispatched operator would name them.
alloc::MemorySnapshot simulated_snapshot(std::string& summary) {
  using alloc::kMB;
  static alloc::SimulatedProvider device(256 * kMB);  // static: the allocator's blocks live in it
  static alloc::CachingAllocator cache(device, alloc::AllocConf{});
  cache.record_memory_history(true, 1000);
  auto alloc_in = [&](const char* op, size_t n, alloc::StreamId s = 0) {
    dispatch::CurrentOpScope scope(op);
    return cache.raw_alloc(n, s);
  };
  alloc::AllocConf expandable;
  expandable.expandable_segments = true;
  cache.set_conf(expandable);
  void* kv = alloc_in("aten::empty.memory_format", 5 * kMB, 2);
  void* scratch = alloc_in("aten::cat", 50 * kMB, 2);
  void* kv2 = alloc_in("aten::empty.memory_format", 5 * kMB, 2);
  cache.raw_free(scratch);
  cache.empty_cache();  // the pages [20, 40) MiB of stream 2's segment go back
  cache.set_conf(alloc::AllocConf{});
  (void)kv, (void)kv2;
  std::vector<void*> small;
  for (int i = 0; i < 12; ++i)
    small.push_back(alloc_in(i % 2 ? "aten::add.Tensor" : "aten::mul.Tensor", 40000 + 9000 * i));
  for (int i = 0; i < 12; i += 3) cache.raw_free(small[i]);  // holes in the small segment
  void* weight = alloc_in("aten::randn", 6 * kMB);
  void* act = alloc_in("aten::mm", 4 * kMB);
  void* tmp = alloc_in("aten::softmax", 3 * kMB);
  void* grad = alloc_in("aten::mm", 24 * kMB);  // a segment of its own size
  cache.raw_free(tmp);
  void* shared = alloc_in("aten::copy_", 2 * kMB, 0);
  cache.record_stream(shared, 1);  // stream 1 still reads it:
  cache.raw_free(shared);          // freed, pending until stream 1's event completes
  void* side = alloc_in("aten::empty.memory_format", 500000, 1);
  (void)weight, (void)act, (void)grad, (void)side;  // kept alive: they are the picture
  summary = cache.memory_summary();
  return cache.memory_snapshot();
}

}  // namespace anatomy::testing
