// Checks, layouts and the backward formulas of batch_norm and group_norm.
#include "anatomy/dispatch/ops/channel_norm_rules.h"

#include <algorithm>
#include <numeric>

#include "anatomy/dispatch/ops.h"
#include "anatomy/dispatch/ops/norm_backward_plan.h"

namespace anatomy {
namespace {

bool is_reduced(DType t) { return t == DType::Float16 || t == DType::BFloat16; }

// The permutation (N, spatial..., C) of an (N, C, spatial...) tensor, and its inverse.
std::vector<int64_t> channels_last_order(int64_t ndim) {
  std::vector<int64_t> p{0};
  for (int64_t d = 2; d < ndim; ++d) p.push_back(d);
  p.push_back(1);
  return p;
}
std::vector<int64_t> inverse(const std::vector<int64_t>& p) {
  std::vector<int64_t> q(p.size());
  for (size_t i = 0; i < p.size(); ++i) q[p[i]] = static_cast<int64_t>(i);
  return q;
}

// A per-channel parameter: a vector of C, on the input's device, of the input's dtype or float32
// for a float16/bfloat16 input.
Tensor check_param(const char* op, const char* what, const std::optional<Tensor>& p, const Tensor& input, int64_t C) {
  if (!p || !p->defined()) return Tensor();
  // A vector of C, as PyTorch's kernels read it (they fail on any other shape of C elements).
  ANATOMY_CHECK(p->dim() == 1 && p->numel() == C, ValueError,
                "{}: {} should be a vector of {} elements, got shape [{}] for an input of shape [{}]", op, what, C,
                fmt::join(p->sizes(), ", "), fmt::join(input.sizes(), ", "));
  ANATOMY_CHECK(p->device() == input.device(), DeviceError, "{}: {} is on {} but the input is on {}", op, what,
                p->device().str(), input.device().str());
  const bool ok = p->dtype() == input.dtype() || (is_reduced(input.dtype()) && p->dtype() == DType::Float32);
  ANATOMY_CHECK(ok, TypeError,
                "{}: {} has dtype {} but the input is {} (parameters and running statistics take the input's dtype, "
                "or float32 for a float16/bfloat16 input)",
                op, what, name(p->dtype()), name(input.dtype()));
  return *p;
}

void check_input(const char* op, const Tensor& input) {
  ANATOMY_CHECK(input.defined(), ValueError, "{}: the input is an undefined tensor", op);
  ANATOMY_CHECK(input.dim() >= 2, ValueError, "{}: expected an input of 2 or more dims (N, C, *), got shape [{}]", op,
                fmt::join(input.sizes(), ", "));
  ANATOMY_CHECK(is_floating(input.dtype()), TypeError, "{}: expected a floating point input, got {}", op,
                name(input.dtype()));
}

}  // namespace

bool suggests_channels_last(const Tensor& t) {
  if (t.dim() != 4 && t.dim() != 5) return false;
  if (t.is_contiguous()) return false;
  // Walk the dims from innermost (C, then the spatial dims from the last) outwards; each must
  // step over at least the elements inside it (dims of size 1 may have any stride).
  const std::vector<int64_t> order = channels_last_order(t.dim());
  int64_t inner = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int64_t size = t.size(*it), stride = t.strides()[*it];
    if (size == 1) continue;
    if (stride < inner) return false;
    inner = stride * size;
  }
  return true;
}

Tensor dense_in_layout(const Tensor& t, bool channels_last) {
  if (!channels_last) return t.contiguous();
  const std::vector<int64_t> order = channels_last_order(t.dim());
  return t.permute(order).contiguous().permute(inverse(order));
}

ChannelLayout channel_layout(const Tensor& input) {
  ChannelLayout l;
  l.channels_last = suggests_channels_last(input);
  l.x = dense_in_layout(input, l.channels_last);
  l.N = input.size(0);
  l.C = input.size(1);
  for (int64_t d = 2; d < input.dim(); ++d) l.S *= input.size(d);
  return l;
}

