// Registers a backend's scatter_.src, scatter_.value and scatter_add_ from its one scatter body,
// so the argument checks and the value's conversion live here once and each backend writes only
// the writing.
//
//   Impl(self, dim, index, src, accumulate, op): writes (accumulate: adds) src's elements into
//   self at the indices along the wrapped `dim`, as scatter_ does; src is a tensor of self's dtype
//   already checked against index, or a 0-dim tensor (one value for every index). self and index
//   are as the caller passed them (0-dim included: as_1d in dispatch/ops/indexing_rules.h). Returns self.
#pragma once

#include "anatomy/core/empty_tensor.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/indexing_rules.h"

namespace anatomy::dispatch {

using ScatterImpl = Tensor (*)(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, bool accumulate,
                               const char* op);

template <ScatterImpl Impl>
struct ScatterKernels {
  static Tensor src(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
    dim = check_gather_scatter(self, dim, index, src, "scatter_");
    return Impl(self, dim, index, as_1d(src), false, "scatter_");
  }
  static Tensor value(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
    dim = check_gather_scatter(self, dim, index, Tensor(), "scatter_");
    check_scalar_fits(value, self.dtype(), "scatter_");
    return Impl(self, dim, index, scalar_tensor(value, self.options()), false, "scatter_");
  }
  static Tensor add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
    dim = check_gather_scatter(self, dim, index, src, "scatter_add_");
    return Impl(self, dim, index, as_1d(src), true, "scatter_add_");
  }
};

template <ScatterImpl Impl>
void register_scatter_kernels(Library& m) {
  using K = ScatterKernels<Impl>;
  m.impl("scatter_.src", named_kernel(&K::src, "scatter_.src"));
  m.impl("scatter_.value", named_kernel(&K::value, "scatter_.value"));
  m.impl("scatter_add_", named_kernel(&K::add, "scatter_add_"));
}

}  // namespace anatomy::dispatch
