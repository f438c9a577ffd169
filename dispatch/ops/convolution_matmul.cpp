// Convolutions from other operators (see convolution_matmul.h), and the composite kernels of
// `convolution` and `convolution_backward` built on them.
//
// The forward: the padded input's windows as one strided view (N, G, C/G, *kernel, *out),
// copied into columns (im2col), times the weight as (G, C_out/G, C/G * kernel): one batched
// matrix product. A transposed convolution is the plain one over the input spread out by the
// stride (stride - 1 zeros between elements), padded by dilation * (kernel - 1) - padding on
// each side (plus output_padding on the right; a negative pad crops), with the weight's
// in/out roles swapped within each group and its taps flipped.
//
// The gradients, for y = conv(x, w) with stride s, padding p, dilation d:
//   dx = conv_transpose(dy, w), with the output_padding that gives back x's size;
//   dw[o, c, k] = sum over n, i of dy[n, o, i] x_pad[n, c, i s + k d]: a convolution of x (its
//     batch and channel dims swapped) by dy (likewise) with stride d and dilation s, cropped to
//     the kernel's size; groups keep to their own channels;
//   db = dy summed over every dim but the channels.
// A transposed convolution is the adjoint of the plain one with the same weight, so its dx is
// the plain convolution of dy and its dw is the plain one's with x and dy in swapped roles.
#include "anatomy/dispatch/ops/convolution_matmul.h"

#include "anatomy/dispatch/library.h"
#include "anatomy/dispatch/ops.h"

