// Derivatives of the reductions: sum, mean, prod, amax/amin, max/min (all elements and along a
// dim), var, std, norm and logsumexp. PyTorch's formulas (derivatives.yaml), written
// with public operators and without host synchronization, so they differentiate again and
// queue on the device like the forward.
#include <cmath>

#include "anatomy/autograd/derivative.h"
#include "anatomy/autograd/formula_helpers.h"

namespace anatomy::autograd {
namespace {

using DTypeSig = Tensor(const Tensor&, std::optional<DType>);
using DimDTypeSig = Tensor(const Tensor&, OptionalIntArrayRef, bool, std::optional<DType>);
using DimSig = Tensor(const Tensor&, OptionalIntArrayRef, bool);
using SelfSig = Tensor(const Tensor&);
using ExtremeDimSig = std::tuple<Tensor, Tensor>(const Tensor&, int64_t, bool);
using VarSig = Tensor(const Tensor&, OptionalIntArrayRef, double, bool);
using NormSig = Tensor(const Tensor&, const Scalar&, OptionalIntArrayRef, bool);

Tensor to_input_dtype(const BackwardContext& ctx, const Tensor& g) {
  return g.dtype() == ctx.input_dtype(0) ? g : g.to(ctx.input_dtype(0));
}

// A reduced tensor (gradient or result) brought back to the input's rank, not expanded:
// broadcasting does the rest.
Tensor keep_dims(const Tensor& t, IntArrayRef sizes, OptionalIntArrayRef dims, bool keepdim) {
  Tensor out = t;
  if (!keepdim) {
    for (int64_t d : reduced_dims(dims, static_cast<int64_t>(sizes.size()))) out = out.unsqueeze(d);
  }
  return out;
}

int64_t reduced_count(IntArrayRef sizes, OptionalIntArrayRef dims) {
  int64_t n = 1;
  for (int64_t d : reduced_dims(dims, static_cast<int64_t>(sizes.size()))) n *= sizes[d];
  return n;
}

// ---- prod ----
// Note [prod backward with zeros]
// d prod / d x_i is the product of the other elements. PyTorch divides the result by x_i when
// no element is zero and otherwise switches, after a host sync, to exclusive cumulative
// products. Here the zeros are counted per reduced slice instead, with no sync:
// - no zero: prod(others) = p / x_i, p the product of the slice;
// - one zero: only the zero's gradient is nonzero, the product p1 of the nonzero elements;
// - two zeros: all gradients are zero.
// zsum (the sum of the slice's zero elements, always 0) multiplies the cases whose value is
// zero only because a zero element is left in: it keeps their derivative with respect to that
// zero exact, so double backward is right at zeros too.
Tensor prod_grad(const Tensor& grad, const Tensor& x, OptionalIntArrayRef dims, bool keepdim) {
  const Tensor zero = x == 0;
  const Tensor x1 = where(zero, Scalar(1), x);
  const Tensor p1 = x1.prod(dims, true);
  const Tensor zero_count = zero.sum(dims, true);
  const Tensor zsum = where(zero, x, Scalar(0)).sum(dims, true);
  const Tensor others = p1 / x1;
  const Tensor nonzero_grad = where(zero_count == 0, others, where(zero_count == 1, zsum * others, Scalar(0)));
  const Tensor zero_grad = where(zero_count == 1, p1, where(zero_count == 2, (zsum - x) * p1, Scalar(0)));
  return keep_dims(grad, x.sizes(), dims, keepdim) * where(zero, zero_grad, nonzero_grad);
}

variable_list sum_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  ctx.set(out, 0, to_input_dtype(ctx, g[0].expand(ctx.input_sizes(0))));
  return out;
}
variable_list sum_dim_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const OptionalIntArrayRef dims = dims_arg(ctx, 1);
  ctx.set(out, 0, to_input_dtype(ctx, unreduce(g[0], ctx.input_sizes(0), dims, ctx.arg<bool>(2))));
  return out;
}
variable_list mean_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const double n = static_cast<double>(std::max<int64_t>(reduced_count(ctx.input_sizes(0), std::nullopt), 1));
  ctx.set(out, 0, to_input_dtype(ctx, (g[0] / n).expand(ctx.input_sizes(0))));
  return out;
}
variable_list mean_dim_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const OptionalIntArrayRef dims = dims_arg(ctx, 1);
  const double n = static_cast<double>(std::max<int64_t>(reduced_count(ctx.input_sizes(0), dims), 1));
  ctx.set(out, 0, to_input_dtype(ctx, unreduce(g[0] / n, ctx.input_sizes(0), dims, ctx.arg<bool>(2))));
  return out;
}

