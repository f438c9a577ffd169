// Derivatives of pooling and upsampling. Each forward's derivative is its backward operator, and
// each backward operator has a derivative of its own, so both are differentiable again (double
// backward): a backward is linear in grad_output, and its derivative there is the forward's
// transpose's transpose, the forward itself: avg_pool2d for avg_pool2d_backward, the
// upsamplings for theirs, _adaptive_avg_pool2d for its backward, and for max pooling a gather at
// the saved indices. None depends on self's values (max pooling's window choice is piecewise
// constant), so self gets no gradient from a backward operator.
#include "anatomy/autograd/derivative.h"
#include "anatomy/autograd/formula_helpers.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy::autograd {
namespace {

using MaxPoolSig = std::tuple<Tensor, Tensor>(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, bool);
using MaxPoolBackwardSig = Tensor(const Tensor&, const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef,
                                  bool, const Tensor&);
using AvgPoolSig = Tensor(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, bool, bool, std::optional<int64_t>);
using AvgPoolBackwardSig = Tensor(const Tensor&, const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, bool, bool,
                                  std::optional<int64_t>);
using AdaptiveSig = Tensor(const Tensor&, IntArrayRef);
using AdaptiveBackwardSig = Tensor(const Tensor&, const Tensor&);
using NearestSig = Tensor(const Tensor&, IntArrayRef, std::optional<double>, std::optional<double>);
using NearestBackwardSig = Tensor(const Tensor&, IntArrayRef, IntArrayRef, std::optional<double>,
                                  std::optional<double>);
using BilinearSig = Tensor(const Tensor&, IntArrayRef, bool, std::optional<double>, std::optional<double>);
using BilinearBackwardSig = Tensor(const Tensor&, IntArrayRef, IntArrayRef, bool, std::optional<double>,
                                   std::optional<double>);

using Ints = std::vector<int64_t>;

template <typename T>
std::optional<T> optional_arg(const BackwardContext& ctx, int i) {
  return ctx.is_none(i) ? std::nullopt : std::optional<T>(ctx.arg<T>(i));
}

// The last two dims of `t` as one (the flattened H * W plane the indices point into).
Tensor flat_planes(const Tensor& t) {
  std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end() - 2);
  sizes.push_back(t.size(-2) * t.size(-1));
  return t.reshape(sizes);
}

// Arguments: self, kernel_size, stride, padding, dilation, ceil_mode. Outputs: values, indices.
variable_list max_pool2d_with_indices_backward_formula(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  ctx.set(out, 0,
          grad_for_input(
              ctx, 0,
              max_pool2d_with_indices_backward(g[0], ctx.input(0), ctx.arg<Ints>(1), ctx.arg<Ints>(2), ctx.arg<Ints>(3),
                                               ctx.arg<Ints>(4), ctx.arg<bool>(5), ctx.output(1))));
  return out;
}
// Arguments: grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices.
variable_list max_pool2d_with_indices_backward_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  if (ctx.needs_grad(0)) {
    const Tensor indices = ctx.input(7);
    const Tensor picked = gather(flat_planes(g[0]), g[0].dim() - 2, flat_planes(indices));
    ctx.set(out, 0, grad_for_input(ctx, 0, picked.reshape(indices.sizes())));
  }
  return out;
}

// Arguments: self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override.
variable_list avg_pool2d_backward_formula(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  ctx.set(out, 0,
          grad_for_input(ctx, 0,
                         avg_pool2d_backward(g[0], ctx.input(0), ctx.arg<Ints>(1), ctx.arg<Ints>(2), ctx.arg<Ints>(3),
                                             ctx.arg<bool>(4), ctx.arg<bool>(5), optional_arg<int64_t>(ctx, 6))));
  return out;
}
// Arguments: grad_output, self, then avg_pool2d's.
variable_list avg_pool2d_backward_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  if (ctx.needs_grad(0)) {
    ctx.set(out, 0,
            grad_for_input(ctx, 0,
                           avg_pool2d(g[0], ctx.arg<Ints>(2), ctx.arg<Ints>(3), ctx.arg<Ints>(4), ctx.arg<bool>(5),
                                      ctx.arg<bool>(6), optional_arg<int64_t>(ctx, 7))));
  }
  return out;
}

// Arguments: self, output_size.
variable_list adaptive_avg_pool2d_backward_formula(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  ctx.set(out, 0, grad_for_input(ctx, 0, _adaptive_avg_pool2d_backward(g[0], ctx.input(0))));
  return out;
}
// Arguments: grad_output, self.
variable_list adaptive_avg_pool2d_backward_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  if (ctx.needs_grad(0)) {
    const IntArrayRef sizes = ctx.input_sizes(0);
    ctx.set(out, 0,
            grad_for_input(ctx, 0, _adaptive_avg_pool2d(g[0], {sizes[sizes.size() - 2], sizes[sizes.size() - 1]})));
  }
  return out;
}

