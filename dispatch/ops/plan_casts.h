// The casts an element-wise iteration plan may need, as operator calls (Note [Casts in
// iteration plans], core/iteration_plan.h): Tensor::to for an input, copy_ into a user's output.
#pragma once

#include "anatomy/core/iteration_plan.h"

namespace anatomy {

const PlanCasts& operator_casts();

}  // namespace anatomy
