// The host half of the CUDA indexing ops (index_table.h): tables of checked offsets and the
// launches of the gather and scatter kernels over the CPU's walks.
#include "anatomy/backends/cuda/index/index_table.h"

#include <optional>

#include "anatomy/backends/cuda/common/cub_temp.h"
#include "anatomy/backends/cuda/common/make_strided_layout.h"
#include "anatomy/backends/cuda/index/launch.h"
#include "anatomy/backends/cuda/runtime/cuda_check.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/core/shape_rules.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy::cuda {
namespace {

Tensor empty_table(IntArrayRef shape, const Tensor& like) {
  return empty(shape, TensorOptions().dtype(DType::Int64).device(like.device()));
}

// The table arguments of one index tensor walked row-major over `shape` (index broadcast to it).
IndexTableArgs table_args(const Tensor& index, IntArrayRef shape, const char* op) {
  IndexTableArgs a;
  a.index = index.data_ptr();
  a.index_int32 = index.dtype() == DType::Int32;
  a.index_layout = make_strided_layout<1>(shape, {index.strides()}, op);
  return a;
}

const char* op_name(const IndexErrorSink& sink) { return reinterpret_cast<const char*>(sink.op); }

// The largest element offset from t's first element, the bound of the sorted scatter's keys;
// nullopt when a stride is negative.
std::optional<uint64_t> element_extent(const Tensor& t) {
  uint64_t extent = 0;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.strides()[d] < 0) return std::nullopt;
    if (t.sizes()[d] > 0) extent += static_cast<uint64_t>(t.sizes()[d] - 1) * static_cast<uint64_t>(t.strides()[d]);
  }
  return extent;
}

}  // namespace

int tensor_device_index(const Tensor& t) { return t.device().has_index() ? t.device().index() : current_device(); }

void check_same_device(const Tensor& self, const Tensor& t, const char* what, const char* op) {
  ANATOMY_CHECK(t.is_cuda() && tensor_device_index(t) == tensor_device_index(self), DeviceError,
                "{}: {} is on {} but self is on {} (they must be on one device)", op, what, t.device().str(),
                self.device().str());
}

// Advanced indexing's entries on self's device (CPU ones copied there; another device's raise).
std::vector<Tensor> index_entries_on_device(const Tensor& self, TensorList indices, const char* op) {
  std::vector<Tensor> out;
  out.reserve(indices.size());
  for (const Tensor& e : indices) {
    if (e.defined() && e.is_cpu()) {
      out.push_back(e.to(self.device()));
      continue;
    }
    if (e.defined()) check_same_device(self, e, "an index", op);
    out.push_back(e);
  }
  return out;
}

Tensor index_offsets(const Tensor& index, int64_t size, int64_t dim, int64_t stride, bool allow_negative,
                     const IndexErrorSink& sink) {
  Tensor table = empty_table(index.sizes(), index);
  if (index.numel() == 0) return table;
  IndexTableArgs a = table_args(index, index.sizes(), op_name(sink));
  a.size = size;
  a.dim = dim;
  a.stride = stride;
  a.allow_negative = allow_negative;
  DeviceGuard guard(tensor_device_index(index));
  launch_index_table(table.data_ptr<int64_t>(), index.numel(), a, sink, current_stream());
  return table;
}

Tensor flat_index_offsets(const Tensor& self, const Tensor& index, const IndexErrorSink& sink) {
  Tensor table = empty_table(index.sizes(), index);
  if (index.numel() == 0) return table;
  IndexTableArgs a = table_args(index, index.sizes(), op_name(sink));
  a.size = self.numel();
  a.dim = 0;
  a.allow_negative = true;
  a.flat = true;
  a.flat_layout = make_strided_layout<1>(self.sizes(), {self.strides()}, op_name(sink));
  DeviceGuard guard(tensor_device_index(index));
  launch_index_table(table.data_ptr<int64_t>(), index.numel(), a, sink, current_stream());
  return table;
}

