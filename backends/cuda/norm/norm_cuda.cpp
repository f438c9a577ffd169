// CUDA: layer_norm (native_layer_norm: the output, each row's mean and 1/sqrt(var + eps)) and
// rms_norm, over the CPU's plan (dispatch/ops/norm_plan.h: rows x cols, the parameters contiguous,
// of the input's dtype). The kernels read the input where it lies when its rows and their values
// are each evenly spaced: rows a stride apart (x[:, 1:], c01 contiguity-bench's sliced view) and
// values a stride apart (every other column) go to the row kernels of norm.cu; rows closer
// together than their values (a transposed matrix) to statistics then a transposing write
// (norm_transpose.cu: fp16 and bf16 within a quarter of L2), else to clusters of blocks sharing
// a tile (norm_cluster.cu) where the dtype, the GPU and the layout allow, else to the tile kernel of
// norm_tile.cu, or to a copy when not even a tile of two rows fits in shared memory. Their
// derivatives are composites (autograd/derivatives_nn.cpp), which run on CUDA as they are.
#include <limits>
#include <tuple>

#include "anatomy/backends/cuda/norm/launch.h"
#include "anatomy/backends/cuda/runtime/current_stream.h"
#include "anatomy/backends/cuda/runtime/device.h"
#include "anatomy/core/dtype_visit.h"
#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/norm_plan.h"

namespace anatomy::cuda {
namespace {

const void* data_or_null(const Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; }

// Launches the kernels that read the plan's input as it lies (b: every buffer but the input's).
void launch(RowNormKind kind, RowNormPlan& plan, RowNormBuffers b, double eps) {
  const DType dtype = plan.input.dtype();
  const auto point_at_input = [&] {
    b.input = plan.input.data_ptr();
    b.input_row_stride = plan.row_stride;
    b.input_col_stride = plan.col_stride;
  };
  if (plan.col_stride != 1 && plan.row_stride < plan.col_stride) {
    point_at_input();
    if (const int64_t bytes = row_norm_transpose_scratch(dtype, b, plan.rows, plan.cols); bytes > 0) {
      const Tensor scratch = empty({bytes}, TensorOptions().dtype(DType::UInt8).device(plan.input.device()));
      launch_row_norm_transpose(kind, dtype, b, plan.rows, plan.cols, eps, scratch.data_ptr(), current_stream());
      return;
    }
    if (launch_row_norm_clusters(kind, dtype, b, plan.rows, plan.cols, eps, current_stream())) return;
    const int tile_rows = row_norm_tile_rows(dtype, plan.cols);
    if (tile_rows > 0) {
      launch_row_norm_tiles(kind, dtype, b, plan.rows, plan.cols, tile_rows, eps, current_stream());
      return;
    }
    make_rows_contiguous(plan);
  }
  point_at_input();
  launch_row_norm(kind, dtype, b, plan.rows, plan.cols, eps, current_stream());
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_cuda(const Tensor& input, IntArrayRef normalized_shape,
                                                          const std::optional<Tensor>& weight,
                                                          const std::optional<Tensor>& bias, double eps) {
  RowNormPlan plan = prepare_row_norm("native_layer_norm", input, normalized_shape, weight, bias, /*in_place=*/true);
  const TensorOptions opts = TensorOptions().dtype(input.dtype()).device(input.device());
  Tensor mean = empty(plan.stat_shape, opts), rstd = empty(plan.stat_shape, opts);
  if (plan.rows == 0) return {plan.out, mean, rstd};
  DeviceGuard guard(input.device());
  if (plan.cols == 0) {
    // The mean of no values is 0 / 0, and so is the variance, as on the CPU.
    mean.fill_(std::numeric_limits<double>::quiet_NaN());
    rstd.fill_(std::numeric_limits<double>::quiet_NaN());
    return {plan.out, mean, rstd};
  }
  RowNormBuffers b;
  b.out = plan.out.data_ptr();
  b.weight = data_or_null(plan.weight);
  b.bias = data_or_null(plan.bias);
  b.mean = mean.data_ptr();
  b.rstd = rstd.data_ptr();
  launch(RowNormKind::Layer, plan, b, eps);
  return {plan.out, mean, rstd};
}

Tensor rms_norm_cuda(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                     std::optional<double> eps) {
  RowNormPlan plan = prepare_row_norm("rms_norm", input, normalized_shape, weight, std::nullopt, /*in_place=*/true);
  if (plan.out.numel() == 0) return plan.out;
  // The default eps is the input dtype's machine epsilon, as in PyTorch (and on the CPU).
  double e = 0;
  visit_dtype(input.dtype(), "rms_norm", [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T> || is_reduced_float_v<T>) {
      e = eps ? *eps : convert<double>(std::numeric_limits<T>::epsilon());
    }
  });
  DeviceGuard guard(input.device());
  RowNormBuffers b;
  b.out = plan.out.data_ptr();
  b.weight = data_or_null(plan.weight);
  launch(RowNormKind::Rms, plan, b, e);
  return plan.out;
}

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, CUDA, m) {
  m.impl("native_layer_norm", dispatch::named_kernel(&native_layer_norm_cuda, "native_layer_norm"));
  m.impl("rms_norm", dispatch::named_kernel(&rms_norm_cuda, "rms_norm"));
}

}  // namespace anatomy::cuda
