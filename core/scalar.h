// Scalar: a number passed to an operator by value (alpha, fill values, item()).
//
// It remembers whether it is a bool, an integer or a floating value, because that category,
// not its width, is what type promotion looks at: a Scalar is a "weak" type (see
// type_promotion.h).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "anatomy/core/dtype.h"

namespace anatomy {

class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Float };

  Scalar() : Scalar(int64_t{0}) {}
  Scalar(bool v) : kind_(Kind::Bool) { i_ = v; }
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(Kind::Int) {
    i_ = static_cast<int64_t>(v);
  }
  template <typename T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : kind_(Kind::Float) {
    d_ = static_cast<double>(v);
  }
  Scalar(Half v) : Scalar(static_cast<float>(v)) {}
  Scalar(BFloat16 v) : Scalar(static_cast<float>(v)) {}

  Kind kind() const { return kind_; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_floating_point() const { return kind_ == Kind::Float; }

  // The dtype a tensor made from this scalar gets: bool, int64 or fp64.
  DType dtype() const { return kind_ == Kind::Bool ? DType::Bool : kind_ == Kind::Int ? DType::Int64 : DType::Float64; }

  double to_double() const { return kind_ == Kind::Float ? d_ : static_cast<double>(i_); }
  int64_t to_int() const { return kind_ == Kind::Float ? static_cast<int64_t>(d_) : i_; }
  bool to_bool() const { return kind_ == Kind::Float ? d_ != 0.0 : i_ != 0; }

  // Converts to T the way a cast of the value would (float to int truncates).
  template <typename T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) {
      return to_bool();
    } else if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(kind_ == Kind::Float ? static_cast<T>(d_) : static_cast<T>(i_));
    } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      return T(to_double());
    } else {
      return static_cast<T>(to_double());
    }
  }

  std::string to_string() const;
  bool operator==(const Scalar& o) const;

 private:
  Kind kind_;
  union {
    double d_;
    int64_t i_;
  };
};

}  // namespace anatomy

namespace anatomy {
// Throws ValueError (naming `op`) when `value` cannot be stored in `dtype` without overflow:
// an integer outside the dtype's range, or a finite float beyond a float dtype's largest value.
// NaN and infinities are allowed for float dtypes; any value is allowed for bool.
void check_scalar_fits(const Scalar& value, DType dtype, const char* op);
}  // namespace anatomy
