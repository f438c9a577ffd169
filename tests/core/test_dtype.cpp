// DType properties and parsing, PyTorch's promotion table, weak (scalar and 0-dim) promotion,
// can_cast, and element conversions.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include "anatomy/anatomy.h"
#include "anatomy/core/dtype_visit.h"
#include "test_util.h"

using namespace anatomy;

namespace {

constexpr DType kAll[] = {DType::Bool,    DType::UInt8,    DType::Int8,    DType::Int32,  DType::Int64,
                          DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

}  // namespace

TEST_CASE("dtype: the list has nine dtypes in promotion order") {
  CHECK(kNumDTypes == 9);
  for (int i = 0; i < kNumDTypes; ++i) CHECK(static_cast<int>(kAll[i]) == i);
  CHECK(kDefaultFloat == DType::Float32);
}

TEST_CASE("dtype: element_size, name, torch_name and categories of every dtype") {
  struct Row {
    DType t;
    size_t size;
    const char* name;
    const char* torch;
    bool floating, integral, integral_with_bool, is_signed;
  };
  const Row rows[] = {
      {DType::Bool, 1, "bool", "torch.bool", false, false, true, false},
      {DType::UInt8, 1, "uint8", "torch.uint8", false, true, true, false},
      {DType::Int8, 1, "int8", "torch.int8", false, true, true, true},
      {DType::Int32, 4, "int32", "torch.int32", false, true, true, true},
      {DType::Int64, 8, "int64", "torch.int64", false, true, true, true},
      {DType::Float16, 2, "fp16", "torch.float16", true, false, false, true},
      {DType::BFloat16, 2, "bf16", "torch.bfloat16", true, false, false, true},
      {DType::Float32, 4, "fp32", "torch.float32", true, false, false, true},
      {DType::Float64, 8, "fp64", "torch.float64", true, false, false, true},
  };
  for (const Row& r : rows) {
    INFO("dtype ", r.name);
    CHECK(element_size(r.t) == r.size);
    CHECK(name(r.t) == r.name);
    CHECK(torch_name(r.t) == r.torch);
    CHECK(is_floating(r.t) == r.floating);
    CHECK(is_integral(r.t) == r.integral);
    CHECK(is_integral(r.t, true) == r.integral_with_bool);
    CHECK(is_signed(r.t) == r.is_signed);
  }
  // The C++ type traits agree with the enum.
  static_assert(std::is_same_v<dtype_cpp_t<DType::Float16>, Half>);
  static_assert(std::is_same_v<dtype_cpp_t<DType::BFloat16>, BFloat16>);
  static_assert(std::is_same_v<dtype_cpp_t<DType::Int32>, int32_t>);
  static_assert(cpp_dtype_v<double> == DType::Float64);
  static_assert(cpp_dtype_v<bool> == DType::Bool);
  static_assert(cpp_dtype_v<uint8_t> == DType::UInt8);
}

TEST_CASE("dtype: parse_dtype accepts every short name, torch name and alias") {
  for (DType t : kAll) {
    INFO("dtype ", name(t));
    CHECK(parse_dtype(name(t)) == t);
    CHECK(parse_dtype(torch_name(t)) == t);
  }
  CHECK(parse_dtype("float") == DType::Float32);
  CHECK(parse_dtype("float32") == DType::Float32);
  CHECK(parse_dtype("f32") == DType::Float32);
  CHECK(parse_dtype("double") == DType::Float64);
  CHECK(parse_dtype("half") == DType::Float16);
  CHECK(parse_dtype("float16") == DType::Float16);
  CHECK(parse_dtype("bfloat16") == DType::BFloat16);
  CHECK(parse_dtype("long") == DType::Int64);
  CHECK(parse_dtype("int") == DType::Int32);
  CHECK(parse_dtype("i8") == DType::Int8);
  CHECK(parse_dtype("u8") == DType::UInt8);
}

TEST_CASE("dtype: parse_dtype rejects unknown spellings with ValueError naming the input and the choices") {
  EXPECT_ERROR(ValueError, parse_dtype("float8"), "parse_dtype", "'float8'", "fp32", "bf16", "int64");
  EXPECT_ERROR(ValueError, parse_dtype(""), "parse_dtype");
  EXPECT_ERROR(ValueError, parse_dtype("torch."), "parse_dtype");
  EXPECT_ERROR(ValueError, parse_dtype("int16"), "'int16'");
  EXPECT_ERROR(ValueError, parse_dtype(" fp32"), "parse_dtype");
}

TEST_CASE("dtype: promote_types matches PyTorch's table for all 81 pairs") {
  constexpr DType b1 = DType::Bool, u1 = DType::UInt8, i1 = DType::Int8, i4 = DType::Int32, i8 = DType::Int64,
                  f2 = DType::Float16, bf = DType::BFloat16, f4 = DType::Float32, f8 = DType::Float64;
  // torch.promote_types over (bool, uint8, int8, int32, int64, float16, bfloat16, float32,
  // float64). The one deliberate difference: PyTorch gives int16 for uint8 with int8; anatomy
  // has no int16, so it gives int32 (docs/dtypes.md).
  const DType expected[9][9] = {
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
  int mismatches = 0;
  for (int a = 0; a < 9; ++a) {
    for (int b = 0; b < 9; ++b) {
      DType got = promote_types(kAll[a], kAll[b]);
      if (got != expected[a][b]) {
        ++mismatches;
        MESSAGE("promote_types(", name(kAll[a]), ", ", name(kAll[b]), ") = ", name(got), ", expected ",
                name(expected[a][b]));
      }
    }
  }
  CHECK(mismatches == 0);
  // The headline cases, spelled out.
  CHECK(promote_types(u1, i1) == i4);
  CHECK(promote_types(f2, bf) == f4);
  CHECK(promote_types(i8, f2) == f2);
  CHECK(promote_types(b1, b1) == b1);
}

TEST_CASE("dtype: promote_types is symmetric and idempotent") {
  for (DType a : kAll) {
    CHECK(promote_types(a, a) == a);
    for (DType b : kAll) {
      CHECK(promote_types(a, b) == promote_types(b, a));
      // The result can hold both operands' category.
      DType r = promote_types(a, b);
      CHECK(promote_types(r, a) == r);
      CHECK(promote_types(r, b) == r);
    }
  }
}

TEST_CASE("type promotion: a scalar is weak, only its category counts") {
  // torch.ones(2, dtype=torch.float16) + 2 -> float16
  CHECK(result_type(DType::Float16, Scalar(2)) == DType::Float16);
  // torch.ones(2, dtype=torch.float16) + 2.5 -> float16
  CHECK(result_type(DType::Float16, Scalar(2.5)) == DType::Float16);
  // torch.ones(2, dtype=torch.bfloat16) * 2.5 -> bfloat16
  CHECK(result_type(DType::BFloat16, Scalar(2.5)) == DType::BFloat16);
  // torch.ones(2, dtype=torch.int32) * 2.5 -> float32 (the default float), not float64
  CHECK(result_type(DType::Int32, Scalar(2.5)) == DType::Float32);
  CHECK(result_type(DType::Int64, Scalar(2.5)) == DType::Float32);
  // torch.ones(2, dtype=torch.int8) + 1000 -> int8
  CHECK(result_type(DType::Int8, Scalar(1000)) == DType::Int8);
  CHECK(result_type(DType::UInt8, Scalar(int64_t{1} << 40)) == DType::UInt8);
  // torch.ones(2, dtype=torch.bool) + 1 -> int64; + 1.5 -> float32; + True -> bool
  CHECK(result_type(DType::Bool, Scalar(1)) == DType::Int64);
  CHECK(result_type(DType::Bool, Scalar(1.5)) == DType::Float32);
  CHECK(result_type(DType::Bool, Scalar(true)) == DType::Bool);
  // torch.ones(2, dtype=torch.uint8) + True -> uint8
  CHECK(result_type(DType::UInt8, Scalar(true)) == DType::UInt8);
  // torch.ones(2, dtype=torch.float64) + 1.5 -> float64
  CHECK(result_type(DType::Float64, Scalar(1.5)) == DType::Float64);
  // A double-precision value is still a weak float: int32 tensor * 0.1 (a double) -> float32.
  CHECK(result_type(DType::Int32, Scalar(0.1)) == DType::Float32);
}

TEST_CASE("type promotion: 0-dim tensors are weak next to dimensioned tensors") {
  auto dim_and_zero = [](DType dim, DType zero) {
    ResultTypeState s;
    s.add_tensor(dim);
    s.add_zero_dim_tensor(zero);
    return s.result();
  };
  // torch.ones(2, dtype=torch.int32) + torch.tensor(1, dtype=torch.int64) -> int32
  CHECK(dim_and_zero(DType::Int32, DType::Int64) == DType::Int32);
  // torch.ones(2, dtype=torch.float32) + torch.tensor(1., dtype=torch.float64) -> float32
  CHECK(dim_and_zero(DType::Float32, DType::Float64) == DType::Float32);
  // torch.ones(2, dtype=torch.float16) + torch.tensor(1., dtype=torch.float64) -> float16
  CHECK(dim_and_zero(DType::Float16, DType::Float64) == DType::Float16);
  // torch.ones(2, dtype=torch.int32) + torch.tensor(1., dtype=torch.float64) -> float64:
  // combine_categories(dim=int32, zero=float64): the higher tier is integral and the lower is
  // floating, so the two are promoted, and the 0-dim tensor's own float width is kept.
  CHECK(dim_and_zero(DType::Int32, DType::Float64) == DType::Float64);
  // torch.ones(2, dtype=torch.int64) + torch.tensor(1., dtype=torch.float16) -> float16
  CHECK(dim_and_zero(DType::Int64, DType::Float16) == DType::Float16);
  // torch.ones(2, dtype=torch.bool) + torch.tensor(1, dtype=torch.int32) -> int32
  CHECK(dim_and_zero(DType::Bool, DType::Int32) == DType::Int32);
  // torch.ones(2, dtype=torch.uint8) + torch.tensor(1, dtype=torch.int8) -> uint8
  CHECK(dim_and_zero(DType::UInt8, DType::Int8) == DType::UInt8);
}

TEST_CASE("type promotion: 0-dim tensors are strong among 0-dim tensors and scalars") {
  {
    // torch.tensor(1, dtype=torch.int8) + 1000 -> int8
    ResultTypeState s;
    s.add_zero_dim_tensor(DType::Int8);
    s.add_scalar(Scalar(1000));
    CHECK(s.result() == DType::Int8);
  }
  {
    // torch.tensor(1, dtype=torch.int32) + 2.5 -> float32
    ResultTypeState s;
    s.add_zero_dim_tensor(DType::Int32);
    s.add_scalar(Scalar(2.5));
    CHECK(s.result() == DType::Float32);
  }
  {
    // torch.tensor(1., dtype=torch.float16) + torch.tensor(1., dtype=torch.float64) -> float64
    ResultTypeState s;
    s.add_zero_dim_tensor(DType::Float16);
    s.add_zero_dim_tensor(DType::Float64);
    CHECK(s.result() == DType::Float64);
  }
  {
    // torch.ones(2, dtype=torch.int32) + torch.tensor(1, dtype=torch.int64) + 2.5 -> float32
    ResultTypeState s;
    s.add_tensor(DType::Int32);
    s.add_zero_dim_tensor(DType::Int64);
    s.add_scalar(Scalar(2.5));
    CHECK(s.result() == DType::Float32);
  }
  {
    // Two dimensioned tensors promote normally: int32 + float16 -> float16.
    ResultTypeState s;
    s.add_tensor(DType::Int32);
    s.add_tensor(DType::Float16);
    s.add_scalar(Scalar(1.5));
    CHECK(s.result() == DType::Float16);
  }
  {
    // Scalars only: 1 + 2.5 is the default float; True + 1 is int64; nothing at all is fp32.
    ResultTypeState s;
    s.add_scalar(Scalar(1));
    s.add_scalar(Scalar(2.5));
    CHECK(s.result() == DType::Float32);
    ResultTypeState t;
    t.add_scalar(Scalar(true));
    t.add_scalar(Scalar(1));
    CHECK(t.result() == DType::Int64);
    CHECK(ResultTypeState().result() == DType::Float32);
  }
}

TEST_CASE("type promotion: arange's default dtype") {
  CHECK(arange_default_dtype(0, 10, 1) == DType::Int64);
  CHECK(arange_default_dtype(0, 10.0, 1) == DType::Float32);
  CHECK(arange_default_dtype(0.5, 10, 1) == DType::Float32);
  CHECK(arange_default_dtype(0, 10, 0.5) == DType::Float32);
}

TEST_CASE("type promotion: can_cast follows PyTorch's canCast for all 81 pairs") {
  int mismatches = 0;
  for (DType from : kAll) {
    for (DType to : kAll) {
      // Floating into an integral (or bool) dtype, or a non-bool into bool, leaves the category.
      bool expected = !(is_floating(from) && !is_floating(to)) && !(from != DType::Bool && to == DType::Bool);
      if (can_cast(from, to) != expected) {
        ++mismatches;
        MESSAGE("can_cast(", name(from), ", ", name(to), ") should be ", expected);
      }
    }
  }
  CHECK(mismatches == 0);
  CHECK(can_cast(DType::Int64, DType::Int8));  // narrowing within a category is allowed
  CHECK(can_cast(DType::Float64, DType::Float16));
  CHECK(can_cast(DType::Bool, DType::Float16));
  CHECK_FALSE(can_cast(DType::Float16, DType::Int64));
  CHECK_FALSE(can_cast(DType::Int8, DType::Bool));
  CHECK_FALSE(can_cast(DType::Float32, DType::Bool));
}

TEST_CASE("convert: edge values between element types") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Anything -> bool means "is nonzero": NaN is nonzero, -0.0 is zero.
  CHECK(convert<bool>(nan) == true);
  CHECK(convert<bool>(static_cast<float>(nan)) == true);
  CHECK(convert<bool>(Half(static_cast<float>(nan))) == true);
  CHECK(convert<bool>(BFloat16(static_cast<float>(nan))) == true);
  CHECK(convert<bool>(-0.0) == false);
  CHECK(convert<bool>(Half(-0.0f)) == false);
  CHECK(convert<bool>(BFloat16(-0.0f)) == false);
  CHECK(convert<bool>(int8_t{-1}) == true);
  CHECK(convert<bool>(uint8_t{0}) == false);
  CHECK(convert<bool>(1e-30) == true);
  // -0.0 keeps its sign through the reduced floats.
  CHECK(convert<Half>(-0.0).x == 0x8000);
  CHECK(convert<BFloat16>(-0.0f).x == 0x8000);
  CHECK(std::signbit(convert<double>(Half::from_bits(0x8000))));
  CHECK(std::signbit(convert<float>(BFloat16::from_bits(0x8000))));
  // bool -> numbers is 0/1.
  CHECK(convert<float>(true) == 1.0f);
  CHECK(convert<Half>(true).x == 0x3c00);
  CHECK(convert<int64_t>(false) == 0);
  // Float -> int truncates toward zero, as static_cast.
  CHECK(convert<int32_t>(2.9) == 2);
  CHECK(convert<int32_t>(-2.9f) == -2);
  CHECK(convert<int64_t>(Half(-3.5f)) == -3);
  CHECK(convert<uint8_t>(BFloat16(200.0f)) == 200);
  // fp64 -> fp16 rounds once. 1 + 2^-11 is the midpoint between the halves 1 and 1 + 2^-10;
  // a double just above it must round up. Going through float first would round it to the
  // midpoint and then (ties to even) down to 1.
  const double just_above = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  CHECK(convert<Half>(just_above).x == 0x3c01);
  CHECK(static_cast<double>(static_cast<float>(convert<Half>(just_above))) == 1.0 + std::ldexp(1.0, -10));
  // The midpoint itself ties to even (1.0).
  CHECK(convert<Half>(1.0 + std::ldexp(1.0, -11)).x == 0x3c00);
  // Same for bf16: 1 + 2^-8 is the midpoint between 1 and 1 + 2^-7.
  CHECK(convert<BFloat16>(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40)).x == 0x3f81);
  // Overflow to infinity and exact integers.
  CHECK(convert<Half>(65520.0).x == 0x7c00);
  CHECK(convert<Half>(65504.0).x == 0x7bff);
  CHECK(convert<Half>(int64_t{2048}).x == 0x6800);
  CHECK(convert<float>(Half::from_bits(0x3555)) == 0.333251953125f);
  CHECK(std::isnan(convert<float>(Half(static_cast<float>(nan)))));
  CHECK(std::isinf(convert<double>(BFloat16(std::numeric_limits<float>::infinity()))));
}

TEST_CASE("convert: every dtype round-trips small integers through every other dtype") {
  int mismatches = 0;
  for (DType a : kAll) {
    for (DType b : kAll) {
      visit_dtype(a, "test", [&]<typename A>() {
        visit_dtype(b, "test", [&]<typename B>() {
          for (int v : {0, 1, 3, 100}) {
            const bool bool_involved = std::is_same_v<A, bool> || std::is_same_v<B, bool>;
            const double expected = bool_involved ? (v != 0 ? 1.0 : 0.0) : static_cast<double>(v);
            const double got = convert<double>(convert<B>(convert<A>(v)));
            if (got != expected) {
              ++mismatches;
              MESSAGE(v, " via ", name(a), " -> ", name(b), " gave ", got);
            }
          }
        });
      });
    }
  }
  CHECK(mismatches == 0);
}
