// Intra-op parallelism on the CPU: a small pool of worker threads and parallel_for.
//
// Note [Intra-op parallelism]
// parallel_for(begin, end, grain, fn) splits [begin, end) into contiguous ranges of at least
// `grain` elements, at most one per thread, and calls fn(range_begin, range_end) for each: the
// calling thread runs one range, pool workers the others, and the call returns when all are
// done. Ranges smaller than two grains run inline on the caller, so small tensors never pay for
// a thread hand-off. A parallel_for inside another runs serially (no oversubscription). The
// first exception thrown by fn is rethrown in the caller once every range has finished.
//
// The thread count defaults to ANATOMY_NUM_THREADS, else OMP_NUM_THREADS, else the machine's
// cores; set_num_threads changes it (1 turns the pool off). It governs every CPU kernel, the products (split over the
// pool) and oneDNN's convolutions (which run on OpenMP threads, set to this count per call).
#pragma once

#include <cstdint>
#include <functional>

namespace anatomy {

// Element-wise kernels split work in ranges of at least this many elements: below it, waking
// threads costs more than the loop.
inline constexpr int64_t kParallelGrain = 32768;

int get_num_threads();
// Takes effect for the next parallel_for, and for the next convolution on oneDNN (its OpenMP
// threads follow this count); ValueError when n < 1.
void set_num_threads(int n);
// True inside a range run by parallel_for (on any thread).
bool in_parallel_region();

namespace detail {
void parallel_for_impl(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);
}  // namespace detail

template <typename F>
void parallel_for(int64_t begin, int64_t end, int64_t grain, const F& fn) {
  if (end <= begin) return;
  if (end - begin < 2 * grain || in_parallel_region() || get_num_threads() == 1) {
    fn(begin, end);
    return;
  }
  detail::parallel_for_impl(begin, end, grain, fn);
}

}  // namespace anatomy
