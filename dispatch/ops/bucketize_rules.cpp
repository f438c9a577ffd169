// searchsorted's and bucketize's checks and promotion (bucketize_rules.h), as PyTorch's
// searchsorted_pre_check and searchsorted_maybe_trim_input_tensors decide them.
#include "anatomy/dispatch/ops/bucketize_rules.h"

#include <climits>

#include "anatomy/core/type_promotion.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/print.h"

namespace anatomy::search {
namespace {

// "left" or "right" overrides `right`; "left" with right=True contradicts it.
bool search_right(bool right, std::optional<std::string_view> side, const char* op) {
  if (!side) return right;
  ANATOMY_CHECK(*side == "left" || *side == "right", ValueError, "{}: side can only be 'left' or 'right', got '{}'", op,
                *side);
  ANATOMY_CHECK(!right || *side == "right", ValueError,
                "{}: side and right can't be set to opposites, got side='{}' while right=True", op, *side);
  return *side == "right";
}

void check_one_device(const Tensor& sequence, const Tensor& other, const char* what, const char* op) {
  ANATOMY_CHECK(sequence.device() == other.device(), DeviceError,
                "{}: the sorted sequence is on {} but the {} on {} (expected one device)", op, sequence.device().str(),
                what, other.device().str());
}

void check_sorter(const Tensor& sequence, const Tensor& sorter, const char* op) {
  check_one_device(sequence, sorter, "sorter", op);
  ANATOMY_CHECK(sorter.sizes() == sequence.sizes(), ValueError,
                "{}: the sorter must have the sorted sequence's shape {}, got {}", op, shape_string(sequence.sizes()),
                shape_string(sorter.sizes()));
  ANATOMY_CHECK(sorter.dtype() == DType::Int64, TypeError, "{}: the sorter must be int64, got {}", op,
                name(sorter.dtype()));
}

// Whether the leading dims (all but the last) of an N-d sequence are the values'.
bool leading_dims_match(const Tensor& sequence, const Tensor& values) {
  if (sequence.dim() != values.dim()) return false;
  for (int64_t d = 0; d + 1 < sequence.dim(); ++d) {
    if (sequence.sizes()[d] != values.sizes()[d]) return false;
  }
  return true;
}

void check_shapes(const Tensor& sequence, const Tensor& values, const char* op) {
  ANATOMY_CHECK(values.dim() > 0 || sequence.dim() == 1, ValueError,
                "{}: the values can be a scalar only when the sorted sequence is 1-d, got a sequence of shape {}", op,
                shape_string(sequence.sizes()));
  ANATOMY_CHECK(sequence.dim() > 0, ValueError, "{}: the sorted sequence must have at least 1 dim, got a 0-dim tensor",
                op);
  ANATOMY_CHECK(sequence.dim() == 1 || leading_dims_match(sequence, values), ValueError,
                "{}: the sorted sequence must be 1-d or match the values in every dim but the last, got a "
                "sequence of shape {} and values of shape {}",
                op, shape_string(sequence.sizes()), shape_string(values.sizes()));
}

// The dtype both are compared in: PyTorch's result type of the two, the values weak when they
// are a Scalar (a wrapped number) or 0-dim.
DType common_dtype(const Tensor& sequence, const Tensor& values, const char* op) {
  ResultTypeState state;
  state.add_tensor(sequence.dtype());
  if (values.impl()->is_wrapped_number()) state.add_wrapped_number(values.dtype());
  else if (values.dim() == 0) state.add_zero_dim_tensor(values.dtype());
  else state.add_tensor(values.dtype());
  const DType t = state.result();
  ANATOMY_CHECK(t != DType::Bool, TypeError, "{}: bool sequences and values have no order to search (got {} and {})",
                op, name(sequence.dtype()), name(values.dtype()));
  return t;
}

}  // namespace

SearchArgs prepare_search(const Tensor& sorted_sequence, const Tensor& self, bool out_int32, bool right,
                          std::optional<std::string_view> side, const std::optional<Tensor>& sorter, const char* op) {
  SearchArgs a;
  a.right = search_right(right, side, op);
  check_one_device(sorted_sequence, self, "values", op);
  const bool has_sorter = sorter.has_value() && sorter->defined();
  if (has_sorter) check_sorter(sorted_sequence, *sorter, op);
  check_shapes(sorted_sequence, self, op);
  const int64_t n = sorted_sequence.sizes().back();
  ANATOMY_CHECK(!out_int32 || n < INT_MAX, ValueError,
                "{}: with out_int32 the sorted sequence's last dim must be shorter than {}, got {}", op, INT_MAX, n);
  const DType t = common_dtype(sorted_sequence, self, op);
  a.sequence = sorted_sequence.to(t);
  a.values = self.to(t);
  if (has_sorter) a.sorter = *sorter;
  a.result = out_int32 ? DType::Int32 : DType::Int64;
  return a;
}

void check_bucketize_boundaries(const Tensor& boundaries) {
  ANATOMY_CHECK(boundaries.dim() == 1, ValueError, "bucketize: the boundaries must be 1-d, got shape {} ({} dims)",
                shape_string(boundaries.sizes()), boundaries.dim());
}

DimVector row_start_strides(const Tensor& row_source, const Tensor& values) {
  DimVector strides(static_cast<size_t>(values.dim()), 0);
  if (row_source.dim() == 1) return strides;
  for (int64_t d = 0; d + 1 < values.dim(); ++d) strides[static_cast<size_t>(d)] = row_source.strides()[d];
  return strides;
}

}  // namespace anatomy::search
