// Argument checks, the comparison dtype and the row layout of searchsorted and bucketize, shared
// by the CPU, CUDA and Meta kernels (through dispatch/ops/search_registration.h) so every backend
// rejects the same inputs with the same messages and returns the same result.
#pragma once

#include <optional>
#include <string_view>

#include "anatomy/core/dim_vector.h"
#include "anatomy/core/tensor.h"

namespace anatomy::search {

// One search after the checks: the sequence and the values converted to their common dtype
// (PyTorch's promotion: a Scalar value counts as a wrapped number, a 0-dim one as a weak tensor),
// the sorter (undefined when absent), the side and the result's dtype. `values` keeps its shape.
struct SearchArgs {
  Tensor sequence;
  Tensor values;
  Tensor sorter;
  bool right = false;
  DType result = DType::Int64;
};

// searchsorted's checks, in PyTorch's order: `side` is "left" or "right" and not the opposite of
// right=True (ValueError); one device for all (DeviceError); the sorter int64 (TypeError) and of
// the sequence's shape (ValueError); a 0-dim sequence, a 0-dim value with an N-d sequence, or an
// N-d sequence whose leading dims differ from the values' (ValueError); a bool common dtype
// (TypeError). `op` names the operator in the messages ("searchsorted", "bucketize").
SearchArgs prepare_search(const Tensor& sorted_sequence, const Tensor& self, bool out_int32, bool right,
                          std::optional<std::string_view> side, const std::optional<Tensor>& sorter, const char* op);

// bucketize searches 1-d boundaries only (ValueError otherwise).
void check_bucketize_boundaries(const Tensor& boundaries);

// Where the row of `row_source` (the sequence or the sorter) that each value searches starts, as
// strides over the values' shape: row_source's own strides on the leading dims of an N-d
// sequence, 0 elsewhere (every dim for a 1-d sequence, and the values' last dim). The row itself
// runs along row_source's last dim.
DimVector row_start_strides(const Tensor& row_source, const Tensor& values);

// What an out-of-range sorter entry is reported as, by the CPU's check and by the CUDA kernel's
// (IndexError: "searchsorted (sorter): index 5 is out of bounds for dimension 0 with size 3").
inline constexpr const char* kSorterLabel = "searchsorted (sorter)";

}  // namespace anatomy::search