Tensor empty_in_layout(const ChannelLayout& like, TensorOptions options) {
  const IntArrayRef sizes = like.x.sizes();
  if (!like.channels_last) return empty(sizes, options);
  const std::vector<int64_t> order = channels_last_order(like.x.dim());
  std::vector<int64_t> permuted;
  for (int64_t d : order) permuted.push_back(sizes[d]);
  return empty(permuted, options).permute(inverse(order));
}

DType batch_norm_stat_dtype(DType input) { return is_reduced(input) ? DType::Float32 : input; }

BatchNormArgs check_batch_norm_params(const char* op, const Tensor& input, const std::optional<Tensor>& weight,
                                      const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
                                      const std::optional<Tensor>& running_var) {
  check_input(op, input);
  const int64_t C = input.size(1);
  BatchNormArgs a;
  a.weight = check_param(op, "weight", weight, input, C);
  a.bias = check_param(op, "bias", bias, input, C);
  a.running_mean = check_param(op, "running_mean", running_mean, input, C);
  a.running_var = check_param(op, "running_var", running_var, input, C);
  ANATOMY_CHECK(a.running_mean.defined() == a.running_var.defined(), ValueError,
                "{}: running_mean and running_var must both be given or both be None", op);
  a.stat = batch_norm_stat_dtype(input.dtype());
  return a;
}

BatchNormArgs check_batch_norm(const char* op, const Tensor& input, const std::optional<Tensor>& weight,
                               const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
                               const std::optional<Tensor>& running_var, bool training) {
  BatchNormArgs a = check_batch_norm_params(op, input, weight, bias, running_mean, running_var);
  const int64_t C = input.size(1);
  ANATOMY_CHECK(training || a.running_mean.defined(), ValueError, "{}: running_mean must be defined in evaluation mode",
                op);
  if (training) {
    const int64_t per_channel = C == 0 ? 0 : input.numel() / C;
    ANATOMY_CHECK(per_channel != 1, ValueError,
                  "{}: Expected more than 1 value per channel when training, got input size [{}]", op,
                  fmt::join(input.sizes(), ", "));
  }
  return a;
}

void check_same_as_input(const char* op, const char* what, const Tensor& t, const Tensor& input) {
  ANATOMY_CHECK(t.defined(), ValueError, "{}: {} is an undefined tensor", op, what);
  ANATOMY_CHECK(t.sizes() == input.sizes(), ValueError, "{}: {} has shape [{}] but the input has shape [{}]", op, what,
                fmt::join(t.sizes(), ", "), fmt::join(input.sizes(), ", "));
  ANATOMY_CHECK(t.dtype() == input.dtype(), TypeError, "{}: {} has dtype {} but the input is {}", op, what,
                name(t.dtype()), name(input.dtype()));
  ANATOMY_CHECK(t.device() == input.device(), DeviceError, "{}: {} is on {} but the input is on {}", op, what,
                t.device().str(), input.device().str());
}

Tensor check_saved_stat(const char* op, const char* what, const std::optional<Tensor>& t, const Tensor& input,
                        int64_t C) {
  ANATOMY_CHECK(t && t->defined(), ValueError, "{}: {} must be defined (or the running statistics given in eval)", op,
                what);
  ANATOMY_CHECK(t->numel() == C, ValueError, "{}: {} should contain {} elements not {}", op, what, C, t->numel());
  ANATOMY_CHECK(t->device() == input.device(), DeviceError, "{}: {} is on {} but the input is on {}", op, what,
                t->device().str(), input.device().str());
  ANATOMY_CHECK(is_floating(t->dtype()), TypeError, "{}: {} must be floating point, got {}", op, what,
                name(t->dtype()));
  return t->reshape({C});
}

