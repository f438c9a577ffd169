// IValue and Stack: the boxed calling convention.
//
// A boxed kernel (a fallback such as the Tracer's, which treats every operator alike) sees
// its arguments as a Stack of IValues and leaves its returns on the same stack. Typed kernels
// are boxed and unboxed automatically (dispatch/boxing.h), so either kind of kernel can serve
// either kind of call.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "anatomy/core/device.h"
#include "anatomy/core/dtype.h"
#include "anatomy/core/memory_format.h"
#include "anatomy/core/scalar.h"
#include "anatomy/core/tensor.h"

namespace anatomy::dispatch {

class IValue {
 public:
  using Variant = std::variant<std::monostate, Tensor, std::vector<Tensor>, Scalar, int64_t, double, bool,
                               std::vector<int64_t>, DType, Device, std::string, MemoryFormat>;

  IValue() = default;  // None
  template <typename T, std::enable_if_t<
                            std::is_constructible_v<Variant, T&&> && !std::is_same_v<std::decay_t<T>, IValue>, int> = 0>
  IValue(T&& v) : v_(std::forward<T>(v)) {}

  bool is_none() const { return std::holds_alternative<std::monostate>(v_); }
  template <typename T>
  bool is() const {
    return std::holds_alternative<T>(v_);
  }
  // Throws InternalError when the IValue holds another type: that is a schema/kernel mismatch.
  template <typename T>
  T& get() {
    T* p = std::get_if<T>(&v_);
    if (!p) throw_type_mismatch(type_name_of<T>());
    return *p;
  }
  template <typename T>
  const T& get() const {
    return const_cast<IValue*>(this)->get<T>();
  }

  // "Tensor", "int", "None", ... and a short description of the value for traces
  // ("Tensor[2, 3] fp32 cpu", "1", "[0, 1]").
  std::string type_name() const;
  std::string to_string() const;
  const Variant& variant() const { return v_; }

 private:
  template <typename T>
  static const char* type_name_of();
  [[noreturn]] void throw_type_mismatch(const char* wanted) const;
  Variant v_;
};

using Stack = std::vector<IValue>;

template <typename T>
const char* IValue::type_name_of() {
  if constexpr (std::is_same_v<T, Tensor>) return "Tensor";
  else if constexpr (std::is_same_v<T, std::vector<Tensor>>) return "Tensor[]";
  else if constexpr (std::is_same_v<T, Scalar>) return "Scalar";
  else if constexpr (std::is_same_v<T, int64_t>) return "int";
  else if constexpr (std::is_same_v<T, double>) return "float";
  else if constexpr (std::is_same_v<T, bool>) return "bool";
  else if constexpr (std::is_same_v<T, std::vector<int64_t>>) return "int[]";
  else if constexpr (std::is_same_v<T, DType>) return "ScalarType";
  else if constexpr (std::is_same_v<T, Device>) return "Device";
  else if constexpr (std::is_same_v<T, std::string>) return "str";
  else if constexpr (std::is_same_v<T, MemoryFormat>) return "MemoryFormat";
  else return "?";
}

}  // namespace anatomy::dispatch
