// Derivatives of the reordering operators (repeat, flip, roll, tril, triu), the value-selecting
// sorts (sort, topk: the values' gradient goes back to where the indices say they came from),
// the scans (cumsum, cumprod, cummax, cummin, logcumsumexp), split_with_sizes (split and chunk are composites of it)
// and as_strided.
#include <algorithm>
#include <limits>

#include "anatomy/autograd/derivative.h"
#include "anatomy/autograd/formula_helpers.h"
#include "anatomy/core/dtype_visit.h"

namespace anatomy::autograd {
namespace {

using SortSig = std::tuple<Tensor, Tensor>(const Tensor&, int64_t, bool);
using TopkSig = std::tuple<Tensor, Tensor>(const Tensor&, int64_t, int64_t, bool, bool);
using ScanSig = Tensor(const Tensor&, int64_t, std::optional<DType>);
using CumExtremumSig = std::tuple<Tensor, Tensor>(const Tensor&, int64_t);

Tensor to_input_dtype(const BackwardContext& ctx, const Tensor& g) {
  return g.dtype() == ctx.input_dtype(0) ? g : g.to(ctx.input_dtype(0));
}

// repeat(self, repeats): the result viewed as (repeats[i], size[i]) pairs (self left-padded
// with size-1 dims); each input element's gradient is the sum over its copies.
variable_list repeat_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const IntArrayRef sizes = ctx.input_sizes(0);
  const auto& repeats = ctx.arg<std::vector<int64_t>>(1);
  const int64_t lead = static_cast<int64_t>(repeats.size() - sizes.size());
  std::vector<int64_t> pairs, copies;
  for (int64_t i = 0; i < static_cast<int64_t>(repeats.size()); ++i) {
    pairs.push_back(repeats[i]);
    pairs.push_back(i < lead ? 1 : sizes[i - lead]);
    copies.push_back(2 * i);
  }
  // No repeated dim: the gradient itself, without a sum over no dims that would copy it.
  ctx.set(out, 0, copies.empty() ? g[0].reshape(sizes) : g[0].reshape(pairs).sum(copies).reshape(sizes));
  return out;
}

variable_list flip_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  ctx.set(out, 0, g[0].flip(ctx.arg<std::vector<int64_t>>(1)));
  return out;
}

variable_list roll_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  // Each shift undone modulo its extent first: -INT64_MIN does not exist.
  std::vector<int64_t> back = ctx.arg<std::vector<int64_t>>(1);
  const std::vector<int64_t> dims = ctx.arg<std::vector<int64_t>>(2);
  const IntArrayRef sizes = ctx.input_sizes(0);
  for (size_t i = 0; i < back.size(); ++i) {
    int64_t n = 1;
    if (dims.empty()) {
      for (int64_t s : sizes) n *= s;  // the input exists, so its element count fits
    } else {
      n = sizes[wrap_dim(dims[i], static_cast<int64_t>(sizes.size()), "roll")];
    }
    back[i] = n == 0 ? 0 : -(back[i] % n);
  }
  ctx.set(out, 0, g[0].roll(back, dims));
  return out;
}

variable_list tril_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  ctx.set(out, 0, g[0].tril(ctx.arg<int64_t>(1)));
  return out;
}
variable_list triu_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  ctx.set(out, 0, g[0].triu(ctx.arg<int64_t>(1)));
  return out;
}

// The gradient of values taken from self along dim at `indices` (PyTorch's
// value_selecting_reduction_backward): zeros with the gradient scattered to those places.
Tensor value_selecting_backward(const Tensor& g, int64_t dim, const Tensor& indices, IntArrayRef sizes) {
  if (sizes.empty()) return g;  // a 0-dim self is its own only value
  return scatter(zeros(sizes, g.options()), dim, indices, g);
}
variable_list sort_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  ctx.set(out, 0, value_selecting_backward(g[0], ctx.arg<int64_t>(1), ctx.output(1), ctx.input_sizes(0)));
  return out;
}
variable_list topk_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  ctx.set(out, 0, value_selecting_backward(g[0], ctx.arg<int64_t>(2), ctx.output(1), ctx.input_sizes(0)));
  return out;
}

// Sums from the end of `dim` back to each position.
Tensor reversed_cumsum(const Tensor& t, int64_t dim) { return t.flip({dim}).cumsum(dim).flip({dim}); }

variable_list cumsum_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const IntArrayRef sizes = ctx.input_sizes(0);
  if (sizes.empty()) {
    ctx.set(out, 0, to_input_dtype(ctx, g[0]));
    return out;
  }
  const int64_t dim = wrap_dim(ctx.arg<int64_t>(1), static_cast<int64_t>(sizes.size()), "cumsum");
  ctx.set(out, 0, to_input_dtype(ctx, reversed_cumsum(g[0], dim)));
  return out;
}

