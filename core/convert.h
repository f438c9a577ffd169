// Converting one element type's value to another, as every backend does it: the CPU's loops and
// casts, and the CUDA kernels (this header pulls in nothing that nvcc cannot compile: no fmt, no
// error machinery).
//
//   float f = convert<float>(Half(1.5f));   bool b = convert<bool>(0.25);   // true
#pragma once

#include <type_traits>

#include "anatomy/core/bfloat16.h"
#include "anatomy/core/half.h"
#include "anatomy/core/macros.h"

namespace anatomy {

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
