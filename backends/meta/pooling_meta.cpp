// Meta: pooling and upsampling compute only their results' shapes, dtypes and layouts, with the
// same checks as the real kernels (dispatch/ops/pooling_registration.h).
#include <tuple>

#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops/pooling_registration.h"

namespace anatomy::meta {
namespace {

struct MetaPoolLoops {
  static Tensor sum(const char*, const PoolPlan& p, const Tensor&) { return p.empty_result(p.out_sizes, p.dtype); }
  static Tensor sum_backward(const char*, const PoolPlan& p, const Tensor&) {
    return p.empty_result(p.in_sizes, p.dtype);
  }
  static std::tuple<Tensor, Tensor> max(const char*, const PoolPlan& p, const Tensor&) {
    return {p.empty_result(p.out_sizes, p.dtype), p.empty_result(p.out_sizes, DType::Int64)};
  }
  static Tensor max_backward(const char*, const PoolPlan& p, const Tensor&, const Tensor&) {
    return p.empty_result(p.in_sizes, p.dtype);
  }
};

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Meta, m) { dispatch::register_pooling_kernels<MetaPoolLoops>(m); }

}  // namespace anatomy::meta
