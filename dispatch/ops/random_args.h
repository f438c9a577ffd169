// The random fill operators' argument rules (uniform_, normal_, random_), shared by every
// backend so that a bad call raises the same error on each, before any generator counter is
// reserved or any element written.
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>

#include "anatomy/core/bfloat16.h"
#include "anatomy/core/dtype.h"
#include "anatomy/core/half.h"

namespace anatomy {

// The mantissa digits of a floating element type: how many random bits a uniform value of it
// gets, and the exponent of the largest integer random_ gives it (every integer up to 2^digits
// is exact).
template <typename T>
constexpr int mantissa_digits() {
  if constexpr (std::is_same_v<T, Half>) return 11;
  else if constexpr (std::is_same_v<T, BFloat16>) return 8;
  else if constexpr (std::is_same_v<T, float>) return 24;
  else return 53;
}

// TypeError for a non-floating dtype, ValueError unless from <= to and both are finite.
void check_uniform_args(DType t, double from, double to);
// TypeError for a non-floating dtype, ValueError unless std is finite and >= 0.
void check_normal_args(DType t, double std);
// random_(from, to): checks from against the dtype's smallest value and to - 1 against its
// largest (2^digits for floats), from < to; returns how many values [from, to) holds (to
// defaults to the dtype's largest + 1), 0 standing for 2^64 (the full int64 range).
uint64_t random_range(DType t, int64_t from, std::optional<int64_t> to);

}  // namespace anatomy
