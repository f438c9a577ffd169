// oneDNN's sgemm as the CPU's matrix products call it (blas_cpu.cpp): on the calling thread
// only, so the engine's pool splits a product for it as it does for OpenBLAS (Note [One thread
// pool for products] in blas_cpu.cpp).
#pragma once

#include <cstdint>

namespace anatomy::cpu {

// Whether oneDNN's sgemm may be asked: the build has oneDNN (libdnnl-dev found when it was
// configured) and it has not refused a call in this process.
bool have_onednn_sgemm() noexcept;

// c = alpha * op(a) @ op(b) + beta * c, row-major, as cblas_sgemm(CblasRowMajor, ...): op(a) is
// [n, k], op(b) [k, m]; beta == 0 never reads c. The caller has checked the sizes (the leading
// dimensions cover their rows). Returns false, having written nothing, where oneDNN refuses the
// call (and from then on without asking it: Note [oneDNN beside another oneDNN]) or the build
// has no oneDNN; the caller then computes the product another way.
bool onednn_sgemm(bool trans_a, bool trans_b, int64_t n, int64_t m, int64_t k, float alpha, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace anatomy::cpu
