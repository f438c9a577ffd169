// Errors of a composite operator named after it, not after the operator it calls.
//
// A composite (zeros, repeat, constant_pad_nd) allocates through `empty`, so an allocation that
// fails says "empty: cpu allocator: out of memory ...", though the user called the composite.
// Composites check their own arguments before calling anything (so size errors already name
// them); naming_oom covers what only the allocator can find out. Composites that leave checks
// to the operators they call (nansum's dims to sum's, index_fill_'s indices to index_put_'s)
// wrap their body in naming_errors, so every typed error the user sees names what they called.
#pragma once

#include <string>
#include <string_view>

#include "anatomy/core/error.h"

namespace anatomy {

// The message of `e` with its leading operator name ("empty: ") replaced by `op`, or `op: `
// put in front when it names none; thrown as an OutOfMemoryError.
[[noreturn]] void throw_oom_as(const char* op, const OutOfMemoryError& e);

// Runs body; an OutOfMemoryError from inside it is rethrown naming `op`. When composites nest,
// the outermost one's handler runs last, so its name is the one the user sees.
template <typename F>
decltype(auto) naming_oom(const char* op, F&& body) {
  try {
    return body();
  } catch (const OutOfMemoryError& e) {
    throw_oom_as(op, e);
  }
}

// `msg` with its leading operator name replaced by `op`, or `op: ` put in front when it names none.
std::string renamed_message(const char* op, std::string_view msg);

// Runs body; a user error (ValueError, TypeError, IndexError, DeviceError, OutOfMemoryError)
// from inside it is rethrown, with its type, naming `op`.
template <typename F>
decltype(auto) naming_errors(const char* op, F&& body) {
  try {
    return body();
  } catch (const ValueError& e) {
    throw ValueError(renamed_message(op, e.what()));
  } catch (const TypeError& e) {
    throw TypeError(renamed_message(op, e.what()));
  } catch (const IndexError& e) {
    throw IndexError(renamed_message(op, e.what()));
  } catch (const DeviceError& e) {
    throw DeviceError(renamed_message(op, e.what()));
  } catch (const OutOfMemoryError& e) {
    throw_oom_as(op, e);
  }
}

}  // namespace anatomy
