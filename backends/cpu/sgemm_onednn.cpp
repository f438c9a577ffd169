// oneDNN's sgemm on the calling thread (sgemm_onednn.h).
//
// Debian builds oneDNN on OpenMP: dnnl_sgemm splits its work over omp_get_max_threads() threads
// of the thread that calls it, starting an OpenMP team there. The engine's pool threads already
// split the product into one call per thread, so each call sets that thread's OpenMP thread
// count (a per-thread setting) to 1 for its duration (openmp_threads.h): no team starts and no
// OpenMP threads spin beside the pool's. The convolutions, which hand oneDNN the whole problem on
// the caller's thread, set it to the engine's thread count instead.
//
// Note [oneDNN beside another oneDNN]
// A process can hold two copies of oneDNN: Debian's libdnnl.so.2 (2.6) here and one built into
// another library, such as libtorch_cpu.so's (3.x) in a C++ program linking both. The dynamic
// linker resolves symbols that both copies define by name, once for the process, and the
// template code of oneDNN's GEMM (the std::call_once lambdas of gemm_info_t<...>::jit_init()) is
// exported by both: seen on an H100 host, libdnnl's calls bound to libtorch_cpu's copies, so
// libdnnl's kernels were never generated and every dnnl_sgemm returned dnnl_unimplemented. So a
// refusal is not an error here: the product goes to OpenBLAS, and after the first refusal
// oneDNN is not asked again in this process. (Python loads each extension with RTLD_LOCAL, so
// `import anatomy` beside `import torch` keeps the two apart; gpu-anatomy loads its PyTorch peer
// as a module with RTLD_LOCAL | RTLD_DEEPBIND for the same reason, tools/peer_module.cpp.)
#include "anatomy/backends/cpu/sgemm_onednn.h"

#include <atomic>

#if defined(ANATOMY_WITH_ONEDNN)
#include <oneapi/dnnl/dnnl.h>

#include "anatomy/backends/cpu/openmp_threads.h"
#endif

namespace anatomy::cpu {

#if defined(ANATOMY_WITH_ONEDNN)

namespace {
std::atomic<bool> g_refused{false};  // Note [oneDNN beside another oneDNN]
}  // namespace

bool have_onednn_sgemm() noexcept { return !g_refused.load(std::memory_order_relaxed); }

bool onednn_sgemm(bool trans_a, bool trans_b, int64_t n, int64_t m, int64_t k, float alpha, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (g_refused.load(std::memory_order_relaxed)) return false;
  const OpenMpThreads one_thread(1);
  const dnnl_status_t status =
      dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', n, m, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (status == dnnl_success) return true;
  g_refused.store(true, std::memory_order_relaxed);
  return false;
}

#else

bool have_onednn_sgemm() noexcept { return false; }

bool onednn_sgemm(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t, float,
                  float*, int64_t) {
  return false;
}

#endif

}  // namespace anatomy::cpu
