// OptionalIntArrayRef: a dim list that may be absent, the C++ side of the schema type `int[]?`.
// Reductions read the two cases differently: std::nullopt reduces every dim, while a list, even
// an empty one, names exactly the dims to reduce. `{}` is therefore an empty list (the type has
// no default constructor, so braces go to the list constructor), and "no list" is spelled
// std::nullopt.
#pragma once

#include <concepts>
#include <initializer_list>
#include <optional>

#include "anatomy/core/array_ref.h"

namespace anatomy {

class OptionalIntArrayRef {
 public:
  constexpr OptionalIntArrayRef(std::nullopt_t) {}
  // Anything an IntArrayRef views (a vector, a DimVector, an array, an IntArrayRef itself).
  template <typename T>
  requires(std::convertible_to<const T&, IntArrayRef> &&
           !std::same_as<T, std::nullopt_t>) constexpr OptionalIntArrayRef(const T& list)
      : list_(IntArrayRef(list)), has_list_(true) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  // The braced list lives until the end of the call it is an argument of (core/array_ref.h).
  constexpr OptionalIntArrayRef(std::initializer_list<int64_t> list) : list_(list), has_list_(true) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  constexpr OptionalIntArrayRef(std::optional<IntArrayRef> list)
      : list_(list.value_or(IntArrayRef())), has_list_(list.has_value()) {}

  constexpr bool has_value() const { return has_list_; }
  constexpr explicit operator bool() const { return has_list_; }
  // The list; only meaningful when has_value().
  constexpr IntArrayRef operator*() const { return list_; }
  constexpr const IntArrayRef* operator->() const { return &list_; }
  constexpr std::optional<IntArrayRef> to_optional() const {
    return has_list_ ? std::optional<IntArrayRef>(list_) : std::nullopt;
  }

 private:
  IntArrayRef list_;
  bool has_list_ = false;
};

}  // namespace anatomy
