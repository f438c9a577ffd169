// Test inputs in a given memory layout, built with permute and contiguous only (not with the
// engine's memory-format helpers, which are what such tests check).
#pragma once

#include <vector>

#include "anatomy/anatomy.h"

namespace anatomy::testing {

// The values of an (N, C, spatial...) tensor laid out with the channels innermost (channels_last
// for 4-d, its NDHWC form for 5-d), same sizes.
inline Tensor channels_last_copy(const Tensor& t) {
  std::vector<int64_t> order{0}, back{0, t.dim() - 1};
  for (int64_t d = 2; d < t.dim(); ++d) order.push_back(d);
  order.push_back(1);
  for (int64_t d = 1; d + 1 < t.dim(); ++d) back.push_back(d);
  return t.permute(order).contiguous().permute(back);
}

}  // namespace anatomy::testing
