// IValue printing (for traces and errors).
#include "anatomy/dispatch/ivalue.h"

#include <fmt/format.h>

namespace anatomy::dispatch {

std::string IValue::type_name() const {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) return "None";
        else return type_name_of<T>();
      },
      v_);
}

std::string IValue::to_string() const {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return "None";
        } else if constexpr (std::is_same_v<T, Tensor>) {
          if (!v.defined()) return "Tensor(undefined)";
          return fmt::format("Tensor[{}] {} {}", fmt::join(v.sizes(), ", "), name(v.dtype()), v.device().str());
        } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
          return fmt::format("Tensor[{} tensors]", v.size());
        } else if constexpr (std::is_same_v<T, Scalar>) {
          return v.to_string();
        } else if constexpr (std::is_same_v<T, bool>) {
          return v ? "True" : "False";
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          return fmt::format("[{}]", fmt::join(v, ", "));
        } else if constexpr (std::is_same_v<T, DType>) {
          return std::string(name(v));
        } else if constexpr (std::is_same_v<T, Device>) {
          return v.str();
        } else if constexpr (std::is_same_v<T, std::string>) {
          return "'" + v + "'";
        } else if constexpr (std::is_same_v<T, MemoryFormat>) {
          return std::string(anatomy::to_string(v));
        } else {
          return fmt::format("{}", v);
        }
      },
      v_);
}

void IValue::throw_type_mismatch(const char* wanted) const {
  ANATOMY_INTERNAL_ASSERT(false, "boxed value holds {} where {} was expected", type_name(), wanted);
  __builtin_unreachable();
}

}  // namespace anatomy::dispatch
