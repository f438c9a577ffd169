// DType parsing and PyTorch's type promotion table.
#include "anatomy/core/dtype.h"

#include <array>
#include <string>

#include "anatomy/core/error.h"

namespace anatomy {

DType parse_dtype(std::string_view s) {
  struct Spelling {
    std::string_view text;
    DType dtype;
  };
  static constexpr std::array<Spelling, 24> spellings{{
      {"bool", DType::Bool},         {"uint8", DType::UInt8},    {"u8", DType::UInt8},
      {"int8", DType::Int8},         {"i8", DType::Int8},        {"int32", DType::Int32},
      {"int", DType::Int32},         {"i32", DType::Int32},      {"int64", DType::Int64},
      {"long", DType::Int64},        {"i64", DType::Int64},      {"fp16", DType::Float16},
      {"float16", DType::Float16},   {"half", DType::Float16},   {"bf16", DType::BFloat16},
      {"bfloat16", DType::BFloat16}, {"fp32", DType::Float32},   {"float32", DType::Float32},
      {"float", DType::Float32},     {"f32", DType::Float32},    {"fp64", DType::Float64},
      {"float64", DType::Float64},   {"double", DType::Float64}, {"f64", DType::Float64},
  }};
  std::string_view t = s;
  if (t.substr(0, 6) == "torch.") t.remove_prefix(6);
  for (const auto& sp : spellings) {
    if (sp.text == t) return sp.dtype;
  }
  std::string known;
  for (int i = 0; i < kNumDTypes; ++i) {
    known += (i ? ", " : "") + std::string(name(static_cast<DType>(i)));
  }
  ANATOMY_THROW(ValueError, "parse_dtype: unknown dtype '{}'; expected one of {}", s, known);
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  // Rows and columns in enum order: bool, uint8, int8, int32, int64, fp16, bf16, fp32, fp64.
  constexpr DType b1 = DType::Bool, u1 = DType::UInt8, i1 = DType::Int8, i4 = DType::Int32, i8 = DType::Int64,
                  f2 = DType::Float16, bf = DType::BFloat16, f4 = DType::Float32, f8 = DType::Float64;
  static constexpr DType table[kNumDTypes][kNumDTypes] = {
      /*        b1  u1  i1  i4  i8  f2  bf  f4  f8 */
      /* b1 */ {b1, u1, i1, i4, i8, f2, bf, f4, f8},
      /* u1 */ {u1, u1, i4, i4, i8, f2, bf, f4, f8},
      /* i1 */ {i1, i4, i1, i4, i8, f2, bf, f4, f8},
      /* i4 */ {i4, i4, i4, i4, i8, f2, bf, f4, f8},
      /* i8 */ {i8, i8, i8, i8, i8, f2, bf, f4, f8},
      /* f2 */ {f2, f2, f2, f2, f2, f2, f4, f4, f8},
      /* bf */ {bf, bf, bf, bf, bf, f4, bf, f4, f8},
      /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f4, f8},
      /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8},
  };
  return table[static_cast<int>(a)][static_cast<int>(b)];
}

}  // namespace anatomy
