// How a tensor operand takes part in type promotion (Note [Weak types], type_promotion.h): a
// wrapped number by category, a 0-dim tensor weakly next to dimensioned ones, any other tensor
// by its dtype. Shared by the element-wise plans (binary, ternary, the flat path).
#pragma once

#include "anatomy/core/tensor.h"
#include "anatomy/core/type_promotion.h"

namespace anatomy {

void add_operand(ResultTypeState& state, const Tensor& t);

}  // namespace anatomy
