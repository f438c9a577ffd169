// Registers a backend's searchsorted.Tensor and bucketize.Tensor from its one search function,
// so the checks, the promotion and the result live here once (dispatch/ops/bucketize_rules.h)
// and each backend writes only the search (the Meta backend's does nothing).
//
//   Search(args, out, op): writes each value's position in its row of args.sequence into the
//   fresh contiguous `out` (args.result, the values' shape). Called only when out has elements.
#pragma once

#include <optional>
#include <string_view>

#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/bucketize_rules.h"

namespace anatomy::dispatch {

using SearchRows = void (*)(const search::SearchArgs& args, const Tensor& out, const char* op);

template <SearchRows Search>
struct SearchKernels {
  static Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& self, bool out_int32, bool right,
                             std::optional<std::string_view> side, const std::optional<Tensor>& sorter) {
    return run(search::prepare_search(sorted_sequence, self, out_int32, right, side, sorter, "searchsorted"),
               "searchsorted");
  }
  static Tensor bucketize(const Tensor& self, const Tensor& boundaries, bool out_int32, bool right) {
    search::check_bucketize_boundaries(boundaries);
    return run(search::prepare_search(boundaries, self, out_int32, right, std::nullopt, std::nullopt, "bucketize"),
               "bucketize");
  }
  static Tensor run(const search::SearchArgs& args, const char* op) {
    Tensor out = empty(args.values.sizes(), args.values.options().dtype(args.result));
    if (out.numel() > 0) Search(args, out, op);
    return out;
  }
};

template <SearchRows Search>
void register_search_kernels(Library& m) {
  using K = SearchKernels<Search>;
  m.impl("searchsorted.Tensor", named_kernel(&K::searchsorted, "searchsorted"));
  m.impl("bucketize.Tensor", named_kernel(&K::bucketize, "bucketize"));
}

}  // namespace anatomy::dispatch
