// CPU: writing by index: scatter_ (tensor and value sources), scatter_add_, scatter_reduce_ and
// index_put_.
// Every dtype, any strides; every index is checked before the first write, and the loops run
// serially so repeated indices accumulate deterministically (in index order).
#include "anatomy/backends/cpu/index_utils.h"
#include "anatomy/core/empty_tensor.h"
#include "anatomy/core/shape_rules.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/scatter_registration.h"

namespace anatomy::cpu {
namespace {

// The body of scatter_ and scatter_add_ (dispatch/ops/scatter_registration.h): `src` is a tensor of self's dtype,
// already checked against index (0-dim src: one value for every index).
Tensor scatter_impl(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, ScatterMode mode,
                    const char* op) {
  check_no_internal_overlap(self, op);
  const Tensor self1 = as_1d(self), index1 = as_1d(index);
  std::vector<int64_t> offsets = read_indices(index1);
  for (int64_t& v : offsets)
    v = checked_index(v, self1.size(dim), dim, /*allow_negative=*/false, op) * self1.stride(dim);
  // A source sharing memory with self is read before anything is written.
  const Tensor source = may_overlap(self, src) ? src.clone() : src;
  DimVector dst_strides(self1.strides());
  dst_strides[dim] = 0;
  DimVector src_strides(index1.dim(), 0);
  if (source.dim() > 0) src_strides = DimVector(source.strides());
  const DimVector offset_strides = contiguous_strides(index1.sizes());
  scatter_elements(index1.sizes(), self1, dst_strides, source, src_strides, offsets, offset_strides, mode, op);
  self.impl()->bump_version();
  return self;
}

Tensor index_put_cpu(const Tensor& self, TensorList indices, const Tensor& values, bool accumulate) {
  const char* op = "index_put_";
  check_advanced_index_dtypes(indices, op);
  ANATOMY_CHECK(values.dtype() == self.dtype(), TypeError, "{}: values have dtype {} but self has {} (they must match)",
                op, name(values.dtype()), name(self.dtype()));
  check_no_internal_overlap(self, op);
  const std::vector<Tensor> entries = expand_bool_masks(self, indices, op);
  const AdvancedIndexShape plan = plan_advanced_index(self, entries, op);
  ANATOMY_CHECK(is_expandable_to(values.sizes(), plan.result_shape), ValueError,
                "{}: values of shape [{}] cannot be broadcast to the indexing result of shape [{}]", op,
                fmt::join(values.sizes(), ", "), fmt::join(plan.result_shape, ", "));
  const std::vector<int64_t> offsets = advanced_index_offsets(self, entries, plan, op);
  const Tensor source = may_overlap(self, values) ? values.clone() : values;
  const Tensor walk_values = source.expand(plan.result_shape).permute(plan.result_perm);
  DimVector sizes, self_strides, offset_strides;
  advanced_index_walk(self, plan, sizes, self_strides, offset_strides);
  scatter_elements(sizes, self, self_strides, walk_values, walk_values.strides(), offsets, offset_strides,
                   accumulate ? ScatterMode::Add : ScatterMode::Assign, op);
  self.impl()->bump_version();
  return self;
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) {
  dispatch::register_scatter_kernels<&scatter_impl>(m);
  m.impl("index_put_", ANATOMY_KERNEL(index_put_cpu));
}

}  // namespace anatomy::cpu
