// Batch and group normalization: schemas, the C++ functions, and the composites: batch_norm and
// group_norm (the native operators' first result), the backward operators (the formulas of
// channel_norm_rules.h, for every backend), and the forward written with public operators that
// a backend without its own kernel runs. Kernels: backends/cpu/channel_norm_cpu.cpp,
// backends/meta/channel_norm_meta.cpp.
//
// output_mask is `int[3]` where PyTorch's schema says `bool[3]` (the schema language has no
// bool lists); SymInt arguments are `int`.
#include "anatomy/dispatch/ops/channel_norm.h"

#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/channel_norm_rules.h"

namespace anatomy {
namespace {

using Tensor3 = std::tuple<Tensor, Tensor, Tensor>;
using OptTensor = std::optional<Tensor>;

Tensor as_dtype(const Tensor& t, DType d) { return t.dtype() == d ? t : t.to(d); }
std::array<bool, 3> mask_of(IntArrayRef mask) { return {mask[0] != 0, mask[1] != 0, mask[2] != 0}; }

// cudnn_enabled is accepted and ignored (the engine picks its kernels itself).
Tensor batch_norm_composite(const Tensor& input, const OptTensor& weight, const OptTensor& bias,
                            const OptTensor& running_mean, const OptTensor& running_var, bool training, double momentum,
                            double eps, bool) {
  return std::get<0>(native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps));
}

// The per-sample shape comes from the input, as in PyTorch.
Tensor group_norm_composite(const Tensor& input, int64_t num_groups, const OptTensor& weight, const OptTensor& bias,
                            double eps, bool) {
  ANATOMY_CHECK(input.defined() && input.dim() >= 2, ValueError,
                "group_norm: expected an input of 2 or more dims (N, C, *), got {} dims",
                input.defined() ? input.dim() : 0);
  const int64_t N = input.size(0), C = input.size(1);
  int64_t hxw = 1;
  for (int64_t d = 2; d < input.dim(); ++d) hxw *= input.size(d);
  return std::get<0>(native_group_norm(input, weight, bias, N, C, hxw, num_groups, eps));
}

// The forward with public operators: statistics in the computation dtype, the output in the
// input's dtype and layout.
Tensor3 native_batch_norm_composite(const Tensor& input, const OptTensor& weight, const OptTensor& bias,
                                    const OptTensor& running_mean, const OptTensor& running_var, bool training,
                                    double momentum, double eps) {
  const char* op = "native_batch_norm";
  const BatchNormArgs a = check_batch_norm(op, input, weight, bias, running_mean, running_var, training);
  const std::vector<int64_t> dims = batch_norm_reduced_dims(input.dim());
  const std::vector<int64_t> shape = per_channel_shape(input.dim(), input.size(1));
  const Tensor x = as_dtype(input, a.stat);
  Tensor mean, invstd;
  if (training) {
    mean = x.mean(dims);
    const Tensor var = x.var(dims, 0);
    invstd = (var + eps).rsqrt();
    update_running_stats(running_mean, running_var, mean, var, input.numel() / std::max<int64_t>(input.size(1), 1),
                         momentum);
  } else {
    mean = a.running_mean.to(a.stat, false, /*copy=*/true);
    invstd = (as_dtype(a.running_var, a.stat) + eps).rsqrt();
  }
  Tensor y = (x - mean.reshape(shape)) * invstd.reshape(shape);
  if (a.weight.defined()) y = y * as_dtype(a.weight, a.stat).reshape(shape);
  if (a.bias.defined()) y = y + as_dtype(a.bias, a.stat).reshape(shape);
  y = dense_in_layout(as_dtype(y, input.dtype()), suggests_channels_last(input));
  return {y, mean.contiguous(), invstd.contiguous()};
}

Tensor3 native_group_norm_composite(const Tensor& input, const OptTensor& weight, const OptTensor& bias, int64_t N,
                                    int64_t C, int64_t HxW, int64_t group, double eps) {
  const GroupNormArgs a = check_group_norm("native_group_norm", input, weight, bias, N, C, HxW, group);
  // fp16/bf16 compute in fp32 (batch_norm's statistics dtype) and round once, as the CPU kernel.
  const DType t = batch_norm_stat_dtype(input.dtype());
  const Tensor x = as_dtype(input, t).reshape({N, group, C / group * HxW});
  const Tensor mean = x.mean({2}, true), rstd = (x.var({2}, 0, true) + eps).rsqrt();
  Tensor y = ((x - mean) * rstd).reshape({N, C, HxW});
  if (a.weight.defined()) y = y * as_dtype(a.weight, t).reshape({1, C, 1});
  if (a.bias.defined()) y = y + as_dtype(a.bias, t).reshape({1, C, 1});
  y = dense_in_layout(as_dtype(y.reshape(input.sizes()), input.dtype()), suggests_channels_last(input));
  return {y, as_dtype(mean.reshape({N, group}), a.stat), as_dtype(rstd.reshape({N, group}), a.stat)};
}

Tensor3 native_batch_norm_backward_composite(const Tensor& grad_out, const Tensor& input, const OptTensor& weight,
                                             const OptTensor& running_mean, const OptTensor& running_var,
                                             const OptTensor& save_mean, const OptTensor& save_invstd, bool train,
                                             double eps, IntArrayRef output_mask) {
  const char* op = "native_batch_norm_backward";
  const BatchNormArgs a =
      check_batch_norm_backward(op, grad_out, input, weight, running_mean, running_var, output_mask);
  const int64_t C = input.size(1);
  const bool use_running = !train && a.running_mean.defined();
  Tensor mean, invstd;
  if (use_running) {
    mean = a.running_mean;
    invstd = (as_dtype(a.running_var, a.stat) + eps).rsqrt();
  } else {
    mean = check_saved_stat(op, "save_mean", save_mean, input, C);
    invstd = check_saved_stat(op, "save_invstd", save_invstd, input, C);
  }
  const std::vector<Tensor> g =
      batch_norm_backward_formula(grad_out, input, a.weight, mean, invstd, train, mask_of(output_mask));
  return {g[0], g[1], g[2]};
}

Tensor3 native_group_norm_backward_composite(const Tensor& grad_out, const Tensor& input, const Tensor& mean,
                                             const Tensor& rstd, const OptTensor& weight, int64_t N, int64_t C,
                                             int64_t HxW, int64_t group, IntArrayRef output_mask) {
  const char* op = "native_group_norm_backward";
  const GroupNormArgs a =
      check_group_norm_backward(op, grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask);
  const std::vector<Tensor> g =
      group_norm_backward_formula(grad_out, input, a.weight, mean, rstd, group, mask_of(output_mask));
  return {g[0], g[1], g[2]};
}

}  // namespace

