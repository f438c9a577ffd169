// The indexing operators' argument rules (see indexing_rules.h).
#include "anatomy/dispatch/ops/indexing_rules.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <limits>
#include <type_traits>

#include "anatomy/core/checked_arith.h"
#include "anatomy/core/dtype_visit.h"
#include "anatomy/core/shape_rules.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy {

void check_index_dtype(const Tensor& index, const char* op) {
  ANATOMY_CHECK(index.defined(), ValueError, "{}: the index tensor is undefined", op);
  ANATOMY_CHECK(index.dtype() == DType::Int64 || index.dtype() == DType::Int32, TypeError,
                "{}: index tensors must be int64 or int32, got {}", op, name(index.dtype()));
}

void check_mask_dtype(const Tensor& mask, const char* op) {
  ANATOMY_CHECK(mask.defined(), ValueError, "{}: the mask is undefined", op);
  ANATOMY_CHECK(mask.dtype() == DType::Bool, TypeError, "{}: the mask must be bool, got {}", op, name(mask.dtype()));
}

namespace {
// A 0-dim tensor counts as one dim of size 1, as in PyTorch's gather and scatter.
int64_t size_or_one(const Tensor& t, int64_t d) { return t.dim() == 0 ? 1 : t.sizes()[d]; }
}  // namespace

int64_t check_gather_scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const char* op) {
  check_index_dtype(index, op);
  dim = wrap_dim(dim, self.dim(), op);
  const int64_t nd = std::max<int64_t>(self.dim(), 1);
  ANATOMY_CHECK(std::max<int64_t>(index.dim(), 1) == nd, ValueError,
                "{}: index has {} dims but self has {} (they must have the same number)", op, index.dim(), self.dim());
  if (src.defined()) {
    ANATOMY_CHECK(src.dtype() == self.dtype(), TypeError, "{}: src has dtype {} but self has {} (they must match)", op,
                  name(src.dtype()), name(self.dtype()));
    ANATOMY_CHECK(std::max<int64_t>(src.dim(), 1) == nd, ValueError,
                  "{}: src has {} dims but self has {} (they must have the same number)", op, src.dim(), self.dim());
  }
  // An empty index selects nothing, and PyTorch skips the size rules then.
  if (index.numel() == 0) return dim;
  for (int64_t d = 0; d < nd; ++d) {
    if (d != dim) {
      ANATOMY_CHECK(size_or_one(index, d) <= size_or_one(self, d), ValueError,
                    "{}: index has shape [{}] and self [{}]: index.size({}) must not exceed self.size({})", op,
                    fmt::join(index.sizes(), ", "), fmt::join(self.sizes(), ", "), d, d);
    }
    if (src.defined()) {
      ANATOMY_CHECK(size_or_one(index, d) <= size_or_one(src, d), ValueError,
                    "{}: index has shape [{}] and src [{}]: index.size({}) must not exceed src.size({})", op,
                    fmt::join(index.sizes(), ", "), fmt::join(src.sizes(), ", "), d, d);
    }
  }
  return dim;
}

ScatterReduction parse_scatter_reduction(std::string_view reduce, DType dtype, const char* op) {
  ScatterReduction r;
  if (reduce == "sum") r.mode = ScatterMode::Add;
  else if (reduce == "prod") r.mode = ScatterMode::Multiply;
  else if (reduce == "amax") r.mode = ScatterMode::Max;
  else if (reduce == "amin") r.mode = ScatterMode::Min;
  else if (reduce == "mean") r.mean = true;
  else ANATOMY_THROW(ValueError, "{}: reduce must be 'sum', 'prod', 'mean', 'amax' or 'amin', got '{}'", op, reduce);
  ANATOMY_CHECK(!(r.mean && dtype == DType::Bool), TypeError, "{}: reduce='mean' does not take a bool tensor", op);
  return r;
}

Tensor scatter_reduction_identity(const ScatterReduction& r, const Tensor& self) {
  const bool lowest = r.mode == ScatterMode::Max;
  Scalar value(int64_t{r.mode == ScatterMode::Multiply ? 1 : 0});
  if (r.mode == ScatterMode::Max || r.mode == ScatterMode::Min) {
    visit_dtype(self.dtype(), "scatter_reduce_", [&]<typename T>() {
      if constexpr (std::is_same_v<T, bool>) {
        value = Scalar(!lowest);
      } else if constexpr (std::is_integral_v<T>) {
        value = Scalar(static_cast<int64_t>(lowest ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max()));
      } else {
        value = Scalar(lowest ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity());
      }
    });
  }
  return scalar_tensor(value, self.options());
}

int64_t check_index_select(const Tensor& self, int64_t dim, const Tensor& index, DimVector& result_shape) {
  const char* op = "index_select";
  check_index_dtype(index, op);
  dim = wrap_dim(dim, self.dim(), op);
  ANATOMY_CHECK(index.dim() <= 1, ValueError, "index_select: the index must be 0-dim or 1-D, got shape [{}]",
                fmt::join(index.sizes(), ", "));
  result_shape = DimVector(self.sizes());
  if (self.dim() == 0) {
    ANATOMY_CHECK(index.numel() == 1, ValueError, "index_select: a 0-dim self takes exactly one index, got {}",
                  index.numel());
  } else {
    result_shape[dim] = index.numel();
  }
  // An expanded self or index can give a result whose size overflows: index_select's error.
  check_factory_size(result_shape, op);
  return dim;
}

