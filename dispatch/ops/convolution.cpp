// The convolutions' schemas and dispatching functions, and the spellings users call: conv1d,
// conv2d, conv3d (with "same" / "valid" padding for the first two), conv_transpose1d and
// conv_transpose2d, CompositeImplicitAutograd over `convolution`, which accept unbatched input
// (C, *spatial) by adding and removing the batch dim, as PyTorch's do.
//
// `convolution` has kernels for CPU (oneDNN, backends/cpu/conv_onednn.cpp), CUDA (cuDNN,
// backends/cuda/conv/) and Meta, and a composite (convolution_matmul.cpp: im2col and the matrix
// product) for every other backend and for what those kernels do not serve. Its derivative is
// convolution_backward (autograd/derivatives_conv.cpp).
#include "anatomy/dispatch/ops/convolution.h"

#include <fmt/ranges.h>

#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy {
namespace {

using Tensor3 = std::tuple<Tensor, Tensor, Tensor>;

// conv1d / conv2d / conv3d take (C, *spatial) as one sample; the result drops the batch dim again.
template <typename F>
Tensor batchify(const char* op, const Tensor& input, int64_t spatial, F&& conv) {
  ANATOMY_CHECK(input.defined(), ValueError, "{}: input must be defined", op);
  ANATOMY_CHECK(input.dim() == spatial + 1 || input.dim() == spatial + 2, ValueError,
                "{}: expected {}-D (unbatched) or {}-D (batched) input, but got input of size [{}]", op, spatial + 1,
                spatial + 2, fmt::join(input.sizes(), ", "));
  if (input.dim() == spatial + 2) return conv(input);
  return conv(input.unsqueeze(0)).squeeze(0);
}

Tensor conv_nd(const char* op, int64_t spatial, const Tensor& input, const Tensor& weight,
               const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
               int64_t groups) {
  return batchify(op, input, spatial, [&](const Tensor& x) {
    return convolution(x, weight, bias, stride, padding, dilation, false, {0}, groups);
  });
}

// padding="same": the total padding d (k - 1) per dim, split with the extra element on the right
// (PyTorch's _convolution_mode): symmetric padding where the total is even, else one more
// column padded explicitly on the right first.
Tensor conv_padding_mode(const char* op, int64_t spatial, const Tensor& input, const Tensor& weight,
                         const std::optional<Tensor>& bias, IntArrayRef stride, std::string_view padding,
                         IntArrayRef dilation, int64_t groups) {
  if (padding == "valid") return conv_nd(op, spatial, input, weight, bias, stride, {0}, dilation, groups);
  ANATOMY_CHECK(padding == "same", ValueError, "{}: invalid padding string '{}': expected 'same' or 'valid'", op,
                padding);
  for (int64_t s : stride)
    ANATOMY_CHECK(s == 1, ValueError, "{}: padding='same' is not supported for strided convolutions, got stride [{}]",
                  op, fmt::join(stride, ", "));
  ANATOMY_CHECK(weight.defined() && weight.dim() == spatial + 2, ValueError,
                "{}: expected a {}-dimensional weight, got [{}]", op, spatial + 2,
                weight.defined() ? fmt::format("{}", fmt::join(weight.sizes(), ", ")) : std::string("undefined"));
  ANATOMY_CHECK(dilation.size() == 1 || static_cast<int64_t>(dilation.size()) == spatial, ValueError,
                "{}: expected dilation to have 1 or {} values, got [{}]", op, spatial, fmt::join(dilation, ", "));
  std::vector<int64_t> symmetric(static_cast<size_t>(spatial));
  std::vector<int64_t> extra_right;  // constant_pad_nd's order: the last dim first
  bool asymmetric = false;
  for (int64_t i = spatial - 1; i >= 0; --i) {
    const int64_t d = dilation.size() == 1 ? dilation[0] : dilation[static_cast<size_t>(i)];
    ANATOMY_CHECK(d > 0, ValueError, "{}: dilation should be greater than zero, got [{}]", op,
                  fmt::join(dilation, ", "));
    const int64_t total = d * (weight.size(i + 2) - 1);
    symmetric[static_cast<size_t>(i)] = total / 2;
    extra_right.push_back(0);
    extra_right.push_back(total % 2);
    asymmetric = asymmetric || total % 2 != 0;
  }
  return batchify(op, input, spatial, [&](const Tensor& x) {
    const Tensor padded = asymmetric ? constant_pad_nd(x, extra_right) : x;
    return convolution(padded, weight, bias, stride, symmetric, dilation, false, {0}, groups);
  });
}

Tensor conv1d_composite(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return conv_nd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv2d_composite(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return conv_nd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv3d_composite(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return conv_nd("conv3d", 3, input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv1d_padding_composite(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                                IntArrayRef stride, std::string_view padding, IntArrayRef dilation, int64_t groups) {
  return conv_padding_mode("conv1d", 1, input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv2d_padding_composite(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                                IntArrayRef stride, std::string_view padding, IntArrayRef dilation, int64_t groups) {
  return conv_padding_mode("conv2d", 2, input, weight, bias, stride, padding, dilation, groups);
}

template <int64_t Spatial>
Tensor conv_transpose_composite(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                                IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                                IntArrayRef dilation) {
  const char* op = Spatial == 1 ? "conv_transpose1d" : "conv_transpose2d";
  return batchify(op, input, Spatial, [&](const Tensor& x) {
    return convolution(x, weight, bias, stride, padding, dilation, true, output_padding, groups);
  });
}

}  // namespace

ANATOMY_LIBRARY(aten, m) {
  m.def(
      "convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, "
      "bool transposed, int[] output_padding, int groups) -> Tensor");
  m.def(
      "convolution_backward(Tensor grad_output, Tensor input, Tensor weight, int[]? bias_sizes, int[] stride, "
      "int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups, int[3] output_mask) -> "
      "(Tensor, Tensor, Tensor)");
  m.def(
      "conv1d(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=1, int[1] padding=0, int[1] dilation=1, "
      "int groups=1) -> Tensor");
  m.def(
      "conv1d.padding(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=1, str padding=\"valid\", "
      "int[1] dilation=1, int groups=1) -> Tensor");
  m.def(
      "conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, int[2] padding=0, int[2] dilation=1, "
      "int groups=1) -> Tensor");
  m.def(
      "conv2d.padding(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, str padding=\"valid\", "
      "int[2] dilation=1, int groups=1) -> Tensor");
  m.def(
      "conv3d(Tensor input, Tensor weight, Tensor? bias=None, int[3] stride=1, int[3] padding=0, int[3] dilation=1, "
      "int groups=1) -> Tensor");
  m.def(
      "conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=1, int[1] padding=0, "
      "int[1] output_padding=0, int groups=1, int[1] dilation=1) -> Tensor");
  m.def(
      "conv_transpose2d.input(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, int[2] padding=0, "
      "int[2] output_padding=0, int groups=1, int[2] dilation=1) -> Tensor");
}

ANATOMY_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  m.impl("conv1d", ANATOMY_KERNEL(conv1d_composite));
  m.impl("conv1d.padding", ANATOMY_KERNEL(conv1d_padding_composite));
  m.impl("conv2d", ANATOMY_KERNEL(conv2d_composite));
  m.impl("conv2d.padding", ANATOMY_KERNEL(conv2d_padding_composite));
  m.impl("conv3d", ANATOMY_KERNEL(conv3d_composite));
  m.impl("conv_transpose1d", ANATOMY_KERNEL(conv_transpose_composite<1>));
  m.impl("conv_transpose2d.input", ANATOMY_KERNEL(conv_transpose_composite<2>));
}

Tensor convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                   int64_t groups) {
  ANATOMY_OP(op, "aten::convolution",
             Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, IntArrayRef, IntArrayRef, IntArrayRef,
                    bool, IntArrayRef, int64_t));
  return op.call(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups);
}

Tensor3 convolution_backward(const Tensor& grad_output, const Tensor& input, const Tensor& weight,
                             OptionalIntArrayRef bias_sizes, IntArrayRef stride, IntArrayRef padding,
                             IntArrayRef dilation, bool transposed, IntArrayRef output_padding, int64_t groups,
                             std::array<bool, 3> output_mask) {
  ANATOMY_OP(op, "aten::convolution_backward",
             Tensor3(const Tensor&, const Tensor&, const Tensor&, OptionalIntArrayRef, IntArrayRef, IntArrayRef,
                     IntArrayRef, bool, IntArrayRef, int64_t, IntArrayRef));
  const std::array<int64_t, 3> mask{output_mask[0], output_mask[1], output_mask[2]};
  return op.call(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed, output_padding, groups,
                 IntArrayRef(mask));
}

Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  ANATOMY_OP(op, "aten::conv1d",
             Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, IntArrayRef, IntArrayRef, IntArrayRef,
                    int64_t));
  return op.call(input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              PaddingMode padding, IntArrayRef dilation, int64_t groups) {
  ANATOMY_OP(op, "aten::conv1d.padding",
             Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, IntArrayRef, std::string_view,
                    IntArrayRef, int64_t));
  return op.call(input, weight, bias, stride, padding.name, dilation, groups);
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  ANATOMY_OP(op, "aten::conv2d",
             Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, IntArrayRef, IntArrayRef, IntArrayRef,
                    int64_t));
  return op.call(input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              PaddingMode padding, IntArrayRef dilation, int64_t groups) {
  ANATOMY_OP(op, "aten::conv2d.padding",
             Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, IntArrayRef, std::string_view,
                    IntArrayRef, int64_t));
  return op.call(input, weight, bias, stride, padding.name, dilation, groups);
}
Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  ANATOMY_OP(op, "aten::conv3d",
             Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, IntArrayRef, IntArrayRef, IntArrayRef,
                    int64_t));
  return op.call(input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation) {
  ANATOMY_OP(op, "aten::conv_transpose1d",
             Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, IntArrayRef, IntArrayRef, IntArrayRef,
                    int64_t, IntArrayRef));
  return op.call(input, weight, bias, stride, padding, output_padding, groups, dilation);
}
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation) {
  ANATOMY_OP(op, "aten::conv_transpose2d.input",
             Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, IntArrayRef, IntArrayRef, IntArrayRef,
                    int64_t, IntArrayRef));
  return op.call(input, weight, bias, stride, padding, output_padding, groups, dilation);
}

}  // namespace anatomy
