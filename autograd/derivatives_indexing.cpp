// Derivatives of joining (cat, stack), reading by index (index_select, gather, take, embedding,
// advanced indexing, masked_select) and writing by index (scatter, scatter_add, index_put),
// functional and in-place. A read by index sends its gradient back with an accumulating
// index_put or scatter_add into zeros (repeated indices add up); a write by index passes the
// gradient through except where it wrote, and reads its source's gradient back at the indices.
// Index and mask arguments are integer or bool tensors: they get no gradient.
#include "anatomy/autograd/derivative.h"
#include "anatomy/autograd/formula_helpers.h"
#include "anatomy/core/shape_rules.h"

namespace anatomy::autograd {
namespace {

using ListSig = Tensor(TensorList, int64_t);
using DimIndexSig = Tensor(const Tensor&, int64_t, const Tensor&);
using ScatterSig = Tensor(const Tensor&, int64_t, const Tensor&, const Tensor&);
using ScatterValueSig = Tensor(const Tensor&, int64_t, const Tensor&, const Scalar&);
using PairSig = Tensor(const Tensor&, const Tensor&);
using IndexSig = Tensor(const Tensor&, TensorList);
using IndexPutSig = Tensor(const Tensor&, TensorList, const Tensor&, bool);

bool is_legacy_empty(IntArrayRef sizes) { return sizes.size() == 1 && sizes[0] == 0; }

// scatter reads src only at positions below index's sizes: src's gradient is the gradient read
// back at the indices (index's shape), zero-padded at the end of each dim up to src's shape.
// A 0-dim index or src stands for a 1-dim one of one element (PyTorch's ensure_nonempty_dim), so
// `read` is first given src's rank.
Tensor src_grad(BackwardContext& ctx, const Tensor& g, int64_t dim, const Tensor& index) {
  Tensor read = gather(g, dim, index);
  const IntArrayRef src_sizes = ctx.input_sizes(3);
  if (src_sizes.empty()) {
    return grad_for_input(ctx, 3, read.numel() == 0 ? zeros({}, g.options()) : read.reshape({}));
  }
  if (read.dim() == 0) read = read.reshape({1});
  std::vector<int64_t> pad;
  bool any = false;
  for (int64_t d = read.dim() - 1; d >= 0; --d) {
    pad.push_back(0);
    pad.push_back(src_sizes[d] - read.size(d));
    any = any || src_sizes[d] != read.size(d);
  }
  return grad_for_input(ctx, 3, any ? constant_pad_nd(read, pad, 0) : read);
}

// cat(tensors, dim): each input's gradient is its slice of the result's gradient. 1-D inputs of
// size 0 (skipped by cat whatever their shape) get an empty gradient.
variable_list cat_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  int64_t at = 0;
  for (int k = 0; k < ctx.list_size(0); ++k) {
    const IntArrayRef sizes = ctx.input_sizes(0, k);
    if (is_legacy_empty(sizes)) {
      if (ctx.needs_grad(0, k)) ctx.set(out, 0, zeros({0}, g[0].options().dtype(ctx.input_dtype(0, k))), k);
      continue;
    }
    const int64_t dim = wrap_dim(ctx.arg<int64_t>(1), static_cast<int64_t>(sizes.size()), "cat");
    if (ctx.needs_grad(0, k)) ctx.set(out, 0, grad_for_input(ctx, 0, g[0].narrow(dim, at, sizes[dim]), k), k);
    at += sizes[dim];
  }
  return out;
}

variable_list stack_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const int64_t dim = wrap_dim(ctx.arg<int64_t>(1), g[0].dim(), "stack");
  for (int k = 0; k < ctx.list_size(0); ++k) {
    if (ctx.needs_grad(0, k)) ctx.set(out, 0, grad_for_input(ctx, 0, g[0].select(dim, k), k), k);
  }
  return out;
}

