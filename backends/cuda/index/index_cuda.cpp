// CUDA: reading by index: index_select, gather, take, embedding and advanced indexing
// (index.Tensor). The CPU's argument checks and walks (backends/cpu/index_cpu.cpp), with the
// offsets table built and checked on the device (index_table.h): a bad index value raises the
// CPU's IndexError at the next wait for the device, and its elements of the result are zeros
// (Note [Bad indices on the device]). Contiguous rows (embedding, index_select of a contiguous
// tensor) are copied in words of up to 16 bytes.
//
// Index tensors must be on self's device (DeviceError), except for advanced indexing, which
// takes CPU indices and masks too, as PyTorch does, and copies them to the device. A bool mask
// becomes its positions through the `nonzero` operator of its device; a CUDA mask's waits for
// the device to learn their count (the one wait here; only CUDA masks cause it).
#include "anatomy/backends/cuda/index/index_table.h"
#include "anatomy/backends/cuda/index/launch.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/core/shape_rules.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/indexing_rules.h"

namespace anatomy::cuda {
namespace {

// Rows narrower than this many bytes take the strided kernel.
constexpr int64_t kMinRowBytes = 16;

// `strides` with entry `dim` zeroed: the indexed dim's position comes from the offsets table.
DimVector without_dim(IntArrayRef strides, int64_t dim) {
  DimVector s(strides);
  if (!s.empty()) s[dim] = 0;
  return s;
}

// gather treats a 0-dim tensor as one dim of size 1.
Tensor index_select_cuda(const Tensor& self, int64_t dim, const Tensor& index) {
  const char* op = "index_select";
  DimVector shape;
  dim = check_index_select(self, dim, index, shape);
  check_same_device(self, index, "the index", op);
  const int64_t size = self.dim() == 0 ? 1 : self.size(dim);
  const int64_t stride = self.dim() == 0 ? 0 : self.stride(dim);
  const IndexErrorSink sink = index_error_sink(tensor_device_index(self), op);
  const Tensor table = index_offsets(index, size, dim, stride, /*allow_negative=*/true, sink);
  Tensor out = empty(shape, self.options());
  if (out.numel() == 0) return out;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= self.size(d);
  for (int64_t d = dim + 1; d < self.dim(); ++d) inner *= self.size(d);
  if (self.dim() > 0 && self.is_contiguous() && inner * static_cast<int64_t>(self.element_size()) >= kMinRowBytes) {
    // out is [outer, index.numel(), inner] and each selected slice of self is contiguous.
    DeviceGuard guard(tensor_device_index(self));
    launch_index_gather_rows(out.data_ptr(), self.data_ptr(), table.data_ptr<int64_t>(), self.element_size(), outer,
                             index.numel(), inner, self.size(dim) * inner, stride, current_stream());
    return out;
  }
  // The offsets table runs along dim only.
  DimVector offset_strides(shape.size(), 0);
  if (!offset_strides.empty()) offset_strides[dim] = 1;
  gather_by_table(out.sizes(), out, out.strides(), self, without_dim(self.strides(), dim), table, offset_strides, op);
  return out;
}

Tensor gather_cuda(const Tensor& self, int64_t dim, const Tensor& index) {
  const char* op = "gather";
  dim = check_gather_scatter(self, dim, index, Tensor(), op);
  check_same_device(self, index, "the index", op);
  const Tensor self1 = as_1d(self), index1 = as_1d(index);
  const IndexErrorSink sink = index_error_sink(tensor_device_index(self), op);
  const Tensor table = index_offsets(index1, self1.size(dim), dim, self1.stride(dim), /*allow_negative=*/false, sink);
  Tensor out = empty(index.sizes(), self.options());
  const Tensor out1 = as_1d(out);
  // The table is row-major over index's shape: out's contiguous strides.
  gather_by_table(out1.sizes(), out1, out1.strides(), self1, without_dim(self1.strides(), dim), table, out1.strides(),
                  op);
  return out;
}

Tensor take_cuda(const Tensor& self, const Tensor& index) {
  const char* op = "take";
  check_index_dtype(index, op);
  check_same_device(self, index, "the index", op);
  const IndexErrorSink sink = index_error_sink(tensor_device_index(self), op);
  const Tensor table = flat_index_offsets(self, index, sink);
  Tensor out = empty(index.sizes(), self.options());
  const DimVector zeros(index.dim(), 0);
  gather_by_table(out.sizes(), out, out.strides(), self, zeros, table, out.strides(), op);
  return out;
}

// Rows of weight; negative indices are out of range, as on the CPU.
Tensor embedding_cuda(const Tensor& weight, const Tensor& indices) {
  const char* op = "embedding";
  const DimVector shape = embedding_shape(weight, indices);
  check_same_device(weight, indices, "the indices", op);
  const IndexErrorSink sink = index_error_sink(tensor_device_index(weight), op);
  const Tensor table = index_offsets(indices, weight.size(0), 0, weight.stride(0), /*allow_negative=*/false, sink);
  Tensor out = empty(shape, weight.options());
  if (out.numel() == 0) return out;
  const int64_t row = weight.size(1);
  if (weight.stride(1) == 1 || row == 1) {
    DeviceGuard guard(tensor_device_index(weight));
    launch_index_gather_rows(out.data_ptr(), weight.data_ptr(), table.data_ptr<int64_t>(), weight.element_size(), 1,
                             indices.numel(), row, 0, weight.stride(0), current_stream());
    return out;
  }
  DimVector weight_strides(indices.dim(), 0), offset_strides = contiguous_strides(indices.sizes());
  weight_strides.push_back(weight.stride(1));
  offset_strides.push_back(0);
  gather_by_table(out.sizes(), out, out.strides(), weight, weight_strides, table, offset_strides, op);
  return out;
}

Tensor index_cuda(const Tensor& self, TensorList indices) {
  const char* op = "index";
  check_advanced_index_dtypes(indices, op);
  // Masks become positions on their own device (a CPU mask needs no wait for the device).
  const std::vector<Tensor> entries = index_entries_on_device(self, expand_bool_masks(self, indices, op), op);
  const AdvancedIndexShape plan = plan_advanced_index(self, entries, op);
  const IndexErrorSink sink = index_error_sink(tensor_device_index(self), op);
  const Tensor table = advanced_index_offsets(self, entries, plan, sink);
  Tensor out = empty(plan.result_shape, self.options());
  DimVector sizes, self_strides, offset_strides;
  advanced_index_walk(self, plan, sizes, self_strides, offset_strides);
  const Tensor out_view = out.permute(plan.result_perm);
  gather_by_table(sizes, out, out_view.strides(), self, self_strides, table, offset_strides, op);
  return out;
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) {
  m.impl("index_select", ANATOMY_KERNEL(index_select_cuda));
  m.impl("gather", ANATOMY_KERNEL(gather_cuda));
  m.impl("take", ANATOMY_KERNEL(take_cuda));
  m.impl("embedding", ANATOMY_KERNEL(embedding_cuda));
  m.impl("index.Tensor", ANATOMY_KERNEL(index_cuda));
}

}  // namespace anatomy::cuda
