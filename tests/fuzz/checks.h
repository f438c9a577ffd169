// What a successful call's results must satisfy, whatever the operator: metadata that describes
// memory inside the storage, and elements that read the same through the engine's copies as
// through the fuzzer's own walk. Each returns "" when the result is fine, else the finding.
#pragma once

#include <string>

#include "anatomy/anatomy.h"

namespace anatomy_fuzz {

// Results with more elements than this are checked by metadata only: an expanded view may
// describe 2^62 elements of a one-element storage, and reading them all would never end.
inline constexpr int64_t kReadLimit = 4096;

// Sizes and strides non-negative, the element count representable and equal to numel(), and
// the reachable range [offset, offset + sum((size - 1) * stride)] inside the storage (for an
// empty result: that range and the offset in bytes representable in int64). A claimed
// contiguity must be true.
std::string check_metadata(const anatomy::Tensor& t);

// Every element readable: a dtype-converting copy (to fp64) and contiguous() agree, element by
// element, with a direct walk of the storage. Only for results that passed check_metadata.
std::string check_readable(const anatomy::Tensor& t);

}  // namespace anatomy_fuzz
