// Argument checks the layers' constructors share: a typed error naming the layer and the value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "anatomy/anatomy.h"

namespace anatomy::nn {

// A size argument: 0 is accepted (as PyTorch's), a negative value is a ValueError.
inline int64_t checked_size(std::string_view layer, std::string_view arg, int64_t value) {
  ANATOMY_CHECK(value >= 0, ValueError, "{}: {} must be non-negative, got {}", layer, arg, value);
  return value;
}

// A probability in [0, 1] (dropout).
inline double checked_probability(std::string_view layer, double p) {
  ANATOMY_CHECK(p >= 0 && p <= 1, ValueError, "{}: dropout probability has to be between 0 and 1, but got {}", layer,
                p);
  return p;
}

// Python's repr of a float: "0.5", "1e-05", and "0.0" where fmt would print "0".
inline std::string py_float(double v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".ein") == std::string::npos) s += ".0";
  return s;
}

// Python's spelling of a bool in a repr.
inline const char* py_bool(bool b) { return b ? "True" : "False"; }

}  // namespace anatomy::nn