DimVector embedding_shape(const Tensor& weight, const Tensor& indices) {
  ANATOMY_CHECK(weight.dim() == 2, ValueError, "embedding: weight must be 2-D, got shape [{}]",
                fmt::join(weight.sizes(), ", "));
  check_index_dtype(indices, "embedding");
  DimVector shape(indices.sizes());
  shape.push_back(weight.size(1));
  check_factory_size(shape, "embedding");
  return shape;
}

AdvancedIndexShape plan_advanced_index(const Tensor& self, const std::vector<Tensor>& entries, const char* op) {
  ANATOMY_CHECK(static_cast<int64_t>(entries.size()) <= self.dim(), IndexError,
                "{}: too many indices for a tensor of dimension {} (got {})", op, self.dim(), entries.size());
  AdvancedIndexShape p;
  bool first = true;
  for (size_t d = 0; d < static_cast<size_t>(self.dim()); ++d) {
    const bool indexed = d < entries.size() && entries[d].defined();
    if (!indexed) {
      p.rest_dims.push_back(static_cast<int64_t>(d));
      continue;
    }
    const Tensor& e = entries[d];
    ANATOMY_CHECK(e.dtype() == DType::Int64 || e.dtype() == DType::Int32, TypeError,
                  "{}: tensors used as indices must be int64, int32 or bool, got {}", op, name(e.dtype()));
    p.indexed_dims.push_back(static_cast<int64_t>(d));
    if (first) {
      p.index_shape = DimVector(e.sizes());
      first = false;
      continue;
    }
    // Broadcast the index shapes (right-aligned, size 1 stretches).
    const IntArrayRef a = p.index_shape, b = e.sizes();
    const size_t n = std::max(a.size(), b.size());
    DimVector out(n, 1);
    for (size_t i = 0; i < n; ++i) {
      const int64_t sa = i < n - a.size() ? 1 : a[i - (n - a.size())];
      const int64_t sb = i < n - b.size() ? 1 : b[i - (n - b.size())];
      ANATOMY_CHECK(sa == sb || sa == 1 || sb == 1, IndexError,
                    "{}: indexing tensors could not be broadcast together with shapes [{}] and [{}]", op,
                    fmt::join(a, ", "), fmt::join(b, ", "));
      out[i] = sa == 1 ? sb : sa;
    }
    p.index_shape = out;
  }
  bool adjacent = true;
  for (size_t i = 1; i < p.indexed_dims.size(); ++i)
    adjacent = adjacent && p.indexed_dims[i] == p.indexed_dims[i - 1] + 1;
  const int64_t at = adjacent && !p.indexed_dims.empty() ? p.indexed_dims[0] : 0;
  const int64_t nb = static_cast<int64_t>(p.index_shape.size());
  // The result: the rest dims before `at`, the index block, the remaining rest dims.
  for (int64_t r = 0; r < at; ++r) p.result_shape.push_back(self.sizes()[p.rest_dims[r]]);
  for (int64_t s : p.index_shape) p.result_shape.push_back(s);
  for (size_t r = at; r < p.rest_dims.size(); ++r) p.result_shape.push_back(self.sizes()[p.rest_dims[r]]);
  // Broadcast (expanded) index tensors beside large dims can give a size past int64.
  check_factory_size(p.result_shape, op);
  for (int64_t j = 0; j < nb; ++j) p.result_perm.push_back(at + j);
  for (int64_t r = 0; r < static_cast<int64_t>(p.rest_dims.size()); ++r) p.result_perm.push_back(r < at ? r : r + nb);
  return p;
}

void check_advanced_index_dtypes(TensorList indices, const char* op) {
  for (const Tensor& e : indices) {
    ANATOMY_CHECK(!e.defined() || e.dtype() == DType::Bool || e.dtype() == DType::Int64 || e.dtype() == DType::Int32,
                  TypeError, "{}: tensors used as indices must be int64, int32 or bool, got {}", op, name(e.dtype()));
  }
}

std::vector<Tensor> expand_bool_masks(const Tensor& self, TensorList indices, const char* op) {
  std::vector<Tensor> out;
  for (const Tensor& e : indices) {
    if (!e.defined() || e.dtype() != DType::Bool) {
      out.push_back(e);
      continue;
    }
    const int64_t at = static_cast<int64_t>(out.size());
    ANATOMY_CHECK(e.dim() > 0, IndexError, "{}: a 0-dim bool index is not supported", op);
    ANATOMY_CHECK(at + e.dim() <= self.dim(), IndexError, "{}: too many indices for a tensor of dimension {}", op,
                  self.dim());
    for (int64_t j = 0; j < e.dim(); ++j) {
      ANATOMY_CHECK(e.size(j) == self.size(at + j), IndexError,
                    "{}: the shape of the mask [{}] at index {} does not match the shape of the indexed tensor [{}]",
                    op, fmt::join(e.sizes(), ", "), j, fmt::join(self.sizes(), ", "));
    }
    Tensor nz = nonzero(e);
    for (int64_t j = 0; j < e.dim(); ++j) out.push_back(nz.select(1, j));
  }
  return out;
}

void advanced_index_walk(const Tensor& self, const AdvancedIndexShape& plan, DimVector& sizes, DimVector& self_strides,
                         DimVector& offset_strides) {
  const DimVector block_strides = contiguous_strides(plan.index_shape);
  sizes = plan.index_shape;
  self_strides = DimVector(plan.index_shape.size(), 0);
  offset_strides = block_strides;
  for (int64_t d : plan.rest_dims) {
    sizes.push_back(self.size(d));
    self_strides.push_back(self.stride(d));
    offset_strides.push_back(0);
  }
}

}  // namespace anatomy
