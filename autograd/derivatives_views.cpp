// Derivatives of the view operators, unfold's overlapping windows included (each maps the
// gradient back onto its input's geometry; registered as views, Note [View + in-place] in
// view_info.h), and of clone, _to_copy, copy_, fill_ and the random fills, and constant_pad_nd.
#include "anatomy/autograd/derivative.h"
#include "anatomy/autograd/formula_helpers.h"

namespace anatomy::autograd {
namespace {

using OptInt = std::optional<int64_t>;

#define ANATOMY_VIEW_FORMULA(fn, body)                             \
  variable_list fn(BackwardContext& ctx, const variable_list& g) { \
    variable_list out = ctx.grads();                               \
    ctx.set(out, 0, body);                                         \
    return out;                                                    \
  }

// The gradient of a slice or selection: the slice's gradient padded with zeros back to the
// input's extent along `dim` (constant_pad_nd, so it is differentiable again).
Tensor pad_along(const Tensor& g, int64_t dim, int64_t before, int64_t after) {
  std::vector<int64_t> pad(2 * static_cast<size_t>(g.dim() - dim), 0);
  // constant_pad_nd lists pads from the last dim backwards.
  pad[pad.size() - 2] = before;
  pad[pad.size() - 1] = after;
  return constant_pad_nd(g, pad, 0);
}

Tensor select_backward(const BackwardContext& ctx, const Tensor& g) {
  const IntArrayRef sizes = ctx.input_sizes(0);
  const int64_t dim = wrap_dim(ctx.arg<int64_t>(1), static_cast<int64_t>(sizes.size()), "select");
  int64_t index = ctx.arg<int64_t>(2);
  if (index < 0) index += sizes[dim];
  return pad_along(g.unsqueeze(dim), dim, index, sizes[dim] - index - 1);
}

// The gradient of a slice: the slice's gradient spread out to every step-th position (a zero
// dim of step - 1 padded in after each element, then merged), then padded with zeros back to the
// input's extent. Only pads, reshapes and narrows: differentiable again, for any step.
Tensor slice_backward(const BackwardContext& ctx, const Tensor& g) {
  const IntArrayRef sizes = ctx.input_sizes(0);
  const int64_t dim = wrap_dim(ctx.arg<int64_t>(1), static_cast<int64_t>(sizes.size()), "slice");
  const int64_t step = ctx.arg<int64_t>(4);
  const int64_t n = sizes[dim], len = g.sizes()[dim];
  if (len == 0) return pad_along(g, dim, 0, n);  // an empty slice: all zeros, wherever it started
  auto clampi = [&](int64_t v) { return std::min<int64_t>(std::max<int64_t>(v < 0 ? v + n : v, 0), n); };
  const int64_t start = ctx.is_none(2) ? 0 : clampi(ctx.arg<int64_t>(2));
  Tensor spread = g;
  if (step > 1 && len > 1) {
    DimVector merged(g.sizes());
    merged[dim] = len * step;
    spread = pad_along(g.unsqueeze(dim + 1), dim + 1, 0, step - 1).reshape(merged).narrow(dim, 0, (len - 1) * step + 1);
  }
  return pad_along(spread, dim, start, n - start - spread.sizes()[dim]);
}

std::vector<int64_t> inverse_permutation(const std::vector<int64_t>& dims) {
  std::vector<int64_t> inv(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    inv[wrap_dim(dims[i], static_cast<int64_t>(dims.size()), "permute")] = static_cast<int64_t>(i);
  }
  return inv;
}

Tensor unsqueeze_backward(const BackwardContext& ctx, const Tensor& g) {
  return g.squeeze(wrap_dim(ctx.arg<int64_t>(1), static_cast<int64_t>(ctx.input_sizes(0).size()) + 1, "unsqueeze"));
}

// Padding is undone in two steps: what positive pads added is cropped (a narrow of the gradient
// per dim), then what negative pads cropped comes back as zeros (one pad). Every count is bounded
// by the input's size, and the crops come first, so no intermediate is larger than the gradient
// or the input: pads near INT64_MIN or INT64_MAX that the forward accepted cannot overflow here.
Tensor pad_backward(const BackwardContext& ctx, const Tensor& g) {
  const std::vector<int64_t> pad = ctx.arg<std::vector<int64_t>>(1);
  const IntArrayRef sizes = ctx.input_sizes(0);
  const int64_t ndim = static_cast<int64_t>(sizes.size());
  std::vector<int64_t> zeros_back(pad.size(), 0);
  Tensor grad = g;
  for (size_t i = 0; 2 * i + 1 < pad.size(); ++i) {
    const int64_t d = ndim - 1 - static_cast<int64_t>(i), n = sizes[d];
    const int64_t left = pad[2 * i], right = pad[2 * i + 1];
    const int64_t cut_left = left >= 0 ? 0 : (left < -n ? n : -left);
    const int64_t cut_right = right >= 0 ? 0 : (right < -n ? n : -right);
    const int64_t kept = std::max<int64_t>(n - cut_left - cut_right, 0);
    grad = grad.narrow(d, kept == 0 ? 0 : std::max<int64_t>(left, 0), kept);
    zeros_back[2 * i] = kept == 0 ? n : cut_left;
    zeros_back[2 * i + 1] = kept == 0 ? 0 : cut_right;
  }
  return constant_pad_nd(grad, zeros_back, 0);
}

// The diagonal's gradient written onto the diagonal of a zero input: PyTorch writes it with
// grad_input.diagonal(...).copy_(g); here it goes through as_strided_grad, so a double backward
// does not depend on an in-place op on a view of a tensor that does not require grad.
Tensor diagonal_backward(const BackwardContext& ctx, const Tensor& g) {
  const Tensor layout = empty(ctx.input_sizes(0), g.options());
  const Tensor diag = layout.diagonal(ctx.arg<int64_t>(1), ctx.arg<int64_t>(2), ctx.arg<int64_t>(3));
  return as_strided_grad(g, Geometry::of(layout), Geometry::of(diag));
}

// unfold's windows may overlap (step < size): as_strided_grad sums every window's gradient into
// the positions it covers, and is differentiable again.
Tensor unfold_backward(const BackwardContext& ctx, const Tensor& g) {
  const Tensor layout = empty(ctx.input_sizes(0), g.options());
  const Tensor windows = layout.unfold(ctx.arg<int64_t>(1), ctx.arg<int64_t>(2), ctx.arg<int64_t>(3));
  return as_strided_grad(g, Geometry::of(layout), Geometry::of(windows));
}

// copy_ overwrites self (its old value gets a zero gradient) with src, broadcast and cast to
// self's dtype and device: src's gradient is summed back and cast back.
variable_list copy_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  if (ctx.needs_grad(0)) ctx.set(out, 0, zeros_like(g[0]));
  if (ctx.needs_grad(1)) {
    ctx.set(out, 1, sum_to(g[0], ctx.input_sizes(1)).to(ctx.input_device(1), ctx.input_dtype(1)));
  }
  return out;
}

ANATOMY_VIEW_FORMULA(view_backward, g[0].reshape(ctx.input_sizes(0)))
ANATOMY_VIEW_FORMULA(transpose_backward, g[0].transpose(ctx.arg<int64_t>(1), ctx.arg<int64_t>(2)))
ANATOMY_VIEW_FORMULA(permute_backward, g[0].permute(inverse_permutation(ctx.arg<std::vector<int64_t>>(1))))
ANATOMY_VIEW_FORMULA(expand_backward, sum_to(g[0], ctx.input_sizes(0)))
ANATOMY_VIEW_FORMULA(unsqueeze_backward_f, unsqueeze_backward(ctx, g[0]))
ANATOMY_VIEW_FORMULA(squeeze_backward, g[0].reshape(ctx.input_sizes(0)))
ANATOMY_VIEW_FORMULA(select_backward_f, select_backward(ctx, g[0]))
ANATOMY_VIEW_FORMULA(slice_backward_f, slice_backward(ctx, g[0]))
ANATOMY_VIEW_FORMULA(clone_backward, g[0])
ANATOMY_VIEW_FORMULA(to_copy_backward, g[0].to(ctx.input_device(0), ctx.input_dtype(0)))
ANATOMY_VIEW_FORMULA(pad_backward_f, pad_backward(ctx, g[0]))
ANATOMY_VIEW_FORMULA(diagonal_backward_f, diagonal_backward(ctx, g[0]))
ANATOMY_VIEW_FORMULA(unfold_backward_f, unfold_backward(ctx, g[0]))
ANATOMY_VIEW_FORMULA(fill_backward, zeros_like(g[0]))
#undef ANATOMY_VIEW_FORMULA

const DerivativeEntry kView{"aten::view", "ViewBackward0", 0, 0, &view_backward};
const DerivativeEntry kTranspose{"aten::transpose.int", "TransposeBackward0", 0, 0, &transpose_backward};
const DerivativeEntry kPermute{"aten::permute", "PermuteBackward0", 0, 0, &permute_backward};
const DerivativeEntry kExpand{"aten::expand", "ExpandBackward0", 0, 0, &expand_backward};
const DerivativeEntry kUnsqueeze{"aten::unsqueeze", "UnsqueezeBackward0", 0, 0, &unsqueeze_backward_f};
const DerivativeEntry kSqueeze{"aten::squeeze", "SqueezeBackward0", 0, 0, &squeeze_backward};
const DerivativeEntry kSqueezeDim{"aten::squeeze.dim", "SqueezeBackward1", 0, 0, &squeeze_backward};
const DerivativeEntry kSelect{"aten::select.int", "SelectBackward0", 0, 0, &select_backward_f};
const DerivativeEntry kSlice{"aten::slice.Tensor", "SliceBackward0", 0, 0, &slice_backward_f};
const DerivativeEntry kClone{"aten::clone", "CloneBackward0", 0, 0, &clone_backward};
const DerivativeEntry kToCopy{"aten::_to_copy", "ToCopyBackward0", 0, 0, &to_copy_backward};
const DerivativeEntry kDiagonal{"aten::diagonal", "DiagonalBackward0", 0, 0, &diagonal_backward_f};
const DerivativeEntry kUnfold{"aten::unfold", "UnfoldBackward0", 0, 0, &unfold_backward_f};
const DerivativeEntry kCopy{"aten::copy_", "CopyBackwards", 0, 0, &copy_backward};
const DerivativeEntry kFill{"aten::fill_.Scalar", "FillBackward0", 0, 0, &fill_backward};
// The random fills overwrite every element as fill_ does: the old values get a zero gradient.
const DerivativeEntry kUniform{"aten::uniform_", "UniformBackward0", 0, 0, &fill_backward};
const DerivativeEntry kNormal{"aten::normal_", "NormalBackward0", 0, 0, &fill_backward};
const DerivativeEntry kRandom{"aten::random_.from", "RandomBackward1", 0, 0, &fill_backward};
const DerivativeEntry kPad{"aten::constant_pad_nd", "ConstantPadNdBackward0", 0, 0, &pad_backward_f};

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Autograd, m) {
  using ListSig = Tensor(const Tensor&, IntArrayRef);
  register_view_derivative<&kView, ListSig>(m, "view");
  register_view_derivative<&kTranspose, Tensor(const Tensor&, int64_t, int64_t)>(m, "transpose.int");
  register_view_derivative<&kPermute, ListSig>(m, "permute");
  register_view_derivative<&kExpand, ListSig>(m, "expand");
  register_view_derivative<&kUnsqueeze, Tensor(const Tensor&, int64_t)>(m, "unsqueeze");
  register_view_derivative<&kSqueeze, Tensor(const Tensor&)>(m, "squeeze");
  register_view_derivative<&kSqueezeDim, Tensor(const Tensor&, int64_t)>(m, "squeeze.dim");
  register_view_derivative<&kSelect, Tensor(const Tensor&, int64_t, int64_t)>(m, "select.int");
  register_view_derivative<&kSlice, Tensor(const Tensor&, int64_t, OptInt, OptInt, int64_t)>(m, "slice.Tensor");
  register_view_derivative<&kDiagonal, Tensor(const Tensor&, int64_t, int64_t, int64_t)>(m, "diagonal");
  register_view_derivative<&kUnfold, Tensor(const Tensor&, int64_t, int64_t, int64_t)>(m, "unfold");
  register_derivative<&kCopy, Tensor(const Tensor&, const Tensor&, bool)>(m, "copy_");
  register_derivative<&kFill, Tensor(const Tensor&, const Scalar&)>(m, "fill_.Scalar");
  register_derivative<&kUniform, Tensor(const Tensor&, double, double)>(m, "uniform_");
  register_derivative<&kNormal, Tensor(const Tensor&, double, double)>(m, "normal_");
  register_derivative<&kRandom, Tensor(const Tensor&, int64_t, std::optional<int64_t>)>(m, "random_.from");
  register_derivative<&kClone, Tensor(const Tensor&, std::optional<MemoryFormat>)>(m, "clone");
  register_derivative<&kToCopy, Tensor(const Tensor&, std::optional<DType>, std::optional<Device>, bool,
                                       std::optional<MemoryFormat>)>(m, "_to_copy");
  register_derivative<&kPad, Tensor(const Tensor&, IntArrayRef, const Scalar&)>(m, "constant_pad_nd");
}

}  // namespace anatomy::autograd
