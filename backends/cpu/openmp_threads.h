// The calling thread's OpenMP thread count for the length of one call into oneDNN. Debian builds
// oneDNN on OpenMP, and a oneDNN call starts a team of omp_get_max_threads() threads of the thread
// that makes it; that count is a per-thread setting, so a guard on the caller's thread decides
// the call's threads alone and restores the caller's setting after. The convolutions run with the
// engine's thread count (set_num_threads, ANATOMY_NUM_THREADS) rather than OMP_NUM_THREADS, and
// the products, already split over the engine's pool, with one.
#pragma once

#if defined(ANATOMY_WITH_ONEDNN)
#include <omp.h>

namespace anatomy::cpu {

class OpenMpThreads {
 public:
  explicit OpenMpThreads(int n) : saved_(omp_get_max_threads()) { omp_set_num_threads(n); }
  ~OpenMpThreads() { omp_set_num_threads(saved_); }
  OpenMpThreads(const OpenMpThreads&) = delete;
  OpenMpThreads& operator=(const OpenMpThreads&) = delete;

 private:
  int saved_;
};

}  // namespace anatomy::cpu
#endif
