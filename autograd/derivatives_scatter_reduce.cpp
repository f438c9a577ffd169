// The derivative of scatter_reduce (functional and in-place), PyTorch's scatter_reduce_backward:
//   sum:        self's gradient is the gradient; src's is the gradient read at the indices;
//   mean:       both divided by the count of values each element averaged;
//   prod:       each factor's gradient is the gradient times the product of the other factors,
//               computed with the zeros masked out (a zero factor's gradient is the product of the
//               others, not 0 / 0);
//   amax, amin: the gradient is shared evenly among the values equal to the result.
// Without include_self, self's gradient is zero wherever a value was scattered (self's value did
// not take part there). src is read only where index reaches (index.size(d) <= src.size(d)): its
// gradient is computed over that part and zero beyond it.
#include "anatomy/autograd/derivative.h"
#include "anatomy/autograd/formula_helpers.h"

namespace anatomy::autograd {
namespace {

using ScatterReduceSig = Tensor(const Tensor&, int64_t, const Tensor&, const Tensor&, std::string_view, bool);

// src's leading block of index's shape (the part scatter_reduce reads), as a 1-dim tensor when
// index is 0-dim and src is not (gather treats a 0-dim index as one dim of size 1).
Tensor read_part(const Tensor& src, const Tensor& index) {
  if (src.dim() == 0) return src;
  Tensor part = src;
  for (int64_t d = 0; d < src.dim(); ++d) part = part.narrow(d, 0, index.dim() == 0 ? 1 : index.size(d));
  return part;
}

// The gradient of the part src read, zero-padded at the end of each dim up to src's shape.
Tensor pad_to_src(const Tensor& g, IntArrayRef src_sizes) {
  if (src_sizes.empty()) return g.reshape({});
  std::vector<int64_t> pad;
  bool any = false;
  for (int64_t d = static_cast<int64_t>(src_sizes.size()) - 1; d >= 0; --d) {
    pad.push_back(0);
    pad.push_back(src_sizes[d] - g.size(d));
    any = any || src_sizes[d] != g.size(d);
  }
  return any ? constant_pad_nd(g, pad, 0) : g;
}

variable_list scatter_reduce_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor& grad = g[0];
  const Tensor self = ctx.input(0), index = ctx.input(2), src = read_part(ctx.input(3), ctx.input(2));
  const Tensor result = ctx.output(0);
  const int64_t dim = ctx.arg<int64_t>(1);
  const std::string& reduce = ctx.arg<std::string>(4);
  const bool include_self = ctx.arg<bool>(5);
  // Reading index's positions of a tensor shaped like self (a 0-dim index reads one element).
  auto at_index = [&](const Tensor& t) {
    const Tensor read = gather(t, dim, index);
    if (src.dim() > 0) return read;
    return read.numel() == 0 ? zeros({}, read.options()) : read.reshape({});
  };
  Tensor grad_self, grad_src;
  if (reduce == "sum") {
    grad_self = grad;
    grad_src = at_index(grad);
  } else if (reduce == "mean") {
    const Tensor count = (include_self ? ones_like(grad) : zeros_like(grad)).scatter_add(dim, index, ones_like(src));
    const Tensor n = count.masked_fill(count.eq(0), 1);
    grad_self = grad / n;
    grad_src = at_index(grad) / at_index(n);
  } else if (reduce == "prod") {
    const Tensor masked_self = self.masked_fill(self.eq(0), 1);
    grad_self = grad * masked_self.scatter_reduce(dim, index, src, reduce, include_self) / masked_self;
    const Tensor src_zero = src.eq(0);
    const Tensor zeros_at = at_index(zeros_like(self).scatter_add(dim, index, src_zero.to(self.dtype())));
    const Tensor single_zero = logical_and(src_zero, zeros_at.eq(1));
    // A lone zero factor's gradient is the product of the others, computed with it set to 1.
    const Tensor others = self.scatter_reduce(dim, index, src.masked_fill(single_zero, 1), reduce, include_self);
    grad_src = where(single_zero, at_index(grad * others), at_index(grad * result) / src.masked_fill(src_zero, 1));
  } else {  // amax, amin
    const Tensor self_wins = self.eq(result).to(grad.dtype());
    const Tensor src_wins = src.eq(at_index(result)).to(grad.dtype());
    const Tensor share = grad / self_wins.scatter_add(dim, index, src_wins);
    grad_self = self_wins * share;
    grad_src = src_wins * at_index(share);
  }
  if (!include_self) grad_self = grad_self.scatter(dim, index, Scalar(0.0));
  if (ctx.needs_grad(0)) ctx.set(out, 0, grad_self);
  if (ctx.needs_grad(3)) ctx.set(out, 3, pad_to_src(grad_src, ctx.input_sizes(3)));
  return out;
}

const DerivativeEntry kScatterReduce{"aten::scatter_reduce.two", "ScatterReduceBackward0", args_mask({0, 2, 3}),
                                     args_mask({0}), &scatter_reduce_backward};
const DerivativeEntry kScatterReduce_{"aten::scatter_reduce_.two", "ScatterReduceBackward0", args_mask({0, 2, 3}),
                                      args_mask({0}), &scatter_reduce_backward};

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Autograd, m) {
  register_derivative<&kScatterReduce, ScatterReduceSig>(m, "scatter_reduce.two");
  register_derivative<&kScatterReduce_, ScatterReduceSig>(m, "scatter_reduce_.two");
}

}  // namespace anatomy::autograd