void check_group_stat(const char* op, const char* what, const Tensor& t, const Tensor& input, int64_t N,
                      int64_t group) {
  ANATOMY_CHECK(t.defined(), ValueError, "{}: {} is an undefined tensor", op, what);
  ANATOMY_CHECK(t.numel() == N * group, ValueError, "{}: {} should contain N * group = {} elements not {}", op, what,
                N * group, t.numel());
  ANATOMY_CHECK(t.device() == input.device(), DeviceError, "{}: {} is on {} but the input is on {}", op, what,
                t.device().str(), input.device().str());
  ANATOMY_CHECK(is_floating(t.dtype()), TypeError, "{}: {} must be floating point, got {}", op, what, name(t.dtype()));
}

BatchNormArgs check_batch_norm_backward(const char* op, const Tensor& grad_out, const Tensor& input,
                                        const std::optional<Tensor>& weight, const std::optional<Tensor>& running_mean,
                                        const std::optional<Tensor>& running_var, IntArrayRef output_mask) {
  check_output_mask(op, output_mask, 3);
  BatchNormArgs a = check_batch_norm_params(op, input, weight, std::nullopt, running_mean, running_var);
  check_same_as_input(op, "grad_out", grad_out, input);
  return a;
}

GroupNormArgs check_group_norm_backward(const char* op, const Tensor& grad_out, const Tensor& input, const Tensor& mean,
                                        const Tensor& rstd, const std::optional<Tensor>& weight, int64_t N, int64_t C,
                                        int64_t HxW, int64_t group, IntArrayRef output_mask) {
  check_output_mask(op, output_mask, 3);
  GroupNormArgs a = check_group_norm(op, input, weight, std::nullopt, N, C, HxW, group);
  check_same_as_input(op, "grad_out", grad_out, input);
  check_group_stat(op, "mean", mean, input, N, group);
  check_group_stat(op, "rstd", rstd, input, N, group);
  return a;
}

void update_running_stats(const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
                          const Tensor& mean, const Tensor& var, int64_t count, double momentum) {
  if (!running_mean || !running_mean->defined() || count == 0) return;
  const Tensor& rm = *running_mean;
  const Tensor& rv = *running_var;
  // One value per channel: the unbiased variance of one value is undefined (inf / NaN, as
  // PyTorch's), but training refuses that case before getting here.
  const double unbias = count > 1 ? static_cast<double>(count) / static_cast<double>(count - 1) : 1.0;
  const DType t = mean.dtype();
  const Tensor new_mean = rm.to(t).reshape({-1}) * (1 - momentum) + mean.reshape({-1}) * momentum;
  const Tensor new_var = rv.to(t).reshape({-1}) * (1 - momentum) + var.reshape({-1}) * (momentum * unbias);
  rm.copy_(new_mean.reshape(rm.sizes()));
  rv.copy_(new_var.reshape(rv.sizes()));
}

GroupNormArgs check_group_norm(const char* op, const Tensor& input, const std::optional<Tensor>& weight,
                               const std::optional<Tensor>& bias, int64_t N, int64_t C, int64_t HxW, int64_t group) {
  check_input(op, input);
  ANATOMY_CHECK(N == input.size(0) && C == input.size(1) && N * C * HxW == input.numel(), ValueError,
                "{}: N={}, C={}, HxW={} do not describe the input of shape [{}]", op, N, C, HxW,
                fmt::join(input.sizes(), ", "));
  ANATOMY_CHECK(group > 0, ValueError, "{}: num_groups must be positive, got {}", op, group);
  // As in PyTorch; it also bounds the statistics' N * group elements by the input's N * C.
  ANATOMY_CHECK(C > 0, ValueError, "{}: expected an input with channels, got one of shape [{}]", op,
                fmt::join(input.sizes(), ", "));
  ANATOMY_CHECK(C % group == 0, ValueError,
                "{}: Expected number of channels in input to be divisible by num_groups, but got input of shape [{}] "
                "and num_groups={}",
                op, fmt::join(input.sizes(), ", "), group);
  GroupNormArgs a;
  a.weight = check_param(op, "weight", weight, input, C);
  a.bias = check_param(op, "bias", bias, input, C);
  const bool mixed = (a.weight.defined() && a.weight.dtype() != input.dtype()) ||
                     (a.bias.defined() && a.bias.dtype() != input.dtype());
  a.stat = mixed ? DType::Float32 : input.dtype();
  return a;
}

