// Argument checks the layers' constructors share: a typed error naming the layer and the value.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
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

// Python's repr of a tuple of ints or floats: "(3,)", "(3, 3)", "(2.0, 1.5)".
template <typename T>
std::string py_tuple(const std::vector<T>& values) {
  std::string out = "(";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ", ";
    if constexpr (std::is_floating_point_v<T>) out += py_float(values[i]);
    else out += fmt::format("{}", values[i]);
  }
  return out + (values.size() == 1 ? ",)" : ")");
}

// A per-spatial-dim argument given as PyTorch takes it: one int for every dim (`3`) or one per
// dim (`{3, 5}`). `scalar` keeps the spelling for the reprs that echo the argument as given
// (MaxPool2d's kernel_size=2 against kernel_size=(2, 2)).
struct IntOrList {
  std::vector<int64_t> values;
  bool scalar = false;
  IntOrList(int64_t v) : values{v}, scalar(true) {}  // NOLINT(google-explicit-constructor): PyTorch's int
  IntOrList(std::initializer_list<int64_t> v) : values(v) {}
  IntOrList(std::vector<int64_t> v) : values(std::move(v)) {}  // NOLINT(google-explicit-constructor)
  std::string repr() const { return scalar ? fmt::format("{}", values[0]) : py_tuple(values); }
};

// The argument expanded to `dims` values (PyTorch's _pair): one value is repeated, `dims` values
// are taken as they are, any other count is a ValueError; each value must be at least `min`.
inline std::vector<int64_t> expanded(std::string_view layer, std::string_view arg, const IntOrList& given, size_t dims,
                                     int64_t min) {
  const std::vector<int64_t>& v = given.values;
  ANATOMY_CHECK(v.size() == 1 || v.size() == dims, ValueError, "{}: {} must be one int or {} ints, got {} values",
                layer, arg, dims, v.size());
  for (int64_t x : v)
    ANATOMY_CHECK(x >= min, ValueError, "{}: {} must be at least {}, got {}", layer, arg, min, py_tuple(v));
  return v.size() == dims ? v : std::vector<int64_t>(dims, v[0]);
}

}  // namespace anatomy::nn
