// A tensor operand's part in type promotion (see tensor_promotion.h).
#include "anatomy/core/tensor_promotion.h"

namespace anatomy {

void add_operand(ResultTypeState& state, const Tensor& t) {
  if (t.impl()->is_wrapped_number()) state.add_wrapped_number(t.dtype());
  else if (t.dim() == 0) state.add_zero_dim_tensor(t.dtype());
  else state.add_tensor(t.dtype());
}

}  // namespace anatomy