// cumprod with zeros in the input: d out[j] / d x[k] = prod(x[i] for i <= j, i != k) for j >= k.
// Row k of a [..., n, n] tensor holds x with x[k] replaced by 1; its cumprod gives those
// products, and the upper triangle (j >= k) weighs them with the gradient. O(n) times the
// input's size, and written with differentiable operators.
Tensor cumprod_backward_with_zeros(const Tensor& x, const Tensor& g, int64_t dim) {
  const int64_t n = x.sizes()[dim];
  const Tensor xt = x.transpose(dim, -1).unsqueeze(-2);  // [..., 1, n]
  const Tensor gt = g.transpose(dim, -1).unsqueeze(-2);
  const Tensor diag = eye(n, std::nullopt, g.options());
  const Tensor rows = xt * (1 - diag) + diag;  // [..., k, j]: x[j], 1 where j == k
  const Tensor upper = ones({n, n}, g.options()).triu();
  const Tensor grad = (rows.cumprod(-1) * upper * gt).sum({-1});  // [..., k]
  return grad.transpose(dim, -1);
}

// PyTorch's cumprod_backward: without zeros, the reversed cumsum of out * grad divided by the
// input; with zeros, the products that leave each element out.
variable_list cumprod_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor x = ctx.input(0);
  if (x.dim() == 0 || x.numel() <= 1) {
    ctx.set(out, 0, to_input_dtype(ctx, g[0]));
    return out;
  }
  const int64_t dim = wrap_dim(ctx.arg<int64_t>(1), x.dim(), "cumprod");
  if (x.sizes()[dim] == 1) {
    ctx.set(out, 0, to_input_dtype(ctx, g[0]));
    return out;
  }
  const Tensor xg = x.to(g[0].dtype());
  const bool has_zero = (xg == 0).any().item<bool>();
  const Tensor grad =
      has_zero ? cumprod_backward_with_zeros(xg, g[0], dim) : reversed_cumsum(ctx.output(0) * g[0], dim) / xg;
  ctx.set(out, 0, to_input_dtype(ctx, grad));
  return out;
}

// PyTorch's cummaxmin_backward: each output's gradient goes to the element it was taken from,
// added up where one element is the running extremum of several positions.
variable_list cum_extremum_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const IntArrayRef sizes = ctx.input_sizes(0);
  if (sizes.empty()) {
    ctx.set(out, 0, g[0]);  // a 0-dim self is its own only value
    return out;
  }
  const int64_t dim = wrap_dim(ctx.arg<int64_t>(1), static_cast<int64_t>(sizes.size()), "cummax");
  ctx.set(out, 0, zeros(sizes, g[0].options()).scatter_add(dim, ctx.output(1), g[0]));
  return out;
}

// Runs from the end of `dim` back to each position.
Tensor reversed_logcumsumexp(const Tensor& t, int64_t dim) { return t.flip({dim}).logcumsumexp(dim).flip({dim}); }

// PyTorch's logcumsumexp_backward: grad_self[k] = sum over j >= k of grad[j] * exp(self[k] -
// out[j]), computed in log space for the positive and the negative gradients apart so nothing
// overflows. A zero gradient takes the dtype's lowest finite value as its log rather than -inf,
// which keeps -inf - -inf (NaN) out of the reversed scan. Differentiable operators throughout.
variable_list logcumsumexp_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor self = ctx.input(0);
  const Tensor& grad = g[0];
  if (self.numel() == 0) {
    ctx.set(out, 0, grad);
    return out;
  }
  const int64_t dim = self.dim() == 0 ? 0 : wrap_dim(ctx.arg<int64_t>(1), self.dim(), "logcumsumexp");
  const double lowest = visit_dtype(grad.dtype(), "logcumsumexp",
                                    [&]<typename T>() { return convert<double>(std::numeric_limits<T>::lowest()); });
  const Tensor grad_min = full({}, lowest, grad.options());
  const Tensor log_abs_grad = grad.abs().log();
  const Tensor log_grad_positive = where(grad > 0, log_abs_grad, grad_min);
  const Tensor log_grad_negative = where(grad < 0, log_abs_grad, grad_min);
  const Tensor result = ctx.output(0);
  const Tensor output_pos = (reversed_logcumsumexp(log_grad_positive - result, dim) + self).exp();
  const Tensor output_neg = (reversed_logcumsumexp(log_grad_negative - result, dim) + self).exp();
  ctx.set(out, 0, output_pos - output_neg);
  return out;
}