variable_list prod_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  ctx.set(out, 0, to_input_dtype(ctx, prod_grad(g[0], ctx.input(0), std::nullopt, false)));
  return out;
}
variable_list prod_dim_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const OptionalIntArrayRef dims = dims_arg(ctx, 1);
  ctx.set(out, 0, to_input_dtype(ctx, prod_grad(g[0], ctx.input(0), dims, ctx.arg<bool>(2))));
  return out;
}

// ---- amax, amin, max, min ----
// The gradient is split evenly among the elements equal to the result (PyTorch's
// scale_grad_by_count and evenly_distribute_backward).
Tensor split_among_ties(const Tensor& grad, const Tensor& x, const Tensor& result, OptionalIntArrayRef dims,
                        bool keepdim) {
  const Tensor r = keep_dims(result, x.sizes(), dims, keepdim);
  const Tensor mask = logical_or(x == r, logical_and(x.isnan(), r.isnan()));
  const Tensor count = mask.sum(dims, true);
  return keep_dims(grad, x.sizes(), dims, keepdim) / count * mask.to(grad.dtype());
}
variable_list amax_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const OptionalIntArrayRef dims = dims_arg(ctx, 1);
  ctx.set(out, 0, split_among_ties(g[0], ctx.input(0), ctx.output(0), dims, ctx.arg<bool>(2)));
  return out;
}
variable_list extreme_all_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  ctx.set(out, 0, split_among_ties(g[0], ctx.input(0), ctx.output(0), std::nullopt, false));
  return out;
}
// max.dim / min.dim: the values' gradient goes to the element the index names.
variable_list extreme_dim_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const IntArrayRef sizes = ctx.input_sizes(0);
  const int64_t ndim = static_cast<int64_t>(sizes.size());
  if (ndim == 0) {
    ctx.set(out, 0, g[0]);
    return out;
  }
  const int64_t dim = wrap_dim(ctx.arg<int64_t>(1), ndim, "max.dim backward");
  const bool keepdim = ctx.arg<bool>(2);
  const Tensor index = keepdim ? ctx.output(1) : ctx.output(1).unsqueeze(dim);
  std::vector<int64_t> position_shape(ndim, 1);
  position_shape[dim] = sizes[dim];
  const Tensor positions = arange(sizes[dim], TensorOptions().dtype(DType::Int64).device(index.device()));
  const Tensor chosen = positions.view(position_shape) == index;
  const Tensor grad = keepdim ? g[0] : g[0].unsqueeze(dim);
  ctx.set(out, 0, (grad * chosen.to(grad.dtype())).expand(sizes));
  return out;
}

// ---- var, std ----
Tensor var_grad(const Tensor& grad, const Tensor& x, OptionalIntArrayRef dims, double correction, bool keepdim) {
  const double n = static_cast<double>(reduced_count(x.sizes(), dims));
  const Tensor g = keep_dims(grad, x.sizes(), dims, keepdim);
  return g * (x - x.mean(dims, true)) * (2.0 / (n - correction));
}
variable_list var_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const OptionalIntArrayRef dims = dims_arg(ctx, 1);
  ctx.set(out, 0, var_grad(g[0], ctx.input(0), dims, ctx.arg<double>(2), ctx.arg<bool>(3)));
  return out;
}
// std = sqrt(var): the var gradient of grad / (2 std), zero where std is zero.
variable_list std_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const OptionalIntArrayRef dims = dims_arg(ctx, 1);
  const Tensor result = ctx.output(0);
  // The denominator is made safe before dividing, so that double backward sees no 0 * inf.
  const Tensor zero = result == 0;
  const Tensor grad_var = (g[0] / (result * 2).masked_fill(zero, 1)).masked_fill(zero, 0);
  ctx.set(out, 0, var_grad(grad_var, ctx.input(0), dims, ctx.arg<double>(2), ctx.arg<bool>(3)));
  return out;
}

// ---- norm ----
// PyTorch's norm_backward: p = 1, 2, +-inf and the general p, each zero where the norm is.
variable_list norm_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor x = ctx.input(0);
  const double p = ctx.arg<Scalar>(1).to_double();
  const OptionalIntArrayRef dims = dims_arg(ctx, 2);
  const bool keepdim = ctx.arg<bool>(3);
  const Tensor grad = keep_dims(g[0], x.sizes(), dims, keepdim);
  const Tensor norm = keep_dims(ctx.output(0), x.sizes(), dims, keepdim);
  Tensor gx;
  if (p == 0) {
    gx = zeros_like(x);
  } else if (p == 1) {
    gx = x.sign() * grad;
  } else if (p == 2) {
    gx = grad * (x / norm).masked_fill(norm == 0, 0);
  } else if (std::isinf(p)) {
    const Tensor mask = x.abs() == norm;
    gx = x.sign() * (grad / mask.sum(dims, true) * mask.to(grad.dtype()));
  } else if (p < 2) {
    gx = (x.sign() * x.abs().pow(p - 1) * grad * norm.pow(1 - p)).masked_fill(norm == 0, 0);
  } else {
    gx = (x * x.abs().pow(p - 2) * grad / norm.pow(p - 1)).masked_fill(norm == 0, 0);
  }
  ctx.set(out, 0, gx);
  return out;
}

