#include "anatomy/dispatch/ops/plan_casts.h"

namespace anatomy {

const PlanCasts& operator_casts() {
  static constexpr PlanCasts casts{
      [](const Tensor& t, DType dtype) { return t.to(dtype); },
      [](const Tensor& dst, const Tensor& src) { dst.copy_(src); },
  };
  return casts;
}

}  // namespace anatomy
