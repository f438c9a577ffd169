// DType: the element types a tensor can hold, described once in ANATOMY_FORALL_DTYPES.
//
// Everything else (names, sizes, the C++ type of each dtype, the promotion table's order,
// dispatch over dtypes in kernels) is derived from that one list.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "anatomy/core/bfloat16.h"
#include "anatomy/core/half.h"

namespace anatomy {

// _(C++ type, enumerator, short name, PyTorch-style name)
#define ANATOMY_FORALL_DTYPES(_)                  \
  _(bool, Bool, "bool", "torch.bool")             \
  _(uint8_t, UInt8, "uint8", "torch.uint8")       \
  _(int8_t, Int8, "int8", "torch.int8")           \
  _(int32_t, Int32, "int32", "torch.int32")       \
  _(int64_t, Int64, "int64", "torch.int64")       \
  _(Half, Float16, "fp16", "torch.float16")       \
  _(BFloat16, BFloat16, "bf16", "torch.bfloat16") \
  _(float, Float32, "fp32", "torch.float32")      \
  _(double, Float64, "fp64", "torch.float64")

enum class DType : int8_t {
#define ANATOMY_DTYPE_ENUM(type, name, short_name, long_name) name,
  ANATOMY_FORALL_DTYPES(ANATOMY_DTYPE_ENUM)
#undef ANATOMY_DTYPE_ENUM
};

inline constexpr int kNumDTypes = 0
#define ANATOMY_DTYPE_COUNT(type, name, short_name, long_name) +1
    ANATOMY_FORALL_DTYPES(ANATOMY_DTYPE_COUNT)
#undef ANATOMY_DTYPE_COUNT
    ;

// The dtype of factories that are not told one, as PyTorch's default float dtype.
inline constexpr DType kDefaultFloat = DType::Float32;

constexpr size_t element_size(DType t) {
  switch (t) {
#define ANATOMY_DTYPE_SIZE(type, name, short_name, long_name) \
  case DType::name:                                           \
    return sizeof(type);
    ANATOMY_FORALL_DTYPES(ANATOMY_DTYPE_SIZE)
#undef ANATOMY_DTYPE_SIZE
  }
  return 0;
}

// "fp32", "bf16", "int64": the spelling the CLI, printing and errors use.
constexpr std::string_view name(DType t) {
  switch (t) {
#define ANATOMY_DTYPE_NAME(type, name, short_name, long_name) \
  case DType::name:                                           \
    return short_name;
    ANATOMY_FORALL_DTYPES(ANATOMY_DTYPE_NAME)
#undef ANATOMY_DTYPE_NAME
  }
  return "?";
}

// "torch.float32": the spelling the layout report prints, so it reads like PyTorch's.
constexpr std::string_view torch_name(DType t) {
  switch (t) {
#define ANATOMY_DTYPE_LONG(type, name, short_name, long_name) \
  case DType::name:                                           \
    return long_name;
    ANATOMY_FORALL_DTYPES(ANATOMY_DTYPE_LONG)
#undef ANATOMY_DTYPE_LONG
  }
  return "?";
}

constexpr bool is_floating(DType t) {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 || t == DType::Float64;
}
constexpr bool is_integral(DType t, bool include_bool = false) {
  return (t == DType::Bool) ? include_bool : !is_floating(t);
}
constexpr bool is_signed(DType t) { return t != DType::Bool && t != DType::UInt8; }

// Parses "fp32", "float32", "float", "half", "bf16", "bfloat16", "int64", "long", ... Throws
// ValueError naming the accepted spellings.
DType parse_dtype(std::string_view s);

// PyTorch's promotion table: the smallest dtype both can be converted to without losing range
// category (bool < integers < floating). uint8 with int8 gives int16 in PyTorch; anatomy has no
// int16, so it gives int32 (documented in docs/dtypes.md).
DType promote_types(DType a, DType b);

// The C++ type of a dtype, and back.
template <DType T>
struct dtype_cpp;
template <typename T>
struct cpp_dtype;
#define ANATOMY_DTYPE_TRAITS(type, name, short_name, long_name) \
  template <>                                                   \
  struct dtype_cpp<DType::name> {                               \
    using type_t = type;                                        \
  };                                                            \
  template <>                                                   \
  struct cpp_dtype<type> {                                      \
    static constexpr DType value = DType::name;                 \
  };
ANATOMY_FORALL_DTYPES(ANATOMY_DTYPE_TRAITS)
#undef ANATOMY_DTYPE_TRAITS

template <DType T>
using dtype_cpp_t = typename dtype_cpp<T>::type_t;
template <typename T>
inline constexpr DType cpp_dtype_v = cpp_dtype<T>::value;

}  // namespace anatomy
