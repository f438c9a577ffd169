// The error contract: typed anatomy::Error subclasses, messages that name the operator and the
// offending values, nothing changed by a failed call, and InternalError for broken invariants.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "anatomy/anatomy.h"
#include "test_util.h"

using namespace anatomy;
using anatomy_test::D;
using anatomy_test::values;

TEST_CASE("errors: every error type is an anatomy::Error and a std::runtime_error") {
  static_assert(std::is_base_of_v<std::runtime_error, Error>);
  static_assert(std::is_base_of_v<Error, ValueError>);
  static_assert(std::is_base_of_v<Error, TypeError>);
  static_assert(std::is_base_of_v<Error, IndexError>);
  static_assert(std::is_base_of_v<Error, DeviceError>);
  static_assert(std::is_base_of_v<Error, NotImplementedError>);
  static_assert(std::is_base_of_v<Error, OutOfMemoryError>);
  static_assert(std::is_base_of_v<Error, InternalError>);
  // The types are distinct: catching one does not catch another.
  static_assert(!std::is_base_of_v<ValueError, IndexError> && !std::is_base_of_v<IndexError, ValueError>);
  static_assert(!std::is_base_of_v<ValueError, InternalError>);

  auto caught_as_error = [](auto thrower) {
    try {
      thrower();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("not caught");
  };
  CHECK(caught_as_error([] { throw ValueError("v"); }) == "v");
  CHECK(caught_as_error([] { throw TypeError("t"); }) == "t");
  CHECK(caught_as_error([] { throw IndexError("i"); }) == "i");
  CHECK(caught_as_error([] { throw DeviceError("d"); }) == "d");
  CHECK(caught_as_error([] { throw NotImplementedError("n"); }) == "n");
  CHECK(caught_as_error([] { throw OutOfMemoryError("o"); }) == "o");
  CHECK(caught_as_error([] { throw InternalError("x"); }) == "x");
  // Errors raised by operators are caught as Error too.
  CHECK(caught_as_error([] { (void)zeros({2}).view({3}); }).find("view") != std::string::npos);
  CHECK_THROWS_AS((void)zeros({2}).select(0, 5), std::runtime_error);
}

TEST_CASE("errors: ANATOMY_CHECK formats only when it fails, ANATOMY_THROW always throws") {
  int formatted = 0;
  auto expensive = [&] {
    ++formatted;
    return 42;
  };
  ANATOMY_CHECK(1 + 1 == 2, ValueError, "never {}", expensive());
  CHECK(formatted == 0);
  EXPECT_ERROR(
      ValueError, [&] { ANATOMY_CHECK(1 + 1 == 3, ValueError, "op: value {} is bad", expensive()); }(),
      "op: value 42 is bad");
  CHECK(formatted == 1);
  EXPECT_ERROR(
      IndexError, [] { ANATOMY_THROW(IndexError, "op: index {} out of range", 7); }(), "index 7");
}

TEST_CASE("errors: internal asserts throw InternalError naming the condition and the place") {
  EXPECT_ERROR(
      InternalError, [] { ANATOMY_INTERNAL_ASSERT(1 + 1 == 3, "value {}", 42); }(), "internal assert failed",
      "1 + 1 == 3", "test_errors.cpp", "value 42", "bug in anatomy");
  EXPECT_ERROR(
      InternalError, [] { ANATOMY_INTERNAL_ASSERT(false); }(), "internal assert failed", "false");
  // Not a user error: a ValueError handler does not see it.
  bool as_value_error = false;
  try {
    ANATOMY_INTERNAL_ASSERT(false);
  } catch (const ValueError&) {
    as_value_error = true;
  } catch (const InternalError&) {
  }
  CHECK_FALSE(as_value_error);
  // Broken invariants inside the engine: a TensorImpl needs a storage, and sizes and strides of
  // the same length.
  EXPECT_ERROR(InternalError,
               IntrusivePtr<TensorImpl>::make(Storage(), DType::Float32, IntArrayRef{2}, IntArrayRef{1}, 0), "storage");
  Tensor t = zeros({4});
  EXPECT_ERROR(InternalError, t.impl()->set_sizes_and_strides({2, 2}, {1}, 0), "internal assert failed");
  CHECK(t.dim() == 1);
}

TEST_CASE("errors: messages name the operator and the offending values") {
  Tensor x = zeros({2, 3});
  EXPECT_ERROR(ValueError, x.view({4, 2}), "view", "[4, 2]", "6");
  EXPECT_ERROR(ValueError, x.reshape({4, -1}), "reshape", "[4, -1]", "6");
  EXPECT_ERROR(ValueError, x.expand({3, 4}), "expand", "[3, 4]", "[2, 3]");
  EXPECT_ERROR(IndexError, x.select(1, 5), "select", "5", "3");
  EXPECT_ERROR(IndexError, x.transpose(0, 2), "transpose", "2", "2-dim");
  EXPECT_ERROR(ValueError, x.permute({1, 1}), "permute", "[1, 1]");
  EXPECT_ERROR(ValueError, x.as_strided({3, 3}, {3, 1}), "as_strided", "[3, 3]", "[3, 1]", "6");
  EXPECT_ERROR(ValueError, x.narrow(1, 2, 5), "narrow", "5", "3");
  EXPECT_ERROR(ValueError, x.split_with_sizes({1, 2}), "split", "[1, 2]", "2");
  EXPECT_ERROR(IndexError, x.size(5), "size", "5", "[-2, 1]");
  EXPECT_ERROR(IndexError, x.stride(-3), "stride", "-3");
  EXPECT_ERROR(IndexError, scalar_tensor(1.0).size(0), "size", "0-dim");
  EXPECT_ERROR(ValueError, x.item(), "item", "6");
  EXPECT_ERROR(ValueError, Device("tpu:0"), "Device", "'tpu:0'");
  EXPECT_ERROR(ValueError, parse_dtype("complex64"), "parse_dtype", "'complex64'");
  EXPECT_ERROR(TypeError, zeros({2}, DType::Int32).requires_grad_(), "requires_grad_", "int32");
  EXPECT_ERROR(NotImplementedError, empty({}, Device("meta")).item(), "item", "meta");
  CHECK(x.size(-1) == 3);
  CHECK(x.stride(0) == 3);
}

TEST_CASE("errors: negative and overflowing sizes in factories throw ValueError") {
  EXPECT_ERROR(ValueError, zeros({2, -1}), "-1", "[2, -1]");
  EXPECT_ERROR(ValueError, empty({-3}), "empty", "-3");
  EXPECT_ERROR(ValueError, ones({-1, 2}), "-1");
  EXPECT_ERROR(ValueError, full({-1}, 2.0), "-1");
  EXPECT_ERROR(ValueError, rand({4, -2}), "-2");
  EXPECT_ERROR(ValueError, randn({-2}), "-2");
  EXPECT_ERROR(ValueError, randint(0, 5, {-2}), "-2");
  EXPECT_ERROR(ValueError, empty_strided({2, -2}, {1, 1}), "empty_strided", "-2");
  EXPECT_ERROR(ValueError, empty_strided({2, 2}, {-1, 1}), "empty_strided", "negative stride", "-1");
  EXPECT_ERROR(ValueError, empty_strided({2, 2}, {1}), "empty_strided", "[2, 2]", "[1]");
  EXPECT_ERROR(ValueError, empty({int64_t{1} << 32, int64_t{1} << 32}), "empty", "overflow");
  EXPECT_ERROR(ValueError, zeros({int64_t{1} << 62, 4}), "overflow");
  EXPECT_ERROR(ValueError, empty({-1}, Device("meta")), "empty", "-1");
}

TEST_CASE("errors: composite factories name the operator the user called") {
  // zeros, ones and full are composites over empty: they check sizes under their own names.
  EXPECT_ERROR(ValueError, zeros({2, -1}), "zeros");
  EXPECT_ERROR(ValueError, ones({-1}), "ones");
  EXPECT_ERROR(ValueError, full({-1}, 2.0), "full");
}

TEST_CASE("errors: strided layouts whose extent overflows are refused, not under-allocated") {
  // For sizes [5] and strides [2^62] the extent 1 + 4 * 2^62 overflows: an unchecked sum would
  // wrap to 1 and hand out a 1-element storage for elements 2^62 apart.
  const int64_t huge = int64_t{1} << 62;
  EXPECT_ERROR(ValueError, empty_strided({5}, {huge}, DType::Int8), "empty_strided");
  EXPECT_ERROR(ValueError, empty_strided({5}, {huge}, TensorOptions().dtype(DType::Int8).device(Device("meta"))),
               "empty_strided");
  float b[1] = {0};
  EXPECT_ERROR(ValueError, from_blob(b, {5}, {huge}), "from_blob");
}

TEST_CASE("errors: an allocation that cannot be satisfied is an OutOfMemoryError and leaks nothing") {
  const auto before = alloc::cpu_allocator_stats();
  // 2^63 bytes: refused before asking the system.
  EXPECT_ERROR(OutOfMemoryError, empty({int64_t{1} << 61}, DType::Float32), "cpu allocator", "too large");
  // 2^61 bytes: the system refuses (sanitizer allocators abort instead of returning null).
  if (!anatomy_test::under_sanitizer()) {
    EXPECT_ERROR(OutOfMemoryError, empty({int64_t{1} << 59}, DType::Float32), "cpu allocator", "out of memory");
  }
  const auto after = alloc::cpu_allocator_stats();
  CHECK(after.live_bytes == before.live_bytes);
  CHECK(after.live_blocks == before.live_blocks);
}

TEST_CASE("errors: a factory that fails after allocating frees its memory") {
  const int64_t before = alloc::cpu_allocator_stats().live_bytes;
  EXPECT_ERROR(ValueError, full({1024}, 1000, DType::Int8), "fill_", "1000", "int8");
  EXPECT_ERROR(ValueError, randint(0, 1000, {1024}, DType::Int8), "random_");
  EXPECT_ERROR(TypeError, rand({1024}, DType::Int64), "rand");
  CHECK(alloc::cpu_allocator_stats().live_bytes == before);
}

TEST_CASE("errors: fill_ with a value the dtype cannot hold throws ValueError and changes nothing") {
  Tensor i8 = tensor({1, 2, 3}, DType::Int8);
  EXPECT_ERROR_UNCHANGED(i8, ValueError, i8.fill_(1000), "fill_", "1000", "int8");
  EXPECT_ERROR_UNCHANGED(i8, ValueError, i8.fill_(-129), "fill_", "-129");
  EXPECT_ERROR_UNCHANGED(i8, ValueError, i8.fill_(1000.5), "fill_", "int8");
  // Through a view, the base is unchanged too.
  EXPECT_ERROR_UNCHANGED(i8, ValueError, i8.slice(0, 1).fill_(200), "fill_", "200");
  CHECK(values(i8) == D{1, 2, 3});

  Tensor u8 = zeros({2}, DType::UInt8);
  EXPECT_ERROR_UNCHANGED(u8, ValueError, u8.fill_(256), "uint8", "256");
  EXPECT_ERROR_UNCHANGED(u8, ValueError, u8.fill_(-1), "uint8", "-1");
  Tensor i32 = zeros({2}, DType::Int32);
  EXPECT_ERROR_UNCHANGED(i32, ValueError, i32.fill_(int64_t{1} << 31), "int32", "2147483648");
  EXPECT_ERROR_UNCHANGED(i32, ValueError, i32.fill_(std::numeric_limits<double>::quiet_NaN()), "int32");
  EXPECT_ERROR_UNCHANGED(i32, ValueError, i32.fill_(std::numeric_limits<double>::infinity()), "int32");
  Tensor f16 = zeros({2}, DType::Float16);
  EXPECT_ERROR_UNCHANGED(f16, ValueError, f16.fill_(70000.0), "fp16", "70000");
  EXPECT_ERROR_UNCHANGED(f16, ValueError, f16.fill_(100000), "fp16");
  Tensor bf = zeros({2}, DType::BFloat16);
  EXPECT_ERROR_UNCHANGED(bf, ValueError, bf.fill_(1e39), "bf16");
  Tensor f32 = zeros({2});
  EXPECT_ERROR_UNCHANGED(f32, ValueError, f32.fill_(1e40), "fp32");

  // What fits is accepted: the extremes, non-finite floats, truncated floats, anything into bool.
  i8.fill_(-128);
  CHECK(values(i8) == D{-128, -128, -128});
  i8.fill_(127);
  CHECK(values(i8) == D{127, 127, 127});
  u8.fill_(255);
  CHECK(values(u8) == D{255, 255});
  f16.fill_(65504.0);
  CHECK(values(f16) == D{65504, 65504});
  f16.fill_(std::numeric_limits<double>::infinity());
  CHECK(std::isinf(values(f16)[0]));
  f32.fill_(std::numeric_limits<double>::quiet_NaN());
  CHECK(std::isnan(values(f32)[0]));
  i32.fill_(2.9);
  CHECK(values(i32) == D{2, 2});
  Tensor b = zeros({2}, DType::Bool);
  b.fill_(5);
  CHECK(values(b) == D{1, 1});
  Tensor i64 = zeros({1}, DType::Int64);
  i64.fill_(std::numeric_limits<int64_t>::max());
  CHECK(i64.data_ptr<int64_t>()[0] == std::numeric_limits<int64_t>::max());
}

TEST_CASE("errors: data_ptr<T>() with the wrong T throws TypeError") {
  Tensor i = zeros({2}, DType::Int64);
  EXPECT_ERROR(TypeError, i.data_ptr<float>(), "data_ptr", "fp32", "int64");
  EXPECT_ERROR(TypeError, i.data_ptr<int32_t>(), "data_ptr", "int32", "int64");
  EXPECT_ERROR(TypeError, zeros({2}, DType::Float16).data_ptr<BFloat16>(), "bf16", "fp16");
  EXPECT_ERROR(TypeError, zeros({2}, DType::Bool).data_ptr<uint8_t>(), "uint8", "bool");
  CHECK(i.data_ptr<int64_t>() == i.data_ptr());
  Tensor v = arange(6, DType::Float32).slice(0, 2);
  CHECK(v.data_ptr<float>() == static_cast<float*>(v.storage()->data()) + 2);
  CHECK(*v.data_ptr<float>() == 2.0f);
}

TEST_CASE("errors: Scalar kinds, conversions and comparisons") {
  CHECK(Scalar(true).is_bool());
  CHECK(Scalar(int8_t{3}).is_integral());
  CHECK(Scalar(uint64_t{3}).is_integral());
  CHECK(Scalar(2.5f).is_floating_point());
  CHECK(Scalar(Half(1.5f)).is_floating_point());
  CHECK(Scalar().is_integral());
  CHECK(Scalar().to_int() == 0);
  CHECK(Scalar(true).dtype() == DType::Bool);
  CHECK(Scalar(3).dtype() == DType::Int64);
  CHECK(Scalar(2.5f).dtype() == DType::Float64);

  // to<T>() converts as a cast would: floats truncate toward zero.
  CHECK(Scalar(3.7).to<int>() == 3);
  CHECK(Scalar(-3.7).to<int64_t>() == -3);
  CHECK(Scalar(true).to<float>() == 1.0f);
  CHECK(Scalar(false).to<double>() == 0.0);
  CHECK(Scalar(2.5).to<bool>());
  CHECK_FALSE(Scalar(0.0).to<bool>());
  CHECK(Scalar(std::numeric_limits<double>::quiet_NaN()).to<bool>());
  CHECK(Scalar(-1).to<bool>());
  CHECK(Scalar(300).to<uint8_t>() == 44);
  CHECK(Scalar(1.5).to<Half>().x == 0x3e00);
  CHECK(Scalar(1.5).to<BFloat16>().x == 0x3fc0);
  CHECK(Scalar(7).to<Half>().x == 0x4700);
  // fp64 -> fp16 through to<Half>() rounds once.
  CHECK(Scalar(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)).to<Half>().x == 0x3c01);
  const int64_t big = (int64_t{1} << 62) + 1;
  CHECK(Scalar(big).to<int64_t>() == big);
  CHECK(Scalar(big).to_int() == big);
  CHECK(Scalar(2.75).to_double() == 2.75);
  CHECK(Scalar(5).to_double() == 5.0);

  CHECK(Scalar(true).to_string() == "True");
  CHECK(Scalar(false).to_string() == "False");
  CHECK(Scalar(-12).to_string() == "-12");
  CHECK(Scalar(2.5).to_string() == "2.5");

  CHECK(Scalar(2) == Scalar(int64_t{2}));
  CHECK_FALSE(Scalar(1) == Scalar(1.0));  // different kinds
  CHECK_FALSE(Scalar(true) == Scalar(1));
  CHECK(Scalar(0.5) == Scalar(0.5f));
  CHECK_FALSE(Scalar(0.5) == Scalar(0.25));
}