namespace anatomy {
namespace {

using Tensor3 = std::tuple<Tensor, Tensor, Tensor>;
using Dims = std::vector<int64_t>;

int64_t product(const Dims& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

Dims spatial_sizes(const Tensor& t) { return {t.sizes().begin() + 2, t.sizes().end()}; }

// constant_pad_nd's list (the last dim first) for `before` and `after` on each spatial dim.
Dims pad_list(const Dims& before, const Dims& after) {
  Dims pads;
  for (size_t i = before.size(); i-- > 0;) {
    pads.push_back(before[i]);
    pads.push_back(after[i]);
  }
  return pads;
}

bool any_nonzero(const Dims& v) {
  for (int64_t x : v)
    if (x != 0) return true;
  return false;
}

Tensor add_bias(Tensor out, const std::optional<Tensor>& bias, int64_t spatial) {
  if (!bias || !bias->defined()) return out;
  Dims shape{1, bias->size(0)};
  shape.resize(static_cast<size_t>(spatial + 2), 1);
  return out.add_(bias->reshape(shape));
}

// The plain (not transposed) convolution: im2col and one batched matrix product.
Tensor plain_forward(const Tensor& input, const Tensor& weight, const ConvGeometry& g) {
  const int64_t n = input.size(0), groups = g.groups, cg = g.in_channels / groups, og = g.out_channels / groups;
  const Tensor padded =
      (any_nonzero(g.padding) ? constant_pad_nd(input, pad_list(g.padding, g.padding)) : input).contiguous();
  const Dims out_sizes(g.output_shape.begin() + 2, g.output_shape.end());
  Dims sizes{n, groups, cg}, strides{padded.stride(0), cg * padded.stride(1), padded.stride(1)};
  for (int64_t i = 0; i < g.spatial; ++i) {
    sizes.push_back(g.kernel[static_cast<size_t>(i)]);
    strides.push_back(g.dilation[static_cast<size_t>(i)] * padded.stride(i + 2));
  }
  for (int64_t i = 0; i < g.spatial; ++i) {
    sizes.push_back(out_sizes[static_cast<size_t>(i)]);
    strides.push_back(g.stride[static_cast<size_t>(i)] * padded.stride(i + 2));
  }
  const Tensor columns = padded.as_strided(sizes, strides, padded.storage_offset())
                             .reshape({n, groups, cg * product(g.kernel), product(out_sizes)});
  const Tensor w = weight.reshape({groups, og, cg * product(g.kernel)});
  return matmul(w, columns).reshape(g.output_shape);
}

// The weight of a transposed convolution (C_in, C_out / G, *k) as the plain convolution's
// (C_out, C_in / G, *k) that computes it over the spread-out input: roles swapped within each
// group, taps flipped.
Tensor transposed_as_plain_weight(const Tensor& weight, const ConvGeometry& g) {
  const int64_t groups = g.groups, cg = g.in_channels / groups, og = g.out_channels / groups;
  Dims grouped{groups, cg, og};
  for (int64_t k : g.kernel) grouped.push_back(k);
  Dims flip_dims, plain{g.out_channels, cg};
  for (int64_t i = 0; i < g.spatial; ++i) flip_dims.push_back(3 + i);
  for (int64_t k : g.kernel) plain.push_back(k);
  return weight.reshape(grouped).transpose(1, 2).flip(flip_dims).reshape(plain);
}

Tensor transposed_forward(const Tensor& input, const Tensor& weight, const ConvGeometry& g) {
  // The input spread out by the stride.
  Dims spread_shape{input.size(0), input.size(1)};
  for (int64_t i = 0; i < g.spatial; ++i)
    spread_shape.push_back((input.size(i + 2) - 1) * g.stride[static_cast<size_t>(i)] + 1);
  Tensor spread = zeros(spread_shape, input.options());
  Tensor every_stride = spread;
  for (int64_t i = 0; i < g.spatial; ++i)
    every_stride = every_stride.slice(i + 2, 0, std::nullopt, g.stride[static_cast<size_t>(i)]);
  every_stride.copy_(input);
  Dims before, after;
  for (size_t i = 0; i < g.kernel.size(); ++i) {
    const int64_t reach = g.dilation[i] * (g.kernel[i] - 1) - g.padding[i];
    before.push_back(reach);
    after.push_back(reach + g.output_padding[i]);
  }
  ConvGeometry plain = g;
  plain.transposed = false;
  plain.stride.assign(static_cast<size_t>(g.spatial), 1);
  plain.padding.assign(static_cast<size_t>(g.spatial), 0);
  plain.output_padding.assign(static_cast<size_t>(g.spatial), 0);
  plain.in_channels = input.size(1);
  const Tensor padded = constant_pad_nd(spread, pad_list(before, after));
  return plain_forward(padded, transposed_as_plain_weight(weight, g), plain);
}

// dw of y = conv(a, w) (stride s, padding p, dilation d, G groups) from b = dy:
// a (N, G*Ca, *), b (N, G*Cb, *) -> (G*Cb, Ca, *kernel).
Tensor weight_gradient(const Tensor& a, const Tensor& b, const ConvGeometry& g) {
  const int64_t n = a.size(0), groups = g.groups, ca = a.size(1) / groups, cb = b.size(1) / groups;
  const Dims a_sp = spatial_sizes(a), b_sp = spatial_sizes(b);
  // a as (Ca, G*N, *): channel g*N + n of sample c; b as the weight (G*Cb, N, *).
  Dims a_shape{n, groups, ca}, a_perm{2, 1, 0}, a_flat{ca, groups * n};
  Dims b_shape{n, groups, cb}, b_perm{1, 2, 0}, b_flat{groups * cb, n};
  for (int64_t i = 0; i < g.spatial; ++i) {
    a_shape.push_back(a_sp[static_cast<size_t>(i)]);
    b_shape.push_back(b_sp[static_cast<size_t>(i)]);
    a_perm.push_back(3 + i);
    b_perm.push_back(3 + i);
    a_flat.push_back(a_sp[static_cast<size_t>(i)]);
    b_flat.push_back(b_sp[static_cast<size_t>(i)]);
  }
  const Tensor a2 = a.reshape(a_shape).permute(a_perm).reshape(a_flat);
  const Tensor b2 = b.reshape(b_shape).permute(b_perm).reshape(b_flat);
  Tensor r = convolution(a2, b2, std::nullopt, g.dilation, g.padding, g.stride, false, {0}, groups);
  // (Ca, G*Cb, *k') cropped to the kernel, then (G*Cb, Ca, *k).
  Dims grouped{ca, groups, cb}, perm{1, 2, 0}, out{groups * cb, ca};
  for (int64_t i = 0; i < g.spatial; ++i) {
    r = r.narrow(i + 2, 0, g.kernel[static_cast<size_t>(i)]);
    grouped.push_back(g.kernel[static_cast<size_t>(i)]);
    perm.push_back(3 + i);
    out.push_back(g.kernel[static_cast<size_t>(i)]);
  }
  return r.reshape(grouped).permute(perm).reshape(out);
}

Tensor convolution_composite(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                             IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                             IntArrayRef output_padding, int64_t groups) {
  const ConvGeometry g = check_convolution("convolution", input, weight, bias, stride, padding, dilation, transposed,
                                           output_padding, groups);
  return convolution_via_matmul(input, weight, bias, g);
}

Tensor3 convolution_backward_composite(const Tensor& grad_output, const Tensor& input, const Tensor& weight,
                                       OptionalIntArrayRef bias_sizes, IntArrayRef stride, IntArrayRef padding,
                                       IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                                       int64_t groups, IntArrayRef output_mask) {
  const ConvGeometry g =
      check_convolution_backward("convolution_backward", grad_output, input, weight, bias_sizes, stride, padding,
                                 dilation, transposed, output_padding, groups, output_mask);
  return convolution_backward_via_convolutions(grad_output, input, weight, g,
                                               {output_mask[0] != 0, output_mask[1] != 0, output_mask[2] != 0});
}

}  // namespace

Tensor convolution_via_matmul(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                              const ConvGeometry& g) {
  if (input.size(0) == 0 || g.out_channels == 0) return empty(g.output_shape, input.options(), g.format);
  Tensor out = g.transposed ? transposed_forward(input, weight, g) : plain_forward(input, weight, g);
  out = add_bias(std::move(out), bias, g.spatial);
  return out.contiguous(g.format);
}

Tensor3 convolution_backward_via_convolutions(const Tensor& grad_output, const Tensor& input, const Tensor& weight,
                                              const ConvGeometry& g, std::array<bool, 3> output_mask) {
  Tensor dx, dw, db;
  if (input.numel() == 0 || grad_output.numel() == 0 || weight.numel() == 0) {
    // Nothing to convolve (a zero-size batch, channel or spatial dim): every product has a zero
    // factor, so dx and dw are zeros and db is dy's sums; the convolutions below would be asked
    // for sizes that cannot be.
    if (output_mask[0]) dx = empty(input.sizes(), input.options(), g.format).zero_();
    if (output_mask[1]) dw = empty(weight.sizes(), weight.options(), g.format).zero_();
  } else {
    if (output_mask[0]) {
      if (g.transposed) {
        dx = convolution(grad_output, weight, std::nullopt, g.stride, g.padding, g.dilation, false, {0}, g.groups);
        // An output_padding of the stride or more adds output positions no input reaches: the
        // plain convolution over them gives input positions past the input's end, cropped here.
        bool cropped = false;
        for (int64_t i = 0; i < g.spatial; ++i) {
          if (dx.size(i + 2) > input.size(i + 2)) {
            dx = dx.narrow(i + 2, 0, input.size(i + 2));
            cropped = true;
          }
        }
        if (cropped) dx = dx.contiguous(g.format);
      } else {
        // The output_padding that makes the transposed convolution's output x's size again.
        Dims extra;
        for (int64_t i = 0; i < g.spatial; ++i) {
          const auto u = static_cast<size_t>(i);
          const int64_t back =
              (grad_output.size(i + 2) - 1) * g.stride[u] - 2 * g.padding[u] + g.dilation[u] * (g.kernel[u] - 1) + 1;
          extra.push_back(input.size(i + 2) - back);
        }
        dx = convolution(grad_output, weight, std::nullopt, g.stride, g.padding, g.dilation, true, extra, g.groups);
      }
    }
    // weight_gradient's result is a permuted view; the gradient has the weight's layout, as the
    // oneDNN path's, the Meta kernel's and PyTorch's do.
    if (output_mask[1]) {
      dw = g.transposed ? weight_gradient(grad_output, input, g) : weight_gradient(input, grad_output, g);
      dw = dw.contiguous(g.format);
    }
  }
  if (output_mask[2]) {
    Dims dims{0};
    for (int64_t i = 0; i < g.spatial; ++i) dims.push_back(i + 2);
    db = grad_output.sum(dims);
  }
  return {dx, dw, db};
}

ANATOMY_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("convolution", ANATOMY_KERNEL(convolution_composite));
  m.impl("convolution_backward", ANATOMY_KERNEL(convolution_backward_composite));
}

}  // namespace anatomy
