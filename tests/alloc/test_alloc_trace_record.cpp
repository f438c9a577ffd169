// A memory history turned into an allocation trace (testing/alloc_trace_record.h), on the
// simulated device: the events of a known sequence become the trace they stand for (address
// reuse gives new ids, blocks from before the recording and blocks never freed are handled), a
// replay of the trace through a fresh allocator reaches the same peaks as the recorded run, and a
// ring too small for the run fails rather than giving a partial trace; a trace survives a round
// trip through its text file; and the transformer's training on the CPU, its memory from a caching
// allocator, records a trace that replays to the training's own peaks.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "anatomy/alloc/caching_allocator.h"
#include "anatomy/alloc/simulated_provider.h"
#include "anatomy/anatomy.h"
#include "anatomy/cuda.h"
#include "anatomy/testing/alloc_trace_record.h"
#include "anatomy/testing/alloc_trace_replay.h"
#include "anatomy/testing/transformer_step.h"

using namespace anatomy::alloc;
using anatomy::testing::AllocTrace;
using anatomy::testing::AllocTraceEvent;
using anatomy::testing::RecordedTrace;

namespace {

bool same_events(const AllocTrace& got, const AllocTrace& want) {
  if (got.size() != want.size()) return false;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i].is_alloc != want[i].is_alloc || got[i].id != want[i].id || got[i].size != want[i].size) return false;
  }
  return true;
}

std::string dump(const AllocTrace& t) {
  std::ostringstream s;
  for (const AllocTraceEvent& e : t) s << (e.is_alloc ? "alloc " : "free ") << e.id << " " << e.size << ", ";
  return s.str();
}

// Small and large blocks, frees out of order, and an address handed out twice.
void known_sequence(CachingAllocator& a) {
  void* x = a.raw_alloc(1000, 0);
  void* y = a.raw_alloc(3 * kMB, 0);
  void* z = a.raw_alloc(700, 0);
  a.raw_free(x);
  void* x2 = a.raw_alloc(900, 0);  // the same cached block as x: a new allocation
  CHECK(x2 == x);
  void* w = a.raw_alloc(25 * kMB, 0);
  a.raw_free(y);
  a.raw_free(w);
  a.raw_free(z);
  a.raw_free(x2);
}

}  // namespace

TEST_CASE("alloc trace record: a known sequence becomes its trace, and its replay reaches the same peaks") {
  SimulatedProvider p(1024 * kMB);
  CachingAllocator a(p, AllocConf{});
  const RecordedTrace r = anatomy::testing::record_trace(a, 1000, [&] { known_sequence(a); });
  const AllocTrace want = {{true, 0, 1000},     {true, 1, 3 * kMB}, {true, 2, 700}, {false, 0, 0}, {true, 3, 900},
                           {true, 4, 25 * kMB}, {false, 1, 0},      {false, 4, 0},  {false, 2, 0}, {false, 3, 0}};
  CHECK_MESSAGE(same_events(r.trace, want), dump(r.trace));
  CHECK(r.events > r.trace.size());  // the segment reservations were read too, and left out
  CHECK(r.earlier_frees == 0);
  CHECK(r.closed == 0);
  CHECK_FALSE(a.memory_snapshot().trace_max_entries > 0);  // recording is off again

  // The recorded run's peaks, from an allocator as empty as the replay's.
  SimulatedProvider p2(1024 * kMB);
  CachingAllocator recorded(p2, AllocConf{});
  recorded.record_memory_history(true, 1000);
  known_sequence(recorded);
  const MemoryStats rs = recorded.stats();
  const RecordedTrace again = anatomy::testing::trace_from_history(recorded.memory_snapshot().trace);
  CHECK(same_events(again.trace, r.trace));

  SimulatedProvider p3(1024 * kMB);
  CachingAllocator fresh(p3, AllocConf{});
  const anatomy::testing::FragmentationFigures f = anatomy::testing::replay_fragmentation(r.trace, fresh);
  CHECK(f.peak_allocated == rs.allocated_bytes[StatType::All].peak);
  CHECK(f.peak_reserved == rs.reserved_bytes[StatType::All].peak);
  CHECK(f.peak_requested == rs.requested_bytes[StatType::All].peak);
  CHECK(f.peak_requested == static_cast<int64_t>(anatomy::testing::summarize(r.trace).peak_live));
}

TEST_CASE("alloc trace record: blocks from before the recording and blocks never freed") {
  SimulatedProvider p(256 * kMB);
  CachingAllocator a(p, AllocConf{});
  void* before = a.raw_alloc(4096, 0);
  void* kept = nullptr;
  const RecordedTrace r = anatomy::testing::record_trace(a, 100, [&] {
    void* t = a.raw_alloc(2048, 0);
    a.raw_free(before);  // allocated before recording: not in the trace
    kept = a.raw_alloc(5 * kMB, 0);
    a.raw_free(t);
  });
  const AllocTrace want = {{true, 0, 2048}, {true, 1, 5 * kMB}, {false, 0, 0}, {false, 1, 0}};
  CHECK_MESSAGE(same_events(r.trace, want), dump(r.trace));
  CHECK(r.earlier_frees == 1);
  CHECK(r.closed == 1);  // kept: freed at the end of the trace
  CHECK(anatomy::testing::summarize(r.trace).balanced);
  a.raw_free(kept);
}