TEST_CASE("errors: check_scalar_fits names the operator, the value and the dtype") {
  EXPECT_ERROR(ValueError, check_scalar_fits(Scalar(1000), DType::Int8, "my_op"), "my_op", "1000", "int8");
  EXPECT_ERROR(ValueError, check_scalar_fits(Scalar(-1.0), DType::UInt8, "my_op"), "my_op", "uint8");
  EXPECT_ERROR(ValueError, check_scalar_fits(Scalar(1e300), DType::Float32, "my_op"), "my_op", "fp32");
  check_scalar_fits(Scalar(1e300), DType::Float64, "my_op");
  check_scalar_fits(Scalar(1e300), DType::Bool, "my_op");
  check_scalar_fits(Scalar(-128), DType::Int8, "my_op");
  check_scalar_fits(Scalar(-127.9), DType::Int8, "my_op");
  // As PyTorch's c10::overflows: a float above the largest integer overflows even if it would
  // truncate into range.
  EXPECT_ERROR(ValueError, check_scalar_fits(Scalar(127.5), DType::Int8, "my_op"), "127.5");
  check_scalar_fits(Scalar(std::numeric_limits<double>::infinity()), DType::BFloat16, "my_op");
}

TEST_CASE("errors: failed in-place and view calls leave every tensor as it was") {
  Tensor x = arange(6, DType::Float32).view({2, 3});
  Tensor y = x.t();
  // A mix of failures through different operators; x and its view y both stay put.
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.copy_(zeros({4})));
  EXPECT_ERROR_UNCHANGED(y, ValueError, y.copy_(zeros({2, 3})));
  EXPECT_ERROR_UNCHANGED(x, ValueError, y.expand({4, 3, 2}).copy_(zeros({4, 3, 2})), "copy_");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.uniform_(1.0, 0.0), "uniform_");
  EXPECT_ERROR_UNCHANGED(x, ValueError, x.normal_(0.0, -1.0), "normal_", "-1");
  Tensor i = arange(4);
  EXPECT_ERROR_UNCHANGED(i, TypeError, i.uniform_(), "uniform_", "int64");
  EXPECT_ERROR_UNCHANGED(i, TypeError, i.normal_(), "normal_", "int64");
  EXPECT_ERROR_UNCHANGED(i, ValueError, random_(i, 5, 2), "random_");
  CHECK(values(x) == D{0, 1, 2, 3, 4, 5});
  CHECK(x.version() == 0);
}

TEST_CASE("errors: copying meta data into a CPU tensor is a DeviceError, the reverse only checks shapes") {
  Tensor cpu = arange(4, DType::Float32);
  Tensor meta = empty({4}, Device("meta"));
  EXPECT_ERROR_UNCHANGED(cpu, DeviceError, cpu.copy_(meta), "copy_", "meta", "cpu");
  meta.copy_(cpu);  // no data moves, but the shapes are checked
  CHECK(meta.version() == 1);
  EXPECT_ERROR(ValueError, meta.copy_(zeros({3})), "[3]");
  CHECK(meta.is_meta());
}