// index_select(self, dim, index): the rows' gradients added back at their indices, as
// self[:, ..., index] += g (an accumulating index_put, so repeated indices add up).
variable_list index_select_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const IntArrayRef sizes = ctx.input_sizes(0);
  const Tensor index = ctx.input(2).reshape({-1});
  if (sizes.empty()) {  // a 0-dim self is read as one element
    ctx.set(out, 0, index_put(zeros({1}, g[0].options()), {index}, g[0].reshape({-1}), true).reshape({}));
    return out;
  }
  const int64_t dim = wrap_dim(ctx.arg<int64_t>(1), static_cast<int64_t>(sizes.size()), "index_select");
  std::vector<Tensor> indices(static_cast<size_t>(dim));  // undefined: full slices
  indices.push_back(index);
  ctx.set(out, 0, index_put(zeros(sizes, g[0].options()), indices, g[0], true));
  return out;
}

variable_list gather_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const int64_t dim = ctx.arg<int64_t>(1);
  // In place into the fresh zeros: the out-of-place scatter_add would copy them first.
  ctx.set(out, 0, zeros(ctx.input_sizes(0), g[0].options()).scatter_add_(dim, ctx.input(2), g[0]));
  return out;
}

// scatter(self, dim, index, src): self's gradient is zero where src was written; src's
// gradient is read back at the indices (distinct indices: one write per position).
variable_list scatter_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const int64_t dim = ctx.arg<int64_t>(1);
  const Tensor index = ctx.input(2);
  if (ctx.needs_grad(0)) ctx.set(out, 0, scatter(g[0], dim, index, Scalar(0.0)));
  if (ctx.needs_grad(3)) ctx.set(out, 3, src_grad(ctx, g[0], dim, index));
  return out;
}
variable_list scatter_value_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  ctx.set(out, 0, scatter(g[0], ctx.arg<int64_t>(1), ctx.input(2), Scalar(0.0)));
  return out;
}
variable_list scatter_add_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  if (ctx.needs_grad(0)) ctx.set(out, 0, g[0]);
  if (ctx.needs_grad(3)) ctx.set(out, 3, src_grad(ctx, g[0], ctx.arg<int64_t>(1), ctx.input(2)));
  return out;
}

// take(self, index) reads the flattened self.
variable_list take_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const IntArrayRef sizes = ctx.input_sizes(0);
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  const Tensor flat = index_put(zeros({numel}, g[0].options()), {ctx.input(1).reshape({-1})}, g[0].reshape({-1}), true);
  ctx.set(out, 0, flat.view(sizes));
  return out;
}

// embedding(weight, indices) = weight[indices]: each looked-up row's gradient added to its row.
variable_list embedding_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  ctx.set(out, 0, index_put(zeros(ctx.input_sizes(0), g[0].options()), {ctx.input(1)}, g[0], true));
  return out;
}

// index(self, indices) = self[indices]; the gradient is added back at the same places.
variable_list index_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  ctx.set(out, 0, index_put(zeros(ctx.input_sizes(0), g[0].options()), ctx.input_list(1), g[0], true));
  return out;
}

// index_put(self, indices, values, accumulate): without accumulate the written places of self
// get no gradient; values (broadcast to the indexed shape) read theirs back from there.
variable_list index_put_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const std::vector<Tensor> indices = ctx.input_list(1);
  if (ctx.needs_grad(0)) {
    ctx.set(out, 0, ctx.arg<bool>(3) ? g[0] : index_put(g[0], indices, zeros({}, g[0].options()), false));
  }
  const int values_arg = 2;
  if (ctx.needs_grad(values_arg)) ctx.set(out, values_arg, grad_for_input(ctx, values_arg, index(g[0], indices)));
  return out;
}

// masked_select(self, mask): self and mask broadcast; the selected elements' gradients go back
// to their places (summed over the dims self was broadcast along).
variable_list masked_select_backward(BackwardContext& ctx, const variable_list& g) {
  variable_list out = ctx.grads();
  const Tensor mask = ctx.input(1);
  const DimVector shape = broadcast_shapes(ctx.input_sizes(0), mask.sizes(), "masked_select");
  // index_put takes no 0-dim mask: a 0-dim case goes through a 1-element one.
  const bool scalar = shape.size() == 0;
  const Tensor m = scalar ? mask.reshape({1}) : mask.expand(shape);
  const Tensor full = index_put(zeros(m.sizes(), g[0].options()), {m}, g[0], true);
  ctx.set(out, 0, grad_for_input(ctx, 0, scalar ? full.reshape({}) : full));
  return out;
}

