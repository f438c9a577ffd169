// Registers a backend's scatter_.src, scatter_.value, scatter_add_ and scatter_reduce_.two from
// its one scatter body, so the argument checks, the value's conversion and scatter_reduce_'s
// steps live here once and each backend writes only the writing.
//
//   Impl(self, dim, index, src, mode, op): combines src's elements into self at the indices along
//   the wrapped `dim` (mode: dispatch/ops/scatter_functors.h; repeated indices combine in index
//   order), as scatter_ does; src is a tensor of self's dtype already checked against index, or a
//   0-dim tensor (one value for every index). self and index are as the caller passed them (0-dim
//   included: as_1d in dispatch/ops/indexing_rules.h). Returns self.
//
// Note [scatter_reduce_ in steps]
//   scatter_reduce_(dim, index, src, reduce, include_self) is PyTorch's, built from the body:
//   without include_self the targets are first set to the reduction's identity (0, 1, the lowest
//   or the highest value), so only src's values reach them; "mean" sums, counts the values each
//   element received (plus one for self's own when include_self) and divides by the count where it
//   is not zero (floor division for integers, as PyTorch). Every index is checked by the first
//   write (the CPU raises before it; CUDA's kernels write nothing and raise at the next wait).
#pragma once

#include "anatomy/core/empty_tensor.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/indexing_rules.h"
#include "anatomy/dispatch/ops/scatter_functors.h"

namespace anatomy::dispatch {

using ScatterImpl = Tensor (*)(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                               ScatterMode mode, const char* op);

template <ScatterImpl Impl>
struct ScatterKernels {
  static Tensor src(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
    dim = check_gather_scatter(self, dim, index, src, "scatter_");
    return Impl(self, dim, index, as_1d(src), ScatterMode::Assign, "scatter_");
  }
  static Tensor value(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
    dim = check_gather_scatter(self, dim, index, Tensor(), "scatter_");
    check_scalar_fits(value, self.dtype(), "scatter_");
    return Impl(self, dim, index, scalar_tensor(value, self.options()), ScatterMode::Assign, "scatter_");
  }
  static Tensor add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
    dim = check_gather_scatter(self, dim, index, src, "scatter_add_");
    return Impl(self, dim, index, as_1d(src), ScatterMode::Add, "scatter_add_");
  }
  // Note [scatter_reduce_ in steps].
  static Tensor reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                       bool include_self) {
    const char* op = "scatter_reduce_";
    const ScatterReduction r = parse_scatter_reduction(reduce, self.dtype(), op);
    dim = check_gather_scatter(self, dim, index, src, op);
    if (!include_self) Impl(self, dim, index, scatter_reduction_identity(r, self), ScatterMode::Assign, op);
    Impl(self, dim, index, as_1d(src), r.mode, op);
    if (!r.mean) return self;
    const Tensor count = include_self ? ones_like(self) : zeros_like(self);
    Impl(count, dim, index, scalar_tensor(1, count.options()), ScatterMode::Add, op);
    count.masked_fill_(count.eq(0), 1);
    if (is_floating(self.dtype())) self.div_(count);
    else self.div_(count, "floor");
    return self;
  }
};

template <ScatterImpl Impl>
void register_scatter_kernels(Library& m) {
  using K = ScatterKernels<Impl>;
  m.impl("scatter_.src", named_kernel(&K::src, "scatter_.src"));
  m.impl("scatter_.value", named_kernel(&K::value, "scatter_.value"));
  m.impl("scatter_add_", named_kernel(&K::add, "scatter_add_"));
  m.impl("scatter_reduce_.two", named_kernel(&K::reduce, "scatter_reduce_.two"));
}

}  // namespace anatomy::dispatch
