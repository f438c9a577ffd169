// Derivatives of native_batch_norm and native_group_norm (batch_norm and group_norm are
// composites over them), after Note [Fused backward unless create_graph] in derivatives_nn.cpp:
// without a graph of the backward, the backward operators (native_batch_norm_backward,
// native_group_norm_backward) take the saved statistics; under create_graph the same formulas
// (dispatch/ops/channel_norm_rules.h) run on statistics recomputed from the input, so the second
// derivative sees how they depend on it. The running statistics get no gradient (PyTorch's
// neither); the mean and invstd outputs are differentiable when they came from the batch.
#include "anatomy/autograd/derivative.h"
#include "anatomy/autograd/formula_helpers.h"
#include "anatomy/autograd/grad_mode.h"
#include "anatomy/dispatch/ops/channel_norm.h"
#include "anatomy/dispatch/ops/channel_norm_rules.h"

namespace anatomy::autograd {
namespace {

using OptTensor = std::optional<Tensor>;
using Tensor3 = std::tuple<Tensor, Tensor, Tensor>;
using BatchNormSig = Tensor3(const Tensor&, const OptTensor&, const OptTensor&, const OptTensor&, const OptTensor&,
                             bool, double, double);
using GroupNormSig = Tensor3(const Tensor&, const OptTensor&, const OptTensor&, int64_t, int64_t, int64_t, int64_t,
                             double);
using BatchNormBackwardSig = Tensor3(const Tensor&, const Tensor&, const OptTensor&, const OptTensor&, const OptTensor&,
                                     const OptTensor&, const OptTensor&, bool, double, IntArrayRef);
using GroupNormBackwardSig = Tensor3(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const OptTensor&,
                                     int64_t, int64_t, int64_t, int64_t, IntArrayRef);

OptTensor optional(const Tensor& t) { return t.defined() ? OptTensor(t) : std::nullopt; }

// The backward operator may take grad `g`: no graph is recorded and g is like the input.
bool use_fused(const Tensor& g, const Tensor& x) {
  return !GradMode::is_enabled() && g.sizes() == x.sizes() && g.dtype() == x.dtype() && g.device() == x.device();
}

// d mean / dx = 1 / M and d invstd / dx = -invstd^3 (x - mean) / M, M the values per statistic:
// the gradients that arrived for the statistic outputs, as a term of dx (shapes broadcast).
Tensor statistics_term(const BackwardContext& ctx, const Tensor& g_mean, const Tensor& g_invstd, const Tensor& x,
                       const Tensor& mean, const Tensor& invstd, double count) {
  if (ctx.grad_zero_filled(1) && ctx.grad_zero_filled(2)) return Tensor();
  return (g_mean - g_invstd * invstd.pow(3) * (x - mean)) / count;
}

void set_results(BackwardContext& ctx, variable_list& out, std::vector<Tensor> r) {
  for (int i = 0; i < 3; ++i) {
    if (ctx.needs_grad(i) && r[i].defined()) ctx.set(out, i, grad_for_input(ctx, i, r[i]));
  }
}

variable_list native_batch_norm_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor x = ctx.input(0), w = ctx.input(1);
  const bool train = ctx.arg<bool>(5);
  const double eps = ctx.arg<double>(7);
  const std::array<bool, 3> mask{ctx.needs_grad(0), ctx.needs_grad(1), ctx.needs_grad(2)};
  const Tensor save_mean = ctx.output(1), save_invstd = ctx.output(2);
  std::vector<Tensor> r(3);
  Tensor mean = save_mean, invstd = save_invstd;
  if (use_fused(g[0], x)) {
    auto [dx, dw, db] = anatomy::native_batch_norm_backward(g[0], x, optional(w), std::nullopt, std::nullopt, save_mean,
                                                            save_invstd, train, eps, mask);
    r = {dx, dw, db};
  } else {
    if (train && GradMode::is_enabled()) {
      const std::vector<int64_t> dims = batch_norm_reduced_dims(x.dim());
      const Tensor xs = x.to(save_mean.dtype());
      mean = xs.mean(dims);
      invstd = (xs.var(dims, 0) + eps).rsqrt();
    }
    r = batch_norm_backward_formula(g[0], x, w, mean, invstd, train, mask);
  }
  if (train && mask[0] && x.numel() > 0) {
    const std::vector<int64_t> shape = per_channel_shape(x.dim(), x.size(1));
    const Tensor term = statistics_term(ctx, g[1].reshape(shape), g[2].reshape(shape), x, mean.reshape(shape),
                                        invstd.reshape(shape), static_cast<double>(x.numel() / x.size(1)));
    if (term.defined()) r[0] = r[0] + term;
  }
  set_results(ctx, out, r);
  return out;
}

variable_list native_group_norm_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor x = ctx.input(0), w = ctx.input(1);
  const int64_t N = ctx.arg<int64_t>(3), C = ctx.arg<int64_t>(4), HxW = ctx.arg<int64_t>(5),
                group = ctx.arg<int64_t>(6);
  const std::array<bool, 3> mask{ctx.needs_grad(0), ctx.needs_grad(1), ctx.needs_grad(2)};
  Tensor mean = ctx.output(1), rstd = ctx.output(2);
  std::vector<Tensor> r(3);
  if (use_fused(g[0], x)) {
    auto [dx, dw, db] = anatomy::native_group_norm_backward(g[0], x, mean, rstd, optional(w), N, C, HxW, group, mask);
    r = {dx, dw, db};
  } else {
    if (GradMode::is_enabled()) {
      const Tensor xg = x.to(mean.dtype()).reshape({N, group, C / group * HxW});
      mean = xg.mean({2});
      rstd = (xg.var({2}, 0) + ctx.arg<double>(7)).rsqrt();
    }
    r = group_norm_backward_formula(g[0], x, w, mean, rstd, group, mask);
  }
  if (mask[0] && x.numel() > 0) {
    const std::vector<int64_t> by_group{N, group, C / group * HxW}, stat{N, group, 1};
    const Tensor term = statistics_term(ctx, g[1].reshape(stat), g[2].reshape(stat), x.reshape(by_group),
                                        mean.reshape(stat), rstd.reshape(stat), static_cast<double>(C / group * HxW));
    if (term.defined()) r[0] = r[0] + term.reshape(x.sizes());
  }
  set_results(ctx, out, r);
  return out;
}

