// Registers a backend's mm, mm.out, bmm, bmm.out, addmm and baddbmm from its one compute
// function, so each backend writes the arithmetic and nothing else: the checks, the result's
// allocation, out= and beta handling live here once (the Meta backend's compute does nothing).
//
//   Compute(c, a, b, alpha, beta): c[i] = beta * c[i] + alpha * (a[i] @ b[i]) for 3-D a [B, n, k],
//   b [B, k, m] and a contiguous c [B, n, m] of the product's dtype. beta == 0 means c holds
//   garbage that must be ignored (NaN included), as BLAS does.
//
//   AddmmFused(out, self, mat1, mat2, beta, alpha), optional: computes addmm's whole result into
//   the freshly allocated contiguous `out` in one call (a bias epilogue) and returns true, or
//   returns false, having written nothing, for the general path (copy self, then Compute).
#pragma once

#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/matmul_checks.h"

namespace anatomy::dispatch {

using ProductCompute = void (*)(const Tensor& c, const Tensor& a, const Tensor& b, const Scalar& alpha,
                                const Scalar& beta);
using AddmmFused = bool (*)(const Tensor& out, const Tensor& self, const Tensor& mat1, const Tensor& mat2,
                            const Scalar& beta, const Scalar& alpha);

template <ProductCompute Compute, AddmmFused Fused = nullptr>
struct ProductKernels {
  static Tensor new_result(IntArrayRef shape, const Tensor& a) {
    return empty(shape, TensorOptions().dtype(product_dtype(a.dtype())).device(a.device()));
  }
  // Runs the product into `out` (a full-shape tensor), through a contiguous temporary when
  // out's layout is not contiguous. a, b, out are 3-D.
  static void run_into(const Tensor& out, const Tensor& a, const Tensor& b) {
    if (out.is_contiguous()) {
      Compute(out, a, b, 1, 0);
      return;
    }
    Tensor tmp = new_result(out.sizes(), a);
    Compute(tmp, a, b, 1, 0);
    out.copy_(tmp);
  }

  static Tensor mm(const Tensor& self, const Tensor& mat2) {
    Tensor out = new_result(check_mm("mm", self, mat2), self);
    Compute(out.unsqueeze(0), self.unsqueeze(0), mat2.unsqueeze(0), 1, 0);
    return out;
  }
  static Tensor mm_out(const Tensor& self, const Tensor& mat2, const Tensor& out) {
    const DimVector shape = check_mm("mm.out", self, mat2);
    check_product_out("mm.out", out, shape, product_dtype(self.dtype()), self, mat2);
    run_into(out.unsqueeze(0), self.unsqueeze(0), mat2.unsqueeze(0));
    out.impl()->bump_version();
    return out;
  }
  static Tensor bmm(const Tensor& self, const Tensor& mat2) {
    Tensor out = new_result(check_bmm("bmm", self, mat2), self);
    Compute(out, self, mat2, 1, 0);
    return out;
  }
  static Tensor bmm_out(const Tensor& self, const Tensor& mat2, const Tensor& out) {
    const DimVector shape = check_bmm("bmm.out", self, mat2);
    check_product_out("bmm.out", out, shape, product_dtype(self.dtype()), self, mat2);
    run_into(out, self, mat2);
    out.impl()->bump_version();
    return out;
  }
  // beta * self + alpha * product: self is broadcast into the result first, unless beta is 0,
  // in which case self is not read at all (NaN and inf in it do not propagate, as in PyTorch).
  static Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
                      const Scalar& alpha) {
    const DimVector shape = check_mm("addmm", mat1, mat2);
    check_addmm_self("addmm", self, mat1, shape, beta, alpha);
    Tensor out = new_result(shape, mat1);
    if constexpr (Fused != nullptr) {
      if (Fused(out, self, mat1, mat2, beta, alpha)) return out;
    }
    const bool use_self = beta.to<double>() != 0.0;
    if (use_self) out.copy_(self);
    Compute(out.unsqueeze(0), mat1.unsqueeze(0), mat2.unsqueeze(0), alpha, use_self ? beta : Scalar(0));
    return out;
  }
  static Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
                        const Scalar& alpha) {
    const DimVector shape = check_bmm("baddbmm", batch1, batch2);
    check_addmm_self("baddbmm", self, batch1, shape, beta, alpha);
    Tensor out = new_result(shape, batch1);
    const bool use_self = beta.to<double>() != 0.0;
    if (use_self) out.copy_(self);
    Compute(out, batch1, batch2, alpha, use_self ? beta : Scalar(0));
    return out;
  }
};

template <ProductCompute Compute, AddmmFused Fused = nullptr>
void register_product_kernels(Library& m) {
  using K = ProductKernels<Compute, Fused>;
  m.impl("mm", named_kernel(&K::mm, "mm"));
  m.impl("mm.out", named_kernel(&K::mm_out, "mm.out"));
  m.impl("bmm", named_kernel(&K::bmm, "bmm"));
  m.impl("bmm.out", named_kernel(&K::bmm_out, "bmm.out"));
  m.impl("addmm", named_kernel(&K::addmm, "addmm"));
  m.impl("baddbmm", named_kernel(&K::baddbmm, "baddbmm"));
}

}  // namespace anatomy::dispatch