// split_with_sizes: the pieces' gradients joined back (pieces without one arrive as zeros).
variable_list split_with_sizes_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const IntArrayRef sizes = ctx.input_sizes(0);
  const int64_t dim = wrap_dim(ctx.arg<int64_t>(2), static_cast<int64_t>(sizes.size()), "split_with_sizes");
  ctx.set(out, 0,
          g.empty() ? zeros(sizes, TensorOptions().dtype(ctx.input_dtype(0)).device(ctx.input_device(0)))
                    : cat(g, dim).reshape(sizes));
  return out;
}

// PyTorch's as_strided_backward, on the input's geometry (formula_helpers.h).
variable_list as_strided_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor self = ctx.input(0);
  const auto& size = ctx.arg<std::vector<int64_t>>(1);
  const auto& stride = ctx.arg<std::vector<int64_t>>(2);
  const int64_t out_offset = ctx.is_none(3) ? self.storage_offset() : ctx.arg<int64_t>(3);
  ctx.set(out, 0,
          as_strided_grad(g[0], Geometry::of(self), Geometry{IntArrayRef(size), IntArrayRef(stride), out_offset}));
  return out;
}

const DerivativeEntry kRepeat{"aten::repeat", "RepeatBackward0", 0, 0, &repeat_backward};
const DerivativeEntry kFlip{"aten::flip", "FlipBackward0", 0, 0, &flip_backward};
const DerivativeEntry kRoll{"aten::roll", "RollBackward0", 0, 0, &roll_backward};
const DerivativeEntry kTril{"aten::tril", "TrilBackward0", 0, 0, &tril_backward};
const DerivativeEntry kTriu{"aten::triu", "TriuBackward0", 0, 0, &triu_backward};
constexpr uint32_t kIndicesOutput = args_mask({1});  // output 1
const DerivativeEntry kSort{"aten::sort", "SortBackward0", 0, kIndicesOutput, &sort_backward};
const DerivativeEntry kTopk{"aten::topk", "TopkBackward0", 0, kIndicesOutput, &topk_backward};
const DerivativeEntry kCumsum{"aten::cumsum", "CumsumBackward0", 0, 0, &cumsum_backward};
const DerivativeEntry kCumprod{"aten::cumprod", "CumprodBackward0", args_mask({0}), args_mask({0}), &cumprod_backward};
const DerivativeEntry kCummax{"aten::cummax", "CummaxBackward0", 0, kIndicesOutput, &cum_extremum_backward};
const DerivativeEntry kCummin{"aten::cummin", "CumminBackward0", 0, kIndicesOutput, &cum_extremum_backward};
const DerivativeEntry kLogcumsumexp{"aten::logcumsumexp", "LogcumsumexpBackward0", args_mask({0}), args_mask({0}),
                                    &logcumsumexp_backward};
const DerivativeEntry kSplitWithSizes{"aten::split_with_sizes", "SplitWithSizesBackward0", 0, 0,
                                      &split_with_sizes_backward};
const DerivativeEntry kAsStrided{"aten::as_strided", "AsStridedBackward0", args_mask({0}), 0, &as_strided_backward};

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Autograd, m) {
  using ListSig = Tensor(const Tensor&, IntArrayRef);
  using DiagSig = Tensor(const Tensor&, int64_t);
  register_derivative<&kRepeat, ListSig>(m, "repeat");
  register_derivative<&kFlip, ListSig>(m, "flip");
  register_derivative<&kRoll, Tensor(const Tensor&, IntArrayRef, IntArrayRef)>(m, "roll");
  register_derivative<&kTril, DiagSig>(m, "tril");
  register_derivative<&kTriu, DiagSig>(m, "triu");
  register_derivative<&kSort, SortSig>(m, "sort");
  register_derivative<&kTopk, TopkSig>(m, "topk");
  register_derivative<&kCumsum, ScanSig>(m, "cumsum");
  register_derivative<&kCumprod, ScanSig>(m, "cumprod");
  register_derivative<&kCummax, CumExtremumSig>(m, "cummax");
  register_derivative<&kCummin, CumExtremumSig>(m, "cummin");
  register_derivative<&kLogcumsumexp, DiagSig>(m, "logcumsumexp");
  register_view_derivative<&kSplitWithSizes, std::vector<Tensor>(const Tensor&, IntArrayRef, int64_t)>(
      m, "split_with_sizes");
  register_view_derivative<&kAsStrided, Tensor(const Tensor&, IntArrayRef, IntArrayRef, std::optional<int64_t>)>(
      m, "as_strided");
}

}  // namespace anatomy::autograd
