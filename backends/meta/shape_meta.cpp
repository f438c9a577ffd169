// Meta: flip, tril, triu, sort, topk, the scans (cumsum, cumprod, cummax, cummin, logcumsumexp),
// one_hot, searchsorted and bucketize. The same checks as the CPU kernels
// (dispatch/ops/shape_checks.h, bucketize_rules.h) and the same result metadata, without data.
// one_hot needs num_classes: with -1 its result's shape would depend on the values.
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/search_registration.h"
#include "anatomy/dispatch/ops/shape_checks.h"
#include "anatomy/dispatch/ops/sort_registration.h"

namespace anatomy::meta {
namespace {

Tensor flip_meta(const Tensor& self, IntArrayRef dims) {
  shape::flipped_dims(self, dims);
  return empty(self.sizes(), self.options());
}

Tensor tril_meta(const Tensor& self, int64_t) {
  shape::check_matrix(self, "tril");
  return empty(self.sizes(), self.options());
}

Tensor triu_meta(const Tensor& self, int64_t) {
  shape::check_matrix(self, "triu");
  return empty(self.sizes(), self.options());
}

// Sort and topk on Meta: the shared checks and result shapes (dispatch/ops/sort_registration.h), no
// values to order.
void select_nothing(const Tensor&, int64_t, int64_t, bool, bool, const Tensor&, const Tensor&, const char*) {}

// searchsorted and bucketize on Meta: the shared checks, promotion and result (a sorter's entries
// are values, which are not checked here).
void search_nothing(const search::SearchArgs&, const Tensor&, const char*) {}

Tensor cumsum_meta(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  shape::checked_dim(self, dim, "cumsum");
  return empty(self.sizes(), self.options().dtype(shape::scan_dtype(self.dtype(), dtype)));
}

Tensor cumprod_meta(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  shape::checked_dim(self, dim, "cumprod");
  return empty(self.sizes(), self.options().dtype(shape::scan_dtype(self.dtype(), dtype)));
}

std::tuple<Tensor, Tensor> cum_extremum_meta(const Tensor& self, int64_t dim, const char* op) {
  shape::checked_dim(self, dim, op);
  return {empty(self.sizes(), self.options()), empty(self.sizes(), self.options().dtype(DType::Int64))};
}
std::tuple<Tensor, Tensor> cummax_meta(const Tensor& self, int64_t dim) {
  return cum_extremum_meta(self, dim, "cummax");
}
std::tuple<Tensor, Tensor> cummin_meta(const Tensor& self, int64_t dim) {
  return cum_extremum_meta(self, dim, "cummin");
}

Tensor logcumsumexp_meta(const Tensor& self, int64_t dim) {
  shape::checked_dim(self, dim, "logcumsumexp");
  shape::check_floating_scan(self, "logcumsumexp");
  return empty(self.sizes(), self.options());
}

Tensor one_hot_meta(const Tensor& self, int64_t num_classes) {
  shape::check_one_hot(self, num_classes);
  ANATOMY_CHECK(num_classes >= 0, NotImplementedError,
                "one_hot: num_classes=-1 is inferred from the values, which a meta tensor does not have; pass "
                "num_classes");
  return empty(shape::one_hot_shape(self, num_classes), self.options());
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Meta, m) {
  m.impl("flip", ANATOMY_KERNEL(flip_meta));
  m.impl("tril", ANATOMY_KERNEL(tril_meta));
  m.impl("triu", ANATOMY_KERNEL(triu_meta));
  dispatch::register_sort_kernels<&select_nothing>(m);
  m.impl("cumsum", ANATOMY_KERNEL(cumsum_meta));
  m.impl("cumprod", ANATOMY_KERNEL(cumprod_meta));
  m.impl("cummax", ANATOMY_KERNEL(cummax_meta));
  m.impl("cummin", ANATOMY_KERNEL(cummin_meta));
  m.impl("logcumsumexp", ANATOMY_KERNEL(logcumsumexp_meta));
  m.impl("one_hot", ANATOMY_KERNEL(one_hot_meta));
  dispatch::register_search_kernels<&search_nothing>(m);
}

}  // namespace anatomy::meta