Tensor advanced_index_offsets(const Tensor& self, const std::vector<Tensor>& entries, const AdvancedIndexShape& plan,
                              const IndexErrorSink& sink) {
  const int64_t n = checked_numel(plan.index_shape, op_name(sink));
  Tensor table = empty_table(plan.index_shape, self);
  if (n == 0) return table;
  DeviceGuard guard(tensor_device_index(self));
  if (plan.indexed_dims.empty()) {
    // Only slices (t.index({None})): every position reads self at offset 0 of the walk.
    ANATOMY_CUDA_CHECK(cudaMemsetAsync(table.data_ptr(), 0, table.nbytes(), current_stream()));
    return table;
  }
  bool first = true;
  for (int64_t d : plan.indexed_dims) {
    const Tensor e = entries[d].expand(plan.index_shape);
    IndexTableArgs a = table_args(e, plan.index_shape, op_name(sink));
    a.size = self.size(d);
    a.dim = d;
    a.stride = self.stride(d);
    a.allow_negative = true;
    a.accumulate = !first;
    launch_index_table(table.data_ptr<int64_t>(), n, a, sink, current_stream());
    first = false;
  }
  return table;
}

void gather_by_table(IntArrayRef sizes, const Tensor& out, IntArrayRef out_strides, const Tensor& src,
                     IntArrayRef src_strides, const Tensor& table, IntArrayRef table_strides, const char* op) {
  const int64_t n = checked_numel(sizes, op);
  if (n == 0) return;
  DeviceGuard guard(tensor_device_index(out));
  launch_index_gather(out.data_ptr(), src.data_ptr(), table.data_ptr<int64_t>(), out.element_size(),
                      make_strided_layout<3>(sizes, {out_strides, src_strides, table_strides}, op), n,
                      current_stream());
}

void scatter_by_table(IntArrayRef sizes, const Tensor& dst, IntArrayRef dst_strides, const Tensor& src,
                      IntArrayRef src_strides, const Tensor& table, IntArrayRef table_strides, ScatterMode mode,
                      const IndexErrorSink& sink, const char* op) {
  // The dims where dst's base does not move may write one element more than once: they run in
  // order inside a thread (Note [Deterministic scatter on CUDA]), or, when that leaves too few
  // threads, through a sort by target (Note [Sorted scatter on CUDA]).
  DimVector par_sizes, ser_sizes;
  std::array<DimVector, 3> par_strides, ser_strides;
  const std::array<IntArrayRef, 3> strides{dst_strides, src_strides, table_strides};
  for (size_t d = 0; d < sizes.size(); ++d) {
    const bool serial = dst_strides[d] == 0;
    (serial ? ser_sizes : par_sizes).push_back(sizes[d]);
    for (size_t k = 0; k < 3; ++k) (serial ? ser_strides : par_strides)[k].push_back(strides[k][d]);
  }
  const int64_t n_par = checked_numel(par_sizes, op), n_ser = checked_numel(ser_sizes, op);
  if (n_par == 0 || n_ser == 0) return;
  DeviceGuard guard(tensor_device_index(dst));
  const StridedLayout<3> par = make_strided_layout<3>(par_sizes, {par_strides[0], par_strides[1], par_strides[2]}, op);
  const StridedLayout<3> ser = make_strided_layout<3>(ser_sizes, {ser_strides[0], ser_strides[1], ser_strides[2]}, op);
  const std::optional<uint64_t> extent = element_extent(dst);
  bool ok = false;
  if (extent && sorted_scatter_fits(n_par, n_ser)) {
    ScratchBlocks scratch(dst.device());  // freed when this returns: safe on one stream (cub_temp.h)
    ok = launch_index_scatter_sorted(dst.dtype(), dst.data_ptr(), src.data_ptr(), table.data_ptr<int64_t>(), par, n_par,
                                     ser, n_ser, *extent, mode, sink, scratch.fn(), current_stream());
  } else {
    ok = launch_index_scatter(dst.dtype(), dst.data_ptr(), src.data_ptr(), table.data_ptr<int64_t>(), par, n_par, ser,
                              n_ser, mode, sink, current_stream());
  }
  ANATOMY_CHECK(ok, TypeError, "{}: dtype {} is not supported", op, name(dst.dtype()));
}

}  // namespace anatomy::cuda