std::vector<int64_t> batch_norm_reduced_dims(int64_t ndim) {
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < ndim; ++d) dims.push_back(d);
  return dims;
}

std::vector<int64_t> per_channel_shape(int64_t ndim, int64_t C) {
  std::vector<int64_t> shape(static_cast<size_t>(ndim), 1);
  shape[1] = C;
  return shape;
}

namespace {

Tensor as_dtype(const Tensor& t, DType d) { return t.dtype() == d ? t : t.to(d); }
// The computation dtype of the formulas: float32 for float16/bfloat16 (as the kernels).
DType compute_dtype(DType t) { return is_reduced(t) ? DType::Float32 : t; }

}  // namespace

// xhat = (x - mean) invstd, gw = g w: dx = invstd (gw - mean(gw) - xhat mean(gw xhat)) over
// each channel when training, gw invstd in eval; dw = sum(g xhat), db = sum(g).
std::vector<Tensor> batch_norm_backward_formula(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                                const Tensor& mean, const Tensor& invstd, bool train,
                                                std::array<bool, 3> mask) {
  const DType t = compute_dtype(input.dtype());
  const std::vector<int64_t> dims = batch_norm_reduced_dims(input.dim());
  const std::vector<int64_t> shape = per_channel_shape(input.dim(), input.size(1));
  const Tensor x = as_dtype(input, t), g = as_dtype(grad, t);
  const Tensor m = as_dtype(mean, t).reshape(shape), r = as_dtype(invstd, t).reshape(shape);
  const Tensor xhat = (x - m) * r;
  const DType param = weight.defined() ? weight.dtype() : input.dtype();
  std::vector<Tensor> out(3);
  if (mask[0]) {
    const Tensor gw = weight.defined() ? g * as_dtype(weight, t).reshape(shape) : g;
    const Tensor dx = train ? r * (gw - gw.mean(dims, true) - xhat * (gw * xhat).mean(dims, true)) : gw * r;
    out[0] = dense_in_layout(as_dtype(dx, input.dtype()), suggests_channels_last(input));
  }
  if (mask[1]) out[1] = as_dtype((g * xhat).sum(dims), param);
  if (mask[2]) out[2] = as_dtype(g.sum(dims), param);
  return out;
}

// The same over each (sample, group) of cpg channels x HxW values, with the weight per channel.
std::vector<Tensor> group_norm_backward_formula(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                                const Tensor& mean, const Tensor& rstd, int64_t group,
                                                std::array<bool, 3> mask) {
  const DType t = compute_dtype(input.dtype());
  const int64_t N = input.size(0), C = input.size(1), S = C == 0 || N == 0 ? 0 : input.numel() / (N * C);
  const std::vector<int64_t> by_channel{N, C, S}, by_group{N, group, C / group * S};
  const Tensor x = as_dtype(input, t).reshape(by_group), g = as_dtype(grad, t).reshape(by_channel);
  const Tensor m = as_dtype(mean, t).reshape({N, group, 1}), r = as_dtype(rstd, t).reshape({N, group, 1});
  const Tensor xhat = (x - m) * r;
  const DType param = weight.defined() ? weight.dtype() : input.dtype();
  std::vector<Tensor> out(3);
  if (mask[0]) {
    const Tensor gw = (weight.defined() ? g * as_dtype(weight, t).reshape({1, C, 1}) : g).reshape(by_group);
    const Tensor dx = r * (gw - gw.mean({2}, true) - xhat * (gw * xhat).mean({2}, true));
    out[0] = dense_in_layout(as_dtype(dx.reshape(input.sizes()), input.dtype()), suggests_channels_last(input));
  }
  if (mask[1]) out[1] = as_dtype((g * xhat.reshape(by_channel)).sum({0, 2}), param);
  if (mask[2]) out[2] = as_dtype(g.sum({0, 2}), param);
  return out;
}

}  // namespace anatomy
