// CUDA: writing by index: scatter_ (tensor and value sources), scatter_add_, scatter_reduce_ and
// index_put_ (accumulate or not). The CPU's argument checks and walks (backends/cpu/scatter_cpu.cpp); the
// offsets table is built and checked on the device with a per-call flag, and the scatter kernel
// does nothing when that flag is set, so a bad index changes no element of self and raises the
// CPU's IndexError at the next wait for the device (Note [Bad indices on the device]). Repeated
// indices are written in the CPU's order, without atomics: the results are the CPU's bit for bit
// (Note [Deterministic scatter on CUDA], index_scatter.cu), except the floating sums and products
// of the sorted path, which associate differently (Note [Sorted scatter on CUDA]).
//
// Index tensors and sources must be on self's device (DeviceError), except index_put_'s indices
// and masks, which may be CPU tensors (copied to the device), as in PyTorch. A bool mask becomes
// its positions through the `nonzero` operator of its device; a CUDA mask's waits for the device
// to learn their count (the one wait here).
#include "anatomy/backends/cuda/index/index_table.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/backends/cuda/runtime/index_error_host.h"
#include "anatomy/core/empty_tensor.h"
#include "anatomy/core/shape_rules.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/indexing_rules.h"
#include "anatomy/dispatch/ops/scatter_registration.h"

namespace anatomy::cuda {
namespace {

// The body of scatter_ and scatter_add_ (dispatch/ops/scatter_registration.h): `src` is a tensor of self's dtype on its
// device, already checked against index (0-dim src: one value for every index).
Tensor scatter_impl(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, ScatterMode mode,
                    const char* op) {
  check_no_internal_overlap(self, op);
  check_same_device(self, index, "the index", op);
  check_same_device(self, src, "src", op);
  const int device = tensor_device_index(self);
  const Tensor self1 = as_1d(self), index1 = as_1d(index);
  const Tensor flag = make_call_flag(device);
  const IndexErrorSink sink = index_error_sink(device, op, flag.data_ptr<int32_t>());
  const Tensor table = index_offsets(index1, self1.size(dim), dim, self1.stride(dim), /*allow_negative=*/false, sink);
  // A source sharing memory with self is read before anything is written.
  const Tensor source = may_overlap(self, src) ? src.clone() : src;
  DimVector dst_strides(self1.strides());
  dst_strides[dim] = 0;
  DimVector src_strides(index1.dim(), 0);
  if (source.dim() > 0) src_strides = DimVector(source.strides());
  const DimVector offset_strides = contiguous_strides(index1.sizes());
  scatter_by_table(index1.sizes(), self1, dst_strides, source, src_strides, table, offset_strides, mode, sink, op);
  self.impl()->bump_version();
  return self;
}

Tensor index_put_cuda(const Tensor& self, TensorList indices, const Tensor& values, bool accumulate) {
  const char* op = "index_put_";
  check_advanced_index_dtypes(indices, op);
  ANATOMY_CHECK(values.dtype() == self.dtype(), TypeError, "{}: values have dtype {} but self has {} (they must match)",
                op, name(values.dtype()), name(self.dtype()));
  check_no_internal_overlap(self, op);
  check_same_device(self, values, "values", op);
  // Masks become positions on their own device (a CPU mask needs no wait for the device).
  const std::vector<Tensor> entries = index_entries_on_device(self, expand_bool_masks(self, indices, op), op);
  const AdvancedIndexShape plan = plan_advanced_index(self, entries, op);
  ANATOMY_CHECK(is_expandable_to(values.sizes(), plan.result_shape), ValueError,
                "{}: values of shape [{}] cannot be broadcast to the indexing result of shape [{}]", op,
                fmt::join(values.sizes(), ", "), fmt::join(plan.result_shape, ", "));
  const int device = tensor_device_index(self);
  const Tensor flag = make_call_flag(device);
  const IndexErrorSink sink = index_error_sink(device, op, flag.data_ptr<int32_t>());
  const Tensor table = advanced_index_offsets(self, entries, plan, sink);
  const Tensor source = may_overlap(self, values) ? values.clone() : values;
  const Tensor walk_values = source.expand(plan.result_shape).permute(plan.result_perm);
  DimVector sizes, self_strides, offset_strides;
  advanced_index_walk(self, plan, sizes, self_strides, offset_strides);
  scatter_by_table(sizes, self, self_strides, walk_values, walk_values.strides(), table, offset_strides,
                   accumulate ? ScatterMode::Add : ScatterMode::Assign, sink, op);
  self.impl()->bump_version();
  return self;
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) {
  dispatch::register_scatter_kernels<&scatter_impl>(m);
  m.impl("index_put_", ANATOMY_KERNEL(index_put_cuda));
}

}  // namespace anatomy::cuda
