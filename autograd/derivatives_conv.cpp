// Derivatives of convolution and convolution_backward (dispatch/ops/convolution.h).
//
// convolution follows Note [Fused backward unless create_graph] (derivatives_nn.cpp): without a
// graph of the backward, one call of convolution_backward (oneDNN's or cuDNN's backward kernels);
// with one, the gradients as convolutions (dispatch/ops/convolution_matmul.cpp), which are
// differentiable again.
//
// convolution_backward's own derivative (the double backward): its outputs dx(dy, w),
// dw(x, dy) and db(dy) are linear in dy and in each of x and w, so with incoming gradients
// ggx, ggw and ggb:
//   d/d(dy) = conv(ggx, w) + conv(x, ggw) + ggb (the forward, once per term);
//   d/dx    = dx with ggw for the weight;
//   d/dw    = dw with ggx for the input.
// Every term calls `convolution`, so any order of derivative exists.
#include "anatomy/autograd/derivative.h"
#include "anatomy/autograd/formula_helpers.h"
#include "anatomy/autograd/grad_mode.h"
#include "anatomy/dispatch/ops/convolution.h"
#include "anatomy/dispatch/ops/convolution_matmul.h"

namespace anatomy::autograd {
namespace {

using Ints = std::vector<int64_t>;
using ConvSig = Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, IntArrayRef, IntArrayRef,
                       IntArrayRef, bool, IntArrayRef, int64_t);
using ConvBackwardSig = std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&,
                                                           OptionalIntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef,
                                                           bool, IntArrayRef, int64_t, IntArrayRef);

// The convolution's arguments after the tensors, starting at `first` (stride).
struct ConvArgs {
  Ints stride, padding, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;
};
ConvArgs conv_args(const BackwardContext& ctx, int first) {
  return {ctx.arg<Ints>(first),     ctx.arg<Ints>(first + 1), ctx.arg<Ints>(first + 2),
          ctx.arg<Ints>(first + 4), ctx.arg<bool>(first + 3), ctx.arg<int64_t>(first + 5)};
}

ConvGeometry geometry(const Tensor& x, const Tensor& w, const ConvArgs& a) {
  return check_convolution("convolution_backward", x, w, std::nullopt, a.stride, a.padding, a.dilation, a.transposed,
                           a.output_padding, a.groups);
}

// Arguments: input, weight, bias, stride, padding, dilation, transposed, output_padding, groups.
variable_list convolution_backward_formula(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor x = ctx.input(0), w = ctx.input(1);
  const ConvArgs a = conv_args(ctx, 3);
  const std::array<bool, 3> mask{ctx.needs_grad(0), ctx.needs_grad(1), ctx.needs_grad(2)};
  Tensor dx, dw, db;
  if (!GradMode::is_enabled()) {
    const Ints bias_sizes{mask[2] ? g[0].size(1) : 0};
    std::tie(dx, dw, db) =
        convolution_backward(g[0], x, w, mask[2] ? OptionalIntArrayRef(bias_sizes) : OptionalIntArrayRef(std::nullopt),
                             a.stride, a.padding, a.dilation, a.transposed, a.output_padding, a.groups, mask);
  } else {
    std::tie(dx, dw, db) = convolution_backward_via_convolutions(g[0], x, w, geometry(x, w, a), mask);
  }
  if (mask[0]) ctx.set(out, 0, grad_for_input(ctx, 0, dx));
  if (mask[1]) ctx.set(out, 1, grad_for_input(ctx, 1, dw));
  if (mask[2]) ctx.set(out, 2, grad_for_input(ctx, 2, db));
  return out;
}

// Arguments: grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
// output_padding, groups, output_mask. Outputs: dx, dw, db.
variable_list convolution_double_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor dy = ctx.input(0), x = ctx.input(1), w = ctx.input(2);
  const ConvArgs a = conv_args(ctx, 4);
  const ConvGeometry geo = geometry(x, w, a);
  const bool has_ggx = !ctx.grad_zero_filled(0) && g[0].defined();
  const bool has_ggw = !ctx.grad_zero_filled(1) && g[1].defined();
  const bool has_ggb = !ctx.grad_zero_filled(2) && g[2].defined();
  if (ctx.needs_grad(0)) {
    Tensor gdy;
    auto add = [&gdy](const Tensor& t) { gdy = gdy.defined() ? gdy + t : t; };
    if (has_ggx)
      add(convolution(g[0], w, std::nullopt, a.stride, a.padding, a.dilation, a.transposed, a.output_padding,
                      a.groups));
    if (has_ggw)
      add(convolution(x, g[1], std::nullopt, a.stride, a.padding, a.dilation, a.transposed, a.output_padding,
                      a.groups));
    if (has_ggb) {
      Ints shape(static_cast<size_t>(dy.dim()), 1);
      shape[1] = dy.size(1);
      add(g[2].reshape(shape).expand(dy.sizes()));
    }
    if (gdy.defined()) ctx.set(out, 0, grad_for_input(ctx, 0, gdy));
  }
  if (ctx.needs_grad(1) && has_ggw) {
    ctx.set(out, 1,
            grad_for_input(ctx, 1,
                           std::get<0>(convolution_backward_via_convolutions(dy, x, g[1], geo, {true, false, false}))));
  }
  if (ctx.needs_grad(2) && has_ggx) {
    ctx.set(out, 2,
            grad_for_input(ctx, 2,
                           std::get<1>(convolution_backward_via_convolutions(dy, g[0], w, geo, {false, true, false}))));
  }
  return out;
}

const DerivativeEntry kConvolution{"aten::convolution", "ConvolutionBackward0", args_mask({0, 1}), 0,
                                   &convolution_backward_formula};
const DerivativeEntry kConvolutionBackward{"aten::convolution_backward", "ConvolutionBackwardBackward0",
                                           args_mask({0, 1, 2}), 0, &convolution_double_backward};

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Autograd, m) {
  register_derivative<&kConvolution, ConvSig>(m, "convolution");
  register_derivative<&kConvolutionBackward, ConvBackwardSig>(m, "convolution_backward");
}

}  // namespace anatomy::autograd