// Arguments: self, output_size, scales_h, scales_w.
variable_list upsample_nearest2d_backward_formula(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  ctx.set(out, 0,
          grad_for_input(ctx, 0,
                         upsample_nearest2d_backward(g[0], ctx.arg<Ints>(1), ctx.input_sizes(0),
                                                     optional_arg<double>(ctx, 2), optional_arg<double>(ctx, 3))));
  return out;
}
// Arguments: grad_output, output_size, input_size, scales_h, scales_w.
variable_list upsample_nearest2d_backward_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  ctx.set(out, 0,
          grad_for_input(
              ctx, 0,
              upsample_nearest2d(g[0], ctx.arg<Ints>(1), optional_arg<double>(ctx, 3), optional_arg<double>(ctx, 4))));
  return out;
}

// Arguments: self, output_size, align_corners, scales_h, scales_w.
variable_list upsample_bilinear2d_backward_formula(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  ctx.set(out, 0,
          grad_for_input(ctx, 0,
                         upsample_bilinear2d_backward(g[0], ctx.arg<Ints>(1), ctx.input_sizes(0), ctx.arg<bool>(2),
                                                      optional_arg<double>(ctx, 3), optional_arg<double>(ctx, 4))));
  return out;
}
// Arguments: grad_output, output_size, input_size, align_corners, scales_h, scales_w.
variable_list upsample_bilinear2d_backward_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  ctx.set(out, 0,
          grad_for_input(ctx, 0,
                         upsample_bilinear2d(g[0], ctx.arg<Ints>(1), ctx.arg<bool>(3), optional_arg<double>(ctx, 4),
                                             optional_arg<double>(ctx, 5))));
  return out;
}

const DerivativeEntry kMaxPool{"aten::max_pool2d_with_indices", "MaxPool2DWithIndicesBackward0", args_mask({0}),
                               args_mask({1}), &max_pool2d_with_indices_backward_formula};
const DerivativeEntry kMaxPoolBackward{"aten::max_pool2d_with_indices_backward",
                                       "MaxPool2DWithIndicesBackwardBackward0", args_mask({7}), 0,
                                       &max_pool2d_with_indices_backward_backward};
const DerivativeEntry kAvgPool{"aten::avg_pool2d", "AvgPool2DBackward0", args_mask({0}), 0,
                               &avg_pool2d_backward_formula};
const DerivativeEntry kAvgPoolBackward{"aten::avg_pool2d_backward", "AvgPool2DBackwardBackward0", 0, 0,
                                       &avg_pool2d_backward_backward};
const DerivativeEntry kAdaptive{"aten::_adaptive_avg_pool2d", "AdaptiveAvgPool2DBackward0", args_mask({0}), 0,
                                &adaptive_avg_pool2d_backward_formula};
const DerivativeEntry kAdaptiveBackward{"aten::_adaptive_avg_pool2d_backward", "AdaptiveAvgPool2DBackwardBackward0", 0,
                                        0, &adaptive_avg_pool2d_backward_backward};
const DerivativeEntry kNearest{"aten::upsample_nearest2d", "UpsampleNearest2DBackward0", 0, 0,
                               &upsample_nearest2d_backward_formula};
const DerivativeEntry kNearestBackward{"aten::upsample_nearest2d_backward", "UpsampleNearest2DBackwardBackward0", 0, 0,
                                       &upsample_nearest2d_backward_backward};
const DerivativeEntry kBilinear{"aten::upsample_bilinear2d", "UpsampleBilinear2DBackward0", 0, 0,
                                &upsample_bilinear2d_backward_formula};
const DerivativeEntry kBilinearBackward{"aten::upsample_bilinear2d_backward", "UpsampleBilinear2DBackwardBackward0", 0,
                                        0, &upsample_bilinear2d_backward_backward};

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Autograd, m) {
  register_derivative<&kMaxPool, MaxPoolSig>(m, "max_pool2d_with_indices");
  register_derivative<&kMaxPoolBackward, MaxPoolBackwardSig>(m, "max_pool2d_with_indices_backward");
  register_derivative<&kAvgPool, AvgPoolSig>(m, "avg_pool2d");
  register_derivative<&kAvgPoolBackward, AvgPoolBackwardSig>(m, "avg_pool2d_backward");
  register_derivative<&kAdaptive, AdaptiveSig>(m, "_adaptive_avg_pool2d");
  register_derivative<&kAdaptiveBackward, AdaptiveBackwardSig>(m, "_adaptive_avg_pool2d_backward");
  register_derivative<&kNearest, NearestSig>(m, "upsample_nearest2d");
  register_derivative<&kNearestBackward, NearestBackwardSig>(m, "upsample_nearest2d_backward");
  register_derivative<&kBilinear, BilinearSig>(m, "upsample_bilinear2d");
  register_derivative<&kBilinearBackward, BilinearBackwardSig>(m, "upsample_bilinear2d_backward");
}

}  // namespace anatomy::autograd