ANATOMY_LIBRARY(aten, m) {
  m.def(
      "native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
      "bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)");
  m.def(
      "batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
      "bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor",
      ANATOMY_KERNEL(batch_norm_composite));
  m.def(
      "native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor? running_mean, "
      "Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool train, float eps, int[3] output_mask) -> "
      "(Tensor, Tensor, Tensor)");
  m.def(
      "native_group_norm(Tensor input, Tensor? weight, Tensor? bias, int N, int C, int HxW, int group, float eps) "
      "-> (Tensor, Tensor, Tensor)");
  m.def(
      "group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, "
      "bool cudnn_enabled=True) -> Tensor",
      ANATOMY_KERNEL(group_norm_composite));
  m.def(
      "native_group_norm_backward(Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, Tensor? weight, int N, "
      "int C, int HxW, int group, int[3] output_mask) -> (Tensor, Tensor, Tensor)");
}

ANATOMY_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("native_batch_norm", ANATOMY_KERNEL(native_batch_norm_composite));
  m.impl("native_group_norm", ANATOMY_KERNEL(native_group_norm_composite));
  m.impl("native_batch_norm_backward", ANATOMY_KERNEL(native_batch_norm_backward_composite));
  m.impl("native_group_norm_backward", ANATOMY_KERNEL(native_group_norm_backward_composite));
}

Tensor3 native_batch_norm(const Tensor& input, const OptTensor& weight, const OptTensor& bias,
                          const OptTensor& running_mean, const OptTensor& running_var, bool training, double momentum,
                          double eps) {
  ANATOMY_OP(op, "aten::native_batch_norm",
             Tensor3(const Tensor&, const OptTensor&, const OptTensor&, const OptTensor&, const OptTensor&, bool,
                     double, double));
  return op.call(input, weight, bias, running_mean, running_var, training, momentum, eps);
}
Tensor batch_norm(const Tensor& input, const OptTensor& weight, const OptTensor& bias, const OptTensor& running_mean,
                  const OptTensor& running_var, bool training, double momentum, double eps) {
  ANATOMY_OP(op, "aten::batch_norm",
             Tensor(const Tensor&, const OptTensor&, const OptTensor&, const OptTensor&, const OptTensor&, bool, double,
                    double, bool));
  return op.call(input, weight, bias, running_mean, running_var, training, momentum, eps, true);
}
Tensor3 native_batch_norm_backward(const Tensor& grad_out, const Tensor& input, const OptTensor& weight,
                                   const OptTensor& running_mean, const OptTensor& running_var,
                                   const OptTensor& save_mean, const OptTensor& save_invstd, bool train, double eps,
                                   std::array<bool, 3> output_mask) {
  ANATOMY_OP(op, "aten::native_batch_norm_backward",
             Tensor3(const Tensor&, const Tensor&, const OptTensor&, const OptTensor&, const OptTensor&,
                     const OptTensor&, const OptTensor&, bool, double, IntArrayRef));
  const std::vector<int64_t> mask(output_mask.begin(), output_mask.end());
  return op.call(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train, eps, mask);
}
Tensor3 native_group_norm(const Tensor& input, const OptTensor& weight, const OptTensor& bias, int64_t N, int64_t C,
                          int64_t HxW, int64_t group, double eps) {
  ANATOMY_OP(op, "aten::native_group_norm",
             Tensor3(const Tensor&, const OptTensor&, const OptTensor&, int64_t, int64_t, int64_t, int64_t, double));
  return op.call(input, weight, bias, N, C, HxW, group, eps);
}
Tensor group_norm(const Tensor& input, int64_t num_groups, const OptTensor& weight, const OptTensor& bias, double eps) {
  ANATOMY_OP(op, "aten::group_norm", Tensor(const Tensor&, int64_t, const OptTensor&, const OptTensor&, double, bool));
  return op.call(input, num_groups, weight, bias, eps, true);
}
Tensor3 native_group_norm_backward(const Tensor& grad_out, const Tensor& input, const Tensor& mean, const Tensor& rstd,
                                   const OptTensor& weight, int64_t N, int64_t C, int64_t HxW, int64_t group,
                                   std::array<bool, 3> output_mask) {
  ANATOMY_OP(op, "aten::native_group_norm_backward",
             Tensor3(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const OptTensor&, int64_t, int64_t,
                     int64_t, int64_t, IntArrayRef));
  const std::vector<int64_t> mask(output_mask.begin(), output_mask.end());
  return op.call(grad_out, input, mean, rstd, weight, N, C, HxW, group, mask);
}

}  // namespace anatomy