TEST_CASE("alloc trace record: a ring too small for the run fails loudly") {
  SimulatedProvider p(256 * kMB);
  CachingAllocator a(p, AllocConf{});
  auto run = [&] {
    for (int i = 0; i < 10; ++i) a.raw_free(a.raw_alloc(1024, 0));
  };
  // The small pool's segment, then 10 allocations, each with its free requested and completed: 31 events.
  CHECK_THROWS_WITH_AS(
      anatomy::testing::record_trace(a, 8, run),
      doctest::Contains("dropped its 23 oldest events (the ring kept 8): record with max_entries of at "
                        "least 31"),
      anatomy::ValueError);
  CHECK_FALSE(a.memory_snapshot().trace_max_entries > 0);              // recording is off after the failure too
  const RecordedTrace r = anatomy::testing::record_trace(a, 30, run);  // the segment is cached now: 30 events
  CHECK(r.events == 30);
  CHECK(r.trace.size() == 20);

  // A history that skips an event, or allocates a live address, is refused too.
  std::vector<TraceEntry> skipped = {{TraceAction::Alloc, 0x1000, 10, 0, 0, 0, nullptr},
                                     {TraceAction::FreeRequested, 0x1000, 10, 0, 2, 0, nullptr}};
  CHECK_THROWS_AS(anatomy::testing::trace_from_history(skipped), anatomy::ValueError);
  std::vector<TraceEntry> twice = {{TraceAction::Alloc, 0x1000, 10, 0, 0, 0, nullptr},
                                   {TraceAction::Alloc, 0x1000, 10, 0, 1, 0, nullptr}};
  CHECK_THROWS_WITH_AS(anatomy::testing::trace_from_history(twice), doctest::Contains("allocation 0 still holds"),
                       anatomy::ValueError);
}

TEST_CASE("alloc trace record: a trace written to a file reads back the same, and a bad file is refused") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::string path = (dir / ("anatomy_alloc_trace_" + std::to_string(::getpid()) + ".txt")).string();
  const AllocTrace trace = anatomy::testing::transformer_trace();
  anatomy::testing::write_trace(path, trace);
  CHECK(same_events(anatomy::testing::read_trace(path), trace));

  {
    std::ofstream bad(path);
    bad << "anatomy-alloc-trace 1\na 0 100\nf 0 7\n";
  }
  CHECK_THROWS_WITH_AS(anatomy::testing::read_trace(path), doctest::Contains("line 3"), anatomy::ValueError);
  {
    std::ofstream bad(path);
    bad << "a 0 100\n";
  }
  CHECK_THROWS_WITH_AS(anatomy::testing::read_trace(path), doctest::Contains("does not start with"),
                       anatomy::ValueError);
  std::filesystem::remove(path);
  CHECK_THROWS_AS(anatomy::testing::read_trace(path), anatomy::ValueError);
  CHECK_THROWS_AS(anatomy::testing::write_trace((dir / "no_such_dir" / "t.txt").string(), trace), anatomy::ValueError);
}

// The real thing at CPU size: the transformer of testing/transformer_step.h trains on CPU tensors
// whose memory comes from a caching allocator over a simulated device (installed as the CPU
// allocator for the run), and the trace recorded from its history replays through a fresh
// allocator to the peaks the training itself reached.
TEST_CASE("alloc trace record: the transformer's training recorded through a caching allocator replays to its peaks") {
  // Never destroyed: a tensor of the run kept alive somewhere must still be able to free itself.
  static auto* provider = new SimulatedProvider(size_t{4} << 30, anatomy::Device(anatomy::DeviceType::CPU));
  static auto* cache = new CachingAllocator(*provider, AllocConf{});
  anatomy::testing::TransformerStepConfig c;
  c.seq_lens = {16, 12, 20, 8};
  std::vector<double> losses;
  anatomy::Allocator* cpu = anatomy::get_allocator(anatomy::DeviceType::CPU);
  cache->reset_peak_stats();
  anatomy::set_allocator(anatomy::DeviceType::CPU, cache);
  RecordedTrace r;
  try {
    r = anatomy::testing::record_trace(*cache, size_t{1} << 20,
                                       [&] { losses = anatomy::testing::train_transformer(c); });
  } catch (...) {
    anatomy::set_allocator(anatomy::DeviceType::CPU, cpu);
    throw;
  }
  anatomy::set_allocator(anatomy::DeviceType::CPU, cpu);
  const MemoryStats run = cache->stats();
  for (double l : losses) CHECK(std::isfinite(l));
  const anatomy::testing::AllocTraceSummary s = anatomy::testing::summarize(r.trace);
  CHECK(s.balanced);
  CHECK(r.closed == 0);  // the training frees everything it allocated
  CHECK(r.earlier_frees == 0);
  CHECK(s.allocs > 1000);  // forward, backward and optimizer, four steps
  CHECK(run.allocated_bytes[StatType::All].current == 0);

  SimulatedProvider p(size_t{4} << 30);
  CachingAllocator fresh(p, AllocConf{});
  const anatomy::testing::FragmentationFigures f = anatomy::testing::replay_fragmentation(r.trace, fresh);
  MESSAGE(s.allocs << " allocations; the run: reserved / allocated / requested "
                   << run.reserved_bytes[StatType::All].peak << " / " << run.allocated_bytes[StatType::All].peak
                   << " / " << run.requested_bytes[StatType::All].peak << "; the replay: " << f.peak_reserved << " / "
                   << f.peak_allocated << " / " << f.peak_requested);
  CHECK(f.peak_requested == run.requested_bytes[StatType::All].peak);
  CHECK(f.peak_allocated == run.allocated_bytes[StatType::All].peak);
  CHECK(f.peak_reserved == run.reserved_bytes[StatType::All].peak);
}
