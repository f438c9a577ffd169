// CPU: reading by index: index_select, gather, take, embedding and advanced indexing (index.Tensor).
// Every dtype, any strides and offsets; all indices are checked before the result is written.
#include "anatomy/backends/cpu/index_utils.h"
#include "anatomy/core/shape_rules.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/indexing_rules.h"

namespace anatomy::cpu {
namespace {

// `strides` with entry `dim` zeroed: the indexed dim's position comes from the offsets table.
DimVector without_dim(IntArrayRef strides, int64_t dim) {
  DimVector s(strides);
  if (!s.empty()) s[dim] = 0;
  return s;
}

Tensor index_select_cpu(const Tensor& self, int64_t dim, const Tensor& index) {
  DimVector shape;
  dim = check_index_select(self, dim, index, shape);
  const int64_t size = self.dim() == 0 ? 1 : self.size(dim);
  const int64_t stride = self.dim() == 0 ? 0 : self.stride(dim);
  std::vector<int64_t> offsets = read_indices(index);
  for (int64_t& v : offsets) v = checked_index(v, size, dim, /*allow_negative=*/true, "index_select") * stride;
  Tensor out = empty(shape, self.options());
  // The offsets table runs along dim only.
  DimVector offset_strides(shape.size(), 0);
  if (!offset_strides.empty()) offset_strides[dim] = 1;
  gather_elements(out.sizes(), out, out.strides(), self, without_dim(self.strides(), dim), offsets, offset_strides,
                  "index_select");
  return out;
}

Tensor gather_cpu(const Tensor& self, int64_t dim, const Tensor& index) {
  dim = check_gather_scatter(self, dim, index, Tensor(), "gather");
  const Tensor self1 = as_1d(self), index1 = as_1d(index);
  std::vector<int64_t> offsets = read_indices(index1);
  for (int64_t& v : offsets)
    v = checked_index(v, self1.size(dim), dim, /*allow_negative=*/false, "gather") * self1.stride(dim);
  Tensor out = empty(index.sizes(), self.options());
  const Tensor out1 = as_1d(out);
  // The offsets table is index's values in row-major order: out's contiguous strides.
  gather_elements(out1.sizes(), out1, out1.strides(), self1, without_dim(self1.strides(), dim), offsets, out1.strides(),
                  "gather");
  return out;
}

Tensor take_cpu(const Tensor& self, const Tensor& index) {
  check_index_dtype(index, "take");
  const int64_t numel = self.numel();
  std::vector<int64_t> offsets = read_indices(index);
  // A flat (row-major) position becomes self's strided offset.
  const DimVector row_major = contiguous_strides(self.sizes());
  for (int64_t& v : offsets) {
    int64_t flat = checked_index(v, numel, 0, /*allow_negative=*/true, "take"), off = 0;
    for (int64_t d = 0; d < self.dim(); ++d) {
      off += (flat / row_major[d]) * self.strides()[d];
      flat %= row_major[d];
    }
    v = off;
  }
  Tensor out = empty(index.sizes(), self.options());
  const DimVector zeros(index.dim(), 0);
  gather_elements(out.sizes(), out, out.strides(), self, zeros, offsets, out.strides(), "take");
  return out;
}

// Rows of weight: out[..., :] = weight[indices[...], :]. As in PyTorch, negative indices are
// out of range (they would be padding_idx's business there).
Tensor embedding_cpu(const Tensor& weight, const Tensor& indices) {
  const DimVector shape = embedding_shape(weight, indices);
  std::vector<int64_t> offsets = read_indices(indices);
  for (int64_t& v : offsets)
    v = checked_index(v, weight.size(0), 0, /*allow_negative=*/false, "embedding") * weight.stride(0);
  Tensor out = empty(shape, weight.options());
  DimVector weight_strides(indices.dim(), 0), offset_strides = contiguous_strides(indices.sizes());
  weight_strides.push_back(weight.stride(1));
  offset_strides.push_back(0);
  gather_elements(out.sizes(), out, out.strides(), weight, weight_strides, offsets, offset_strides, "embedding");
  return out;
}

}  // namespace

std::vector<int64_t> advanced_index_offsets(const Tensor& self, const std::vector<Tensor>& entries,
                                            const AdvancedIndexShape& plan, const char* op) {
  std::vector<int64_t> offsets(static_cast<size_t>(checked_numel(plan.index_shape, op)), 0);
  for (int64_t d : plan.indexed_dims) {
    const std::vector<int64_t> v = read_indices(entries[d].expand(plan.index_shape));
    for (size_t i = 0; i < v.size(); ++i)
      offsets[i] += checked_index(v[i], self.size(d), d, /*allow_negative=*/true, op) * self.stride(d);
  }
  return offsets;
}

namespace {

Tensor index_cpu(const Tensor& self, TensorList indices) {
  const char* op = "index";
  check_advanced_index_dtypes(indices, op);
  const std::vector<Tensor> entries = expand_bool_masks(self, indices, op);
  const AdvancedIndexShape plan = plan_advanced_index(self, entries, op);
  const std::vector<int64_t> offsets = advanced_index_offsets(self, entries, plan, op);
  Tensor out = empty(plan.result_shape, self.options());
  DimVector sizes, self_strides, offset_strides;
  advanced_index_walk(self, plan, sizes, self_strides, offset_strides);
  const Tensor out_view = out.permute(plan.result_perm);
  gather_elements(sizes, out, out_view.strides(), self, self_strides, offsets, offset_strides, op);
  return out;
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CPU, m) {
  m.impl("index_select", ANATOMY_KERNEL(index_select_cpu));
  m.impl("gather", ANATOMY_KERNEL(gather_cpu));
  m.impl("take", ANATOMY_KERNEL(take_cpu));
  m.impl("embedding", ANATOMY_KERNEL(embedding_cpu));
  m.impl("index.Tensor", ANATOMY_KERNEL(index_cpu));
}

}  // namespace anatomy::cpu
