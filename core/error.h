// The typed errors every module throws, and the two check macros.
//
// A user mistake (bad shape, dtype, device, index, a missing kernel, out of memory) throws a
// subclass of anatomy::Error through ANATOMY_CHECK, with a message that names the operator and
// the offending values. A broken internal invariant is a bug in anatomy, not the user's fault:
// ANATOMY_INTERNAL_ASSERT throws InternalError so tests see it, and says to report it.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

#include "anatomy/core/macros.h"

namespace anatomy {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ValueError : public Error {  // bad shapes, sizes, arguments
 public:
  using Error::Error;
};
class TypeError : public Error {  // a dtype the operator does not accept
 public:
  using Error::Error;
};
class IndexError : public Error {  // a dimension or index out of range
 public:
  using Error::Error;
};
class DeviceError : public Error {  // a device that does not exist or does not match
 public:
  using Error::Error;
};
class NotImplementedError : public Error {  // no kernel for this operator and backend
 public:
  using Error::Error;
};
class OutOfMemoryError : public Error {  // an allocator could not satisfy a request
 public:
  using Error::Error;
};
class InternalError : public Error {  // an anatomy bug: an invariant did not hold
 public:
  using Error::Error;
};

namespace detail {
[[noreturn]] void throw_internal(const char* cond, const char* file, int line, const std::string& msg);
}  // namespace detail

}  // namespace anatomy

// ANATOMY_CHECK(cond, ValueError, "view: shape {} is invalid for {} elements", shape, n)
// The message is only formatted when the check fails.
#define ANATOMY_CHECK(cond, ErrorType, ...)                   \
  do {                                                        \
    if (ANATOMY_UNLIKELY(!(cond))) {                          \
      throw ::anatomy::ErrorType(::fmt::format(__VA_ARGS__)); \
    }                                                         \
  } while (0)

#define ANATOMY_THROW(ErrorType, ...) throw ::anatomy::ErrorType(::fmt::format(__VA_ARGS__))

#define ANATOMY_INTERNAL_ASSERT(cond, ...)                                                         \
  do {                                                                                             \
    if (ANATOMY_UNLIKELY(!(cond))) {                                                               \
      ::anatomy::detail::throw_internal(#cond, __FILE__, __LINE__, ::fmt::format("" __VA_ARGS__)); \
    }                                                                                              \
  } while (0)
