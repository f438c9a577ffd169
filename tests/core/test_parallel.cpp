// The intra-op thread pool and the parallel walk of the iteration plan: every element visited
// exactly once whatever the split, exceptions carried back to the caller, nesting run serially.
#include <atomic>
#include <stdexcept>
#include <thread>

#include "test_util.h"

#include "anatomy/anatomy.h"

using namespace anatomy;
using namespace anatomy_test;

namespace {
// Restores the thread count a test changed.
struct ThreadCountGuard {
  int saved = get_num_threads();
  ~ThreadCountGuard() { set_num_threads(saved); }
};
}  // namespace

TEST_CASE("parallel_for covers every index exactly once, for any thread count") {
  ThreadCountGuard guard;
  for (int threads : {1, 2, 3, 8}) {
    set_num_threads(threads);
    for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{100}, int64_t{65536}, int64_t{100003}}) {
      INFO("threads " << threads << ", n " << n);
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      std::atomic<int> ranges{0};
      parallel_for(0, n, 1000, [&](int64_t b, int64_t e) {
        CHECK(b < e);
        ++ranges;
        for (int64_t i = b; i < e; ++i) hits[i]++;
      });
      int wrong = 0;
      for (auto& h : hits) wrong += h.load() != 1;
      CHECK(wrong == 0);
      CHECK(ranges.load() <= std::max(1, threads));
    }
  }
}

TEST_CASE("set_num_threads refuses a count below one and keeps the one it had") {
  ThreadCountGuard guard;
  set_num_threads(3);
  for (int bad : {0, -1}) {
    CHECK_THROWS_AS(set_num_threads(bad), ValueError);
    CHECK(get_num_threads() == 3);
  }
  CHECK_THROWS_WITH(set_num_threads(0),
                    doctest::Contains("set_num_threads: the thread count must be at least 1, got 0"));
}

TEST_CASE("parallel_for runs small ranges and nested calls on the calling thread") {
  ThreadCountGuard guard;
  set_num_threads(4);
  const auto caller = std::this_thread::get_id();
  bool same = false;
  parallel_for(0, 100, kParallelGrain, [&](int64_t, int64_t) { same = std::this_thread::get_id() == caller; });
  CHECK(same);
  std::atomic<int> nested_elsewhere{0};
  parallel_for(0, 4 * kParallelGrain, kParallelGrain, [&](int64_t, int64_t) {
    CHECK(in_parallel_region());
    const auto outer = std::this_thread::get_id();
    parallel_for(0, 4 * kParallelGrain, kParallelGrain, [&](int64_t, int64_t) {
      if (std::this_thread::get_id() != outer) ++nested_elsewhere;
    });
  });
  CHECK(nested_elsewhere.load() == 0);
  CHECK(!in_parallel_region());
}

TEST_CASE("parallel_for rethrows the first exception after every range finished") {
  ThreadCountGuard guard;
  set_num_threads(4);
  std::atomic<int> finished{0};
  CHECK_THROWS_AS(parallel_for(0, 8 * kParallelGrain, kParallelGrain,
                               [&](int64_t b, int64_t) {
                                 if (b == 0) throw std::runtime_error("range 0 failed");
                                 ++finished;
                               }),
                  std::runtime_error);
  CHECK(finished.load() == 3);
  // The pool is still usable.
  std::atomic<int64_t> sum{0};
  parallel_for(0, 8 * kParallelGrain, kParallelGrain, [&](int64_t b, int64_t e) { sum += e - b; });
  CHECK(sum.load() == 8 * kParallelGrain);
}

TEST_CASE("element-wise kernels split over threads agree with one thread on strided operands") {
  ThreadCountGuard guard;
  manual_seed(5);
  // Transposed, sliced and broadcast operands large enough to be split mid-row.
  Tensor a = randn({301, 517}).t();
  Tensor b = randn({600, 301}).slice(0, 3, 520);
  Tensor c = randn({1, 301});
  set_num_threads(1);
  const D serial_ab = values(a + b), serial_ac = values(a * c);
  for (int threads : {2, 3, 7}) {
    INFO("threads " << threads);
    set_num_threads(threads);
    CHECK(values(a + b) == serial_ab);
    CHECK(values(a * c) == serial_ac);
    Tensor out = empty({517, 301}).t();  // a transposed out= layout
    add_out(out, a.t(), b.t());
    CHECK(values(out.t()) == serial_ab);
  }
}