const DerivativeEntry kCat{"aten::cat", "CatBackward0", 0, 0, &cat_backward};
const DerivativeEntry kStack{"aten::stack", "StackBackward0", 0, 0, &stack_backward};
const DerivativeEntry kIndexSelect{"aten::index_select", "IndexSelectBackward0", args_mask({2}), 0,
                                   &index_select_backward};
const DerivativeEntry kGather{"aten::gather", "GatherBackward0", args_mask({2}), 0, &gather_backward};
const DerivativeEntry kScatter{"aten::scatter.src", "ScatterBackward0", args_mask({2}), 0, &scatter_backward};
const DerivativeEntry kScatter_{"aten::scatter_.src", "ScatterBackward0", args_mask({2}), 0, &scatter_backward};
const DerivativeEntry kScatterValue{"aten::scatter.value", "ScatterBackward1", args_mask({2}), 0,
                                    &scatter_value_backward};
const DerivativeEntry kScatterValue_{"aten::scatter_.value", "ScatterBackward1", args_mask({2}), 0,
                                     &scatter_value_backward};
const DerivativeEntry kScatterAdd{"aten::scatter_add", "ScatterAddBackward0", args_mask({2}), 0, &scatter_add_backward};
const DerivativeEntry kScatterAdd_{"aten::scatter_add_", "ScatterAddBackward0", args_mask({2}), 0,
                                   &scatter_add_backward};
const DerivativeEntry kTake{"aten::take", "TakeBackward0", args_mask({1}), 0, &take_backward};
const DerivativeEntry kEmbedding{"aten::embedding", "EmbeddingBackward0", args_mask({1}), 0, &embedding_backward};
const DerivativeEntry kIndex{"aten::index.Tensor", "IndexBackward0", args_mask({1}), 0, &index_backward};
const DerivativeEntry kIndexPut{"aten::index_put", "IndexPutBackward0", args_mask({1}), 0, &index_put_backward};
const DerivativeEntry kIndexPut_{"aten::index_put_", "IndexPutBackward0", args_mask({1}), 0, &index_put_backward};
const DerivativeEntry kMaskedSelect{"aten::masked_select", "MaskedSelectBackward0", args_mask({1}), 0,
                                    &masked_select_backward};

}  // namespace

ANATOMY_LIBRARY_IMPL(aten, Autograd, m) {
  register_derivative<&kCat, ListSig>(m, "cat");
  register_derivative<&kStack, ListSig>(m, "stack");
  register_derivative<&kIndexSelect, DimIndexSig>(m, "index_select");
  register_derivative<&kGather, DimIndexSig>(m, "gather");
  register_derivative<&kScatter, ScatterSig>(m, "scatter.src");
  register_derivative<&kScatter_, ScatterSig>(m, "scatter_.src");
  register_derivative<&kScatterValue, ScatterValueSig>(m, "scatter.value");
  register_derivative<&kScatterValue_, ScatterValueSig>(m, "scatter_.value");
  register_derivative<&kScatterAdd, ScatterSig>(m, "scatter_add");
  register_derivative<&kScatterAdd_, ScatterSig>(m, "scatter_add_");
  register_derivative<&kTake, PairSig>(m, "take");
  register_derivative<&kEmbedding, PairSig>(m, "embedding");
  register_derivative<&kIndex, IndexSig>(m, "index.Tensor");
  register_derivative<&kIndexPut, IndexPutSig>(m, "index_put");
  register_derivative<&kIndexPut_, IndexPutSig>(m, "index_put_");
  register_derivative<&kMaskedSelect, PairSig>(m, "masked_select");
}

}  // namespace anatomy::autograd
