// The intra-op thread pool (Note [Intra-op parallelism]).
#include "anatomy/core/parallel.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "anatomy/core/error.h"

namespace anatomy {
namespace {

thread_local bool t_in_parallel = false;

// ANATOMY_NUM_THREADS, else OMP_NUM_THREADS (as torch reads it: one setting for both engines in a
// process), else the machine's cores. A value that is not a positive number is passed over.
int default_num_threads() {
  for (const char* name : {"ANATOMY_NUM_THREADS", "OMP_NUM_THREADS"}) {
    if (const char* env = std::getenv(name)) {
      const int n = std::atoi(env);
      if (n >= 1) return n;
    }
  }
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::atomic<int> g_num_threads{0};  // 0: not yet read from the environment

// Note [Waking the pool]
// A thread asleep on a condition variable takes tens of microseconds to run again after a
// notify on a virtual machine (a parallel_for of two 12 us ranges took 32 us on average on a
// 2-vCPU host, 14 us at best; two 25 us ranges 77 us), longer than many ranges take: a product
// of 128^3 on two threads ran 2x slower than on one. So a worker that finishes a job watches
// for the next one for kSpinFor before it sleeps, and the caller watches for its job's last
// range the same way before it sleeps: in a loop of operators (a training step, a benchmark)
// the next job finds the workers awake. The watch pauses for its first iterations, then yields
// the core (sched_yield) between looks, so a thread with real work on that core runs; after
// kSpinFor without a job the worker sleeps as before. OpenMP runtimes and OpenBLAS spin the
// same way, longer (libgomp about 0.3 ms by default).
constexpr auto kSpinFor = std::chrono::microseconds(50);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Watches `ready` for up to kSpinFor (Note [Waking the pool]); true once it holds.
template <typename Ready>
bool watch(const Ready& ready) {
  constexpr int kPauses = 64;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0;; ++i) {
    if (ready()) return true;
    if (i < kPauses) {
      cpu_relax();
      continue;
    }
    if (i % 16 == 0 && std::chrono::steady_clock::now() - start > kSpinFor) return false;
    std::this_thread::yield();
  }
}

// One job at a time: a caller holds submit_mutex_ while its ranges run, so concurrent callers
// from different user threads queue up instead of sharing workers mid-job.
class ThreadPool {
 public:
  static ThreadPool& instance() {
    static ThreadPool* pool = new ThreadPool();  // never destroyed: workers may outlive main's statics
    return *pool;
  }

  void run(int64_t begin, int64_t end, int64_t grain, int threads, const std::function<void(int64_t, int64_t)>& fn) {
    std::lock_guard<std::mutex> submit(submit_mutex_);
    ensure_workers(threads - 1);
    const int64_t n = end - begin;
    const int64_t chunks = std::min({static_cast<int64_t>(threads), (n + grain - 1) / grain, kMaxChunks});
    const int64_t per = (n + chunks - 1) / chunks;
    uint64_t generation = 0;
    {
      std::lock_guard<std::mutex> g(mutex_);
      fn_ = &fn;
      begin_ = begin;
      end_ = end;
      per_ = per;
      num_chunks_.store(chunks);
      pending_.store(chunks);
      error_ = nullptr;
      // The fields above and the chunks' open marks, then the generation, which releases them
      // all to a worker that reads it (Note [Each thread its own chunk]).
      generation = generation_.load() + 1;
      for (int64_t c = 0; c < chunks; ++c) claims_[c].store(open_mark(generation), std::memory_order_relaxed);
      generation_.store(generation);
    }
    wake_.notify_all();
    run_chunks(0, generation);
    if (!watch([&] { return pending_.load() == 0; })) {
      std::unique_lock<std::mutex> lock(mutex_);
      done_.wait(lock, [&] { return pending_.load() == 0; });
    }
    std::lock_guard<std::mutex> g(mutex_);
    fn_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  // Note [Each thread its own chunk]
  // Chunk k of every run goes to thread k (the caller is 0, the k-th worker k), as OpenMP's
  // static schedule gives, so that a thread works on the same part of an operand from one call
  // to the next: the pages it first touched (the NUMA node they were placed on) and what its own
  // caches hold. A thread that has done its chunk, or finds it taken, takes any chunk still
  // open, so a late worker never holds a run up. A chunk is claimed by changing its mark from
  // "open in generation g" to "taken in generation g": a worker still scanning an earlier run
  // asks for that run's generation, whose chunks are all taken, so it can claim nothing of the
  // next one.
  static constexpr int64_t kMaxChunks = 1024;
  static uint64_t open_mark(uint64_t generation) { return 2 * generation; }

  bool claim(int64_t c, uint64_t generation) {
    uint64_t open = open_mark(generation);
    return claims_[c].load(std::memory_order_relaxed) == open && claims_[c].compare_exchange_strong(open, open + 1);
  }

  void run_chunks(int64_t own, uint64_t generation) {
    const int64_t chunks = num_chunks_.load();
    if (own < chunks && claim(own, generation)) run_chunk(own);
    for (int64_t c = 0; c < chunks; ++c) {
      if (claim(c, generation)) run_chunk(c);
    }
  }

  void ensure_workers(int wanted) {
    while (static_cast<int>(workers_.size()) < wanted) {
      const int64_t id = static_cast<int64_t>(workers_.size()) + 1;  // the caller is thread 0
      workers_.emplace_back([this, id] { worker(id); });
    }
  }

  void run_chunk(int64_t c) {
    const int64_t b = begin_ + c * per_, e = std::min(end_, b + per_);
    t_in_parallel = true;
    try {
      if (b < e) (*fn_)(b, e);
    } catch (...) {
      std::lock_guard<std::mutex> g(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    t_in_parallel = false;
    if (pending_.fetch_sub(1) == 1) {
      // The caller may be asleep on done_: the lock orders this notify after its last look.
      std::lock_guard<std::mutex> g(mutex_);
      done_.notify_all();
    }
  }

  void worker(int64_t id) {
    uint64_t seen = 0;
    while (true) {
      if (!watch([&] { return generation_.load() != seen; })) {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return generation_.load() != seen; });
      }
      seen = generation_.load();
      run_chunks(id, seen);
    }
  }

  std::mutex submit_mutex_, mutex_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t begin_ = 0, end_ = 0, per_ = 0;
  std::atomic<int64_t> num_chunks_{0}, pending_{0};
  std::array<std::atomic<uint64_t>, kMaxChunks> claims_{};  // each chunk's mark (open_mark)
  std::atomic<uint64_t> generation_{0};
  std::exception_ptr error_;
};

}  // namespace

int get_num_threads() {
  int n = g_num_threads.load(std::memory_order_relaxed);
  if (n == 0) {
    n = default_num_threads();
    g_num_threads.store(n, std::memory_order_relaxed);
  }
  return n;
}

void set_num_threads(int n) {
  ANATOMY_CHECK(n >= 1, ValueError, "set_num_threads: the thread count must be at least 1, got {}", n);
  g_num_threads.store(n, std::memory_order_relaxed);
}

bool in_parallel_region() { return t_in_parallel; }

namespace detail {
void parallel_for_impl(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  ThreadPool::instance().run(begin, end, grain, get_num_threads(), fn);
}
}  // namespace detail

}  // namespace anatomy