// ---- logsumexp ----
variable_list logsumexp_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor x = ctx.input(0);
  const OptionalIntArrayRef dims = dims_arg(ctx, 1);
  const bool keepdim = ctx.arg<bool>(2);
  const Tensor result = keep_dims(ctx.output(0), x.sizes(), dims, keepdim);
  ctx.set(out, 0, to_input_dtype(ctx, keep_dims(g[0], x.sizes(), dims, keepdim) * (x - result).exp()));
  return out;
}

constexpr uint32_t kSelf = args_mask({0});
constexpr uint32_t kResult = args_mask({0});  // output 0

const DerivativeEntry kSum{"aten::sum", "SumBackward0", 0, 0, &sum_backward};
const DerivativeEntry kSumDim{"aten::sum.dim_IntList", "SumBackward1", 0, 0, &sum_dim_backward};
const DerivativeEntry kMean{"aten::mean", "MeanBackward0", 0, 0, &mean_backward};
const DerivativeEntry kMeanDim{"aten::mean.dim", "MeanBackward1", 0, 0, &mean_dim_backward};
const DerivativeEntry kProd{"aten::prod", "ProdBackward0", kSelf, 0, &prod_backward};
const DerivativeEntry kProdDim{"aten::prod.dim_IntList", "ProdBackward1", kSelf, 0, &prod_dim_backward};
const DerivativeEntry kAmax{"aten::amax", "AmaxBackward0", kSelf, kResult, &amax_backward};
const DerivativeEntry kAmin{"aten::amin", "AminBackward0", kSelf, kResult, &amax_backward};
const DerivativeEntry kMax{"aten::max", "MaxBackward1", kSelf, kResult, &extreme_all_backward};
const DerivativeEntry kMin{"aten::min", "MinBackward1", kSelf, kResult, &extreme_all_backward};
// Output 1, the indices, is saved (it gets no history of its own).
const DerivativeEntry kMaxDim{"aten::max.dim", "MaxBackward0", 0, args_mask({1}), &extreme_dim_backward};
const DerivativeEntry kMinDim{"aten::min.dim", "MinBackward0", 0, args_mask({1}), &extreme_dim_backward};
const DerivativeEntry kVar{"aten::var.correction", "VarBackward0", kSelf, 0, &var_backward};
const DerivativeEntry kStd{"aten::std.correction", "StdBackward0", kSelf, kResult, &std_backward};
const DerivativeEntry kNorm{"aten::norm.ScalarOpt_dim", "NormBackward1", kSelf, kResult, &norm_backward};
const DerivativeEntry kLogsumexp{"aten::logsumexp", "LogsumexpBackward0", kSelf, kResult, &logsumexp_backward};

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Autograd, m) {
  register_derivative<&kSum, DTypeSig>(m, "sum");
  register_derivative<&kSumDim, DimDTypeSig>(m, "sum.dim_IntList");
  register_derivative<&kMean, DTypeSig>(m, "mean");
  register_derivative<&kMeanDim, DimDTypeSig>(m, "mean.dim");
  register_derivative<&kProd, DTypeSig>(m, "prod");
  register_derivative<&kProdDim, DimDTypeSig>(m, "prod.dim_IntList");
  register_derivative<&kAmax, DimSig>(m, "amax");
  register_derivative<&kAmin, DimSig>(m, "amin");
  register_derivative<&kMax, SelfSig>(m, "max");
  register_derivative<&kMin, SelfSig>(m, "min");
  register_derivative<&kMaxDim, ExtremeDimSig>(m, "max.dim");
  register_derivative<&kMinDim, ExtremeDimSig>(m, "min.dim");
  register_derivative<&kVar, VarSig>(m, "var.correction");
  register_derivative<&kStd, VarSig>(m, "std.correction");
  register_derivative<&kNorm, NormSig>(m, "norm.ScalarOpt_dim");
  register_derivative<&kLogsumexp, DimSig>(m, "logsumexp");
}

}  // namespace anatomy::autograd
