// Formula helpers (see formula_helpers.h).
#include "anatomy/autograd/formula_helpers.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "anatomy/autograd/grad_mode.h"

namespace anatomy::autograd {

Tensor sum_to(const Tensor& grad, IntArrayRef sizes) {
  if (grad.sizes() == sizes) return grad;
  const int64_t lead = grad.dim() - static_cast<int64_t>(sizes.size());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < grad.dim(); ++d) {
    if (d < lead || (sizes[d - lead] == 1 && grad.sizes()[d] != 1)) dims.push_back(d);
  }
  // Nothing to reduce (no broadcast): the gradient itself, without a sum that would copy it.
  if (dims.empty()) return grad.reshape(sizes);
  return grad.sum(dims, /*keepdim=*/true).reshape(sizes);
}

Tensor grad_for_input(const BackwardContext& ctx, int arg, const Tensor& grad, int k) {
  Tensor g = sum_to(grad, ctx.input_sizes(arg, k));
  return g.dtype() == ctx.input_dtype(arg, k) ? g : g.to(ctx.input_dtype(arg, k));
}

std::vector<int64_t> reduced_dims(OptionalIntArrayRef dims, int64_t ndim) {
  std::vector<int64_t> out;
  if (ndim == 0) {  // dim 0 or -1 of a 0-dim tensor names the tensor itself: nothing to reduce
    if (dims) {
      for (int64_t d : *dims) wrap_dim(d, ndim, "backward");
    }
    return out;
  }
  if (!dims) {
    for (int64_t d = 0; d < ndim; ++d) out.push_back(d);
    return out;
  }
  for (int64_t d : *dims) out.push_back(wrap_dim(d, ndim, "backward"));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

OptionalIntArrayRef dims_arg(const BackwardContext& ctx, int i) {
  if (ctx.is_none(i)) return std::nullopt;
  return ctx.arg<std::vector<int64_t>>(i);
}

Tensor unreduce(const Tensor& grad, IntArrayRef sizes, OptionalIntArrayRef dims, bool keepdim) {
  Tensor g = grad;
  if (!keepdim && static_cast<int64_t>(sizes.size()) > 0) {
    for (int64_t d : reduced_dims(dims, static_cast<int64_t>(sizes.size()))) g = g.unsqueeze(d);
  }
  return g.expand(sizes);
}

namespace {

// Whether some two elements of a geometry may share a place in memory: walking the dims (of
// size > 1) by increasing stride, each stride must pass the reach of the dims before it.
bool maybe_overlapping(IntArrayRef sizes, IntArrayRef strides) {
  for (int64_t s : sizes) {
    if (s == 0) return false;  // no elements; and the reach of huge strides is never summed
  }
  std::vector<size_t> order(sizes.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return strides[a] < strides[b]; });
  int64_t reach = 0;
  for (size_t i : order) {
    if (sizes[i] == 1) continue;
    if (strides[i] <= reach) return true;
    reach += strides[i] * (sizes[i] - 1);
  }
  return false;
}

// The storage a geometry needs, from its offset on. An empty geometry needs none, whatever its
// strides (looked at first: a huge stride beside a zero size must not be multiplied).
int64_t min_storage_size(IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  for (int64_t s : sizes) {
    if (s == 0) return offset;
  }
  int64_t size = offset + 1;
  for (size_t i = 0; i < sizes.size(); ++i) size += (sizes[i] - 1) * strides[i];
  return size;
}

}  // namespace

Tensor as_strided_grad(const Tensor& grad, const Geometry& in, const Geometry& out) {
  ANATOMY_CHECK(!maybe_overlapping(in.sizes, in.strides), NotImplementedError,
                "as_strided: the derivative for an input whose elements overlap in memory (sizes [{}], strides [{}]) "
                "is not implemented",
                fmt::join(in.sizes, ", "), fmt::join(in.strides, ", "));
  const int64_t shared = std::min(in.offset, out.offset);
  const int64_t in_eff = in.offset - shared, out_eff = out.offset - shared;
  const int64_t base =
      std::max(min_storage_size(in.sizes, in.strides, in_eff), min_storage_size(out.sizes, out.strides, out_eff));
  const Tensor positions =
      arange(base, TensorOptions().dtype(DType::Int64)).as_strided(out.sizes, out.strides, out_eff);
  const Tensor storage = index_put(zeros({base}, grad.options()), {positions.reshape({-1})}, grad.reshape({-1}), true);
  return storage.as_strided(in.sizes, in.strides, in_eff);
}

Tensor gelu_grad(const Tensor& grad, const Tensor& x, std::string_view approximate) {
  if (!GradMode::is_enabled()) return gelu_backward(grad, x, approximate);
  if (approximate != "tanh") {
    constexpr double kInvSqrt2 = 0.70710678118654752440;
    constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // the standard normal pdf at 0
    const Tensor cdf = ((x * kInvSqrt2).erf() + 1) * 0.5;
    const Tensor pdf = (x * x * -0.5).exp() * kInvSqrt2Pi;
    return grad * (cdf + x * pdf);
  }
  constexpr double kSqrt2OverPi = 0.79788456080286535588;
  constexpr double kGeluKappa = 0.044715;
  const Tensor x_sq = x * x;
  const Tensor t = ((x + x_sq * x * kGeluKappa) * kSqrt2OverPi).tanh();
  const Tensor left_derivative = (t + 1) * 0.5;
  const Tensor right_derivative = x * 0.5 * (1 - t * t) * kSqrt2OverPi * (x_sq * (3 * kGeluKappa) + 1);
  return grad * (left_derivative + right_derivative);
}

}  // namespace anatomy::autograd
