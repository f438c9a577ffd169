// Result dtypes of operators that mix tensors and scalars, with PyTorch's rules.
//
// Note [Weak types]
// A Scalar (and, as in PyTorch, a 0-dim tensor next to dimensioned ones) does not take part in
// promotion by its width, only by its category (bool < integral < floating). So an fp16 tensor
// plus the integer 2 stays fp16, an int32 tensor times 2.5 becomes the default float (fp32), and
// an int8 tensor plus 1000 stays int8. Three tiers are kept and the higher tier wins unless a
// lower tier has a higher category.
#pragma once

#include <initializer_list>

#include "anatomy/core/dtype.h"
#include "anatomy/core/scalar.h"

namespace anatomy {

class ResultTypeState {
 public:
  // A tensor with at least one dimension.
  void add_tensor(DType t);
  // A 0-dim tensor: weak next to dimensioned tensors, strong among 0-dim tensors and scalars.
  void add_zero_dim_tensor(DType t);
  void add_scalar(const Scalar& s);
  // A wrapped number (a 0-dim tensor standing for a scalar) of dtype t: counts like a Scalar.
  void add_wrapped_number(DType t);
  DType result() const;

 private:
  bool has_dim_ = false, has_zero_ = false, has_wrapped_ = false;
  DType dim_ = DType::Bool, zero_ = DType::Bool, wrapped_ = DType::Bool;
};

// The common dtype of a tensor and a scalar: `tensor_dtype` unless the scalar's category is
// higher (then the category's default: int64 for integers, fp32 for floats).
DType result_type(DType tensor_dtype, const Scalar& s);

// The dtype of arange when none is given: int64 when start, end and step are all integers,
// else the default float (as PyTorch).
DType arange_default_dtype(const Scalar& start, const Scalar& end, const Scalar& step);

// Whether a value of dtype `from` can be written into `to` without leaving its category
// (PyTorch's canCast): floating into integral, or anything non-bool into bool, cannot.
bool can_cast(DType from, DType to);

}  // namespace anatomy
