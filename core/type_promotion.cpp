// PyTorch's three-tier result type computation (see Note [Weak types]).
#include "anatomy/core/type_promotion.h"

namespace anatomy {
namespace {

// Scalars are remembered as the default dtype of their category: bool, int64, fp32 (PyTorch
// uses the default float dtype for Python floats when they are wrapped as weak types).
DType wrapped_dtype(const Scalar& s) {
  return s.is_bool() ? DType::Bool : s.is_integral() ? DType::Int64 : kDefaultFloat;
}

DType combine(bool& has, DType acc, DType t) {
  DType r = has ? promote_types(acc, t) : t;
  has = true;
  return r;
}

// PyTorch's combine_categories: the higher tier wins unless it is bool, or the lower tier is
// floating while the higher is not; then the two are promoted.
DType combine_categories(bool has_higher, DType higher, bool has_lower, DType lower) {
  if (!has_higher) return lower;
  if (!has_lower) return higher;
  if (is_floating(higher)) return higher;
  if (higher == DType::Bool || is_floating(lower)) return promote_types(higher, lower);
  return higher;
}

}  // namespace

void ResultTypeState::add_tensor(DType t) { dim_ = combine(has_dim_, dim_, t); }
void ResultTypeState::add_zero_dim_tensor(DType t) { zero_ = combine(has_zero_, zero_, t); }
void ResultTypeState::add_scalar(const Scalar& s) { wrapped_ = combine(has_wrapped_, wrapped_, wrapped_dtype(s)); }

void ResultTypeState::add_wrapped_number(DType t) {
  DType d = t == DType::Bool ? DType::Bool : is_floating(t) ? kDefaultFloat : DType::Int64;
  wrapped_ = combine(has_wrapped_, wrapped_, d);
}

DType ResultTypeState::result() const {
  DType zero_and_wrapped = combine_categories(has_zero_, zero_, has_wrapped_, wrapped_);
  bool has_zw = has_zero_ || has_wrapped_;
  if (!has_dim_ && !has_zw) return kDefaultFloat;
  return combine_categories(has_dim_, dim_, has_zw, zero_and_wrapped);
}

DType result_type(DType tensor_dtype, const Scalar& s) {
  ResultTypeState st;
  st.add_tensor(tensor_dtype);
  st.add_scalar(s);
  return st.result();
}

DType arange_default_dtype(const Scalar& start, const Scalar& end, const Scalar& step) {
  bool all_integral = !start.is_floating_point() && !end.is_floating_point() && !step.is_floating_point();
  return all_integral ? DType::Int64 : kDefaultFloat;
}

bool can_cast(DType from, DType to) {
  if (is_floating(from) && !is_floating(to)) return false;
  if (from != DType::Bool && to == DType::Bool) return false;
  return true;
}

}  // namespace anatomy
