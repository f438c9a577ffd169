// Helpers shared by the core tests: reading a tensor's values independently of the kernels,
// snapshots that prove a failed operation changed nothing, and error checks that look at both
// the exception type and its message.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <set>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#include "anatomy/anatomy.h"
#include "anatomy/core/dtype_visit.h"

namespace doctest {
template <>
struct StringMaker<std::vector<int64_t>> {
  static String convert(const std::vector<int64_t>& v) {
    std::ostringstream os;
    os << "[";
    for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
    os << "]";
    return String(os.str().c_str());
  }
};
template <>
struct StringMaker<std::vector<double>> {
  static String convert(const std::vector<double>& v) {
    std::ostringstream os;
    os.precision(17);
    os << "[";
    for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
    os << "]";
    return String(os.str().c_str());
  }
};
}  // namespace doctest

// Defined by every sanitizer runtime (ASan, UBSan, TSan); null in a plain build.
extern "C" void __sanitizer_print_stack_trace() __attribute__((weak));

namespace anatomy_test {

// Whether the process runs under a sanitizer. Tests that pin down a known signed-overflow bug
// in anatomy, or ask the allocator for more memory than exists, skip those calls there: the
// sanitizers (built with -fno-sanitize-recover) would abort the whole test process.
inline bool under_sanitizer() { return &__sanitizer_print_stack_trace != nullptr; }

using V = std::vector<int64_t>;
using D = std::vector<double>;

inline V vec(anatomy::IntArrayRef a) { return V(a.begin(), a.end()); }

// Element `offset` (in elements, from data_ptr) of a CPU tensor, as a double.
inline double element(const anatomy::Tensor& t, int64_t offset) {
  return anatomy::visit_dtype(t.dtype(), "test", [&]<typename T>() -> double {
    return anatomy::convert<double>(static_cast<const T*>(t.data_ptr())[offset]);
  });
}

// The values of a CPU tensor in row-major order of its shape, read through its own sizes,
// strides and offset (a walk written here, not the library's).
inline D values(const anatomy::Tensor& t) {
  D out;
  if (t.numel() == 0) return out;
  V index(t.dim(), 0);
  for (int64_t n = 0; n < t.numel(); ++n) {
    int64_t offset = 0;
    for (int64_t d = 0; d < t.dim(); ++d) offset += index[d] * t.strides()[d];
    out.push_back(element(t, offset));
    for (int64_t d = t.dim() - 1; d >= 0; --d) {
      if (++index[d] < t.sizes()[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

// The whole storage of an fp32 tensor, element by element.
inline std::vector<float> storage_floats(const anatomy::Tensor& t) {
  REQUIRE(t.dtype() == anatomy::DType::Float32);
  size_t n = t.storage()->nbytes() / sizeof(float);
  const float* p = static_cast<const float*>(t.storage()->data());
  return std::vector<float>(p, p + n);
}

// Everything an operation that throws must leave as it was.
struct Snapshot {
  V sizes, strides;
  int64_t offset;
  uint32_t version;
  anatomy::DType dtype;
  D data;
  const void* storage;
};

inline Snapshot snapshot(const anatomy::Tensor& t) {
  return {vec(t.sizes()), vec(t.strides()), t.storage_offset(), t.version(), t.dtype(), values(t), t.storage().get()};
}

inline void check_unchanged(const anatomy::Tensor& t, const Snapshot& s) {
  CHECK(vec(t.sizes()) == s.sizes);
  CHECK(vec(t.strides()) == s.strides);
  CHECK(t.storage_offset() == s.offset);
  CHECK(t.version() == s.version);
  CHECK(t.dtype() == s.dtype);
  CHECK(t.storage().get() == s.storage);
  CHECK(values(t) == s.data);
}

// Runs f, which must throw ErrorType (or a subclass) with every needle in its message. Each
// expectation is a counted CHECK; a failure names the call site.
template <typename ErrorType, typename F>
std::string expect_error(F&& f, std::initializer_list<const char*> needles, const char* file, int line) {
  INFO("expected ", doctest::String(typeid(ErrorType).name()), " at ", std::string(file), ":", line);
  std::string msg, wrong;
  bool right_type = false, thrown = false;
  try {
    f();
  } catch (const ErrorType& e) {
    thrown = right_type = true;
    msg = e.what();
  } catch (const std::exception& e) {
    thrown = true;
    wrong = e.what();
  }
  CHECK_MESSAGE(thrown, "no exception was thrown");
  CHECK_MESSAGE((right_type || !thrown), "threw the wrong exception type; message: ", wrong);
  if (right_type) {
    for (const char* n : needles) {
      CHECK_MESSAGE(msg.find(n) != std::string::npos, "message '", msg, "' does not contain '", std::string(n), "'");
    }
  }
  return msg;
}

}  // namespace anatomy_test

// EXPECT_ERROR(ValueError, x.view({5, 5}), "view", "[5, 5]"): the expression throws that
// anatomy error type and the message contains each string.
#define EXPECT_ERROR(ErrorType, expr, ...) \
  ::anatomy_test::expect_error<::anatomy::ErrorType>([&] { (void)(expr); }, {__VA_ARGS__}, __FILE__, __LINE__)

// Like EXPECT_ERROR, and `t` (sizes, strides, offset, values, version) is unchanged afterwards.
#define EXPECT_ERROR_UNCHANGED(t, ErrorType, expr, ...) \
  do {                                                  \
    INFO("input unchanged check at line ", __LINE__);   \
    auto snap_ = ::anatomy_test::snapshot(t);           \
    EXPECT_ERROR(ErrorType, expr, __VA_ARGS__);         \
    ::anatomy_test::check_unchanged(t, snap_);          \
  } while (0)
