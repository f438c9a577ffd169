// Meta: the indexing ops whose result shape does not depend on index values: the same argument
// checks as the CPU kernels (dispatch/ops/indexing_rules.h), then a result with no data. Index values
// cannot be range-checked without data. masked_select and nonzero have data-dependent shapes,
// so they have no Meta kernel; advanced indexing has one for integer indices only (a bool mask's
// count is data).
#include <fmt/ranges.h>

#include "anatomy/core/empty_tensor.h"
#include "anatomy/core/shape_rules.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/indexing_rules.h"
#include "anatomy/dispatch/ops/scatter_registration.h"

namespace anatomy::meta {
namespace {

Tensor index_select_meta(const Tensor& self, int64_t dim, const Tensor& index) {
  DimVector shape;
  check_index_select(self, dim, index, shape);
  return empty(shape, self.options());
}

Tensor gather_meta(const Tensor& self, int64_t dim, const Tensor& index) {
  check_gather_scatter(self, dim, index, Tensor(), "gather");
  return empty(index.sizes(), self.options());
}

Tensor take_meta(const Tensor& self, const Tensor& index) {
  check_index_dtype(index, "take");
  return empty(index.sizes(), self.options());
}

Tensor embedding_meta(const Tensor& weight, const Tensor& indices) {
  return empty(embedding_shape(weight, indices), weight.options());
}

// scatter_ and scatter_add_ on Meta: the shared checks (dispatch/ops/scatter_registration.h), then
// nothing to write.
Tensor scatter_meta(const Tensor& self, int64_t, const Tensor&, const Tensor&, ScatterMode, const char* op) {
  check_no_internal_overlap(self, op);
  self.impl()->bump_version();
  return self;
}

Tensor masked_fill_meta(const Tensor& self, const Tensor& mask, const Scalar& value) {
  check_mask_dtype(mask, "masked_fill_");
  ANATOMY_CHECK(is_expandable_to(mask.sizes(), self.sizes()), ValueError,
                "masked_fill_: the mask of shape [{}] does not broadcast to self's shape [{}]",
                fmt::join(mask.sizes(), ", "), fmt::join(self.sizes(), ", "));
  check_scalar_fits(value, self.dtype(), "masked_fill_");
  check_no_internal_overlap(self, "masked_fill_");
  self.impl()->bump_version();
  return self;
}

// Advanced indexing with integer index tensors only: a bool mask raises NotImplementedError.
AdvancedIndexShape meta_advanced_index(const Tensor& self, TensorList indices, const char* op) {
  for (const Tensor& e : indices) {
    if (!e.defined()) continue;
    ANATOMY_CHECK(e.dtype() != DType::Bool, NotImplementedError,
                  "{}: a bool mask gives a data-dependent shape, which the Meta backend cannot compute", op);
  }
  return plan_advanced_index(self, std::vector<Tensor>(indices.begin(), indices.end()), op);
}

Tensor index_meta(const Tensor& self, TensorList indices) {
  return empty(meta_advanced_index(self, indices, "index").result_shape, self.options());
}

Tensor index_put_meta(const Tensor& self, TensorList indices, const Tensor& values, bool) {
  const char* op = "index_put_";
  ANATOMY_CHECK(values.dtype() == self.dtype(), TypeError, "{}: values have dtype {} but self has {} (they must match)",
                op, name(values.dtype()), name(self.dtype()));
  check_no_internal_overlap(self, op);
  const AdvancedIndexShape plan = meta_advanced_index(self, indices, op);
  ANATOMY_CHECK(is_expandable_to(values.sizes(), plan.result_shape), ValueError,
                "{}: values of shape [{}] cannot be broadcast to the indexing result of shape [{}]", op,
                fmt::join(values.sizes(), ", "), fmt::join(plan.result_shape, ", "));
  self.impl()->bump_version();
  return self;
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Meta, m) {
  m.impl("index.Tensor", ANATOMY_KERNEL(index_meta));
  m.impl("index_put_", ANATOMY_KERNEL(index_put_meta));
  m.impl("index_select", ANATOMY_KERNEL(index_select_meta));
  m.impl("gather", ANATOMY_KERNEL(gather_meta));
  m.impl("take", ANATOMY_KERNEL(take_meta));
  m.impl("embedding", ANATOMY_KERNEL(embedding_meta));
  dispatch::register_scatter_kernels<&scatter_meta>(m);
  m.impl("masked_fill_.Scalar", ANATOMY_KERNEL(masked_fill_meta));
}

}  // namespace anatomy::meta
