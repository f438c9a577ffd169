// Errors of a composite operator named after it, not after the operator it calls.
//
// A composite (zeros, repeat, constant_pad_nd) allocates through `empty`, so an allocation that
// fails says "empty: cpu allocator: out of memory ...", though the user called the composite.
// Composites check their own arguments before calling anything (so size errors already name
// them); naming_oom covers what only the allocator can find out.
#pragma once

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

}  // namespace anatomy