const DerivativeEntry kNativeBatchNorm{"aten::native_batch_norm", "NativeBatchNormBackward0", args_mask({0, 1}),
                                       args_mask({1, 2}), &native_batch_norm_backward};
const DerivativeEntry kNativeGroupNorm{"aten::native_group_norm", "NativeGroupNormBackward0", args_mask({0, 1}),
                                       args_mask({1, 2}), &native_group_norm_backward};
// The backward operators have no formula of their own (autograd/not_differentiable.cpp says why
// for layer_norm's): a differentiable backward uses the public operators above.
const DerivativeEntry kNativeBatchNormBackward{"aten::native_batch_norm_backward", "NativeBatchNormBackwardBackward0",
                                               0, 0, nullptr};
const DerivativeEntry kNativeGroupNormBackward{"aten::native_group_norm_backward", "NativeGroupNormBackwardBackward0",
                                               0, 0, nullptr};

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Autograd, m) {
  register_derivative<&kNativeBatchNorm, BatchNormSig>(m, "native_batch_norm");
  register_derivative<&kNativeGroupNorm, GroupNormSig>(m, "native_group_norm");
  register_derivative<&kNativeBatchNormBackward, BatchNormBackwardSig>(m, "native_batch_norm_backward");
  register_derivative<&kNativeGroupNormBackward, GroupNormBackwardSig>(m, "native_group_norm_backward");
}

}  // namespace anatomy::autograd
