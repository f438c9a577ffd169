// Running templated code for a runtime dtype, and converting values between element types.
//
//   visit_dtype(t.dtype(), "fill_", [&]<typename T>() { fill<T>(...); });
//
// `op` names the operator in the TypeError raised for a dtype the visitor does not accept.
#pragma once

#include <type_traits>

#include "anatomy/core/dtype.h"
#include "anatomy/core/error.h"

namespace anatomy {

template <typename F>
decltype(auto) visit_dtype(DType t, const char* op, F&& f) {
  switch (t) {
#define ANATOMY_VISIT_CASE(type, name, short_name, long_name) \
  case DType::name:                                           \
    return f.template operator()<type>();
    ANATOMY_FORALL_DTYPES(ANATOMY_VISIT_CASE)
#undef ANATOMY_VISIT_CASE
  }
  ANATOMY_THROW(TypeError, "{}: unsupported dtype {}", op, static_cast<int>(t));
}

template <typename T>
inline constexpr bool is_reduced_float_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// static_cast semantics; conversions into Half and BFloat16 round once (from float, double or
// an integer), out of them go through float, and anything -> bool means "is nonzero".
template <typename To, typename From>
ANATOMY_HOST_DEVICE inline To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (is_reduced_float_v<From>) return static_cast<float>(v) != 0.0f;
    else return v != From(0);
  } else if constexpr (is_reduced_float_v<From>) {
    return convert<To>(static_cast<float>(v));
  } else if constexpr (is_reduced_float_v<To>) {
    return To(v);  // Half and BFloat16 round once from float, double and integers alike
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace anatomy
