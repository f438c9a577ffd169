// Scalar printing, comparison and range checks.
#include "anatomy/core/scalar.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "anatomy/core/dtype_visit.h"

namespace anatomy {

std::string Scalar::to_string() const {
  switch (kind_) {
    case Kind::Bool:
      return i_ ? "True" : "False";
    case Kind::Int:
      return std::to_string(i_);
    case Kind::Float:
      return fmt::format("{}", d_);
  }
  return "?";
}

bool Scalar::operator==(const Scalar& o) const {
  if (kind_ != o.kind_) return false;
  return kind_ == Kind::Float ? d_ == o.d_ : i_ == o.i_;
}

void check_scalar_fits(const Scalar& value, DType dtype, const char* op) {
  if (dtype == DType::Bool) return;
  visit_dtype(dtype, op, [&]<typename T>() {
    if constexpr (std::is_integral_v<T>) {
      if (value.is_floating_point()) {
        double d = value.to_double();
        ANATOMY_CHECK(std::isfinite(d) && d >= static_cast<double>(std::numeric_limits<T>::lowest()) &&
                          d <= static_cast<double>(std::numeric_limits<T>::max()),
                      ValueError, "{}: value {} cannot be converted to {} without overflow", op, d, name(dtype));
      } else {
        int64_t i = value.to_int();
        ANATOMY_CHECK(i >= static_cast<int64_t>(std::numeric_limits<T>::lowest()) &&
                          (std::is_same_v<T, int64_t> || i <= static_cast<int64_t>(std::numeric_limits<T>::max())),
                      ValueError, "{}: value {} cannot be converted to {} without overflow", op, i, name(dtype));
      }
    } else {
      double d = value.to_double();
      double max = static_cast<double>(static_cast<float>(std::numeric_limits<T>::max()));
      if constexpr (std::is_same_v<T, double>) max = std::numeric_limits<double>::max();
      ANATOMY_CHECK(!std::isfinite(d) || std::fabs(d) <= max, ValueError,
                    "{}: value {} cannot be converted to {} without overflow", op, d, name(dtype));
    }
  });
}

}  // namespace anatomy
